"""The model screen's headless core: no Textual here.

``Knobs`` is the whole state an edit changes (model, profile, workload,
parallelism); ``Job`` is one request (latency, suggest or hw-sweep) with a
generation number; ``run_job`` is the top-level, picklable worker function the
app sends to a ``ProcessPoolExecutor``; it never raises for bad input and
returns an ``Outcome`` with the result or the TfxError's first line.

Everything the tabs show is derived from a ``LatencyResult`` (and the suggest
and sweep results) by the functions below, so the tabs and the tests agree on
every number: the device layout diagram, the memory bars, the stage rows, the
comparison table and the one-line diff.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from tfx.errors import TfxError
from tfx.model.schema import DTYPE_BYTES
from tfx.hw.units import format_cost, format_percent, format_plain, format_scale, format_speedup, format_tokens_per_s
from tfx.present import formatting as fmt
from tfx.model.system import CP_RINGS, GPU_PLACES, KV_SHARDS, MODES, TILED_PLACES, Parallelism  # noqa: F401

# ---------------------------------------------------------------- knobs

# The knobs' choices are the model's own (tfx.model.system), not a second list.
DTYPES = tuple(DTYPE_BYTES)


@dataclass(frozen=True)
class Knobs:
    """What the knobs panel edits; plain data, so it pickles to a worker process."""

    model: str = "llama3.1-8b"
    hw: str = "h200_nvl8"
    mode: str = "decode"
    batch: int = 1
    ctx: int = 8192
    tp: int = 1
    cp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    kv_shard: str = "heads"
    cp_ring: str = "kv"
    tp_place: str = "auto"
    cp_place: str = "auto"
    weight_dtype: str = "bf16"
    act_dtype: str = "bf16"
    kv_dtype: str = "bf16"

    def workload(self):
        from tfx.model.system import Workload
        return Workload(self.mode, self.ctx, self.batch, self.weight_dtype, self.act_dtype, self.kv_dtype)

    def parallelism(self):
        from tfx.model.system import Parallelism
        return Parallelism(self.tp, self.cp, self.pp, self.dp, self.ep, self.kv_shard, self.cp_ring,
                           self.tp_place, self.cp_place)

    def with_parallelism(self, par) -> "Knobs":
        return replace(self, **{f: getattr(par, f) for f in PAR_FIELDS})

    def workload_key(self) -> tuple:
        """What a suggest or a sweep depends on (not the parallelism)."""
        return (self.model, self.hw, self.mode, self.batch, self.ctx, self.weight_dtype,
                self.act_dtype, self.kv_dtype)

    def short_label(self) -> str:
        """``tp8 cp4`` (degrees above 1 and non-default options), ``tp1`` when all are 1."""
        parts = [f"{f}{getattr(self, f)}" for f in ("tp", "cp", "pp", "dp", "ep") if getattr(self, f) > 1]
        if self.kv_shard != "heads":
            parts.append(f"kv={self.kv_shard}")
        if self.cp > 1 and self.cp_ring != "kv":
            parts.append(f"ring={self.cp_ring}")
        for f in ("tp_place", "cp_place"):
            if getattr(self, f) != "auto":
                parts.append(f"{f[:2]}@{getattr(self, f)}")
        return " ".join(parts) or "tp1"

    def to_json(self) -> dict:
        return asdict(self)


def make_knobs(model: str, hw: str = "h200_nvl8", mode: str = "decode", batch: int = 1, ctx: int = 8192,
               config: str | None = None) -> Knobs:
    """The starting knobs of ``tfx open --model``; ``config`` is ``tp=8,cp=2`` (Parallelism.parse)."""
    k = Knobs(model=model, hw=hw, mode=mode, batch=batch, ctx=ctx)
    if config:
        from tfx.model.system import Parallelism
        k = k.with_parallelism(Parallelism.parse(config))
    return k


def short_config(label: str) -> str:
    """``tp8 cp4 pp1 dp1 ep1 ring=kv`` -> ``tp8 cp4``: a Parallelism label without its degrees
    of 1 and the default ring (as ``Knobs.short_label``)."""
    parts = [p for p in label.split() if p not in ("tp1", "cp1", "pp1", "dp1", "ep1", "ring=kv")]
    return " ".join(parts) or "tp1"


PAR_FIELDS = tuple(f.name for f in fields(Parallelism))
WORKLOAD_FIELDS = ("model", "hw", "mode", "batch", "ctx", "weight_dtype", "act_dtype", "kv_dtype")


@dataclass(frozen=True)
class KnobSpec:
    field: str
    label: str
    kind: str                 # int, enum, model, hw
    choices: tuple = ()


#: The knobs panel, top to bottom.
KNOBS: tuple[KnobSpec, ...] = (
    KnobSpec("model", "model", "model"),
    KnobSpec("hw", "hw", "hw"),
    KnobSpec("mode", "mode", "enum", MODES),
    KnobSpec("batch", "batch", "int"),
    KnobSpec("ctx", "ctx", "int"),
    KnobSpec("tp", "TP", "int"),
    KnobSpec("cp", "CP", "int"),
    KnobSpec("pp", "PP", "int"),
    KnobSpec("dp", "DP", "int"),
    KnobSpec("ep", "EP", "int"),
    KnobSpec("kv_shard", "kv shard", "enum", KV_SHARDS),
    KnobSpec("cp_ring", "cp ring", "enum", CP_RINGS),
    KnobSpec("tp_place", "tp place", "enum", tuple(dict.fromkeys(GPU_PLACES + TILED_PLACES))),
    KnobSpec("cp_place", "cp place", "enum", tuple(dict.fromkeys(GPU_PLACES + TILED_PLACES))),
    KnobSpec("weight_dtype", "w dtype", "enum", DTYPES),
    KnobSpec("act_dtype", "a dtype", "enum", DTYPES),
    KnobSpec("kv_dtype", "kv dtype", "enum", DTYPES),
)
SPEC = {k.field: k for k in KNOBS}


def _choices(spec: KnobSpec, knobs: Knobs) -> tuple:
    if spec.kind == "model":
        from tfx.model.presets import list_models
        return tuple(list_models())
    if spec.kind == "hw":
        from tfx.hw.profile import list_profiles
        return tuple(list_profiles())
    if spec.field in ("tp_place", "cp_place"):
        return TILED_PLACES if knobs.hw == "sip" else GPU_PLACES
    return spec.choices


def choices(field: str, knobs: Knobs) -> tuple:
    """The values an enum-like knob cycles through (``()`` for integers)."""
    return _choices(SPEC[field], knobs)


def nudge(knobs: Knobs, field: str, factor: float) -> Knobs:
    """Integers times ``factor`` (x2 or /2, at least 1); other knobs step to the next
    (``factor > 1``) or previous value of their list."""
    spec = SPEC[field]
    cur = getattr(knobs, field)
    if spec.kind == "int":
        new = max(1, int(cur * factor)) if factor >= 1 else max(1, int(cur // round(1 / factor)))
        return replace(knobs, **{field: new})
    opts = _choices(spec, knobs)
    if not opts:
        return knobs
    i = opts.index(cur) if cur in opts else -1
    step = 1 if factor > 1 else -1
    return replace(knobs, **{field: opts[(i + step) % len(opts)]})


def parse_value(knobs: Knobs, field: str, text: str) -> Knobs:
    """A typed value: integers (``8192``, ``8k`` = 8192, ``x2``, ``/2``) or a name of the knob's list."""
    spec = SPEC[field]
    text = text.strip()
    if not text:
        raise TfxError(f"{spec.label}: empty value")
    if spec.kind == "int":
        cur = getattr(knobs, field)
        t = text.lower().replace("_", "").replace(",", "")
        try:
            if t.startswith(("x", "*")):
                v = cur * float(t[1:])
            elif t.startswith("/"):
                v = cur / float(t[1:])
            elif t.endswith("k"):
                v = float(t[:-1]) * 1024
            elif t.endswith("m"):
                v = float(t[:-1]) * 1024 * 1024
            else:
                v = float(t)
        except ValueError:
            raise TfxError(f"{spec.label}={text}: expected an integer (8192, 8k, x2, /2)") from None
        if not math.isfinite(v) or v != int(v) or v < 1:
            raise TfxError(f"{spec.label}={text}: expected a whole number >= 1")
        return replace(knobs, **{field: int(v)})
    opts = _choices(spec, knobs)
    if spec.kind == "model" and (text.endswith(".toml") or "/" in text):
        return replace(knobs, model=text)          # a preset file given by path
    if spec.kind == "hw" and text.endswith(".toml"):
        return replace(knobs, hw=text)
    if text not in opts:
        import difflib
        near = difflib.get_close_matches(text, opts, n=1)
        hint = f"; did you mean {near[0]}?" if near else f" (one of {', '.join(opts[:12])}"\
            f"{', ...' if len(opts) > 12 else ''})"
        raise TfxError(f"{spec.label}={text}: unknown{hint}")
    return replace(knobs, **{field: text})


