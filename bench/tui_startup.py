"""Time to first paint of `tfx open` and from a keystroke to the frame that shows its result.

    python bench/tui_startup.py [--runs 5] [--keys 8] [--size 80x24]
    python bench/tui_startup.py --against DIR [--runs 15]     # paired before/after, start-up only

Each run starts `tfx open` (the bundled gemm.tile on h200_sxm) as a real process on a
pseudo-terminal, exactly as a user would, and reads what it writes into a small screen
model (cursor moves and text; styles are ignored). Nothing inside the app is timed or
awaited, so the figures include everything a user waits for:

* first paint: from just before the process is started (interpreter start-up, imports,
  Textual's start-up included) to the first frame that shows the screen (the tab bar);
* analysis shown: to the first frame whose status line has the prediction;
* knob keystroke: `x`/`h` on `hierarchy.sm.count` in the Hardware pane (132 <-> 264 SMs),
  from writing the key to the pty to the frame whose row shows the new value;
* parameter keystroke: `x`/`h` on `STAGES` in the Roofline pane (3 <-> 6), likewise;
* Hardware / Roofline mounted: from the digit to the frame with the pane's table (the
  first time, so the pane's module is imported and its widgets mounted);
* explore shown: from `5` to the frame with the sweep's summary (the sweep runs in the
  sweep worker process).

The machine is shared: on a loaded one the wall times measure the run queue as much
as the app, so first paint and analysis shown are also given as CPU time (user + system,
from /proc: the app's process for first paint; the app and its worker processes for
the analysis), which the load does not inflate. Byte code is cached (in a temporary
``PYTHONPYCACHEPREFIX``; one uncounted run writes it), as an installed tfx has it.
``--startup-only``: first paint and analysis shown only. ``--against DIR``: another
checkout (``git worktree add --detach DIR <commit>``), its runs alternating with this
checkout's so both see the same load; prints both sides and the median of the paired
differences. The app starts as the ``tfx`` console script beside this interpreter
(the header names it); a version manager's shim found first on PATH (pyenv's) added
~50 ms of wall time and ~20 ms of CPU that are no part of tfx. ``TFX_BENCH_COMPILE=1``: the
environment's byte-code setting as it is (for before/after figures).

A keystroke waits for the app to settle (2 s after the analysis is shown, so the worker
process has started, as it has for a person reading the first screen) and the first one
of each kind is not counted (it warms the worker's caches). Medians over every sample.
Targets: first paint <= 400 ms, analysis shown <= 600 ms, keystroke < 100 ms.
"""

from __future__ import annotations

import argparse
import codecs
import fcntl
import os
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

_CSI = re.compile(r"\x1b\[([0-9;?<>=$ ]*)([@-~])")


class Screen:
    """Just enough of a terminal: cursor addressing, erase, text. Styles are dropped."""

    def __init__(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        self.grid = [[" "] * cols for _ in range(rows)]
        self.x = self.y = 0
        self._pending = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes) -> None:
        s = self._pending + self._decoder.decode(data)
        self._pending = ""
        i, n = 0, len(s)
        while i < n:
            c = s[i]
            if c == "\x1b":
                if i + 1 >= n:
                    self._pending = s[i:]
                    return
                nxt = s[i + 1]
                if nxt == "[":
                    m = _CSI.match(s, i)
                    if m is None:
                        if not re.search(r"[@-~]", s[i + 2:]):
                            self._pending = s[i:]
                            return
                        i += 2
                        continue
                    self._csi(m.group(1), m.group(2))
                    i = m.end()
                elif nxt in "]PX^_":              # OSC/DCS ...: up to BEL or ST
                    end = min([j for j in (s.find("\x07", i), s.find("\x1b\\", i)) if j >= 0],
                              default=-1)
                    if end < 0:
                        self._pending = s[i:]
                        return
                    i = end + (1 if s[end] == "\x07" else 2)
                else:
                    i += 3 if nxt in "()#%" else 2
            elif c == "\r":
                self.x = 0
                i += 1
            elif c == "\n":
                self.y = min(self.y + 1, self.rows - 1)
                i += 1
            elif c == "\x08":
                self.x = max(self.x - 1, 0)
                i += 1
            elif c < " ":
                i += 1
            else:
                if 0 <= self.y < self.rows and 0 <= self.x < self.cols:
                    self.grid[self.y][self.x] = c
                self.x += 1
                i += 1

    def _csi(self, params: str, final: str) -> None:
        if params.startswith("?") or "$" in params:
            return
        nums = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else []
        if final in "Hf":
            row = nums[0] if nums and nums[0] else 1
            col = nums[1] if len(nums) > 1 and nums[1] else 1
            self.y, self.x = min(row, self.rows) - 1, min(col, self.cols) - 1
        elif final == "J" and (nums[:1] or [0])[0] == 2:
            self.grid = [[" "] * self.cols for _ in range(self.rows)]
        elif final == "K":
            mode = (nums[:1] or [0])[0]
            row = self.grid[self.y]
            lo, hi = {0: (self.x, self.cols), 1: (0, self.x + 1), 2: (0, self.cols)}.get(mode, (0, 0))
            for j in range(lo, hi):
                row[j] = " "
        elif final == "C":
            self.x = min(self.x + (nums[0] if nums and nums[0] else 1), self.cols - 1)
        elif final == "D":
            self.x = max(self.x - (nums[0] if nums and nums[0] else 1), 0)
        elif final == "A":
            self.y = max(self.y - (nums[0] if nums and nums[0] else 1), 0)
        elif final == "B":
            self.y = min(self.y + (nums[0] if nums and nums[0] else 1), self.rows - 1)
        elif final == "G":
            self.x = min((nums[0] if nums and nums[0] else 1), self.cols) - 1

    def lines(self) -> list[str]:
        return ["".join(r) for r in self.grid]

    def text(self) -> str:
        return "\n".join(self.lines())


