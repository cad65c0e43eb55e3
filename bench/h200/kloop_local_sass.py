#!/usr/bin/env python3
"""The local bytes a spilling Triton GEMM k-loop moves a trip: its SASS, compiled on the CPU.

Usage (no GPU; Triton 3.6.0 with its ptxas and cuobjdump importable, e.g.
`pip install --target DIR triton==3.6.0` and PYTHONPATH=DIR):

    python3 bench/h200/kloop_local_sass.py OUTDIR      # appends to OUTDIR/kloop_local.csv (resumes)

Every distinct spilling configuration (family, BM, BN, BK, WARPS, STAGES, layout) of
calibration/h200/measured/issue15/run*/gemm.csv, compiled with bench/h200/measure_spill_sass.py's
`compile_cpu` (GPUTarget("cuda", 90, 32), the JIT's specialization given by hand) at the shape of
its first row (the k-loop does not depend on the shape: every issue-15 K, N and stride is a
multiple of 16). Columns: the configuration and that row's M, N, K, GROUP_M; the measured
regs / spills; the compiled `regs` / `spills` (cuobjdump -res-usage REG and STACK / 4); inside the
k-loop (the backward branch whose span holds the most mma instructions; one trip = one BK-deep
k-tile): `loop_insns`, `HMMA`, `HGMMA` (HGMMA or QGMMA), `LDSM`, `LDL_n` / `STL_n` (instructions)
and `LDL_bytes` / `STL_bytes` (their widths added: 4, 8 or 16 B): the local bytes one thread
moves a trip. `error`: the compile's exception, if any.
"""
import sys, os, csv, re, subprocess, glob
from pathlib import Path
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'bench' / 'h200'))
sys.path.insert(0, str(ROOT))


def main():
    import measure_spill_sass as mss
    from tfx.analysis.measured import read_measurements
    base = str(ROOT / 'calibration' / 'h200' / 'measured' / 'issue15')
    todo = {}
    for f in sorted(glob.glob(base + '/run*/gemm.csv'), key=lambda s: int(re.search(r'run(\d+)', s).group(1))):
        for r in read_measurements(f):
            if not r.spills or r.family == 'persistent_gemm':
                continue
            p = r.params
            lay = r.notes.get('layout') or ('nk' if r.family == 'gemm_fp8' else 'kn')
            key = (r.family, p['BM'], p['BN'], p['BK'], p['WARPS'], p['STAGES'], lay)
            todo.setdefault(key, (p, r))
    os.makedirs(sys.argv[1], exist_ok=True)
    out = os.path.join(sys.argv[1], 'kloop_local.csv')
    done = set()
    if os.path.exists(out):
        for r in csv.DictReader(open(out)):
            done.add((r['family'], int(r['BM']), int(r['BN']), int(r['BK']), int(r['WARPS']), int(r['STAGES']), r['layout']))
    fields = ['family', 'BM', 'BN', 'BK', 'WARPS', 'STAGES', 'layout', 'M', 'N', 'K', 'GROUP_M', 'regs_measured', 'spills_measured',
              'regs', 'spills', 'loop_insns', 'HMMA', 'HGMMA', 'LDL_n', 'LDL_bytes', 'STL_n', 'STL_bytes', 'LDSM', 'error']
    new = not os.path.exists(out)
    fh = open(out, 'a', newline='')
    w = csv.DictWriter(fh, fieldnames=fields)
    if new:
        w.writeheader()
    for key, (p, r) in sorted(todo.items()):
        if key in done:
            continue
        fam, bm, bn, bk, warps, st, lay = key
        row = dict(family=fam, BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st, layout=lay, M=p['M'], N=p['N'], K=p['K'],
                   GROUP_M=p['GROUP_M'], regs_measured=r.regs, spills_measured=r.spills)
        try:
            mss.WARPS = warps
            c = (fam, p['M'], p['N'], p['K'], bm, bn, bk, st, p['GROUP_M'], lay)
            asm, regs, spills, shared = mss.compile_cpu(c)
            cub = os.path.join('/tmp', mss.name_of(c) + '.cubin')
            sass = subprocess.run([mss.cuobjdump_path(), '-sass', cub], capture_output=True, text=True).stdout
            os.remove(cub)
            lines = [(int(m.group(1), 16), m.group(2)) for m in map(mss.INSN.match, sass.splitlines()) if m]
            # the k-loop: the backward branch whose span holds the most mma instructions
            best, bn_ = None, -1
            for at, text in lines:
                mb = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
                if mb and int(mb.group(1), 16) < at:
                    lo = int(mb.group(1), 16)
                    n = sum(1 for a, t in lines if lo <= a <= at and 'MMA' in t)
                    if n > bn_:
                        best, bn_ = (lo, at), n
            inside = lambda at: best[0] <= at <= best[1]
            cnt = dict(LDL_n=0, LDL_bytes=0, STL_n=0, STL_bytes=0, HMMA=0, HGMMA=0, LDSM=0, loop_insns=0)
            for at, text in lines:
                if not inside(at):
                    continue
                op = re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]
                cnt['loop_insns'] += 1
                for kind in ('LDL', 'STL'):
                    if op.startswith(kind):
                        width = 16 if '.128' in op else 8 if '.64' in op else 4
                        cnt[kind + '_n'] += 1
                        cnt[kind + '_bytes'] += width
                if op.startswith('HMMA'): cnt['HMMA'] += 1
                if op.startswith('HGMMA') or op.startswith('QGMMA'): cnt['HGMMA'] += 1
                if op.startswith('LDSM'): cnt['LDSM'] += 1
            row.update(regs=regs, spills=spills, **cnt)
        except Exception as e:
            row['error'] = repr(e)[:200]
        w.writerow(row); fh.flush()
        print(key, row.get('regs'), row.get('spills'), row.get('LDL_bytes'), row.get('STL_bytes'), row.get('error', ''), flush=True)


if __name__ == '__main__':
    main()
