"""bench/row_issue_sim.py (a CPU finding tool, docs/analysis.md 8 (z)): the SASS control bits and the
in-order issue of four schedulers, derived by hand."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("row_issue_sim", ROOT / "bench" / "row_issue_sim.py")
sim = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sim)


def _word(stall, wb=7, rb=7, wait=0):
    return (stall << 41) | (wb << 46) | (rb << 49) | (wait << 52)


def test_control_bits_of_an_ldc():
    """softmax [8, 2048] on 16 warps opens with LDC R1, c[0x0][0x28], high word 0x000e220000000800:
    its top 24 bits 0x000e22 = 3,618; bits 41-44 (3,618 >> 1) & 15 = 1,809 & 15 = 1 (stall 1); bits
    46-48 (3,618 >> 6) & 7 = 56 & 7 = 0 (write scoreboard 0); bits 49-51 (3,618 >> 9) & 7 = 7 (no
    read scoreboard); bits 52-57 (3,618 >> 12) & 63 = 0 (waits on none)."""
    hi = 0x000e220000000800
    assert hi >> 40 == 3618
    assert [sim.field(hi, f) for f in (sim.STALL, sim.WB, sim.RB, sim.WAIT)] == [1, 0, 7, 0]


def test_issue_of_two_instructions(tmp_path):
    """MOV (stall 2) then EXIT (stall 1). One CTA of 4 warps: each alone on its scheduler issues the
    MOV at cycle 0 and the EXIT at cycle 2, done after cycle 2: 3 cycles. 8 warps: scheduler 0 holds
    warps 0 and 4: MOV of 0 at 0, MOV of 4 at 1, EXIT of 0 at 2 (its stall passed), EXIT of 4 at 3:
    4 cycles. An LDS (write scoreboard 0, 23 cycles) whose value the EXIT waits for (mask bit 0):
    the EXIT issues at 23, 24 cycles."""
    def listing(rows):
        text = ""
        for i, (ins, hi) in enumerate(rows):
            text += f"        /*{i * 16:04x}*/                   {ins} ;    /* 0x0000000000000000 */\n"
            text += f"                                                  /* 0x{hi:016x} */\n"
        path = tmp_path / f"k{len(rows)}_{rows[0][1]}.sass"
        path.write_text(text)
        return str(path)
    two = listing([("MOV R1, 0x1", _word(2)), ("EXIT", _word(1))])
    assert sim.simulate(two, 1, 4) == 3
    assert sim.simulate(two, 1, 8) == 4
    waits = listing([("LDS R1, [R2]", _word(1, wb=0)), ("EXIT", _word(1, wait=1))])
    assert sim.simulate(waits, 1, 1) == 24
