#!/usr/bin/env python3
"""The model's DRAM read bytes beside Nsight Compute's for every stored GROUP_M = 1 launch (or
GSEL=8 for the twins) of calibration/h200/measured/l2_groupm*/l2_groupm.csv, with the drift
term's facts (l2_reuse.drift_refetch: P, delta, L = room / the wave's loop, the dispatcher's
offset g1 / W, the waves, the share it gives) and, with IMPLIED=1, the share of the lock step's
shared re-reads that Nsight's bytes imply: (measured - the model at share 0) / (the model at
share 1 - at share 0), the drift term forced to 0 and to 1 (docs/analysis.md, "GROUP_M = 1:
what the drift term misses at run38's first pick"). DRAM bytes as bench/l2_groupm_compare.py
counts them: (gmem read + write) x (1 - hit) - write; each row priced with the compiled
resources of the same configuration in the issue15 campaigns where one measured it.

Usage: [GSEL=1] [IMPLIED=1] python3 bench/l2_drift_table.py"""
import csv
import glob
import inspect
import os
from fractions import Fraction

from tfx.analysis import l2_reuse, performance
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

prof = load_profile('h200_sxm')
mods = {'gemm': parse_file('kernels/gemm.tile'), 'gemm_fp8': parse_file('kernels/gemm_fp8.tile')}
KEYS = ('M', 'N', 'K', 'BM', 'BN', 'BK', 'WARPS', 'STAGES')
FAMILY = {'gemm': 'gemm_bf16', 'gemm_fp8': 'gemm_fp8'}
compiled = {}
for path in sorted(glob.glob("calibration/h200/measured/issue15/run*/*.csv")):
    for c in csv.DictReader(open(path)):
        if c.get('regs') and c.get('smem_bytes') and c.get('family') in FAMILY.values() and c.get('status') == 'ok':
            compiled.setdefault((c['family'],) + tuple(int(c[k]) for k in KEYS),
                                dict(regs=int(c['regs']), spills=int(c['spills'] or 0), smem=int(c['smem_bytes'])))
_orig = l2_reuse.drift_refetch
calls, force = [], [None]


def _recorded(P, delta, loop, room, stagger=0, waves=1):
    share = _orig(P, delta, loop, room, stagger, waves)
    if inspect.stack()[1].function != '_drift_possible':
        calls.append((float(P), float(delta), float(room / loop), float(stagger), float(waves), float(share)))
        if force[0] is not None:
            return force[0]
    return share


performance.l2_reuse.drift_refetch = _recorded


def dram(mod, p, res):
    a = analyze(mod, None, prof, p, resources=res, check=False)
    rd, wr = a.metrics['memory.traffic.gmem.total.read'], a.metrics['memory.traffic.gmem.total.write']
    h = a.metrics['performance.l2_hit_ratio']
    h = float(Fraction(str(h))) if not isinstance(h, float) else h
    return (rd + wr) * (1 - h) - wr, a.metrics['performance.predicted_ns'] / 1e3, rd


G = int(os.environ.get('GSEL', '1'))
implied = os.environ.get('IMPLIED', '0') == '1'
for f in sorted(glob.glob("calibration/h200/measured/l2_groupm*/l2_groupm.csv")):
    for r in csv.DictReader(open(f)):
        if r['kernel'] not in mods or int(r['GROUP_M']) != G or r['status'] != 'ok':
            continue
        p = {k: int(r[k]) for k in KEYS}
        p['GROUP_M'] = G
        res = compiled.get((FAMILY[r['kernel']],) + tuple(p[k] for k in KEYS))
        calls.clear()
        force[0] = None
        d, t, rd = dram(mods[r['kernel']], p, res)
        c = calls[0] if calls else None
        meas = int(r['dram_read_bytes'])
        extra = ''
        if implied and c:
            force[0] = 0
            d0, _, _ = dram(mods[r['kernel']], p, res)
            force[0] = 1
            d1, _, _ = dram(mods[r['kernel']], p, res)
            force[0] = None
            extra = f"  share 0 {d0 / 1e9:6.3f} 1 {d1 / 1e9:6.3f} implied {(meas - d0) / max(d1 - d0, 1):5.2f}"
        facts = (f"P {c[0]:.3f} delta {c[1]:.3f} L {c[2]:.3f} offset {c[3]:.3f} waves {c[4]:5.2f} share {c[5]:.3f}"
                 if c else "no drift term")
        print(f"{os.path.basename(os.path.dirname(f)):15s} {'fp8 ' if r['kernel'] == 'gemm_fp8' else 'bf16'} {r['M']}x{r['N']}x{r['K']} "
              f"{r['BM']}x{r['BN']}x{r['BK']} w{r['WARPS']} s{r['STAGES']} G{G} requested {rd / 1e9:6.2f} GB "
              f"DRAM {meas / 1e9:6.3f} model {d / 1e9:6.3f} ({d / meas:4.2f}) | {float(r['measured_ms']) * 1e3:7.1f} us "
              f"pred {t:7.1f} | {facts}{extra}{'' if res else ' (estimated resources)'}", flush=True)
