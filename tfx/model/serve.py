"""The serving view: throughput per GPU, TTFT and TPOT for a request mix.

A request mix is ``input`` prompt tokens and ``output`` generated tokens per request, with
either a ``concurrency`` (requests in flight) or an arrival ``rate`` (requests/s). Two
deployments:

**Continuous batching with chunked prefill** (vLLM, SGLang, TensorRT-LLM in-flight batching):
a step runs the decode token of each running sequence, and a step that carries a prompt chunk
runs up to ``chunk`` prompt tokens besides. Steps are discrete: the step cost is concave in its
tokens (a few decode rows ride on one weight read; a chunk of ``chunk`` rows does not), so a
step either carries a chunk or it does not; spreading the prompt work evenly over all steps
would under-price the chunk steps. With ``B`` requests in flight, a prompt of ``input`` tokens
takes ``n = ceil(input / chunk)`` chunk steps of ``q = ceil(input / n)`` tokens:

    t_decode = linear(B) + attention_decode(B, input + output / 2)
    t_chunk  = linear(B - 1 + q) + attention_decode(B - 1, ...) + attention_prefill(input) x q / input

``linear(T)``: every stage but the attention core (GEMMs, norms, RoPE, KV write, all-reduces,
launches) of a T-token step, from a prefill step of T tokens with the lm head of B sequences;
``attention_decode``: the attention core of a decode step at the mean context;
``attention_prefill(input)``: the attention core of one whole prompt, spread over its chunks.

The requests form a closed loop (each finishes its prompt, then its ``output - 1`` decode
steps, and is replaced): prompts queue for the one prefill budget (service ``S = n x
t_chunk``) while decoding requests are a delay of ``Z = (output - 1) x TPOT``. Mean-value
analysis of that closed network over ``B`` customers gives the prompt's response time ``R``
(its own chunks plus the wait behind other prompts) and the request rate ``X``:

    R(k) = S x (1 + Q(k - 1)) - U(k - 1) x S / 2,  X(k) = k / (R(k) + Z),  Q(k) = X(k) x R(k),
    U(k) = X(k) x S,  k = 1 .. B   (the prompt in service has S / 2 left: fixed chunk times)
    U = X x S (the share of time a chunk step runs); a decoding request sees the others' share
    u = U x (B - 1) / B, so its mean step is TPOT = 1 / (u / t_chunk + (1 - u) / t_decode)

iterated with ``Z`` to a fixed point. TTFT = R(B); output tokens/s per GPU = X x output / devices.
Mean-value analysis with the residual-service correction (Reiser and Lavenberg's MVA; the
prompt in service has half its fixed service left) approximates the fixed chunk times; it
bounds the wait where the prefill budget saturates (a closed loop never holds more than ``B``
prompts).

**Disaggregated prefill and decode pools** (DistServe, Dynamo, SGLang PD): a prefill instance
runs each prompt alone (a prefill step of ``input`` tokens), ships its KV cache to a decode
instance over the inter-node link (or NVLink inside a node), and decode instances run
batch-``B`` decode steps. Pools are sized so their request rates match; per GPU:

    GPU-seconds per request = devices_p x t_prefill + devices_d x output x t_decode / B
    output tokens/s per GPU = output / that;  TTFT = t_prefill + t_kv;  TPOT = t_decode.

With an arrival ``rate`` the concurrency follows from Little's law, ``B = rate x (TTFT +
output x TPOT)``, solved by fixed-point iteration. The disaggregated pools model no queueing:
their TTFT is the prompt's own work. ``suggest`` sweeps concurrency, chunk and
parallelism for the configuration with the most output tokens/s per GPU that meets
``TTFT <= ttft_ms`` and ``TPOT <= tpot_ms`` and fits memory.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from tfx.errors import TfxError
from tfx.model.kv import kv_bytes_per_token
from tfx.model.latency import LatencyResult, latency
from tfx.model.loading import load_model
from tfx.model.schema import ModelConfig
from tfx.present import formatting as fmt
from tfx.model.system import (Parallelism, System, Workload, device_count, load_system, not_meaningful_message,
                              validate)

#: The attention core of a step: what scales with context rather than with the step's tokens.
ATTENTION_CORE = ("qk_t", "softmax", "pv", "cp_merge", "cp_ring", "kv_seq_merge")

MODES = ("chunked", "disaggregated")


@dataclass(frozen=True)
class RequestMix:
    input: int = 2048                  # prompt tokens per request
    output: int = 256                  # generated tokens per request
    concurrency: int | None = 64       # requests in flight (None: from ``rate``)
    rate: float | None = None          # requests per second (None: from ``concurrency``)

    def __post_init__(self):
        if self.input < 1 or self.output < 1:
            raise TfxError(f"input and output must be >= 1 tokens, got {self.input}, {self.output}")
        if (self.concurrency is None) == (self.rate is None):
            raise TfxError("give either a concurrency or an arrival rate")
        if self.concurrency is not None and self.concurrency < 1:
            raise TfxError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.rate is not None and not self.rate > 0:
            raise TfxError(f"rate must be > 0 requests/s, got {self.rate}")


@dataclass
class ServeResult:
    model: str
    hw: str
    mode: str
    runtime: str
    mix: RequestMix
    parallelism: str
    devices: int                       # per instance (chunked) or prefill + decode instance
    chunk: int
    batch: int                         # decode sequences per step
    prefill_tokens_per_step: float
    step_ns: float                     # one decode step (TPOT)
    ttft_ns: float
    tpot_ns: float
    output_tokens_per_s_per_gpu: float
    requests_per_s_per_gpu: float
    fits: bool
    memory_bytes: float                # per device, the decode side
    capacity: float
    parts: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    knobs: dict = field(default_factory=dict)     # knobs applied to the profile, path -> text
    # what the steps were priced with (Workload.to_json() less mode, batch and context, which the
    # request mix sets): dtypes, runtime, kernels, GEMM code generator
    workload: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        d = asdict(self)
        d["mix"] = asdict(self.mix)
        return d


def _priced_with(wl: Workload) -> dict:
    """The workload's fields a serving result was priced with: all but mode, batch and context."""
    return {k: v for k, v in wl.to_json().items() if k not in ("mode", "batch", "context")}


