"""Where do the deep-pipeline BK = 32 walks lose their time? Nsight Compute on seven persistent walks
(issue 15, session 21, persist21).

The 256x64x32 walks at 5 stages on 114-132 CTAs run 290-345 ns a trip where the model prices
258-272 (the short-row copy floor, 32 x 7.07 ns + 4 KB / 128.7 B/ns); at 78 CTAs they sit on that
floor. The L2 slices' floor would hold them if the TPC pair merged ~7% of the copies (Nsight on the
walks of persist_walk_s20: 5.8-7.3%) where the rule (l2_reuse.walk_pair_merged_share) merges half of
A, 40% of a 256x64x32 trip. The BK = 64 twin (256x64x64 w4 s5, 114 CTAs) needs >= 16% merged to run
as measured. This asks the slices' read sectors and requests from the SMs, the crossbar's copied
sectors, the far-partition fills and DRAM's bytes of (in this order, none started after 80 s):

  5120x28672x4096 256x64x32 w4 s5 p132  issue15/run33's regret row (2926 us, priced 2362)
  5120x28672x4096 256x64x32 w8 s4 p78   the same shape on 78 CTAs (4646 us, priced 4288)
  5120x28672x4096 256x64x32 w4 s3 p132  its 3-stage twin (not in a campaign)
  5120x28672x4096 128x128x64 w4 s5 p114 run33's best row (2446 us)
  2048x8192x28672 256x64x32 w8 s5 p132  an N = 8192 walk at 5 stages (2076 us, priced 1867)
  4096x14336x8192 256x64x32 w8 s5 p78   the same tile on its floor at 78 CTAs (3071 us, priced 3100)
  2048x8192x14336 256x64x64 w4 s5 p114  the BK = 64 twin (896 us, priced 874)

Nsight profiles the second of two launches on random data (clocks at base: its times run ~10%
over do_bench's). One ncu process a row (measure_persist_s19.profile through measure_l2_groupm.py --one persistent),
~8 s each. Writes OUT/ncu_persist_s19.csv (the reader's name) and ncu_raw.txt.

    PYTHONUNBUFFERED=1 python3 bench/h200/measure_persist_ncu_s21.py OUTDIR
"""
import os
import sys
import time

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

NCU = [(5120, 28672, 4096, 256, 64, 32, 4, 5, 132), (5120, 28672, 4096, 256, 64, 32, 8, 4, 78),
       (5120, 28672, 4096, 256, 64, 32, 4, 3, 132), (5120, 28672, 4096, 128, 128, 64, 4, 5, 114),
       (2048, 8192, 28672, 256, 64, 32, 8, 5, 132), (4096, 14336, 8192, 256, 64, 32, 8, 5, 78),
       (2048, 8192, 14336, 256, 64, 64, 4, 5, 114)]

if __name__ == "__main__":
    sys.argv = [sys.argv[0], OUT]
    import measure_persist_s19 as ps
    ps.NCU_METRICS = ps.NCU_METRICS + ["lts__t_requests_srcunit_tex_op_read.sum"]
    ps.OUT, ps.NCU, ps.T0 = OUT, NCU, T0
    ps.NCU_DEADLINE_S = float(os.environ.get("PN21_NCU_DEADLINE_S", "80"))
    ps.profile()
    print(f"done {time.time() - T0:.1f} s", flush=True)
