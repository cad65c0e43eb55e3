"""Build hook: copy the bundled kernels, profiles, presets and measurements into the wheel.

pyproject.toml holds all the metadata; this file only adds one step to build_py. A wheel can
only carry files inside its packages, and the repository keeps kernels/, hw_profiles/,
models/ and calibration/ at its top level (where the docs, tests and users' commands name
them). So build_py copies every file ``tfx.bundled.BUNDLED_FILES`` names into
``tfx/bundled_data/`` at the same relative path, and tfx.bundled reads that copy when it is
there. An editable install skips the copy: it runs from the checkout, whose top-level
folders tfx.bundled reads directly. MANIFEST.in puts the same files in the sdist, so a wheel
built from the sdist gets them too.
"""

from __future__ import annotations

import runpy
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# tfx/bundled.py imports only pathlib: read it as a file, tfx's dependencies are not installed here.
BUNDLED_FILES = runpy.run_path(str(ROOT / "tfx" / "bundled.py"))["BUNDLED_FILES"]
PACKAGED_DIR = "tfx/bundled_data"


def bundled_sources() -> list[Path]:
    """The files BUNDLED_FILES names, relative to ROOT; a pattern that matches nothing stops
    the build (a wheel without its kernels or profiles installs, then fails at run time)."""
    found: list[Path] = []
    for pattern in BUNDLED_FILES:
        matches = sorted(p for p in ROOT.glob(pattern) if p.is_file())
        if not matches:
            raise SystemExit(f"setup.py: tfx.bundled.BUNDLED_FILES: {pattern!r} matches no file under {ROOT} "
                             "(is it missing from MANIFEST.in, so from the sdist?)")
        found.extend(p.relative_to(ROOT) for p in matches)
    return found


class BuildPyWithBundledData(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / PACKAGED_DIR
        for rel in bundled_sources():
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, dest)

    def get_outputs(self, include_bytecode=1):
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        target = Path(self.build_lib) / PACKAGED_DIR
        return outputs + [str(target / rel) for rel in bundled_sources()]


setup(cmdclass={"build_py": BuildPyWithBundledData})
