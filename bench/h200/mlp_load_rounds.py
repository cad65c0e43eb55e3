#!/usr/bin/env python3
"""The load rounds of measure_mlp.py's one-stage k-loop, compiled on the CPU (no GPU, no torch).

Usage: python3 bench/h200/mlp_load_rounds.py [BMxBNxBK ...]   (default: run_stage1_warps_s36.sh's four tiles)

tfx/analysis/triton_load_rounds.py holds the rounds of the campaigns' matmul_kernel (bench/h200/
unpipelined_rounds.py). The calibration k-loop of measure_mlp.py (mlp_kernel.kloop_kernel: simpler addressing,
its CTAs' rows and columns side by side) is another binary: this compiles it for sm_90 at 1 stage on 2, 4 and 8
warps, as run_stage1_warps_s36.sh launches it (K = 16384, 132 CTAs), and walks its loop's SASS with
unpipelined_rounds.py's rules. It prints each compile's LDG count and rounds beside the campaign table's entry for
the same tile.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

TILES = [(16, 64, 32), (32, 64, 32), (16, 128, 32), (16, 64, 64)]


def main(argv):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    import measure_spill_sass as mss
    import unpipelined_rounds as ur
    from common import launch_signature
    from mlp_kernel import kloop_kernel
    from tfx.analysis.triton_load_rounds import ROUNDS
    tiles = [tuple(int(v) for v in a.split("x")) for a in argv] or TILES
    k_total, ctas = 16384, 132
    for bm, bn, bk in tiles:
        for warps in (2, 4, 8):
            ints = dict(K=k_total, KRES=k_total, a_rows_per_cta=bm, b_cols_per_cta=bn, lda=k_total, ldb=bn * ctas)
            sig, consts, attrs = launch_signature(
                kloop_kernel, {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "sm_ptr": "*i32"}, ints,
                dict(BM=bm, BN=bn, BK=bk, RECORD_SM=True))
            k = triton.compile(ASTSource(fn=kloop_kernel, signature=sig, constexprs=consts, attrs=attrs),
                               target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, num_stages=1))
            with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
                f.write(k.asm["cubin"])
                f.flush()
                sass = mss.nvdisasm(f.name)
            rounds = ur.rounds_of(ur.loop_body(sass))
            n = max(rounds) if rounds else 0
            by = "/".join(str(rounds.count(i)) for i in range(1, n + 1))
            table = ROUNDS.get((16, False, bm, bn, bk, warps), 1)
            print(f"{bm}x{bn}x{bk} on {warps} warps: {len(rounds)} LDG a thread, {n} round{'s' * (n != 1)} ({by}); "
                  f"the campaign kernel's table: {table}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
