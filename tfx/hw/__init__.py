"""Hardware profiles: TOML facts with provenance, in canonical units.

    from tfx.hw import load_profile
    profile = load_profile("h200_sxm", knobs={"hbm.bandwidth": "x2"})
    profile.value("memory.gmem.bandwidth")      # 9.6e12 (B/s)
    profile.peak_flops_per_s("tensor", "bf16")  # flop/s

See docs/architecture.md ("Hardware profiles") for the fact paths, and
``tfx.hw.schema`` for the file format.
"""

import importlib

# name -> the module that defines it. Loaded on first use (PEP 562), so importing one
# submodule (tfx.hw.units, for formatting) does not load the profile schema and parser:
# the explorer's first frame needs only the formatting.
_WHERE = {
    "apply_knobs": "knobs", "resolve_knob_path": "knobs",
    "DTYPE_ALIASES": "profile", "MemoryLevel": "profile", "Profile": "profile",
    "list_profiles": "profile", "load_profile": "profile", "normalize_dtype": "profile",
    "profiles_dir": "profile",
    "COMPUTE_DTYPES": "schema", "ORIGINS": "schema", "Fact": "schema",
    "format_bandwidth": "units", "format_bytes": "units", "format_count": "units",
    "format_flops": "units", "format_frequency": "units", "format_quantity": "units",
    "format_time_ns": "units",
}

__all__ = [
    "load_profile", "list_profiles", "profiles_dir", "Profile", "Fact", "MemoryLevel",
    "apply_knobs", "resolve_knob_path", "normalize_dtype", "DTYPE_ALIASES", "COMPUTE_DTYPES",
    "ORIGINS", "format_bytes", "format_bandwidth", "format_time_ns", "format_count",
    "format_frequency", "format_flops", "format_quantity",
]


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tfx.hw' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tfx.hw.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
