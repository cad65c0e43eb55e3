"""bench/h200/sass_loops.py: the trip loop of a compiled k-loop, by opcode and by pipe (what
attn_trip_sass.py and wq_loop_sass.py count), on a hand-written cuobjdump excerpt."""
import importlib.util
from pathlib import Path

SASS = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   LDS.U8 R4, [R2] ;
        /*0030*/                   F2FP.F16.E4M3.UNPACK_B R5, R4 ;
        /*0040*/                   F2F.BF16.F16 R6, R5 ;
        /*0050*/                   PRMT R7, R6, 0x5410, R6 ;
        /*0060*/                   HMMA.16816.F32.BF16 R8, R12, R7, R8 ;
        /*0070*/              @!P0 IMAD.MOV.U32 R9, RZ, RZ, R3 ;
        /*0080*/               @P1 BRA 0x20 ;
        /*0090*/                   LDS.U8 R4, [R2] ;
        /*00a0*/                   BRA 0x90 ;
        /*00b0*/                   EXIT ;
"""


def _module():
    path = Path(__file__).resolve().parents[1] / "bench" / "h200" / "sass_loops.py"
    spec = importlib.util.spec_from_file_location("sass_loops", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_loop_is_the_backward_branch_that_holds_the_mma():
    """Two backward branches: 0x80 -> 0x20 (7 instructions, 0x20..0x80, one HMMA) and 0xa0 -> 0x90 (2,
    none). The trip loop is the first; its predicated instructions count by their opcode (@!P0 IMAD,
    @P1 BRA)."""
    sl = _module()
    ins = sl.parse(SASS)
    assert len(ins) == 12
    body = sl.trip_loop(ins, ("HMMA", "HGMMA"))
    assert [op for _, op, _ in body] == ["LDS.U8", "F2FP.F16.E4M3.UNPACK_B", "F2F.BF16.F16", "PRMT",
                                         "HMMA.16816.F32.BF16", "IMAD.MOV.U32", "BRA"]
    # looking for HGMMA only: no loop holds one
    assert sl.trip_loop(ins) == []


def test_the_loop_by_pipe():
    """The Kernel Profiling Guide's pipes: LDS lsu, F2FP and PRMT alu, F2F xu, HMMA tensor, IMAD fma,
    BRA cbu: alu 2, the rest 1 each (7 in all)."""
    sl = _module()
    ops, pipes = sl.loop_counts(sl.trip_loop(sl.parse(SASS), ("HMMA",)))
    assert ops["F2F.BF16.F16"] == 1
    assert dict(pipes) == {"lsu": 1, "alu": 2, "xu": 1, "tensor": 1, "fma": 1, "cbu": 1}
    assert sl.pipe_of("UIADD3") == "uniform" and sl.pipe_of("I2F.S8") == "xu" and sl.pipe_of("XYZ") == "other"
