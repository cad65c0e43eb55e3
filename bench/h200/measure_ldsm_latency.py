#!/usr/bin/env python3
"""H200 ldmatrix latency (cycles): a pointer chase through ldmatrix, as measure_instr_latency.py's
ld.shared chase.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_ldsm_latency.py OUTDIR

Why: a 2-warp BK = 32 Triton GEMM trip at 3+ stages runs each n-tile's B fragment through one
register quad (LDSM.16.MT88.4 R56 -> HMMA -> HMMA -> the next LDSM into R56: a warp issues in
order), so its trip is a chain of ldmatrix and mma latencies (bench/h200/fragment_chain.py).
measure_instr_latency.py measured the mma (24.13 cycles) and ld.shared (23.02), not ldmatrix.

One CUDA kernel per case (CuPy RawKernel, NVRTC, inline PTX), one warp: a chain of 8192
ldmatrix (unrolled by 32 in a loop of 256) where each one's address is the lane's row address
plus a register the previous one loaded (shared memory holds zeros, so every step reads the
same rows: 16-byte rows side by side, one 128-byte line per 8x8 matrix, conflict-free), timed
with clock64 around the chain; per step (chain - empty loop) / 8192, one address add included
as in the ld.shared chase. Cases: ldmatrix .x1, .x4, .x4.trans (Triton's B fragment:
LDSM.16.MT88.4); ld.shared.u32 at the same 16-byte stride (4 lanes a bank: a 4-way conflict, so
not instr_latency.csv's conflict-free chase) and the mma chain again for reference. Median of 5
launches after one warm-up. Writes ldsm_latency.csv and log.txt. (The device ran this file's
code as one compact command: the lines below, byte for byte.)
"""
import csv,os,statistics,sys,subprocess
import cupy as cp
O=sys.argv[1];os.makedirs(O,exist_ok=True);L=open(O+"/log.txt","w")
def log(*a):print(*a,flush=True);print(*a,file=L,flush=True)
smi=lambda:subprocess.run(["nvidia-smi","--query-gpu=name,clocks.sm,clocks.max.sm,power.draw","--format=csv,noheader"],capture_output=True,text=True).stdout.strip()
H=r'''#define MMA(d0,d1,d2,d3,a0,a1,a2,a3,b0,b1) asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};":"+f"(d0),"+f"(d1),"+f"(d2),"+f"(d3):"r"(a0),"r"(a1),"r"(a2),"r"(a3),"r"(b0),"r"(b1))
'''
S="__shared__ __align__(128) unsigned short sm[4096];for(int k=threadIdx.x;k<4096;k+=32)sm[k]=0;__syncthreads();unsigned row=(unsigned)__cvta_generic_to_shared(sm)+threadIdx.x*16u;unsigned x=(unsigned)(seed-1.0f);unsigned r0=0,r1=0,r2=0;"
X4='asm volatile("ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%%0,%%1,%%2,%%3}, [%%4];":"=r"(r0),"=r"(r1),"=r"(r2),"=r"(x):"r"(row + x));'
C={"empty":("float x = seed;",'asm volatile("":"+f"(x));',"x"),
"ldsm_x1":(S,'asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];":"=r"(x):"r"(row + x));',"(float)x"),
"ldsm_x4":(S,X4%"","(float)(x + r0 + r1 + r2)"),
"ldsm_x4_trans":(S,X4%".trans","(float)(x + r0 + r1 + r2)"),
"lds":(S,'asm volatile("ld.shared.u32 %0, [%1];":"=r"(x):"r"(row + x));',"(float)x"),
"mma_acc":("float d0 = seed, d1 = 0, d2 = 0, d3 = 0; unsigned a = 0x3f803f80u, b = 0x3c003c00u;","MMA(d0,d1,d2,d3,a,a,a,a,b,b);","d0+d1+d2+d3")}
K='''extern "C" __global__ void k_%s(float seed,int outer,float*out,unsigned long long*t){%s
__syncthreads();long long c0=clock64();for(int o=0;o<outer;++o){
#pragma unroll
for(int u=0;u<32;++u){%s}}
long long c1=clock64();out[threadIdx.x]=%s;if(threadIdx.x==0)t[0]=(unsigned long long)(c1-c0);}'''
log("device:",smi());rows=[]
for n,(s,b,k) in C.items():
  try:
    f=cp.RawKernel(H+K%(n,s,b,k),"k_"+n,options=("-arch=sm_90",));o=cp.zeros(32,dtype=cp.float32);t=cp.zeros(2,dtype=cp.uint64);c=[]
    for r in range(6):
      f((1,),(32,),(cp.float32(1.0),cp.int32(256),o,t));cp.cuda.Device().synchronize()
      if r:c.append(int(t.get()[0]))
    rows.append((n,statistics.median(c),c));log(n,"cycles",c)
  except Exception as e:log(n,"FAILED",repr(e)[:400])
b=rows[0][1]
with open(O+"/ldsm_latency.csv","w",newline="") as f:
  w=csv.writer(f);w.writerow(["case","steps","chain_cycles","empty_loop_cycles","cycles_per_step","runs_cycles"])
  for n,c,r in rows:
    p=(c-b)/8192 if n!="empty" else c/8192;w.writerow([n,8192,c,b,"%.2f"%p,";".join(map(str,r))]);log("%-14s %7.2f cycles/step"%(n,p))
log("after:",smi())
