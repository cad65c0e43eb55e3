"""Which tile-parameter values tfx's own measurements timed: where a ranking has been checked.

The issue-15 campaigns (``calibration/<device>/measured/issue15``) time the bundled kernels at random
configurations drawn from fixed value lists, and every accuracy figure tfx quotes (bench/accuracy.py, the
advice under ``tfx explore``'s top table, tfx.explore.top_picks) is over those configurations. A value outside
the lists is a class of tile no measurement has checked: flash attention on 2 warps, which Triton compiles to
the warp mma (``mma.sync``) on sm_90 where every campaign tile is on the warpgroup path, measured on an H100
later (calibration/h100/measured/attn_warp_s56) at a median 21.7% faster priced than run (to 45%; 5.0% once
session 57 laid both dots out as Triton does), and ranked first at B8 H16 S2048 D64 with a 24.3% regret. So ``tfx explore`` marks the rows that set such a value and says
when its top pick does, and an analysis of such a configuration warns, rather than let a figure measured
elsewhere vouch for it.

``MEASURED_VALUES`` is ``bench/campaign_coverage.py``'s table: per device's profile, per bundled kernel file,
each non-shape parameter's values in any campaign row (whatever the row's status). tests/test_coverage.py
checks it against the campaigns. A kernel is the campaigns' when its text is the bundled file's (a copy
anywhere counts; an edited one is another kernel, and nothing is said of it).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

#: The code generator the campaigns compiled with (tfx.analysis.codegen): the lists hold for it.
MEASURED_CODEGEN = "triton"
#: The campaigns' devices, by the profile that prices them; any other profile is judged by the H200's.
DEVICES = {"h200_sxm": "H200", "h100_sxm": "H100"}
DEFAULT_PROFILE = "h200_sxm"

MEASURED_VALUES = {
    'h200_sxm': {
        'flash_attention.tile': {
            'BLOCK_M': (64, 128),
            'BLOCK_N': (32, 64, 128),
            'STAGES': (1, 2, 3, 4),
            'WARPS': (4, 8),
        },
        'flash_prefill.tile': {
            'BLOCK_M': (64, 128),
            'BLOCK_N': (32, 64, 128),
            'STAGES': (1, 2, 3, 4),
            'WARPS': (4, 8),
        },
        'gemm.tile': {
            'BK': (32, 64, 128),
            'BM': (16, 32, 64, 128, 256),
            'BN': (32, 64, 128, 256),
            'GROUP_M': (1, 8),
            'STAGES': (1, 2, 3, 4, 5),
            'WARPS': (2, 4, 8),
        },
        'gemm_fp8.tile': {
            'BK': (64, 128),
            'BM': (16, 32, 64, 128, 256),
            'BN': (32, 64, 128, 256),
            'GROUP_M': (1, 8),
            'STAGES': (1, 2, 3, 4, 5),
            'WARPS': (2, 4, 8),
        },
        'gemm_fp8_kn.tile': {
            'BK': (64, 128),
            'BM': (64, 128, 256),
            'BN': (32, 64, 128, 256),
            'GROUP_M': (1, 8),
            'STAGES': (1, 2, 3, 4, 5),
            'WARPS': (2, 4, 8),
        },
        'gqa_decode.tile': {
            'BLOCK_N': (32, 64, 128),
            'SPLITS': (1, 2, 4, 8, 16, 32, 64),
            'STAGES': (1, 2, 3),
            'WARPS': (2, 4, 8),
        },
        'persistent_gemm.tile': {
            'BK': (32, 64, 128),
            'BM': (64, 128, 256),
            'BN': (64, 128, 256),
            'NUM_SMS': (78, 114, 132),
            'STAGES': (2, 3, 4, 5),
            'WARPS': (4, 8),
        },
        'rmsnorm.tile': {'BLOCK_M': (1, 2, 4, 8, 16), 'WARPS': (1, 2, 4, 8, 16)},
        'softmax.tile': {'BLOCK_M': (1, 2, 4, 8, 16), 'WARPS': (1, 2, 4, 8, 16)},
    },
    'h100_sxm': {
        'flash_attention.tile': None,  # the h200_sxm lists
        'flash_prefill.tile': None,  # the h200_sxm lists
        'gemm.tile': None,  # the h200_sxm lists
        'gemm_fp8.tile': None,  # the h200_sxm lists
        'gemm_w4a16.tile': {
            'BK': (128, 256),
            'BM': (16, 32, 64, 128),
            'BN': (64, 128, 256),
            'GROUP_M': (1, 8),
            'STAGES': (2, 3, 4, 5),
            'WARPS': (4, 8),
        },
        'gemm_w8a16.tile': {
            'BK': (64, 128, 256),
            'BM': (16, 32, 64, 128),
            'BN': (64, 128, 256),
            'GROUP_M': (1, 8),
            'STAGES': (2, 3, 4, 5),
            'WARPS': (4, 8),
        },
        'gqa_decode.tile': None,  # the h200_sxm lists
        'persistent_gemm.tile': None,  # the h200_sxm lists
        'rmsnorm.tile': None,  # the h200_sxm lists
        'softmax.tile': None,  # the h200_sxm lists
    },
}
# a None entry: the same lists as h200_sxm's
MEASURED_VALUES = {profile: {name: MEASURED_VALUES['h200_sxm'][name] if lists is None else lists
                             for name, lists in kernels.items()}
                   for profile, kernels in MEASURED_VALUES.items()}


@dataclass(frozen=True)
class Unmeasured:
    """A value of the top pick no campaign of ``device`` timed for ``kernel``, beside the values it timed."""

    kernel: str          # the bundled kernel file (flash_attention.tile)
    param: str
    value: int
    measured: tuple
    device: str = "H200"

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "param": self.param, "value": self.value, "measured": list(self.measured),
                "device": self.device}


def campaign_kernel(module) -> str | None:
    """The bundled kernel file name whose campaigns speak for ``module`` (a parsed .tile file), or None:
    another file, or a bundled one edited (its source lines are not the bundled file's)."""
    name = Path(getattr(module, "filename", "") or "").name
    if not any(name in kernels for kernels in MEASURED_VALUES.values()):
        return None
    try:
        lines = getattr(module, "source_lines", ()) or Path(module.filename).read_text().split("\n")
        return name if "\n".join(lines).rstrip() == _bundled_text(name) else None
    except OSError:
        return None


@functools.lru_cache(maxsize=None)
def _bundled_text(name: str) -> str:
    """A bundled kernel's source, read once (an analysis on every keystroke compares against it)."""
    from tfx.bundled import bundled_kernel
    return bundled_kernel(name).read_text().rstrip()


def unmeasured(kernel_file: str | None, params: dict, profile: str | None) -> list[Unmeasured]:
    """The values in ``params`` that no campaign of ``profile``'s device (the H200's for a profile of another)
    timed for ``kernel_file``, in the parameters' order; [] for a kernel no campaign measured."""
    # a profile whose device no campaign measured is judged by the H200's lists, as the advice quotes its figures
    key = profile if profile in MEASURED_VALUES else DEFAULT_PROFILE
    lists = MEASURED_VALUES[key].get(kernel_file or "", {})
    return [Unmeasured(kernel_file, p, int(v), lists[p], DEVICES[key]) for p, v in params.items()
            if p in lists and int(v) not in lists[p]]


def sentence(values, subject: str = "") -> str:
    """One line for ``values`` (``unmeasured``'s list; '' for none): ``subject`` names whose values they are
    (tfx explore's "the top pick's "; an analysis' own configuration says none)."""
    if not values:
        return ""
    u = values[0]
    what = ", ".join(f"{v.param}={v.value}" for v in values)
    timed = "; ".join(f"{v.param} {', '.join(str(x) for x in v.measured)}" for v in values)
    whose = "its rank" if subject else "this prediction"
    return (f"{subject}{what} {'is a value' if len(values) == 1 else 'are values'} tfx's {u.device} campaigns "
            f"never timed for {u.kernel} (they timed {timed}): {whose} is unchecked")


def analysis_warning(module, kernel, params: dict, profile, codegen) -> str:
    """The warning of an analysis whose configuration of a bundled kernel sets values no campaign timed, where
    the campaigns speak for its code generator (Triton's, on a GPU); '' otherwise."""
    if codegen != MEASURED_CODEGEN:
        return ""
    return sentence(unmeasured(campaign_kernel(module), {p.name: params[p.name] for p in kernel.params
                                                         if p.name in params}, profile.name))