def _split(r: LatencyResult) -> tuple[float, float, float]:
    """(attention core, lm head + logits gather, everything else) of one priced step, ns."""
    core = head = 0.0
    for s in r.stages:
        base = s.name.split("[")[0]
        if base in ATTENTION_CORE:
            core += s.total_ns
        elif base in ("lm_head", "logits_gather", "final_norm"):
            head += s.total_ns
    return core, head, r.latency_ns - core - head


class StepModel:
    """Prices the parts of chunked and disaggregated steps with ``latency`` (cached by shape)."""

    def __init__(self, model: ModelConfig, system: System, par: Parallelism, wl: Workload):
        self.model, self.system, self.par, self.wl = model, system, par, wl
        self._cache: dict = {}

    def _step(self, mode: str, context: int, batch: int) -> LatencyResult:
        key = (mode, context, batch)
        if key not in self._cache:
            wl = replace(self.wl, mode=mode, context=context, batch=batch)
            self._cache[key] = latency(self.model, self.system, wl, self.par)
        return self._cache[key]

    def linear(self, tokens: int, sequences: int) -> float:
        """Everything but the attention core for a step of ``tokens`` tokens whose lm head runs
        for ``sequences`` sequences."""
        _, _, rest = _split(self._step("prefill", max(1, tokens), 1))
        # the head's cost does not depend on the context: priced on a 1-token decode context
        _, head, _ = _split(self._step("decode", 1, max(1, sequences)))
        return rest + head

    def attention_decode(self, batch: int, context: int) -> float:
        return _split(self._step("decode", max(1, context), max(1, batch)))[0]

    def attention_prefill(self, prompt: int) -> float:
        return _split(self._step("prefill", prompt, 1))[0]

    def prefill(self, prompt: int) -> LatencyResult:
        return self._step("prefill", prompt, 1)

    def decode(self, batch: int, context: int) -> LatencyResult:
        return self._step("decode", max(1, context), max(1, batch))


def _kv_transfer_ns(model: ModelConfig, system: System, wl: Workload, prompt: int) -> tuple[float, str]:
    """Ship one prompt's KV cache from the prefill to the decode instance: over the inter-node
    link per GPU when the profile has one (pools on separate nodes), else NVLink."""
    nbytes = kv_bytes_per_token(model, wl.kv_dtype) * prompt
    link = system.inter or system.intra
    if link is None:
        return 0.0, "one GPU: no transfer"
    return nbytes / link.bandwidth * 1e9 + link.latency_ns, f"{fmt.nbytes(nbytes)} over {link.name}"


