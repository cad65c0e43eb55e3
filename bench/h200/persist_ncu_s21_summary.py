"""Read persist_ncu_s21 (bench/h200/measure_persist_ncu_s21.py) on the CPU: per walk the SMs' copies
(l1tex__m_xbar2l1tex_read_sectors), what reaches the slices from them (lts__t_sectors_srcunit_tex_op_read)
and the merged share, that share over the pair's shared A tile (A's share of a trip's bytes x the
pairs on one TPC: all at 132 CTAs, 48 of 57 at 114, 9 of 39 at 78, persist_walk_s20's smids), DRAM's
bytes against the lock step's, the far-partition fills, the slices' bytes (sectors from the SMs + DRAM)
over Nsight's time, and the SMs' requests per sector.
Usage: python3 bench/h200/persist_ncu_s21_summary.py DIR"""
import csv
import math
import os
import sys

PAIRED = {132: 1.0, 114: 48 / 57, 78: 9 / 39}


def num(cell):
    return float(cell.split()[0].replace(",", "")) if cell else float("nan")


def main(d):
    rows = list(csv.DictReader(open(os.path.join(d, "ncu_persist_s19.csv"))))
    for r in rows:
        if r["status"] != "ok":
            print(r["M"], r["N"], r["K"], r["BM"], r["BN"], r["BK"], r["status"])
            continue
        M, N, K, BM, BN, BK, W, S, X = (int(r[k]) for k in "M N K BM BN BK WARPS STAGES NUM_SMS".split())
        tiles = math.ceil(M / BM) * math.ceil(N / BN)
        trips = math.ceil(K / BK)
        a_bytes, b_bytes = BM * BK * 2, BK * BN * 2
        copies = num(r["l1tex__m_xbar2l1tex_read_sectors"]) * 32
        tex = num(r["lts__t_sectors_srcunit_tex_op_read"]) * 32
        dram = num(r["dram__bytes_read"])
        fabric = num(r["lts__t_sectors_srcunit_ltcfabric"]) * 32
        ns = num(r["gpu__time_duration"])
        req = num(r.get("lts__t_requests_srcunit_tex_op_read", ""))
        merged = 1 - tex / copies
        a_share = a_bytes / (a_bytes + b_bytes)
        per_pair = merged / (a_share * PAIRED.get(X, 1.0))
        # the lock step's DRAM bytes: B (t % TILES_N) read once a round by its first reader, A once a row
        ctas = min(X, tiles)
        tn = math.ceil(N / BN)
        rounds = tiles / ctas
        b_first = min(ctas, tn) / ctas
        lock = tiles * trips * b_bytes * b_first + M * K * 2
        print(f"{M}x{N}x{K} {BM}x{BN}x{BK} w{W} s{S} p{X}: copies {copies / 1e9:.2f} GB (tiles x trips x trip "
              f"{tiles * trips * (a_bytes + b_bytes) / 1e9:.2f}), to the slices {tex / 1e9:.2f}: merged {merged:.1%}, "
              f"{per_pair:.3f} of the pair's shared A; DRAM {dram / 1e9:.2f} GB (lock step ~{lock / 1e9:.2f}, "
              f"{dram / lock:.2f}x), far fills {fabric / 1e9:.2f} GB ({fabric / dram:.2f} of DRAM); slices "
              f"(tex + DRAM) {(tex + dram) / 1e9:.2f} GB in {ns / 1e3:.0f} us = {(tex + dram) / ns / 1e3:.2f} TB/s"
              + (f"; {tex / 32 / req:.2f} sectors a request" if req == req and req else "")
              + f"; {rounds:.2f} rounds")


if __name__ == "__main__":
    main(sys.argv[1])