def changed(old: Knobs, new: Knobs) -> list[str]:
    """``["tp 1 -> 2"]``: the knobs that differ, in panel order."""
    return [f"{k.label} {getattr(old, k.field)} -> {getattr(new, k.field)}"
            for k in KNOBS if getattr(old, k.field) != getattr(new, k.field)]


# ---------------------------------------------------------------- jobs

@dataclass(frozen=True)
class Job:
    """One request: plain data only, so it pickles to a worker process."""

    kind: str                  # latency, suggest, sweep
    generation: int
    knobs: Knobs
    scope: str = "both"        # suggest: attn, ffn, both
    max_devices: int = 64      # suggest, sweep


@dataclass
class Outcome:
    kind: str
    generation: int
    knobs: Knobs
    result: Any = None         # LatencyResult, SuggestResult or HwSweepResult
    error: str | None = None   # the TfxError's first line
    scope: str = "both"
    max_devices: int = 64
    layout: list = field(default_factory=list)   # latency: the physical layout, as text lines
    memory_notes: list = field(default_factory=list)   # latency: how weights and KV are counted


@functools.lru_cache(maxsize=8)
def _system(hw: str):
    """The loaded system of a profile name (kept: every keystroke re-prices on it)."""
    from tfx.model.system import load_system
    return load_system(hw)


