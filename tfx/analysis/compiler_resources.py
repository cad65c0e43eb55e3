"""Per-kernel resource usage imported from NVIDIA's tools: ``ptxas -v`` and
``cuobjdump -res-usage``.

Both importers return ``KernelResources`` records, one per entry function (and
per architecture, when a fatbin holds several). ``KernelResources.resources(threads)``
turns one into the ``Resources`` the occupancy model takes.

Input is checked: a line that starts like a resource line but does not parse, a
resource line outside a function, or a file with no function at all is a
``TfxError`` naming ``file:line:col``. Lines the tools print that carry nothing
we use (compile times, gmem totals, nvcc chatter) are skipped, as are lines
starting with ``#`` so that a fixture can say where it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from tfx.analysis.occupancy import Resources
from tfx.errors import SourceLocation, TfxError


@dataclass(frozen=True)
class KernelResources:
    """What the compiler says one kernel uses, per thread (registers, stack, spills)
    or per CTA (shared memory). Sizes in bytes."""

    name: str                   # as the tool prints it (mangled)
    base_name: str | None       # readable base name of a mangled name, else None
    arch: str | None            # "sm_90a"; None if the output does not say
    registers: int
    smem_static: int = 0
    stack_frame: int = 0        # per thread, local memory
    spill_stores: int = 0
    spill_loads: int = 0
    barriers: int = 0
    cumulative_stack: int | None = None
    local_bytes: int = 0        # non-stack local memory per thread (cuobjdump LOCAL, ptxas lmem)
    cmem: dict[int, int] = field(default_factory=dict)   # constant bank -> bytes
    textures: int = 0
    surfaces: int = 0
    samplers: int = 0
    extra: dict[str, int] = field(default_factory=dict)  # fields newer tools add
    tool: str = "ptxas"         # "ptxas" or "cuobjdump"
    where: str = ""             # file:line that introduced the function

    @property
    def display_name(self) -> str:
        return self.base_name or self.name

    def resources(self, threads: int, smem_dynamic: int = 0) -> Resources:
        """The occupancy model's view of one CTA of ``threads`` threads."""
        return Resources(threads=threads, regs_per_thread=self.registers,
                         smem_dynamic=smem_dynamic, smem_static=self.smem_static,
                         origin="imported", local_bytes=self.stack_frame + self.local_bytes)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "base_name": self.base_name, "arch": self.arch,
            "registers": self.registers, "smem_static": self.smem_static,
            "stack_frame": self.stack_frame, "spill_stores": self.spill_stores,
            "spill_loads": self.spill_loads, "barriers": self.barriers,
            "cumulative_stack": self.cumulative_stack, "local_bytes": self.local_bytes,
            "cmem": {str(k): v for k, v in self.cmem.items()}, "textures": self.textures,
            "surfaces": self.surfaces, "samplers": self.samplers, "extra": dict(self.extra),
            "tool": self.tool, "where": self.where,
        }


# --------------------------------------------------------------------------- names

_SOURCE_NAME = re.compile(r"(\d+)")


def demangled_base_name(name: str) -> str | None:
    """``_Z4k168PKfPfi`` -> ``k168``; ``_ZN2ns6kernelILi4EEEvPf`` -> ``ns::kernel``.

    Only the leading source name(s) of an Itanium-mangled name; parameters and
    template arguments are dropped. None for names this does not recognise
    (``extern "C"`` kernels are not mangled and need no help).
    """
    if name.startswith("_ZN"):
        pos, parts = 3, []
        while pos < len(name) and name[pos].isdigit():
            m = _SOURCE_NAME.match(name, pos)
            length, start = int(m.group(1)), m.end()
            if length == 0 or start + length > len(name):
                return None
            parts.append(name[start:start + length])
            pos = start + length
        return "::".join(parts) if parts else None
    if name.startswith("_Z") and len(name) > 2 and name[2].isdigit():
        m = _SOURCE_NAME.match(name, 2)
        length, start = int(m.group(1)), m.end()
        if length == 0 or start + length > len(name):
            return None
        return name[start:start + length]
    return None


def _error(filename: str, lineno: int, col: int, line: str, message: str) -> TfxError:
    return TfxError(message, where=SourceLocation(filename, lineno, col), source_line=line)


# --------------------------------------------------------------------------- ptxas -v

_PTXAS_PREFIX = re.compile(r"^\s*ptxas\s+info\s*:\s*")
_COMPILING = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'\s*$")
_PROPERTIES = re.compile(r"Function properties for (\S+)\s*$")
_USED = re.compile(r"Used (\d+) registers(.*)$")
_STACK = re.compile(r"^\s*(\d+) bytes stack frame, (\d+) bytes spill stores, "
                    r"(\d+) bytes spill loads\s*$")

