#!/usr/bin/env python3
"""A lone warp's trip from its compiled k-loop: the stall counts and scoreboards ptxas wrote, walked in order.

Usage (no GPU):
    python3 bench/h200/lone_warp_walk.py --compile OUTDIR BM,BN,BK,WARPS,STAGES ...   # Triton 3.6.0 venv
    python3 bench/h200/lone_warp_walk.py --walk OUTDIR [--rread C] [--rows]            # tfx on the path
    python3 bench/h200/lone_warp_walk.py --samples OUTDIR [-v]                         # OUTDIR/ncu/*.source.csv.gz
    python3 bench/h200/lone_warp_walk.py --emit OUTDIR [--rread C] > tfx/analysis/triton_lone_walk.py

--compile builds the issue-15 `matmul_kernel` (B [K, N]) for sm_90 with measure_spill_sass.compile_cpu (as
fragment_chain.py does), disassembles the cubin with nvdisasm -hex and keeps the k-loop body (the backward branch
that holds the HMMAs) with each instruction's control bits, decoded from the high word of its 128-bit encoding
(bits 41-44 the stall count, 45 yield, 46-48 the write barrier it sets, 49-51 the read barrier it sets, 52-57 the
barriers it waits on, 58-61 the operand reuse flags; 7 = none): OUTDIR/sass/bf16_BMxBNxBK_wW_sS.ctrl.txt, one line
an instruction, `stall yield wbar rbar waitmask | text`, and appends `spec regs spills instructions stall-sum` to
stdout (calibration/h200/measured/lone_warp_s27: compile_log.txt, and the bodies packed as loops.tar.gz, which the
other modes read where OUTDIR/sass/ is absent).

--walk issues each saved body in order as one warp alone on its sub-partition, three trips, the third's span:
  - an instruction issues when every barrier in its wait mask is released, then holds the issue for its stall count
    (the compiler's own fixed-latency schedule: HMMA spacing, ALU dependences, uniform datapath);
  - a barrier set by LDSM releases L = 34 cycles after issue (calibration/h200/measured/ldsm_latency), by LDS 23
    (latency/instr_latency.csv), by anything else 4 (decode_sass's rule); a read barrier (LDGSTS releasing its
    address registers) --rread cycles after issue (default 4; not measured on this H200);
  - `queued`: in addition each LDSM waits for the SM's shared-memory port (128 B/cycle, the vendor's figure, as
    decode_sass and the model's operand reads) behind the same LDSM of each of the CTA's W warps (lock step: two
    BAR.SYNC a trip), and its result comes L - bytes/128 cycles after the last of them leaves the port.
It prints, for calibration/h200/measured/l2_groupm_s26b's seven launches (Nsight, one CTA an SM): the stall-count
sum against Nsight's (wait + selected) x the loop's instructions, the walk and the queued walk against Nsight's
cycles a trip; and for copy_issue_wide_s24's non-spilling 2-warp `matmul` rows: the model's trip
(bench/few_sm_trips.py) and the walks at the SM's clock under warp mma (1.98 GHz x 0.907) against the measured.

--samples reads Nsight Compute's SASS source page (SourceCounters: warp-state samples per instruction, made by
bench/h200/run_s27_lonewarp_ncu.sh) of OUTDIR/ncu/TAG.source.csv beside OUTDIR/sass/TAG.ctrl.txt (the same SASS,
checked): each loop instruction's share of the loop's samples times the trip's cycles (ncu's warp cycles an issued
instruction x the loop's instructions) is the time a warp spends at it a trip; summed from an instruction that
sets a barrier to one that waits on it, the time its release took after issue, for the waiters that did wait
(the barrier's release) and those that did not (an upper bound of it). Prints that for LDGSTS read barriers (the
copy's address registers) and LDSM write barriers (the fragment), and the instructions that carry the
long_scoreboard and short_scoreboard samples.

--emit writes the table tfx.analysis.lone_walk reads: (BM, BN, BK, warps, stages) -> the queued walk's cycles a
trip at --rread, for every non-spilling 2-warp HMMA compile of OUTDIR/compile_log.txt (the port's lock step is
Nsight's on 2-warp loops; on 4 warps it overshoots copy_issue_wide_s24's 16x64x128 s4 by +15-17%: warps along an
ldmatrix chain do not meet the port together).
"""
from __future__ import annotations

