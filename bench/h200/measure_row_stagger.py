"""Does a row kernel's first wave set its steady state? The issue-15 rmsnorm and softmax at
16384 x 16384 with the first wave's CTAs started apart on purpose.

Usage (on the device machine; this exact text ran, 12.8 s, 2026-12-02 about 12:22 UTC):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_row_stagger.py > stagger.txt

The bodies are bench/h200/measure_accuracy.py's Triton rmsnorm and softmax (the code of
calibration/h200/measured/issue15) behind a prologue: a CTA whose program id p is below S (a
runtime argument, 132 x the CTAs a SM holds: the first full wave) first spins on %globaltimer for
p x DELAY / S ns (DELAY a runtime argument), so the first wave's CTAs start spread evenly over
[0, DELAY] instead of together; every later CTA starts when a slot frees, as in the measured
kernel. One binary serves every DELAY (DELAY = 0: no spin), so a difference between delays is the
schedule's, not the code's. The softmax kernel takes rmsnorm's arguments and ignores W, inv_n, eps.
Compiled for sm_90 on the CPU (Triton 3.6.0), the registers equal the measured kernels' (106, 112,
62, 195, 251; 63, 127, 100) and the body's SASS is the measured one's shifted by the prologue
(same loads, barriers, rsqrt, weight-row loads and stores within 1-2 instructions).

Prints one line per (kernel, BLOCK_M, WARPS, CTAs a SM, DELAY ns, us): triton.testing.do_bench
median (CUDA events, the L2 cleared before each run), warmup 5 ms, rep 25 ms. Output and what it
shows: calibration/h200/measured/row_stagger. The script is kept this short because it travelled
inline (the device copies the main checkout, not a helper's worktree)."""
import torch,triton,triton.language as tl,sys,time
@triton.jit
def _now(d):
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;","=l,r",[d],dtype=tl.int64,is_pure=False,pack=1)
@triton.jit
def _spin(pm,S,DELAY):
    if pm<S:
        wait=(pm.to(tl.int64)*DELAY)//S
        t0=_now(pm)
        t=t0
        while t-t0<wait:
            t=_now(pm+(t-t0).to(tl.int32)*0)
@triton.jit
def rms(X,W,Y,M,N,inv_n,eps,S,DELAY,BLOCK_M:tl.constexpr,BLOCK_N:tl.constexpr):
    pm=tl.program_id(0)
    _spin(pm,S,DELAY)
    rows=pm*BLOCK_M+tl.arange(0,BLOCK_M)
    cols=tl.arange(0,BLOCK_N)
    mask=(rows[:,None]<M)&(cols[None,:]<N)
    offs=rows[:,None].to(tl.int64)*N+cols[None,:]
    x=tl.load(X+offs,mask=mask,other=0.0).to(tl.float32)
    inv=tl.rsqrt(tl.sum(x*x,1)*inv_n+eps)
    w=tl.load(W+cols,mask=cols<N,other=0.0).to(tl.float32)
    y=x*inv[:,None]*w[None,:]
    tl.store(Y+offs,y.to(Y.dtype.element_ty),mask=mask)
@triton.jit
def smx(X,W,Y,M,N,inv_n,eps,S,DELAY,BLOCK_M:tl.constexpr,BLOCK_N:tl.constexpr):
    pm=tl.program_id(0)
    _spin(pm,S,DELAY)
    rows=pm*BLOCK_M+tl.arange(0,BLOCK_M)
    cols=tl.arange(0,BLOCK_N)
    mask=(rows[:,None]<M)&(cols[None,:]<N)
    offs=rows[:,None].to(tl.int64)*N+cols[None,:]
    x=tl.load(X+offs,mask=mask,other=float("-inf")).to(tl.float32)
    e=tl.exp(x-tl.max(x,1)[:,None])
    y=e*(1.0/tl.sum(e,1))[:,None]
    tl.store(Y+offs,y.to(Y.dtype.element_ty),mask=mask)
M=N=16384
X=torch.randn(M,N,device="cuda",dtype=torch.bfloat16);Y=torch.empty_like(X);Wt=torch.randn(N,device="cuda",dtype=torch.bfloat16)
t0=time.time()
for k,bm,w,r in [(rms,2,16,1),(rms,1,8,2),(rms,1,16,2),(rms,2,8,1),(rms,1,4,2),(smx,1,16,2),(smx,1,8,2),(smx,2,16,1)]:
    if time.time()-t0>80:break
    g=(M//bm,)
    for D in (0,1000,3000):
        f=lambda:k[g](X,Wt,Y,M,N,1.0/N,1e-6,132*r,D,BLOCK_M=bm,BLOCK_N=N,num_warps=w,num_stages=1)
        ms=triton.testing.do_bench(f,warmup=5,rep=25,return_mode="median")
        print(k.__name__,bm,w,r,D,"%.2f"%(ms*1e3),flush=True)
