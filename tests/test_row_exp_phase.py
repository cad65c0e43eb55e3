"""bench/h200/row_exp_phase.py's reading of the compiled softmax's exps, and the in-place operands of
bench/h200/row_sass_sim.py's decode that the walk depends on (session 39: the decode had dropped them)."""

from bench_script import load_bench

phase = load_bench("h200/row_exp_phase")
sim = load_bench("h200/row_sass_sim")

# One range-reduced exp as ptxas compiles tl.exp (the campaigns' softmax, calibration/h200/measured/
# row_sass_counts/exp_phase.csv): x - max, by log2 e, the range check, the scaled MUFU, the square.
ONE = """
        /*0000*/                   FADD R4, R4, -R2 ;
        /*0010*/                   FMUL R4, R4, 1.4426950216293334961 ;
        /*0020*/                   FSETP.GEU.AND P6, PT, R4, -126, PT ;
        /*0030*/              @!P6 FMUL R4, R4, 0.5 ;
        /*0040*/                   MUFU.EX2 R5, R4 ;
        /*0050*/              @!P6 FMUL R5, R5, R5 ;
        /*0060*/                   EXIT ;
"""

# Two exps on two predicates, their checks, scalings, MUFUs and squares interleaved.
TWO = """
        /*0000*/                   FSETP.GEU.AND P5, PT, R4, -126, PT ;
        /*0010*/                   FSETP.GEU.AND P6, PT, R6, -126, PT ;
        /*0020*/              @!P5 FMUL R4, R4, 0.5 ;
        /*0030*/              @!P6 FMUL R6, R6, 0.5 ;
        /*0040*/                   MUFU.EX2 R5, R4 ;
        /*0050*/                   MUFU.EX2 R7, R6 ;
        /*0060*/              @!P5 FMUL R5, R5, R5 ;
        /*0070*/              @!P6 FMUL R7, R7, R7 ;
        /*0080*/                   EXIT ;
"""


def test_decode_keeps_in_place_operands_as_sources():
    """``@!P6 FMUL R5, R5, R5`` writes R5 and reads it (and P6): its sources are R5 twice and the
    guard; ``FSETP.GEU.AND P6, PT, R4, -126, PT`` writes P6 (PT is no register) and reads R4."""
    prog = sim.decode(ONE)
    assert [p[1] for p in prog] == ["FADD", "FMUL", "FSETP.GEU.AND", "FMUL", "MUFU.EX2", "FMUL"]
    square = prog[5]
    assert square[3] == [("R", 5)]
    assert square[2] == [("R", 5), ("R", 5), ("P", 6)]
    assert prog[2][3] == [("P", 6)] and prog[2][2] == [("R", 4)]


def test_one_exp_walks_its_whole_chain():
    """One warp (WARPS = 4: one a scheduler), one instruction a cycle, fma 4 and ex2 17 cycles
    (row_sass_sim.LAT), each instruction issued once its sources are ready:
      FADD @0 -> R4 at 4; FMUL @4 -> 8; FSETP @8 -> P6 at 12; the scaling @12 -> R4 at 16;
      MUFU @16 -> R5 at 33; the square @33 (it reads R5: the decode's sources)
    the walk ends at the square's issue, 33 cycles, plus its 4: 37. (Without R5 among the square's
    sources it issued at 17: 21.) One predicate, one exp in flight."""
    assert phase.exps_in_flight(ONE) == (1, 1)
    assert phase.walk_cycles(ONE, 4) == 37


def test_two_predicates_keep_two_exps_in_flight():
    """The checks @0 (P5 at 4) and @1 (P6 at 5); the scalings @4 (R4 at 8) and @5 (R6 at 9); the MUFUs
    @8 (R5 at 25; the SFU busy 8 cycles a warp's MUFU, to 16) and @16 (R7 at 33); the squares @25 and
    @33: 33 + 4 = 37 cycles for two exps, each 17-cycle MUFU under the other's. Two predicates (P5,
    P6), and both exps issued before the first one's result is read."""
    assert phase.exps_in_flight(TWO) == (2, 2)
    assert phase.walk_cycles(TWO, 4) == 37