# Items after "Used N registers", comma separated; each maps to a field.
_USED_ITEMS = [
    (re.compile(r"used (\d+) barriers?$"), "barriers"),
    (re.compile(r"(\d+) bytes smem$"), "smem_static"),
    (re.compile(r"(\d+) bytes cmem\[(\d+)\]$"), "cmem"),
    (re.compile(r"(\d+) bytes cumulative stack size$"), "cumulative_stack"),
    (re.compile(r"(\d+) bytes lmem$"), "local_bytes"),
    (re.compile(r"(\d+) textures?$"), "textures"),
    (re.compile(r"(\d+) surfaces?$"), "surfaces"),
    (re.compile(r"(\d+) samplers?$"), "samplers"),
]
# A later ptxas may add "N <something>": keep it rather than refuse good output.
_UNKNOWN_ITEM = re.compile(r"(?:used )?(\d+) ([A-Za-z][\w\[\] ]*)$")


def parse_ptxas_v(text: str, filename: str = "<ptxas>") -> list[KernelResources]:
    """Entry functions of ``nvcc -Xptxas -v`` / ``ptxas -v`` output, in file order."""
    entries: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None       # entry whose "Used" line comes next
    properties: dict[str, tuple[int, int, int]] = {}
    properties_for: tuple[str, int] | None = None  # name awaiting its stack line
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        prefix = _PTXAS_PREFIX.match(line)
        if prefix:
            body, col = line[prefix.end():], prefix.end() + 1
            if body.startswith("Compiling entry function"):
                m = _COMPILING.match(body)
                if not m:
                    raise _error(filename, lineno, col, line,
                                 "expected: Compiling entry function 'NAME' for 'ARCH'")
                current = {"name": m.group(1), "arch": m.group(2), "line": lineno,
                           "registers": None}
                entries.append(current)
            elif body.startswith("Function properties for"):
                m = _PROPERTIES.match(body)
                if not m:
                    raise _error(filename, lineno, col, line,
                                 "expected: Function properties for NAME")
                properties_for = (m.group(1), lineno)
            elif body.startswith("Used"):
                m = _USED.match(body)
                if not m:
                    raise _error(filename, lineno, col, line,
                                 "expected: Used N registers[, ...]")
                if current is None or current["registers"] is not None:
                    raise _error(filename, lineno, col, line,
                                 "'Used ... registers' outside an entry function")
                current["registers"] = int(m.group(1))
                _parse_used_items(m.group(2), current, filename, lineno,
                                  col + m.start(2), line)
            # Other info lines (gmem, compile time, register-limit notes) carry nothing we use.
            continue
        if "bytes stack frame" in line:
            m = _STACK.match(line)
            if not m:
                raise _error(filename, lineno, 1, line, "expected: N bytes stack frame, "
                             "N bytes spill stores, N bytes spill loads")
            if properties_for is None:
                raise _error(filename, lineno, 1, line,
                             "stack frame line without 'Function properties for NAME' before it")
            properties[properties_for[0]] = tuple(int(g) for g in m.groups())
            properties_for = None
    if not entries:
        raise TfxError("no 'Compiling entry function' line: is this ptxas -v output?",
                       where=filename)
    out = []
    for e in entries:
        if e["registers"] is None:
            raise TfxError(f"entry function {e['name']} has no 'Used N registers' line",
                           where=SourceLocation(filename, e["line"], 1))
        stack, stores, loads = properties.get(e["name"], (0, 0, 0))
        out.append(KernelResources(
            name=e["name"], base_name=demangled_base_name(e["name"]), arch=e["arch"],
            registers=e["registers"], smem_static=e.get("smem_static", 0),
            stack_frame=stack, spill_stores=stores, spill_loads=loads,
            barriers=e.get("barriers", 0), cumulative_stack=e.get("cumulative_stack"),
            local_bytes=e.get("local_bytes", 0), cmem=e.get("cmem", {}),
            textures=e.get("textures", 0), surfaces=e.get("surfaces", 0),
            samplers=e.get("samplers", 0), extra=e.get("extra", {}), tool="ptxas",
            where=f"{filename}:{e['line']}"))
    return out


