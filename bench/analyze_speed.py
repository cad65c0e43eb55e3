"""ms per analysis of each shipped kernel, and proof that problem size does not change the cost.

Targets: gemm.tile under 20 ms; the largest kernel under 100 ms; M = 2**40 costs what M = 4096 costs.

    python3 bench/analyze_speed.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tfx.analysis.analyze import analyze  # noqa: E402
from golden import profile_for  # noqa: E402  (tests/golden.py)
from tfx.hw import load_profile  # noqa: E402
from tfx.lang import parse_file  # noqa: E402

from timing import median_ms  # noqa: E402  (bench/timing.py)


REPEATS = 15


def main() -> None:
    print(f"{'kernel':<48} {'ms/analysis (parse excluded)':>30} {'ms with parse':>14}")
    for path in sorted((ROOT / "kernels").glob("*.tile")):
        module = parse_file(path)
        profile = load_profile(profile_for(path))
        for k in module.kernels:
            a_ms = median_ms(lambda: analyze(module, k, profile), REPEATS)
            p_ms = median_ms(lambda: analyze(parse_file(path), k.name, profile), REPEATS)
            label = f"{path.stem}:{k.name}"
            print(f"{label:<48} {a_ms:30.2f} {p_ms:14.2f}")
    module = parse_file(ROOT / "kernels" / "gemm.tile")
    profile = load_profile("h200_sxm")
    small = median_ms(lambda: analyze(module, None, profile, {"M": 4096}), REPEATS)
    huge = median_ms(lambda: analyze(module, None, profile, {"M": 2 ** 40}), REPEATS)
    print(f"\ngemm.tile M=4096: {small:.2f} ms   M=2**40: {huge:.2f} ms   ratio {huge / small:.2f}")


if __name__ == "__main__":
    main()
