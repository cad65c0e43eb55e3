#!/usr/bin/env python3
"""Where a Triton k-loop waits on its local loads: the LDL -> first use distances in its SASS.

Usage:
    python3 bench/h200/spill_sass_waits.py calibration/h200/measured/spill_sass/sass.tar.gz [more.tar.gz ...]

Reads the k-loop bodies (`*.loop.sass`, as bench/h200/measure_spill_sass.py writes them) and
walks each in issue order. An LDL's destination registers are pending until an instruction
reads or overwrites one of them: that instruction waits for the LDL and, local loads of a warp
completing in order, for every LDL issued before it (one wait). The distance from the LDL's
issue to that instruction, in instructions, is how many issue slots of the same warp the load's
round trip can hide behind (at most one instruction a cycle per warp). Same for LDSM (shared
memory fragments) for comparison. Per kernel it prints the waits, the median distance, and the
cycles a trip would still be exposed, `sum(max(0, latency - distance))`, at the latencies named
below. No GPU; one row per kernel on stdout (CSV).

Latencies (both measured on this H200): 290 cycles, a dependent L2 hit
(calibration/h200/measured/latency.csv: 289.6 cycles, 146 ns unloaded); 23 cycles, a dependent
shared-memory load (calibration/h200/measured/latency/instr_latency.csv: ld.shared pointer
chase 23.02 cycles), used for LDSM and as the floor of an L1 hit (L1 and shared memory are one
SRAM; the L1 hit latency itself is not measured here: `LDL_min_distance` says how long it
would have to be to show).
"""
from __future__ import annotations

import csv
import re
import statistics
import sys
import tarfile

REG = re.compile(r"\bR(\d+)\b")
LINE = re.compile(r"\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;?\s*$")
L2_HIT_CYCLES = 290
LDSM_CYCLES = 23


def parse(line: str):
    m = LINE.match(line)
    if not m:
        return None
    text = m.group(2).rstrip(" ;")
    if text.startswith("@"):
        text = text.split(None, 1)[1]
    parts = text.split(None, 1)
    return parts[0], [a.strip() for a in parts[1].split(",")] if len(parts) > 1 else []


def regs(text: str) -> set[int]:
    return {int(m.group(1)) for m in REG.finditer(text)}


def written(op: str, ops: list[str]) -> set[int]:
    """Registers an instruction writes (its first operand when that is a register)."""
    if not ops or ops[0].startswith("[") or op.startswith(("STL", "STS", "STG", "LDGSTS", "BAR", "BRA")):
        return set()
    width = 4 if (".128" in op or op.startswith("HMMA") or (op.startswith("LDSM") and ".4" in op)) else \
        2 if (".64" in op or (op.startswith("LDSM") and ".2" in op)) else 1
    return {r + i for r in regs(ops[0]) for i in range(width)}


def read(op: str, ops: list[str]) -> set[int]:
    if op.startswith(("STL", "STS", "STG", "LDGSTS")):
        return set().union(*(regs(o) for o in ops)) if ops else set()
    return set().union(*(regs(o) for o in ops[1:])) if len(ops) > 1 else set()


def waits(body: list[tuple[str, list[str]]], kind: str) -> list[int]:
    """Distances (instructions) from the last load of `kind` each wait covers to the waiting one."""
    pending: list[tuple[int, set[int]]] = []
    out = []
    for i, (op, ops) in enumerate(body):
        touched = read(op, ops) | written(op, ops)
        hit = [k for k, (_, rs) in enumerate(pending) if rs & touched]
        if hit:
            last = max(hit)
            out.append(i - pending[last][0])
            pending = pending[last + 1:]
        if op.startswith(kind):
            pending.append((i, written(op, ops)))
    return out


def exposed(distances: list[int], latency: int) -> int:
    return sum(max(0, latency - d) for d in distances)


def main(paths: list[str]) -> int:
    out = csv.writer(sys.stdout)
    out.writerow(["kernel", "loop_insns", "loop_HMMA", "loop_LDL", "LDL_waits", "LDL_median_distance",
                  "LDL_min_distance", f"LDL_exposed_cycles_at_{LDSM_CYCLES}", f"LDL_exposed_cycles_at_{L2_HIT_CYCLES}",
                  "LDSM_waits", f"LDSM_exposed_cycles_at_{LDSM_CYCLES}"])
    for path in paths:
        try:
            tar = tarfile.open(path)
        except (OSError, tarfile.TarError) as exc:
            print(f"{path}: not a readable tar archive ({exc})", file=sys.stderr)
            return 2
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if not member.name.endswith(".loop.sass"):
                continue
            text = tar.extractfile(member).read().decode()
            body = [p for p in (parse(ln) for ln in text.splitlines()) if p]
            ldl = waits(body, "LDL")
            ldsm = waits(body, "LDSM")
            out.writerow([member.name.rsplit("/", 1)[-1][:-len(".loop.sass")], len(body),
                          sum(op.startswith("HMMA") for op, _ in body), sum(op.startswith("LDL") for op, _ in body),
                          len(ldl), statistics.median(ldl) if ldl else "", min(ldl) if ldl else "",
                          exposed(ldl, LDSM_CYCLES), exposed(ldl, L2_HIT_CYCLES), len(ldsm),
                          exposed(ldsm, LDSM_CYCLES)])
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: spill_sass_waits.py SASS.tar.gz [...]", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
