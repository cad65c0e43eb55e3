"""Install tfx into a fresh venv and run it from a folder outside the repository.

    python3 bench/install_check.py [--venv /tmp/tfx-install-check] [--editable] [--system-site-packages]

A non-editable `pip install .` (or `pip install -e .` with --editable) into a new venv, then,
from an empty temporary folder: `tfx hw list`, `tfx hw show h200_sxm`, `tfx analyze` on the
bundled gemm.tile, `tfx validate` on a bundled campaign, `tfx model latency`, and `tfx open`
with no argument on a pseudo-terminal (it must draw the bundled gemm's prediction and quit on
`q`). Prints one line per check with its time; exit 1 when any fails. pip fetches the build
backend and the dependencies from the package registry (tests/test_packaging.py checks the
build offline, without pip).
"""

from __future__ import annotations

import argparse
import os
import re
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_open_on_pty(tfx: Path, cwd: Path, timeout: float = 60.0) -> tuple[bool, str]:
    """`tfx open` on a pseudo-terminal: wait for the prediction on screen, press q, expect exit 0."""
    import pty
    pid, fd = pty.fork()
    if pid == 0:                                  # child: the real entry point, as a user runs it
        os.chdir(cwd)
        os.environ.update(TERM="xterm-256color", COLUMNS="120", LINES="36")
        os.execv(str(tfx), [str(tfx), "open"])
    screen, sent_q, start = "", False, time.monotonic()
    status = None
    while time.monotonic() - start < timeout:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:                       # the child closed the terminal
                chunk = b""
            screen += re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", chunk.decode(errors="replace"))
        if not sent_q and "predicted" in screen:
            time.sleep(1.0)
            os.write(fd, b"q")
            sent_q = True
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(st)
            break
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    os.close(fd)
    ok = sent_q and status == 0 and "gemm" in screen and "Traceback" not in screen
    return ok, f"exit {status}, drew the prediction: {sent_q}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--venv", default=None, help="where to make the venv (default: a new temporary folder)")
    ap.add_argument("--editable", action="store_true", help="pip install -e . instead of pip install .")
    ap.add_argument("--system-site-packages", action="store_true",
                    help="let the venv see this interpreter's packages (no download of the dependencies)")
    args = ap.parse_args()
    venv = Path(args.venv or tempfile.mkdtemp(prefix="tfx-install-check-"))
    make = [sys.executable, "-m", "venv", str(venv)] + (["--system-site-packages"] if args.system_site_packages else [])
    t0 = time.monotonic()
    subprocess.run(make, check=True)
    py, tfx = venv / "bin" / "python", venv / "bin" / "tfx"
    install = [str(py), "-m", "pip", "install", "-q"] + (["-e", str(ROOT)] if args.editable else [str(ROOT)])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(install, env=env, capture_output=True, text=True)
    if done.returncode:
        print(done.stderr[-3000:])
        return 1
    print(f"installed ({'editable' if args.editable else 'non-editable'}) into {venv} in {time.monotonic() - t0:.1f} s")

    where = subprocess.run([str(py), "-c", "import tfx, tfx.bundled as b; print(tfx.__file__); "
                            "print(b.BUNDLED_ROOT); print(b.bundled_kernel('gemm.tile')); "
                            "print(b.bundled_file('calibration/h200/measured/issue15/run3/gemm.csv'))"],
                           env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    module, data_root, kernel, csv_path = where.stdout.split("\n")[:4]
    print(f"tfx imported from {module}; bundled files read from {data_root}")
    expect_root = str(ROOT) if args.editable else str(Path(module).parent / "bundled_data")
    failures = 0 if data_root == expect_root else 1
    if failures:
        print(f"FAIL: bundled files should come from {expect_root}")

    checks = [
        (["hw", "list"], "h200_sxm"),
        (["hw", "show", "h200_sxm"], "NVIDIA H200"),
        (["analyze", kernel], "kernel gemm"),
        (["validate", csv_path], "groups"),
        (["model", "latency", "--model", "llama3-8b"], "tokens/s"),
    ]
    with tempfile.TemporaryDirectory(prefix="tfx-outside-") as outside:
        for argv, needle in checks:
            t = time.monotonic()
            done = subprocess.run([str(tfx), *argv], cwd=outside, env=env, capture_output=True, text=True)
            ok = done.returncode == 0 and needle in done.stdout and not done.stderr
            failures += not ok
            first = (done.stdout.splitlines() or [""])[0][:100]
            print(f"{'ok  ' if ok else 'FAIL'} {time.monotonic() - t:5.1f} s  tfx {' '.join(argv)[:70]}: {first}")
            if not ok:
                print(done.stderr[-2000:])
        t = time.monotonic()
        ok, note = run_open_on_pty(tfx, Path(outside))
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {time.monotonic() - t:5.1f} s  tfx open (pty, q to quit): {note}")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
