"""How many of the top configurations to time: the model's own ranking error, measured.

The near tie (tfx.explore.near_tie) says which predicted times the *timing noise* cannot order.
The model has an error of its own, larger than that noise: over tfx's issue-15 campaigns on an
H200 (Triton-compiled kernels of every shipped family at 8-14 random configurations a shape,
``calibration/h200/measured/issue15``) the configuration it ranks first runs up to 34.1% behind
the fastest one measured in the same campaign, while the best of the three it ranks first is
within 6.9% of it in every campaign of every family. So a person who picks from ``tfx explore``'s
top table should time the first ``TOP_PICKS`` (tfx.analysis.measured.TOP_PICKS, the same three
``tfx validate``'s ``top3`` column scores), not the first alone.

The figures are ``bench/accuracy.py --measured-only --split all``'s "within one campaign" lines
(the worst shape of each family, then the worst family), which also checks them against these
constants and says when a model change has left them stale; the H100's campaigns
(``calibration/h100/measured/issue15``, ``--hw h100_sxm``) give a profile of that device its own
(up to 91.1% and 15.9%). They are measurements of Triton's code generator on a GPU: for another
code generator (cutlass) or a tiled accelerator's own tool chain no campaign exists, and the
explorer says nothing rather than borrow them.
"""

from __future__ import annotations

from dataclasses import dataclass

# how many configurations ranked first ``tfx validate`` scores together (its ``top3``), read lazily
from tfx.analysis.verdict import top_picks  # noqa: F401  (re-exported: bench/accuracy.py, the tests)

# the code generator the campaigns compiled with (the figures hold for it) and their devices
from tfx.analysis.coverage import DEFAULT_PROFILE, DEVICES, MEASURED_CODEGEN  # noqa: F401 (re-exported)


@dataclass(frozen=True)
class CampaignFigures:
    """One device's campaigns: the worst regret of the first pick and of the best of the top ``TOP_PICKS``
    within one campaign, over every family, and where they come from."""

    device: str
    first_pick_regret: float
    top_picks_regret: float
    source: str


#: Per hardware profile whose device the campaigns measured; any other GPU profile is quoted the H200's,
#: which the sentence names.
CAMPAIGNS = {
    "h200_sxm": CampaignFigures(
        DEVICES["h200_sxm"], 0.341, 0.069,
        "bench/accuracy.py --measured-only --split all, the 'within one campaign' lines over "
        "calibration/h200/measured/issue15 (gemm_fp8 run40 128x28672x14336 first pick 34.1%; "
        "rmsnorm run12 1024x2048 best of the top 3 6.9%)"),
    "h100_sxm": CampaignFigures(
        DEVICES["h100_sxm"], 0.911, 0.159,
        "bench/accuracy.py --measured-only --split all --hw h100_sxm, the 'within one campaign' lines over "
        "calibration/h100/measured/issue15 (gemm_bf16 run63 3584x6144x28672 first pick 91.1%; "
        "gemm_bf16 run78 6912x8192x10752 best of the top 3 15.9%)"),
}
DEFAULT_CAMPAIGNS = DEFAULT_PROFILE
#: The H200's figures (the judged device's), as the module's plain constants.
FIRST_PICK_REGRET = CAMPAIGNS[DEFAULT_CAMPAIGNS].first_pick_regret
TOP_PICKS_REGRET = CAMPAIGNS[DEFAULT_CAMPAIGNS].top_picks_regret
SOURCE = CAMPAIGNS[DEFAULT_CAMPAIGNS].source


@dataclass(frozen=True)
class TopPicks:
    """The advice under a top table: time the first ``count`` configurations; the figures of ``device``'s
    campaigns say why."""

    count: int
    first_pick_regret: float
    top_picks_regret: float
    device: str = "H200"
    source: str = SOURCE

    def sentence(self) -> str:
        """The one line every surface shows (tfx explore's text and JSON, the Explore pane)."""
        from tfx.present.formatting import top_picks_sentence
        return top_picks_sentence(self)

    def to_json(self) -> dict:
        return {"count": self.count, "first_pick_regret": self.first_pick_regret,
                "top_picks_regret": self.top_picks_regret, "device": self.device, "source": self.source,
                "summary": self.sentence()}


def advice(codegen: str | None, feasible: int, profile: str | None = None) -> TopPicks | None:
    """The advice for a sweep priced as ``codegen`` (tfx.explore.ExploreResult.codegen) with
    ``feasible`` configurations on the hardware profile named ``profile`` (its device's campaigns, the
    H200's for a profile no campaign measured): None where the campaigns do not speak for its code
    generator (cutlass, or None: a tiled profile) or where fewer than two configurations are feasible
    (nothing to choose between)."""
    if codegen != MEASURED_CODEGEN or feasible < 2:
        return None
    f = CAMPAIGNS.get(profile or DEFAULT_CAMPAIGNS, CAMPAIGNS[DEFAULT_CAMPAIGNS])
    return TopPicks(min(top_picks(), feasible), f.first_pick_regret, f.top_picks_regret, f.device, f.source)