class Session:
    """`tfx open` on a pty of ``cols`` x ``rows``."""

    def __init__(self, cols: int, rows: int, argv: list[str], src: str | None = None) -> None:
        self.screen = Screen(cols, rows)
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows))
        # byte code cached, as an installed tfx has it (PYTHONDONTWRITEBYTECODE=1 makes
        # every run, and every worker, compile each tfx module from source again)
        if not os.environ.get("TFX_BENCH_COMPILE"):     # =1: as the environment has it
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "tfx-bench-pycache")
        if src:                                 # another checkout, for before/after figures
            env["PYTHONPATH"] = os.path.abspath(src)
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     cwd=os.path.abspath(src) if src else None,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.fd = master

    def wait_for(self, pred, timeout: float = 20.0) -> float:
        """Read output until ``pred(screen)`` holds after a chunk; returns perf_counter then."""
        deadline = time.perf_counter() + timeout
        while True:
            if pred(self.screen):
                return time.perf_counter()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("the expected frame never came:\n" + self.screen.text())
            r, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if r:
                try:
                    data = os.read(self.fd, 1 << 16)
                except OSError:
                    data = b""
                if not data:
                    raise RuntimeError("tfx open exited:\n" + self.screen.text())
                self.screen.feed(data)

    def drain(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0:
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    data = os.read(self.fd, 1 << 16)
                except OSError:
                    return
                if not data:
                    return
                self.screen.feed(data)

    def press(self, key: str) -> float:
        t = time.perf_counter()
        os.write(self.fd, key.encode())
        return t

    def close(self) -> None:
        try:
            os.write(self.fd, b"q")
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.fd)


