"""The machine one launch runs on: a profile's per-unit rates (``Machine``: bytes/ns and
flop/ns per SM or PE, DRAM and L2 shares, latencies, dispatch and DMA facts) and the
interconnects between positions (``links_by_mesh``).

Public: the analysis's performance model and the simulator both read rates from here.
"""

from __future__ import annotations

from tfx.analysis import codegen as codegens, mma_layout
from tfx.analysis.numbers import emax, emin, is_array, ratio
from tfx.errors import TfxError


def links_by_mesh(profile) -> dict:
    """Interconnects by the mesh (or level) whose positions they join: ``{name: (B/ns per
    endpoint and direction, all of its links together, one-way latency ns)}``; the fastest
    where several share a scope."""
    links: dict = {}
    level_of = profile.mesh_levels()
    for path, scope in profile.settings():
        if path.startswith("links.") and path.endswith(".scope"):
            name = path[len("links."):-len(".scope")]
            bw = profile.get(f"links.{name}.bandwidth", None)
            if not bw:
                continue
            bw = bw * (profile.get(f"links.{name}.count", 1) or 1) / 1e9
            lat = profile.get(f"links.{name}.latency", 0) or 0
            for mesh in [scope] + [ms for ms, lv in level_of.items() if lv == scope]:
                if mesh not in links or links[mesh][0] < bw:
                    links[mesh] = (bw, lat)
    return links


