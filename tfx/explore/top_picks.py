"""How many of the top configurations to time: the model's own ranking error, measured.

The near tie (tfx.explore.near_tie) says which predicted times the *timing noise* cannot order.
The model has an error of its own, larger than that noise: over tfx's issue-15 campaigns on an
H200 (Triton-compiled kernels of every shipped family at 8-14 random configurations a shape,
``calibration/h200/measured/issue15``) the configuration it ranks first runs up to 39.3% behind
the fastest one measured in the same campaign, while the best of the three it ranks first is
within 6.9% of it in every campaign of every family. So a person who picks from ``tfx explore``'s
top table should time the first ``TOP_PICKS`` (tfx.analysis.measured.TOP_PICKS, the same three
``tfx validate``'s ``top3`` column scores), not the first alone.

The figures are ``bench/accuracy.py --measured-only --split all``'s "within one campaign" lines
(the worst shape of each family, then the worst family), which also checks them against these
constants and says when a model change has left them stale. They are measurements of Triton's
code generator on a GPU: for another code generator (cutlass) or a tiled accelerator's own tool
chain no campaign exists, and the explorer says nothing rather than borrow them.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The worst regret of the first pick within one H200 campaign, over every family
#: (persistent_gemm, run54 3072x8192x14336: its first pick 39.3% slower than the fastest).
FIRST_PICK_REGRET = 0.393
#: The worst regret of the best of the top ``TOP_PICKS`` within one H200 campaign, over every
#: family (rmsnorm, run12 1024x2048: 6.9%).
TOP_PICKS_REGRET = 0.069
#: The code generator the campaigns compiled with (tfx.analysis.codegen): the figures hold for it.
MEASURED_CODEGEN = "triton"
SOURCE = ("bench/accuracy.py --measured-only --split all, the 'within one campaign' lines over "
          "calibration/h200/measured/issue15 (persistent_gemm run54 3072x8192x14336 first pick 39.3%; "
          "rmsnorm run12 1024x2048 best of the top 3 6.9%)")


def top_picks() -> int:
    """How many configurations ranked first ``tfx validate`` scores together (its ``top3``)."""
    from tfx.analysis.measured import TOP_PICKS      # lazily: the CSV reader is not the sweep's
    return TOP_PICKS


@dataclass(frozen=True)
class TopPicks:
    """The advice under a top table: time the first ``count`` configurations."""

    count: int
    first_pick_regret: float
    top_picks_regret: float

    def sentence(self) -> str:
        """The one line every surface shows (tfx explore's text and JSON, the Explore pane)."""
        from tfx.present.formatting import top_picks_sentence
        return top_picks_sentence(self)

    def to_json(self) -> dict:
        return {"count": self.count, "first_pick_regret": self.first_pick_regret,
                "top_picks_regret": self.top_picks_regret, "source": SOURCE, "summary": self.sentence()}


def advice(codegen: str | None, feasible: int) -> TopPicks | None:
    """The advice for a sweep priced as ``codegen`` (tfx.explore.ExploreResult.codegen) with
    ``feasible`` configurations: None where the campaigns do not speak for its code generator
    (cutlass, or None: a tiled profile) or where fewer than two configurations are feasible
    (nothing to choose between)."""
    if codegen != MEASURED_CODEGEN or feasible < 2:
        return None
    return TopPicks(min(top_picks(), feasible), FIRST_PICK_REGRET, TOP_PICKS_REGRET)
