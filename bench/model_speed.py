"""Speed of the model level: full-space suggest (1,024 devices) and the co-design sweep.

    python bench/model_speed.py

Targets (docs/model-latency.md): the full suggest space in < 1 s, the 1.4M-evaluation sweep
in < 5 s, both with the default eager kernel structure (~1,500 kernels per 8B step).
"""

import sys
import time
from pathlib import Path

# this checkout's tfx first (an editable install of another worktree would be timed instead)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tfx.model import load_model  # noqa: E402
from tfx.model.search import HW_KNOBS, hw_sweep, suggest  # noqa: E402
from tfx.model.system import Workload, load_system  # noqa: E402


def main() -> None:
    model = load_model("llama3.1-70b")
    system = load_system("h200_nvl8")
    wl = Workload("decode", 8192, 64)
    t = time.perf_counter()
    r = suggest(model, system, wl, 1024)
    cold = time.perf_counter() - t
    t = time.perf_counter()
    r = suggest(model, system, wl, 1024)
    warm = time.perf_counter() - t
    print(f"suggest, llama3.1-70b decode 8K x 64 on <= 1024 H200: {r.evaluated} configurations, "
          f"{r.fitting} fit; cold {cold * 1e3:.0f} ms (kernel analyses included), warm {warm * 1e3:.0f} ms")
    factors = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
    t = time.perf_counter()
    h = hw_sweep(model, system, Workload("decode", 131072, 1), 64, {k: factors for k in HW_KNOBS})
    total = time.perf_counter() - t
    print(f"hw-sweep, llama3.1-70b decode 128K: {h.configs} configurations x {len(factors) ** 5} hardware points "
          f"= {h.evaluations:,} evaluations; sweep {h.seconds * 1e3:.0f} ms = {h.evals_per_s:,.0f} evaluations/s; "
          f"with setup (4 full evaluations of every configuration: base, links x inf, and the latency "
          f"floor at 2 x bandwidth and compute) {total:.2f} s")
    print("doubling one knob: " + ", ".join(f"{k['knob']} x{k['speedup']:.3f}" for k in h.ranking))


if __name__ == "__main__":
    main()
