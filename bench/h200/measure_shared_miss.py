#!/usr/bin/env python3
"""H200: the DRAM wait of a pipelined GEMM k-loop trip whose DRAM lines other SMs read at the same
k-step (issue 15, persistent GEMM). Results: calibration/h200/measured/shared_miss/README.md.

Usage (on the device machine; it ran there as the code below, sent gzip+base64 in the command):
    DL=75 PYTHONUNBUFFERED=1 python3 bench/h200/measure_shared_miss.py OUTDIR

The kernel is the k-loop of kernels/gemm.tile (bench/h200/measure_kloop.py's: a tl.load of an
A [BM, BK] and a B [BK, BN] tile a trip, tl.dot into f32, num_stages = STAGES), 132 CTAs, one
per SM (each records %smid: sms_used), K = 16,384 per CTA. CTA j reads A rows (j // G) x BM and
B columns (j mod BC) x BN; A's and B's K either wrap at 512 (L2-resident after 8 trips) or
stream (a first touch from DRAM every trip: triton.testing.do_bench clears the L2 before each
timed run):

  variant  G (CTAs sharing an A tile)  A's K    B columns     B's K    A from            B from
  l2       24                          wraps    24            wraps    L2                L2
  dram24   24                          streams  24            wraps    DRAM, 24 readers  L2
  dram4    4                           streams  24            wraps    DRAM, 4 readers   L2
  dram1    1                           streams  24            wraps    DRAM, its own     L2
  dramab   24                          streams  132 (own)     streams  DRAM, 24 readers  DRAM, its own

A persistent GEMM's round has the dram24 pattern (a row of TILES_N CTAs shares each A slice,
first touched that round; B stays in L2 after the first round when it fits); dramab is the
pattern where B never fits (N = 14336). Columns: a_dram_B_cta_trip / b_dram_B_cta_trip = DRAM
bytes a trip per CTA (A's tile over its G readers), ns_per_trip = kernel time / trips.
Output: OUTDIR/shared_miss.csv.
"""
import csv,os,sys,time,torch,triton,triton.language as tl
O=sys.argv[1];os.makedirs(O,exist_ok=True);K=16384;R=512;N=132
@triton.jit(do_not_specialize=["KA","KB","G","BC"])
def kern(a_ptr,b_ptr,c_ptr,s_ptr,K,KA,KB,G,BC,lda,ldb,BM:tl.constexpr,BN:tl.constexpr,BK:tl.constexpr):
    pid=tl.program_id(0);om=tl.arange(0,BM);on=tl.arange(0,BN);ok=tl.arange(0,BK)
    ab=a_ptr+((pid//G)*BM+om[:,None]).to(tl.int64)*lda+ok[None,:]
    bb=b_ptr+ok[:,None].to(tl.int64)*ldb+(pid%BC)*BN+on[None,:]
    acc=tl.zeros((BM,BN),dtype=tl.float32)
    for k in range(0,tl.cdiv(K,BK)):
        ka=tl.multiple_of((k*BK)%KA,BK);kb=tl.multiple_of((k*BK)%KB,BK)
        acc=tl.dot(tl.load(ab+ka),tl.load(bb+kb.to(tl.int64)*ldb),acc)
    tl.store(c_ptr+(pid.to(tl.int64)*BM+om)[:,None]*BN+on[None,:],acc.to(tl.bfloat16))
    tl.store(s_ptr+pid,tl.inline_asm_elementwise("mov.u32 $0, %smid;","=r,r",[pid],dtype=tl.int32,is_pure=False,pack=1))
V={"l2":(24,1,1),"dram24":(24,0,1),"dram4":(4,0,1),"dram1":(1,0,1),"dramab":(24,0,0)}
T=[(128,128,64,4,3),(128,128,64,4,2),(128,128,64,4,4),(128,64,32,8,4),(256,64,64,4,3),(128,64,32,8,2),(256,64,64,4,2)]
f=open(O+"/shared_miss.csv","w");w=csv.writer(f)
w.writerow("variant BM BN BK WARPS STAGES ctas a_group sms_used trips a_dram_B_cta_trip b_dram_B_cta_trip kernel_us ns_per_trip regs smem".split())
t0=time.time()
for bm,bn,bk,wp,st in T:
  for v,(g,aw,bw) in V.items():
    if time.time()-t0>float(os.environ.get("DL","80")):break
    try:
      ka=R if aw else K;kb=R if bw else K;bc=24 if bw else N
      a=torch.randn(-(-N//g)*bm,ka,device="cuda",dtype=torch.bfloat16);b=torch.randn(kb,bc*bn,device="cuda",dtype=torch.bfloat16)
      c=torch.empty(N*bm,bn,device="cuda",dtype=torch.bfloat16);s=torch.full((N,),-1,device="cuda",dtype=torch.int32)
      go=lambda:kern[(N,)](a,b,c,s,K,ka,kb,g,bc,a.stride(0),b.stride(0),BM=bm,BN=bn,BK=bk,num_warps=wp,num_stages=st)
      kk=go();torch.cuda.synchronize();ms=triton.testing.do_bench(go,warmup=5,rep=25,return_mode="median");tr=K//bk
      r=[v,bm,bn,bk,wp,st,N,g,len(set(s.tolist())),tr,0 if aw else bm*bk*2/g,0 if bw else bn*bk*2,round(ms*1e3,3),round(ms*1e6/tr,2),kk.n_regs,kk.metadata.shared]
    except Exception as e:r=[v,bm,bn,bk,wp,st,"error "+repr(e)[:150]]
    w.writerow(r);f.flush();print(r,flush=True)
