"""The device scripts' log line (bench/h200/measure_*.py): stamped with the seconds since the script
started, printed at once (PYTHONUNBUFFERED or not) and appended to OUTDIR/log.txt, so that what a call
did survives in its archive even when the call is cut short."""
import os
import time


def log(out_dir, t0, *parts):
    """Print ``[   12.3s] part part ...`` and append it to ``out_dir``/log.txt."""
    line = f"[{time.time() - t0:6.1f}s] " + " ".join(str(x) for x in parts)
    print(line, flush=True)
    with open(os.path.join(out_dir, "log.txt"), "a") as f:
        f.write(line + "\n")
