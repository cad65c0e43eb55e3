"""Compile the issue-15 Triton row kernels (bench/h200/triton_kernels.py's rmsnorm_kernel and
softmax_kernel, the ones measure_accuracy.py times; triton_kernels needs no torch) for sm_90 on the CPU with Triton 3.6.0
and count the SASS local traffic: regs, spills (STACK / 4), LDL / STL instructions and bytes per
thread, and the warp instructions a warp issues (``instructions``; calibration/h200/measured/
row_sass_counts) (the kernels are loop-free: static counts are per-thread dynamic counts).

    pip install triton==3.6.0   # in a venv
    python3 bench/h200/measure_row_spill_sass.py family,N,BLOCK_M,WARPS ... > out.jsonl

Output: one JSON object a configuration (calibration/h200/measured/row_spill_sass)."""
import json
import os
import re
import subprocess
import sys
from multiprocessing import Pool

OUT = os.environ.get("ROW_SASS_DIR", "/tmp/row_spill_sass")


def _kernels():
    """The measured kernels (bench/h200/triton_kernels.py, the ones measure_accuracy.py times)."""
    from triton_kernels import rmsnorm_kernel, softmax_kernel
    return {"rmsnorm": rmsnorm_kernel, "softmax": softmax_kernel}


def build(cfg):
    fam, N, bm, w = cfg
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    kern = _kernels()[fam]
    names = kern.arg_names
    if fam == 'rmsnorm':
        sig = dict(X='*bf16', W='*bf16', Y='*bf16', M='i32', N='i32', inv_n='fp32', eps='fp32')
    else:
        sig = dict(X='*bf16', Y='*bf16', M='i32', N='i32')
    consts = dict(BLOCK_M=bm, BLOCK_N=N)
    attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in ('X', 'W', 'Y', 'M', 'N') if k in names}
    sig = {k: sig.get(k, 'constexpr') for k in names}
    k = triton.compile(ASTSource(fn=kern, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget('cuda', 90, 32), options=dict(num_warps=w, num_stages=1))
    tool = os.path.join(os.path.dirname(triton.__file__), 'backends', 'nvidia', 'bin', 'cuobjdump')
    cub = os.path.join(OUT, f'{fam}_{N}_{bm}_{w}.cubin')
    open(cub, 'wb').write(k.asm['cubin'])
    usage = subprocess.run([tool, '-res-usage', cub], capture_output=True, text=True).stdout
    sass = subprocess.run([tool, '-sass', cub], capture_output=True, text=True).stdout
    open(cub.replace('.cubin', '.sass'), 'w').write(sass)
    regs = int(re.search(r'REG:(\d+)', usage).group(1)); stack = int(re.search(r'STACK:(\d+)', usage).group(1))
    ldl = stl = 0; n_ldl = n_stl = 0
    for line in sass.splitlines():
        m = re.search(r'\b(LDL|STL)(\.[\w.]+)?\s', line)
        if not m: continue
        mods = m.group(2) or ''
        width = 16 if '.128' in mods else 8 if '.64' in mods else 2 if ('.U16' in mods or '.S16' in mods) else 1 if ('.U8' in mods or '.S8' in mods) else 4
        if m.group(1) == 'LDL': ldl += width; n_ldl += 1
        else: stl += width; n_stl += 1
    return dict(fam=fam, N=N, bm=bm, w=w, regs=regs, spills=stack // 4, ldl=ldl, stl=stl, n_ldl=n_ldl, n_stl=n_stl,
                **instructions(sass))


def instructions(sass):
    """Warp instructions a warp issues (the kernels are loop-free: every instruction up to the last
    EXIT, predicated ones included, as Nsight Compute's smsp__inst_executed counts them;
    calibration/h200/measured/ncu_rows_s15 agrees on all eight kernels it measured) and a few
    opcodes among them."""
    ops = [m.group(1) for m in (re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)", ln)
                                for ln in sass.splitlines()) if m]
    ops = ops[:max(i for i, o in enumerate(ops) if o.startswith('EXIT')) + 1]
    base = [o.split('.')[0] for o in ops]
    return dict(instructions=len(ops), **{k.lower(): base.count(k) for k in
                                          ('SHFL', 'STS', 'LDS', 'BAR', 'MUFU', 'LDG', 'STG')})

if __name__ == '__main__':
    os.makedirs(OUT, exist_ok=True)
    cfgs = [tuple([a[0]] + [int(x) for x in a[1:]]) for a in (s.split(',') for s in sys.argv[1:])]
    with Pool(2) as p:
        for r in p.imap(build, cfgs):
            print(json.dumps(r), flush=True)