@functools.lru_cache(maxsize=16)
def _model(name: str):
    from tfx.model.presets import load_model
    return load_model(name)


def warm(knobs: Knobs | None = None) -> bool:
    """Run in a fresh worker process so the first real job finds its imports and kernel prices."""
    import tfx.model  # noqa: F401
    if knobs is not None:
        run_job(Job("latency", 0, knobs))
    return True


def run_job(job: Job) -> Outcome:
    """The worker: load the preset and the system, run the request; never raises for bad input."""
    out = Outcome(job.kind, job.generation, job.knobs, scope=job.scope, max_devices=job.max_devices)
    try:
        k = job.knobs
        model, system, wl = _model(k.model), _system(k.hw), k.workload()
        if job.kind == "latency":
            from tfx.model.latency import latency
            out.result = latency(model, system, wl, k.parallelism())
            out.layout = layout_lines(model, k, system, out.result.devices)
            out.memory_notes = memory_notes(model, k, out.result)
        elif job.kind == "suggest":
            from tfx.model.search import suggest
            out.result = suggest(model, system, wl, job.max_devices, job.scope)
        elif job.kind == "sweep":
            from tfx.model.search import hw_sweep
            out.result = hw_sweep(model, system, wl, job.max_devices)
        elif job.kind == "serve":
            out.result = serve_both(model, system, k)
        else:
            raise TfxError(f"unknown job kind {job.kind!r}")
    except TfxError as err:
        out.error = err.headline()
    except (ArithmeticError, ValueError, KeyError, TypeError, IndexError) as err:  # a model bug, not input
        out.error = f"error: {job.kind} failed: {type(err).__name__}: {err}"
    return out


# ---------------------------------------------------------------- formatting

def mem_total(result) -> float:
    return float(sum(result.memory.values()))


def diff_line(old, new, old_knobs: Knobs | None = None, new_knobs: Knobs | None = None) -> str:
    """``tp 1 -> 2: latency 40.31 ms -> 21.59 ms (-46.4%); mem/dev 133.92 GB -> 67.21 GB (-49.8%)``."""
    if old is None or new is None:
        return ""
    parts = []
    a, b = old.latency_ns, new.latency_ns
    if a != b:
        parts.append(f"latency {fmt.ns(a)} -> {fmt.ns(b)}{fmt.pct_change(a, b)}")
    ma, mb = mem_total(old), mem_total(new)
    if ma != mb:
        parts.append(f"mem/dev {fmt.nbytes(ma)} -> {fmt.nbytes(mb)}{fmt.pct_change(ma, mb)}")
    if old.devices != new.devices:
        parts.append(f"devices {old.devices} -> {new.devices}")
    if old.fits != new.fits:
        parts.append("now fits" if new.fits else "no longer fits")
    what = ", ".join(changed(old_knobs, new_knobs)) if old_knobs and new_knobs else ""
    body = "; ".join(parts) if parts else "nothing moved"
    return f"{what}: {body}" if what else body


def status_line(k: Knobs, r) -> str:
    """The top line (Rich markup)."""
    if r is None:
        return f"[b]{k.model}[/b] on [b]{k.hw}[/b]: no result yet"
    fit = "fits" if r.fits else "[red]DOES NOT FIT[/red]"
    return (f"[b]{r.model}[/b] on [b]{r.hw}[/b]  [b]{fmt.ns(r.latency_ns)}[/b]  "
            f"{short_config(r.parallelism.label())} = {r.devices} dev  {fmt.nbytes(mem_total(r))}/dev {fit}  "
            f"[dim]runtime {r.workload.runtime}[/dim]")