def _parse_used_items(rest: str, entry: dict[str, Any], filename: str, lineno: int,
                      col: int, line: str) -> None:
    """``, used 1 barriers, 100484 bytes smem, 400 bytes cmem[0]`` into ``entry``."""
    offset = 0
    for raw in rest.split(",")[1:] if rest.strip() else []:
        offset = rest.index(raw, offset)
        item = raw.strip()
        item_col = col + offset + (len(raw) - len(raw.lstrip()))
        for pattern, key in _USED_ITEMS:
            m = pattern.match(item)
            if m:
                if key == "cmem":
                    entry.setdefault("cmem", {})[int(m.group(2))] = int(m.group(1))
                else:
                    entry[key] = int(m.group(1))
                break
        else:
            m = _UNKNOWN_ITEM.match(item)
            if not m:
                raise _error(filename, lineno, item_col, line,
                             f"cannot read {item!r} in the resource line")
            entry.setdefault("extra", {})[m.group(2)] = int(m.group(1))
    if rest.strip() and not rest.lstrip().startswith(","):
        raise _error(filename, lineno, col, line, "expected ', ' after 'Used N registers'")


# --------------------------------------------------------------------------- cuobjdump -res-usage

_ARCH = re.compile(r"^\s*arch\s*=\s*(\S+)\s*$")
_FUNCTION = re.compile(r"^\s*Function\s+(\S+?):(.*)$")
_RES_TOKEN = re.compile(r"([A-Z]+)(?:\[(\d+)\])?:(\S*)")
_RES_FIELDS = {"REG": "registers", "STACK": "stack_frame", "SHARED": "smem_static",
               "LOCAL": "local_bytes", "TEXTURE": "textures", "SURFACE": "surfaces",
               "SAMPLER": "samplers"}


def parse_res_usage(text: str, filename: str = "<cuobjdump>") -> list[KernelResources]:
    """Functions of ``cuobjdump -res-usage`` output, in file order, one per ELF arch.

    cuobjdump prints ``Function NAME:`` then the resource line indented below it;
    some versions put both on one line. Both are read."""
    arch: str | None = None
    pending: tuple[str, int] | None = None   # function whose resource line comes next
    in_common = False
    out: list[KernelResources] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _ARCH.match(line)
        if m:
            arch = m.group(1)
            continue
        if stripped == "Common:":
            in_common = True
            continue
        m = _FUNCTION.match(line)
        if m:
            if pending is not None:
                raise _error(filename, pending[1], 1, text.splitlines()[pending[1] - 1],
                             f"function {pending[0]} has no resource line")
            in_common = False
            name, rest = m.group(1), m.group(2)
            if rest.strip():
                out.append(_res_record(name, arch, rest, filename, lineno, m.start(2) + 1, line))
            else:
                pending = (name, lineno)
            continue
        if pending is not None and _RES_TOKEN.match(stripped):
            col = len(line) - len(line.lstrip()) + 1
            out.append(_res_record(pending[0], arch, line[col - 1:], filename, pending[1],
                                   col, line, value_line=lineno))
            pending = None
            continue
        if in_common and _RES_TOKEN.match(stripped):
            continue  # GLOBAL:0 and friends, shared by every function of the module
        if stripped.startswith(("REG:", "STACK:", "SHARED:")):
            raise _error(filename, lineno, 1, line, "resource line outside a function")
        # Section headers (Fatbin elf code, code version, host, ...) carry nothing we use.
    if pending is not None:
        raise TfxError(f"function {pending[0]} has no resource line",
                       where=SourceLocation(filename, pending[1], 1))
    if not out:
        raise TfxError("no 'Function NAME:' line: is this cuobjdump -res-usage output?",
                       where=filename)
    return out


def _res_record(name: str, arch: str | None, rest: str, filename: str, lineno: int,
                col: int, line: str, value_line: int | None = None) -> KernelResources:
    """One ``REG:168 STACK:0 SHARED:100484 ...`` line for function ``name``."""
    values: dict[str, Any] = {"cmem": {}, "extra": {}}
    at = value_line or lineno
    pos = 0
    for token in rest.split():
        pos = rest.index(token, pos)
        m = _RES_TOKEN.fullmatch(token)
        if not m or not m.group(3).isdigit():
            raise _error(filename, at, col + pos, line,
                         f"expected KEY:NUMBER, got {token!r}")
        key, bank, value = m.group(1), m.group(2), int(m.group(3))
        if key == "CONSTANT":
            values["cmem"][int(bank or 0)] = value
        elif key in _RES_FIELDS:
            values[_RES_FIELDS[key]] = value
        else:
            values["extra"][key] = value
        pos += len(token)
    if "registers" not in values:
        raise _error(filename, at, col, line, f"no REG: count for function {name}")
    record = KernelResources(name=name, base_name=demangled_base_name(name), arch=arch,
                             registers=values["registers"], tool="cuobjdump",
                             where=f"{filename}:{lineno}")
    fields_ = {k: v for k, v in values.items() if k != "registers"}
    return replace(record, **fields_)