def _cpu_s(pid: int, tree: bool = False) -> float:
    """User + system CPU seconds of ``pid`` (and of its descendants with ``tree``), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick      # utime, stime
            if tree:
                for task in os.listdir(f"/proc/{p}/task"):
                    with open(f"/proc/{p}/task/{task}/children") as fh:
                        todo += [int(c) for c in fh.read().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total


def _row(screen: Screen, name: str) -> list[str] | None:
    for line in screen.lines():
        cells = line.split()
        if cells and cells[0] == name:
            return cells
    return None


def _value_is(name: str, value: str):
    def pred(screen: Screen) -> bool:
        r = _row(screen, name)
        return r is not None and len(r) > 1 and r[1] == value
    return pred


def _launcher() -> str | None:
    """The ``tfx`` console script of the interpreter running this bench (what installing
    tfx puts beside python), else the first ``tfx`` on PATH. A version manager's shim
    on PATH (pyenv's is a bash script that runs ``pyenv exec``) is not part of tfx: here
    it cost ~50 ms of wall time and ~20 ms of CPU before Python started."""
    beside = os.path.join(os.path.dirname(sys.executable), "tfx")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("tfx")


def _argv(src: str | None) -> list[str]:
    exe = _launcher()
    if exe and not src:
        return [exe, "open"]
    return [sys.executable, "-m", "tfx.cli.main", "open"]


def one_run(cols: int, rows: int, keys: int, out: dict[str, list[float]], src: str | None,
            startup_only: bool = False) -> None:
    s = Session(cols, rows, _argv(src), src)
    try:
        out["first paint"].append(s.wait_for(lambda sc: "1 IR" in sc.text()) - s.t0)
        out["first paint, CPU"].append(_cpu_s(s.proc.pid))
        out["analysis shown"].append(
            s.wait_for(lambda sc: "predicted" in sc.lines()[0]) - s.t0)
        out["analysis shown, CPU"].append(_cpu_s(s.proc.pid, tree=True))
        if startup_only:
            return
        s.drain(2.0)                           # the worker process starts after first paint
        # knob: x / h on the first fact (hierarchy.sm.count: 132 <-> 264)
        t = s.press("6")
        out["Hardware mounted"].append(s.wait_for(_value_is("hierarchy.sm.count", "132")) - t)
        s.drain(0.2)
        for i in range(keys + 1):
            t = s.press("x" if i % 2 == 0 else "h")
            done = s.wait_for(_value_is("hierarchy.sm.count", "264" if i % 2 == 0 else "132"))
            if i:
                out["knob keystroke"].append(done - t)
            s.drain(0.15)
        # parameter: x / h on STAGES in the Roofline pane (3 <-> 6)
        t = s.press("3")
        out["Roofline mounted"].append(s.wait_for(_value_is("STAGES", "3")) - t)
        s.drain(0.2)
        for _ in range(7):                     # down to the STAGES row (M N K BM BN BK WARPS STAGES)
            s.press("\x1b[B")
        s.drain(0.3)
        for i in range(keys + 1):
            t = s.press("x" if i % 2 == 0 else "h")
            done = s.wait_for(_value_is("STAGES", "6" if i % 2 == 0 else "3"))
            if i:
                out["param keystroke"].append(done - t)
            s.drain(0.15)
        t = s.press("5")
        try:
            out["explore shown"].append(
                s.wait_for(lambda sc: "configurations" in sc.text(), timeout=30) - t)
        except TimeoutError:
            print("explore: no sweep result shown within 30 s", file=sys.stderr)
    finally:
        s.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5, help="fresh processes (default 5)")
    ap.add_argument("--keys", type=int, default=8, help="counted keystrokes of each kind per run")
    ap.add_argument("--size", default="80x24", help="terminal COLSxROWS (default 80x24)")
    ap.add_argument("--src", help="run `python -m tfx.cli.main` from this checkout instead "
                    "(e.g. a `git worktree` of an older commit)")
    ap.add_argument("--against", metavar="DIR",
                    help="paired before/after figures: alternate runs of this checkout and of the "
                    "checkout DIR (both as `python -m tfx.cli.main`), startup only, and print "
                    "each side's medians and the median of the paired differences")
    ap.add_argument("--startup-only", action="store_true",
                    help="first paint and analysis shown only (no keystrokes, no sweep)")
    args = ap.parse_args()
    cols, rows = (int(v) for v in args.size.split("x"))
    if args.against:
        paired(cols, rows, args.runs, os.path.abspath(args.against))
        return
    out: dict[str, list[float]] = {k: [] for k in ("first paint", "first paint, CPU", "analysis shown",
                                                   "analysis shown, CPU", "Hardware mounted",
                                                   "knob keystroke", "Roofline mounted",
                                                   "param keystroke", "explore shown")}
    if args.runs:
        # one run first, not counted: it writes the byte code (as installing tfx does)
        one_run(cols, rows, args.keys, {k: [] for k in out}, args.src, startup_only=True)
    for _ in range(args.runs):
        one_run(cols, rows, args.keys, out, args.src, args.startup_only)
    targets = {"first paint": 400, "analysis shown": 600, "first paint, CPU": 400,
               "analysis shown, CPU": 600, "knob keystroke": 100, "param keystroke": 100}
    load = os.getloadavg()[0]
    print(f"tfx open at {cols}x{rows}, {args.runs} runs x {args.keys} keystrokes (medians; min..max); "
          f"load average {load:.1f} on {os.cpu_count()} cores")
    print(f"  started as: {' '.join(_argv(args.src))}")
    for name, xs in out.items():
        if not xs:
            continue
        ms = [x * 1000 for x in xs]
        tgt = f"  (target <= {targets[name]} ms)" if name in targets else ""
        print(f"  {name:<20} {statistics.median(ms):7.0f} ms   {min(ms):5.0f}..{max(ms):.0f}{tgt}")


STARTUP = ("first paint", "first paint, CPU", "analysis shown", "analysis shown, CPU")


def paired(cols: int, rows: int, runs: int, against: str) -> None:
    """``--against DIR``: runs of this checkout (A) and of DIR (B) alternate, so both
    see the same load; the order within a pair alternates too. Both start as
    ``python -m tfx.cli.main open`` (the same launcher)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = {"this": here, "against": against}
    out = {side: {k: [] for k in STARTUP} for side in sides}
    for src in sides.values():          # uncounted: writes each side's byte code
        one_run(cols, rows, 0, {k: [] for k in STARTUP}, src, startup_only=True)
    for i in range(runs):
        order = ("this", "against") if i % 2 == 0 else ("against", "this")
        for side in order:
            one_run(cols, rows, 0, out[side], sides[side], startup_only=True)
    print(f"tfx open at {cols}x{rows}, {runs} paired runs (medians; min..max); this = {here}, "
          f"against = {against}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  {'':<20} {'this':>16} {'against':>16}   this - against (median of pairs)")
    for name in STARTUP:
        a = [x * 1000 for x in out["this"][name]]
        b = [x * 1000 for x in out["against"][name]]
        d = statistics.median(x - y for x, y in zip(a, b))
        print(f"  {name:<20} {statistics.median(a):6.0f} ({min(a):4.0f}..{max(a):<4.0f})"
              f" {statistics.median(b):6.0f} ({min(b):4.0f}..{max(b):<4.0f})   {d:+6.0f} ms")


if __name__ == "__main__":
    main()