class Machine:
    """The per-unit rates of one profile, in bytes/ns and flop/ns."""

    def __init__(self, profile, mesh_level: str, codegen=None, positions=None):
        """``positions``: the launch's positions (CTAs on a GPU), of which it keeps
        min(positions, units) busy (None: every unit): the power limit's clock under their
        tensor work (tensor_clock_factor); fixed for the Machine's life."""
        self.profile = profile
        # the code generator whose instruction patterns are priced (tfx.analysis.codegen)
        self.codegen = codegens.lookup(codegen)
        self.kind = profile.kind
        # the instruction set the device runs (sm_90, ...): facts read off compiled binaries
        # apply only where it is theirs (None: the profile does not say; none apply)
        self.isa = profile.get("isa", None)
        self.clock_ghz = profile.clock_hz / 1e9
        self.unit_level = profile.mesh_levels().get(mesh_level, mesh_level)
        self.units = profile.units_of(self.unit_level)
        mems = profile.memory_levels()
        self.global_levels = {n for n, m in mems.items() if m.scope in ("device",) or
                              (m.bandwidth is not None and m.scope == self.unit_level and m.capacity and m.capacity > 1 << 30)}
        self.l2 = next((n for n, m in mems.items() if m.caches), None)
        # DRAM level: the one the cache caches, or the global level with a B/s bandwidth.
        dram = mems[self.l2].caches if self.l2 else next(
            (n for n, m in mems.items() if m.bandwidth is not None and m.scope in ("device", self.unit_level)), None)
        self.dram = dram
        dram_level = mems[dram]
        eff = profile.get(f"memory.{dram}.efficiency", 1.0)
        if dram_level.scope == "device":
            self.dram_bw_device = dram_level.bandwidth * eff / 1e9        # B/ns for the whole device
            self.dram_per_unit = None
        else:                                                              # per-PE HBM channels
            self.dram_bw_device = dram_level.bandwidth * eff * self.units / 1e9
            self.dram_per_unit = dram_level.bandwidth * eff / 1e9
        # a read-only stream's sustained rate (no write turnarounds), where the profile measures it:
        # the device's B/ns, None where it states none (tfx.analysis.memory_parallelism.read_stream_share)
        read_eff = profile.get(f"memory.{dram}.read_efficiency", None)
        self.dram_read_bw_device = (None if read_eff is None or dram_level.scope != "device"
                                    else dram_level.bandwidth * read_eff / 1e9)
        self.dram_latency = dram_level.latency_ns or 0.0
        self.l2_bw_device = (mems[self.l2].bandwidth / 1e9) if self.l2 and mems[self.l2].bandwidth else None
        # the slices' data rate for the SMs' requests and DRAM's fills, device-wide (B/ns;
        # performance.l2_slices_ns); None where the profile states none
        slices = profile.get(f"memory.{self.l2}.slice_bandwidth", None) if self.l2 else None
        self.l2_slice_bw = slices / 1e9 if slices else None
        # the far partitions' fills across the fabric between the L2 partitions, device-wide
        # (B/ns; performance.l2_fabric_ns); None where the profile states none
        fabric = profile.get(f"memory.{self.l2}.fabric_bandwidth", None) if self.l2 else None
        self.l2_fabric_bw = fabric / 1e9 if fabric else None
        self.l2_latency = (mems[self.l2].latency_ns or self.dram_latency) if self.l2 else self.dram_latency
        self.onchip = {n for n, m in mems.items() if m.scope == self.unit_level and n != dram}
        self.onchip_bw = {}
        for n in self.onchip:
            try:
                self.onchip_bw[n] = profile.memory_bandwidth(n) / 1e9
            except TfxError:
                pass
        self.launch_ns = profile.get("launch.overhead", 0.0)
        self.tensor_eff = profile.get("compute.tensor.efficiency", 1.0)
        self._tensor_eff_by_dtype: dict = {}
        # the units the launch keeps busy: the power limit's clock rises as fewer of them run
        # (tensor_clock_factor)
        self.busy_units = self.units if positions is None else emin(positions, self.units)
        self.inst = mma_layout.instruction_shape(profile)
        # the warp mma's own rate (mma.sync; fp8 promoted to f16): tfx.analysis.mma_layout.warp_mma
        self.warp_mma = mma_layout.warp_mma_facts(profile) if self.kind == "gpu" else None
        self.iteration_ns = profile.get("pipeline.iteration_overhead", 0) / self.clock_ghz
        self.dispatch_single = profile.get("dispatch.single_op")
        self.dispatch_composite = profile.get("dispatch.composite")
        # An in-order command processor (dispatch.single_op stated) dispatches a command that
        # waited on another only once it sees that one finish.
        self.completion_ns = (profile.get("dispatch.completion_latency", 0) / self.clock_ghz
                              if self.dispatch_single is not None else 0)
        # DMA channels (tiled accelerators): each descriptor holds one for its transfer, and
        # for the memory round trip too when the engine keeps it until the data lands.
        self.dma_channels = int(profile.get("dma.channels", 0) or 0)
        self.dma_hold = bool(int(profile.get("dma.hold_channel_for_round_trip", 0) or 0))
        self.links = links_by_mesh(profile)

    def sustained_efficiency(self, dtype) -> float:
        """Sustained fraction of the tensor peak for ``dtype`` with every unit busy, as the profile
        states it (``compute.tensor.efficiency_<dtype>``, else ``compute.tensor.efficiency``): fp8
        settles at a lower power-limited clock than bf16."""
        eff = self._tensor_eff_by_dtype.get(dtype)
        if eff is None:
            eff = self._tensor_eff_by_dtype[dtype] = self.profile.sustained_efficiency("tensor", dtype)
        return eff

    def tensor_efficiency(self, dtype) -> float:
        """The fraction of the tensor peak an mma of ``dtype`` is priced at: ``sustained_efficiency``
        times ``tensor_clock_factor`` (the clock the power limit leaves the launch's busy units)."""
        return self.sustained_efficiency(dtype) * self.tensor_clock_factor()

    def tensor_clock_factor(self):
        """How much faster the power-limited clock runs when the launch keeps ``busy_units`` of
        the ``units`` busy: (units / busy)^(1 / compute.tensor.power_clock_exponent), at most
        compute.tensor.unthrottled_efficiency / compute.tensor.efficiency (the clock with the
        limit not binding); 1 where the profile states neither fact or every unit is busy
        (arrays elementwise). The sustained efficiency is measured with every unit busy
        (cuBLAS at 8192^3 on 132 SMs); dynamic power ~ n f^exponent at the limit
        (calibration/h200/measured/gemm_clock_s15)."""
        a = self.profile.get("compute.tensor.power_clock_exponent", None)
        top = self.profile.get("compute.tensor.unthrottled_efficiency", None)
        if a is None or top is None or not self.tensor_eff:
            return 1
        busy = self.busy_units
        if not is_array(busy) and busy >= self.units:
            return 1
        return emin(emax(ratio(self.units, emax(busy, 1)), 1) ** (1 / a), top / self.tensor_eff)

    def describe_tensor_clock(self) -> str | None:
        """The breakdown's words for ``tensor_clock_factor`` where it is not 1 (scalars; None
        elsewhere): the busy units, the power law and its cap, as the factor computes them."""
        factor = self.tensor_clock_factor()
        if is_array(factor, self.busy_units) or factor == 1:
            return None
        from tfx.hw.units import format_count, format_counted, format_plain, level_noun
        a = self.profile.get("compute.tensor.power_clock_exponent")
        top = self.profile.get("compute.tensor.unthrottled_efficiency")
        busy, units = emax(self.busy_units, 1), self.units
        law = float(ratio(units, busy)) ** (1 / a)
        power = (f"({format_count(units)} / {format_count(busy)})^(1/{format_plain(a)}) = {format_plain(law)} "
                 f"(compute.tensor.power_clock_exponent {format_plain(a)})")
        cap = (f"{format_plain(top)} / {format_plain(self.tensor_eff)} = {format_plain(top / self.tensor_eff)} "
               f"(compute.tensor.unthrottled_efficiency / efficiency)")
        return (f"{format_count(busy)} of {format_counted(units, level_noun(self.unit_level))} busy: the power limit "
                f"leaves their tensor cores a faster clock than a full launch's, {power}, "
                + ("capped at " if factor < law else "under the cap ") + cap
                + f": each mma's sustained efficiency x {format_plain(factor)}")

    def rate(self, unit: str, dtype: str) -> float:
        """flop/ns of one unit (SM/PE) for ``dtype`` on ``unit``; refused by name when not stated."""
        try:
            per_cycle = self.profile.flops_per_cycle(unit, dtype)
            scope = self.profile.compute_scope(unit)
        except TfxError as err:
            raise TfxError(f"profile {self.profile.name} states no {unit} rate for {dtype}: "
                           f"{err.message}; work without a stated rate is not priced at zero",
                           where=f"{self.profile.name}:compute.{unit}.{dtype}") from None
        per_unit = per_cycle * self.profile.units_of(scope) / self.units
        return per_unit * self.clock_ghz
