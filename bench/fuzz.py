"""Fuzz the CLI with mutated kernels, profiles, model presets, knobs and options, and count
how each run ended (issue 13).

Every case runs ``tfx.cli.main.main(argv)`` in a forked child of this process (tfx and numpy
imported once, so a case costs its own work, not an interpreter start), with a wall-clock
limit and an address-space limit. Outcome classes:

* ``ok``         exit 0
* ``refused``    exit 2 with one error line (plus, for a source location, the echoed line and
                 its caret, and ``note:`` lines: the form docs/language.md describes)
* ``refused-multiline``  exit 2 but other lines too (argparse usage, numpy warnings...)
* ``traceback``  an exception escaped (exit 1 with a Python traceback, or any other status)
* ``hang``       past the time limit, or past the memory limit (MemoryError): work that
                 grows without bound

    python bench/fuzz.py [--cases 3000] [--seed 1] [--jobs 2] [--timeout 20] [--show 8]

Prints counts by class, by input kind, and the first few cases of every bad class with
the command and the last line of stderr, to reproduce them. Exit 1 when any case is bad.
"""

from __future__ import annotations

import argparse
import collections
import io
import os
import random
import re
import resource
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")

KERNELS = sorted((ROOT / "kernels").glob("*.tile"))
PROFILES = sorted((ROOT / "hw_profiles").glob("*.toml"))
PRESETS = sorted((ROOT / "models").glob("*.toml"))
GPU_PROFILES = ["h200_sxm", "h100_sxm", "a100_sxm", "b200", "rtx5070ti", "h200_nvl8"]

INTERESTING_INTS = ["0", "1", "-1", "2", "3", "7", "64", "1000000000", "4294967296",
                    "9223372036854775807", "9223372036854775808", "1180591620717411303424",
                    "pow2(62) * pow2(62)", "0x0", "1_000", "٣", "1e3"]
INTERESTING_TOML = ["0", "-1", "1e-320", "1e308", "nan", "inf", "-inf", "9223372036854775807",
                    "1180591620717411303424", "\"x\"", "[1, 2]", "{}", "true", "1.5", "0.0",
                    "2", "99999999999999999999999", "\"\""]
KNOB_VALUES = ["0", "-1", "1e-320", "x1e-320", "/1e308", "x0", "1e400", "1180591620717411303424",
               "nan", "x2", "/3", "1", "٣", "3.2TB/s", "5 GHz", "1e-9", "x1e300", "inf", "2**70",
               "16777216", "1e18", "", "x", "9" * 400]
OPTION_VALUES = ["0", "-1", "1", "3", "nan", "inf", "1e400", "99999999999999999999999", "x", "٣",
                 "2**70", "", "1e-320", "4294967296", "65536"]
ODD_CHARS = ["$", "\u00a0", "\u2028", "\ufeff", "{", "}", "(", ")", ",", "%", "٣", "\t", "\x00",
             "/", "*", "..", "->", "\n", "#", "\"", "[", "]", "=", "é"]


# ------------------------------------------------------------------ text mutations

