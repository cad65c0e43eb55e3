// Dependent local loads (LDL) through a per-thread frame: ns a step vs the machine's frames.
// Each thread walks its own dynamically indexed int array (ptxas keeps it in local memory, as a
// spill) with x = a[x], a full-period LCG over F words, so every step of a warp is one
// coalesced 128-B local load that waits the previous one. 132 x c CTAs of 64 threads (2 warps);
// ns a step = (t(6000 steps) - t(2000 steps)) / 4000 (the init's stores cancel).
// nvcc -O3 -arch=sm_90a -o /tmp/ldl bench/h200/measure_ldl_chase.cu && /tmp/ldl
#include <cstdio>
template<int F>__global__ void k(int n,int p,int q,int*o){int a[F];for(int i=0;i<F;i++)a[i]=(i*p+q)&(F-1);int x=0;for(int s=0;s<n;s++)x=a[x];o[blockIdx.x*64+threadIdx.x]=x;}
template<int F>void r(int*o){for(int c=1;c<=8;c*=2){float t[2];for(int j=0;j<2;j++){int n=j?6000:2000;cudaEvent_t a,b;cudaEventCreate(&a);cudaEventCreate(&b);k<F><<<132*c,64>>>(n,3909,2469,o);cudaEventRecord(a);k<F><<<132*c,64>>>(n,3909,2469,o);cudaEventRecord(b);cudaEventSynchronize(b);cudaEventElapsedTime(&t[j],a,b);}printf("%d,%d,%.0f,%.2f\n",F,c,132.*c*64*F*4,(t[1]-t[0])*1e6/4000);}}
int main(){int*o;cudaMalloc(&o,132*8*64*4);printf("frame_words,ctas_per_sm,machine_frames_B,ns_per_step\n");r<64>(o);r<256>(o);r<1024>(o);r<2048>(o);r<4096>(o);r<8192>(o);return 0;}
