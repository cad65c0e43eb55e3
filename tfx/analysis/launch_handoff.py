"""What one launch hands the next through L2 (docs/analysis.md, section 8, "the hand-off between
launches").

A kernel of two launches (split-KV decode: the partial outputs and row statistics written by the
split launch, read back by the merge launch; a split-K GEMM's partial tiles and their reduction)
runs them back to back on one stream. The L2 is a write-back cache: the lines the first launch
stores stay in L2 until other traffic evicts them, so the second launch's reads of them hit L2
if no more than the L2's room was touched between the store and the read. Under LRU that is the
store's stack distance (Mattson, Gecsei, Slutz and Traiger, "Evaluation techniques for storage
hierarchies", IBM Systems Journal 1970): every distinct byte the first launch moves after it.

A CTA stores its outputs as it ends, so the CTAs of the first launch's last wave store last and
their lines survive; a CTA that ends ``k`` waves before the last is followed by about ``k``
waves' bytes (the launch's global traffic / its waves). Of ``n = ceil(waves)`` groups of CTAs,
``min(n, floor(room x n / bytes) + 1)`` end within the room: that share of the stored lines is
still in L2. ``room`` is the L2 capacity over its partitions, as for the reuse across waves
(tfx.analysis.l2_reuse: each partition caches the lines its own SMs read).

Measured (calibration/h200/measured/issue15 decode.csv, the merge of 64 splits, a loop of one
dependent load a split): alone after an L2 clear 44-48 us (0.69 us a split, DRAM); right after
its split launch 26-27 us when that launch was under one wave (0.41 us a split) and 35-41 us
after 3-5 waves (0.55-0.64 us a split), as the stack distance says: only the last wave's
partials are still in L2 after a launch that streams 134-268 MB.
"""

from __future__ import annotations

import math
from typing import Any

from tfx.analysis.numbers import emax, emin, is_array, where
from tfx.hw.units import (format_bandwidth_per_ns, format_counted, format_percent, format_time_ns, formula_bytes,
                          verb_for)


def stored_tensors(mesh) -> set:
    """Names of the global tensors the launch ``mesh`` stores into."""
    out = set()
    for node in mesh.walk():
        op = node.op if node.kind == "op" else None
        if op is not None and op.opcode == "store" and getattr(op, "target", None) is not None:
            out.add(op.target.tensor)
    return out


def global_bytes(mesh) -> Any:
    """Bytes the launch moves through global memory (reads and writes)."""
    return sum(v for (kind, level, _rw), v in mesh.total.items() if kind == "traffic" and level == "gmem")


def surviving_share(total_bytes, waves, room) -> Any:
    """Share of a launch's stored lines still in L2 when it ends: the CTAs of the last
    ``floor(room x n / bytes) + 1`` of its ``n = ceil(waves)`` wave groups (arrays elementwise)."""
    if is_array(total_bytes, waves, room):
        import numpy as np
        n = np.maximum(np.ceil(np.asarray(waves, dtype=float)), 1)
        groups = np.floor(np.asarray(room) * n / np.maximum(np.asarray(total_bytes, dtype=float), 1)) + 1
        return np.minimum(groups, n) / n
    n = max(math.ceil(waves), 1)
    groups = math.floor(room * n / max(total_bytes, 1)) + 1
    return min(groups, n) / n


def handoff(meshes, units, blocks, room) -> dict:
    """mesh id -> (op id -> share of its reads that hit lines the previous launch stored and
    left in L2, the facts for the breakdown), for each load of a later launch that reads a
    tensor the launch just before it stored. ``meshes``: the kernel's top-level meshes in launch
    order; ``blocks``: mesh id -> CTAs per SM."""
    out: dict = {}
    for prev, mesh in zip(meshes, meshes[1:]):
        stored = stored_tensors(prev)
        if not stored:
            continue
        resident = blocks.get(prev.id, 1) if isinstance(blocks, dict) else blocks
        waves = prev.positions / emax(units * resident, 1) if is_array(prev.positions, resident) \
            else prev.positions / max(units * resident, 1)
        total = global_bytes(prev)
        share = surviving_share(total, waves, room)
        ops = {}
        for node in mesh.walk():
            op = node.op if node.kind == "op" else None
            if op is None or op.opcode not in ("load", "copy"):
                continue
            if any(getattr(o, "tensor", None) in stored for o in op.operands):
                ops[node.id] = share
        if ops:
            out[mesh.id] = (ops, (share, total, waves, room, prev.label, sorted(stored)))
    return out


def describe(facts, fmt_bytes) -> str | None:
    """One line for the breakdown of the launch that reads what the previous one stored."""
    share, total, waves, room, prev, tensors = facts
    if is_array(share, total, waves):
        return None
    n = max(math.ceil(waves), 1)
    groups = min(n, math.floor(room * n / max(total, 1)) + 1)
    return (f"{', '.join(tensors)} stored by {prev} as its CTAs end: {fmt_bytes(total)} of global traffic over "
            f"{format_counted(waves, 'wave')}, {format_counted(n, 'wave group')} of {fmt_bytes(total / n)}; the last "
            f"min({n}, floor({fmt_bytes(room)} of L2 room x {n} / {fmt_bytes(total)}) + 1) = {groups} {verb_for(groups, 'leave')} "
            f"their lines in L2 (LRU stack distance): {format_percent(share)} of this launch's reads of them hit L2")


