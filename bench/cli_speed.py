"""Figures for issue 14 item 10, printed (no assertion: speed is not a test).

- ``tfx simulate kernels/gemm.tile --hw h200_sxm --full --json``: events per second end to
  end (process start, analysis, simulation, JSON written), by wall time and by the child's
  CPU time (a loaded machine's wall time measures the queue); target >= 300k/s;
- ``tfx --help``: its time and whether it imported numpy (it must not).

    python3 bench/cli_speed.py [runs]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def timed(argv: list[str]) -> tuple[float, float, bytes]:
    """(wall s, child CPU s, stdout) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(argv, cwd=ROOT, env=ENV, capture_output=True, check=True).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    tfx = [sys.executable, "-m", "tfx.cli.main"]
    sim = [*tfx, "simulate", "kernels/gemm.tile", "--hw", "h200_sxm", "--full", "--json"]
    best_wall = best_cpu = float("inf")
    events = 0
    for _ in range(runs):
        wall, cpu, out = timed(sim)
        events = json.loads(out)["event_count"]
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    print(f"simulate --full --json gemm 4096^3: {events:,} events; best of {runs}: "
          f"{best_wall:.2f} s wall ({events / best_wall:,.0f} events/s), "
          f"{best_cpu:.2f} s CPU ({events / best_cpu:,.0f} events/s)  [target 300,000/s]")
    code = ("import sys, time; t = time.perf_counter(); from tfx.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('numpy' in sys.modules, time.perf_counter() - t, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True, text=True)
    numpy, seconds = r.stderr.split()[-2:]
    print(f"tfx --help: {float(seconds) * 1e3:.0f} ms in-process after start-up; numpy imported: {numpy}")


if __name__ == "__main__":
    main()
