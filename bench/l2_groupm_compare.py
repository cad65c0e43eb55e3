#!/usr/bin/env python3
"""The model's DRAM read bytes beside Nsight Compute's (dram__bytes_read.sum), for
calibration/h200/measured/l2_groupm/l2_groupm.csv (bench/h200/measure_l2_groupm.py).

The model's hit ratio (performance.l2_hit_ratio) is 1 - DRAM bytes / L2 bytes over reads and
writes, and the model sends every stored byte on to DRAM, so its DRAM read bytes are
(gmem read + gmem write) x (1 - hit) - gmem write (until session 12 this printed gmem read x
(1 - hit), which counted a share of C's stores as reads: 1024x28672x4096 128x128x64 G8 0.301 GB
for 0.247 read).

Each row is priced with the compiled registers, spills and shared memory of the same
configuration in the issue15 campaigns (the kernels are measure_accuracy.py's; GROUP_M is not part
of the match: it only changes the tile index arithmetic before the k-loop, and Triton 3.6.0 on the
CPU compiles the s13 pairs to the same 140 / 0 / 17,408 (bf16 16x256x32 w2 s1) and 72 / 0 / 4,096
(fp8 16x64x64 w2 s1) at GROUP_M 1 and 8); the last column says where they came from ('est' where
no campaign measured the configuration: the model's own estimate). Until session 14 every row was
priced with the estimate: bf16 128x28672x14336 16x256x32 w2 s1 at 96 estimated registers (10 CTAs
an SM, one wave) against the compiled 140 (6 CTAs an SM, two waves): 1,179.5 us against 1,948.8
measured (-39.5%), where the compiled resources give 1,909.7 (-2.0%; docs/analysis.md, "Small-M
1-stage rows at 140 registers").

Usage: python3 bench/l2_groupm_compare.py [CSV]"""
import csv, glob, os, sys
from fractions import Fraction
from tfx.lang import parse_file
from tfx.hw import load_profile
from tfx.analysis.analyze import analyze
prof = load_profile('h200_sxm')
mods = {'gemm': parse_file('kernels/gemm.tile'), 'gemm_fp8': parse_file('kernels/gemm_fp8.tile'),
        'persistent': parse_file('kernels/persistent_gemm.tile')}
KEYS = ('M', 'N', 'K', 'BM', 'BN', 'BK', 'WARPS', 'STAGES')
FAMILY = {'gemm': 'gemm_bf16', 'gemm_fp8': 'gemm_fp8', 'persistent': 'persistent_gemm'}
compiled = {}   # (family, M, N, K, BM, BN, BK, WARPS, STAGES) -> (resources, campaign)
for path in sorted(glob.glob("calibration/h200/measured/issue15/run*/*.csv")):
    for c in csv.DictReader(open(path)):
        if c.get('regs') and c.get('smem_bytes') and c.get('family') in FAMILY.values() and c.get('status') == 'ok':
            key = (c['family'],) + tuple(int(c[k]) for k in KEYS)
            compiled.setdefault(key, (dict(regs=int(c['regs']), spills=int(c['spills'] or 0),
                                           smem=int(c['smem_bytes'])), os.path.basename(os.path.dirname(path))))
for r in csv.DictReader(open(sys.argv[1] if len(sys.argv) > 1 else "calibration/h200/measured/l2_groupm/l2_groupm.csv")):
    p = {k: int(r[k]) for k in KEYS}
    if r['kernel'] != 'persistent': p['GROUP_M'] = int(r['GROUP_M'])
    else: p['NUM_SMS'] = int(r['NUM_SMS'])
    res, where = compiled.get((FAMILY[r['kernel']],) + tuple(p[k] for k in KEYS), (None, 'est'))
    a = analyze(mods[r['kernel']], None, prof, p, resources=res, check=False)
    tot = a.metrics['memory.traffic.gmem.total.read']
    wr = a.metrics['memory.traffic.gmem.total.write']
    h = a.metrics['performance.l2_hit_ratio']
    h = float(Fraction(str(h))) if not isinstance(h, float) else h
    dram = (tot + wr) * (1 - h) - wr
    pred = a.metrics['performance.predicted_ns'] / 1e3
    print(f"{ {'gemm': 'gemm', 'gemm_fp8': 'fp8 ', 'persistent': 'pers'}[r['kernel']]} {r['M']}x{r['N']}x{r['K']} {r['BM']}x{r['BN']}x{r['BK']} w{r['WARPS']} s{r['STAGES']} G{r['GROUP_M']} dram meas {int(r['dram_read_bytes'])/1e9:6.3f} model {dram/1e9:6.3f} ratio {dram/int(r['dram_read_bytes']):5.2f}  time meas {float(r['measured_ms'])*1e3:7.1f} pred {pred:7.1f} {100*(pred/float(r['measured_ms'])/1e3-1):+5.1f}% {where}")
