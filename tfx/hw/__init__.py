"""Hardware profiles: TOML facts with provenance, in canonical units.

    from tfx.hw import load_profile
    profile = load_profile("h200_sxm", knobs={"hbm.bandwidth": "x2"})
    profile.value("memory.gmem.bandwidth")      # 9.6e12 (B/s)
    profile.peak_flops_per_s("tensor", "bf16")  # flop/s

See docs/architecture.md ("Hardware profiles") for the fact paths, and
``tfx.hw.schema`` for the file format.
"""

from tfx.hw.knobs import apply_knobs, resolve_knob_path
from tfx.hw.profile import (DTYPE_ALIASES, MemoryLevel, Profile, list_profiles, load_profile,
                            normalize_dtype, profiles_dir)
from tfx.hw.schema import COMPUTE_DTYPES, ORIGINS, Fact
from tfx.hw.units import (format_bandwidth, format_bytes, format_count, format_flops,
                          format_frequency, format_quantity, format_time_ns)

__all__ = [
    "load_profile", "list_profiles", "profiles_dir", "Profile", "Fact", "MemoryLevel",
    "apply_knobs", "resolve_knob_path", "normalize_dtype", "DTYPE_ALIASES", "COMPUTE_DTYPES",
    "ORIGINS", "format_bytes", "format_bandwidth", "format_time_ns", "format_count",
    "format_frequency", "format_flops", "format_quantity",
]