import csv
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

L_LDSM, L_LDS, L_OTHER = 34, 23, 4     # cycles: ldsm_latency, instr_latency lds, decode_sass's other results
PORT_B = 128                            # B/cycle: the SM's shared-memory port
GHZ = 1.98 * 0.907                      # the SM's clock under warp mma (hw_profiles clock.core x clock_fraction)
S26B = ROOT / "calibration/h200/measured/l2_groupm_s26b/l2_groupm.csv"
WIDE = ROOT / "calibration/h200/measured/copy_issue_wide_s24/copy_issue.csv"

INS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\* 0x([0-9a-f]{16}) \*/")
HI = re.compile(r"^\s*/\* 0x([0-9a-f]{16}) \*/\s*$")


def decode(sass: str) -> list[dict]:
    """nvdisasm -hex text -> instructions with their control bits and labels."""
    lines, out, pending = sass.splitlines(), [], []
    for i, line in enumerate(lines):
        lab = re.match(r"\s*\.(L_x_\d+):", line)
        if lab:
            pending.append(lab.group(1))
            continue
        m = INS.match(line)
        if m and i + 1 < len(lines) and HI.match(lines[i + 1]):
            c = int(HI.match(lines[i + 1]).group(1), 16) >> 41
            out.append(dict(addr=int(m.group(1), 16), text=m.group(2).strip(), labels=pending, stall=c & 0xF,
                            yld=(c >> 4) & 1, wbar=(c >> 5) & 7, rbar=(c >> 8) & 7, wait=(c >> 11) & 0x3F))
            pending = []
    return out


def loop_body(ins: list[dict]) -> list[dict]:
    """The k-loop: the longest backward branch whose span holds an mma."""
    at = {lab: d["addr"] for d in ins for lab in d["labels"]}
    best: list[dict] = []
    for d in ins:
        b = re.search(r"BRA\s+`?\(?\.?(L_x_\d+)", d["text"])
        if b and at.get(b.group(1), d["addr"] + 1) <= d["addr"]:
            body = [x for x in ins if at[b.group(1)] <= x["addr"] <= d["addr"]]
            if any("MMA" in x["text"] for x in body) and len(body) > len(best):
                best = body
    return best


def write_ctrl(body: list[dict], path: Path) -> None:
    path.write_text("".join(f"{d['stall']} {d['yld']} {d['wbar']} {d['rbar']} {d['wait']:06b} | {d['text']}\n"
                            for d in body))


