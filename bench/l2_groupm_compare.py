#!/usr/bin/env python3
"""The model's DRAM read bytes beside Nsight Compute's (dram__bytes_read.sum), for
calibration/h200/measured/l2_groupm/l2_groupm.csv (bench/h200/measure_l2_groupm.py).

The model's hit ratio (performance.l2_hit_ratio) is 1 - DRAM bytes / L2 bytes over reads and
writes, and the model sends every stored byte on to DRAM, so its DRAM read bytes are
(gmem read + gmem write) x (1 - hit) - gmem write (until session 12 this printed gmem read x
(1 - hit), which counted a share of C's stores as reads: 1024x28672x4096 128x128x64 G8 0.301 GB
for 0.247 read).

Usage: python3 bench/l2_groupm_compare.py [CSV]"""
import csv, sys
from fractions import Fraction
from tfx.lang import parse_file
from tfx.hw import load_profile
from tfx.analysis.analyze import analyze
prof = load_profile('h200_sxm')
mods = {'gemm': parse_file('kernels/gemm.tile'), 'gemm_fp8': parse_file('kernels/gemm_fp8.tile'),
        'persistent': parse_file('kernels/persistent_gemm.tile')}
for r in csv.DictReader(open(sys.argv[1] if len(sys.argv) > 1 else "calibration/h200/measured/l2_groupm/l2_groupm.csv")):
    p = {k: int(r[k]) for k in ('M','N','K','BM','BN','BK','WARPS','STAGES')}
    if r['kernel'] != 'persistent': p['GROUP_M'] = int(r['GROUP_M'])
    else: p['NUM_SMS'] = int(r['NUM_SMS'])
    a = analyze(mods[r['kernel']], None, prof, p, check=False)
    tot = a.metrics['memory.traffic.gmem.total.read']
    wr = a.metrics['memory.traffic.gmem.total.write']
    h = a.metrics['performance.l2_hit_ratio']
    h = float(Fraction(str(h))) if not isinstance(h, float) else h
    dram = (tot + wr) * (1 - h) - wr
    pred = a.metrics['performance.predicted_ns'] / 1e3
    print(f"{ {'gemm': 'gemm', 'gemm_fp8': 'fp8 ', 'persistent': 'pers'}[r['kernel']]} {r['M']}x{r['N']}x{r['K']} {r['BM']}x{r['BN']}x{r['BK']} w{r['WARPS']} s{r['STAGES']} G{r['GROUP_M']} dram meas {int(r['dram_read_bytes'])/1e9:6.3f} model {dram/1e9:6.3f} ratio {dram/int(r['dram_read_bytes']):5.2f}  time meas {float(r['measured_ms'])*1e3:7.1f} pred {pred:7.1f} {100*(pred/float(r['measured_ms'])/1e3-1):+5.1f}%")
