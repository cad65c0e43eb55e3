"""bench/h200/measure_round_split.py's arithmetic: the CTAs a SM its variants' registers allow (the pairs it times
must share an occupancy) and the row tile's vectors a thread, whose load rounds it reads."""

from bench_script import load_bench

split = load_bench("h200/measure_round_split")


def test_ctas_a_sm_from_the_registers_by_sub_partition():
    """sm_90: 16,384 registers a sub-partition, a warp's registers in units of 256, four sub-partitions.
    96 registers: 96 x 32 = 3,072 a warp, 16,384 // 3,072 = 5 warps a sub-partition, 20 an SM, five 4-warp CTAs.
    104: 3,328 a warp, 4 a sub-partition, 16 an SM, four CTAs (the one-round (8, 4) at 1024 that the pair compares).
    168 on 2 warps: 5,376, 3 a sub-partition, 12 an SM, six CTAs; on 4 warps three.
    170: 5,440 rounds up to 5,632, 2 a sub-partition, 8 an SM, two 4-warp CTAs.
    61 on 8 warps: 1,952 rounds up to 2,048, 8 a sub-partition, 32 an SM, four CTAs."""
    assert split.blocks_per_sm(96, 4) == 5
    assert split.blocks_per_sm(104, 4) == 4
    assert split.blocks_per_sm(168, 2) == 6
    assert split.blocks_per_sm(168, 4) == 3
    assert split.blocks_per_sm(170, 4) == 2
    assert split.blocks_per_sm(61, 8) == 4


def test_ctas_a_sm_held_by_warps_and_ctas():
    """16 registers on 32 warps: 512 a warp, 32 a sub-partition, but 64 warps an SM: 64 // 32 = 2 CTAs.
    16 registers on 1 warp: 128 warps' worth of registers, 64 warps an SM, but 32 CTAs at most."""
    assert split.blocks_per_sm(16, 32) == 2
    assert split.blocks_per_sm(16, 1) == 32


def test_row_tile_vectors_a_thread():
    """(8, 4) at N = 1024: 8 x 1,024 x 2 B / 16 B / 128 threads = 8 vectors (the pattern 11111112 has eight);
    (8, 4) at 2048: 16; (1, 16) at 1024: 2,048 B / 16 / 512 = 0.25, at least one."""
    assert split.x_vectors(1024, 8, 4) == 8
    assert split.x_vectors(2048, 8, 4) == 16
    assert split.x_vectors(1024, 1, 16) == 1
