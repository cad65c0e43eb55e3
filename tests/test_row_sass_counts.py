"""calibration/h200/measured/row_sass_counts: the CPU-compiled count of the warp instructions a
warp issues is what the H200 executed (ncu_rows_s15, Nsight Compute on the eight kernels).

ncu's smsp__inst_executed.sum over the launch, divided by its CTAs x warps a CTA, is the count a
warp: softmax 65536 x 1024 on (1, 16): 1.216e8 / (65,536 x 16) = 115.97, the CSV's 116; rmsnorm
32768 x 4096 on (8, 16): 3.926e7 / (4,096 x 16) = 599.06, the CSV's 599 (ncu prints four
significant digits, so each quotient is the count within half an instruction)."""
import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "calibration" / "h200" / "measured"


def _counts():
    with open(ROOT / "row_sass_counts" / "counts.csv", newline="") as f:
        return {(r["family"], int(r["N"]), int(r["BLOCK_M"]), int(r["WARPS"])): r for r in csv.DictReader(f)}


def test_ncu_executed_the_compiled_count():
    counts = _counts()
    with open(ROOT / "ncu_rows_s15" / "ncu_rows.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8
    for r in rows:
        key = (r["family"], int(r["N"]), int(r["BLOCK_M"]), int(r["WARPS"]))
        per_warp = float(r["smsp__inst_executed.sum"]) / (float(r["sm__ctas_launched.sum"]) * key[3])
        assert abs(per_warp - int(counts[key]["instructions"])) < 0.5, (key, per_warp)


def test_the_exchange_and_the_stores_by_hand():
    """softmax [1, 1024] on 16 warps (the layout of docs/analysis.md 8 (t): 2 elements a thread, 512
    threads on the row, 16 warps across it): each of the two reduces is 5 butterfly SHFL over the 32
    lanes and, across the 16 warps' partials in shared memory, 4 more: 2 x (5 + 4) = 18 SHFL; each
    stores its partials, waits at a barrier, loads, stores the result and waits again (2 BAR), and
    one more barrier keeps the second reduce from overwriting the first's buffer before every warp has
    read it: 2 x 2 + 1 = 5 BAR. rmsnorm [8, 4096] on 16 warps: 8 x 4,096 bf16 = 65,536 B over 512
    threads = 128 B a thread = 8 16-byte STG."""
    counts = _counts()
    s = counts[("softmax", 1024, 1, 16)]
    assert (int(s["SHFL"]), int(s["BAR"])) == (18, 5)
    assert int(counts[("rmsnorm", 4096, 8, 16)]["STG"]) == 8


def test_the_model_reads_the_compiled_load_rounds():
    """tfx.analysis.row_body.LOAD_ROUNDS is load_rounds.csv's kernels of two or more rounds (41 of
    145: 39 in two, 2 in three), each with its rounds; every other row of the CSV is one round."""
    from tfx.analysis import row_body
    with open(ROOT / "row_sass_counts" / "load_rounds.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 145
    late = {(r["family"], int(r["N"]), int(r["BLOCK_M"]), int(r["WARPS"])): int(r["rounds"])
            for r in rows if int(r["rounds"]) > 1}
    assert late == row_body.LOAD_ROUNDS
    assert sorted(late.values()).count(3) == 2 and len(late) == 41



# a SASS fragment of four row-tile loads: the PRMT reads load 1's R9, the last LDG rewrites load 0's R4
FRAGMENT = "\n".join([
    "        /*0100*/                   LDG.E.128 R4, desc[UR10][R2.64] ;",
    "        /*0110*/                   LDG.E.128 R8, desc[UR10][R2.64+0x1000] ;",
    "        /*0120*/                   PRMT R20, R9, 0x7632, R20 ;",
    "        /*0130*/               @P0 LDG.E.128 R12, desc[UR10][R2.64+0x2000] ;",
    "        /*0140*/                   IADD3 R30, R31, 0x1, RZ ;",
    "        /*0150*/                   LDG.E.128 R4, desc[UR10][R2.64+0x3000] ;",
])

def test_load_rounds_of_a_sass_fragment_by_hand():
    """bench/h200/row_load_rounds.py on four LDG of one thread (x_vectors 4): the first two go out
    together (round 1); the PRMT reads R9, a register of the second load (R8-R11), so it waits for
    it, and the third LDG after it is round 1 + 1 = 2; the IADD3 touches nothing outstanding but
    the fourth LDG writes R4, the first load's registers (R4-R7): the write waits for that load,
    round 1 + max(1, 1) = 2 as well. Pattern 1122, two rounds, two late."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench" / "h200"))
    import row_load_rounds
    sass = FRAGMENT
    assert row_load_rounds.load_rounds(sass, 4) == [1, 1, 2, 2]


def test_late_waits_of_a_sass_fragment_by_hand():
    """bench/h200/row_late_waits.py on the fragment of the test above (x_vectors 4): the first two
    LDG wait for nothing ('-'); the PRMT reads R9, a register of load 1 (R8-R11), so the third LDG
    issues after load 1 was waited for: 1; the fourth LDG writes R4, load 0's registers, a wait for
    load 0, and the highest index waited for so far stays 1: [None, None, 1, 1]."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench" / "h200"))
    import row_late_waits
    sass = FRAGMENT
    assert row_late_waits.late_waits(sass, 4) == [None, None, 1, 1]


