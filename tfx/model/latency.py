"""Per-stage latency and memory per device of one forward step, on many devices.

``evaluate(model, workload, system, configs)`` is the vectorized core: every
quantity is a numpy array over parallelism configurations, kernel stages are
priced by :class:`tfx.model.kernels.KernelPricer` (the shipped kernels,
analysed at the sharded shapes, every distinct shape once), collectives by link
formulas. ``latency(...)`` evaluates one configuration and returns a
:class:`LatencyResult` (stages with formulas, memory, to_json()).

The formulas are written out in docs/model-latency.md.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from tfx.errors import TfxError
from tfx.hw.units import format_plain, format_significant, formula_share
from tfx.model.kernels import pricer_for, scale_time
from tfx.model.loading import load_model
from tfx.model.params import layer_matrix_params, param_counts
from tfx.model.schema import ModelConfig, dtype_bytes
from tfx.model.system import Parallelism, System, Workload, load_system, not_meaningful_message, validate
# formula text: times and sizes to three significant digits, bandwidths to four (4.82 ms)
from tfx.present import formatting as fmt

PLACE_CODE = {"auto": 0, "node": 1, "device": 1, "cross": 2, "cube": 3, "pe": 4}

#: ``eager`` GEMMs on GPUs: cuBLAS splits K (a second, reduce kernel) when the output cut
#: into the N x M = 64 x 8 tiles of its skinny kernels gives fewer tiles than SMs. Read off
#: calibration/h200/measured/decode_kernels.csv (Llama 3.1 8B, M = 1 and 8): q, k, v, o and
#: down (64, 16, 16, 64, 64 tiles) run nvjet ``splitK`` kernels + ``splitKreduce``; gate and
#: up (224 tiles) and the lm head (2004) do not: 5 x 32 = 160 reduce kernels per step.
SPLITK_TILE_N, SPLITK_TILE_M = 64, 8
#: Split counts tried (the fastest analysed GEMM + reduce is kept, as for tile shapes).
SPLITK_CANDIDATES = (2, 4, 8, 16)


def splitk_rule(M, N, sms: int) -> np.ndarray:
    """True where an eager (cuBLAS) GEMM of M tokens x N outputs runs split-K (see SPLITK_TILE_N)."""
    M = np.asarray(M, dtype=np.int64)
    N = np.asarray(N, dtype=np.int64)
    return (-(-N // SPLITK_TILE_N)) * (-(-M // SPLITK_TILE_M)) < sms


# --------------------------------------------------------------------------- #
# Configuration arrays
# --------------------------------------------------------------------------- #

@dataclass
class Configs:
    """Parallelism configurations as parallel int arrays (one entry per configuration)."""

    tp: np.ndarray
    cp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    ep: np.ndarray
    kvseq: np.ndarray      # bool: kv_shard == "seq"
    ringq: np.ndarray      # bool: cp_ring == "q"
    tp_place: np.ndarray   # PLACE_CODE
    cp_place: np.ndarray

    def __len__(self) -> int:
        return len(self.tp)

    @staticmethod
    def of(pars: list[Parallelism]) -> "Configs":
        a = lambda f: np.array([f(p) for p in pars], dtype=np.int64)
        return Configs(a(lambda p: p.tp), a(lambda p: p.cp), a(lambda p: p.pp), a(lambda p: p.dp),
                       a(lambda p: p.ep), a(lambda p: p.kv_shard == "seq").astype(bool),
                       a(lambda p: p.cp_ring == "q").astype(bool), a(lambda p: PLACE_CODE[p.tp_place]),
                       a(lambda p: PLACE_CODE[p.cp_place]))

    def take(self, idx) -> "Configs":
        return Configs(*(getattr(self, f)[idx] for f in self.__dataclass_fields__))

    def parallelism(self, i: int, tiled: bool) -> Parallelism:
        inv = {0: "auto", 1: "device" if tiled else "node", 2: "cross", 3: "cube", 4: "pe"}
        return Parallelism(int(self.tp[i]), int(self.cp[i]), int(self.pp[i]), int(self.dp[i]), int(self.ep[i]),
                           "seq" if self.kvseq[i] else "heads", "q" if self.ringq[i] else "kv",
                           inv[int(self.tp_place[i])], inv[int(self.cp_place[i])])

    def devices(self) -> np.ndarray:
        sub = lambda place, d: np.where(place >= 3, 1, d)
        return sub(self.tp_place, self.tp) * sub(self.cp_place, self.cp) * self.pp * self.dp


# --------------------------------------------------------------------------- #
# Stage arrays
# --------------------------------------------------------------------------- #

@dataclass
class VStage:
    """One stage over all configurations, per layer it applies to."""

    name: str
    block: str              # "attention" or "ffn"
    kind: str               # "kernel" or "comm"
    layers: float           # layers the stage runs in (per request, all pipeline stages)
    compute: np.ndarray     # roofline compute term, ns per layer
    memory: np.ndarray      # roofline memory term, ns per layer
    comm: np.ndarray        # link time, ns per layer
    body: np.ndarray        # kernel body time (launch excluded), ns per layer
    launches: np.ndarray    # launches per layer
    formula: object = None  # callable(i) -> str (single-configuration formulas)

    def total(self, launch_ns) -> np.ndarray:
        return (self.body + self.comm + self.launches * launch_ns) * self.layers


def _arr(x, n) -> np.ndarray:
    return np.broadcast_to(np.asarray(x, dtype=float), (n,)).astype(float)


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows in sorted order, index of each row's distinct row): ``np.unique(a, axis=0,
    return_inverse=True)`` through a lexsort (np.unique's structured sort is ~10x slower)."""
    if len(a) == 0:
        return a, np.zeros(0, dtype=np.int64)
    order = np.lexsort(a.T[::-1])
    srt = a[order]
    new = np.ones(len(a), dtype=bool)
    new[1:] = np.any(srt[1:] != srt[:-1], axis=1)
    ids = np.cumsum(new) - 1
    inv = np.empty(len(a), dtype=np.int64)
    inv[order] = ids
    return srt[new], inv


def _price(fn, shapes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, np.ndarray]:
    """Price the rows of ``shapes`` (n x k ints) with ``fn`` (a pricer method), each distinct row once."""
    shapes = np.asarray(shapes, dtype=np.int64)
    uniq, inv = _unique_rows(shapes)
    costs = fn([tuple(int(x) for x in row) for row in uniq])
    ns = np.array([c.ns for c in costs])[inv]
    comp = np.array([c.compute_ns for c in costs])[inv]
    mem = np.array([c.memory_ns for c in costs])[inv]
    return ns, comp, mem, costs, inv


# --------------------------------------------------------------------------- #
# Collectives
# --------------------------------------------------------------------------- #

def allreduce_ns(nbytes, n, bw, lat):
    """Ring all-reduce: 2(n-1)/n x bytes / bw + 2(n-1) x latency (0 when n = 1)."""
    n = np.asarray(n, dtype=float)
    return np.where(n > 1, 2 * (n - 1) / n * nbytes / bw * 1e9 + 2 * (n - 1) * lat, 0.0)


def gather_ns(nbytes, n, bw, lat):
    """All-gather / reduce-scatter / all-to-all: (n-1)/n x bytes / bw + (n-1) x latency."""
    n = np.asarray(n, dtype=float)
    return np.where(n > 1, (n - 1) / n * nbytes / bw * 1e9 + (n - 1) * lat, 0.0)


def sendrecv_ns(nbytes, bw, lat):
    """Point to point: bytes / bw + latency."""
    return nbytes / bw * 1e9 + lat


