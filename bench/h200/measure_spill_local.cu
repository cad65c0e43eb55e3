// H200: what a register spill's local-memory traffic costs (issue 15, GEMM spilling rows).
//
// Usage (on the device machine; nvcc 13.0 there):
//     nvcc -O3 -arch=sm_90a -o /tmp/spill_local bench/h200/measure_spill_local.cu
//     /tmp/spill_local OUTDIR          # writes OUTDIR/spill_local.csv, prints the same rows
//     /tmp/spill_local OUTDIR grid     # only the grids under one wave (OUTDIR/spill_local_grid.csv) and
//                                      # the frames at L2's capacity (OUTDIR/spill_local_l2.csv)
//
// The grid experiment (session 32, written without a device; tfx.analysis.local_parallelism's
// "machine's warps" reading of the issue-15 rows): local8, 8 KB a thread (past L2 from 16 CTAs
// of 512 threads), one CTA a SM on grids of 16..132 CTAs of 16 warps and of 4 warps, and full
// machines of 4-warp CTAs at 2 and 4 a SM. If the machine's spilled traffic is one queue of all
// its warps, a grid of g CTAs of w warps draws what a full machine draws at g x w / 132 warps a
// SM (machine_B_per_ns), and its busy SMs draw 132 / g times that a SM; if it is a fixed share
// a SM, busy_sm_B_per_ns stays flat across the grids.
//
// Each thread owns a local-memory array (dynamically indexed, so ptxas keeps it in local
// memory: LDL/STL, as a spill), walked in groups of G = 8 entries: load the group, use it,
// store it back (the SASS of a spilling Triton k-loop: a run of LDL, the mma, a run of STL).
//
//   mode       entry      per entry                                          local bytes/entry
//   local4     4 B        LDL.32, FADD, STL.32                               4 + 4
//   local8     8 B        LDL.64, 2 FADD, STL.64                             8 + 8
//   mma_local  16 B       a spilled m16n8 f32 accumulator fragment:          16 + 16
//                         2 LDL.64, H mma.sync m16n8k16 bf16 (the first on it, H-1 on
//                         register accumulators, G independent
//                         chains), 2 STL.64
//   mma_reg    16 B       the same fragments kept in registers: H mma.sync, no local bytes
//
// Swept: threads per CTA (64, 128, 256), CTAs per SM (grid = 132 x c; each CTA records its
// SM id and the row says the most CTAs any SM ran), local bytes per thread (256 B .. 8 KB),
// the shared-memory carve-out preference (0 %: the largest L1; 50 %; 100 %: the smallest L1;
// each CTA asks 1 KB of dynamic shared memory), and H for the mma modes (1, 4, 16: 1024, 256, 64 local bytes a warp per mma;
// the spilling Triton k-loops of calibration/h200/measured/spill_sass move 100-950).
// Per row: kernel time (median of 3 launches after a warm-up, CUDA events), the local bytes
// one SM moves (loads + stores; total / 132), ns per local byte per SM and its inverse
// (B/ns per SM), and the mma.sync instructions one SM issued with ns per mma per SM.
// The working set of an SM is bytes per thread x threads x CTAs; the L1 beside shared memory
// is 256 KB minus the carve-out the driver picked (cudaFuncGetAttributes does not report it:
// the rows at the three preferences show where the cliff is).
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>
#include <algorithm>
#include <string>
#include <chrono>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

static const int MAX_BYTES = 8192;   // local bytes per thread at most
static const int G = 8;              // entries a group loads before it stores

