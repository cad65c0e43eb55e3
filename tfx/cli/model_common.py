"""Arguments and printing shared by the ``tfx model`` latency-level subcommands."""

from __future__ import annotations

from tfx.assignments import BATCH_RANGE, CONTEXT_RANGE
from tfx.cli.common import float_arg, int_arg, parse_assignments
from tfx.model.schema import DTYPE_BYTES
from tfx.analysis.codegen import CODEGENS
from tfx.model.system import (DEFAULT_GEMM_CODEGEN, DEFAULT_RUNTIME, GPU_PLACES, KERNELS, RUNTIMES, TILED_PLACES,
                              Parallelism, Workload, load_system, runtime_kernels)

PLACES = tuple(dict.fromkeys(GPU_PLACES + TILED_PLACES))


def add_workload_args(p, hw_default: str = "h200_sxm") -> None:
    p.add_argument("--model", required=True, help="a preset name or a path to a preset TOML")
    p.add_argument("--hw", default=hw_default, help=f"hardware profile (default {hw_default}; h200_nvl8, sip)")
    p.add_argument("--mode", choices=("decode", "prefill"), default="decode")
    p.add_argument("--batch", type=int_arg(*BATCH_RANGE), default=1)
    p.add_argument("--ctx", type=int_arg(*CONTEXT_RANGE), default=8192, help="context tokens (decode: cached + new; prefill: prompt)")
    p.add_argument("--weight-dtype", choices=tuple(DTYPE_BYTES), default="bf16")
    p.add_argument("--act-dtype", choices=tuple(DTYPE_BYTES), default="bf16")
    p.add_argument("--kv-dtype", choices=tuple(DTYPE_BYTES), default="bf16")
    p.add_argument("--runtime", "--kernels", dest="runtime", choices=(*RUNTIMES, *KERNELS), default=DEFAULT_RUNTIME,
                   help="the runtime a step is priced for: engine = a serving engine's fused kernels under "
                        "CUDA graphs (default); pytorch-graph = one kernel per PyTorch op, replayed as a CUDA "
                        "graph (the measured reference). --kernels fused|eager are the older names")
    p.add_argument("--gemm-codegen", choices=tuple(CODEGENS), default=DEFAULT_GEMM_CODEGEN,
                   help="the code generator the GEMMs are priced as: cutlass (default: serving engines' and "
                        "cuBLAS' TMA copies and hand-pipelined wgmma) or triton (Triton-compiled GEMMs)")
    p.add_argument("--knob", action="append", metavar="PATH=VALUE", help="profile knob (repeatable, or several as K=V,K=V)")
    p.add_argument("--bandwidth", choices=("attainable", "datasheet", "measured", "vendor"), default="attainable",
                   help="price kernels at the attainable bandwidth (datasheet x memory.gmem.efficiency, "
                        "as `tfx hw show` states it; default) or the datasheet (measured/vendor: older names)")
    p.add_argument("--capacity", type=float_arg(1e-6, 1e6), default=None, help="memory per device in GB (overrides the profile)")
    p.add_argument("--launch-us", type=float_arg(0, 1e6), default=None, help="per-kernel launch cost under CUDA graphs, us")
    p.add_argument("--json", action="store_true", help="print JSON")


#: The options that make a Parallelism, with their defaults (add_parallel_args).
PARALLEL_DEFAULTS = {"tp": 1, "cp": 1, "pp": 1, "dp": 1, "ep": 1, "kv_shard": "heads", "cp_ring": "kv",
                     "tp_place": "auto", "cp_place": "auto"}


def parallel_where(args) -> str:
    """Where a refused parallelism came from, as a refusal names its place: the parallelism
    options given other values than their defaults (``--tp``, ``--tp, --ep``); ``--tp`` where
    none were (the defaults are one device, always meaningful)."""
    given = [f"--{name.replace('_', '-')}" for name, default in PARALLEL_DEFAULTS.items()
             if getattr(args, name, default) != default]
    return ", ".join(given) or "--tp"


def add_parallel_args(p) -> None:
    for name in ("tp", "cp", "pp", "dp", "ep"):
        p.add_argument(f"--{name}", type=int_arg(1, 2 ** 16), default=PARALLEL_DEFAULTS[name])
    p.add_argument("--kv-shard", choices=("heads", "seq"), default=PARALLEL_DEFAULTS["kv_shard"],
                   help="heads: KV heads across TP (replicated when fewer than TP); seq: replicas split the context")
    p.add_argument("--cp-ring", choices=("kv", "q"), default=PARALLEL_DEFAULTS["cp_ring"], help="rotate K/V, or Q with O/m/l")
    p.add_argument("--tp-place", choices=PLACES, default=PARALLEL_DEFAULTS["tp_place"], help="GPU: node|cross; sip: device|cube|pe")
    p.add_argument("--cp-place", choices=PLACES, default=PARALLEL_DEFAULTS["cp_place"], help="GPU: node|cross; sip: device|cube|pe")
    p.add_argument("--devices", type=int_arg(1, 2 ** 20), default=None, help="check that the configuration uses this many devices")


def gemm_text(gemm_codegen: str, kind: str | None) -> str:
    """The runtime line's account of the step's GEMMs: the code generator they are priced as on
    a GPU (Workload.gemm_codegen); a tiled profile runs its own sip_gemm kernel, which has none."""
    return f"GEMMs compiled as {gemm_codegen}" if kind != "tiled" else "GEMMs as the tiled sip_gemm kernel"


def profile_kind(hw: str) -> str | None:
    """``gpu`` or ``tiled`` for a saved result's profile name, None where it no longer loads."""
    from tfx.errors import TfxError
    from tfx.hw import load_profile
    try:
        return "gpu" if load_profile(hw).kind == "gpu" else "tiled"
    except TfxError:
        return None


def workload(args) -> Workload:
    return Workload(args.mode, args.ctx, args.batch, args.weight_dtype, args.act_dtype, args.kv_dtype,
                    runtime_kernels(getattr(args, "runtime", DEFAULT_RUNTIME)),
                    getattr(args, "gemm_codegen", DEFAULT_GEMM_CODEGEN))


def parallelism(args) -> Parallelism:
    return Parallelism(args.tp, args.cp, args.pp, args.dp, args.ep, args.kv_shard, args.cp_ring,
                       args.tp_place, args.cp_place)


def system(args):
    return load_system(args.hw, knobs=parse_assignments(args.knob, "--knob"), bandwidth=args.bandwidth,
                       capacity=args.capacity * 1e9 if args.capacity else None,
                       launch_ns=args.launch_us * 1e3 if args.launch_us is not None else None, option="--hw")
