"""Where the bundled kernels, hardware profiles and model presets live.

In a checkout (or an editable install) they are the repository's top-level
folders; that is the only layout tfx ships today.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def bundled_dir(name: str) -> Path:
    """The bundled folder ``name`` (``kernels``, ``hw_profiles``, ``models``)."""
    return REPO_ROOT / name


def bundled_kernel(name: str) -> Path:
    return bundled_dir("kernels") / name


DEFAULT_KERNEL = "gemm.tile"
DEFAULT_PROFILE = "h200_sxm"
