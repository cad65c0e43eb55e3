#!/usr/bin/env python3
"""H200: cuBLAS fp8 (e4m3) against bf16 in one session, and the fp8 warpgroup mma's own rate
(issue 15, fp8 squares; calibration/h200/measured/fp8_rate, README there).

Run on the device machine as sent (the body below is the exact text that ran, inline through a
heredoc; it prints CSV to stdout):

    python3 bench/h200/measure_fp8_rate.py > out.txt

1. Library rows: torch.matmul (bf16, the method of compute.tensor.efficiency's 0.74) and
   torch._scaled_mm (fp8 e4m3 A [M, K] row-major, B^T [N, K] row-major passed as B column-major,
   unit scales, bf16 out) on the same random data (randn / 4), triton.testing.do_bench median
   (L2 cleared before each run); 8192^3 three times, bf16 and fp8 interleaved (clock drift).
   nvidia-smi's SM clock, power and temperature right after each row.
2. mma rows: one A [BM, BK] and one B^T [BN, BK] tile loaded once, then acc = tl.dot(a,
   tl.trans(bt), acc) ITERS times (warpgroup mma, both operands in shared memory, no load in
   the loop), ~4.4 ms a kernel, on 132 CTAs (one per SM) and 1; flop per ns per SM = ITERS x
   2 BM BN BK / kernel time (CUDA events, mean of 3). fp8 at BK 128 beside bf16 at BK 64 (the
   same bytes per row).
"""
import torch,subprocess as S
from triton.testing import do_bench as B
o=torch.ones((),device="cuda")
q=lambda:S.run(["nvidia-smi","--query-gpu=clocks.sm,power.draw,temperature.gpu","--format=csv,noheader"],capture_output=True,text=True).stdout.strip()
print("dtype,M,N,K,rep,ms,tflops,smi")
for (m,n,k),reps in [((8192,8192,8192),3),((4096,4096,4096),1),((5120,5120,5120),1),((8192,8192,4096),1),((2560,2560,2560),1)]:
 a=torch.randn(m,k,device="cuda")/4;bt=torch.randn(n,k,device="cuda")/4
 a8,b8=a.to(torch.float8_e4m3fn),bt.to(torch.float8_e4m3fn);ab,bb=a.bfloat16(),bt.bfloat16().t().contiguous()
 for r in range(reps):
  for d in("bf16","fp8e4m3"):
   f=(lambda:torch._scaled_mm(a8,b8.t(),scale_a=o,scale_b=o,out_dtype=torch.bfloat16)) if d=="fp8e4m3" else (lambda:ab@bb)
   ms=B(f,warmup=50,rep=300,return_mode="median");print(f"{d},{m},{n},{k},{r},{ms:.5f},{2*m*n*k/ms/1e9:.1f},{q()}",flush=True)
import triton,triton.language as tl
@triton.jit
def L(a_p,b_p,c_p,I,M:tl.constexpr,N:tl.constexpr,K:tl.constexpr):
 m=tl.arange(0,M);n=tl.arange(0,N);k=tl.arange(0,K)
 a=tl.load(a_p+m[:,None]*K+k[None,:]);b=tl.load(b_p+n[:,None]*K+k[None,:])
 c=tl.zeros((M,N),tl.float32)
 for i in range(I):c=tl.dot(a,tl.trans(b),c)
 tl.store(c_p+tl.program_id(0)*M+m,tl.sum(c,1))
for M,N,K8,w in[(128,128,128,4),(256,128,128,8)]:
 for d in(torch.float8_e4m3fn,torch.bfloat16):
  K=K8 if d!=torch.bfloat16 else K8//2;fl=2*M*N*K;I=int(4e6*(14000 if K==K8 else 7000)/fl)
  a=(torch.randn(M,K,device="cuda")/4).to(d);b=(torch.randn(N,K,device="cuda")/4).to(d)
  for s in(132,1):
   c=torch.empty(s*M,device="cuda");g=lambda:L[(s,)](a,b,c,I,M=M,N=N,K=K,num_warps=w,num_stages=1)
   g();torch.cuda.synchronize();e=torch.cuda.Event;x,y=e(enable_timing=True),e(enable_timing=True);x.record();g();g();g();y.record();torch.cuda.synchronize();t=x.elapsed_time(y)/3
   print(f"mma,{d},{M}x{N}x{K}w{w},{s},{t:.4f},{I*fl/t/1e6:.1f},{q()}",flush=True)
