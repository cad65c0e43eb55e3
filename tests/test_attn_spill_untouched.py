"""A spilling attention compile whose trip's warpgroup mmas fit the registers moves no spilled
word a trip (tfx.analysis.spill_traffic, tfx.analysis.wgmma_serial.fits; the SASS:
calibration/h200/measured/attn_spill_sass).

The registers a thread holds for the trip's warpgroup mmas (tfx.analysis.wgmma_serial): each
fp32 accumulator M x N / threads, plus PV's A (P, bf16, from registers) M x K x 16 / 32 /
threads. On 4 warps (128 threads), D = 128:
  128 x 64:  S 128 x 64 / 128 = 64, O 128 x 128 / 128 = 128, P 128 x 64 x 16 / 32 / 128 = 32:
             224 <= 255 (fits)
  128 x 128: S 128, O 128, P 64: 320 > 255 (serialized, C7511)
"""

from pathlib import Path

from tfx.analysis import spill_traffic, wgmma_serial
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
PROFILE = load_profile("h200_sxm")


def _analysis(bn, stages, spills, smem):
    p = dict(B=1, H=16, S=32768, D=128, BLOCK_M=128, BLOCK_N=bn, WARPS=4, STAGES=stages)
    return analyze(parse_file(str(KERNELS / "flash_prefill.tile")), None, PROFILE, p,
                   resources=dict(threads=128, regs=255, smem=smem, spills=spills))


def _first_loop(a):
    return next(n for n in a.root.walk() if n.kind == "loop")


def test_fits_counts_the_trips_mma_registers():
    m = Machine(PROFILE, "cta")
    small = _first_loop(_analysis(64, 3, 46, 131072))
    big = _first_loop(_analysis(128, 1, 284, 65536))
    assert wgmma_serial.trip(small, m, 4).registers == 64 + 128 + 32 == 224
    assert wgmma_serial.trip(big, m, 4).registers == 128 + 128 + 64 == 320
    assert wgmma_serial.fits(small, m, 4) == 1
    assert wgmma_serial.fits(big, m, 4) == 0
    assert wgmma_serial.serialized(big, m, 4) == 1


def test_untouched_trip_moves_no_bytes():
    # 46 words = 184 B a thread: counted, 2 x 184 B x 128 threads = 47,104 B a trip; untouched, 0
    assert spill_traffic.kloop_trip(184, 128, 255).bytes_per_trip == 2 * 184 * 128 == 47_104
    t = spill_traffic.kloop_trip(184, 128, 255, untouched=1)
    assert t.bytes_per_trip == 0
    assert t.spilled_words == 46


def test_breakdown_says_which():
    a = _analysis(64, 3, 46, 131072)
    trip = next(t for t in a.terms if t.name == "spill trip")
    assert "the 46 spilled words are values live across the loop that the trip does not read, 0 B a trip" \
        in trip.detail
    b = _analysis(128, 1, 284, 65536)
    trip = next(t for t in b.terms if t.name == "spill trip")
    # 2 x 284 words x 4 B x 128 threads = 290,816 B
    assert "2 x 284 words x 4 B x 128 threads = 290.8 KB a trip" in trip.detail


def test_the_fitting_trip_prices_as_without_its_spill_in_the_loop():
    """The 46 words leave the loop's trips alone: the launch's time differs from the same
    compile without spills only by the per-op share of the ops outside the loops (the
    prologue's and epilogue's, a few us of a 11.6 ms launch), where it was 1.36 ms (the loop's
    47,104 B a trip in series with its mma: 12.97 ms against 11.61)."""
    with_spill = _analysis(64, 3, 46, 131072).predicted_ns()
    without = _analysis(64, 3, 0, 131072).predicted_ns()
    assert 0 <= with_spill - without < 0.005 * without