def closed_loop(customers: int, service_ns: float, t_decode: float, t_chunk: float, output: int,
                iterations: int = 50) -> tuple[float, float, float]:
    """(TTFT ns, TPOT ns, requests/ns) of ``customers`` requests cycling through one prefill
    budget (service ``service_ns`` per prompt) and ``output - 1`` decode steps, by exact
    mean-value analysis of the closed network (see the module docstring), iterated with the
    decode delay: decode steps stretch while other prompts' chunks run."""
    tpot = t_decode
    for _ in range(iterations):
        think = (output - 1) * tpot
        queue = busy = 0.0
        for k in range(1, customers + 1):
            # the prompts queued ahead each take S; the one in service has S/2 left on average
            # (deterministic service: residual E[S^2] / 2E[S] = S/2, not the memoryless S)
            response = service_ns * (1.0 + queue) - busy * service_ns / 2
            rate = k / (response + think)
            if rate * service_ns > 1.0:
                # the budget's capacity bounds the rate (the S/2 correction can overshoot it at
                # saturation); the prompts not decoding wait at the budget (Little's law)
                rate = 1.0 / service_ns
                response = k / rate - think
            queue = rate * response
            busy = min(1.0, rate * service_ns)
        share = min(1.0, rate * service_ns) * (customers - 1) / customers
        new = 1.0 / (share / t_chunk + (1.0 - share) / t_decode) if t_chunk > 0 else t_decode
        if abs(new - tpot) <= 1e-12 * tpot:
            tpot = new
            break
        tpot = 0.5 * (tpot + new)         # damped: the decode delay and the queue pull opposite ways
    return response, tpot, rate


def serve(model: ModelConfig | str, hw: str | System = "h200_nvl8", mix: RequestMix | None = None,
          parallelism: Parallelism | None = None, workload: Workload | None = None, mode: str = "chunked",
          chunk: int = 2048, decode_parallelism: Parallelism | None = None,
          step_model: StepModel | None = None, where: str | None = None) -> ServeResult:
    """The serving figures of one configuration (see the module docstring). ``where``: the
    command-line options that gave ``parallelism``, which its refusal names."""
    model = load_model(model) if isinstance(model, str) else model
    system = load_system(hw) if isinstance(hw, str) else hw
    mix = mix or RequestMix()
    par = parallelism or Parallelism()
    wl = workload or Workload()
    if mode not in MODES:
        raise TfxError(f"serving mode must be one of {', '.join(MODES)}, got {mode!r}")
    if chunk < 1:
        raise TfxError(f"chunk must be >= 1 token, got {chunk}")
    if par.dp != 1 or par.pp != 1:
        raise TfxError("the serving view prices one model instance: give tp/cp/ep (replicas are more instances)",
                       where=where)
    probe = replace(wl, mode="decode", context=mix.input + mix.output, batch=1)
    why = validate(model, probe, par, system)
    if why:
        raise TfxError(not_meaningful_message(par, why), where=where)
    steps = step_model or StepModel(model, system, par, wl)
    devices = device_count(par, system)
    mean_ctx = mix.input + mix.output // 2
    notes = [f"runtime {wl.runtime_description}"]

    if mode == "chunked":
        n_chunks = math.ceil(mix.input / chunk)
        q = math.ceil(mix.input / n_chunks)

        def at(batch: int):
            t_dec = steps.linear(batch, batch) + steps.attention_decode(batch, mean_ctx)
            others = batch - 1
            t_chunk = (steps.linear(others + q, batch) + (steps.attention_decode(others, mean_ctx) if others else 0.0)
                       + steps.attention_prefill(mix.input) * q / mix.input)
            return (t_dec, t_chunk) + closed_loop(batch, n_chunks * t_chunk, t_dec, t_chunk, mix.output)

        batch = mix.concurrency if mix.concurrency is not None else 1
        t_dec, t_chunk, ttft, tpot, rate = at(batch)
        if mix.rate is not None:
            for _ in range(30):
                want = max(1, round(mix.rate * (ttft + mix.output * tpot) / 1e9))
                if want == batch:
                    break
                batch = want
                t_dec, t_chunk, ttft, tpot, rate = at(batch)
        tps_gpu = rate * 1e9 * mix.output / devices
        dec = steps.decode(batch, mix.input + mix.output)
        busy = min(1.0, rate * n_chunks * t_chunk)             # share of time a chunk step runs
        parts = {"decode_step_ns": t_dec, "chunk_step_ns": t_chunk, "chunk_steps": n_chunks,
                 "chunk_tokens": q, "prefill_busy": busy}
        notes.append(f"{fmt.counted(n_chunks, 'chunk step')} of {fmt.count(q)} prompt tokens per request; chunk steps run "
                     f"{fmt.ratio_pct(busy)} of the time; TTFT includes the wait behind other prompts "
                     "(closed-loop mean-value analysis)")
        prompt_per_step = busy / t_chunk * q / (busy / t_chunk + (1 - busy) / t_dec) if t_chunk > 0 else 0.0
        return ServeResult(model.name, system.name, mode, wl.runtime, mix, par.label(), devices, chunk, batch,
                           prompt_per_step, tpot, ttft, tpot, tps_gpu, tps_gpu / mix.output, dec.fits,
                           sum(dec.memory.values()), dec.capacity, parts, notes, dict(system.profile.knobs),
                           _priced_with(wl))

    dpar = decode_parallelism or par
    dsteps = steps if dpar == par else StepModel(model, system, dpar, wl)
    d_devices = device_count(dpar, system)
    pre = steps.prefill(mix.input)
    t_pre = pre.latency_ns
    t_kv, kv_note = _kv_transfer_ns(model, system, wl, mix.input)
    batch = mix.concurrency if mix.concurrency is not None else 1

    def at(batch: int):
        return dsteps.decode(batch, mean_ctx).latency_ns

    t_dec = at(batch)
    if mix.rate is not None:
        for _ in range(30):
            want = max(1, round(mix.rate * (t_pre + t_kv + mix.output * t_dec) / 1e9))
            if want == batch:
                break
            batch, t_dec = want, at(want)
    notes.append("no queueing delay: TTFT is the prompt's own work in a loaded system")
    gpu_s = devices * t_pre + d_devices * mix.output * t_dec / batch
    tps_gpu = mix.output / gpu_s * 1e9
    dec = dsteps.decode(batch, mix.input + mix.output)
    notes.append(f"prefill pool {par.label()} ({devices} GPU), decode pool {dpar.label()} ({d_devices} GPU); "
                 f"KV transfer {kv_note}")
    parts = {"prefill_ns": t_pre, "kv_transfer_ns": t_kv, "decode_step_ns": t_dec,
             "prefill_gpu_share": devices * t_pre / gpu_s}
    return ServeResult(model.name, system.name, mode, wl.runtime, mix, f"{par.label()} | {dpar.label()}",
                       devices + d_devices, mix.input, batch, 0.0, t_dec, t_pre + t_kv, t_dec, tps_gpu,
                       tps_gpu / mix.output, dec.fits and pre.fits, sum(dec.memory.values()), dec.capacity,
                       parts, notes, dict(system.profile.knobs), _priced_with(wl))