def _replace_match(rng: random.Random, text: str, pattern: str, choices) -> str:
    matches = list(re.finditer(pattern, text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[:m.start()] + rng.choice(choices) + text[m.end():]


def _line_edit(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    op = rng.randrange(3)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[j])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def mutate_kernel(rng: random.Random, text: str) -> str:
    """One to three edits a tester would try on a .tile file."""
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(9)
        if op <= 2:  # a number (most defects were numbers)
            text = _replace_match(rng, text, r"(?<![A-Za-z_%])\d+(?![A-Za-z_])", INTERESTING_INTS)
        elif op == 3:
            text = _replace_match(rng, text, r"(?<=[ (\[])[-+*/%](?= )", ["+", "-", "*", "/", "%"])
        elif op == 4:
            text = _line_edit(rng, text)
        elif op == 5:
            pos = rng.randrange(len(text) + 1)
            text = text[:pos] + rng.choice(ODD_CHARS) + text[pos:]
        elif op == 6:
            names = re.findall(r"\b[A-Z][A-Z_0-9]*\b", text)
            if names:
                text = _replace_match(rng, text, r"\b[A-Z][A-Z_0-9]*\b", names)
        elif op == 7:  # a loop or domain bound
            text = _replace_match(rng, text, r"(?<= to )[^ {]+|(?<= in )\{[^}]*\}|(?<= in )\d+\.\.\d+",
                                  ["0", "1", "0 + 0", "1..1000000000", "{0}", "{1, pow2(62) * pow2(62)}",
                                   "4096 * 4096 * 4096 * 4096", "-5", "{}", "1..0"])
        else:
            cut = rng.randrange(len(text) + 1)
            text = text[:cut] if rng.random() < 0.5 else text + text[cut:cut + rng.randint(1, 40)]
    return text


def mutate_toml(rng: random.Random, text: str, renames: dict[str, str]) -> str:
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(8)
        if op <= 2:
            text = _replace_match(rng, text, r"(?<== )[^\s,}\]]+", INTERESTING_TOML)
        elif op == 3:
            text = _line_edit(rng, text)
        elif op == 4 and renames:
            old = rng.choice(sorted(renames))
            text = text.replace(old, renames[old], 1)
        elif op == 5:
            depth = rng.choice([10, 500, 2000, 5000])
            text = text + f"\nzz = {'[' * depth}1{']' * depth}\n"
        elif op == 6:
            pos = rng.randrange(len(text) + 1)
            text = text[:pos] + rng.choice(ODD_CHARS) + text[pos:]
        else:  # drop a whole table
            headers = [m.start() for m in re.finditer(r"^\[", text, re.M)]
            if headers:
                i = rng.randrange(len(headers))
                end = headers[i + 1] if i + 1 < len(headers) else len(text)
                text = text[:headers[i]] + text[end:]
    return text


# ------------------------------------------------------------------ cases

def _fact_paths(profile_name: str) -> list[str]:
    from tfx.hw import load_profile
    return [p for p, _ in load_profile(profile_name).facts()]


def _kernel_profile(kernel: Path) -> str:
    return "sip" if kernel.name.startswith("sip") else "h200_sxm"


def make_case(rng: random.Random, tmp: Path, n: int, fact_paths: dict[str, list[str]]):
    """(kind, argv, files written) for case number ``n``."""
    kind = rng.choice(["kernel", "kernel", "kernel", "profile", "preset", "knob", "option"])
    if kind == "kernel":
        src = rng.choice(KERNELS)
        path = tmp / f"k{n}.tile"
        path.write_text(mutate_kernel(rng, src.read_text()))
        hw = _kernel_profile(src)
        cmd = rng.choice(["check", "analyze", "analyze", "simulate", "explore"])
        argv = [cmd, str(path)] + ([] if cmd == "check" else ["--hw", hw])
        if cmd == "explore":
            argv += ["--top", "3"]
        return kind, argv
    if kind == "profile":
        src = rng.choice(PROFILES)
        path = tmp / f"p{n}.toml"
        renames = {"[memory.tcm": "[memory.hbm", "[links.d2d]": "[links.zz]", "bandwidth": "bandwith",
                   "[occupancy]": "[occ]", "[compute.tensor]": "[compute.tensr]", "base =": "#base ="}
        text = mutate_toml(rng, src.read_text(), renames)
        if src.stem == "h200_nvl8" or 'base = "' in text:  # a base resolves next to the file
            text = re.sub(r'base = "([a-z0-9_]+)"',
                          lambda m: f'base = "{ROOT / "hw_profiles" / (m.group(1) + ".toml")}"', text)
        path.write_text(text)
        gpu = "kind = \"gpu\"" in text or src.stem != "sip"
        kernel = str(ROOT / "kernels" / ("gemm.tile" if gpu else "sip_gemm.tile"))
        argv = rng.choice([["hw", "show", str(path)], ["analyze", kernel, "--hw", str(path)],
                           ["simulate", kernel, "--hw", str(path), "--tiles", "4"],
                           ["model", "latency", "--model", "llama3.2-1b", "--hw", str(path)],
                           ["model", "memory", "--model", "llama3.2-1b", "--hw", str(path)],
                           ["occupancy", "--hw", str(path), "--threads", "128", "--regs", "32"],
                           ["explore", kernel, "--hw", str(path), "--top", "3"]])
        return kind, argv
    if kind == "preset":
        src = rng.choice(PRESETS)
        path = tmp / f"m{n}.toml"
        path.write_text(mutate_toml(rng, src.read_text(), {"[moe]": "[mo]", "num_kv_heads": "num_kv_head",
                                                          "head_dim": "head_dims"}))
        hw = rng.choice(["h200_sxm", "h200_nvl8", "sip"])
        argv = rng.choice([["model", "show", "--model", str(path)],
                           ["model", "memory", "--model", str(path), "--hw", hw],
                           ["model", "latency", "--model", str(path), "--hw", hw],
                           ["model", "latency", "--model", str(path), "--hw", hw, "--mode", "prefill"]])
        return kind, argv
    if kind == "knob":
        hw = rng.choice(["h200_sxm", "sip", "a100_sxm"])
        paths = fact_paths[hw]
        knobs = []
        for _ in range(rng.randint(1, 2)):
            name = rng.choice(paths)
            if rng.random() < 0.5:
                name = name.split(".", 1)[-1]
            knobs += ["--knob", f"{name}={rng.choice(KNOB_VALUES)}"]
        kernel = str(ROOT / "kernels" / ("sip_gemm.tile" if hw == "sip" else "gemm.tile"))
        base = rng.choice([["analyze", kernel, "--hw", hw], ["simulate", kernel, "--hw", hw, "--tiles", "4"],
                           ["explore", kernel, "--hw", hw, "--top", "3"],
                           ["model", "latency", "--model", "llama3.2-1b", "--hw", hw],
                           ["occupancy", "--hw", hw, "--threads", "128", "--regs", "32"]])
        if base[0] == "occupancy" and hw == "sip":
            base[2] = "h200_sxm"
            knobs = []
        return kind, base + knobs
    # options
    v = lambda: rng.choice(OPTION_VALUES)  # noqa: E731
    gemm = str(ROOT / "kernels" / "gemm.tile")
    params = ["M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M"]
    argv = rng.choice([
        ["analyze", gemm, "--set", f"{rng.choice(params)}={v()}"],
        ["simulate", gemm, "--tiles", v()],
        ["simulate", gemm, "--set", f"{rng.choice(params)}={v()}", "--tiles", "4"],
        ["explore", gemm, "--top", v()],
        ["explore", gemm, "--chunk", v(), "--top", "2"],
        ["explore", gemm, "--sweep", f"{rng.choice(params)}={v()},{v()}", "--top", "2"],
        ["occupancy", "--threads", v(), "--regs", v(), "--smem", v()],
        ["model", "latency", "--model", "llama3.2-1b", "--batch", v(), "--ctx", v()],
        ["model", "latency", "--model", "llama3.2-1b", "--capacity", v(), "--launch-us", v()],
        ["model", "memory", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--tp", v()],
        ["model", "latency", "--model", "llama3.1-8b", "--hw", "h200_nvl8", f"--{rng.choice(['tp', 'pp', 'cp', 'dp', 'ep'])}", v()],
        ["model", "compare", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--config",
         f"{rng.choice(['tp', 'pp', 'cp', 'kv', 'ring', 'tp_place', 'x'])}={v()}"],
        ["model", "suggest", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--sensitivity", f"tp={v()}"],
        ["model", "latency", "--model", "llama3.2-1b", f"--{rng.choice(['weight', 'act', 'kv'])}-dtype", v()],
        ["check", gemm, "--set", f"{rng.choice(params)}={v()}"],
    ])
    return "option", argv


# ------------------------------------------------------------------ running

def classify(rc: int | None, err: str) -> str:
    if rc is None:
        return "hang"
    if "MemoryError" in err:
        return "hang"
    if rc == 0:
        return "ok"
    if rc == 2:
        lines = [l for l in err.rstrip("\n").split("\n") if l]
        if "Traceback" in err:
            return "traceback"
        extra = lines[1:]
        # one error line, optionally the echoed source line and its caret, then notes
        if extra and len(extra) >= 2 and extra[1].strip() == "^" and extra[0].startswith("  "):
            extra = extra[2:]
        extra = [l for l in extra if not l.startswith("  note: ")]
        return "refused" if len(lines) >= 1 and not extra else "refused-multiline"
    return "traceback"


def spawn(argv: list[str], mem_bytes: int):
    """Fork a child running main(argv), stdout to /dev/null, stderr to a temp file."""
    err_file = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:  # child
        try:
            resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(err_file.fileno(), 2)
            sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
            sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", buffering=0), write_through=True)
            from tfx.cli.main import main
            rc = main(argv)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(rc or 0))
        except SystemExit as exc:
            os._exit(exc.code if isinstance(exc.code, int) else 2)
        except BaseException:
            import traceback
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
    return pid, err_file, time.perf_counter()


def finish(pid: int, err_file, status: int | None) -> tuple[int | None, str]:
    """(exit code or None for a hang, stderr) of a child that ended or was killed."""
    rc: int | None = None
    if status is not None:
        rc = os.waitstatus_to_exitcode(status)
        if rc < 0:  # a signal: the memory limit can end in SIGSEGV or SIGKILL
            rc = None if -rc in (signal.SIGKILL, signal.SIGSEGV) else 1
    err_file.seek(0)
    err = err_file.read().decode("utf-8", "replace")
    err_file.close()
    return rc, err


def run_all(cases, jobs: int, timeout: float, mem_bytes: int):
    """Yield (index, rc, stderr, seconds) as cases end, ``jobs`` children at a time."""
    pending = list(enumerate(cases))[::-1]
    running: dict[int, tuple] = {}
    while pending or running:
        while pending and len(running) < jobs:
            i, (_, argv) = pending.pop()
            pid, err_file, t0 = spawn(argv, mem_bytes)
            running[pid] = (i, err_file, t0)
        time.sleep(0.003)
        for pid in list(running):
            i, err_file, t0 = running[pid]
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                rc, err = finish(pid, err_file, status)
            elif time.perf_counter() - t0 > timeout:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                rc, err = finish(pid, err_file, None)
            else:
                continue
            del running[pid]
            yield i, rc, err, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="cases run at once")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds before a case counts as a hang")
    ap.add_argument("--memory-gb", type=float, default=3.0, help="address-space limit of a case")
    ap.add_argument("--show", type=int, default=8, help="bad cases shown per class")
    ap.add_argument("--keep", metavar="DIR", help="write the mutants here and keep them (to reproduce)")
    args = ap.parse_args()

    import tfx.cli.main  # noqa: F401  (imported once, before forking)
    import tfx.analysis.analyze  # noqa: F401
    import tfx.explore  # noqa: F401
    import tfx.model.latency  # noqa: F401
    import tfx.sim  # noqa: F401
    rng = random.Random(args.seed)
    fact_paths = {hw: _fact_paths(hw) for hw in ("h200_sxm", "sip", "a100_sxm")}
    counts: collections.Counter = collections.Counter()
    by_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    examples: dict[str, list[str]] = collections.defaultdict(list)
    slowest: list[tuple[float, str]] = []
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tfx-fuzz-") as tmpdir:
        tmp = Path(args.keep or tmpdir)
        tmp.mkdir(parents=True, exist_ok=True)
        cases = [make_case(rng, tmp, n, fact_paths) for n in range(args.cases)]
        mem = int(args.memory_gb * 2 ** 30)
        for i, rc, err, seconds in run_all(cases, args.jobs, args.timeout, mem):
            kind, argv = cases[i]
            cls = classify(rc, err)
            counts[cls] += 1
            by_kind[kind][cls] += 1
            shown = " ".join(a if " " not in a and a else repr(a) for a in argv)
            slowest.append((seconds, shown))
            if cls not in ("ok", "refused") and len(examples[cls]) < args.show:
                last = err.strip().split("\n")[-1][:200] if err.strip() else f"(exit {rc})"
                examples[cls].append(f"  tfx {shown}\n    -> {last}")
    total = time.perf_counter() - t_start
    classes = ["ok", "refused", "refused-multiline", "traceback", "hang"]
    print(f"{args.cases:,} cases (seed {args.seed}) in {total:.0f} s")
    print("outcome            " + "".join(f"{c:>19}" for c in classes))
    print("all                " + "".join(f"{counts[c]:>19,}" for c in classes))
    for kind in sorted(by_kind):
        print(f"{kind:<19}" + "".join(f"{by_kind[kind][c]:>19,}" for c in classes))
    slowest.sort(reverse=True)
    print("slowest: " + "; ".join(f"{s:.1f} s {c[:80]}" for s, c in slowest[:3]))
    for cls in classes[2:]:
        if examples[cls]:
            print(f"\n{cls}:")
            print("\n".join(examples[cls]))
    bad = counts["refused-multiline"] + counts["traceback"] + counts["hang"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
