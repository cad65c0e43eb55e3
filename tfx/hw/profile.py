"""Loading hardware profiles and the ``Profile`` object the other layers query.

``load_profile("h200_sxm")`` finds ``hw_profiles/h200_sxm.toml``; a path loads
that file. ``base = "..."`` inherits from another profile (deep merge, the
child wins; cycles refused). Parsed files are cached by path, mtime and size,
so loading a profile again costs a merge and a flatten, not a TOML parse.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import tomli_w

from tfx.errors import TfxError, parse_toml, read_text_file
from tfx.hw.schema import DEVICE, PER_FILE_KEYS, Fact, check_complete, merge, parse_document
from tfx.bundled import bundled_dir

PROFILE_SUFFIX = ".toml"

# Spellings of dtypes other layers and users write, mapped to the profile keys
# (which are the IR's dtype names).
DTYPE_ALIASES = {
    "fp64": "f64", "float64": "f64", "double": "f64",
    "fp32": "f32", "float32": "f32", "float": "f32",
    "fp16": "f16", "float16": "f16", "half": "f16",
    "bfloat16": "bf16",
    "fp8": "fp8e4m3", "e4m3": "fp8e4m3", "fp8_e4m3": "fp8e4m3",
    "e5m2": "fp8e5m2", "fp8_e5m2": "fp8e5m2",
    "fp4": "fp4e2m1", "e2m1": "fp4e2m1", "nvfp4": "fp4e2m1",
    "i8": "int8", "s8": "int8", "i32": "int32", "s32": "int32",
    "int64": "i64", "s64": "i64",
}


@dataclass(frozen=True)
class MemoryLevel:
    """One memory level, in canonical units; None where the profile says unavailable."""

    name: str
    scope: str
    capacity: float | None          # bytes per instance
    bandwidth: float | None         # B/s per instance
    bandwidth_per_cycle: float | None  # B/cycle per instance
    latency_ns: float | None
    caches: str | None
    aliases: tuple[str, ...]


# ------------------------------------------------------------------ loading

def profiles_dir() -> Path:
    return bundled_dir("hw_profiles")


def list_profiles() -> list[str]:
    """Names of the bundled profiles, sorted."""
    return sorted(p.stem for p in profiles_dir().glob(f"*{PROFILE_SUFFIX}"))


def _bundled_default_first() -> Iterable[tuple[str, "Profile"]]:
    """(name, profile) of every bundled profile, loaded, the default (tfx.bundled's
    DEFAULT_PROFILE) first and the rest by name: the order a profile is offered in where the
    user named none."""
    from tfx.bundled import DEFAULT_PROFILE
    for name in sorted(list_profiles(), key=lambda n: n != DEFAULT_PROFILE):
        yield name, load_profile(name)


def shipped_profile_with(levels) -> "Profile | None":
    """The bundled profile whose hierarchy has every level of ``levels`` (``{"cube", "pe"}``):
    the default when it has them, else the first by name; None when none has. What a kernel
    that counts the machine (``units(cube)``) runs on where no profile was named (tfx run)."""
    wanted = set(levels)
    return next((p for _, p in _bundled_default_first() if wanted <= {DEVICE, *p.hierarchy_levels()}), None)


def _display_path(path: Path) -> str:
    """A path as errors show it: relative to the working directory when under it."""
    try:
        return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)


def _looks_like_path(text: str) -> bool:
    return text.endswith(PROFILE_SUFFIX) or os.sep in text or "/" in text


def _resolve(name_or_path: str | os.PathLike, relative_to: Path | None = None,
             option: str | None = None) -> Path:
    """The file a profile name or path refers to; TfxError if there is none (an unknown name
    refused as ``option``'s, the command-line option that gave it, where there is one)."""
    text = os.fspath(name_or_path)
    if _looks_like_path(text):
        path = Path(text)
        if relative_to is not None and not path.is_absolute():
            path = relative_to / path
        if path.is_dir():     # as every file tfx reads refuses a folder (tfx.errors.read_text_file)
            raise TfxError("is a directory, expected a hardware profile (.toml) file", where=str(path))
        if not path.is_file():
            raise TfxError("no such hardware profile file", where=str(path))
        return path.resolve()
    candidates = []
    if relative_to is not None:  # a user's profile next to its base wins over the bundled one
        candidates.append(relative_to / f"{text}{PROFILE_SUFFIX}")
    candidates.append(profiles_dir() / f"{text}{PROFILE_SUFFIX}")
    from tfx.hw.user_profiles import list_user_profiles, user_profile_path
    saved = user_profile_path(text)          # one the user saved (tfx open, w)
    if saved is not None:
        candidates.append(saved)
    for path in candidates:
        if path.is_file():
            return path.resolve()
    known = list_profiles() + list_user_profiles()
    close = difflib.get_close_matches(text, known, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise TfxError(f"unknown hardware profile {text!r} (known: {', '.join(known)}){hint}", where=option)


@dataclass(frozen=True)
class _ParsedFile:
    tree: dict             # schema-checked, facts converted; without name/base
    name: str | None
    base: str | None


_FILE_CACHE: dict[Path, tuple[tuple[int, int], _ParsedFile]] = {}


def _parse_file(path: Path) -> _ParsedFile:
    stat = path.stat()
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _FILE_CACHE.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    shown = _display_path(path)
    text = read_text_file(path, expected="a TOML file", where=shown)
    doc = parse_toml(text, shown)
    tree = parse_document(doc, shown)
    parsed = _ParsedFile(tree={k: v for k, v in tree.items() if k not in PER_FILE_KEYS},
                         name=tree.get("name"), base=tree.get("base"))
    _FILE_CACHE[path] = (key, parsed)
    return parsed


def _load_tree(path: Path, chain: tuple[Path, ...] = ()) -> dict:
    """The merged tree of ``path`` and its bases, base first."""
    parsed = _parse_file(path)
    if parsed.base is None:
        return parsed.tree
    where = f"{_display_path(path)}:base"
    try:
        base_path = _resolve(parsed.base, relative_to=path.parent)
    except TfxError as err:
        raise TfxError(f"base {parsed.base!r}: {err.message}", where=where) from None
    if base_path == path or base_path in chain:
        names = " -> ".join(p.stem for p in (*chain, path, base_path))
        raise TfxError(f"base profiles form a cycle: {names}", where=where)
    return merge(_load_tree(base_path, chain + (path,)), parsed.tree)


def load_profile(name_or_path: str | os.PathLike,
                 knobs: Mapping[str, str | float | int] | None = None,
                 option: str | None = None) -> "Profile":
    """Load a bundled profile by name or a profile file by path, then apply ``knobs``.

    ``knobs`` maps a fact path (or unique suffix / alias spelling) to an
    absolute value (``1.2e12``, ``"3.2TB/s"``) or a factor (``"x2"``, ``"/2"``);
    see ``tfx.hw.knobs``. ``option``: the command-line option that gave ``name_or_path``
    (``--hw``), which the refusal of an unknown name names (``--hw: error: unknown hardware
    profile 'nope' ...``); a path's or a file's fault names the file as it is.
    """
    path = _resolve(name_or_path, option=option)
    tree = _load_tree(path)
    shown = _display_path(path)
    check_complete(tree, shown)
    name = _parse_file(path).name or path.stem
    profile = Profile(name=name, tree=tree, source_path=path)
    return profile.with_knobs(knobs) if knobs else profile


# ------------------------------------------------------------------ Profile

def _flatten(tree: dict, prefix: str = "") -> Iterable[tuple[str, Any]]:
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, f"{path}.")
        else:
            yield path, value


class Profile:
    """A loaded, validated hardware profile. Immutable: knobs make a new one.

    Facts are numeric and carry provenance (``fact``); settings are names
    (``kind``, ``memory.smem.scope``, ``memory.gmem.aliases``). ``value`` and
    ``get`` answer for both.
    """

    def __init__(self, name: str, tree: dict, source_path: Path | None,
                 knobs: Mapping[str, str] | None = None):
        self.name = name
        self.source_path = source_path
        self._tree = tree
        self._entries: dict[str, Any] = dict(_flatten(tree))
        self.kind: str = tree["kind"]
        self.description: str = tree["description"]
        self.knobs: dict[str, str] = dict(knobs or {})  # applied knobs, path -> text
        self._alias_to_memory = {
            alias: mem for mem, level in tree["memory"].items() for alias in level.get("aliases", ())
        }
        # name -> MemoryLevel, built at the first ask: a Profile never changes (with_knobs makes
        # a new one), and the analysis asks for the levels hundreds of times
        self._levels: dict[str, MemoryLevel] = {}
        self._all_levels: dict[str, MemoryLevel] | None = None     # memory_levels(), likewise
        # likewise a path's canonical form (``get``: ~1,000 asks an analysis), the units of a
        # level (``units_of``: every rate asks it) and the rates (each scope's roofline asks them)
        self._canonical: dict[str, str] = {}
        self._units: dict[str, int] = {}
        self._rates: dict[tuple, float] = {}

    def __getstate__(self):
        # what is remembered to answer again is rebuilt after a pickle, not carried
        return {**self.__dict__, "_levels": {}, "_all_levels": None, "_canonical": {}, "_units": {}, "_rates": {}}

    def source_files(self) -> tuple[Path, ...]:
        """The profile's file and the files it is based on, in the order load_profile merged them
        back (none for a profile made from a tree): what a copy kept for later checks is still
        current against (tfx.tui.core's profile of a job)."""
        files: list[Path] = []
        path = self.source_path
        while path is not None and path not in files:
            files.append(path)
            base = _parse_file(path).base
            path = None if base is None else _resolve(base, relative_to=path.parent)
        return tuple(files)

    def __repr__(self) -> str:
        knobs = f", knobs={self.knobs}" if self.knobs else ""
        return f"Profile({self.name!r}, kind={self.kind!r}{knobs})"

    # -------------------------------------------------------------- lookups

    def canonical_path(self, path: str) -> str:
        """``memory.hbm.bandwidth`` -> ``memory.gmem.bandwidth`` when hbm is an alias of gmem."""
        got = self._canonical.get(path)
        if got is None:
            parts = path.split(".")
            if len(parts) >= 2 and parts[0] == "memory" and parts[1] in self._alias_to_memory:
                parts[1] = self._alias_to_memory[parts[1]]
            got = self._canonical[path] = ".".join(parts)
        return got

    def _entry(self, path: str) -> Any:
        entry = self._entries.get(self.canonical_path(path))
        if entry is None:
            close = difflib.get_close_matches(path, list(self._entries), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise TfxError(f"profile {self.name} has no fact {path}{hint}", where=self._where(path))
        return entry

    def _where(self, path: str) -> str:
        """``file:key`` as errors name it (the profile name when it was not loaded from a file)."""
        shown = _display_path(self.source_path) if self.source_path else self.name
        return f"{shown}:{path}"

    def has(self, path: str) -> bool:
        return self.canonical_path(path) in self._entries

    def fact(self, path: str) -> Fact:
        """The Fact at ``path`` (aliases of memory levels accepted); TfxError if none."""
        entry = self._entry(path)
        if not isinstance(entry, Fact):
            raise TfxError(f"{path} is a setting ({entry!r}), not a numeric fact",
                           where=self._where(path))
        return entry

    def value(self, path: str) -> Any:
        """A fact's canonical value, or a setting's text; TfxError if missing or unavailable."""
        entry = self._entry(path)
        if isinstance(entry, Fact):
            if not entry.available:
                raise TfxError(f"{path} is unavailable in profile {self.name}: {entry.unavailable}",
                               where=self._where(path))
            return entry.value
        return entry

    def get(self, path: str, default: Any = None) -> Any:
        """Like ``value`` but ``default`` when the fact is missing or unavailable."""
        entry = self._entries.get(self._canonical.get(path) or self.canonical_path(path))
        if entry is None or (isinstance(entry, Fact) and not entry.available):
            return default
        return entry.value if isinstance(entry, Fact) else entry

    def facts(self) -> list[tuple[str, Fact]]:
        """Every numeric fact (available or not) in file order, bases first."""
        return [(p, e) for p, e in self._entries.items() if isinstance(e, Fact)]

    def settings(self) -> list[tuple[str, Any]]:
        """Every non-numeric entry (kind, scopes, parents, meshes, aliases) in file order."""
        return [(p, e) for p, e in self._entries.items() if not isinstance(e, Fact)]

    def entries(self) -> list[tuple[str, Any]]:
        """Facts and settings together, in file order (what `tfx hw show` lists)."""
        return list(self._entries.items())

    def numeric_knob_paths(self) -> list[str]:
        """Paths of the available numeric facts, the ones a factor knob can scale.

        An absolute knob may also set a fact the profile marks unavailable.
        """
        return [p for p, f in self.facts() if f.available]

    # ------------------------------------------------------------ structure

    @property
    def clock_hz(self) -> float:
        return self.value("clock.core")

    def hierarchy_levels(self) -> list[str]:
        return list(self._tree["hierarchy"])

    def units_of(self, level: str) -> int:
        """Units of ``level`` per device: the product of counts up the parent chain.

        ``units_of("device") == 1``; on an H100 ``units_of("sm") == 132``;
        on ``sip`` ``units_of("pe") == 8 * 8``.
        """
        got = self._units.get(level)
        if got is None:
            got = self._units[level] = self._count_units(level)
        return got

    def _count_units(self, level: str) -> int:
        hierarchy = self._tree["hierarchy"]
        total = 1
        current = level
        while current != DEVICE:
            if current not in hierarchy:
                raise TfxError(f"{current!r} is not a hierarchy level of profile {self.name} "
                               f"(levels: {', '.join([DEVICE, *hierarchy])})",
                               where=self._where("hierarchy"))
            total *= int(self.value(f"hierarchy.{current}.count"))
            current = hierarchy[current]["parent"]
        return total

    def others_with(self, *, mesh: str | None = None, level: str | None = None) -> list[str]:
        """The bundled profiles other than this one whose hierarchy has mesh ``mesh`` or level
        ``level``: a refusal's way out (sip_gemm.tile on h200_sxm: ``sip``), the default
        profile first."""
        return [name for name, other in _bundled_default_first() if other.name != self.name and (
            (mesh is not None and mesh in other.mesh_levels())
            or (level is not None and level in other.hierarchy_levels()))]

    def mesh_levels(self) -> dict[str, str]:
        """``{mesh name: hierarchy level}``: ``{"cta": "sm", "warp": "warp", ...}``."""
        return {level["mesh"]: name for name, level in self._tree["hierarchy"].items()
                if "mesh" in level}

    def memory_levels(self) -> dict[str, MemoryLevel]:
        """Every memory level by its own name (aliases are in ``MemoryLevel.aliases``). One dict,
        built at the first ask (each scope's roofline asks, ~100 asks an analysis) and shared:
        callers read it, none changes it."""
        got = self._all_levels
        if got is None:
            got = self._all_levels = {name: self.memory_level(name) for name in self._tree["memory"]}
        return got

    def memory_level(self, name: str) -> MemoryLevel:
        """One memory level by name or alias (``hbm`` finds ``gmem`` on a GPU)."""
        real = self._alias_to_memory.get(name, name)
        got = self._levels.get(real)
        if got is None:
            got = self._levels[real] = self._memory_level(name, real)
        return got

    def _memory_level(self, name: str, real: str) -> MemoryLevel:
        level = self._tree["memory"].get(real)
        if level is None:
            known = sorted([*self._tree["memory"], *self._alias_to_memory])
            raise TfxError(f"profile {self.name} has no memory level {name!r} "
                           f"(known: {', '.join(known)})", where=self._where("memory"))
        prefix = f"memory.{real}."
        return MemoryLevel(
            name=real,
            scope=level["scope"],
            capacity=self.get(prefix + "capacity"),
            bandwidth=self.get(prefix + "bandwidth"),
            bandwidth_per_cycle=self.get(prefix + "bandwidth_per_cycle"),
            latency_ns=self.get(prefix + "latency"),
            caches=level.get("caches"),
            aliases=tuple(level.get("aliases", ())),
        )

    def memory_bandwidth(self, name: str, aggregate: bool = False) -> float:
        """Bandwidth of memory level ``name`` (or alias) in B/s.

        Per instance by default: one SM's shared memory, one PE's HBM, the
        device's gmem. A level stated in B/cycle is converted with
        ``clock.core``. ``aggregate=True`` multiplies by the number of
        instances per device (``units_of(scope)``): all SMs' shared memory,
        all 64 PEs' HBM. For a ``device``-scoped level both are the same.
        """
        got = self._rates.get(("memory", name, aggregate))
        if got is None:
            got = self._rates["memory", name, aggregate] = self._memory_bandwidth(name, aggregate)
        return got

    def _memory_bandwidth(self, name: str, aggregate: bool) -> float:
        level = self.memory_level(name)
        if level.bandwidth is not None:
            per_instance = level.bandwidth
        elif level.bandwidth_per_cycle is not None:
            per_instance = level.bandwidth_per_cycle * self.clock_hz
        else:
            raise TfxError(f"memory.{level.name} has no available bandwidth in profile "
                           f"{self.name}", where=self._where(f"memory.{level.name}.bandwidth"))
        return per_instance * self.units_of(level.scope) if aggregate else per_instance

    def compute_scope(self, unit: str) -> str:
        return self.value(f"compute.{unit}.scope")

    def flops_per_cycle(self, unit: str, dtype: str) -> float:
        """flop per cycle of one ``compute.<unit>.scope`` unit for ``dtype`` (aliases accepted)."""
        return self.value(f"compute.{unit}.{normalize_dtype(dtype)}")

    def peak_flops_per_s(self, unit: str, dtype: str) -> float:
        """Device peak: flop/cycle x units of the engine's scope x ``clock.core``, in flop/s."""
        got = self._rates.get(("compute", unit, dtype))
        if got is None:
            per_cycle = self.flops_per_cycle(unit, dtype)
            got = self._rates["compute", unit, dtype] = per_cycle * self.units_of(self.compute_scope(unit)) * self.clock_hz
        return got

    def sustained_efficiency(self, unit: str, dtype: str) -> float:
        """The fraction of ``unit``'s ``dtype`` peak a long run sustains (power-limited clock):
        ``compute.<unit>.efficiency_<dtype>`` where stated, else ``compute.<unit>.efficiency``,
        else 1."""
        specific = self.get(f"compute.{unit}.efficiency_{normalize_dtype(dtype)}")
        if specific is not None:
            return float(specific)
        return float(self.get(f"compute.{unit}.efficiency", 1.0) or 1.0)

    def sustained_flops_per_s(self, unit: str, dtype: str) -> float:
        """Peak x the sustained fraction: the rate a long compute-bound kernel can reach."""
        return self.peak_flops_per_s(unit, dtype) * self.sustained_efficiency(unit, dtype)

    # -------------------------------------------------------------- changes

    def with_knobs(self, knobs: Mapping[str, str | float | int] | None, flag: str = "--knob") -> "Profile":
        """A new Profile with ``knobs`` applied (see ``tfx.hw.knobs``; refusals name ``flag``);
        self is unchanged."""
        from tfx.hw.knobs import apply_knobs
        return apply_knobs(self, knobs or {}, flag)

    def _replaced(self, changes: Mapping[str, Fact], knob_texts: Mapping[str, str]) -> "Profile":
        """A copy with the facts at canonical ``changes`` paths replaced."""
        tree = _copy_tree(self._tree)
        for path, fact in changes.items():
            *parents, leaf = path.split(".")
            node = tree
            for part in parents:
                node = node[part]
            node[leaf] = fact
        return Profile(self.name, tree, self.source_path, {**self.knobs, **knob_texts})

    def to_toml(self, name: str | None = None, description: str | None = None) -> str:
        """The whole profile (bases merged in, knobs applied) as a standalone TOML file.

        Facts are written as they were written (``4.8 TB/s`` stays ``4.8 TB/s``),
        so ``load_profile`` of the result gives equal facts and settings.
        """
        tree = _copy_tree(self._tree)
        if description is not None:
            tree["description"] = description
        top = {"name": name or self.name}
        origin = _display_path(self.source_path) if self.source_path else self.name
        lines = [f"# Saved by tfx from {origin}: bases merged in"
                 + (f", knobs applied ({', '.join(f'{k}={v}' for k, v in self.knobs.items())})"
                    if self.knobs else "") + "."]
        _emit_table(lines, (), {**top, **tree})
        return "\n".join(lines).strip() + "\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "source_path": str(self.source_path) if self.source_path else None,
            "knobs": dict(self.knobs),
            "facts": [{"path": p, **f.to_json()} for p, f in self.facts()],
            "settings": {p: (list(v) if isinstance(v, tuple) else v) for p, v in self.settings()},
        }


def normalize_dtype(dtype: Any) -> str:
    """A dtype (IR ``DType``, or text in any common spelling) as the profile key."""
    text = str(getattr(dtype, "text", dtype)).lower()
    return DTYPE_ALIASES.get(text, text)


def _copy_tree(tree: dict) -> dict:
    return {k: _copy_tree(v) if isinstance(v, dict) else v for k, v in tree.items()}


# --------------------------------------------------------------- TOML output

def _toml_scalar(value: Any) -> str:
    """One TOML value, formatted by tomli_w so strings are escaped correctly."""
    return tomli_w.dumps({"v": value}).split("=", 1)[1].strip()


def _fact_toml(fact: Fact) -> str:
    if not fact.available:
        return f"{{ unavailable = {_toml_scalar(fact.unavailable)} }}"
    return (f"{{ value = {_toml_scalar(fact.raw_value)}, unit = {_toml_scalar(fact.raw_unit)}, "
            f"origin = {_toml_scalar(fact.origin)}, source = {_toml_scalar(fact.source)} }}")


def _emit_table(lines: list[str], path: tuple[str, ...], table: dict) -> None:
    leaves = [(k, v) for k, v in table.items() if not isinstance(v, dict)]
    children = [(k, v) for k, v in table.items() if isinstance(v, dict)]
    if path and leaves:
        lines.append("")
        lines.append(f"[{'.'.join(path)}]")
    for key, value in leaves:
        if isinstance(value, Fact):
            text = _fact_toml(value)
        elif isinstance(value, tuple):  # one line: tomli_w would put each name on its own
            text = "[" + ", ".join(_toml_scalar(item) for item in value) + "]"
        else:
            text = _toml_scalar(value)
        lines.append(f"{key} = {text}")
    for key, child in children:
        _emit_table(lines, path + (key,), child)
