"""What the H200 measurement scripts (bench/h200/measure*.py) share: a run's clock, log
file, output folder and time budget, CSV files written a row at a time, the occupancy
query, nvidia-smi readings and the median timing.

Each script runs on its own on the device machine (``python3 bench/h200/measure_x.py
OUTDIR``); Python puts the script's folder first on ``sys.path``, so ``import common``
finds this file. Nothing here imports torch or triton when imported:
``measure_accuracy.py --plan`` runs without them.
"""
import csv
import os
import statistics
import subprocess
import threading
import time
import traceback


class Campaign:
    """One script's run: the clock starts where the script creates it; ``open`` makes the
    output folder and the log file. ``global_deadline_s`` bounds the whole run and
    ``section_max_s`` each named section (seconds from the start); ``nvsmi_fields`` are the
    nvidia-smi columns the script logs. A logged line starts with ``stamp`` formatted with
    the seconds since the start (None: no stamp), in the log file too unless ``stamp_file``
    is False."""

    def __init__(self, global_deadline_s=None, section_max_s=None, nvsmi_fields=None, stamp="[{:7.1f}s] ",
                 stamp_file=True):
        self.t0 = time.time()
        self.global_deadline_s = global_deadline_s
        self.section_max_s = section_max_s or {}
        self.nvsmi_fields = nvsmi_fields
        self.stamp = stamp
        self.stamp_file = stamp_file
        self.out = None
        self.log_file = None
        self._occupancy_failed = False

    def open(self, out, log_name):
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.log_file = open(os.path.join(out, log_name), "w")

    def close(self):
        self.log_file.close()

    def log(self, *a):
        """Print a line and append it to the log file (once open)."""
        s = " ".join(str(x) for x in a)
        line = s if self.stamp is None else self.stamp.format(time.time() - self.t0) + s
        print(line, flush=True)
        if self.log_file is not None:
            self.log_file.write((line if self.stamp_file else s) + "\n")
            self.log_file.flush()

    def elapsed(self):
        return time.time() - self.t0

    def csv(self, name, cols):
        return Csv(os.path.join(self.out, name), cols)

    def deadline(self, section):
        return Deadline(self, section)

    def run_sections(self, sections, cpu_test=False):
        """Run each (name, fn) in order while the run's deadline allows; fn returns its row
        count. A section that raises is logged (and the device synchronised and its cache
        emptied, off the CPU test) and the next one runs; nvidia-smi is read after each.
        Returns {name: rows, "skipped" or "failed: ..."}, also logged."""
        summary = {}
        for name, fn in sections:
            if self.elapsed() > self.global_deadline_s:
                self.log(f"SKIP section {name}: global time budget spent")
                summary[name] = "skipped"
                continue
            self.log(f"===== section {name} =====")
            try:
                summary[name] = fn()
            except Exception as e:
                summary[name] = "failed: " + repr(e)[:200]
                self.log(f"section {name} FAILED: {repr(e)[:500]}")
                traceback.print_exc()
                if not cpu_test:
                    try:
                        import torch
                        torch.cuda.synchronize()
                        torch.cuda.empty_cache()
                    except Exception:
                        pass
            if not cpu_test:
                self.nvsmi()
        self.log("SUMMARY rows per section:", summary, f"total {self.elapsed():.0f}s")
        return summary

    def occupancy(self, kernel, threads, smem):
        """Blocks of a compiled Triton kernel resident on one SM (the driver's
        cuOccupancyMaxActiveBlocksPerMultiprocessor); "" where the query fails, whose first
        failure is logged."""
        try:
            from cuda.bindings import driver as cud
            err, n = cud.cuOccupancyMaxActiveBlocksPerMultiprocessor(cud.CUfunction(kernel.function), threads, smem)
            if int(err) != 0:
                raise RuntimeError(str(err))
            return int(n)
        except Exception as e:
            if not self._occupancy_failed:
                self.log("occupancy query unavailable:", repr(e)[:200])
                self._occupancy_failed = True
            return ""

    def resources(self, k, warps, smem="shared_bytes", regs="n_regs", spills="n_spills"):
        """Load a compiled Triton kernel: ({smem, regs, spills, blocks_per_sm} under these
        column names, None), or ({smem}, the OutOfResources message) when it does not fit."""
        from triton.runtime.autotuner import OutOfResources
        info = {smem: k.metadata.shared}
        try:
            k._init_handles()
        except OutOfResources as e:
            return info, str(e)[:200]
        info[regs] = k.n_regs
        info[spills] = k.n_spills
        info["blocks_per_sm"] = self.occupancy(k, warps * 32, k.metadata.shared)
        return info, None

    def nvsmi(self):
        """Log nvidia-smi's reading of ``nvsmi_fields`` (csv with its header, one line)."""
        try:
            r = subprocess.run(["nvidia-smi", f"--query-gpu={self.nvsmi_fields}", "--format=csv"],
                               capture_output=True, text=True, timeout=20)
            self.log("nvidia-smi:", r.stdout.strip().replace("\n", " | "))
        except Exception as e:
            self.log("nvidia-smi failed:", repr(e))


