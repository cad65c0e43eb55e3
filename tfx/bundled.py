"""Where the bundled kernels, hardware profiles, model presets and measurements live.

The repository keeps them in its top-level folders (kernels/, hw_profiles/, models/,
calibration/): a checkout and an editable install read them there. A wheel can only carry
files inside its packages, so the build copies the same files, at the same relative paths,
into tfx/bundled_data/ (setup.py's build_py copies ``BUNDLED_FILES``; MANIFEST.in puts them
in the sdist). ``BUNDLED_ROOT`` is that copy when it exists, else the repository.

This module imports nothing but pathlib: setup.py reads ``BUNDLED_FILES`` from it without
importing tfx (the build environment has none of tfx's dependencies).
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGED_ROOT = Path(__file__).resolve().parent / "bundled_data"

# Every file tfx reads from its own tree at run time, as globs relative to the repository
# root. kernels, profiles and presets are looked up by name (tfx.hw.profile, tfx.model);
# launch.csv gives H200 profiles their measured per-kernel launch cost (tfx.model.system);
# the issue 15 campaigns are measurements in `tfx validate` format, kept as examples a user
# can validate without a GPU (their kernel column names kernels/*.tile, which resolves beside
# them here as in the repository).
BUNDLED_FILES = (
    "kernels/*.tile",
    "hw_profiles/*.toml",
    "models/*.toml",
    "calibration/h200/measured/launch.csv",
    "calibration/h200/measured/issue15/README.md",
    "calibration/h200/measured/issue15/*.csv",
    "calibration/h200/measured/issue15/run*/*.csv",
)

# The wheel's copy first: an installed tfx sits beside other distributions in
# site-packages, where a stray top-level "models" or "kernels" folder is not ours.
BUNDLED_ROOT = PACKAGED_ROOT if PACKAGED_ROOT.is_dir() else REPO_ROOT


def bundled_dir(name: str) -> Path:
    """The bundled folder ``name`` (``kernels``, ``hw_profiles``, ``models``, ``calibration``)."""
    return BUNDLED_ROOT / name


def bundled_file(relative: str) -> Path:
    """A bundled file by its path relative to the repository root
    (``calibration/h200/measured/launch.csv``)."""
    return BUNDLED_ROOT / relative


def bundled_kernel(name: str) -> Path:
    return bundled_dir("kernels") / name


def bundled_twin(path: str | Path) -> Path | None:
    """tfx's own copy of a kernel named by a path that is not there: ``kernels/gemm.tile``
    typed outside the repository, where an installed tfx keeps it under tfx/bundled_data.
    None when the path exists or tfx ships no kernel of that name."""
    p = Path(path)
    if p.suffix != ".tile" or p.exists():
        return None
    twin = bundled_kernel(p.name)
    return twin if twin.is_file() else None


def missing_kernel_notes(path: str | Path) -> tuple[str, ...]:
    """The ``note:`` line of a refused kernel path that names a shipped kernel."""
    twin = bundled_twin(path)
    return (f"tfx ships {twin.name} as {twin}",) if twin is not None else ()


DEFAULT_KERNEL = "gemm.tile"
DEFAULT_PROFILE = "h200_sxm"