def _links(system: System, cfg: Configs, intra_scale: float = 1.0, inter_scale: float = 1.0):
    """(bandwidth B/s, latency ns, label) arrays for the TP, CP, EP and PP groups.

    ``intra_scale`` divides the time on intra-node (and on-package) links,
    ``inter_scale`` the time on inter-node links (a bandwidth factor)."""
    n = len(cfg)
    out = {}
    if system.kind == "gpu":
        dpn = system.devices_per_node
        intra, inter = system.intra, system.inter
        big = lambda l, attr, dflt: getattr(l, attr) if l is not None else dflt
        e_dp = np.maximum(cfg.ep // np.maximum(cfg.tp, 1), 1)
        spans = {"tp": (cfg.tp, cfg.tp_place), "cp": (cfg.tp * cfg.cp, cfg.cp_place),
                 "ep": (cfg.tp * cfg.cp * e_dp, np.zeros(n, dtype=np.int64)),
                 "pp": (cfg.tp * cfg.cp * cfg.dp * cfg.pp, np.zeros(n, dtype=np.int64))}
        for axis, (span, place) in spans.items():
            inside = (span <= dpn) & (place != 2)
            bw = np.where(inside, big(intra, "bandwidth", np.inf) * intra_scale,
                          big(inter, "bandwidth", np.inf) * inter_scale)
            lat = np.where(inside, big(intra, "latency_ns", 0.0), big(inter, "latency_ns", 0.0))
            label = np.where(inside, intra.name if intra else "local", inter.name if inter else "none")
            out[axis] = (bw, lat, label)
        return out
    c2c = system.intra
    pe, cube = system.sub_links["pe"], system.sub_links["cube"]
    ppc = system.sub_units["pe_per_cube"]
    for axis, deg, place in (("tp", cfg.tp, cfg.tp_place), ("cp", cfg.cp, cfg.cp_place)):
        stride = np.where((axis == "cp") & (cfg.tp_place == 4), cfg.tp, 1)
        use_pe = (place == 4) & (deg * stride <= ppc)
        use_cube = (place == 3) | ((place == 4) & ~use_pe)
        bw = np.where(use_pe, pe.bandwidth * intra_scale, np.where(use_cube, cube.bandwidth * intra_scale,
                                                                       c2c.bandwidth * inter_scale))
        lat = np.where(use_pe, pe.latency_ns, np.where(use_cube, cube.latency_ns, c2c.latency_ns))
        label = np.where(use_pe, pe.name, np.where(use_cube, cube.name, c2c.name))
        out[axis] = (bw, lat, label)
    for axis in ("ep", "pp"):
        out[axis] = (_arr(c2c.bandwidth * inter_scale, n), _arr(c2c.latency_ns, n), np.full(n, c2c.name))
    return out


# --------------------------------------------------------------------------- #
# The core
# --------------------------------------------------------------------------- #

def layer_kinds(model: ModelConfig) -> list[tuple[str, bool, bool, int]]:
    """[(label, moe, sliding, layer count)], in first-appearance order."""
    seen: Counter = Counter()
    order = []
    for i in range(model.num_layers):
        key = (model.is_moe_layer(i), model.is_sliding_layer(i))
        if key not in seen:
            order.append(key)
        seen[key] += 1
    out = []
    for moe, sliding in order:
        label = ("moe" if moe else "dense") + ("+swa" if sliding else "")
        out.append((label, moe, sliding, seen[(moe, sliding)]))
    return out


@dataclass
class Evaluation:
    """All stages of all configurations; per-config totals and memory."""

    model: ModelConfig
    workload: Workload
    system: System
    configs: Configs
    stages: list
    memory: dict          # name -> bytes array per device
    valid: np.ndarray     # bool

    def stage_totals(self) -> dict:
        return {s.name: s.total(self.system.launch_ns) for s in self.stages}

    def latency(self, block: str | None = None) -> np.ndarray:
        n = len(self.configs)
        tot = np.zeros(n)
        for s in self.stages:
            if block is None or s.block == block:
                tot = tot + s.total(self.system.launch_ns)
        return tot

    def memory_total(self) -> np.ndarray:
        return sum(self.memory.values())

    def fits(self) -> np.ndarray:
        return self.memory_total() <= self.system.capacity


#: Tensor-core dtype of each low-precision activation dtype (both operands that narrow run
#: on that path; a narrower weight with bf16 activations is dequantized in the GEMM's load).
LOW_PRECISION_MMA = {"fp8": "fp8e4m3", "int8": "int8"}


def gemm_path(profile, wl: Workload) -> tuple[str, float]:
    """(the named GEMM path, compute-time ratio vs bf16) for ``wl``'s dtypes on ``profile``.

    * weights and activations both 1 byte (fp8, int8): the profile's fp8/int8 tensor cores,
      compute time x bf16 sustained rate / that sustained rate (peak x the sustained fraction,
      ``Profile.sustained_efficiency``); refused where the profile states none (A100 has
      no fp8 tensor cores): the refusal names the fallback, weight-only fp8 (``--act-dtype bf16``);
    * a narrower weight with 2-byte activations (fp8, int8, int4 weights): weight-only
      (w8a16 / w4a16, the weights dequantized to bf16 as they are loaded, as Marlin-style
      kernels do), bf16 tensor-core time, the weight bytes at their dtype;
    * otherwise bf16.
    """
    wb, ab = (float(dtype_bytes(d)) for d in (wl.weight_dtype, wl.act_dtype))
    if ab <= 1 and wb <= 1:
        mma = LOW_PRECISION_MMA.get(wl.act_dtype)
        try:
            if mma is None:
                raise TfxError(f"no tensor-core path for {wl.act_dtype} activations")
            # sustained rates: fp8 settles at a lower power-limited clock than bf16
            ratio = profile.sustained_flops_per_s("tensor", "bf16") / profile.sustained_flops_per_s("tensor", mma)
        except TfxError:
            why = ""
            if mma:
                entry = next((f for p, f in profile.facts() if p == f"compute.tensor.{mma}"), None)
                why = f" (compute.tensor.{mma}: {entry.unavailable})" if entry is not None and entry.unavailable else ""
            raise TfxError(f"{wl.act_dtype} activations need {mma or wl.act_dtype} tensor cores, which profile "
                           f"{profile.name} does not have{why}",
                           notes=(f"price weight-only {wl.weight_dtype} instead: --act-dtype bf16 (weights "
                                  f"dequantized to bf16 in the GEMM, bf16 tensor-core time)",)) from None
        kernel = " (gemm_fp8.tile analysed at each shape)" if wl.act_dtype == "fp8" and profile.kind == "gpu" else ""
        return f"{wl.weight_dtype} x {wl.act_dtype} on {mma} tensor cores{kernel}", ratio
    if wb < 2 <= ab:
        bits = 4 if wb < 1 else 8
        kernel = (f", gemm_w{bits}a16.tile analysed at each shape" if profile.kind == "gpu" else "")
        act_bits = round(ab * 8)            # a scheme's name (w4a16), not a quantity to format
        return (f"weight-only w{bits}a{act_bits} ({wl.weight_dtype} weights dequantized to {wl.act_dtype} "
                f"in the GEMM's load, bf16 tensor cores{kernel})"), 1.0
    return "bf16 tensor cores", 1.0


class StageBuilder:
    """The stage constructors of one :func:`evaluate` call, over all its configurations: each
    prices its kernels with the profile's pricer (each distinct shape once), applies the dtype
    and knob scales and appends :class:`VStage` rows to ``stages``.

    ``eager`` builds the step as a plain PyTorch model launches it (one kernel per op, split-K
    GEMMs as cuBLAS picks them); otherwise as a fused serving engine (fused GEMMs shared by
    their matrices, one kernel per norm or activation)."""

    def __init__(self, n: int, pricer, act_bytes: float, weight_bytes: float, gemm_compute_scale: float,
                 compute_scale: float, memory_scale: float, eager: bool, sms: int, tiled: bool, norm: str,
                 gemm_kernel=None):
        self.n, self.pricer = n, pricer
        self.gemm_kernel = gemm_kernel or pricer.gemm     # the pricer method of the step's GEMM path
        self.act_bytes, self.weight_bytes = act_bytes, weight_bytes
        self.gemm_compute_scale, self.compute_scale, self.memory_scale = gemm_compute_scale, compute_scale, memory_scale
        self.eager, self.sms, self.tiled, self.norm = eager, sms, tiled, norm
        self.stages: list[VStage] = []

    def gemm(self, names_weights, M, N, K, block, layers, tag, label, count=1, splitk=True):
        """One fused GEMM (M x K @ K x N) split over ``names_weights`` [(stage name, share)].

        ``eager`` (one stage per GEMM): ``count`` GEMMs of this shape, each split-K with a
        reduce kernel where cuBLAS would leave SMs idle (:func:`splitk_rule`)."""
        n, pr, ab, wb, gemm_cs = self.n, self.pricer, self.act_bytes, self.weight_bytes, self.gemm_compute_scale
        compute_scale, memory_scale, eager, sms, tiled, stages = (self.compute_scale, self.memory_scale, self.eager,
                                                                  self.sms, self.tiled, self.stages)
        M = np.asarray(M, dtype=np.int64) * np.ones(n, dtype=np.int64)
        N = np.asarray(N, dtype=np.int64) * np.ones(n, dtype=np.int64)
        K = np.asarray(K, dtype=np.int64) * np.ones(n, dtype=np.int64)
        ns, c, m, costs, inv = _price(self.gemm_kernel, np.stack([M, N, K], axis=1))
        Mf, Nf, Kf = M.astype(float), N.astype(float), K.astype(float)
        rm = (Mf * Kf * ab + Kf * Nf * wb + Mf * Nf * ab) / (2 * (Mf * Kf + Kf * Nf + Mf * Nf))
        body = scale_time(ns, c, m, gemm_cs, rm * memory_scale)
        cc, mm = c * gemm_cs, m * rm * memory_scale
        count = _arr(count, n)
        if eager:
            split = np.zeros(n, dtype=np.int64)
            tiles = -(-N // SPLITK_TILE_N) * -(-M // SPLITK_TILE_M)
            detail: dict = {}
            use = splitk_rule(M, N, sms) if (splitk and not tiled) else np.zeros(n, dtype=bool)
            if use.any():
                best = np.full(n, np.inf)
                for S in SPLITK_CANDIDATES:
                    # S CTAs per output tile, each over K/S: the same CTAs as a GEMM N*S wide and K/S deep
                    ns2, c2, m2, costs2, inv2 = _price(self.gemm_kernel, np.stack([M, N * S, -(-K // S)], axis=1))
                    # the reduce reads S fp32 partials of M x N and writes M x N bf16: a copy of
                    # (4 S + 2) M N / 4 bf16-equivalent elements
                    red = S * M * N + (M * N + 1) // 2
                    ns3, c3, m3, costs3, inv3 = _price(pr.copy, red[:, None])
                    g = scale_time(ns2, c2, m2, gemm_cs, rm * memory_scale)
                    r3 = scale_time(ns3, c3, m3, compute_scale, memory_scale)
                    take = use & (g + r3 < best)
                    best = np.where(take, g + r3, best)
                    split = np.where(take, S, split)
                    body = np.where(take, g + r3, body)
                    cc = np.where(take, c2 * gemm_cs, cc)
                    mm = np.where(take, m2 * rm * memory_scale + m3 * memory_scale, mm)
                    detail[S] = (costs2, inv2, costs3, inv3, g, r3)
            name = names_weights[0][0]

            def fe(i, costs=costs, inv=inv, rm=rm, body=body, split=split, count=count, detail=detail,
                   tiles=tiles):
                k = costs[inv[i]]
                scale = f" x dtype scale {format_significant(rm[i], 3)}" if abs(rm[i] - 1) > 1e-9 else ""
                times = f"{format_plain(count[i])} x " if count[i] != 1 else ""
                if split[i]:
                    costs2, inv2, costs3, inv3, g, r3 = detail[int(split[i])]
                    kg, kr, g, r3 = costs2[inv2[i]], costs3[inv3[i]], g[i], r3[i]
                    return (f"{label}: {times}split-K {split[i]} ({tiles[i]} output tiles of "
                            f"{SPLITK_TILE_N} x {SPLITK_TILE_M} < {sms} SMs, as cuBLAS): {kg.kernel}.tile "
                            f"{kg.params} ({kg.config}) -> {fmt.ns(g, 3)} [compute {fmt.ns(kg.compute_ns, 3)}, "
                            f"memory {fmt.ns(kg.memory_ns, 3)}, efficiency {formula_share(kg.efficiency, 2)}]{scale} + reduce "
                            f"{kr.kernel}.tile {kr.params} -> {fmt.ns(r3, 3)} = {fmt.ns(body[i] * count[i], 3)}")
                return (f"{label}: {times}{k.kernel}.tile {k.params} ({k.config}) -> {fmt.ns(k.ns, 3)} body "
                        f"[compute {fmt.ns(k.compute_ns, 3)}, memory {fmt.ns(k.memory_ns, 3)}, "
                        f"efficiency {formula_share(k.efficiency, 2)}]{scale} = {fmt.ns(body[i] * count[i], 3)}")
            stages.append(VStage(name + tag, block, "kernel", layers, cc * count, mm * count, np.zeros(n),
                                 body * count, count * np.where(split > 0, 2.0, 1.0), fe))
            return
        for j, (name, share) in enumerate(names_weights):
            share = _arr(share, n)
            def f(i, name=name, share=share, costs=costs, inv=inv, rm=rm, body=body):
                k = costs[inv[i]]
                return (f"{label}: {k.kernel}.tile {k.params} ({k.config}) -> {fmt.ns(k.ns, 3)} body "
                        f"[compute {fmt.ns(k.compute_ns, 3)}, memory {fmt.ns(k.memory_ns, 3)}, "
                        f"efficiency {formula_share(k.efficiency, 2)}]" + (f" x dtype scale {format_significant(rm[i], 3)}" if abs(rm[i] - 1) > 1e-9 else "")
                        + (f"; share {format_significant(share[i], 3)} of the fused GEMM" if share[i] != 1 else "")
                        + f" = {fmt.ns(body[i] * share[i], 3)}")
            stages.append(VStage(name + tag, block, "kernel", layers, cc * share, mm * share, np.zeros(n),
                                 body * share, _arr(1.0 if j == 0 else 0.0, n), f))

    def elem(self, name, elements, block, layers, tag, what, mem_ratio=1.0, kernel="copy", shape2=None):
        n, pr, compute_scale, memory_scale, stages = (self.n, self.pricer, self.compute_scale, self.memory_scale,
                                                      self.stages)
        if kernel == "rmsnorm":
            ns, c, m, costs, inv = _price(pr.rmsnorm, shape2)
        elif kernel == "softmax":
            ns, c, m, costs, inv = _price(pr.softmax, shape2)
        else:
            el = np.maximum(np.asarray(elements, dtype=np.int64) * np.ones(n, dtype=np.int64), 1)
            ns, c, m, costs, inv = _price(pr.copy, el[:, None])
        r = mem_ratio * memory_scale
        body = scale_time(ns, c, m, compute_scale, r)

        def f(i, costs=costs, inv=inv, body=body):
            k = costs[inv[i]]
            return (f"{what}: {k.kernel}{'.tile' if k.kernel in ('copy', 'rmsnorm', 'softmax') else ''} "
                    f"{k.params} ({k.config}) -> {fmt.ns(body[i], 3)} [memory {fmt.ns(k.memory_ns * r, 3)}, "
                    f"efficiency {formula_share(k.efficiency, 2)}]")
        stages.append(VStage(name + tag, block, "kernel", layers, c * compute_scale, m * r, np.zeros(n),
                             body, _arr(1.0, n), f))


    def comm(self, name, t, block, layers, tag, formula, launches=1.0):
        n = self.n
        self.stages.append(VStage(name + tag, block, "comm", layers, np.zeros(n), np.zeros(n), t,
                                  np.zeros(n), np.where(t > 0, launches, 0.0), formula))


    def kernels(self, name, block, layers, tag, what, parts):
        """Several kernels of one stage, one launch each (``eager``): ``parts`` =
        [(label, kernel, shape columns, memory ratio, count)], kernel in copy | rmsnorm | softmax;
        for ``copy`` the one column is the bf16-equivalent element count (bytes read + written / 4)."""
        n, pr, compute_scale, memory_scale = self.n, self.pricer, self.compute_scale, self.memory_scale
        body, cc, mm, launches = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        priced = []
        for label, kernel, cols, ratio_, cnt in parts:
            cnt = _arr(cnt, n)
            if not cnt.any():
                continue
            shape = np.stack([np.maximum(np.ceil(np.asarray(col, dtype=float) * np.ones(n)), 1).astype(np.int64)
                              for col in cols], axis=1)
            ns, c, m, costs, inv = _price(getattr(pr, kernel), shape)
            r = ratio_ * memory_scale
            b = scale_time(ns, c, m, compute_scale, r)
            body, cc, mm, launches = body + cnt * b, cc + cnt * c * compute_scale, mm + cnt * m * r, launches + cnt
            priced.append((label, costs, inv, b, cnt))

        def f(i, priced=priced, body=body, launches=launches):
            items = []
            for label, costs, inv, b, cnt in priced:
                if cnt[i]:
                    k = costs[inv[i]]
                    items.append(f"{label} ({k.kernel}{'.tile' if k.kernel in ('copy', 'rmsnorm', 'softmax') else ''}"
                                 f" {k.params}) {fmt.ns(b[i], 3)}" + (f" x {format_plain(cnt[i])}" if cnt[i] != 1 else ""))
            return (f"{what}: {fmt.counted(launches[i], 'kernel')}, " + " + ".join(items)
                    + f" = {fmt.ns(body[i], 3)}")
        self.stages.append(VStage(name + tag, block, "kernel", layers, cc, mm, np.zeros(n), body, launches, f))

    def norm_parts(self, rows, width, label, count=1.0):
        """One norm over ``rows`` x ``width`` as a plain PyTorch model writes it: RMSNorm by hand
        (x.float(), pow(2), mean(-1), + eps, rsqrt, x * rsqrt, .to(bf16), w * x: 8 kernels; the
        mean is a row reduction: softmax.tile at rows x width, one CTA per row moving the same
        4 x rows x width bytes as the mean's f32 read), LayerNorm as F.layer_norm (1 kernel)."""
        n = self.n
        E = rows * width
        if self.norm != "rmsnorm":
            return [(f"{label}layer_norm", "rmsnorm", [rows, np.full(n, width)], 1.0, count)]
        return [(f"{label}to f32", "copy", [1.5 * E], 1.0, count),
                (f"{label}pow 2", "copy", [2.0 * E], 1.0, count),
                (f"{label}mean", "softmax", [rows, np.full(n, width)], 1.0, count),
                (f"{label}+ eps", "copy", [2.0 * rows], 1.0, count),
                (f"{label}rsqrt", "copy", [2.0 * rows], 1.0, count),
                (f"{label}x * rsqrt", "copy", [2.0 * E + rows], 1.0, count),
                (f"{label}to bf16", "copy", [1.5 * E], 1.0, count),
                (f"{label}w * x", "copy", [E + width / 2], 1.0, count)]

    def rope_parts(self, E, label):
        """RoPE on one tensor of E elements as x * cos + rotate_half(x) * sin: neg (half),
        cat, two broadcast muls, add: 5 kernels."""
        return [(f"{label} neg", "copy", [E / 2], 1.0, 1), (f"{label} cat", "copy", [E], 1.0, 1),
                (f"{label} x cos", "copy", [E], 1.0, 1), (f"{label} x sin", "copy", [E], 1.0, 1),
                (f"{label} add", "copy", [1.5 * E], 1.0, 1)]


def ffn_stages(sb: StageBuilder, model: ModelConfig, cfg: Configs, links: dict, T, tp_d, ab: float, count,
               tag: str, is_moe: bool, n_ffn_norms: int, ar_bytes, far) -> None:
    """The FFN block of one layer kind, appended to ``sb``: the norm(s); the dense MLP, or the MoE
    router, routing, EP dispatch, shared and routed experts and EP combine; the TP all-reduce;
    the residual add (``eager``). ``T`` tokens per rank, ``ab`` activation bytes, ``far`` the
    all-reduce formula of the attention block (the same collective)."""
    n, eager, h = sb.n, sb.eager, model.hidden_size
    gemm_stage, elem_stage, comm_stage, kernels_stage = sb.gemm, sb.elem, sb.comm, sb.kernels
    norm_parts = sb.norm_parts
    tp_bw, tp_lat, _ = links["tp"]
    ep_bw, ep_lat, ep_lab = links["ep"]
    if eager:
        if n_ffn_norms:
            kernels_stage("ffn_norm", "ffn", count, tag, f"{n_ffn_norms} {model.norm} T x h",
                          norm_parts(T, h, "", n_ffn_norms))
    else:
        elem_stage("ffn_norm", None, "ffn", count, tag, "rmsnorm T x h", kernel="rmsnorm",
                   shape2=np.stack([T, np.full(n, h)], axis=1))
    gated = model.ffn_gated
    mats = [("gate_proj", 0.5), ("up_proj", 0.5)] if gated else [("up_proj", 1.0)]

    def act_parts(elements, label=""):
        """The activation as the reference writes it: act(gate) (1 kernel), x up (1 more if gated)."""
        parts = [(f"{label}{model.ffn_activation}", "copy", [elements], 1.0, 1)]
        if gated:
            parts.append((f"{label}x up", "copy", [1.5 * elements], 1.0, 1))
        return parts

    if not is_moe and eager:
        I_r = -(-model.intermediate_size // tp_d)
        for nm, _ in mats:
            gemm_stage([(nm, 1.0)], T, I_r, h, "ffn", count, tag, f"{nm.split('_')[0]} projection, N = I/tp")
        kernels_stage("activation", "ffn", count, tag, f"{model.ffn_activation}{' x up' if gated else ''}, "
                      "T x I/tp", act_parts(T * I_r))
        gemm_stage([("down_proj", 1.0)], T, h, I_r, "ffn", count, tag, "down projection, K = I/tp")
    elif not is_moe:
        I_r = -(-model.intermediate_size // tp_d)
        gemm_stage(mats, T, (2 if gated else 1) * I_r, h, "ffn", count, tag, "fused gate/up GEMM, N = 2 I/tp")
        elem_stage("activation", T * I_r * (1.5 if gated else 1.0), "ffn", count, tag,
                   f"{model.ffn_activation}{' x up' if gated else ''}, T x I/tp")
        gemm_stage([("down_proj", 1.0)], T, h, I_r, "ffn", count, tag, "down projection, K = I/tp")
    else:
        moe = model.moe
        E, k_top = moe.num_experts, moe.experts_per_token
        gemm_stage([("router", 1.0)], T, E, h, "ffn", count, tag, "router logits (replicated)")
        e_dp = np.maximum(cfg.ep // tp_d, 1)                     # DP replicas inside the EP group
        tp_moe = np.maximum(tp_d // cfg.ep, 1)                   # ranks splitting one expert's width
        tokens_grp = T * e_dp
        assign = tokens_grp * k_top
        used = np.minimum(E, assign)
        per_exp = -(-assign // used)
        local = np.minimum(E // cfg.ep, -(-used // cfg.ep))
        Ie = -(-moe.expert_intermediate_size // tp_moe)
        if eager:
            # softmax, top-k, renormalise (sum, divide), cast to bf16: 5 kernels
            kernels_stage("routing", "ffn", count, tag, "softmax, top-k, renormalise, cast", [
                ("softmax", "softmax", [T, np.full(n, E)], 1.0, 1),
                ("topk", "softmax", [T, np.full(n, E)], 1.0, 1),
                ("sum", "copy", [T * k_top], 1.0, 1), ("divide", "copy", [1.5 * T * k_top], 1.0, 1),
                ("to bf16", "copy", [T * k_top], 1.0, 1)])
        else:
            elem_stage("routing", None, "ffn", count, tag, "top-k softmax over experts", kernel="softmax",
                       shape2=np.stack([T, np.full(n, E)], axis=1))
        a2a_bytes = T * k_top * h * ab / np.maximum(tp_d, 1)
        t_a2a = np.where(cfg.ep > tp_d, gather_ns(a2a_bytes, cfg.ep, ep_bw, ep_lat), 0.0)
        def fa2a(i, t=t_a2a):
            if cfg.ep[i] <= tp_d[i]:
                return "ep within the TP group: tokens are already on every rank; no all-to-all"
            return (f"all-to-all (n-1)/n x T k h bytes / tp / bw + (n-1) x lat = {cfg.ep[i] - 1}/{cfg.ep[i]} x "
                    f"{fmt.nbytes(a2a_bytes[i], 3)} / {fmt.bandwidth(ep_bw[i], 4)} + {cfg.ep[i] - 1} x {fmt.ns(ep_lat[i], 3)} "
                    f"({ep_lab[i]}) = {fmt.ns(t[i], 3)}")
        comm_stage("ep_dispatch", t_a2a, "ffn", count, tag, fa2a)
        if moe.num_shared_experts and eager:
            Is = -(-moe.num_shared_experts * moe.shared_width // tp_d)
            gemm_stage([("shared_gate_up", 1.0)], T, Is, h, "ffn", count, tag,
                       "shared experts gate and up, width/tp each", count=len(mats))
            kernels_stage("shared_activation", "ffn", count, tag, "shared experts activation, + routed",
                          act_parts(T * Is) + [("+ routed", "copy", [1.5 * T * h], 1.0, 1)])
            gemm_stage([("shared_down", 1.0)], T, h, Is, "ffn", count, tag, "shared experts down")
        elif moe.num_shared_experts:
            Is = -(-moe.num_shared_experts * moe.shared_width // tp_d)
            gemm_stage([("shared_gate_up", 1.0)], T, (2 if gated else 1) * Is, h, "ffn", count, tag,
                       "shared experts gate/up, width/tp")
            elem_stage("shared_activation", T * Is * (1.5 if gated else 1.0), "ffn", count, tag,
                       "shared experts activation")
            gemm_stage([("shared_down", 1.0)], T, h, Is, "ffn", count, tag, "shared experts down")
        if eager:
            # A plain PyTorch MoE loops over the experts hit, behind a host sync (torch.where):
            # it cannot be CUDA-graph captured, so the routed experts stay grouped GEMMs (one
            # launch per matrix, no split-K); the ops around them are unfused.
            for nm, _ in mats:
                gemm_stage([("expert_" + nm, 1.0)], per_exp, Ie * local, h, "ffn", count, tag,
                           f"grouped expert {nm.split('_')[0]}: M = tokens per expert, N = I_e/tp_moe x "
                           "local experts used", splitk=False)
            kernels_stage("expert_activation", "ffn", count, tag, "expert activation",
                          act_parts(per_exp * Ie * local))
            gemm_stage([("expert_down", 1.0)], per_exp, h * local, Ie, "ffn", count, tag,
                       "grouped expert down: N = h x local experts used, K = I_e/tp_moe", splitk=False)
            kernels_stage("expert_combine", "ffn", count, tag, "x routing weight, sum over the top-k", [
                ("x weight", "copy", [1.5 * T * k_top * h], 1.0, 1),
                ("sum over k", "copy", [(T * k_top * h + T * h) / 2], 1.0, 1)])
        else:
            gemm_stage([("expert_" + nm, sh) for nm, sh in mats], per_exp,
                       (2 if gated else 1) * Ie * local, h, "ffn", count, tag,
                       "grouped expert gate/up: M = tokens per expert, N = 2 I_e/tp_moe x local experts used")
            elem_stage("expert_activation", per_exp * Ie * local * (1.5 if gated else 1.0), "ffn", count,
                       tag, "expert activation")
            gemm_stage([("expert_down", 1.0)], per_exp, h * local, Ie, "ffn", count, tag,
                       "grouped expert down: N = h x local experts used, K = I_e/tp_moe")
        comm_stage("ep_combine", t_a2a, "ffn", count, tag, fa2a)
    t_ar2 = allreduce_ns(ar_bytes, cfg.tp, tp_bw, tp_lat)
    comm_stage("tp_allreduce_ffn", t_ar2, "ffn", count, tag, far)
    if eager:
        kernels_stage("ffn_residual", "ffn", count, tag, "x + FFN output (fused into the next norm by a "
                      "serving engine)", [("add", "copy", [1.5 * T * h], 1.0, 1)])


def evaluate(model: ModelConfig, wl: Workload, system: System, cfg: Configs,
             compute_scale: float = 1.0, memory_scale: float = 1.0, intra_scale: float = 1.0,
             inter_scale: float = 1.0) -> Evaluation:
    """Every stage for every configuration in ``cfg`` (numpy arrays over configurations)."""
    n = len(cfg)
    pr = pricer_for(system.profile, system.profile_key)
    prof = system.profile
    tiled = system.kind == "tiled"
    ab, wb, kvb = (float(dtype_bytes(d)) for d in (wl.act_dtype, wl.weight_dtype, wl.kv_dtype))
    # The residual stream between GEMMs stays 16-bit: 1-byte activations (fp8, int8) are
    # quantized at each GEMM's input and the GEMM writes bf16 (gemm_fp8.tile's C), so the TP
    # all-reduce of a GEMM's output and the PP hand-over of the hidden state move 2 B a value.
    rb = max(ab, 2.0)
    decode = wl.mode == "decode"
    h = model.hidden_size
    Hq, G = model.num_attention_heads, model.num_kv_heads
    d = model.head_dim
    mla = model.mla
    links = _links(system, cfg, intra_scale, inter_scale)

    # Ranks that share one device on the tiled accelerator run the group's whole work.
    tp_d = np.where(cfg.tp_place >= 3, 1, cfg.tp)
    cp_d = np.where(cfg.cp_place >= 3, 1, cfg.cp)
    Br = -(-wl.batch // cfg.dp)                                  # sequences per replica
    if decode:
        T = Br.astype(np.int64)                                  # tokens per rank (CP ranks share the token)
        S_q = np.ones(n, dtype=np.int64)
    else:
        S_q = -(-wl.context // cp_d)                             # query tokens per sequence per rank
        T = Br * S_q
    Hq_r = -(-Hq // tp_d)
    if mla is None:
        G_r = np.maximum(G // tp_d, 1)
        rep = np.maximum(tp_d // G, 1)                           # TP ranks holding the same KV head
    else:
        G_r = np.ones(n, dtype=np.int64)
        rep = tp_d.copy()                                        # the latent is shared by all heads
    kvseq = cfg.kvseq & (rep > 1)

    # the GEMM path the hardware has (gemm_path): fp8 x fp8 analysed on gemm_fp8.tile (its own
    # bytes and tensor rate); otherwise the bf16 kernel with dtype scalings
    path_ratio = gemm_path(prof, wl)[1]          # refuses fp8 x fp8 where there are no fp8 tensor cores
    fp8_kernel = ab <= 1 and wb <= 1 and wl.act_dtype == "fp8" and not tiled
    # weight-only (4- or 8-bit weights, 16-bit activations): analysed on gemm_w4a16 / gemm_w8a16
    weight_only = wb < 2 <= ab and not tiled
    gemm_cs = (1.0 if fp8_kernel or weight_only else path_ratio) * compute_scale
    own_kernel = fp8_kernel or weight_only          # the kernel prices its own bytes and rate
    gemm_method = (pr.gemm_fp8 if fp8_kernel else (pr.gemm_w4a16 if wb < 1 else pr.gemm_w8a16)
                   if weight_only else pr.gemm)
    # the step's GEMMs as their code generator compiles them (Workload.gemm_codegen); sip's
    # tiled GEMM has none
    gemm_kernel = gemm_method if tiled else functools.partial(gemm_method, codegen=wl.gemm_codegen)

    kinds = layer_kinds(model)
    multi = len(kinds) > 1

    eager = wl.kernels == "eager"
    sms = 0 if tiled else int(prof.units_of("sm"))

    sb = StageBuilder(n, pr, 2.0 if own_kernel else ab, 2.0 if own_kernel else wb, gemm_cs, compute_scale,
                      memory_scale, eager, sms, tiled, model.norm, gemm_kernel)
    stages = sb.stages
    gemm_stage, elem_stage, comm_stage, kernels_stage = sb.gemm, sb.elem, sb.comm, sb.kernels
    norm_parts, rope_parts = sb.norm_parts, sb.rope_parts

    tp_bw, tp_lat, tp_lab = links["tp"]
    cp_bw, cp_lat, cp_lab = links["cp"]
    pp_bw, pp_lat, pp_lab = links["pp"]

    # ---- embedding (attention side: the input end of the step)
    rope_model = model.position_embedding == "rope"
    if eager:
        pos = S_q if not decode else np.ones(n, dtype=np.int64)      # positions of this step per rank
        rdim = mla.qk_rope_head_dim if mla is not None else d
        parts = [("token rows", "copy", [T * h], 1.0, 1)]
        if rope_model:
            parts += [("cos rows", "copy", [pos * rdim], 1.0, 1), ("sin rows", "copy", [pos * rdim], 1.0, 1)]
        else:
            parts += [("position rows", "copy", [T * h], 1.0, 1), ("+ position", "copy", [1.5 * T * h], 1.0, 1)]
        kernels_stage("embedding", "attention", 1, "", "embedding gather (index kernels: token rows"
                      + (", cos/sin table rows)" if rope_model else "; learned positions gathered and added)"), parts)
    else:
        elem_stage("embedding", T * h / 2, "attention", 1, "", "token embedding gather, T x h reads + writes")
    npl = model.norms_per_layer
    n_attn_norms, n_ffn_norms = npl - npl // 2, npl // 2

    for label, is_moe, sliding, count in kinds:
        tag = f"[{label}]" if multi else ""
        span_full = min(wl.context, model.sliding_window) if sliding and model.sliding_window else wl.context
        # ---- attention block
        if eager:
            parts = norm_parts(T, h, "", n_attn_norms)
            what = f"{n_attn_norms} {model.norm} T x h"
            if mla is not None:
                if mla.q_lora_rank:
                    parts += norm_parts(T, mla.q_lora_rank, "q_a ")
                parts += norm_parts(T, mla.kv_lora_rank, "kv_a ")
                what += " + the MLA latent norms"
            if model.qk_norm:
                parts += norm_parts(T * Hq_r, d, "q ") + norm_parts(T * G_r, d, "k ")
                what += " + per-head q/k norms"
            kernels_stage("attn_norm", "attention", count, tag, what, parts)
        else:
            elem_stage("attn_norm", None, "attention", count, tag, "rmsnorm T x h", kernel="rmsnorm",
                       shape2=np.stack([T, np.full(n, h)], axis=1))
        if mla is None and eager:
            gemm_stage([("q_proj", 1.0)], T, Hq_r * d, h, "attention", count, tag, "q projection, N = Hq/tp x d")
            gemm_stage([("k_proj", 1.0)], T, G_r * d, h, "attention", count, tag, "k projection, N = max(G/tp, 1) d")
            gemm_stage([("v_proj", 1.0)], T, G_r * d, h, "attention", count, tag, "v projection, N = max(G/tp, 1) d")
            rope_el = T * (Hq_r + G_r) * d
            kv_el = T * 2 * G_r * d
            qk_dim = v_dim = d
        elif mla is None:
            gemm_stage([("q_proj", Hq_r / (Hq_r + 2 * G_r)), ("k_proj", G_r / (Hq_r + 2 * G_r)),
                        ("v_proj", G_r / (Hq_r + 2 * G_r))],
                       T, (Hq_r + 2 * G_r) * d, h, "attention", count, tag,
                       "fused qkv GEMM, N = (Hq/tp + 2 max(G/tp, 1)) d")
            rope_el = T * (Hq_r + G_r) * d
            kv_el = T * 2 * G_r * d
            qk_dim = v_dim = d
        else:
            q_in = mla.q_lora_rank or h
            if mla.q_lora_rank:
                gemm_stage([("q_a_proj", 1.0)], T, mla.q_lora_rank, h, "attention", count, tag,
                           "q_a_proj (replicated)")
            gemm_stage([("q_proj", 1.0)], T, Hq_r * mla.qk_head_dim, q_in, "attention", count, tag,
                       "q (b) projection, heads over tp")
            gemm_stage([("k_proj", 1.0)], T, mla.kv_lora_rank + mla.qk_rope_head_dim, h, "attention", count,
                       tag, "kv_a_proj to the cached latent (replicated)")
            gemm_stage([("v_proj", 1.0)], T, Hq_r * (mla.qk_nope_head_dim + mla.v_head_dim), mla.kv_lora_rank,
                       "attention", count, tag, "kv_b_proj latent -> per-head K, V")
            rope_el = T * (Hq_r + 1) * mla.qk_rope_head_dim
            kv_el = T * (mla.kv_lora_rank + mla.qk_rope_head_dim) / 2   # one latent, not K and V
            qk_dim, v_dim = mla.qk_head_dim, mla.v_head_dim
        if eager:
            if rope_model:
                if mla is None:
                    parts = rope_parts(T * Hq_r * d, "q") + rope_parts(T * G_r * d, "k")
                else:
                    parts = rope_parts(T * Hq_r * mla.qk_rope_head_dim, "q_pe") + rope_parts(
                        T * mla.qk_rope_head_dim, "k_pe")
                kernels_stage("rope", "attention", count, tag, "RoPE, x * cos + rotate_half(x) * sin", parts)
            if mla is None:
                parts = [("K index_copy_", "copy", [T * G_r * d], kvb / 2, 1),
                         ("V index_copy_", "copy", [T * G_r * d], kvb / 2, 1)]
            else:
                parts = [("latent index_copy_", "copy", [T * (mla.kv_lora_rank + mla.qk_rope_head_dim)], kvb / 2, 1)]
            kernels_stage("kv_write", "attention", count, tag, "append the new K/V to the cache", parts)
        else:
            elem_stage("rope", rope_el, "attention", count, tag, "RoPE on q and k (read + write)")
            elem_stage("kv_write", kv_el, "attention", count, tag, "append the new K/V to the cache",
                       mem_ratio=kvb / 2)

        # ---- attention core
        if decode:
            ctx_r = -(-span_full // cp_d)
            ctx_r = np.where(kvseq, -(-ctx_r // rep), ctx_r)
            hq_k = np.where(kvseq, Hq_r * rep // np.maximum(G_r, 1) * G_r, Hq_r)
            if mla is None:
                hkv_k, dk = G_r, d
                kv_ratio = kvb / 2
            else:
                hkv_k, dk = np.ones(n, dtype=np.int64), mla.kv_lora_rank + mla.qk_rope_head_dim
                hq_k = np.where(kvseq, Hq_r * rep, Hq_r)
                kv_ratio = kvb / 2 / 2      # the latent is read once for K and V
            shp = np.stack([Br, hq_k, hkv_k, ctx_r, np.full(n, dk)], axis=1)
            ns, c, m, costs, inv = _price(pr.decode_attention, shp)
            body = scale_time(ns, c, m, compute_scale, kv_ratio * memory_scale)
            merge = np.array([k.parts[-1] if len(k.parts) > 1 else 0.0 for k in costs])[inv]
            merge = np.minimum(scale_time(merge, c, m, compute_scale, kv_ratio * memory_scale), body)
            main = body - merge
            cc, mm = c * compute_scale, m * kv_ratio * memory_scale
            shares = (("qk_t", 0.5, main, 1.0), ("softmax", 1.0, merge, 0.0), ("pv", 0.5, main, 0.0))
            for name, sh, part, launch in shares:
                def f(i, name=name, sh=sh, part=part, costs=costs, inv=inv, body=body):
                    k = costs[inv[i]]
                    how = ("half of the split-K main launch" if name != "softmax"
                           else "the split-merge launch (m*, 2^(m-m*), O / l)")
                    return (f"{name}: {how} of {k.kernel}.tile {k.params} ({k.config}) = "
                            f"{fmt.ns(part[i] * sh, 3)} of {fmt.ns(body[i], 3)} [kernel compute "
                            f"{fmt.ns(k.compute_ns, 3)}, memory {fmt.ns(k.memory_ns, 3)} x kv dtype {format_plain(kv_ratio)}]")
                stages.append(VStage(name + tag, "attention", "kernel", count, cc * sh if name != "softmax" else np.zeros(n),
                                     mm * sh if name != "softmax" else np.zeros(n), np.zeros(n), part * sh,
                                     _arr(launch if name != "softmax" else 1.0, n), f))
        else:
            hh = Hq_r
            shp = np.stack([Br, hh, np.full(n, wl.context), np.full(n, qk_dim)], axis=1)
            ns, c, m, costs, inv = _price(pr.prefill_attention, shp)
            win = span_full / wl.context            # sliding window: fraction of the causal triangle kept
            frac = np.minimum(1.0, (2 * win - win * win)) if sliding else 1.0
            body = scale_time(ns, c, m, compute_scale, kvb / 2 * memory_scale) * frac / cp_d
            try:
                sfu = prof.peak_flops_per_s("special", "f32") / 1e9
                tens = prof.peak_flops_per_s("tensor", "bf16") / 1e9
                w_sm = 1.0 / sfu / (1.0 / sfu + 4.0 * qk_dim / tens)
            except TfxError:
                w_sm = 0.0
            cc, mm = c * frac / cp_d * compute_scale, m * frac / cp_d * memory_scale
            for name, sh, launch in (("qk_t", (1 - w_sm) / 2, 1.0), ("softmax", w_sm, 0.0),
                                     ("pv", (1 - w_sm) / 2, 0.0)):
                def f(i, name=name, sh=sh, costs=costs, inv=inv, body=body, frac=frac):
                    k = costs[inv[i]]
                    return (f"{name}: share {format_significant(sh, 3)} (exp on the SFU vs 2 mma) of {k.kernel} {k.params} "
                            f"({k.config}) {fmt.ns(k.ns, 3)}" + (f" x window {format_significant(np.asarray(frac), 3)}" if sliding else "")
                            + f" / cp {int(cp_d[i])} = {fmt.ns(body[i] * sh, 3)}")
                stages.append(VStage(name + tag, "attention", "kernel", count, cc * sh, mm * sh, np.zeros(n),
                                     body * sh, _arr(launch, n), f))
        # ---- CP ring / merge and seq-sharded KV merge
        oml_bytes = Br * S_q * Hq_r * (v_dim + 2) * 4.0          # f32 partial O, m, l
        if decode:
            t_q = (cfg.cp - 1) * sendrecv_ns(oml_bytes + Br * Hq_r * qk_dim * ab, cp_bw, cp_lat)
            t_kv = gather_ns(oml_bytes * cfg.cp, cfg.cp, cp_bw, cp_lat)
            t_cp = np.where(cfg.cp > 1, np.where(cfg.ringq, t_q, t_kv), 0.0)
            def fcp(i, t_q=t_q, t_kv=t_kv):
                if cfg.cp[i] == 1:
                    return "cp = 1: no merge"
                if cfg.ringq[i]:
                    return (f"decode, rotate Q with O/m/l: (cp-1) x ((O/m/l {fmt.nbytes(oml_bytes[i], 3)} + q) / bw + lat) "
                            f"= {cfg.cp[i] - 1} x ... over {cp_lab[i]} {fmt.bandwidth(cp_bw[i], 4)}, {fmt.ns(cp_lat[i], 3)} "
                            f"= {fmt.ns(t_q[i], 3)}; the merge folds into the last hop")
                return (f"decode, K/V stay: all-gather O/m/l partials (n-1)/n x {fmt.nbytes(oml_bytes[i] * cfg.cp[i], 3)} / "
                        f"{fmt.bandwidth(cp_bw[i], 4)} + (n-1) x {fmt.ns(cp_lat[i], 3)}, n = {cfg.cp[i]} = {fmt.ns(t_kv[i], 3)}")
            comm_stage("cp_merge", t_cp, "attention", count, tag, fcp)
        else:
            kv_chunk = Br * S_q * G_r * (2 * d if mla is None else (mla.kv_lora_rank + mla.qk_rope_head_dim)) * kvb
            q_chunk = Br * S_q * Hq_r * qk_dim * ab + oml_bytes
            hop = np.where(cfg.ringq, sendrecv_ns(q_chunk, cp_bw, cp_lat), sendrecv_ns(kv_chunk, cp_bw, cp_lat))
            attn_step = body / np.maximum(cfg.cp, 1)
            exposed = (cfg.cp - 1) * np.maximum(hop - attn_step, 0.0)
            final = np.where(cfg.ringq, sendrecv_ns(oml_bytes, cp_bw, cp_lat), 0.0)
            t_cp = np.where(cfg.cp > 1, exposed + final, 0.0)
            def fcp(i, hop=hop, attn_step=attn_step, final=final, t_cp=t_cp, kv_chunk=kv_chunk, q_chunk=q_chunk):
                if cfg.cp[i] == 1:
                    return "cp = 1: no ring"
                what = (f"Q + O/m/l chunk {fmt.nbytes(q_chunk[i], 3)}" if cfg.ringq[i] else f"K/V chunk {fmt.nbytes(kv_chunk[i], 3)}")
                return (f"prefill ring, rotate {'Q' if cfg.ringq[i] else 'K/V'}: (cp-1) x max(hop - attention step, 0)"
                        f" + final O return; hop = {what} / {fmt.bandwidth(cp_bw[i], 4)} + {fmt.ns(cp_lat[i], 3)} = {fmt.ns(hop[i], 3)}, "
                        f"step = {fmt.ns(attn_step[i], 3)}, {cfg.cp[i] - 1} hops, final {fmt.ns(final[i], 3)} "
                        f"= {fmt.ns(t_cp[i], 3)}")
            comm_stage("cp_ring", t_cp, "attention", count, tag, fcp)
        t_seq = np.where(kvseq, gather_ns(oml_bytes * rep, rep, tp_bw, tp_lat), 0.0)
        if kvseq.any():
            def fseq(i, t_seq=t_seq):
                if not kvseq[i]:
                    return "kv_shard=heads: nothing to merge"
                return (f"KV split by sequence over the {rep[i]} TP ranks sharing a KV head: reduce-scatter "
                        f"O/m/l (n-1)/n x {fmt.nbytes(oml_bytes[i] * rep[i], 3)} / {fmt.bandwidth(tp_bw[i], 4)} + (n-1) x "
                        f"{fmt.ns(tp_lat[i], 3)}, n = {rep[i]} = {fmt.ns(t_seq[i], 3)}")
            comm_stage("kv_seq_merge", t_seq, "attention", count, tag, fseq)

        o_k = Hq_r * (v_dim if mla is not None else d)
        gemm_stage([("o_proj", 1.0)], T, h, o_k, "attention", count, tag, "output projection, K = Hq/tp x d")
        ar_bytes = T * h * rb
        t_ar = allreduce_ns(ar_bytes, cfg.tp, tp_bw, tp_lat)
        def far(i, t=t_ar):
            if cfg.tp[i] == 1:
                return "tp = 1: no all-reduce"
            return (f"ring all-reduce 2(n-1)/n x bytes / bw + 2(n-1) x lat = 2 x {cfg.tp[i] - 1}/{cfg.tp[i]} x "
                    f"{fmt.nbytes(ar_bytes[i], 3)} / {fmt.bandwidth(tp_bw[i], 4)} + {2 * (cfg.tp[i] - 1)} x {fmt.ns(tp_lat[i], 3)} "
                    f"({tp_lab[i]}) = {fmt.ns(t[i], 3)}")
        comm_stage("tp_allreduce_attn", t_ar, "attention", count, tag, far)
        if eager:
            kernels_stage("attn_residual", "attention", count, tag, "x + attention output (fused into the "
                          "next norm by a serving engine)", [("add", "copy", [1.5 * T * h], 1.0, 1)])

        # ---- FFN block
        ffn_stages(sb, model, cfg, links, T, tp_d, ab, count, tag, is_moe, n_ffn_norms, ar_bytes, far)

    # ---- the head (output end: counted on the FFN side) and pipeline hops
    T_last = Br
    if eager:
        kernels_stage("final_norm", "ffn", 1, "", f"final {model.norm}", norm_parts(T_last, h, ""))
    else:
        elem_stage("final_norm", None, "ffn", 1, "", "final rmsnorm", kernel="rmsnorm",
                   shape2=np.stack([T_last, np.full(n, h)], axis=1))
    V_r = -(-model.vocab_size // tp_d)
    gemm_stage([("lm_head", 1.0)], T_last, V_r, h, "ffn", 1, "", "lm head, vocabulary over tp")
    if eager and not tiled:
        kernels_stage("gemm_memset", "ffn", 1, "", "the one memset node per step that comes with the cuBLAS "
                      "GEMMs (in the measured full and GEMM-only graphs, not the attention-only one)",
                      [("memset", "copy", [np.ones(n)], 1.0, 1)])
    lg_bytes = T_last * model.vocab_size * 4.0
    t_lg = gather_ns(lg_bytes, cfg.tp, tp_bw, tp_lat)
    comm_stage("logits_gather", t_lg, "ffn", 1, "",
               lambda i: ("tp = 1" if cfg.tp[i] == 1 else
                          f"all-gather fp32 logits (n-1)/n x {fmt.nbytes(lg_bytes[i], 3)} / {fmt.bandwidth(tp_bw[i], 4)} + (n-1) x "
                          f"{fmt.ns(tp_lat[i], 3)} = {fmt.ns(t_lg[i], 3)}"))
    pp_bytes = T * h * rb
    t_pp = np.where(cfg.pp > 1, (cfg.pp - 1) * sendrecv_ns(pp_bytes, pp_bw, pp_lat), 0.0)
    comm_stage("pp_sendrecv", t_pp, "ffn", 1, "",
               lambda i: ("pp = 1" if cfg.pp[i] == 1 else
                          f"(pp-1) x (T h bytes / bw + lat) = {cfg.pp[i] - 1} x ({fmt.nbytes(pp_bytes[i], 3)} / "
                          f"{fmt.bandwidth(pp_bw[i], 4)} + {fmt.ns(pp_lat[i], 3)}) ({pp_lab[i]}) = {fmt.ns(t_pp[i], 3)}; "
                          "a request still crosses every layer"), launches=2.0)

    memory = memory_per_device(model, wl, system, cfg, tp_d, cp_d, G_r, rep, kvseq, T)
    valid = np.ones(n, dtype=bool)
    return Evaluation(model, wl, system, cfg, stages, memory, valid)


# --------------------------------------------------------------------------- #
# Memory per device
# --------------------------------------------------------------------------- #

def memory_per_device(model, wl, system, cfg, tp_d, cp_d, G_r, rep, kvseq, T) -> dict:
    """Bytes per device: weights, kv_cache, activations, workspace (arrays over configurations)."""
    n = len(cfg)
    wb, ab, kvb = (float(dtype_bytes(x)) for x in (wl.weight_dtype, wl.act_dtype, wl.kv_dtype))
    rb = wb if wb >= 2 else 2.0      # embedding, norms, router kept in bf16 when the matrices are quantized
    h, d = model.hidden_size, model.head_dim
    counts = param_counts(model)
    layers_pp = -(-model.num_layers // cfg.pp)
    mla = model.mla
    # attention matrices per rank
    if mla is None:
        Hq_r = -(-model.num_attention_heads // tp_d)
        attn = 2 * h * Hq_r * d + 2 * h * G_r * d
    else:
        Hq_r = -(-model.num_attention_heads // tp_d)
        q = (h * mla.q_lora_rank + mla.q_lora_rank * Hq_r * mla.qk_head_dim) if mla.q_lora_rank \
            else h * Hq_r * mla.qk_head_dim
        attn = q + h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + \
            mla.kv_lora_rank * Hq_r * (mla.qk_nope_head_dim + mla.v_head_dim) + Hq_r * mla.v_head_dim * h
    # per-layer FFN matrices per rank, averaged over the layers of a stage (dense and MoE mix)
    m = model.ffn_matrices * h
    ffn_sum = np.zeros(n)
    for i in range(model.num_layers):
        if model.is_moe_layer(i):
            moe = model.moe
            tp_moe = np.maximum(tp_d // cfg.ep, 1)
            ffn = m * (moe.num_experts // cfg.ep) * (-(-moe.expert_intermediate_size // tp_moe))
            if moe.num_shared_experts:
                ffn = ffn + m * (-(-moe.num_shared_experts * moe.shared_width // tp_d))
        else:
            ffn = m * (-(-model.intermediate_size // tp_d))
        ffn_sum = ffn_sum + ffn
    ffn_per_layer = ffn_sum / model.num_layers
    small = counts.layers_total - sum(layer_matrix_params(model, i, active=False) for i in range(model.num_layers))
    small_per_layer = small / model.num_layers
    emb = counts.embedding + counts.position_embedding
    head = counts.lm_head
    ends = np.where(cfg.pp > 1, np.maximum(emb, head), emb + head) / tp_d + counts.final_norm
    weights = layers_pp * ((attn + ffn_per_layer) * wb + small_per_layer * rb) + ends * rb
    # KV cache
    if mla is None:
        per_tok = 2 * G_r * d * kvb
    else:
        per_tok = (mla.kv_lora_rank + mla.qk_rope_head_dim) * kvb * np.ones(n)
    Br = -(-wl.batch // cfg.dp)
    tokens = np.zeros(n)
    for i in range(model.num_layers):
        span = min(wl.context, model.sliding_window) if model.is_sliding_layer(i) else wl.context
        tokens = tokens + (-(-span // cp_d))
    tokens = tokens / model.num_layers * layers_pp
    tokens = np.where(kvseq, tokens / rep, tokens)
    kv = Br * tokens * per_tok
    # activations: two live hidden-size buffers, the widest intermediate, logits in fp32
    if model.is_moe:
        width = max(model.intermediate_size if model.moe.first_dense_layers else 0,
                    model.moe.expert_intermediate_size * model.moe.experts_per_token
                    + model.moe.num_shared_experts * model.moe.shared_width)
    else:
        width = model.intermediate_size
    inter = np.maximum(2 * width // tp_d, (model.num_attention_heads * d + 2 * model.num_kv_heads * d) // tp_d)
    act = T * (2 * h + inter) * ab + Br * (-(-model.vocab_size // tp_d)) * 4.0
    work = np.full(n, float(system.workspace))
    return {"weights": weights.astype(float), "kv_cache": kv.astype(float), "activations": act.astype(float),
            "workspace": work}


# --------------------------------------------------------------------------- #
# Single configuration: result objects
# --------------------------------------------------------------------------- #

@dataclass
class StageResult:
    name: str
    block: str
    layers: float
    compute_ns: float
    memory_ns: float
    comm_ns: float
    launch_ns: float
    total_ns: float
    bound: str
    formula: str

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class LatencyResult:
    model: str
    hw: str
    workload: Workload
    parallelism: Parallelism
    devices: int
    latency_ns: float
    attention_ns: float
    ffn_ns: float
    stages: list
    memory: dict
    capacity: float
    fits: bool
    tokens_per_s: float
    launches: float
    notes: list = field(default_factory=list)
    knobs: dict = field(default_factory=dict)     # knobs applied to the profile, path -> text

    def to_json(self) -> dict:
        return {"model": self.model, "hw": self.hw, "knobs": dict(self.knobs),
                "workload": self.workload.to_json(),
                "parallelism": self.parallelism.to_json(), "label": self.parallelism.label(),
                "devices": self.devices, "latency_ns": self.latency_ns,
                "attention_ns": self.attention_ns, "ffn_ns": self.ffn_ns,
                "tokens_per_s": self.tokens_per_s, "launches": self.launches,
                "stages": [s.to_json() for s in self.stages],
                "memory": {**self.memory, "total": sum(self.memory.values()), "capacity": self.capacity,
                           "fits": self.fits},
                "notes": list(self.notes)}


#: A kernel stage whose roofline terms explain less than this share of its body is ``latency``
#: bound (small kernels: fills and DRAM round trips, not bandwidth or compute).
LATENCY_BOUND_SHARE = 0.1


def _bound(compute, memory, comm, launch, body) -> str:
    if comm > 0 and comm >= max(body, launch):
        return "comm"
    if launch > body:
        return "launch"
    if body <= 0:
        return "none"
    if max(compute, memory) < LATENCY_BOUND_SHARE * body:
        return "latency"
    return "compute" if compute >= memory else "memory"


def result_at(ev: Evaluation, i: int) -> LatencyResult:
    sysm = ev.system
    lns = sysm.launch_ns
    stages = []
    for s in ev.stages:
        layers = s.layers
        tot = float(s.total(lns)[i])
        launch = float(s.launches[i] * lns * layers)
        st = StageResult(s.name, s.block, float(layers), float(s.compute[i] * layers), float(s.memory[i] * layers),
                         float(s.comm[i] * layers), launch, tot,
                         _bound(s.compute[i], s.memory[i], s.comm[i], s.launches[i] * lns, s.body[i]),
                         (s.formula(i) if s.formula else "") + (f"; x {format_plain(layers)} layers" if layers != 1 else "")
                         + (f"; + {fmt.counted(s.launches[i] * layers, 'launch', 'launches')} x {fmt.ns(lns, 3)}"
                            if s.launches[i] else ""))
        stages.append(st)
    par = ev.configs.parallelism(i, sysm.kind == "tiled")
    lat = float(ev.latency()[i])
    mem = {k: float(v[i]) for k, v in ev.memory.items()}
    wl = ev.workload
    devices = int(ev.configs.devices()[i])
    tps = wl.batch * wl.new_tokens / (lat / 1e9) if lat > 0 else 0.0
    notes = list(sysm.notes) + [f"launch cost: {sysm.launch_note}", f"capacity: {sysm.capacity_note}",
                                f"GEMM path: {gemm_path(sysm.profile, ev.workload)[0]}"]
    return LatencyResult(ev.model.name, sysm.name, wl, par, devices, lat, float(ev.latency("attention")[i]),
                         float(ev.latency("ffn")[i]), stages, mem, sysm.capacity,
                         bool(sum(mem.values()) <= sysm.capacity), tps,
                         float(sum(s.launches[i] * s.layers for s in ev.stages)), notes,
                         dict(sysm.profile.knobs))


def latency(model: ModelConfig | str, hw: str | System = "h200_sxm", workload: Workload | None = None,
            parallelism: Parallelism | None = None, where: str | None = None, **system_kw) -> LatencyResult:
    """Per-stage latency and memory per device of one step under one parallelism. ``where``: the
    command-line options that gave ``parallelism`` (``--tp``), which its refusal names."""
    model = load_model(model) if isinstance(model, str) else model
    system = load_system(hw, **system_kw) if isinstance(hw, str) else hw
    workload = workload or Workload()
    parallelism = parallelism or Parallelism()
    why = validate(model, workload, parallelism, system)
    if why:
        raise TfxError(not_meaningful_message(parallelism, why), where=where)
    ev = evaluate(model, workload, system, Configs.of([parallelism]))
    return result_at(ev, 0)


def memory(model: ModelConfig | str, hw: str | System = "h200_sxm", workload: Workload | None = None,
           parallelism: Parallelism | None = None, where: str | None = None, **system_kw) -> dict:
    """Memory per device (bytes) of one configuration, with the capacity and whether it fits."""
    r = latency(model, hw, workload, parallelism, where, **system_kw)
    return {**r.memory, "total": sum(r.memory.values()), "capacity": r.capacity, "fits": r.fits,
            "devices": r.devices, "parallelism": r.parallelism.to_json()}
