"""Checking a kernel's storage and mesh levels against a hardware profile.

The verifier accepts every level name the language knows (``gmem``, ``smem``,
``tcm``, ``cta``, ``pe`` ...); whether a given machine has them is a question
for its profile. ``check_levels`` refuses, at the kernel's ``file:line:col``,
a storage level that is neither a memory level of the profile nor one of its
``aliases``, and a mesh level the profile's hierarchy does not name.

The profile is duck-typed (``name``, ``memory_levels()`` -> {name: level with
``aliases``}, ``mesh_levels()`` -> {mesh name: hierarchy level}), so this
module imports nothing from ``tfx.hw``.
"""

from __future__ import annotations

from typing import Any, Iterator

from tfx.errors import SourceLocation
from tfx.ir.nodes import Kernel, LoopRegion, MeshRegion, Module, Op, walk


def storage_names(profile: Any) -> dict[str, str]:
    """Every storage-level spelling the profile accepts, mapped to its memory level."""
    out: dict[str, str] = {}
    for name, level in profile.memory_levels().items():
        out[name] = name
        for alias in getattr(level, "aliases", ()) or ():
            out.setdefault(alias, name)
    return out


def _level_uses(kernel: Kernel) -> Iterator[tuple[str, str, SourceLocation | None, str]]:
    """("storage" | "mesh", level, location, what uses it) for every level the kernel names, in source order."""
    for t in kernel.tensors:
        yield "storage", t.type.level, t.loc, f"tensor {t.name}"
    for s in walk(kernel.body):
        if isinstance(s, MeshRegion):
            yield "mesh", s.level, s.loc, "mesh"
        if isinstance(s, (MeshRegion, LoopRegion)):
            for c in s.captures:
                if c.move_to is not None:
                    yield "storage", c.move_to, c.loc, f"the capture of {c.name}"
        elif isinstance(s, Op):
            for level in (s.to_level, s.level):
                if level is not None:
                    yield "storage", level, s.loc, s.opcode


def check_levels(module: Module, kernel: Kernel, profile: Any) -> None:
    """Raise TfxError at the first storage or mesh level (in source order) ``profile`` does not have."""
    storage = storage_names(profile)
    meshes = profile.mesh_levels()
    profile_name = getattr(profile, "name", "the profile")
    for kind, level, loc, what in _level_uses(kernel):
        if kind == "mesh" and level not in meshes:
            from tfx.ir.bind import way_out
            known = ", ".join(sorted(meshes))
            raise module.error(
                f"mesh level {level!r} is not in hardware profile {profile_name} (it has: {known})", loc,
                way_out(profile, "mesh", level))
        if kind == "storage" and level not in storage:
            known = ", ".join(sorted(storage))
            raise module.error(
                f"storage level {level!r} ({what}) is not in hardware profile {profile_name} "
                f"(it has: {known})", loc)
