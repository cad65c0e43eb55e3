"""A copy between on-chip levels (shared memory to registers) in the simulator costs its port time, not a DRAM
round trip (tfx.sim.lower: no DMA descriptor; tfx.sim.event_loop: no DRAM server, no memory latency)."""

from __future__ import annotations

from tfx.analysis.analyze import analyze
from tfx.bundled import bundled_kernel
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.sim import simulate


def test_the_dequant_copy_takes_its_shared_memory_port_time():
    """gemm_w4a16.tile at its defaults on h200_sxm (BK = BN = 128): tile 0's `%w_4bit = copy %w_packed -> rmem` reads
    the 4-bit W tile, 128 x 128 / 2 = 8,192 B, through the SM's shared-memory port, 128 B a cycle at 1.98 GHz =
    253.44 B/ns: 8,192 / 253.44 = 32.32 ns, 33 in the simulator's whole ns. It starts as tile 0's W load lands and
    ends 33 ns later: before the fix it waited out the DRAM latency again (700 ns, memory.hbm's) as if it were a
    global load, and the launch simulated 1.76x the prediction."""
    a = analyze(parse_file(str(bundled_kernel("gemm_w4a16.tile"))), None, load_profile("h200_sxm"), params={})
    r = simulate(a)
    tl = r.timeline
    label = {name: i for i, name in enumerate(tl.labels)}
    first = [e for e in tl.events if e[5] == 0 and e[4] == 0]
    (w_load,) = [e for e in first if e[3] == label["%w_packed = load"]]
    (w_copy,) = [e for e in first if e[3] == label["%w_4bit = copy"]]
    assert w_copy[0] == w_load[1]                 # it starts as the W tile lands in shared memory
    assert w_copy[1] - w_copy[0] == 33            # ceil(8,192 B / 253.44 B/ns)