# ------------------------------------------------------------------ the L2 the timing hands a launch
#: The measurement condition ``analyze(..., l2_clear=True)`` prices: each launch is timed right
#: after a harness clears the L2 by writing a buffer, as triton.testing.do_bench does (it zero-fills
#: 256 MB before every timed call; bench/h200/common.py times every campaign under calibration/h200
#: so). The L2 then holds only dirty lines, and a launch's first L2 of misses each evict one, which
#: DRAM must take back beside the launch's reads (``dirty_write_back_ns``). Not the condition of a
#: serving step (tfx.model): its kernels follow each other with no clear between them, and analyze's
#: default, False, prices a launch as it runs there. Where it applies the header says so
#: (tfx.present.analysis_report.inputs_line) and the breakdown has an ``l2 write-back`` term.
L2_CLEAR_CONDITION = "timed after an L2 clear"


def _write_back_facts(m) -> tuple | None:
    """(``launch.l2_dirty_write_back`` ns, the L2's capacity in B), or None where the profile states either not."""
    wb = m.profile.get("launch.l2_dirty_write_back", None)
    cap = m.profile.memory_levels()[m.l2].capacity if m.l2 else None
    return (wb, cap) if wb and cap else None


def dirty_write_back_ns(m, dram_bytes) -> Any:
    """ns a launch's first L2 of DRAM misses add when the L2 it starts from holds only dirty
    lines (``L2_CLEAR_CONDITION``): ``launch.l2_dirty_write_back`` for a launch reading at least
    the L2, in proportion below it, min(DRAM bytes, L2) / L2 x the fact; 0 where the profile
    states none. Measured (calibration/h200/measured/stream_depth_s16 and _s17, read-only
    streams): 95 launches reading 62.9 MB or more take 8.16 us (median; 5.1-10.0) longer after
    do_bench's clear than after a 256 MB read (a clean L2), flat in the bytes beyond and in the
    bandwidth drawn; the 19 under 62.9 MB 6.0 us a 62.9 MB. Arrays elementwise."""
    facts = _write_back_facts(m)
    if facts is None:
        return 0
    wb, cap = facts
    return wb * emin(dram_bytes, cap) / cap


def write_back_rate(m) -> Any:
    """B/ns at which the dirty phase writes the L2's lines back: the L2's capacity over
    ``launch.l2_dirty_write_back`` (62,914,560 B / 8,160 ns = 7,710.1 B/ns on the H200); None where
    the profile states no write-back."""
    facts = _write_back_facts(m)
    return None if facts is None else facts[1] / facts[0]


def unhidden_write_back(m, round_ns, dram_round_ns, bytes_a_round) -> Any:
    """The share of the dirty L2's write-back a pipelined loop's rounds do not hide. Each round of
    the launch's first L2 of misses evicts as many dirty lines as it reads, and their write-back
    (``write_back_rate``) queues in front of those reads: ``bytes_a_round`` / rate more on the
    round's DRAM side. A round that DRAM sets (its loaded round trip over the tiles in flight, or
    its DRAM share) waits all of it, which is stream_depth's whole 8.16 us; a round longer than its
    DRAM side (set by the tensor cores, the load path, the shared-memory pipe) hides up to that
    slack: max(0, 1 - max(round - DRAM side, 0) / (bytes a round / rate)). Checked against
    calibration/h200/measured/l2_dirty_s20 and l2_dirty_s23, whose dirty - clean the 8.16 us was
    not fitted on (docs/analysis.md, "The write-back a round's slack hides"). 1 where the profile
    states no write-back or the round reads nothing. Arrays elementwise."""
    rate = write_back_rate(m)
    if rate is None:
        return 1
    t_wb = bytes_a_round / rate
    slack = emax(round_ns - dram_round_ns, 0)
    return where(t_wb > 0, emax(1 - slack / emax(t_wb, 1e-30), 0.0), 1.0)


def describe_dirty_write_back(m, dram_bytes, ns, stream_share=1, slack=None) -> str:
    """The ``l2 write-back`` term's sentence (``dirty_write_back_ns``, times ``stream_share``, the
    share of the launch's DRAM bytes priced at rates measured from a clean L2; scalars)."""
    wb, cap = _write_back_facts(m)
    share = (f"{format_time_ns(wb)} x {formula_bytes(float(dram_bytes))} / {formula_bytes(cap)} of L2"
             if dram_bytes < cap else f"{format_time_ns(wb)} (its {formula_bytes(float(dram_bytes))} of DRAM "
                                     f"reads pass the {formula_bytes(cap)} of L2)")
    part = "" if float(stream_share) >= 1 else (
        f" x {format_percent(float(stream_share))} of its DRAM bytes on the stream's clean-L2 line (kloop's line "
        f"holds the rest's)")
    hidden = ""
    if slack is not None:
        round_ns, dram_ns, bytes_round = (float(x) for x in slack)
        rate = write_back_rate(m)
        t_wb = bytes_round / rate
        hidden = (f" x (1 - its round's slack over its DRAM side ({format_time_ns(round_ns)} - "
                  f"{format_time_ns(dram_ns)}) / the write-back of a round's {formula_bytes(bytes_round)} at "
                  f"{format_bandwidth_per_ns(rate)} ({format_time_ns(t_wb)}) = "
                  f"{format_percent(unhidden_write_back(m, round_ns, dram_ns, bytes_round))})")
    return (f"{L2_CLEAR_CONDITION} (do_bench's clear leaves the L2 dirty): the launch's first L2 of misses "
            f"write those lines back, {share}{part}{hidden} = {format_time_ns(float(ns))} "
            f"(calibration/h200/measured/stream_depth_s16, _s17: dirty - clean)")
