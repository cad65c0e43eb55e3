"""Figures for issue 14 item 10, printed (no assertion: speed is not a test).

- ``tfx simulate kernels/gemm.tile --hw h200_sxm --full --json``: events per second end
  to end (process start, imports, analysis, simulation, JSON written), by wall time and by
  the child's CPU time (a loaded machine's wall time measures the queue); target >= 300k/s;
- the same run's phases in one process, by CPU time: imports, analysis, simulation
  (events per second of the simulation alone; target 500k/s) and the JSON written;
- ``tfx --help``: its time and whether it imported numpy (it must not).

The child runs with byte-code caching on (in a temporary ``PYTHONPYCACHEPREFIX``), as an
installed package does: an environment with ``PYTHONDONTWRITEBYTECODE=1`` compiles every
tfx module from source on every run (about 0.2 s more), which no installed tfx pays.

    python3 bench/cli_speed.py [runs]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=os.path.join(tempfile.gettempdir(), "tfx-bench-pycache"))
SIM_ARGS = ["simulate", "kernels/gemm.tile", "--hw", "h200_sxm", "--full", "--json"]

PHASES = r"""
import io, os, sys, time
cpu = time.process_time
t0 = cpu()
from tfx.cli.main import main
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.sim import simulate
import tfx.cli.cmd_simulate, orjson
t1 = cpu()
a = analyze(parse_file("kernels/gemm.tile"), None, load_profile("h200_sxm"))
t2 = cpu()
r = simulate(a, full=True)
t3 = cpu()
from tfx.cli.common import emit_json
out, sys.stdout = sys.stdout, open(os.devnull, "w")
emit_json(r.to_json(events=False), last_array=("events", r.events_json_chunks()))
sys.stdout = out
t4 = cpu()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, r.n_events, "numpy" in sys.modules)
"""


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
    sim = [sys.executable, "-m", "tfx.cli.main", *SIM_ARGS]
    timed(sim)                                    # warm-up: writes the byte code
    best_wall = best_cpu = float("inf")
    events = 0
    for _ in range(runs):
        wall, cpu, out = timed(sim)
        events = json.loads(out)["event_count"]
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    print(f"simulate --full --json gemm 4096^3: {events:,} events; best of {runs}: "
          f"{best_wall:.2f} s wall ({events / best_wall:,.0f} events/s), "
          f"{best_cpu:.2f} s CPU ({events / best_cpu:,.0f} events/s end to end)  [target 300,000/s]")
    best = None
    for _ in range(runs):
        r = subprocess.run([sys.executable, "-c", PHASES], cwd=ROOT, env=ENV, capture_output=True,
                           text=True, check=True)
        f = r.stdout.split()
        row = [float(x) for x in f[:4]]
        best = row if best is None else [min(x, y) for x, y in zip(best, row)]
        n, numpy = int(f[4]), f[5]
    imp, ana, simu, js = best
    print(f"  phases in one process, CPU, best of {runs}: imports {imp * 1e3:.0f} ms, analysis "
          f"{ana * 1e3:.0f} ms, simulation {simu * 1e3:.0f} ms ({n / simu:,.0f} events/s; target 500,000/s), "
          f"JSON {js * 1e3:.0f} ms; numpy imported: {numpy}")
    code = ("import sys, time; t = time.perf_counter(); from tfx.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('numpy' in sys.modules, time.perf_counter() - t, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True, text=True)
    numpy, seconds = r.stderr.split()[-2:]
    print(f"tfx --help: {float(seconds) * 1e3:.0f} ms in-process after start-up; numpy imported: {numpy}")


if __name__ == "__main__":
    main()
