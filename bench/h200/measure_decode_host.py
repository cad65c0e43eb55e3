"""Is a split-KV decode timing the GPU or the host? (issue 15, session 9, decode9)

Run on the device (this exact file, sent gzipped in the command since the device takes the main
checkout; the docstring was added after):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_decode_host.py OUTDIR
The 24 configurations of the two decode shapes that missed issue 15's targets, B2 HQ32 HKV8
SKV4096 (issue15/run8/decode.csv) and B4 HQ64 HKV8 SKV4096 (run9), with measure_accuracy.py's
kernels, launches (decode_launch) and buffers. OUTDIR/decode_host.csv, in us:
  db1 db2 db3       triton.testing.do_bench median of both launches, three repeats (the campaign's
                    measured_ms); dbsplit, dbmerge: each launch alone
  gboth gsplit gmerge  inside a CUDA graph, the L2 cleared before each as do_bench does, minus the
                    clears alone (measure_accuracy.graph_ms: the campaign's ms_graph)
  queued            do_bench's loop (clear, event, both launches, event) x 40 queued behind a 20 ms
                    GPU sleep, so the GPU never waits for the host: the stream's time (median)
  hboth hsplit hmerge  host time of a call (the Python launches), the GPU busy behind a sleep
  hiter             host time of one do_bench iteration (clear, event, both launches, event)
  qempty qclear     queued: an event pair around nothing; around the clear alone (zero 256 MB)
"""
import sys,os,csv,time,statistics as st
sys.path.insert(0,'bench/h200')
import measure_accuracy as A
T=A.torch;E=lambda:T.cuda.Event(enable_timing=True);S=lambda ms:T.cuda._sleep(int(ms*1.98e6))
def main():
 o=sys.argv[1];A.RUN.open(o,'log.txt');A.env_report()
 K='B HQ HKV SKV D SPLITS BLOCK_N WARPS STAGES'.split()
 J=[('decode.csv','gqa_decode','k',ru,0,sh,{k:int(r[k]) for k in K}) for ru,sh in (('run8','B2 HQ32 HKV8 SKV4096'),('run9','B4 HQ64 HKV8 SKV4096')) for r in csv.DictReader(open(f'calibration/h200/measured/issue15/{ru}/decode.csv')) if r['shape']==sh and r['status']=='ok']
 A.precompile(J,60)
 C=T.empty(64*2**20,dtype=T.int32,device='cuda')
 def Q(f,n=40,c=1):
  ev=[(E(),E()) for _ in range(n)];S(20)
  for s,e in ev:
   if c:C.zero_()
   s.record();f();e.record()
  T.cuda.synchronize();return st.median(s.elapsed_time(e) for s,e in ev)*1e3
 def H(f,n=100,it=0):
  ev=[(E(),E()) for _ in range(n)];S(40);t=time.perf_counter()
  for s,e in ev:
   if it:C.zero_();s.record()
   f()
   if it:e.record()
  d=(time.perf_counter()-t)/n*1e6;T.cuda.synchronize();return d
 qe=Q(lambda:None);qc=Q(C.zero_,c=0)
 A.log('empty events us',qe,'clear us',qc)
 cols=['source']+K+'db1 db2 db3 dbsplit dbmerge gboth gsplit gmerge queued hboth hsplit hmerge hiter qempty qclear'.split()
 w=csv.writer(open(o+'/decode_host.csv','w'));w.writerow(cols)
 bb={}
 for j in J:
  p=j[6]
  if j[5] not in bb:bb.clear();T.cuda.empty_cache();bb[j[5]]=A.make_bufs(j)
  b=bb[j[5]];fs=[(lambda w:lambda:A.decode_launch(p,b,which=w))(x) for x in('both','split','merge')]
  fs[0]();T.cuda.synchronize()
  v=[A.bench(fs[0])*1e3 for _ in range(3)]+[A.bench(f)*1e3 for f in fs[1:]]+[A.graph_ms(f)*1e3 for f in fs]+[Q(fs[0])]+[H(f) for f in fs]+[H(fs[0],it=1),qe,qc]
  r=[j[3]]+[p[k] for k in K]+[round(x,2) for x in v];w.writerow(r);A.log(*r)
 A.nvsmi();A.RUN.close()
if __name__=='__main__':main()
