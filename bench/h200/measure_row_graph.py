"""Re-time the small-N row-kernel shapes of issue 15 two ways, each twice: triton's do_bench (the
campaigns' measured_ms: L2 cleared before each call, the host launching every call) and inside a
CUDA graph (measure_accuracy.graph_ms: the host's launch cost gone), in two passes over all the
configurations, to tell which differences between configurations are the kernels' and which are
the timing's noise (issue 15, session 9, rowsN9; calibration/h200/measured/row_graph).

The configurations are the non-spilling rows that runs 7-9 measured on the shapes at N <= 4096
that missed a ranking target at session 9's start (development shapes only: nothing of
ACC_SHAPE_SET=alt7), with the kernels, launches and buffers of bench/h200/measure_accuracy.py
(imported from it).

    cd bench/h200 && OUT=OUTDIR python3 measure_row_graph.py

(the device run of 2026-12-02 fed this same code to python3 on stdin, its precompile pool then
could not start and every kernel compiled in the main process). Writes OUTDIR/rg/times.csv (one
row per configuration and pass: measured_ms the campaign's do_bench time, bench_ms this pass's
do_bench median, graph_ms its graph time, ms) and OUTDIR/rg/log.txt.
"""
import csv,os,sys
sys.argv=['x']
import measure_accuracy as a
O=os.environ['OUT']+'/rg'
a.RUN.open(O,'log.txt');a.env_report()
S=[('run9','rmsnorm','4096x1024'),('run8','rmsnorm','8192x1024'),('run7','rmsnorm','16384x4096'),('run7','rmsnorm','4096x2048'),('run7','softmax','4096x2048'),('run8','softmax','8192x1024')]
J=[]
for run,f,s in S:
 for r in csv.DictReader(open(f'../../calibration/h200/measured/issue15/{run}/rows.csv')):
  if r['family']==f and r['shape']==s and r['status']=='ok' and not int(r['spills'] or 0):
   p={k:int(r[k]) for k in ('M','N','BLOCK_M','WARPS')}
   J.append((run,r,('rows.csv',f,f'kernels/{f}.tile','g',0,s,p)))
ok,er=a.precompile([j for _,_,j in J],50)
T=a.RUN.csv('times.csv',['run','family','shape','M','N','BLOCK_M','WARPS','regs','spills','measured_ms','pass','bench_ms','graph_ms'])
n=0
for ps in (1,2):
 B={}
 for run,r,j in J:
  if a.elapsed()>100:break
  if (run,j[5]) not in B:B={(run,j[5]):a.make_bufs(j)}
  bf=B[(run,j[5])]
  fn=lambda:a.launch(j,bf)
  b=a.bench(fn);g=a.graph_ms(fn);n+=1
  T.row(run=run,family=j[1],shape=j[5],**j[6],regs=r['regs'],spills=r['spills'],measured_ms=float(r['measured_ms']),bench_ms=b,graph_ms=g,**{'pass':ps})
a.log('timed',n,'in',round(a.elapsed()),'s')