@dataclass
class SuggestResult:
    best: ServeResult | None
    candidates: int
    feasible: int
    ttft_ms: float | None
    tpot_ms: float | None
    frontier: list = field(default_factory=list)      # (tokens/s/GPU, TPOT, TTFT) Pareto points meeting the SLA

    def to_json(self) -> dict:
        return {"best": self.best.to_json() if self.best else None, "candidates": self.candidates,
                "feasible": self.feasible, "ttft_ms": self.ttft_ms, "tpot_ms": self.tpot_ms,
                "frontier": [r.to_json() for r in self.frontier]}


def suggest(model: ModelConfig | str, hw: str | System = "h200_nvl8", mix: RequestMix | None = None,
            workload: Workload | None = None, ttft_ms: float | None = None, tpot_ms: float | None = None,
            max_devices: int | None = None, concurrencies=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
            chunks=(512, 2048, 8192), modes=MODES) -> SuggestResult:
    """The configuration with the most output tokens/s per GPU meeting TTFT and TPOT bounds."""
    import numpy as np

    from tfx.explore.pareto import pareto_front
    model = load_model(model) if isinstance(model, str) else model
    system = load_system(hw) if isinstance(hw, str) else hw
    mix = mix or RequestMix()
    wl = workload or Workload()
    limit = max_devices or system.devices_per_node
    tps = [t for t in (1, 2, 4, 8) if t <= limit and t <= model.num_attention_heads]
    out, candidates = [], 0
    for tp in tps:
        par = Parallelism(tp=tp)
        if validate(model, replace(wl, context=mix.input + mix.output), par, system):
            continue
        steps = StepModel(model, system, par, wl)
        for m in modes:
            for chunk in (chunks if m == "chunked" else (mix.input,)):
                for conc in concurrencies:
                    candidates += 1
                    r = serve(model, system, RequestMix(mix.input, mix.output, conc), par, wl, m, chunk,
                              step_model=steps)
                    if not r.fits:
                        continue
                    if ttft_ms is not None and r.ttft_ns > ttft_ms * 1e6:
                        continue
                    if tpot_ms is not None and r.tpot_ns > tpot_ms * 1e6:
                        continue
                    out.append(r)
    best = max(out, key=lambda r: r.output_tokens_per_s_per_gpu, default=None)
    front = []
    if out:
        obj = np.array([[-r.output_tokens_per_s_per_gpu, r.tpot_ns, r.ttft_ns] for r in out])
        seen = set()
        for i in pareto_front(obj):                 # equal points (chunks that change nothing) once
            key = tuple(obj[i])
            if key not in seen:
                seen.add(key)
                front.append(out[i])
        front.sort(key=lambda r: (r.tpot_ns, r.ttft_ns))
    return SuggestResult(best, candidates, len(out), ttft_ms, tpot_ms, front)
