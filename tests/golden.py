"""Golden text reports of ``tfx analyze`` for every shipped kernel (snapshots/analyze/).

Test tooling, kept beside the tests that use it (not in the package):

    python3 tests/golden.py            # check: exit 1 and list what differs
    python3 tests/golden.py --update   # regenerate; review the diff before committing
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script (python3 tests/golden.py), sys.path[0] is tests/ and an editable install elsewhere
# (another worktree) would be checked instead of this checkout: put this checkout first.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tfx.bundled import REPO_ROOT, bundled_dir  # noqa: E402

SNAPSHOT_DIR = REPO_ROOT / "snapshots" / "analyze"  # test data: never shipped


def profile_for(kernel_path: Path) -> str:
    """sip kernels run on the tiled accelerator; every other kernel on the H200."""
    return "sip" if kernel_path.name.startswith("sip_") else "h200_sxm"


def render(kernel_path: Path) -> str:
    from tfx.analysis.analyze import analyze
    from tfx.present.analysis_report import render_text
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    module = parse_file(kernel_path)
    profile = load_profile(profile_for(kernel_path))
    out = []
    for k in module.kernels:
        a = analyze(module, k, profile)
        out.append(render_text(a))
    return "\n".join(out).replace(str(bundled_dir("kernels")), "kernels")


def kernels() -> list[Path]:
    return sorted(bundled_dir("kernels").glob("*.tile"))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    update = "--update" in argv
    SNAPSHOT_DIR.mkdir(parents=True, exist_ok=True)
    differ = []
    for path in kernels():
        text = render(path)
        snap = SNAPSHOT_DIR / (path.stem + ".txt")
        if update:
            snap.write_text(text)
        elif not snap.exists() or snap.read_text() != text:
            differ.append(snap.name)
    if differ:
        print("golden reports differ: " + ", ".join(differ))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
