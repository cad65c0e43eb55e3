"""ms per analysis of each shipped kernel, and proof that problem size does not change the cost.

Targets: gemm.tile under 20 ms; the largest kernel under 100 ms; M = 2**40 costs what M = 4096 costs.
The last line prices a GROUP_M = 1 launch whose readers drift apart (run12's 128x28672x8192
64x256x32 w8 s5: the lone CTA and the launch priced again, tfx.analysis.l2_reuse.drift_refetch)
beside its GROUP_M = 8 twin, in one run: their ratio is what the drift term costs.

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
    shape = {"M": 128, "N": 28672, "K": 8192, "BM": 64, "BN": 256, "BK": 32, "WARPS": 8, "STAGES": 5}
    g1 = median_ms(lambda: analyze(module, None, profile, {**shape, "GROUP_M": 1}), REPEATS)
    g8 = median_ms(lambda: analyze(module, None, profile, {**shape, "GROUP_M": 8}), REPEATS)
    print(f"gemm.tile 128x28672x8192 64x256x32 w8 s5 GROUP_M=1 (drift priced): {g1:.2f} ms   "
          f"GROUP_M=8: {g8:.2f} ms   ratio {g1 / g8:.2f}")


if __name__ == "__main__":
    main()
