"""The one attainable-bandwidth rule: what a streaming kernel gets from device memory.

Every profile is priced the same way: attainable = datasheet ``bandwidth`` x
``efficiency`` of the DRAM level (the level the L2 caches, or the device memory).
``efficiency`` is measured where we have a measurement (h200_sxm: a 4 GiB copy)
and otherwise a sourced fraction (the profile says which and why); a profile
that states none is priced at its datasheet figure, and the statement says so.
The kernel analysis (``tfx.analysis.performance``) applies exactly this product;
``tfx hw show`` prints it with the provenance of both factors.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfx.errors import TfxError


@dataclass(frozen=True)
class Attainable:
    level: str                 # the DRAM level's name (gmem, hbm)
    datasheet: float           # B/s per instance, as stated (after knobs)
    efficiency: float          # the fraction a streaming kernel sustains
    origin: str                # the efficiency's provenance: measured, estimated, ... or "none stated"
    source: str                # where the efficiency comes from
    per_instance: bool         # True for per-PE memories (the bandwidth is per PE, not per device)

    @property
    def bandwidth(self) -> float:
        """Attainable B/s (per instance)."""
        return self.datasheet * self.efficiency

    def statement(self) -> str:
        from tfx.hw.units import format_bandwidth, format_plain
        per = " per instance" if self.per_instance else ""
        if self.origin == "none stated":
            return (f"attainable {self.level} bandwidth {format_bandwidth(self.bandwidth)}{per} = datasheet "
                    f"(memory.{self.level}.efficiency not stated: priced at 100%)")
        return (f"attainable {self.level} bandwidth {format_bandwidth(self.bandwidth)}{per} = datasheet "
                f"{format_bandwidth(self.datasheet)} x efficiency {format_plain(self.efficiency)} ({self.origin}: {self.source})")

    def to_json(self) -> dict:
        return {"level": self.level, "datasheet_bytes_per_s": self.datasheet, "efficiency": self.efficiency,
                "attainable_bytes_per_s": self.bandwidth, "efficiency_origin": self.origin,
                "efficiency_source": self.source, "per_instance": self.per_instance}


def dram_level(profile) -> str:
    """The device-memory level: the one the L2 caches, else ``gmem`` or ``hbm``."""
    levels = profile.memory_levels()
    cached = next((lv.caches for lv in levels.values() if lv.caches), None)
    if cached:
        return cached
    for name in ("gmem", "hbm"):
        try:
            return profile.memory_level(name).name
        except TfxError:
            continue
    raise TfxError(f"profile {profile.name} has no device memory level")


def attainable_bandwidth(profile) -> Attainable:
    level = dram_level(profile)
    mem = profile.memory_levels()[level]
    datasheet = float(profile.memory_bandwidth(level))
    path = f"memory.{level}.efficiency"
    if profile.get(path) is None:
        return Attainable(level, datasheet, 1.0, "none stated", "", mem.scope != "device")
    fact = profile.fact(path)
    return Attainable(level, datasheet, float(fact.value), fact.origin or "", fact.source or "",
                      mem.scope != "device")