def read_ctrl(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        head, text = line.split(" | ", 1)
        s, y, w, r, wait = head.split()
        out.append(dict(stall=int(s), yld=int(y), wbar=int(w), rbar=int(r), wait=int(wait, 2), text=text))
    return out


def opcode(d: dict) -> str:
    return re.sub(r"^@!?U?P\w+\s+", "", d["text"]).split()[0]


def ldsm_bytes(op: str) -> int:
    return 512 if op.endswith(".4") else 256 if op.endswith(".2") else 128


def walk(body: list[dict], warps: int, rread: float = L_OTHER, queued: bool = False, trips: int = 3) -> dict:
    """One warp's trip (module docstring): cycles, the stall-count sum, and the waits by the barrier's setter."""
    t, port = 0.0, 0.0
    rel = [(0.0, "")] * 6
    acc = {"stall": 0.0, "LDSM": 0.0, "LDGSTS": 0.0, "other": 0.0}
    marks = []
    for _ in range(trips):
        marks.append((t, dict(acc)))
        for d in body:
            waits = [rel[b] for b in range(6) if d["wait"] >> b & 1]
            if waits:
                ready, who = max(waits)
                if ready > t:
                    acc[who if who in acc else "other"] += ready - t
                    t = ready
            op = opcode(d)
            base = op.split(".")[0]
            done = t + L_OTHER
            if base == "LDSM":
                done = t + L_LDSM
                if queued:
                    b = ldsm_bytes(op)
                    port = max(t, port) + warps * b / PORT_B
                    done = port + L_LDSM - b / PORT_B
            elif base == "LDS":
                done = t + L_LDS
            if d["wbar"] < 6:
                rel[d["wbar"]] = max(rel[d["wbar"]], (done, base))
            if d["rbar"] < 6:
                rel[d["rbar"]] = max(rel[d["rbar"]], (t + rread, base))
            t += d["stall"]
            acc["stall"] += d["stall"]
    marks.append((t, dict(acc)))
    (a, ca), (b, cb) = marks[-2], marks[-1]
    return dict(cycles=b - a, **{k: cb[k] - ca[k] for k in cb})


def sass_dir(out: Path) -> Path:
    """OUTDIR/sass, unpacked from OUTDIR/loops.tar.gz into a temporary folder where absent."""
    if (out / "sass").is_dir():
        return out / "sass"
    import tarfile
    import tempfile
    tmp = Path(tempfile.mkdtemp(prefix="lone_warp_"))
    with tarfile.open(out / "loops.tar.gz") as tar:
        tar.extractall(tmp)
    return tmp / "sass"


def emit(out: Path, rread: float) -> str:
    sass = sass_dir(out)
    table = {}
    for line in open(out / "compile_log.txt"):
        p = line.split()
        if len(p) != 5 or p[0] == "skip" or int(p[2]):
            continue
        k = tuple(int(x) for x in p[0].split(","))
        body = read_ctrl(sass / f"{name(k)}.ctrl.txt")
        if k[3] == 2 and any(opcode(d).startswith("HMMA") for d in body):
            table[k] = round(walk(body, k[3], rread, queued=True)["cycles"])
    lines = ['"""One warp\'s in-order walk of its compiled bf16 warp-mma Triton 3.6.0 GEMM k-loop on sm_90, cycles a trip',
             "(tfx.analysis.lone_walk): (BM, BN, BK, warps, stages) -> the walk of the k-loop body's stall counts and",
             "scoreboards, its ldmatrix queued at the SM's shared-memory port behind its CTA's other warps, an LDGSTS's",
             f"address registers released {rread:g} cycles after its issue. Written by `python3 bench/h200/lone_warp_walk.py",
             "--emit calibration/h200/measured/lone_warp_s27` from that folder's compiled 2-warp loops (B [K, N], no",
             "spills).\"\"\"",
             "", "WALK = {"]
    lines += [f"    {k!r}: {table[k]}," for k in sorted(table)]
    return "\n".join(lines + ["}"]) + "\n"


def name(k) -> str:
    return "bf16_%dx%dx%d_w%d_s%d" % tuple(k)


def compile_many(out: Path, specs: list[str]) -> None:
    import measure_spill_sass as mss
    (out / "sass").mkdir(parents=True, exist_ok=True)
    for spec in specs:
        bm, bn, bk, w, st = map(int, spec.split(","))
        c = ("gemm_bf16", 4096, 4096, 4096, bm, bn, bk, st, 1, "kn")
        try:
            regs, spills, sass = mss.disassemble_cpu(c, w, hex_bits=True)
        except Exception as exc:               # noqa: BLE001 (out of shared memory, ...)
            print("skip", spec, repr(exc)[:120], flush=True)
            continue
        body = loop_body(decode(sass))
        write_ctrl(body, out / "sass" / f"{name((bm, bn, bk, w, st))}.ctrl.txt")
        print(spec, regs, spills, len(body), sum(d["stall"] for d in body), flush=True)


def report(out: Path, rread: float, rows: bool) -> None:
    sass = sass_dir(out)

    def body_of(k):
        p = sass / f"{name(k)}.ctrl.txt"
        return read_ctrl(p) if p.exists() else None

    print(f"## s26b (Nsight, one CTA an SM; cycles a trip at ncu's clock; LDGSTS read release {rread:g} cycles)")
    print("| tile | loop insts | stall sum | (wait+selected) x insts | ratio | walk | LDSM / LDGSTS waits | queued walk "
          "| ncu cycles | walk / ncu | queued / ncu | ncu short sb / long sb x insts |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in csv.DictReader(open(S26B)):
        k = tuple(int(r[x]) for x in ("BM", "BN", "BK", "WARPS", "STAGES"))
        body = body_of(k)
        if body is None:
            continue
        n = len(body)
        cyc = float(r["sm__cycles_elapsed"]) / (int(r["K"]) // k[2])
        ws = (float(r["stall_wait"]) + float(r["stall_selected"])) * n
        w = walk(body, k[3], rread)
        q = walk(body, k[3], rread, queued=True)
        print(f"| {k[0]}x{k[1]}x{k[2]} w{k[3]} s{k[4]} | {n} | {w['stall']:.0f} | {ws:.0f} | {w['stall'] / ws:.2f} | "
              f"{w['cycles']:.0f} | {w['LDSM']:.0f} / {w['LDGSTS']:.0f} | {q['cycles']:.0f} | {cyc:.0f} | "
              f"{w['cycles'] / cyc:.2f} | {q['cycles'] / cyc:.2f} | "
              f"{float(r['stall_short_scoreboard']) * n:.0f} / {float(r['stall_long_scoreboard']) * n:.0f} |")
    sys.path.insert(0, str(ROOT / "bench"))
    import few_sm_trips
    table = [r for r in csv.DictReader(open(WIDE)) if r["variant"] == "matmul" and r["WARPS"] == "2"]
    got = []
    for r, meas, model in few_sm_trips.priced_rows(table):
        k = tuple(int(r[x]) for x in ("BM", "BN", "BK", "WARPS", "STAGES"))
        body = body_of(k)
        if body is None:
            continue
        w = walk(body, k[3], rread)["cycles"] / GHZ
        q = walk(body, k[3], rread, queued=True)["cycles"] / GHZ
        got.append((k, int(r["ctas"]), meas, model, w, q))
    print(f"\n## copy_issue_wide_s24, non-spilling 2-warp matmul rows ({len(got)}), ns a trip at {GHZ:.3f} GHz")
    pick = {"model": lambda m, w, q: m, "walk": lambda m, w, q: w, "queued walk": lambda m, w, q: q,
            "max(model, queued walk)": lambda m, w, q: max(m, q)}
    for label, fn in pick.items():
        for st in (3, 4, None):
            e = [100 * (fn(m, w, q) - x) / x for k, _, x, m, w, q in got if st is None or k[4] == st]
            print(f"{label:24s} stages {st or 'all'}: n {len(e)}, median signed {statistics.median(e):+.1f}%, "
                  f"median |e| {statistics.median(map(abs, e)):.1f}%, worst {min(e):+.1f} / {max(e):+.1f}%")
    if rows:
        print("| tile | CTAs | measured | model | walk | queued walk |")
        print("|---|---|---|---|---|---|")
        for k, ctas, x, m, w, q in sorted(got, key=lambda g: g[3] / g[2]):
            print(f"| {k[0]}x{k[1]}x{k[2]} w{k[3]} s{k[4]} | {ctas} | {x:.1f} | {m:.1f} ({100 * (m - x) / x:+.1f}%) | "
                  f"{w:.1f} ({100 * (w - x) / x:+.1f}%) | {q:.1f} ({100 * (q - x) / x:+.1f}%) |")


CPI = {  # warp cycles an issued instruction: ncu's WarpStateStats (OUTDIR/ncu/TAG.details.csv), else s26b's
    "bf16_16x128x128_w2_s4": 4.23, "bf16_16x256x64_w2_s4": 3.43, "bf16_16x64x128_w2_s3": 4.11,
    "bf16_32x64x128_w2_s4": 3.10}
STALLS = ["stall_wait", "stall_selected", "stall_long_sb", "stall_short_sb", "stall_dispatch", "stall_barrier",
          "stall_branch_resolving", "stall_no_inst", "stall_mio", "stall_lg", "stall_math"]


def source_rows(path: Path) -> list[dict]:
    import gzip
    rows = list(csv.reader(gzip.open(path, "rt")))
    head = rows[1]
    ix = {k: head.index(k) for k in head}
    out = []
    for r in rows[2:]:
        d = dict(text=r[1].strip(), execs=int(r[ix["Instructions Executed"]] or 0),
                 samples=int(r[ix["Warp Stall Sampling (All Samples)"]] or 0))
        d.update({k: int(r[ix[k]] or 0) for k in STALLS})
        out.append(d)
    return out


def samples(out: Path, verbose: bool) -> None:
    for tag, cpi in CPI.items():
        src = out / "ncu" / f"{tag}.source.csv.gz"
        if not src.exists():
            continue
        rows = source_rows(src)
        most = max(d["execs"] for d in rows)
        loop = [d for d in rows if d["execs"] >= 0.9 * most]
        body = read_ctrl(sass_dir(out) / f"{tag}.ctrl.txt")
        same = len(body) == len(loop) and all(opcode(a) == opcode(b)
                                              for a, b in zip(body, loop))
        n, total = len(loop), sum(d["samples"] for d in loop)
        trip = cpi * n
        at = [d["samples"] / total * trip for d in loop]
        share = {k[6:]: sum(d[k] for d in loop) / total * trip for k in STALLS}
        print(f"## {tag}: {n} loop instructions (the CPU compile's SASS: {'same' if same else 'DIFFERENT'}), "
              f"{cpi} cycles an instruction = {trip:.0f} cycles a trip; " +
              ", ".join(f"{k} {v:.0f}" for k, v in share.items() if v >= 1))
        last, seen = {}, {"LDGSTS": [], "LDSM": []}
        for trip_no in range(2):
            for i, b in enumerate(body):
                for bar in range(6):
                    if trip_no and b["wait"] >> bar & 1 and bar in last and last[bar][1] in seen:
                        j, kind = last[bar]
                        span = list(range(j + 1, i + 1)) if j < i else list(range(j + 1, n)) + list(range(i + 1))
                        waited = (loop[i]["stall_long_sb"] if kind == "LDGSTS" else loop[i]["stall_short_sb"]) / total * trip
                        seen[kind].append((i, j, sum(at[x] for x in span), waited, b["text"]))
                base = opcode(b).split(".")[0]
                if b["rbar"] < 6:
                    last[b["rbar"]] = (i, base)
                if b["wbar"] < 6:
                    last[b["wbar"]] = (i, base)
        for kind, got in seen.items():
            w = [g for g in got if g[3] > 2]
            nw = [g for g in got if g[3] <= 2]
            if w:
                print(f"  {kind} barriers: {len(got)} waiters, {len(w)} waited; release after issue median "
                      f"{statistics.median(g[2] for g in w):.1f} cycles ({min(g[2] for g in w):.1f}-{max(g[2] for g in w):.1f})"
                      + (f", the unwaited reached at up to {max(g[2] for g in nw):.1f}" if nw else ""))
            if verbose:
                for i, j, el, wt, text in got:
                    print(f"    waiter {i:3d} setter {j:3d}: {el:6.1f} cycles after, waited {wt:5.1f}  {text[:48]}")
        for k in ("stall_long_sb", "stall_short_sb"):
            top = sorted(range(n), key=lambda x: -loop[x][k])[:4]
            print(f"  {k[6:]} carried by: " + "; ".join(f"{x} {body[x]['text'][:34]} ({loop[x][k] / total * trip:.0f})"
                                                      for x in sorted(top) if loop[x][k]))


if __name__ == "__main__":
    if "--compile" in sys.argv:
        i = sys.argv.index("--compile")
        compile_many(Path(sys.argv[i + 1]), sys.argv[i + 2:])
    elif "--samples" in sys.argv:
        samples(Path(sys.argv[sys.argv.index("--samples") + 1]), "-v" in sys.argv)
    elif "--emit" in sys.argv:
        rr = float(sys.argv[sys.argv.index("--rread") + 1]) if "--rread" in sys.argv else L_OTHER
        print(emit(Path(sys.argv[sys.argv.index("--emit") + 1]), rr), end="")
    elif "--walk" in sys.argv:
        rr = float(sys.argv[sys.argv.index("--rread") + 1]) if "--rread" in sys.argv else L_OTHER
        report(Path(sys.argv[sys.argv.index("--walk") + 1]), rr, "--rows" in sys.argv)
    else:
        print(__doc__)