__device__ __forceinline__ void mma16816(float &d0, float &d1, float &d2, float &d3,
                                         uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void record_sm(int *smids) {
    if (threadIdx.x == 0) {
        unsigned s;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        smids[blockIdx.x] = (int)s;
    }
}

// local4 / local8: T = float or float2
template <typename T>
__global__ void k_local(float *out, int *smids, int entries, int iters, int rot) {
    extern __shared__ float pad[];
    T buf[MAX_BYTES / sizeof(T)];
    record_sm(smids);
    const int mask = entries - 1;
    for (int j = 0; j < entries; ++j) {
        float v = (float)(threadIdx.x + j);
        if constexpr (sizeof(T) == 4) buf[(j + rot) & mask] = v;
        else buf[(j + rot) & mask] = make_float2(v, -v);
    }
    for (int it = 0; it < iters; ++it) {
        for (int j = 0; j < entries; j += G) {
            T v[G];
#pragma unroll
            for (int g = 0; g < G; ++g) v[g] = buf[(j + g + rot) & mask];
#pragma unroll
            for (int g = 0; g < G; ++g) {
                if constexpr (sizeof(T) == 4) v[g] += 1.0f;
                else { v[g].x += 1.0f; v[g].y -= 1.0f; }
            }
#pragma unroll
            for (int g = 0; g < G; ++g) buf[(j + g + rot) & mask] = v[g];
        }
    }
    float s = 0.f;
    for (int j = 0; j < entries; ++j) {
        if constexpr (sizeof(T) == 4) s += buf[j];
        else s += buf[j].x + buf[j].y;
    }
    if (s == 12345.678f) pad[0] = s;     // never true: keeps the shared allocation referenced
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// local8 with a read-once global stream beside it (the `l2` experiment): `per_group` float4
// loads of a large buffer a group, each thread's next one grid-stride further on, so the
// stream's bytes pass through L2 once while the frames are walked (per_group 8: as many global
// bytes as local ones).
__global__ void __launch_bounds__(1024) k_local_stream(float *out, int *smids, int entries, int iters,
                                                      const float4 *stream, size_t stream_elems, int per_group) {
    extern __shared__ float pad[];
    float2 buf[MAX_BYTES / 8];
    record_sm(smids);
    const int mask = entries - 1;
    for (int j = 0; j < entries; ++j) { float v = (float)(threadIdx.x + j); buf[j & mask] = make_float2(v, -v); }
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    size_t pos = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.f;
    for (int it = 0; it < iters; ++it) {
        for (int j = 0; j < entries; j += G) {
            float2 v[G];
#pragma unroll
            for (int g = 0; g < G; ++g) v[g] = buf[(j + g) & mask];
            for (int q = 0; q < per_group; ++q) {
                float4 w = stream[pos];          // a plain load, as Triton's tl.load of a row
                acc += w.x + w.w;
                pos += nthreads;
                if (pos >= stream_elems) pos -= stream_elems;
            }
#pragma unroll
            for (int g = 0; g < G; ++g) { v[g].x += 1.0f; v[g].y -= 1.0f; }
#pragma unroll
            for (int g = 0; g < G; ++g) buf[(j + g) & mask] = v[g];
        }
    }
    float s = acc;
    for (int j = 0; j < entries; ++j) s += buf[j].x + buf[j].y;
    if (s == 12345.678f) pad[0] = s;
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// mma_local (LOCAL) / mma_reg: `entries` accumulator fragments (4 f32 a thread each) a thread,
// `h` mma.sync per fragment and group; the fragments in local memory (LOCAL) or registers.
template <bool LOCAL>
__global__ void k_mma(float *out, int *smids, int entries, int iters, int rot, int h) {
    extern __shared__ float pad[];
    float2 buf[LOCAL ? MAX_BYTES / 8 : 2];
    float reg[G][4];
    float extra[G][4];
#pragma unroll
    for (int g = 0; g < G; ++g) for (int q = 0; q < 4; ++q) extra[g][q] = 0.f;
    record_sm(smids);
    const uint32_t a0 = 0x3f803f80u ^ (threadIdx.x & 7), a1 = 0x3c003c00u, a2 = 0x3f803f80u, a3 = 0x3c003c00u;
    const uint32_t b0 = 0x3b003b00u, b1 = 0x3f803f80u ^ (threadIdx.x & 3);
    const int mask2 = 2 * entries - 1;
    if (LOCAL) {
        for (int j = 0; j < 2 * entries; ++j) buf[(j + rot) & mask2] = make_float2((float)j, 0.f);
    }
#pragma unroll
    for (int g = 0; g < G; ++g) for (int q = 0; q < 4; ++q) reg[g][q] = (float)(g + q);
    for (int it = 0; it < iters; ++it) {
        for (int j = 0; j < entries; j += G) {
            float f[G][4];
            if (LOCAL) {
#pragma unroll
                for (int g = 0; g < G; ++g) {
                    float2 lo = buf[(2 * (j + g) + rot) & mask2];
                    float2 hi = buf[(2 * (j + g) + 1 + rot) & mask2];
                    f[g][0] = lo.x; f[g][1] = lo.y; f[g][2] = hi.x; f[g][3] = hi.y;
                }
            } else {
#pragma unroll
                for (int g = 0; g < G; ++g) for (int q = 0; q < 4; ++q) f[g][q] = reg[g][q];
            }
#pragma unroll
            for (int g = 0; g < G; ++g) mma16816(f[g][0], f[g][1], f[g][2], f[g][3], a0, a1, a2, a3, b0, b1);
            for (int x = 1; x < h; ++x) {
#pragma unroll
                for (int g = 0; g < G; ++g) mma16816(extra[g][0], extra[g][1], extra[g][2], extra[g][3], a0, a1, a2, a3, b0, b1);
            }
            if (LOCAL) {
#pragma unroll
                for (int g = 0; g < G; ++g) {
                    buf[(2 * (j + g) + rot) & mask2] = make_float2(f[g][0], f[g][1]);
                    buf[(2 * (j + g) + 1 + rot) & mask2] = make_float2(f[g][2], f[g][3]);
                }
            } else {
#pragma unroll
                for (int g = 0; g < G; ++g) for (int q = 0; q < 4; ++q) reg[g][q] = f[g][q];
            }
        }
    }
    float s = 0.f;
#pragma unroll
    for (int g = 0; g < G; ++g) s += extra[g][0] + extra[g][1] + extra[g][2] + extra[g][3];
    if (LOCAL) {
        for (int j = 0; j < 2 * entries; ++j) s += buf[j].x + buf[j].y;
    } else {
#pragma unroll
        for (int g = 0; g < G; ++g) for (int q = 0; q < 4; ++q) s += reg[g][q];
    }
    if (s == 12345.678f) pad[0] = s;
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

struct Row {
    std::string mode; int threads, ctas_per_sm, carve_pref, bytes_per_thread, h, iters, max_ctas_on_sm;
    double ms, local_bytes_per_sm, mma_per_sm;
};

// OUTDIR/name opened for writing with its header line written, or null (and a line on stderr)
static FILE *open_csv(const char *outdir, const char *name, const char *header) {
    std::string path = std::string(outdir) + "/" + name;
    FILE *f = fopen(path.c_str(), "w");
    if (!f) { fprintf(stderr, "cannot write %s\n", path.c_str()); return nullptr; }
    fputs(header, f);
    return f;
}

int main(int argc, char **argv) {
    const char *outdir = argc > 1 ? argv[1] : ".";
    FILE *csv = open_csv(outdir, "spill_local.csv",
                         "mode,threads,ctas_per_sm,carve_pref,bytes_per_thread,h,iters,max_ctas_on_sm,working_set_per_sm,"
                         "ms,local_bytes_per_sm,ns_per_local_byte_per_sm,local_B_per_ns_per_sm,mma_per_sm,ns_per_mma_per_sm\n");
    if (!csv) return 2;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    int clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    printf("# %s, %d SMs, smem per SM %zu B (opt-in per block %zu), L2 %d B, clock %d kHz\n", prop.name, sms,
           prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlockOptin, prop.l2CacheSize, clock_khz);
    const int max_ctas = sms * 8;
    float *out; int *smids;
    CK(cudaMalloc(&out, sizeof(float) * max_ctas * 256));
    CK(cudaMalloc(&smids, sizeof(int) * max_ctas));
    // a thread's local frame is MAX_BYTES: let the runtime size local memory for it up front
    CK(cudaDeviceSetLimit(cudaLimitStackSize, MAX_BYTES + 1024));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    auto t_start = std::chrono::steady_clock::now();
    auto elapsed = [&]() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
    // ms of a launch: the median of 3 timed by CUDA events (the caller has warmed it up)
    auto median_ms = [&](auto &&launch) {
        float ts[3];
        for (int r = 0; r < 3; ++r) {
            CK(cudaEventRecord(e0));
            launch();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&ts[r], e0, e1));
        }
        std::sort(ts, ts + 3);
        return ts[1];
    };

    const int shapes[][2] = {{64, 1}, {64, 2}, {64, 4}, {64, 8}, {128, 1}, {128, 2}, {128, 4}, {256, 1}, {256, 2}, {256, 4}};
    const int carves[] = {0, 50, 100};
    const int sizes[] = {256, 512, 1024, 2048, 4096, 8192};
    const double target_bytes_per_sm = 32e6;       // local traffic per SM and launch (~0.1-5 ms)
    const int smem_dyn = 1024;

    std::vector<int> host_smids(max_ctas);
    auto run = [&](const char *mode, int threads, int c, int carve, int bytes, int h) {
        if (elapsed() > 85.0) return;
        int grid = sms * c;
        int entry = !strcmp(mode, "local4") ? 4 : !strcmp(mode, "local8") ? 8 : 16;
        int entries = bytes / entry;
        if (entries < G) return;
        double per_thread_iter = 2.0 * bytes;             // loads + stores
        double threads_per_sm = (double)threads * c;
        int iters = (int)std::max(1.0, target_bytes_per_sm / (per_thread_iter * threads_per_sm));
        if (!strcmp(mode, "mma_reg") || !strcmp(mode, "mma_local")) iters = std::max(1, iters * 2 / (h + 1));
        void (*fn)(float *, int *, int, int, int) = nullptr;
        void (*fm)(float *, int *, int, int, int, int) = nullptr;
        const void *f;
        if (!strcmp(mode, "local4")) { fn = k_local<float>; f = (const void *)fn; }
        else if (!strcmp(mode, "local8")) { fn = k_local<float2>; f = (const void *)fn; }
        else if (!strcmp(mode, "mma_local")) { fm = k_mma<true>; f = (const void *)fm; }
        else { fm = k_mma<false>; f = (const void *)fm; }
        CK(cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout, carve));
        auto launch = [&]() {
            if (fn) fn<<<grid, threads, smem_dyn>>>(out, smids, entries, iters, 0);
            else fm<<<grid, threads, smem_dyn>>>(out, smids, entries, iters, 0, h);
        };
        launch();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(host_smids.data(), smids, sizeof(int) * grid, cudaMemcpyDeviceToHost));
        std::vector<int> per_sm(1024, 0);
        int most = 0;
        for (int i = 0; i < grid; ++i) most = std::max(most, ++per_sm[host_smids[i] & 1023]);
        double ms = median_ms(launch);
        bool mma = !strcmp(mode, "mma_reg") || !strcmp(mode, "mma_local");
        double local_total = !strcmp(mode, "mma_reg") ? 0.0 : 2.0 * bytes * (double)iters * threads * grid;
        double lb = local_total / sms;
        double mma_total = mma ? (double)entries * h * iters * (threads / 32) * grid : 0.0;
        double mps = mma_total / sms;
        double ns = ms * 1e6;
        double ws = (double)bytes * threads * c;
        fprintf(csv, "%s,%d,%d,%d,%d,%d,%d,%d,%.0f,%.5f,%.0f,%.6f,%.3f,%.0f,%.5f\n", mode, threads, c, carve, bytes, h,
                iters, most, ws, ms, lb, lb > 0 ? ns / lb : 0.0, lb > 0 ? lb / ns : 0.0, mps, mps > 0 ? ns / mps : 0.0);
        fflush(csv);
        printf("%-9s T=%3d c=%d carve=%3d B/thr=%5d h=%d ws=%7.0fKB most=%d ms=%.4f  %7.2f B/ns/SM  %s\n", mode, threads,
               c, carve, bytes, h, ws / 1024, most, ms, lb > 0 ? lb / ns : 0.0,
               mps > 0 ? (std::to_string(ns / mps) + " ns/mma/SM").c_str() : "");
        fflush(stdout);
    };

    if (argc > 2 && !strcmp(argv[2], "grid")) {
        // 4. grids under one wave (see the header): the machine's rate against its warps
        fclose(csv);
        FILE *gcsv = open_csv(outdir, "spill_local_grid.csv",
                              "mode,threads,grid,bytes_per_thread,iters,max_ctas_on_sm,busy_sms,warps_per_sm_of_all,"
                              "machine_working_set,ms,local_bytes,machine_B_per_ns,busy_sm_B_per_ns\n");
        if (!gcsv) return 2;
        const int bytes = 8192, entries = bytes / 8;
        auto run_grid = [&](int threads, int grid) {
            if (grid * threads > max_ctas * 256) return;
            // 128 MB of local traffic a busy SM's worth of CTAs (~2-6 ms a launch)
            int per_sm = (grid + sms - 1) / sms;
            int iters = (int)std::max(2.0, 128e6 / (2.0 * bytes * threads * per_sm));
            CK(cudaFuncSetAttribute((const void *)k_local<float2>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
            auto launch = [&]() { k_local<float2><<<grid, threads, smem_dyn>>>(out, smids, entries, iters, 0); };
            launch();
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(host_smids.data(), smids, sizeof(int) * grid, cudaMemcpyDeviceToHost));
            std::vector<int> on(1024, 0);
            int most = 0, busy = 0;
            for (int i = 0; i < grid; ++i) { int &n = on[host_smids[i] & 1023]; if (n++ == 0) ++busy; most = std::max(most, n); }
            double ms = median_ms(launch), ns = ms * 1e6;
            // the walk's iterations, the frame's first writes and last reads (one more round trip)
            double total = 2.0 * bytes * (iters + 1) * (double)threads * grid;
            double warps_all = (double)grid * (threads / 32) / sms;
            fprintf(gcsv, "local8,%d,%d,%d,%d,%d,%d,%.4f,%.0f,%.5f,%.0f,%.3f,%.3f\n", threads, grid, bytes, iters, most, busy,
                    warps_all, (double)bytes * threads * grid, ms, total, total / ns, total / ns / busy);
            fflush(gcsv);
            printf("grid T=%3d g=%3d most=%d busy=%3d warps/SM of all=%6.3f ms=%.4f  machine %8.1f B/ns  busy SM %6.2f B/ns\n",
                   threads, grid, most, busy, warps_all, ms, total / ns, total / ns / busy);
            fflush(stdout);
        };
        for (int threads : {512, 128})
            for (int grid : {16, 24, 32, 48, 64, 80, 96, 112, 128, sms}) run_grid(threads, grid);
        run_grid(128, 2 * sms);
        run_grid(128, 4 * sms);
        run_grid(512, 2 * sms);
        fclose(gcsv);

        // 5. frames at L2's capacity (session 32, docs/analysis.md section 8, "Spilled frames at L2's
        // capacity: no cliff"): 1 KB a thread, one CTA of T threads on every SM (the machine's frames
        // 132 x T x 1 KB = 0.55-2.2 of the H200's 62.9 MB), with a read-once float4 stream of 0, 2 and
        // 8 loads a group beside the walk (0, 0.25 and 1 global byte a local byte)
        FILE *lcsv = open_csv(outdir, "spill_local_l2.csv",
                              "mode,threads,grid,bytes_per_thread,per_group,iters,machine_working_set,l2_bytes,ms,"
                              "local_bytes,stream_bytes,local_B_per_ns_per_sm\n");
        if (!lcsv) return 2;
        const size_t stream_elems = (size_t)1 << 27;           // 2 GiB of float4, far past L2
        float4 *stream;
        CK(cudaMalloc(&stream, sizeof(float4) * stream_elems));
        CK(cudaMemset(stream, 0, sizeof(float4) * stream_elems));
        float *out2;
        CK(cudaMalloc(&out2, sizeof(float) * sms * 1024));
        const int lbytes = 1024, lentries = lbytes / 8;
        // the smallest L1 (carve-out 100 %): at 256-512 threads a SM the frames (256-512 KB) would
        // otherwise sit partly in a 256 KB L1 (spill_local.csv: at 1.1 of L2, 16 warps, carve 0 draws
        // 46.2-61.3 B/ns a SM where carve 50 and 100 draw 28.9, DRAM's rate)
        CK(cudaFuncSetAttribute((const void *)k_local_stream, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
        for (int per_group : {0, 2, 8})
            for (int threads : {256, 320, 384, 448, 512, 576, 640, 768, 896, 1024}) {
                if (elapsed() > 110.0) break;
                int iters = std::max(2, (int)(64e6 / (2.0 * lbytes * threads)));
                auto launch = [&]() {
                    k_local_stream<<<sms, threads, smem_dyn>>>(out2, smids, lentries, iters, stream, stream_elems, per_group);
                };
                launch();
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                double ms = median_ms(launch), ns = ms * 1e6;
                double local = 2.0 * lbytes * (iters + 1) * (double)threads * sms;
                double streamed = 16.0 * per_group * (lentries / G) * (double)iters * threads * sms;
                double ws = (double)lbytes * threads * sms;
                fprintf(lcsv, "local8_stream,%d,%d,%d,%d,%d,%.0f,%d,%.5f,%.0f,%.0f,%.3f\n", threads, sms, lbytes, per_group,
                        iters, ws, prop.l2CacheSize, ms, local, streamed, local / ns / sms);
                fflush(lcsv);
                printf("l2 T=%4d per_group=%d frames %6.1f MB (%.2f L2) ms=%.4f  local %6.2f B/ns/SM  stream %7.1f B/ns\n",
                       threads, per_group, ws / 1e6, ws / prop.l2CacheSize, ms, local / ns / sms, streamed / ns);
                fflush(stdout);
            }
        fclose(lcsv);
        printf("# done in %.1f s\n", elapsed());
        return 0;
    }
    // 1. local traffic alone: where it is served (working set vs the L1 beside shared memory)
    for (auto &s : shapes)
        for (int carve : carves)
            for (int bytes : sizes) {
                run("local8", s[0], s[1], carve, bytes, 1);
            }
    // 2. a spilled accumulator against the mma pipe: the same fragments in registers vs local
    for (int h : {1, 4, 16})
        for (auto &s : shapes)
            for (int carve : {0, 100})
                for (int bytes : {256, 1024, 4096}) {
                    run("mma_reg", s[0], s[1], carve, bytes, h);
                    run("mma_local", s[0], s[1], carve, bytes, h);
                }
    // 3. 4-byte entries (LDL.32, the other half of a Triton spill's local accesses)
    for (auto &s : shapes)
        for (int bytes : sizes) run("local4", s[0], s[1], 0, bytes, 1);
    fclose(csv);
    printf("# done in %.1f s\n", elapsed());
    return 0;
}
