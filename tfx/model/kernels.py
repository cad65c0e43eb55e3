"""Kernel pricing for the model level: the shipped kernels analyzed at sharded shapes.

Every GEMM, attention and elementwise stage of ``tfx.model.latency`` is priced
by ``tfx.analysis.analyze`` on a shipped kernel (``kernels/*.tile``) at the
shape one rank runs. For each shape a small fixed set of tile configurations
is evaluated in one numpy-array call of ``analyze`` (``check=False``) and the
fastest is kept. Results are cached per (profile, knobs, kernel, shape); the
vectorized callers (suggest, hw-sweep) hand over all missing shapes at once,
so a whole search costs one ``analyze`` call per kernel.

A priced kernel is a :class:`KernelCost`: the body time without the
analysis' own launch overhead (``launch.overhead`` is the host launch
*without* CUDA graphs; the model level adds its own per-launch cost), the
roofline compute and memory terms, and the chosen tile configuration.

Kernels (GPU profiles / tiled ``sip``):

* GEMM: ``linear.tile`` (a projection as torch.nn.Linear stores its weight, [N, K], K
  contiguous, the layout cuBLAS runs "TN"; BM, BN, BK, WARPS, STAGES candidates) /
  ``sip_gemm.tile`` (TM, TN, TK, STAGES);
* decode attention: ``gqa_decode.tile`` (SPLITS, BLOCK_N candidates) /
  ``sip_decode_attention.tile:decode_attention_composite`` (BLOCK);
* prefill attention: ``flash_prefill.tile`` (BLOCK_N, STAGES) / no tiled
  kernel yet: the roofline formula ``max(flops/peak, bytes/bw)``;
* elementwise (RoPE, KV write, activation, residual): ``copy.tile`` at the
  number of elements that moves the same bytes; norms: ``rmsnorm.tile``;
  softmax (router top-k): ``softmax.tile``. On ``sip`` (no tiled elementwise
  kernels) the bandwidth formula ``bytes / bw + latency``.

GEMMs are priced as compiled by ``tfx.model.system.DEFAULT_GEMM_CODEGEN`` (``cutlass``,
tfx.analysis.codegen) unless the workload names another (``Workload.gemm_codegen``): the
GEMMs a serving engine (TensorRT-LLM, vLLM) or PyTorch (cuBLAS) runs on Hopper are CUTLASS 3 /
cuBLAS mainloops, TMA copies and hand-pipelined wgmma, not Triton's per-thread copies and
ptxas-scheduled wgmma; attention, decode and the elementwise kernels keep ``triton``, the
compiler their measurements (calibration/h200) were made with. The chosen configuration's
text and ``KernelCost.codegen`` name it.

fp8 x fp8 GEMMs are analysed on ``gemm_fp8.tile`` (fp8 operands, bf16 output); weight-only
GEMMs (4-bit or 8-bit weights, bf16 activations) on ``gemm_w4a16.tile`` / ``gemm_w8a16.tile``
(the weights converted to bf16 in registers before the bf16 mma). Every other kernel is bf16; other dtypes scale the analysed time with
:func:`scale_time`: the memory term by the byte ratio of the traffic, the
compute term by the peak-rate ratio, the time by the dominant scaled term
(weight-only int4/fp8 GEMMs, fp8 KV reads, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from tfx.errors import TfxError
from tfx.hw.attainable import dram_level
from tfx.hw.units import format_time_ns
from tfx.model.system import DEFAULT_GEMM_CODEGEN
from tfx.bundled import bundled_dir

GEMM_CANDIDATES_GPU = (  # (BM, BN, BK, WARPS, STAGES)
    (16, 64, 128, 4, 4), (16, 128, 128, 4, 4), (32, 64, 64, 4, 4), (64, 64, 64, 4, 4),
    (64, 128, 64, 4, 3), (128, 128, 64, 4, 3), (128, 256, 64, 8, 3), (64, 256, 64, 4, 3),
)
GEMM_CANDIDATES_TILED = (  # (TM, TN, TK, STAGES)
    (32, 128, 128, 2), (64, 128, 128, 2), (128, 128, 128, 2), (32, 512, 64, 2),
    (128, 256, 128, 2), (256, 256, 128, 2),
)
WEIGHT_ONLY_CANDIDATES_GPU = (  # (BM, BN, BK, WARPS, STAGES); BK a whole number of 128-element scale groups
    (16, 64, 128, 4, 4), (16, 128, 128, 4, 3), (32, 64, 128, 4, 4), (64, 128, 128, 4, 3),
    (128, 128, 128, 8, 3), (128, 256, 128, 8, 3),
)
DECODE_CANDIDATES_GPU = tuple((s, b) for s in (1, 4, 16, 32, 64, 128, 256) for b in (64, 128))  # SPLITS, BLOCK_N
DECODE_CANDIDATES_TILED = (64, 128, 256, 512, 1024)  # BLOCK
PREFILL_CANDIDATES_GPU = ((64, 2), (128, 2), (64, 3), (128, 3))  # BLOCK_N, STAGES (BLOCK_M 128, WARPS 8)
COPY_CANDIDATES = (1024, 4096, 16384)  # BLOCK
RMSNORM_CANDIDATES = ((1, 4), (1, 8), (4, 8), (16, 8))  # BLOCK_M, WARPS
SOFTMAX_CANDIDATES = ((1, 4), (4, 4))


@dataclass(frozen=True)
class KernelCost:
    """One priced kernel call (per rank)."""

    kernel: str
    ns: float             # body time, launch overhead excluded
    compute_ns: float     # roofline compute term
    memory_ns: float      # roofline memory term
    launches: int         # kernel launches (meshes) this call makes
    # the chosen tile configuration, and for a GEMM priced as a named code generator (``codegen=``
    # given) that name after a comma, e.g. "BM=16 BN=64 BK=128 WARPS=4 STAGES=4, cutlass"
    config: str
    params: str           # the shape parameters, e.g. "M=1 N=6144 K=4096"
    parts: tuple = ()     # body time of each launch (mesh), launch overhead excluded
    codegen: str | None = None   # the code generator priced (tfx.analysis.codegen); None: a formula

    @property
    def ideal_ns(self) -> float:
        return max(self.compute_ns, self.memory_ns)

    @property
    def efficiency(self) -> float:
        """Roofline ideal over the predicted body time (1 = the kernel reaches its roofline)."""
        return self.ideal_ns / self.ns if self.ns > 0 else 1.0

    @property
    def bound(self) -> str:
        return "compute" if self.compute_ns >= self.memory_ns else "memory"

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "ns": self.ns, "compute_ns": self.compute_ns,
                "memory_ns": self.memory_ns, "launches": self.launches, "config": self.config,
                "params": self.params, "efficiency": self.efficiency, "codegen": self.codegen}


def scale_time(ns, compute_ns, memory_ns, compute_scale=1.0, memory_scale=1.0):
    """Scale an analysed kernel time when compute gets ``compute_scale`` x slower
    and memory traffic ``memory_scale`` x slower (both < 1 mean faster).

    ``ns' = ns * max(c * cs, m * ms) / max(c, m)``: the kernel keeps its
    efficiency against the roofline and follows its dominant term. Works on
    numpy arrays. Checked against full re-analysis in tests/test_model_parallel.py.
    """
    c = np.asarray(compute_ns, dtype=float)
    m = np.asarray(memory_ns, dtype=float)
    base = np.maximum(np.maximum(c, m), 1e-9)
    return np.asarray(ns, dtype=float) * np.maximum(c * compute_scale, m * memory_scale) / base


@lru_cache(maxsize=None)
def _module(name: str):
    from tfx.lang import parse_file
    path = bundled_dir("kernels") / f"{name}.tile"
    if not Path(path).is_file():
        raise TfxError(f"kernel file {name}.tile not found", where=str(path))
    return parse_file(str(path))


def _metric(a, key, n):
    v = a.metrics[key]
    return np.broadcast_to(np.asarray(v, dtype=float), (n,))


class KernelPricer:
    """Prices kernels for one (already knobbed) profile; caches every shape."""

    def __init__(self, profile):
        self.profile = profile
        self.tiled = profile.kind != "gpu"
        self.launch_ns = float(profile.get("launch.overhead", 0.0) or 0.0)
        self._cache: dict[tuple, KernelCost] = {}
        self.analyze_calls = 0

    # ------------------------------------------------------------------ core
    def _best(self, file: str, kernel: str | None, shapes: list[dict], candidates: list[dict],
              launches: int, label: str, cfg_text, codegen: str | None = None) -> list[KernelCost]:
        """Analyze ``shapes x candidates`` in one vectorized call, compiled by ``codegen``
        (None: the analysis' default, Triton); keep the fastest per shape."""
        from tfx.analysis.analyze import analyze
        ns_, nc = len(shapes), len(candidates)
        params: dict[str, np.ndarray] = {}
        for key in shapes[0]:
            params[key] = np.repeat(np.array([s[key] for s in shapes], dtype=np.int64), nc)
        for key in candidates[0]:
            params[key] = np.tile(np.array([c[key] for c in candidates], dtype=np.int64), ns_)
        a = analyze(_module(file), kernel, self.profile, params=params, check=False, codegen=codegen)
        self.analyze_calls += 1
        n = ns_ * nc
        pred = _metric(a, "performance.predicted_ns", n)
        comp = _metric(a, "roofline.compute_ns", n)
        mem = _metric(a, "roofline.memory_ns", n)
        body = np.maximum(pred - launches * self.launch_ns, np.maximum(comp, mem))
        body = body.reshape(ns_, nc)
        parts = [np.broadcast_to(np.asarray(lt.total_ns, dtype=float) - self.launch_ns, (n,)) for lt in a.launches]
        best = np.argmin(body, axis=1)
        out = []
        suffix = f", {a.codegen}" if codegen is not None else ""
        for i, s in enumerate(shapes):
            j = int(best[i])
            k = i * nc + j
            out.append(KernelCost(label, float(body[i, j]), float(comp[k]), float(mem[k]), launches,
                                  cfg_text(candidates[j]) + suffix, " ".join(f"{key}={v}" for key, v in s.items()),
                                  tuple(float(p[k]) for p in parts), a.codegen))
        return out

    def _price(self, kind: str, shapes: list[tuple], build) -> list[KernelCost]:
        missing = [s for s in dict.fromkeys(shapes) if (kind, s) not in self._cache]
        if missing:
            for s, cost in zip(missing, build(missing)):
                self._cache[(kind, s)] = cost
        return [self._cache[(kind, s)] for s in shapes]

    # ------------------------------------------------------------------ GEMM
    def gemm(self, shapes: list[tuple[int, int, int]], codegen: str = DEFAULT_GEMM_CODEGEN) -> list[KernelCost]:
        """(M, N, K) -> cost of C[M,N] = A[M,K] @ W[N,K]^T in bf16 on one rank, compiled by ``codegen``:
        ``linear.tile``, the weight K-major as a model's linear layers hold it (not gemm.tile's
        [K, N] B, whose small-M rows stream: docs/analysis.md, "The weight stream, landed")."""
        shapes = [(max(1, int(m)), max(1, int(n)), max(1, int(k))) for m, n, k in shapes]
        if self.tiled:
            cands = [dict(TM=a, TN=b, TK=c, STAGES=d) for a, b, c, d in GEMM_CANDIDATES_TILED]
            return self._price("gemm", shapes, lambda miss: self._best(
                "sip_gemm", None, [dict(M=m, N=n, K=k) for m, n, k in miss], cands, 1, "sip_gemm",
                lambda c: " ".join(f"{k}={v}" for k, v in c.items())))
        cands = [dict(BM=a, BN=b, BK=c, WARPS=d, STAGES=e, GROUP_M=8) for a, b, c, d, e in GEMM_CANDIDATES_GPU]
        return self._price(f"gemm/{codegen}", shapes, lambda miss: self._best(
            "linear", None, [dict(M=m, N=n, K=k) for m, n, k in miss], cands, 1, "linear",
            lambda c: " ".join(f"{k}={v}" for k, v in c.items() if k != "GROUP_M"), codegen))

    def gemm_fp8(self, shapes: list[tuple[int, int, int]], codegen: str = DEFAULT_GEMM_CODEGEN) -> list[KernelCost]:
        """(M, N, K) -> cost of C[M,N] (bf16) = A[M,K] @ B[K,N] with fp8 e4m3 operands on one rank:
        ``gemm_fp8.tile`` (B stored K-major, as fp8 tensor cores read it; the schedule of gemm.tile),
        analysed at the shape: fp8 bytes and the fp8 tensor-core rate come from the kernel itself."""
        if self.tiled:
            raise TfxError("no fp8 GEMM kernel for tiled profiles")
        shapes = [(max(1, int(m)), max(1, int(n)), max(1, int(k))) for m, n, k in shapes]
        cands = [dict(BM=a, BN=b, BK=c, WARPS=d, STAGES=e, GROUP_M=8) for a, b, c, d, e in GEMM_CANDIDATES_GPU]
        return self._price(f"gemm_fp8/{codegen}", shapes, lambda miss: self._best(
            "gemm_fp8", None, [dict(M=m, N=n, K=k) for m, n, k in miss], cands, 1, "gemm_fp8",
            lambda c: " ".join(f"{k}={v}" for k, v in c.items() if k != "GROUP_M"), codegen))

    def gemm_weight_only(self, shapes: list[tuple[int, int, int]], bits: int,
                         codegen: str = DEFAULT_GEMM_CODEGEN) -> list[KernelCost]:
        """(M, N, K) -> cost of C[M,N] (bf16) = A[M,K] (bf16) @ dequant(W)[K,N] with ``bits``-bit
        weights converted to bf16 in registers before the bf16 mma: ``gemm_w4a16.tile`` (4-bit,
        one bf16 scale per 128 K elements; K rounded up to a whole group) or ``gemm_w8a16.tile``
        (fp8 weights, one scale per output channel), analysed at the shape."""
        if self.tiled:
            raise TfxError("no weight-only GEMM kernel for tiled profiles")
        name = {4: "gemm_w4a16", 8: "gemm_w8a16"}.get(bits)
        if name is None:
            raise TfxError(f"no weight-only GEMM kernel for {bits}-bit weights (4 or 8)")
        group = 128 if bits == 4 else 1
        shapes = [(max(1, int(m)), max(1, int(n)), -(-max(1, int(k)) // group) * group) for m, n, k in shapes]
        cands = [dict(BM=a, BN=b, BK=c, WARPS=d, STAGES=e, GROUP_M=8) for a, b, c, d, e in WEIGHT_ONLY_CANDIDATES_GPU]
        return self._price(f"{name}/{codegen}", shapes, lambda miss: self._best(
            name, None, [dict(M=m, N=n, K=k) for m, n, k in miss], cands, 1, name,
            lambda c: " ".join(f"{k}={v}" for k, v in c.items() if k != "GROUP_M"), codegen))

    def gemm_w4a16(self, shapes, codegen: str = DEFAULT_GEMM_CODEGEN):
        return self.gemm_weight_only(shapes, 4, codegen)

    def gemm_w8a16(self, shapes, codegen: str = DEFAULT_GEMM_CODEGEN):
        return self.gemm_weight_only(shapes, 8, codegen)

    # ------------------------------------------------------------------ attention
    def decode_attention(self, shapes: list[tuple[int, int, int, int, int]]) -> list[KernelCost]:
        """(B, HQ, HKV, SKV, D): one new token per sequence over SKV cached tokens."""
        shapes = [tuple(max(1, int(x)) for x in s) for s in shapes]
        if self.tiled:
            # The tiled kernel is batch 1: B sequences run as B x HKV KV heads (HQ scaled alike).
            cands = [dict(BLOCK=b) for b in DECODE_CANDIDATES_TILED]
            return self._price("decode", shapes, lambda miss: self._best(
                "sip_decode_attention", "decode_attention_composite",
                [dict(CTX=skv, HQ=b * hq, HKV=b * hkv, D=d) for b, hq, hkv, skv, d in miss],
                cands, 2, "sip_decode_attention", lambda c: f"BLOCK={c['BLOCK']}"))
        cands = [dict(SPLITS=s, BLOCK_N=b, WARPS=4) for s, b in DECODE_CANDIDATES_GPU]
        return self._price("decode", shapes, lambda miss: self._best(
            "gqa_decode", None, [dict(B=b, HQ=hq, HKV=hkv, SKV=skv, D=d) for b, hq, hkv, skv, d in miss],
            cands, 2, "gqa_decode", lambda c: f"SPLITS={c['SPLITS']} BLOCK_N={c['BLOCK_N']}"))

    def prefill_attention(self, shapes: list[tuple[int, int, int, int]]) -> list[KernelCost]:
        """(B, H, S, D): causal attention over S new tokens (FlashAttention-2 forward)."""
        shapes = [tuple(max(1, int(x)) for x in s) for s in shapes]
        if self.tiled:
            return self._price("prefill", shapes, lambda miss: [self._prefill_formula(*s) for s in miss])
        cands = [dict(BLOCK_M=128, BLOCK_N=bn, WARPS=8, STAGES=st) for bn, st in PREFILL_CANDIDATES_GPU]
        return self._price("prefill", shapes, lambda miss: self._best(
            "flash_prefill", None, [dict(B=b, H=h, S=s, D=d) for b, h, s, d in miss], cands, 1,
            "flash_prefill", lambda c: f"BLOCK_N={c['BLOCK_N']} STAGES={c['STAGES']}"))

    def _prefill_formula(self, b, h, s, d) -> KernelCost:
        flops = 2 * 2 * b * h * s * s * d / 2            # QK^T and PV, causal half
        bytes_ = 4 * b * h * s * d * 2                    # Q, K, V read, O written, bf16
        peak = self.profile.peak_flops_per_s("tensor", "bf16") / 1e9
        bw = self.profile.memory_bandwidth(dram_level(self.profile), aggregate=True) / 1e9
        c, m = flops / peak, bytes_ / bw
        return KernelCost("roofline formula", max(c, m), c, m, 1, "no tiled prefill kernel",
                          f"B={b} H={h} S={s} D={d}")

    # ------------------------------------------------------------------ elementwise
    def copy(self, elements: list[int]) -> list[KernelCost]:
        """A kernel that reads and writes ``elements`` bf16 values (2 x 2 x N bytes)."""
        elements = [max(1, int(n[0] if isinstance(n, tuple) else n)) for n in elements]
        if self.tiled:
            return self._price("copy", [(n,) for n in elements],
                               lambda miss: [self._bw_formula("bandwidth formula", 4 * n, f"N={n}") for (n,) in miss])
        cands = [dict(BLOCK=b, WARPS=4) for b in COPY_CANDIDATES]
        return self._price("copy", [(n,) for n in elements], lambda miss: self._best(
            "copy", None, [dict(N=n) for (n,) in miss], cands, 1, "copy", lambda c: f"BLOCK={c['BLOCK']}"))

    def rmsnorm(self, shapes: list[tuple[int, int]]) -> list[KernelCost]:
        shapes = [(max(1, int(m)), max(1, int(n))) for m, n in shapes]
        if self.tiled:
            return self._price("rmsnorm", shapes, lambda miss: [
                self._bw_formula("bandwidth formula", 4 * m * n + 2 * n, f"M={m} N={n}") for m, n in miss])
        cands = [dict(BLOCK_M=b, WARPS=w) for b, w in RMSNORM_CANDIDATES]
        return self._price("rmsnorm", shapes, lambda miss: self._best(
            "rmsnorm", None, [dict(M=m, N=n) for m, n in miss], cands, 1, "rmsnorm",
            lambda c: f"BLOCK_M={c['BLOCK_M']} WARPS={c['WARPS']}"))

    def softmax(self, shapes: list[tuple[int, int]]) -> list[KernelCost]:
        shapes = [(max(1, int(m)), max(1, int(n))) for m, n in shapes]
        if self.tiled:
            return self._price("softmax", shapes, lambda miss: [
                self._bw_formula("bandwidth formula", 4 * m * n, f"M={m} N={n}") for m, n in miss])
        cands = [dict(BLOCK_M=b, WARPS=w) for b, w in SOFTMAX_CANDIDATES]
        return self._price("softmax", shapes, lambda miss: self._best(
            "softmax", None, [dict(M=m, N=n) for m, n in miss], cands, 1, "softmax",
            lambda c: f"BLOCK_M={c['BLOCK_M']} WARPS={c['WARPS']}"))

    def _bw_formula(self, label: str, nbytes: float, params: str) -> KernelCost:
        level = dram_level(self.profile)
        bw = self.profile.memory_bandwidth(level, aggregate=True) / 1e9
        lat = float(self.profile.get(f"memory.{level}.latency", 0.0) or 0.0)
        m = nbytes / bw
        return KernelCost(label, m + lat, 0.0, m, 1, f"bytes / bw + latency ({format_time_ns(lat, 3)})", params)


_PRICERS: dict[tuple, KernelPricer] = {}


def pricer_for(profile, key: tuple) -> KernelPricer:
    """A cached pricer per (profile name, knobs) key: shapes repeat across calls."""
    p = _PRICERS.get(key)
    if p is None:
        p = _PRICERS[key] = KernelPricer(profile)
    return p