# ---------------------------------------------------------------- serve

#: The request mix the Serve tab prices (tfx model serve changes it from the command line).
SERVE_MIX = (2048, 256, 64)          # input tokens, output tokens, concurrency


def serve_both(model, system, k: "Knobs") -> tuple:
    """(chunked, disaggregated) ServeResults for the knobs' TP/CP/EP, one instance each."""
    from tfx.model.serve import RequestMix, serve
    par = replace(k.parallelism(), dp=1, pp=1)
    mix = RequestMix(*SERVE_MIX)
    return tuple(serve(model, system, mix, par, k.workload(), mode) for mode in ("chunked", "disaggregated"))


def serve_lines(results) -> list[str]:
    """The Serve tab's text (Rich markup): one block per serving mode."""
    inp, outp, conc = SERVE_MIX
    # counts with separators, as tfx model serve writes the same mix (input 2,048)
    lines = [f"request mix: input {fmt.count(inp)}, output {fmt.count(outp)}, concurrency {fmt.count(conc)}; "
             f"runtime {results[0].runtime}", ""]
    for r in results:
        lines += [f"[b]{r.mode}[/b]  {short_config(r.parallelism)} ({r.devices} GPU)"
                  + ("" if r.fits else "  [red]DOES NOT FIT[/red]"),
                  f"  {format_tokens_per_s(r.output_tokens_per_s_per_gpu)} output tokens/s per GPU   "
                  f"TTFT {fmt.ns(r.ttft_ns)}   TPOT {fmt.ns(r.tpot_ns)}   decode batch {r.batch}", ""]
    lines.append("[dim]tfx model serve --suggest --ttft-ms X --tpot-ms Y searches TP, mode, chunk and "
                 "concurrency under an SLA[/dim]")
    return lines


# ---------------------------------------------------------------- memory

#: (key, label, bar character) in stacking order; the characters tell the parts
#: apart without colour.
MEMORY_PARTS = (("weights", "weights", "█"), ("kv_cache", "KV cache", "▓"),
                ("activations", "activations", "▒"), ("workspace", "workspace", "░"))
EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(fraction: float, width: int, char: str = "█") -> str:
    """A bar of ``fraction`` x ``width`` cells; full blocks use ``char``, the last cell an eighth block."""
    fraction = max(0.0, min(float(fraction), 1.0))
    eighths = int(round(fraction * width * 8))
    full, rest = divmod(eighths, 8)
    out = char * full
    if rest and full < width:
        out += EIGHTHS[rest] if char == "█" else char
    return out


@dataclass
class MemoryRow:
    key: str
    label: str
    bytes: float
    share: float              # of the capacity
    bar: str


def memory_rows(r, width: int = 30) -> list[MemoryRow]:
    """One row per part of memory per device, its bar scaled to the device's capacity."""
    cap = float(r.capacity)
    rows = []
    for key, label, char in MEMORY_PARTS:
        v = float(r.memory.get(key, 0.0))
        rows.append(MemoryRow(key, label, v, v / cap if cap else math.nan, bar(v / cap if cap else 0, width)))
    return rows


def stacked_bar(r, width: int = 50) -> list[tuple[str, str]]:
    """(text, part key) segments of one bar: the parts stacked, then free space to the capacity
    (``·``); past the capacity the bar is scaled to the total and ``|`` marks the capacity."""
    cap = float(r.capacity)
    total = mem_total(r)
    scale = max(cap, total) or 1.0
    segs: list[tuple[str, str]] = []
    used = 0
    acc = 0.0
    for key, _label, char in MEMORY_PARTS:
        acc += float(r.memory.get(key, 0.0))
        end = int(round(acc / scale * width))
        if end > used:
            segs.append((char * (end - used), key))
            used = end
    cap_at = int(round(cap / scale * width))
    if used < cap_at:
        segs.append(("·" * (cap_at - used), "free"))
        used = cap_at
    if total > cap:       # insert the capacity mark
        text = "".join(s for s, _ in segs)
        keys = [k for s, k in segs for _ in s]
        i = min(max(cap_at, 0), len(text) - 1)
        text = text[:i] + "|" + text[i + 1:]
        keys[i] = "capacity"
        segs = []
        for ch, key in zip(text, keys):
            if segs and segs[-1][1] == key:
                segs[-1] = (segs[-1][0] + ch, key)
            else:
                segs.append((ch, key))
    return segs


