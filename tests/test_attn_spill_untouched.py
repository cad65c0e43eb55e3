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

import pytest

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


def _trip_spill_ns(monkeypatch, fits):
    """The spill component of each k-loop trip the analysis prices: the local traffic
    ``spill_traffic.in_series`` puts in series with the rest of the trip (its first argument),
    with ``wgmma_serial.fits`` as the compile's (``fits`` None) or forced to ``fits``."""
    seen = []
    in_series = spill_traffic.in_series

    def record(spill_ns, *rest):
        seen.append(spill_ns)
        return in_series(spill_ns, *rest)
    monkeypatch.setattr(spill_traffic, "in_series", record)
    if fits is not None:
        monkeypatch.setattr(wgmma_serial, "fits", lambda *args: fits)
    _analysis(64, 3, 46, 131072)
    return seen


def test_the_fitting_trip_puts_no_spill_in_series_with_its_mma(monkeypatch):
    """The 46 words leave the loop's trips alone: each trip's local traffic is 0 B, 0 ns, where
    counted it would be every spilled word reloaded and stored once a trip,
    2 x 46 words x 4 B x 128 threads = 47,104 B, served from L1 (the working set,
    184 B x 128 threads x 1 CTA = 23,552 B, fits what the largest carve-out leaves of L1, asked
    for by a CTA over local.max_carveout_above 49,152 B of shared memory (this one: 131,072 B):
    local.l1_capacity 262,144 B - occupancy.smem_per_sm 233,472 B = 28,672 B) at
    local.l1_bandwidth_per_cycle 32 B/cycle x clock.core 1.98 GHz = 63.36 B/ns per SM:
    47,104 / 63.36 = 743.43 ns a trip in series with the trip's mma."""
    assert set(_trip_spill_ns(monkeypatch, None)) == {0}
    counted = _trip_spill_ns(monkeypatch, 0)
    assert counted and all(ns == pytest.approx(47_104 / (32 * 1.98), rel=1e-12) for ns in counted)
