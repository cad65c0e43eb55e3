"""bench/h200/unpipelined_sass_windows.py: loads a thread keeps in flight in a 1-stage k-loop."""
from bench_script import load_bench


# Four 16-byte loads (R48-R51, R16-R19, R52-R55, R40-R43), stored as they come back; the
# pattern of the 16x256x64 4-warp kernel's loop (calibration/h200/measured/unpipelined_sass).
BODY = """        /*0ea0*/              @!P0 LDG.E.128 R48, desc[UR6][R40.64] ;
        /*0f10*/              @!P1 LDG.E.128 R16, desc[UR6][R56.64] ;
        /*0f50*/              @!P1 LDG.E.128 R52, desc[UR6][R42.64] ;
        /*0f80*/                   STS.128 [R92+UR4+0x8000], R48 ;
        /*0fb0*/              @!P0 LDG.E.128 R40, desc[UR6][R60.64] ;
        /*0ff0*/                   STS.128 [R91+UR4+0x1000], R16 ;
        /*1010*/                   STS.128 [R91+UR4], R52 ;
        /*1050*/                   STS.128 [R91+UR4+0x3000], R40 ;
"""


def test_pending_loads_at_each_wait():
    m = load_bench("h200/unpipelined_sass_windows")
    n, waits = m.pending_windows(BODY)
    # 4 LDGs. The STS of R48 waits with 3 pending (R48, R16, R52) and retires the first;
    # the LDG into R40 overwrites none pending; the STS of R16 then finds 3 pending (R16, R52,
    # R40), the STS of R52 2 (R52, R40), the STS of R40 1.
    assert n == 4
    assert waits == [3, 3, 2, 1]


def test_a_load_whose_address_is_a_pending_load_waits():
    m = load_bench("h200/unpipelined_sass_windows")
    body = """ /*0000*/ LDG.E.128 R4, desc[UR6][R2.64] ;
 /*0010*/ LDG.E.64 R8, desc[UR6][R4.64] ;
 /*0020*/ STS.64 [R1], R8 ;
"""
    # the second load's address R4 is the first load's result: one wait with 1 pending; then
    # the STS of R8 waits with the .64 load (R8-R9) pending alone
    assert m.pending_windows(body) == (2, [1, 1])