def write_rows(path, rows) -> None:
    """Rows (dicts) to a CSV file at once, the columns the first row's keys, values as str()
    writes them: the finished table of a compile-only script (Csv below writes a row at a time)."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


class Csv:
    """A CSV file written and flushed a row at a time, so partial results survive; floats
    are written with 6 significant digits, columns a row lacks stay empty."""

    def __init__(self, path, cols):
        self.path = path
        self.cols = cols
        self.f = open(self.path, "w", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=cols, extrasaction="ignore")
        self.w.writeheader()
        self.f.flush()
        self.n = 0

    def row(self, **kw):
        for k, v in kw.items():
            if isinstance(v, float):
                kw[k] = f"{v:.6g}"
        self.w.writerow(kw)
        self.f.flush()
        self.n += 1

    def close(self):
        self.f.close()


class Deadline:
    """A section's end: its own budget from when it starts, capped by the run's."""

    def __init__(self, run, name):
        self.run = run
        self.name = name
        self.start = run.elapsed()
        self.end = min(self.start + run.section_max_s[name], run.global_deadline_s)

    def over(self):
        return self.run.elapsed() > self.end

    def left(self):
        return self.end - self.run.elapsed()


def sync():
    import torch
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def event_ms(fn, reps):
    """Milliseconds of each of reps calls of fn, with CUDA events recorded around each call (no L2
    clear: a caller that needs one clears it in fn)."""
    import torch
    vals = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        vals.append(s.elapsed_time(e))
    return vals


def median_event_ms(fn, reps, warmups=1):
    """The median of ``event_ms`` over ``reps`` calls, after ``warmups`` untimed calls and a sync."""
    for _ in range(warmups):
        fn()
    sync()
    return statistics.median(event_ms(fn, reps))


def median_ms(fn, warmup, rep, cpu_test=False):
    """Median ms per call: triton.testing.do_bench (warmup and rep are milliseconds of
    running; the L2 is cleared before every timed call). cpu_test (the Triton interpreter):
    one call after one warm-up call, a logic test whose time means nothing."""
    if cpu_test:
        fn()
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3
    import triton
    return float(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median"))


def smi(fields):
    """nvidia-smi's reading of ``fields`` (csv, no header), or why there is none."""
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as exc:  # noqa: BLE001
        return f"nvidia-smi failed: {exc}"


