"""bench/h200/spill_sass_waits.py: the LDL -> first-use distances of a k-loop body."""
from bench_script import load_bench


BODY = """/*0000*/ LDL R11, [R1+0x1c] ;
/*0010*/ LDL.64 R12, [R1+0x10] ;
/*0020*/ IADD3 R4, R2, R3, RZ ;
/*0030*/ IADD3 R5, R13, R4, RZ ;
/*0040*/ LDGSTS.E.BYPASS.128 [R60], desc[UR14][R4.64], P2 ;
/*0050*/ LDSM.16.M88.4 R20, [R2+UR17] ;
/*0060*/ HMMA.16816.F32.BF16 R96, R20, R52, R96 ;
/*0070*/ MOV R7, R11 ;
"""


def test_waits_distances_and_exposure():
    m = load_bench("h200/spill_sass_waits")
    body = [p for p in (m.parse(ln) for ln in BODY.splitlines()) if p]
    # LDL.64 R12 writes R12-R13; the IADD3 at index 3 reads R13: one wait covering both LDLs
    # (in order), 3 - 1 = 2 instructions after the later one; the MOV of R11 at index 7 finds
    # nothing pending (R11's LDL was covered by that wait).
    ldl = m.waits(body, "LDL")
    assert ldl == [2]
    # LDSM.4 at index 5 writes R20-R23; the HMMA at index 6 reads R20: distance 1.
    assert m.waits(body, "LDSM") == [1]
    # exposed cycles: max(0, 23 - 2) = 21 at the shared-memory latency, 290 - 2 = 288 at L2's.
    assert m.exposed(ldl, 23) == 21
    assert m.exposed(ldl, 290) == 288


def test_unreadable_archive_exits_2(tmp_path, capsys):
    m = load_bench("h200/spill_sass_waits")
    bad = tmp_path / "x.tar.gz"
    bad.write_text("not a tar")
    assert m.main([str(bad)]) == 2
    assert "not a readable tar archive" in capsys.readouterr().err
