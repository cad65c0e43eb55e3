"""Measured kernel times beside predicted ones: the reader and the accuracy figures.

One reader for every surface (``tfx validate``, ``bench/accuracy.py``, the explorer's
``--measured``): a CSV with columns

    kernel        the .tile file (absolute, or relative to the working directory, the CSV's
                  folder or one of its parents)
    profile       a hardware profile name or file (empty: the command's --hw)
    measured_ms   the measured time of one launch sequence of the kernel, in ms
    <parameter>   one column per kernel parameter, by its name (empty: the default)
    regs, spills, smem_bytes, local_bytes
                  optional, as compiled: registers per thread, spilled 4-byte words per thread
                  (ptxas' "spill stores"/Triton's n_spills), shared memory per CTA in bytes,
                  and the bytes a thread's local loads and stores move (LDL + STL of the
                  SASS, by their widths; static counts of a loop-free kernel are what a
                  thread executes)

and, optionally, annotations (ANNOTATIONS) that group and filter rows: ``family`` and
``shape`` name the group a row is judged in; rows whose ``status`` is not ``ok`` are skipped.
Nsight Compute's raw CSV export (``ncu --csv --page raw``) is read by ``read_ncu``.

The figures per group (``summarize``): median |error|, signed median error, Spearman rank
correlation of predicted vs measured, the regret of the configuration ranked first
(its measured time over the best measured, minus one) and that of the best of the TOP_PICKS
ranked first (what timing those few finds); spilling rows are counted apart.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from tfx.analysis.codegen import DEFAULT
from tfx.errors import SourceLocation, TfxError, read_text_file
from tfx.hw.units import format_percent
from tfx.hw.units import format_correlation, format_percent_change

REQUIRED = ("kernel", "measured_ms")
RESOURCE_COLUMNS = ("regs", "spills", "smem_bytes", "local_bytes")
#: Registers one thread may use on every NVIDIA GPU since sm_35 (CUDA C Programming Guide,
#: "Technical Specifications per Compute Capability": maximum number of 32-bit registers per
#: thread, 255); a compiled kernel reports 1..255, so anything else in a CSV is a typo.
MAX_REGS_PER_THREAD = 255
#: The second launch's compiled counts (a split-KV decode's merge launch, bench/h200/
#: measure_accuracy.py's decode.csv): column -> the resource ``analyze`` takes for launch 1.
SECOND_LAUNCH_COLUMNS = {"merge_regs": "regs", "merge_spills": "spills", "merge_smem_bytes": "smem"}
# Columns that describe a row without changing its prediction.
ANNOTATIONS = frozenset({
    "profile", "family", "shape", "split", "seed", "status", "error", "note", "layout",
    "blocks_per_sm", "rel_err", "ms_split", "ms_merge", "min_bytes", "gbps_unique", "tflops", "ms_graph",
})


@dataclass
class MeasuredRow:
    """One measured configuration of one kernel."""

    where: SourceLocation         # the row in its CSV (line of the record, column 1)
    kernel_path: Path
    profile: str | None           # None: the caller's default profile
    measured_ms: float
    params: dict                  # parameter -> int (only the columns given)
    regs: int | None = None
    spills: int | None = None
    smem_bytes: int | None = None
    local_bytes: int | None = None    # LDL + STL bytes a thread of the compiled code
    notes: dict = field(default_factory=dict)
    second_launch: dict = field(default_factory=dict)   # SECOND_LAUNCH_COLUMNS' counts, by resource

    @property
    def family(self) -> str:
        return self.notes.get("family") or self.kernel_path.stem

    @property
    def shape(self) -> str:
        return self.notes.get("shape") or ""

    @property
    def spilling(self) -> bool:
        return bool(self.spills)

    def resources(self, threads: int | None = None) -> dict:
        """The compiled resources as ``analyze(resources=...)`` takes them."""
        out: dict = {}
        if threads is not None:
            out["threads"] = threads
        if self.regs is not None:
            out["regs"] = self.regs
        if self.spills is not None:
            out["spills"] = self.spills
        if self.smem_bytes is not None:
            out["smem"] = self.smem_bytes
        if self.local_bytes is not None:
            out["local_bytes"] = self.local_bytes
        if self.second_launch:
            # the second launch's compiled counts (merge_regs, ...): analyze's later_launches
            out["later_launches"] = {1: dict(self.second_launch)}
        return out

    def label(self, shape_params: Iterable[str] = ()) -> str:
        skip = set(shape_params)
        return " ".join(f"{k}={v}" for k, v in self.params.items() if k not in skip)


def _resolve_kernel(text: str, csv_path: Path, where: SourceLocation) -> Path:
    p = Path(text)
    if p.is_absolute():
        if p.is_file():
            return p
    else:
        candidates = [Path.cwd() / p] + [d / p for d in [csv_path.parent, *csv_path.parent.parents]]
        for c in candidates:
            if c.is_file():
                return c.resolve()
    from tfx.bundled import missing_kernel_notes
    raise TfxError(f"kernel file {text!r} not found (looked in the working directory and beside the CSV "
                   "and its parent folders)", where=where, notes=missing_kernel_notes(text))


def _int_cell(value: str, column: str, where: SourceLocation) -> int:
    try:
        f = float(value)
    except ValueError:
        raise TfxError(f"column {column!r}: {value!r} is not a number", where=where) from None
    if not math.isfinite(f) or f != int(f):
        raise TfxError(f"column {column!r}: {value!r} is not a whole number", where=where)
    return int(f)


def _check_domains(module, params: dict[str, int], at) -> None:
    """Refuse a row whose parameter lies outside its declared domain, at its cell, as
    ``--set`` refuses it (tfx.ir.bind): a measurement of a shape the kernel does not model."""
    from tfx.ir.bind import bind, domain_problem, needs_machine, unset_domain_problem
    if not params:
        return
    kernel = module.kernel(None)
    if needs_machine(kernel, params):
        # a default sized by the machine (units(sm)) needs the row's profile, resolved only when
        # the row is priced: such a row's domains go unchecked (give NUM_SMS and they are checked)
        return
    try:
        env = bind(module, kernel, params)
    except TfxError as err:
        raise TfxError(err.message, where=at(next(iter(params)))) from None
    for name, value in params.items():
        problem = domain_problem(kernel, name, value, env)
        if problem:
            raise TfxError(problem, where=at(name))
    found = unset_domain_problem(module, kernel, params, env)
    if found:
        raise TfxError(found[1], where=at(found[0]))


def read_measurements(path: str | Path, text: str | None = None, all_status: bool = False) -> list[MeasuredRow]:
    """The rows of a measurements CSV (``status`` other than ``ok`` skipped unless ``all_status``).

    Bad input raises one TfxError at ``file:line:col``: a missing column, an unknown column
    with a value, a kernel file that is not there, a parameter the kernel does not have, a
    time that is not a positive number.
    """
    from tfx.lang import parse_file

    path = Path(path)
    name = str(path)
    if text is None:
        text = read_text_file(path, "a measurements CSV")
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise TfxError("empty file: expected a header row with kernel, measured_ms, ...",
                       where=SourceLocation(name, 1, 1)) from None
    header = [h.strip() for h in header]
    for col in REQUIRED:
        if col not in header:
            raise TfxError(f"missing column {col!r} (the header has: {', '.join(header)})",
                           where=SourceLocation(name, 1, 1))
    col_at = {h: i + 1 for i, h in enumerate(header)}
    kernels: dict = {}
    rows: list[MeasuredRow] = []
    for rec in reader:
        line = reader.line_num
        if not rec or all(not c.strip() for c in rec):
            continue
        if len(rec) != len(header):
            raise TfxError(f"{len(rec)} fields, the header has {len(header)}", where=SourceLocation(name, line, 1))
        cells = {h: c.strip() for h, c in zip(header, rec)}

        def at(col):
            return SourceLocation(name, line, col_at[col])
        status = cells.get("status", "ok") or "ok"
        if status != "ok" and not all_status:
            continue
        kpath = _resolve_kernel(cells["kernel"], path, at("kernel"))
        if kpath not in kernels:
            kernels[kpath] = parse_file(kpath)
        module = kernels[kpath]
        params_of = {p.name for p in module.kernel(None).params}
        try:
            ms = float(cells["measured_ms"])
        except ValueError:
            raise TfxError(f"measured_ms {cells['measured_ms']!r} is not a number", where=at("measured_ms")) from None
        if not (ms > 0 and math.isfinite(ms)):
            raise TfxError(f"measured_ms must be a positive time in ms, found {cells['measured_ms']!r}",
                           where=at("measured_ms"))
        params, notes, res = {}, {}, {}
        for h, v in cells.items():
            if h in REQUIRED:
                continue
            if h in params_of:
                if v != "":
                    params[h] = _int_cell(v, h, at(h))
            elif h in RESOURCE_COLUMNS or h in SECOND_LAUNCH_COLUMNS:
                if v != "":
                    res[h] = _int_cell(v, h, at(h))
                    if res[h] < 0:
                        raise TfxError(f"column {h!r} must not be negative, found {v!r}", where=at(h))
                    if h in ("regs", "merge_regs") and not 1 <= res[h] <= MAX_REGS_PER_THREAD:
                        raise TfxError(f"column {h!r} must be 1..{MAX_REGS_PER_THREAD} registers per thread "
                                       f"(the hardware's per-thread maximum), found {v!r}", where=at(h))
            elif h in ANNOTATIONS:
                notes[h] = v
            elif v != "":
                raise TfxError(f"column {h!r} is neither a parameter of {kpath.name} "
                               f"({', '.join(sorted(params_of))}) nor one of {', '.join(RESOURCE_COLUMNS)} "
                               "or the annotations (family, shape, split, status, ...)", where=at(h))
        _check_domains(module, params, at)
        rows.append(MeasuredRow(where=SourceLocation(name, line, 1), kernel_path=kpath,
                                profile=notes.get("profile") or None, measured_ms=ms, params=params,
                                regs=res.get("regs"), spills=res.get("spills"), smem_bytes=res.get("smem_bytes"),
                                local_bytes=res.get("local_bytes"),
                                notes=notes, second_launch={key: res[h] for h, key in SECOND_LAUNCH_COLUMNS.items()
                                                            if h in res}))
    return rows


# ---------------------------------------------------------------------------------- Nsight Compute
NCU_TIME = "gpu__time_duration.sum"
NCU_REGS = "launch__registers_per_thread"
NCU_SMEM = ("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic")


@dataclass
class NcuLaunch:
    """One profiled launch of ``ncu --csv --page raw``."""

    where: SourceLocation
    kernel_name: str
    measured_ms: float
    regs: int | None
    smem_bytes: int | None
    block_size: str = ""
    grid_size: str = ""


def _ncu_number(text: str, unit: str, column: str, where: SourceLocation) -> float:
    try:
        v = float(text.replace(",", ""))
    except ValueError:
        raise TfxError(f"column {column!r}: {text!r} is not a number", where=where) from None
    scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0,
             "s": 1e3, "second": 1e3, "byte": 1, "kbyte": 1e3, "mbyte": 1e6, "kibyte": 1024,
             "register": 1, "": 1}
    unit = unit.split("/")[0].strip().lower()          # byte/block, register/thread
    if unit not in scale:
        raise TfxError(f"column {column!r}: unit {unit!r} is not one tfx reads", where=where)
    return v * scale[unit]


def read_ncu(path: str | Path, text: str | None = None) -> list[NcuLaunch]:
    """Launches of an Nsight Compute raw CSV export: the first row names the metrics, the
    second their units; gpu__time_duration.sum is required, registers per thread and shared
    memory per block (static + dynamic) are read when present."""
    path = Path(path)
    name = str(path)
    if text is None:
        text = read_text_file(path, "an Nsight Compute CSV")
    numbered = [(i, ln) for i, ln in enumerate(text.splitlines(), start=1) if ln.startswith('"')]
    line_of = [i for i, _ in numbered]                   # ncu's own notes (==PROF==) are not CSV
    reader = list(csv.reader([ln for _, ln in numbered]))
    if len(reader) < 2:
        raise TfxError("not an Nsight Compute raw CSV (ncu --csv --page raw): no header and unit rows",
                       where=SourceLocation(name, 1, 1))
    header, units = reader[0], reader[1]
    col = {h: i for i, h in enumerate(header)}
    if NCU_TIME not in col:
        raise TfxError(f"no {NCU_TIME} column: profile with --metrics {NCU_TIME} (or the default set)",
                       where=SourceLocation(name, 1, 1))
    out = []
    for i, rec in enumerate(reader[2:], start=2):
        where = SourceLocation(name, line_of[i], col[NCU_TIME] + 1)
        if len(rec) != len(header):
            raise TfxError(f"{len(rec)} fields, the header has {len(header)}",
                           where=SourceLocation(name, line_of[i], 1))
        ms = _ncu_number(rec[col[NCU_TIME]], units[col[NCU_TIME]], NCU_TIME, where)
        regs = None
        if NCU_REGS in col and rec[col[NCU_REGS]]:
            regs = int(_ncu_number(rec[col[NCU_REGS]], units[col[NCU_REGS]], NCU_REGS, where))
        smem = None
        if all(c in col for c in NCU_SMEM):
            smem = int(sum(_ncu_number(rec[col[c]], units[col[c]], c, where) for c in NCU_SMEM))
        out.append(NcuLaunch(where, rec[col["Kernel Name"]] if "Kernel Name" in col else "", ms, regs, smem,
                             rec[col["Block Size"]] if "Block Size" in col else "",
                             rec[col["Grid Size"]] if "Grid Size" in col else ""))
    return out


# ---------------------------------------------------------------------------------- predictions
def faster_than_roofline(measured, roofline) -> bool:
    """A measured time (any unit, the roofline's) under the roofline: the least time the profile's
    peak rates allow, so a wrong unit, profile or rate, not a model error (tfx validate, tfx open
    --measured); False where nothing was measured."""
    return 0 < measured < roofline


@dataclass
class Compared:
    row: MeasuredRow
    predicted_ms: float
    spilling: bool                # the compiled kernel spills (or, without its count, the estimate does)
    codegen: str | None = DEFAULT   # the code generator priced (Analysis.codegen; None on a tiled profile)
    # the prediction's `l2 write-back` terms (the timing condition's part: Predictor.l2_clear,
    # tfx.analysis.launch_handoff.dirty_write_back_ns); predicted_ms - it is the launch from a clean L2
    write_back_ms: float = 0.0
    # the prediction's `launch` terms: the host's time to launch each kernel (launch.overhead), which a
    # launch inside a CUDA graph does not pay (bench/accuracy.py's graph summary)
    launch_ms: float = 0.0
    # the row's roofline (roofline.ideal_ns): the least time the profile's peak rates allow; a
    # measured time under it says the time's unit, the profile or its rates are wrong, not the
    # model (``faster_than_roofline``)
    roofline_ms: float = 0.0

    @property
    def faster_than_roofline(self) -> bool:
        return faster_than_roofline(self.row.measured_ms, self.roofline_ms)

    @property
    def error(self) -> float:
        """(predicted - measured) / measured: negative when the prediction is too fast."""
        return (self.predicted_ms - self.row.measured_ms) / self.row.measured_ms


class Predictor:
    """Predicts measured rows with ``analyze``, parsing each kernel file and profile once."""

    def __init__(self, default_profile: str | None = "h200_sxm", codegen: str | None = None,
                 default_option: str | None = None, l2_clear: bool = True):
        self.default_profile = default_profile
        self.default_option = default_option   # the option that gave default_profile (validate's --hw)
        self.codegen = codegen        # priced for every row (tfx.analysis.codegen; None: the default)
        # every row timed right after an L2 clear that writes the L2, as triton.testing.do_bench
        # times them (bench/h200/common.py: every campaign under calibration/h200/measured;
        # tfx.analysis.launch_handoff.L2_CLEAR_CONDITION); False: a clean L2 (ncu's flush)
        self.l2_clear = l2_clear
        self._modules: dict = {}
        self._profiles: dict = {}

    def module(self, path: Path):
        from tfx.lang import parse_file
        if path not in self._modules:
            self._modules[path] = parse_file(path)
        return self._modules[path]

    def profile(self, name: str | None, where=None):
        from tfx.hw import load_profile
        option = None if name else self.default_option
        name = name or self.default_profile
        if name is None:
            raise TfxError("no profile column and no --hw: which hardware was this measured on?", where=where)
        if name not in self._profiles:
            try:
                self._profiles[name] = load_profile(name)
            except TfxError as err:
                if err.where is None and option is not None:   # an unknown --hw: the option, the row a note
                    raise TfxError(err.message, where=option,
                                   notes=err.notes + ((f"the profile of row {where}",) if where else ())) from None
                if err.where is None:        # an unknown name: the row that gave it
                    raise TfxError(err.message, where=where, notes=err.notes) from None
                # a fault inside the profile's file keeps its file:key; the row is a note
                raise TfxError(err.message, where=err.where, source_line=err.source_line,
                               notes=err.notes + ((f"the profile of row {where}",) if where else ())) from None
        return self._profiles[name]

    def analysis(self, row: MeasuredRow, use_measured: bool = True):
        from tfx.analysis.analyze import analyze
        module = self.module(row.kernel_path)
        profile = self.profile(row.profile, row.where)
        res = row.resources() if use_measured else {}
        try:
            return analyze(module, None, profile, row.params, resources=res or None, check=False,
                           codegen=self.codegen, l2_clear=self.l2_clear)
        except TfxError as err:
            raise TfxError(f"{row.kernel_path.name}: {err.message}", where=row.where) from None

    def compare(self, rows: Iterable[MeasuredRow], use_measured: bool = True) -> list[Compared]:
        out = []
        for r in rows:
            a = self.analysis(r, use_measured)
            spills = r.spills if r.spills is not None else a.metrics.get("occupancy.spilled_registers", 0)
            wb = sum(float(t.ns) for t in a.terms if t.name == "l2 write-back")
            host = sum(float(t.ns) for t in a.terms if t.name == "launch")
            out.append(Compared(r, float(a.metrics["performance.predicted_ns"]) / 1e6, bool(spills), a.codegen,
                                wb / 1e6, host / 1e6, float(a.metrics["roofline.ideal_ns"]) / 1e6))
        return out


# ---------------------------------------------------------------------------------- figures
def ranks(xs: list[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of their positions."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rank correlation (Pearson's on the ranks); None under 3 rows or a constant side."""
    if len(xs) != len(ys) or len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


# The configurations a user times after reading the ranking: the best of the TOP_PICKS ranked first
# against the best measured (``GroupFigures.top_picks_regret``). Over the issue-15 campaigns (8-14
# configurations a shape) the best of three is within 7% of the fastest in every campaign of every
# family on the H200, where the first pick alone misses by up to 39% (README, "How far to trust the
# predicted times").
TOP_PICKS = 3


@dataclass
class GroupFigures:
    """The accuracy of one (family, shape) group."""

    family: str
    shape: str
    n: int
    median_abs_error: float
    median_error: float
    spearman: float | None
    regret: float                 # measured(top-ranked) / min(measured) - 1
    top_picks_regret: float       # min(measured of the TOP_PICKS top-ranked) / min(measured) - 1
    top: Compared
    best: Compared
    n_spilling: int
    spilling_median_abs_error: float | None
    spill_ranked_first_wrongly: bool   # a spilling config is ranked first and a non-spilling one is faster
    # where the top-ranked row spills: the non-spilling row ranked first among those (the pick that skips every
    # spilling one); None where the top does not spill or every row spills
    unspilled_pick: Compared | None = None

    @property
    def unspilled_regret(self) -> float | None:
        """The regret of ``unspilled_pick`` (its measured time over the best measured - 1); None without one."""
        if self.unspilled_pick is None:
            return None
        return self.unspilled_pick.row.measured_ms / self.best.row.measured_ms - 1

    def to_json(self) -> dict:
        return {"family": self.family, "shape": self.shape, "rows": self.n,
                "median_abs_error": self.median_abs_error, "median_error": self.median_error,
                "spearman": self.spearman, "regret": self.regret, "top_picks_regret": self.top_picks_regret,
                "top_ranked": {"params": self.top.row.params, "measured_ms": self.top.row.measured_ms,
                               "predicted_ms": self.top.predicted_ms, "where": str(self.top.row.where)},
                "best_measured": {"params": self.best.row.params, "measured_ms": self.best.row.measured_ms,
                                  "predicted_ms": self.best.predicted_ms, "where": str(self.best.row.where)},
                "spilling_rows": self.n_spilling, "spilling_median_abs_error": self.spilling_median_abs_error,
                "spilling_ranked_first_wrongly": self.spill_ranked_first_wrongly,
                "unspilled_pick": None if self.unspilled_pick is None else {
                    "params": self.unspilled_pick.row.params, "measured_ms": self.unspilled_pick.row.measured_ms,
                    "predicted_ms": self.unspilled_pick.predicted_ms, "regret": self.unspilled_regret}}


def figures(family: str, shape: str, rows: list[Compared]) -> GroupFigures:
    errs = [c.error for c in rows]
    ranked = sorted(rows, key=lambda c: c.predicted_ms)     # stable: the first of tied predictions ranks first
    top, picks = ranked[0], ranked[:TOP_PICKS]
    best = min(rows, key=lambda c: c.row.measured_ms)
    spill = [c for c in rows if c.spilling]
    clean = [c for c in rows if not c.spilling]
    wrong = top.spilling and bool(clean) and min(c.row.measured_ms for c in clean) < top.row.measured_ms
    return GroupFigures(
        family=family, shape=shape, n=len(rows),
        median_abs_error=statistics.median(abs(e) for e in errs), median_error=statistics.median(errs),
        spearman=spearman([c.predicted_ms for c in rows], [c.row.measured_ms for c in rows]),
        regret=top.row.measured_ms / best.row.measured_ms - 1,
        top_picks_regret=min(c.row.measured_ms for c in picks) / best.row.measured_ms - 1,
        top=top, best=best, n_spilling=len(spill),
        spilling_median_abs_error=statistics.median(abs(c.error) for c in spill) if spill else None,
        spill_ranked_first_wrongly=wrong,
        unspilled_pick=next((c for c in ranked if not c.spilling), None) if top.spilling else None)


def group_key(row: MeasuredRow, shape_params: Iterable[str] | None = None) -> tuple[str, str]:
    """(family, shape): the annotations when given, else the kernel's name and its
    problem-size parameters (those that size its input and output tensors)."""
    if row.notes.get("shape"):
        return row.family, row.shape
    names = shape_params if shape_params is not None else ()
    return row.family, " ".join(f"{k}={row.params[k]}" for k in names if k in row.params)


def shape_parameters(module) -> list[str]:
    """The kernel's problem-size parameters (``Kernel.shape_parameters``), in declaration order."""
    kernel = module.kernel(None)
    names = kernel.shape_parameters()
    return [p.name for p in kernel.params if p.name in names]


def summarize(compared: list[Compared], predictor: Predictor | None = None) -> list[GroupFigures]:
    """Figures per (family, shape), in first-seen order."""
    groups: dict = {}
    shape_of: dict = {}
    for c in compared:
        sp = None
        if not c.row.notes.get("shape"):
            if c.row.kernel_path not in shape_of:
                from tfx.lang import parse_file
                mod = predictor.module(c.row.kernel_path) if predictor else parse_file(c.row.kernel_path)
                shape_of[c.row.kernel_path] = shape_parameters(mod)
            sp = shape_of[c.row.kernel_path]
        groups.setdefault(group_key(c.row, sp), []).append(c)
    return [figures(f, s, rows) for (f, s), rows in groups.items()]


def overall(figs: list[GroupFigures]) -> dict:
    """Medians over groups of one family (or all): median |error| over rows is not kept per
    group, so the family line is the median of the groups' medians."""
    if not figs:
        return {}
    sp = [g.spearman for g in figs if g.spearman is not None]
    return {"groups": len(figs), "rows": sum(g.n for g in figs),
            "median_abs_error": statistics.median(g.median_abs_error for g in figs),
            "median_error": statistics.median(g.median_error for g in figs),
            "min_spearman": min(sp) if sp else None, "max_regret": max(g.regret for g in figs),
            "max_top_picks_regret": max(g.top_picks_regret for g in figs),
            "spilling_first_wrongly": sum(g.spill_ranked_first_wrongly for g in figs)}


def format_table(figs: list[GroupFigures], width: int | None = None) -> str:
    """The per-group table every text surface prints. Where its rows (2 + 18 + 1 + 26 + 1 + 67 =
    115 columns) pass ``width`` (an 80-column terminal), each group's family and shape go on a
    line of their own above its figures, which keep their columns (2 + 2 + 67 = 71). ``top3``:
    the best of the TOP_PICKS ranked first against the best measured (``top_picks_regret``)."""
    numbers = (f"{'rows':>4} {'med|err|':>8} {'med err':>8} {'spearman':>8} "
               f"{'regret':>7} {'top' + str(TOP_PICKS):>6} {'spill':>5} {'spill med|err|':>14}")
    narrow = width is not None and 2 + 18 + 1 + 26 + 1 + len(numbers) > width
    lines = (["  family shape", f"    {numbers}"] if narrow else
             [f"  {'family':<18} {'shape':<26} " + numbers])
    for g in figs:
        sp = format_correlation(g.spearman) if g.spearman is not None else "-"
        # one decimal of a percent, as every other column (was 0 decimals: '11%' beside '4.7%')
        smed = format_percent(g.spilling_median_abs_error) if g.spilling_median_abs_error is not None else "-"
        flag = " SPILL FIRST" if g.spill_ranked_first_wrongly else ""
        figures = (f"{g.n:>4} {format_percent(g.median_abs_error):>8} "
                   f"{format_percent_change(g.median_error):>8} {sp:>8} {format_percent(g.regret):>7} "
                   f"{format_percent(g.top_picks_regret):>6} {g.n_spilling:>5} "
                   f"{smed:>14}{flag}")
        lines += ([f"  {g.family} {g.shape}", f"    {figures}"] if narrow else
                  [f"  {g.family:<18} {g.shape[:26]:<26} " + figures])
    return "\n".join(lines)