class SmiSampler:
    """nvidia-smi's SM clock (MHz) and power draw (W) every ``period_ms`` while the block runs.

    One ``nvidia-smi -lms`` process streams the readings; a reader thread keeps them as
    (seconds since the block began, MHz, W). The first readings belong to the clock's ramp
    after an idle gap, so ``medians`` skips the first ``after_s`` seconds."""

    def __init__(self, period_ms=20):
        self.period_ms = period_ms
        self.samples = []
        self.proc = None

    def __enter__(self):
        self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                                      "-lms", str(self.period_ms)], stdout=subprocess.PIPE, text=True)
        self.t0 = time.time()

        def read():
            for line in self.proc.stdout:
                try:
                    mhz, watt = (float(x) for x in line.strip().split(","))
                    self.samples.append((time.time() - self.t0, mhz, watt))
                except ValueError:
                    pass
        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=5)
        self.reader.join(timeout=2)

    def late(self, after_s=0.1):
        """The readings from ``after_s`` on (all of them when none is that late)."""
        return [s for s in self.samples if s[0] >= after_s] or self.samples

    def medians(self, after_s=0.1):
        """Median SM clock (MHz) and power (W) from ``after_s`` on, or (None, None) without readings."""
        late = self.late(after_s)
        if not late:
            return None, None
        return statistics.median(s[1] for s in late), statistics.median(s[2] for s in late)


def compile_processes(n_jobs):
    """How many spawned processes compile n_jobs kernels into the shared Triton cache: one a
    job, leaving two CPUs to the rest, at most 14."""
    return max(1, min(n_jobs, (os.cpu_count() or 4) - 2, 14))


def results_in_budget(pool, worker, jobs, budget_s, t):
    """worker(job) for every job in the pool's processes, each result as it arrives, waited
    for only while budget_s seconds since t last: TimeoutError once they are spent (the
    pool's lifetime stays with the caller)."""
    it = pool.imap_unordered(worker, jobs, chunksize=1)
    for _ in range(len(jobs)):
        left = budget_s - (time.time() - t)
        if left <= 0:
            raise TimeoutError("precompile budget spent")
        yield it.next(timeout=left)


def launch_signature(fn, ptrs, ints, consts):
    """(signature, constexprs, attrs) for triton.compile(ASTSource(fn, ...)) that specialise
    ``fn`` as a launch with these arguments does (Triton 3.6.0's JIT): each pointer in ``ptrs``
    ({name: type}) 16-byte aligned, each int in ``ints`` ({name: value}) equal to 1 a
    constexpr, else i32 marked divisible by 16 where it is; ``consts`` the constexprs. What the
    CPU compiles (--cpu / --sass modes) need to match the device's binaries."""
    names = fn.arg_names
    sig = dict(ptrs)
    consts = dict(consts)
    attrs = {(names.index(p),): [["tt.divisibility", 16]] for p in ptrs}
    for key, v in ints.items():
        if v == 1:
            consts[key] = 1
        else:
            sig[key] = "i32"
            if v % 16 == 0:
                attrs[(names.index(key),)] = [["tt.divisibility", 16]]
    return {key: sig.get(key, "constexpr") for key in names}, consts, attrs


def launch_twice(job):
    """An Nsight Compute child's work: one measure_accuracy job launched twice (ncu profiles the second:
    the first compiles), then synchronized."""
    import measure_accuracy as acc
    import torch
    bufs = acc.make_bufs(job)
    for _ in range(2):
        acc.launch(job, bufs)
    torch.cuda.synchronize()


def bench_job(job) -> float:
    """do_bench's median ms of one measure_accuracy job (measure_accuracy.bench), its buffers freed after:
    the timing beside an Nsight Compute child's counters."""
    import torch

    def timed():       # the buffers live in this frame only: freed when it returns
        import measure_accuracy as acc
        bufs = acc.make_bufs(job)
        return acc.bench(lambda: acc.launch(job, bufs))
    ms = timed()
    torch.cuda.empty_cache()
    return ms


def ncu_last_row(text):
    """(names, units, values) of the last data row of ``ncu --csv --page raw`` output (its first quoted row names
    the metrics, its second their units, one row a profiled kernel after), or None where it holds no data row."""
    rows = list(csv.reader(line for line in text.splitlines() if line.startswith('"')))
    return (rows[0], rows[1], rows[-1]) if len(rows) >= 3 else None
