"""Golden text reports of `tfx analyze` for every shipped kernel.

Regenerate with `python3 tests/golden.py --update` and review the diff.
"""

import pytest

import golden

KERNELS = golden.kernels()


@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_report_matches_golden(path):
    snap = golden.SNAPSHOT_DIR / (path.stem + ".txt")
    assert snap.exists(), f"no golden report for {path.name}: run python3 tests/golden.py --update"
    assert golden.render(path) == snap.read_text()


def test_every_kernel_has_a_golden_report():
    assert {p.stem for p in KERNELS} <= {s.stem for s in golden.SNAPSHOT_DIR.glob("*.txt")}
