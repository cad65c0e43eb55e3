"""Workload, parallelism and the hardware system the model level runs on.

* :class:`Workload`: prefill or decode, context, batch, dtypes.
* :class:`Parallelism`: TP, CP, PP, DP, EP degrees, KV sharding, CP ring
  variant, placements of the TP and CP groups on the hardware hierarchy.
* :class:`System`: one profile seen as a machine of many devices: memory per
  device, devices per node, the link of each placement level, the per-launch
  cost under CUDA graphs.

Rank order (inner to outer): TP, CP, DP, PP. A group whose span (stride x
size) fits in a node runs on the intra-node link (NVLink; on ``sip``
chip-to-chip), otherwise on the inter-node link (InfiniBand). ``place``
overrides it: ``node`` (must fit), ``cross`` (one member per node). On the
tiled ``sip`` TP and CP may also be placed *inside* one SIP, at ``cube`` level
(the die-to-die links, at most 8) or ``pe`` level (PE-to-PE inside a cube up
to 8, die-to-die beyond, at most 64): the group then shares one device, whose
kernels run the group's whole (unsharded) work across its cubes and PEs, and
only the group's collective crosses the on-package links.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from tfx.analysis.codegen import CODEGENS, CUTLASS
from tfx.errors import TfxError, argument_error
from tfx.hw.units import format_plain
from tfx.model.schema import DTYPE_BYTES, ModelConfig
from tfx.present import formatting as fmt

#: Per-launch cost under CUDA graphs when the profile states none
#: (``launch.graph_overhead``): the gap between back-to-back graph nodes on
#: Hopper is of the order of 1-2 us (kernel launch latency + prologue/epilogue
#: ramp). An estimate, not measured here; see docs/model-latency.md.
DEFAULT_GRAPH_LAUNCH_NS = {"gpu": 1500.0, "tiled": 2000.0}

#: Memory a device keeps aside from weights, KV and activations: CUDA context,
#: library workspaces (cuBLAS, attention split buffers), NCCL buffers. Estimate.
DEFAULT_WORKSPACE_BYTES = {"gpu": 2 * 2**30, "tiled": 256 * 2**20}

#: ``sip`` states no HBM capacity; this placeholder per PE (x 64 PEs = 128 GiB
#: per SIP) is used until one is given (``capacity=``, ``--capacity``).
DEFAULT_TILED_CAPACITY_PER_PE = 2 * 2**30

MODES = ("decode", "prefill")
#: Kernel structure of a step. ``eager``: one kernel per PyTorch op of a plain
#: implementation (the measured reference, bench/h200/measure.py section 4:
#: RMSNorm as 8 kernels, RoPE as 5 per tensor, unfused q/k/v and gate/up GEMMs,
#: cuBLAS split-K reduce kernels, ...); ``fused``: a serving engine's fused
#: kernels (fused qkv and gate/up GEMMs, one kernel per norm, RoPE, activation).
#: Counts per layer in docs/model-latency.md.
KERNELS = ("eager", "fused")

#: The runtime a step is priced for, by name: its kernel structure (:data:`KERNELS`) and
#: how it launches. Shown on every latency output; docs/model-latency.md says how each
#: was derived.
#:
#: * ``engine``: a serving engine (vLLM, TensorRT-LLM, SGLang, NIM) replaying CUDA graphs
#:   of fused kernels: fused qkv and gate/up GEMMs, one kernel per norm, RoPE and
#:   activation. Closest to what users run to serve: the default. A plain PyTorch step
#:   compiled with torch.compile and replayed as a graph (311-419 kernels for the
#:   issue-17 shapes) agrees with it within 1-14%.
#: * ``pytorch-graph``: a plain PyTorch model (one kernel per op: RMSNorm as 8 kernels,
#:   RoPE as 5 per tensor, unfused q/k/v and gate/up, cuBLAS split-K reduces) captured
#:   once and replayed as a CUDA graph; measured in bench/h200/measure.py section 4.
RUNTIMES = {
    "engine": ("fused", "serving engine: fused kernels replayed as CUDA graphs (vLLM, TensorRT-LLM, SGLang)"),
    "pytorch-graph": ("eager", "plain PyTorch ops, one kernel each, replayed as a CUDA graph"),
}
RUNTIME_OF_KERNELS = {kernels: name for name, (kernels, _) in RUNTIMES.items()}
DEFAULT_RUNTIME = "engine"


def runtime_kernels(name: str) -> str:
    """The kernel structure of runtime ``name`` (``eager``/``fused`` accepted as their runtimes)."""
    if name in KERNELS:
        return name
    if name not in RUNTIMES:
        raise TfxError(f"unknown runtime {name!r}; known: {', '.join(RUNTIMES)}")
    return RUNTIMES[name][0]
#: The code generator the model level prices a step's GEMMs as, unless a workload names another
#: of tfx.analysis.codegen.CODEGENS (``Workload.gemm_codegen``, ``--gemm-codegen``, the default of
#: tfx.model.kernels): the GEMMs serving engines (TensorRT-LLM, vLLM) and PyTorch (cuBLAS) ship on
#: Hopper are CUTLASS 3 / cuBLAS mainloops (tfx.analysis.codegen's docstring).
DEFAULT_GEMM_CODEGEN = CUTLASS.name
KV_SHARDS = ("heads", "seq")
CP_RINGS = ("kv", "q")
GPU_PLACES = ("auto", "node", "cross")
TILED_PLACES = ("auto", "device", "cube", "pe")


@dataclass(frozen=True)
class Workload:
    """One forward step. Decode: one new token per sequence over ``context``
    tokens (cached + new). Prefill: ``context`` new tokens per sequence.
    ``kernels``: ``eager`` (one kernel per PyTorch op, the measured reference)
    or ``fused`` (a serving engine's fused kernels); see :data:`KERNELS`."""

    mode: str = "decode"
    context: int = 8192
    batch: int = 1
    weight_dtype: str = "bf16"
    act_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    kernels: str = "fused"
    # the code generator of the step's GEMMs (tfx.analysis.codegen): cutlass, as serving engines
    # and PyTorch (cuBLAS) ship them; triton for Triton-compiled GEMMs (torch.compile's, say)
    gemm_codegen: str = DEFAULT_GEMM_CODEGEN

    def __post_init__(self):
        if self.mode not in MODES:
            raise TfxError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.kernels not in KERNELS:
            raise TfxError(f"kernels must be one of {', '.join(KERNELS)}, got {self.kernels!r}")
        if self.gemm_codegen not in CODEGENS:
            raise TfxError(f"gemm_codegen must be one of {', '.join(CODEGENS)}, got {self.gemm_codegen!r}")
        if self.context < 1 or self.batch < 1:
            raise TfxError(f"context and batch must be >= 1, got {self.context}, {self.batch}")
        for d in (self.weight_dtype, self.act_dtype, self.kv_dtype):
            if d not in DTYPE_BYTES:
                raise TfxError(f"unknown dtype {d!r}; known: {', '.join(DTYPE_BYTES)}")

    @property
    def runtime(self) -> str:
        """The named runtime of this step's kernel structure (:data:`RUNTIMES`)."""
        return RUNTIME_OF_KERNELS[self.kernels]

    @property
    def runtime_description(self) -> str:
        return f"{self.runtime} ({RUNTIMES[self.runtime][1]})"

    @property
    def new_tokens(self) -> int:
        """New tokens per sequence in this step."""
        return 1 if self.mode == "decode" else self.context

    def to_json(self) -> dict:
        return {**asdict(self), "runtime": self.runtime}


@dataclass(frozen=True)
class Parallelism:
    tp: int = 1
    cp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    kv_shard: str = "heads"     # heads: KV heads across TP (replicated when G < TP); seq: replicas split the context
    cp_ring: str = "kv"         # kv: rotate K/V; q: rotate Q with O/m/l
    tp_place: str = "auto"
    cp_place: str = "auto"

    def __post_init__(self):
        for name in ("tp", "cp", "pp", "dp", "ep"):
            if getattr(self, name) < 1:
                raise TfxError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.kv_shard not in KV_SHARDS:
            raise TfxError(f"kv_shard must be one of {', '.join(KV_SHARDS)}, got {self.kv_shard!r}")
        if self.cp_ring not in CP_RINGS:
            raise TfxError(f"cp_ring must be one of {', '.join(CP_RINGS)}, got {self.cp_ring!r}")
        for name in ("tp_place", "cp_place"):
            if getattr(self, name) not in TILED_PLACES + GPU_PLACES:
                raise TfxError(f"{name} must be one of {', '.join(dict.fromkeys(GPU_PLACES + TILED_PLACES))}, "
                               f"got {getattr(self, name)!r}")

    def label(self) -> str:
        parts = [f"tp{self.tp}", f"cp{self.cp}", f"pp{self.pp}", f"dp{self.dp}", f"ep{self.ep}"]
        extra = []
        if self.kv_shard != "heads":
            extra.append(f"kv={self.kv_shard}")
        if self.cp > 1:
            extra.append(f"ring={self.cp_ring}")
        if self.tp_place != "auto":
            extra.append(f"tp@{self.tp_place}")
        if self.cp_place != "auto":
            extra.append(f"cp@{self.cp_place}")
        return " ".join(parts + extra)

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def parse(text: str, flag: str = "--config") -> "Parallelism":
        """``"tp=4,cp=2,pp=1,kv_shard=seq"`` (or ``tp4 cp2``) -> Parallelism; ``flag`` is the
        option the text came from, named by a refusal."""
        kw: dict = {}
        for item in text.replace(",", " ").split():
            if "=" in item:
                k, v = item.split("=", 1)
            else:
                k = item.rstrip("0123456789")
                v = item[len(k):]
            k = k.strip().replace("-", "_")
            aliases = {"kv": "kv_shard", "ring": "cp_ring", "cp_variant": "cp_ring"}
            k = aliases.get(k, k)
            if k not in Parallelism.__dataclass_fields__:
                keys = ", ".join(Parallelism.__dataclass_fields__)
                raise argument_error(flag, f"expected KEY=VALUE with KEY one of {keys}", found=item)
            if k in ("tp", "cp", "pp", "dp", "ep"):
                if not (v.isascii() and v.isdigit()) or int(v) < 1:
                    raise argument_error(flag, f"{k}: expected a whole number >= 1", found=item)
                kw[k] = int(v)
            else:
                kw[k] = v
        try:
            return Parallelism(**kw)
        except TfxError as exc:
            # a value the dataclass refuses (kv=x, tp_place=zz) came from this option's text
            raise argument_error(flag, exc.message) from None


@dataclass(frozen=True)
class Link:
    name: str
    bandwidth: float    # B/s each way
    latency_ns: float

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class System:
    """A profile seen as a multi-device machine."""

    profile: object
    profile_key: tuple
    kind: str
    capacity: float                 # bytes per device
    capacity_note: str
    devices_per_node: int
    intra: Link | None              # within a node
    inter: Link | None              # across nodes
    sub_links: dict = field(default_factory=dict)   # tiled: "pe" -> Link, "cube" -> Link
    sub_units: dict = field(default_factory=dict)   # tiled: "pe" -> 64, "cube" -> 8, "pe_per_cube" -> 8
    launch_ns: float = 1500.0
    launch_note: str = ""
    workspace: float = 0.0
    notes: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.profile.name

    def group_link(self, par: "Parallelism", axis: str) -> tuple["Link | None", str]:
        """The link a parallel group's collectives run on, and where: ``(link, "node")``
        inside a node, ``"cross"`` across nodes, ``"pe"``/``"cube"`` inside one SIP,
        ``"device"`` between SIPs. ``axis`` is tp, cp, ep or pp. The scalar form of
        ``latency._links``'s rule (tests check they agree): on a GPU a group spanning at
        most one node's devices, not placed ``cross``, stays on the intra-node link; on the
        tiled sip TP/CP placed at ``pe`` use the PE-to-PE link while the group (CP strided by
        TP when TP is on PEs too) fits one cube's PEs, else the die-to-die link."""
        if self.kind == "gpu":
            e_dp = max(par.ep // max(par.tp, 1), 1)
            span, place = {"tp": (par.tp, par.tp_place), "cp": (par.tp * par.cp, par.cp_place),
                           "ep": (par.tp * par.cp * e_dp, "auto"),
                           "pp": (par.tp * par.cp * par.dp * par.pp, "auto")}[axis]
            if span <= self.devices_per_node and place != "cross":
                return self.intra, "node"
            return self.inter, "cross"
        if axis in ("tp", "cp"):
            deg, place = (par.tp, par.tp_place) if axis == "tp" else (par.cp, par.cp_place)
            stride = par.tp if axis == "cp" and par.tp_place == "pe" else 1
            if place == "pe" and deg * stride <= self.sub_units["pe_per_cube"]:
                return self.sub_links["pe"], "pe"
            if place in ("cube", "pe"):
                return self.sub_links["cube"], "cube"
        return self.intra, "device"

    def to_json(self) -> dict:
        return {"profile": self.profile.name, "kind": self.kind, "capacity": self.capacity,
                "capacity_note": self.capacity_note, "devices_per_node": self.devices_per_node,
                "intra": self.intra.to_json() if self.intra else None,
                "inter": self.inter.to_json() if self.inter else None,
                "sub_links": {k: v.to_json() for k, v in self.sub_links.items()},
                "launch_ns": self.launch_ns, "launch_note": self.launch_note,
                "workspace": self.workspace, "notes": list(self.notes)}


def _link(profile, name: str, notes: list) -> Link | None:
    if profile.get(f"links.{name}.bandwidth") is None:
        return None
    lat = profile.get(f"links.{name}.latency")
    if lat is None:
        notes.append(f"links.{name}.latency is not stated: taken as 0")
        lat = 0.0
    line = float(profile.value(f"links.{name}.bandwidth"))
    eff = profile.get(f"links.{name}.efficiency")
    if eff is None:
        return Link(name, line, float(lat))
    # collectives move data at the line rate less the library's protocol overhead
    notes.append(f"collectives on {name} at {fmt.bandwidth(line * float(eff), 4)} = line rate "
                 f"{fmt.bandwidth(line, 4)} x links.{name}.efficiency {format_plain(eff)}")
    return Link(name, line * float(eff), float(lat))


def _needed_link(profile, name: str, notes: list) -> Link:
    """A link the tiled model places traffic on; a profile without it is refused by key."""
    link = _link(profile, name, notes)
    if link is None:
        where = f"{profile.source_path or profile.name}:links.{name}.bandwidth"
        raise TfxError(f"the model of a tiled accelerator needs links.{name} (chip-to-chip c2c, "
                       "die-to-die d2d and PE-to-PE pe_pe links), and this profile has none",
                       where=where)
    return link


def load_system(hw: str = "h200_sxm", knobs: dict | None = None, bandwidth: str = "attainable",
                capacity: float | None = None, launch_ns: float | None = None,
                option: str | None = None) -> System:
    """Load profile ``hw`` as a System.

    ``bandwidth="attainable"`` prices kernels at the one attainable-bandwidth rule
    (``tfx.hw.attainable``: datasheet x ``memory.gmem.efficiency``, measured on h200_sxm,
    a sourced fraction elsewhere), which the kernel analysis applies itself;
    ``"datasheet"`` sets the efficiency to 1 (the vendor figure). ``measured`` and
    ``vendor`` are the older names of the two. ``capacity`` (bytes) overrides the
    memory per device. ``option``: the command-line option that gave ``hw`` (tfx.hw.load_profile).
    """
    from tfx.hw import load_profile
    from tfx.hw.attainable import attainable_bandwidth, dram_level
    knobs = dict(knobs or {})
    notes: list[str] = []
    bandwidth = {"measured": "attainable", "vendor": "datasheet"}.get(bandwidth, bandwidth)
    if bandwidth not in ("attainable", "datasheet"):
        raise TfxError(f"bandwidth must be attainable or datasheet, got {bandwidth!r}")
    base = load_profile(hw, option=option)
    if base.kind == "gpu" and bandwidth == "datasheet":
        knobs.setdefault(f"memory.{dram_level(base)}.efficiency", "1")
    profile = base.with_knobs(knobs) if knobs else base
    kind = "gpu" if profile.kind == "gpu" else "tiled"
    if kind == "gpu":
        notes.append("kernels priced at the " + attainable_bandwidth(profile).statement())
    if capacity is not None:
        cap, cap_note = float(capacity), f"given, {fmt.nbytes(float(capacity))} per device (--capacity)"
    elif kind == "gpu":
        cap = float(profile.value("memory.gmem.capacity"))
        cap_note = f"{fmt.nbytes(cap)} per device (memory.gmem.capacity)"
    else:
        per_pe = profile.get("memory.hbm.capacity")
        pes = profile.units_of("pe")
        if per_pe is None:
            per_pe = DEFAULT_TILED_CAPACITY_PER_PE
            cap_note = (f"placeholder {fmt.nbytes(per_pe)} per PE x {pes} PEs "
                        "(memory.hbm.capacity is not published; give --capacity)")
        else:
            cap_note = f"{fmt.nbytes(float(per_pe))} per PE x {pes} PEs (memory.hbm.capacity)"
        cap = float(per_pe) * pes
    dpn = int(profile.get("system.devices_per_node", 1) or 1)
    if kind == "gpu":
        intra = _link(profile, "nvlink", notes) if dpn > 1 else None
        inter = _link(profile, "ib", notes)
        sub_links, sub_units = {}, {}
    else:
        intra = _needed_link(profile, "c2c", notes)
        inter = intra
        sub_links = {"pe": _needed_link(profile, "pe_pe", notes), "cube": _needed_link(profile, "d2d", notes)}
        sub_units = {"pe": profile.units_of("pe"), "cube": profile.units_of("cube"),
                     "pe_per_cube": profile.units_of("pe") // profile.units_of("cube")}
    graph = profile.get("launch.graph_overhead")
    measured = _measured_graph_launch(profile.name) if kind == "gpu" else None
    if launch_ns is not None:
        lns, lnote = float(launch_ns), f"given, {fmt.ns(float(launch_ns), 3)} per kernel (--launch-us)"
    elif graph is not None:
        lns, lnote = float(graph), f"{fmt.ns(float(graph), 3)} per kernel under CUDA graphs (launch.graph_overhead)"
    elif measured is not None:
        lns, lnote = measured
    else:
        lns = DEFAULT_GRAPH_LAUNCH_NS[kind]
        lnote = f"estimate {fmt.ns(lns, 3)} per kernel under CUDA graphs (profile states no launch.graph_overhead)"
    key = (profile.name, tuple(sorted((str(k), str(v)) for k, v in knobs.items())))
    return System(profile=profile, profile_key=key, kind=kind, capacity=cap, capacity_note=cap_note,
                  devices_per_node=dpn, intra=intra, inter=inter, sub_links=sub_links,
                  sub_units=sub_units, launch_ns=lns, launch_note=lnote,
                  workspace=DEFAULT_WORKSPACE_BYTES[kind], notes=notes)


def _measured_graph_launch(profile_name: str):
    """(ns, note) from calibration/h200/measured/launch.csv for H200 profiles: the spacing of
    empty Triton kernels inside a 100-launch CUDA graph (the fixed cost a kernel pays on top of
    its analysed body); None when the file is absent or not an H200."""
    if not profile_name.startswith("h200"):
        return None
    import csv
    from tfx.bundled import bundled_file
    path = bundled_file("calibration/h200/measured/launch.csv")
    try:
        with open(path) as f:
            for row in csv.DictReader(f):
                if row["kernel"] == "triton_empty" and row["method"] == "cuda_graph_100":
                    us = float(row["us_per_launch"])
                    return us * 1e3, (f"measured {fmt.ns(us * 1e3, 3)} per kernel inside a CUDA graph "
                                      "(calibration/h200/measured/launch.csv, triton_empty cuda_graph_100)")
    except (OSError, KeyError, ValueError):
        return None
    return None


def validate(model: ModelConfig, wl: Workload, par: Parallelism, system: System) -> list[str]:
    """Reasons ``par`` is meaningless or impossible here (empty when it is fine)."""
    why = []
    if par.pp > model.num_layers:
        why.append(f"pp {par.pp} > {model.num_layers} layers")
    if par.tp > model.num_attention_heads:
        why.append(f"tp {par.tp} > {model.num_attention_heads} query heads")
    elif model.num_attention_heads % par.tp:
        why.append(f"tp {par.tp} does not divide {model.num_attention_heads} query heads")
    kv = model.num_kv_heads
    if model.mla is None and par.kv_shard == "heads" and par.tp > 1:
        # each rank holds whole KV heads: tp divides them, or (fewer heads) each is replicated
        # on tp / kv ranks
        if par.tp <= kv and kv % par.tp:
            why.append(f"tp {par.tp} does not divide {kv} KV heads (a rank holds whole heads)")
        elif par.tp > kv and par.tp % kv:
            why.append(f"tp {par.tp} is not a multiple of {kv} KV heads (each head is replicated "
                       "on tp / heads ranks)")
    if par.dp > wl.batch:
        why.append(f"dp {par.dp} > batch {wl.batch}: a replica without a sequence")
    if par.cp > 1 and wl.mode == "prefill" and par.cp > wl.context:
        why.append(f"cp {par.cp} > {wl.context} tokens")
    if par.ep > 1:
        if not model.is_moe:
            why.append("ep > 1 on a dense model")
        elif par.ep > model.moe.num_experts:
            why.append(f"ep {par.ep} > {model.moe.num_experts} experts")
        elif model.moe.num_experts % par.ep:
            why.append(f"ep {par.ep} does not divide {model.moe.num_experts} experts")
        if (par.tp * par.dp) % par.ep:
            why.append(f"ep {par.ep} must divide tp x dp = {par.tp * par.dp} (the EP group is made of TP and DP ranks)")
        elif par.ep > par.tp and par.dp == 1:
            why.append("ep > tp spans data-parallel replicas but dp = 1")
    if par.cp == 1 and par.cp_ring != "kv":
        why.append("a CP ring variant with cp = 1")
    if par.cp == 1 and par.cp_place != "auto":
        why.append("a CP placement with cp = 1")
    if par.tp == 1 and par.tp_place != "auto":
        why.append("a TP placement with tp = 1")
    if par.kv_shard == "seq" and (model.mla is None and par.tp <= model.num_kv_heads):
        why.append("kv_shard=seq needs fewer KV heads than tp (nothing is replicated otherwise)")
    if par.kv_shard == "seq" and model.mla is not None and par.tp == 1:
        why.append("kv_shard=seq with tp = 1")
    for name, place in (("tp", par.tp_place), ("cp", par.cp_place)):
        if system.kind == "gpu" and place not in GPU_PLACES:
            why.append(f"{name}_place {place!r} is for the tiled sip (GPU: {', '.join(GPU_PLACES)})")
        if system.kind == "tiled" and place == "node" or system.kind == "tiled" and place == "cross":
            why.append(f"{name}_place {place!r} is for GPUs (sip: {', '.join(TILED_PLACES)})")
    if system.kind == "tiled":
        sub = [(n, d, p) for n, d, p in (("tp", par.tp, par.tp_place), ("cp", par.cp, par.cp_place))
               if p in ("cube", "pe")]
        if sum(1 for _, _, p in sub if p == "cube") and any(
                d > system.sub_units["cube"] for _, d, p in sub if p == "cube"):
            why.append(f"a cube-level group larger than {system.sub_units['cube']} cubes")
        total = 1
        for _, d, _ in sub:
            total *= d
        if total > system.sub_units.get("pe", 1):
            why.append(f"groups inside one SIP need {total} PEs > {system.sub_units['pe']}")
    devices = device_count(par, system)
    if devices > system.devices_per_node and system.devices_per_node == 1 and system.kind == "gpu":
        nodes = node_profiles_for(system.name)
        use = (f"use {' or '.join(nodes)} ({'an' if len(nodes) == 1 else 'each an'} NVLink/NVSwitch node of "
               f"{system.name} GPUs with a NIC per GPU)" if nodes else
               "no bundled node profile is built on it: write one with `base`, links.nvlink, links.ib and "
               "system.devices_per_node (see hw_profiles/h100_hgx8.toml)")
        why.append(f"{devices} devices: profile {system.name} is a single GPU (system.devices_per_node = 1); {use}")
    elif devices > system.devices_per_node and system.inter is None:
        why.append(f"{devices} devices need more than one node and profile {system.name} states no "
                   "inter-node link (links.ib)")
    return why


def not_meaningful_message(par: Parallelism, why: list[str]) -> str:
    """The refusal of a parallelism :func:`validate` found reasons against."""
    return f"parallelism {par.label()} is not meaningful here: " + "; ".join(why)


def node_profiles_for(profile_name: str) -> list[str]:
    """Bundled multi-GPU node profiles built on ``profile_name``: the first single-GPU profile up
    their ``base`` chain is it (h200_nvl8 is an H200 node, not an H100 one, though h200_sxm
    itself inherits from h100_sxm). Sorted."""
    import tomllib
    from tfx.hw import list_profiles, profiles_dir

    bases: dict[str, str] = {}
    nodes: set[str] = set()
    for name in list_profiles():
        try:
            data = tomllib.loads((profiles_dir() / f"{name}.toml").read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if isinstance(data.get("base"), str):
            bases[name] = data["base"]
        dpn = data.get("system", {}).get("devices_per_node", {})
        if isinstance(dpn, dict) and isinstance(dpn.get("value"), int) and dpn["value"] > 1:
            nodes.add(name)
    out = []
    for node in sorted(nodes):
        chip, seen = bases.get(node), {node}      # the first single-GPU profile up the chain
        while chip in nodes and chip not in seen:
            seen.add(chip)
            chip = bases.get(chip)
        if chip == profile_name:
            out.append(node)
    return out


def device_count(par: Parallelism, system: System) -> int:
    tp = 1 if par.tp_place in ("cube", "pe") else par.tp
    cp = 1 if par.cp_place in ("cube", "pe") else par.cp
    return tp * cp * par.pp * par.dp


def with_defaults(par: Parallelism, **kw) -> Parallelism:
    return replace(par, **kw)