def memory_notes(model, k: Knobs, r) -> list[str]:
    """The products behind the weights and the KV cache per device, where they are simple
    (dense layers, no MLA): what docs/model-latency.md "Memory per device" says, with numbers."""
    from tfx.model.presets import dtype_bytes, param_counts
    par = k.parallelism()
    out = []
    tp = 1 if par.tp_place in ("cube", "pe") else par.tp   # a group inside one SIP shares its memory
    layers = -(-model.num_layers // par.pp)
    wb = float(dtype_bytes(k.weight_dtype))
    kvb = float(dtype_bytes(k.kv_dtype))
    d, h, G = model.head_dim, model.hidden_size, model.num_kv_heads
    g_r = max(G // tp, 1)
    if model.mla is None and not model.is_moe:
        hq_r = -(-model.num_attention_heads // tp)
        attn = 2 * h * hq_r * d + 2 * h * g_r * d
        ffn = model.ffn_matrices * h * (-(-model.intermediate_size // tp))
        c = param_counts(model)
        emb = c.embedding + c.position_embedding
        ends = (max(emb, c.lm_head) if par.pp > 1 else emb + c.lm_head) // tp
        rb = wb if wb >= 2 else 2.0
        rest = r.memory["weights"] - layers * (attn + ffn) * wb - ends * rb
        out.append(f"weights: {layers} layers x ({fmt.count(attn)} attention + {fmt.count(ffn)} FFN params per rank) x {format_plain(wb)} B"
                   f" + {fmt.count(ends)} embedding/lm head params x {format_plain(rb)} B + norms {fmt.nbytes(rest)}")
    if model.mla is None and model.sliding_window is None:
        b = -(-k.batch // par.dp)
        toks = -(-k.ctx // par.cp)
        rep = ""
        if par.kv_shard == "seq" and tp > G:
            toks = toks / (tp // G)
            rep = f" (ctx/cp split over {tp // G} replicas)"
        kv = b * toks * layers * 2 * g_r * d * kvb
        out.append(f"KV cache: {fmt.count(b)} seq x {fmt.count(toks)} tokens{rep} x {layers} layers x 2 (K, V) x {fmt.counted(g_r, 'kv head')}"
                   f" x {d} x {format_plain(kvb)} B = {fmt.format_exact_bytes(kv)} = {fmt.nbytes(kv)}")
    return out


# ---------------------------------------------------------------- stages

STAGE_COLUMNS = ("stage", "total", "share", "bound", "compute", "memory", "comm", "launch", "block")


def stage_rows(r) -> list[list[str]]:
    """The stages that cost something: name, total, share of the step, bound, compute,
    memory, comm, launch, block (the CLI's ``tfx model latency`` table; what matters
    most first, so an 80-column screen shows it without scrolling)."""
    rows = []
    for s in r.stages:
        if s.total_ns == 0:
            continue
        share = s.total_ns / r.latency_ns * 100 if r.latency_ns else 0.0
        rows.append([s.name, fmt.ns(s.total_ns), fmt.percent(share), s.bound, _ns_or_dash(s.compute_ns),
                     _ns_or_dash(s.memory_ns), _ns_or_dash(s.comm_ns), _ns_or_dash(s.launch_ns),
                     "attn" if s.block == "attention" else s.block])
    return rows


def _ns_or_dash(ns: float) -> str:
    return fmt.ns(ns) if ns else "-"


def stage_by_name(r, name: str):
    return next((s for s in r.stages if s.name == name), None)


# ---------------------------------------------------------------- compare

@dataclass
class Saved:
    name: str
    knobs: Knobs
    data: dict                 # LatencyResult.to_json(), "label" set to the name


def saved_from(name: str, knobs: Knobs, r) -> Saved:
    data = r.to_json()
    data["label"] = name
    return Saved(name, knobs, data)


def compare_table(saved: list[Saved]) -> tuple[list[str], list[tuple[str, list[str], list[bool]]]]:
    """Columns and rows ``(name, cells, best flags)`` of ``compare_results`` over the saved
    configurations, with model, workload and parallelism rows on top."""
    from tfx.model.compare import compare_results
    if not saved:
        return ["row"], []
    cmp = compare_results([s.data for s in saved])
    rows: list[tuple[str, list[str], list[bool]]] = []
    none = [False] * len(saved)
    rows.append(("model", [s.data["model"] for s in saved], none))
    rows.append(("workload", [f"{s.knobs.mode} b{s.knobs.batch} ctx {s.knobs.ctx}" for s in saved], none))
    rows.append(("config", [s.knobs.short_label() for s in saved], none))
    for row in cmp["rows"]:
        rows.append((row["name"], [fmt.row_value(v, row["unit"]) for v in row["values"]], list(row["best"])))
    return ["", *cmp["columns"]], rows


# ---------------------------------------------------------------- suggest

SUGGEST_COLUMNS = ("configuration", "dev", "latency", "tok/s/dev", "eff", "memory")


def suggest_rows(s) -> list[list[str]]:
    """The Pareto frontier, fastest first: configuration, devices, latency of the scope,
    tokens/s per device and that as a share of the frontier's best (``eff``), memory/device."""
    best = max((c.tokens_per_s_per_device for c in s.pareto), default=0.0)
    return [[short_config(c.parallelism.label()), str(c.devices), fmt.ns(c.latency_ns), format_tokens_per_s(c.tokens_per_s_per_device),
             # a whole percent: one decimal (42.7%) widens the column past 80 cells and cuts the memory unit
             format_percent(c.tokens_per_s_per_device / best, 0) if best else "-", fmt.nbytes(c.memory_bytes)]
            for c in s.pareto]


SCOPE_NAMES = {"attn": "attention", "ffn": "FFN", "both": "attention + FFN"}


def suggest_caption(s) -> str:
    fastest = short_config(s.fastest.parallelism.label()) if s.fastest else "none fits"
    return (f"{SCOPE_NAMES.get(s.scope, s.scope)} on <= {s.max_devices} devices: {s.evaluated} configurations, "
            f"{s.fitting} fit {fmt.nbytes(s.capacity)}/device; fastest {fastest}")


# ---------------------------------------------------------------- hardware sweep

HW_NAMES = {"mem_bandwidth": "HBM bandwidth", "mem_capacity": "memory capacity", "compute": "peak compute",
            "intra_link": "intra-node link", "inter_link": "inter-node link"}
HW_SHORT = {"mem_bandwidth": "bw", "mem_capacity": "cap", "compute": "flops", "intra_link": "intra",
            "inter_link": "inter"}


def sweep_ranking_rows(h) -> list[list[str]]:
    return [[HW_NAMES.get(r["knob"], r["knob"]), format_speedup(r['speedup']) if math.isfinite(r["speedup"]) else "-",
             fmt.ns(r["latency_ns"]) if math.isfinite(r["latency_ns"]) else "no fit",
             short_config(r["config"]) if r["config"] else "-"]
            for r in h.ranking]


def sweep_pareto_rows(h) -> list[list[str]]:
    out = []
    for p in h.pareto:
        f = " ".join(f"{HW_SHORT.get(k, k)} {format_scale(v)}" for k, v in p["factors"].items() if v != 1.0) or "base"
        out.append([fmt.ns(p["latency_ns"]), format_cost(p['cost']), str(p["devices"]), short_config(p["config"]), f])
    return out


def sweep_caption(h) -> str:
    b = h.baseline
    base = (f"baseline {fmt.ns(b['latency_ns'])} (co-design approximation) with {short_config(b['config'])} on {b['devices']} devices"
            if b.get("config") else "nothing fits at the base hardware")
    return (f"{fmt.count(h.configs)} configurations x {fmt.count(h.evaluations // max(h.configs, 1))} hardware points; "
            f"{base}")


# ---------------------------------------------------------------- layout

@dataclass
class Axis:
    name: str       # TP, CP, DP, PP, EP
    degree: int
    spans: bool     # the axis spans devices (not inside one SIP)


def _share(var: str, size: int, total: int, noun: str, plural: str) -> str:
    """``q heads 8i..8i+7 (8 of 64)``, or ``expert e (1 of 8)`` for one each: the index range as
    an expression, the counts with separators (``(3,584 of 28,672)``)."""
    if size == 1:
        return f"{noun} {var} (1 of {fmt.count(total)})"
    return f"{plural} {size}{var}..{size}{var}+{size - 1} ({fmt.count(size)} of {fmt.count(total)})"


def _n(count: int, noun: str) -> str:
    return fmt.counted(count, noun)


def _rng(start: int, count: int) -> str:
    return f"{start}" if count == 1 else f"{start}..{start + count - 1}"


def _split(total: int, parts: int, i: int) -> tuple[int, int]:
    """Start and size of part ``i`` of ``total`` split in ``parts`` (ceil-sized, the last shorter)."""
    size = -(-total // parts)
    start = min(i * size, total)
    return start, max(0, min(size, total - start))


def rank_coords(par, device: int, system) -> dict[str, int]:
    """Coordinates of ``device`` in the rank order TP, CP, DP, PP (inner to outer)."""
    sub = lambda place: place in ("cube", "pe")
    tp = 1 if sub(par.tp_place) else par.tp
    cp = 1 if sub(par.cp_place) else par.cp
    c = {}
    rest = device
    for name, deg in (("TP", tp), ("CP", cp), ("DP", par.dp), ("PP", par.pp)):
        c[name] = rest % deg
        rest //= deg
    if par.ep > 1:
        if par.ep <= par.tp:
            c["EP"] = c["TP"] // (par.tp // par.ep)
        else:
            c["EP"] = (c["DP"] % (par.ep // par.tp)) * par.tp + c["TP"]
    return c


def layout_lines(model, k: Knobs, system, devices: int, max_nodes: int = 6) -> list[str]:
    """The physical layout as text: nodes x devices with each device's TP/CP/DP/PP/EP
    coordinate, then what each rank of each group holds (heads, FFN columns, vocabulary,
    context, layers, sequences, experts) and the link each group uses."""
    par = k.parallelism()
    tiled = system.kind == "tiled"
    dev_name = "sip" if tiled else "gpu"
    dpn = max(1, system.devices_per_node)
    nodes = -(-devices // dpn)
    sub_tp = par.tp_place in ("cube", "pe")
    sub_cp = par.cp_place in ("cube", "pe")
    lines = [f"{model.name} ({model.attention_kind}, {model.num_layers} layers, {model.num_attention_heads} q heads, "
             f"{model.num_kv_heads} kv heads{', MoE' if model.is_moe else ''}) on {system.name}",
             f"{par.label()}: {fmt.counted(devices, dev_name)} on {fmt.counted(nodes, 'node')} "
             f"of {dpn}; ranks ordered TP, CP, DP, PP (inner to outer)", ""]
    axes = [a for a in (Axis("TP", par.tp, not sub_tp), Axis("CP", par.cp, not sub_cp), Axis("DP", par.dp, True),
                        Axis("PP", par.pp, True), Axis("EP", par.ep, True)) if a.degree > 1 and a.spans]
    width = max(len(f"{dev_name}{devices - 1}"), 3) + 1
    shown = list(range(nodes)) if nodes <= max_nodes else [*range(max_nodes - 1), nodes - 1]
    for n in shown:
        if n == nodes - 1 and nodes > max_nodes:
            lines.append(f"  ... {nodes - max_nodes} more nodes, the same pattern ...")
        first = n * dpn
        devs = list(range(first, min(first + dpn, devices)))
        lines.append(f"node {n:<3}" + "".join(f"{dev_name}{d}".rjust(width) for d in devs))
        coords = [rank_coords(par, d, system) for d in devs]
        for a in axes:
            lines.append(f"  {a.name:<6}" + "".join(str(c[a.name]).rjust(width) for c in coords))
    lines.append("")
    lines += holdings(model, k, system)
    return lines


def _link_of(system, axis: str, par) -> str:
    """Which link the ``axis`` group uses and where, by the model's own rule
    (``System.group_link``)."""
    link, where = system.group_link(par, axis.lower())
    if where in ("pe", "cube"):
        what = "PE-to-PE" if where == "pe" else "die-to-die"
        return (f"inside each SIP at {where} level ({what} {link.name}, "
                f"{fmt.bandwidth(link.bandwidth)})")
    if link is None:
        return "needs a link the profile lacks"
    return f"over {link.name} ({fmt.bandwidth(link.bandwidth)}, {fmt.ns(link.latency_ns)})"


def holdings(model, k: Knobs, system) -> list[str]:
    """What each rank of each parallel group holds."""
    par = k.parallelism()
    out = []
    Hq, G, L = model.num_attention_heads, model.num_kv_heads, model.num_layers
    tp = par.tp
    # TP
    hq = -(-Hq // tp)
    if tp > 1:
        out.append(f"TP {tp} {_link_of(system, 'TP', par)}: rank i holds")
        out.append("  " + _share("i", hq, Hq, "q head", "q heads"))
        if model.mla is not None:
            out.append("  the MLA latent KV cache " + ("split by context over the TP ranks" if par.kv_shard == "seq"
                                                        else "replicated on every TP rank"))
        elif tp <= G:
            g = G // tp
            out.append("  " + _share("i", g, G, "kv head", "kv heads"))
        else:
            rep = tp // G
            if par.kv_shard == "seq":
                out.append(f"  kv head i/{rep} over 1/{rep} of the context ({rep} ranks share a head, "
                           "partial O/m/l reduce-scattered)")
            else:
                out.append(f"  kv head i/{rep}, replicated on {rep} ranks (kv shard = seq splits the context instead)")
        if not model.is_moe:
            width = model.intermediate_size
            w = -(-width // tp)
            out.append("  " + _share("i", w, width, "FFN column", "FFN columns") + " of gate/up, rows of down")
        v = -(-model.vocab_size // tp)
        out.append(f"  vocabulary rows {v}i.. ({fmt.count(v)} of {fmt.count(model.vocab_size)}) of the embedding and lm head")
    else:
        out.append(f"TP 1: every device holds all {Hq} q heads, {G} kv heads, the whole FFN and vocabulary")
    # CP
    if par.cp > 1:
        c = -(-k.ctx // par.cp)
        ring = ("K/V chunks rotate around the ring" if par.cp_ring == "kv" else "Q rotates with O/m/l")
        how = ("partial O/m/l all-gathered" if par.cp_ring == "kv" else "Q with O/m/l passed around the ring") \
            if k.mode == "decode" else ring
        out.append(f"CP {par.cp} {_link_of(system, 'CP', par)}: rank j holds "
                   + _share("j", c, k.ctx, "context token", "context tokens") + f" of the KV cache; {how}")
    # PP
    if par.pp > 1:
        per = -(-L // par.pp)
        parts = []
        for s in range(par.pp):
            a, n = _split(L, par.pp, s)
            parts.append(f"{s}: {_rng(a, n)}")
        tail = "; ".join(parts[:4]) + ("; ..." if par.pp > 4 else "")
        out.append(f"PP {par.pp} {_link_of(system, 'PP', par)}: stage s holds "
                   + _share("s", per, L, "layer", "layers")
                   + f" ({tail}); the embedding on stage 0, the lm head on stage {par.pp - 1}")
    else:
        out.append(f"PP 1: every device runs all {L} layers")
    # DP
    if par.dp > 1:
        b = -(-k.batch // par.dp)
        out.append(f"DP {par.dp}: replica d serves " + _share("d", b, k.batch, "sequence", "sequences")
                   + "; weights replicated")
    # EP
    if model.is_moe:
        E = model.moe.num_experts
        if par.ep > 1:
            e = E // par.ep
            if par.ep > tp:
                inner = f"across {par.ep // tp} DP replicas, tokens moved by all-to-all"
            elif tp // par.ep > 1:
                inner = f"inside the TP group, each expert's width split over tp/ep = {tp // par.ep}"
            else:
                inner = "inside the TP group, whole experts per rank"
            out.append(f"EP {par.ep}: rank e holds " + _share("e", e, E, "routed expert", "routed experts")
                       + f"; {inner}")
        else:
            out.append(f"EP 1: every device holds all {E} routed experts"
                       + (f", each split over TP {tp}" if tp > 1 else ""))
        if model.moe.num_shared_experts:
            out.append(f"  {model.moe.num_shared_experts} shared expert(s) on every rank, split over TP")
        if model.moe.first_dense_layers:
            out.append(f"  layers 0..{model.moe.first_dense_layers - 1} are dense (FFN over TP)")
    # per device summary (a TP or CP group inside one SIP shares that SIP's memory)
    tp_dev = 1 if par.tp_place in ("cube", "pe") else tp
    cp_dev = 1 if par.cp_place in ("cube", "pe") else par.cp
    layers = -(-L // par.pp)
    seqs = -(-k.batch // par.dp)
    dev = [_n(layers, "layer"), _n(-(-Hq // tp_dev), "q head")]
    if model.mla is None:
        dev.append(_n(max(G // tp_dev, 1), "kv head"))
    ctx = -(-k.ctx // cp_dev)
    if par.kv_shard == "seq":
        rep = tp_dev if model.mla is not None else max(tp_dev // G, 1)
        ctx = -(-ctx // rep)
    dev.append(f"{_n(ctx, 'context token')} x {_n(seqs, 'sequence')}")
    if model.is_moe:
        dev.append(_n(model.moe.num_experts // par.ep, "routed expert"))
    out.append("each device: " + ", ".join(dev))
    return out


def to_plain(obj) -> Any:
    """A dataclass result as plain dicts (for JSON export)."""
    if hasattr(obj, "to_json"):
        return obj.to_json()
    if hasattr(obj, "__dataclass_fields__"):
        return {f.name: to_plain(getattr(obj, f.name)) for f in fields(obj)}
    return obj