def test_late_waits_agree_with_the_load_rounds():
    """late_waits.csv covers load_rounds.csv's 145 kernels, and a tile load waits for nothing ('-')
    exactly where load_rounds.csv puts it in the first round: the 104 one-round kernels are all
    '-', and e.g. rmsnorm (8, 16) at N = 2048 (pattern 1112) waits '- - - 0': its fourth vector goes
    out after the first one's data (LDG.E.128 R12 at 0x0530, after the butterfly of R12-R15's row
    began)."""
    def rows(name):
        with open(ROOT / "row_sass_counts" / name, newline="") as f:
            return {(r["family"], int(r["N"]), int(r["BLOCK_M"]), int(r["WARPS"])): r for r in csv.DictReader(f)}
    rounds, waits = rows("load_rounds.csv"), rows("late_waits.csv")
    assert rounds.keys() == waits.keys() and len(waits) == 145
    for key, r in rounds.items():
        w = waits[key]["waits"].split()
        assert len(w) == int(r["x_vectors"]), key
        assert [x == "-" for x in w] == [p == "1" for p in r["pattern"]], key
    assert waits[("rmsnorm", 2048, 8, 16)]["waits"] == "- - - 0"


def test_the_model_reads_the_pair_cycles():
    """tfx.analysis.row_body.PAIR_CYCLES is, per configuration, (pair_cycles_h100.csv's over_2d,
    pair_cycles.csv's over_2d): the simulation at the H100 SXM5's DRAM share and at the H200's
    (row_body.PAIR_SHARES), every one a two-round binary (LOAD_ROUNDS) and its cycle_ns over 2 D at
    that share (e.g. rmsnorm (1, 16) at 16384: 5,207.5 / (2 x 2 x 16,384 x 2 / 32.109 = 4,082.07) =
    1.2757 at the H200's; 6,824.5 / (131,072 / 22.409 = 5,849.0) = 1.1668 at the H100's)."""
    from tfx.analysis import row_body
    columns = []
    for name, share in (("pair_cycles_h100.csv", 3350 * 0.883 / 132), ("pair_cycles.csv", 4238.4 / 132)):
        with open(ROOT / "row_pair_sim" / name, newline="") as f:
            rows = list(csv.DictReader(f))
        table = {(r["family"], int(r["N"]), int(r["BLOCK_M"]), int(r["WARPS"])): float(r["over_2d"]) for r in rows}
        for (fam, n, bm, w), v in table.items():
            assert row_body.LOAD_ROUNDS[(fam, n, bm, w)] == 2
            r = next(x for x in rows if (x["family"], int(x["N"]), int(x["BLOCK_M"]), int(x["WARPS"])) == (fam, n, bm, w))
            assert abs(float(r["cycle_ns"]) / (2 * 2 * bm * n * 2 / share) - v) < 1e-4
        columns.append(table)
    assert columns[0].keys() == columns[1].keys()
    assert {k: (columns[0][k], columns[1][k]) for k in columns[0]} == row_body.PAIR_CYCLES
    assert row_body.PAIR_SHARES == (22.409, 32.109)


def test_the_stagger_binaries_flip_with_their_rounds():
    """row_pair_sim/stagger_cycles.csv: measure_row_stagger.py's prologue (a compare and a branch)
    makes (1, 8) and (1, 16) at N = 16384 load their tile in one round (11111111, 1111 against the
    plain 11111122, 1112): the simulated pair alternates at exactly 2 D (4,082.1 ns = 2 x 65,536 /
    32.109), as the H200 did (row_stagger: 4.13-4.16 us); (1, 4) stays two rounds (12 + 4 for 7 + 9)
    and goes the other way, 1.1406 -> 1.2153 (measured 4.47 -> 4.94 us a pair)."""
    with open(ROOT / "row_pair_sim" / "stagger_cycles.csv", newline="") as f:
        rows = {(r["kernel"], int(r["WARPS"])): r for r in csv.DictReader(f)}
    for w in (8, 16):
        assert set(rows[("stagger", w)]["rounds"]) == {"1"} and float(rows[("stagger", w)]["cycle_ns"]) == 4082.1
        assert "2" in rows[("plain", w)]["rounds"] and float(rows[("plain", w)]["over_2d"]) > 1.2
    assert float(rows[("stagger", 4)]["over_2d"]) > float(rows[("plain", 4)]["over_2d"])
