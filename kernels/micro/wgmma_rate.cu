// wgmma_rate — how fast one H100/H200 SM retires TF32 wgmmas of the shapes step 04 issues, with nothing else in the
// loop: no loads, no splits, no epilogue (sm_90a only; convfuse/micro.py builds it, scripts/wgmma_rate.py runs it).
//
// Why. conv2d 04d in 3xTF32 keeps the tensor pipe ~62-65 % busy if an m64n32k8 takes 16 cycles (2,048 TF32 FLOP a
//   cycle an SM, the datasheet's dense rate), and the TF32 04d the same; the best TF32 matmul measured here (cuBLAS,
//   8192^3) reaches ~80 % of that rate with shared-memory operands and N = 256. Whether a register-A wgmma of N = 32 or
//   64 can retire at that rate at all, or the design has a lower ceiling, is what a kernel with nothing but wgmmas
//   shows. Each case: one block per SM (the shared memory forces it), WGS warpgroups, each issuing groups of G wgmmas
//   into ACCS accumulators in turn, a commit and wait_group 1 after each group (04d's pipelining), A from registers
//   (RS) or shared memory (SS), B from shared memory (K-major, no swizzle, 04d's layout), zeros in every operand. The
//   cycles are clock64 around the loop in each warpgroup; the rate is the FLOP an SM retired per cycle of the slowest.

namespace cfmicro {

// The modes (names for the Python side in convfuse/micro.py's MODES, by number):
//   RS, SS        A from registers or shared memory, B from shared memory.
//   CONCAT        an RS m64n64k8 then an RS m64n32k8, as 04d's CF_3X_CONCAT.
//   FRESH(3)      RS with A loaded from shared memory and converted (ld.shared, cvt.rna.tf32) into one of two (three,
//                 wait_group 2) register sets before each group, as 04d's groups do.
//   *_FFMA, *_GELU, RS_FFMA1, *_LDS, *_STG, CONCAT_STS, CONCAT_EPI
//                 the base mode beside a third warpgroup that, until the wgmma warpgroups are done, issues nothing but
//                 independent FFMAs, the erf polynomial's GELU (FFMAs and two MUFU a value), one dependent FFMA chain a
//                 thread, 8-byte shared loads, 8-byte global stores in 04d's pattern, 8-byte shared stores
//                 (conflict-free), or 04d's epilogue (two GELUs, then their 8-byte global store). Why: 04d 3xTF32 ran
//                 10.7 % faster without its epilogue's math (call K) and no faster with the epilogue moved to a
//                 warpgroup of its own (call L), where its stores cost more than its math (call O); call P found the
//                 pair at 66 % beside global stores and ~100 % beside shared loads. The CONCAT_* modes keep one
//                 accumulator pair (three spill at the 168 registers of 384 threads).
enum Mode { RS = 0, SS = 1, CONCAT = 2, FRESH = 3, FRESH3 = 4, RS_FFMA = 5, SS_FFMA = 6, RS_GELU = 7, CONCAT_FFMA = 8,
            RS_FFMA1 = 9, RS_LDS = 10, SS_LDS = 11, CONCAT_LDS = 12, CONCAT_STG = 13, CONCAT_GELU = 14,
            CONCAT_STS = 15, CONCAT_EPI = 16, RS_STG = 17, SS_STG = 18 };
__host__ __device__ constexpr bool alu_mode(int m) { return m >= RS_FFMA; }
__host__ __device__ constexpr bool stg_mode(int m) { return m == CONCAT_STG || m == RS_STG || m == SS_STG; }
__host__ __device__ constexpr int base_mode(int m) {
    return (m == SS_FFMA || m == SS_LDS || m == SS_STG) ? SS
           : (m == CONCAT_FFMA || m == CONCAT_LDS || m == CONCAT_STG || m == CONCAT_GELU || m == CONCAT_STS ||
              m == CONCAT_EPI) ? CONCAT
           : alu_mode(m) ? RS : m;
}
constexpr int SMEM_BYTES = 160 * 1024;      // more than half an SM's: one block per SM

struct Case {
    const char* name;
    int mode, n, wgs, g, accs;
};
// The table the Python side reads (case_names); N is the wgmma's N (CONCAT: its first, the second is 32).
constexpr Case CASES[] = {
    {"RS m64n32k8, 2 warpgroups, groups of 9 (04d 3xTF32 before CONCAT)", RS, 32, 2, 9, 3},
    {"RS m64n32k8, 1 warpgroup, groups of 9", RS, 32, 1, 9, 3},
    {"RS m64n32k8, 2 warpgroups, groups of 27", RS, 32, 2, 27, 3},
    {"RS m64n64k8 + m64n32k8, 2 warpgroups, groups of 6 pairs (04d 3xTF32, CONCAT)", CONCAT, 64, 2, 6, 3},
    {"RS m64n64k8, 2 warpgroups, groups of 9 (04d TF32)", RS, 64, 2, 9, 3},
    {"RS m64n64k8, 1 warpgroup, groups of 9", RS, 64, 1, 9, 3},
    {"SS m64n64k8, 2 warpgroups, groups of 9", SS, 64, 2, 9, 3},
    {"SS m64n128k8, 2 warpgroups, groups of 8", SS, 128, 2, 8, 2},
    {"SS m64n256k8, 2 warpgroups, groups of 4", SS, 256, 2, 4, 1},
    {"RS m64n32k8, 2 warpgroups, groups of 9, A loaded and converted before each group", FRESH, 32, 2, 9, 3},
    {"RS m64n64k8, 2 warpgroups, groups of 9, A loaded and converted before each group", FRESH, 64, 2, 9, 3},
    {"RS m64n32k8, 2 warpgroups, groups of 18, A loaded and converted before each group", FRESH, 32, 2, 18, 3},
    {"RS m64n32k8, 2 warpgroups, groups of 27, A loaded and converted before each group", FRESH, 32, 2, 27, 3},
    {"RS m64n32k8, 2 warpgroups, groups of 9, A loaded and converted, three sets", FRESH3, 32, 2, 9, 3},
    {"RS m64n64k8, 2 warpgroups, groups of 9, beside a warpgroup of FFMAs", RS_FFMA, 64, 2, 9, 3},
    {"SS m64n64k8, 2 warpgroups, groups of 9, beside a warpgroup of FFMAs", SS_FFMA, 64, 2, 9, 3},
    {"RS m64n32k8, 2 warpgroups, groups of 9, beside a warpgroup of FFMAs", RS_FFMA, 32, 2, 9, 3},
    {"RS m64n64k8, 2 warpgroups, groups of 9, beside a warpgroup of GELUs", RS_GELU, 64, 2, 9, 3},
    {"RS m64n64k8 + m64n32k8, 2 warpgroups, groups of 6 pairs, one accumulator pair", CONCAT, 64, 2, 6, 1},
    {"RS m64n64k8 + m64n32k8, 2 warpgroups, groups of 6 pairs, one accumulator pair, beside a warpgroup of FFMAs",
     CONCAT_FFMA, 64, 2, 6, 1},
    {"RS m64n32k8, 2 warpgroups, groups of 9, beside a warpgroup of GELUs", RS_GELU, 32, 2, 9, 3},
    {"RS m64n32k8, 2 warpgroups, groups of 9, beside a warpgroup of one FFMA chain a thread", RS_FFMA1, 32, 2, 9, 3},
    {"RS m64n64k8, 2 warpgroups, groups of 9, beside a warpgroup of shared loads", RS_LDS, 64, 2, 9, 3},
    {"SS m64n64k8, 2 warpgroups, groups of 9, beside a warpgroup of shared loads", SS_LDS, 64, 2, 9, 3},
    {"RS m64n64k8 + m64n32k8, 2 warpgroups, groups of 6 pairs, one accumulator pair, beside a warpgroup of shared loads",
     CONCAT_LDS, 64, 2, 6, 1},
    {"RS m64n64k8 + m64n32k8, 2 warpgroups, groups of 6 pairs, one accumulator pair, beside a warpgroup of global stores",
     CONCAT_STG, 64, 2, 6, 1},
    {"RS m64n64k8 + m64n32k8, 2 warpgroups, groups of 6 pairs, one accumulator pair, beside a warpgroup of GELUs",
     CONCAT_GELU, 64, 2, 6, 1},
    {"RS m64n64k8 + m64n32k8, 2 warpgroups, groups of 6 pairs, one accumulator pair, beside a warpgroup of shared stores",
     CONCAT_STS, 64, 2, 6, 1},
    {"RS m64n64k8 + m64n32k8, 2 warpgroups, groups of 6 pairs, one accumulator pair, beside a warpgroup of 04d's epilogue",
     CONCAT_EPI, 64, 2, 6, 1},
    {"RS m64n64k8, 2 warpgroups, groups of 9, beside a warpgroup of global stores", RS_STG, 64, 2, 9, 3},
    {"RS m64n32k8, 2 warpgroups, groups of 9, beside a warpgroup of global stores", RS_STG, 32, 2, 9, 3},
    {"SS m64n64k8, 2 warpgroups, groups of 9, beside a warpgroup of global stores", SS_STG, 64, 2, 9, 3},
    // a block on all 64 Cout (notes/kernel_log.md, the thirty-second session's designs): fresh fragments before groups
    // of three and six m64n64k8 (96 and 192 tensor cycles), that design's shortest and longest groups at two rows
    {"RS m64n64k8, 2 warpgroups, groups of 3, A loaded and converted before each group", FRESH, 64, 2, 3, 3},
    {"RS m64n64k8, 2 warpgroups, groups of 6, A loaded and converted before each group", FRESH, 64, 2, 6, 3},
};
constexpr int NCASES = sizeof(CASES) / sizeof(CASES[0]);

template <int MODE, int N, int G, int ACCS>
__device__ __forceinline__ void issue_group(float (&acc)[ACCS][N / 2], float (&acc32)[ACCS][16], const uint32_t (&a)[4],
                                            uint64_t da, uint64_t db) {
#pragma unroll
    for (int i = 0; i < G; ++i) {
        if constexpr (MODE == SS) {
            wgmma_tf32(acc[i % ACCS], da, db, 1);
        } else if constexpr (N == 32) {
            wgmma_rs_m64n32k8(acc[i % ACCS], a, db);
        } else {
            wgmma_rs_m64n64k8(acc[i % ACCS], a, db);
            if constexpr (MODE == CONCAT) wgmma_rs_m64n32k8(acc32[i % ACCS], a, db);
        }
    }
}

// The third warpgroup of the ALU modes: 8 independent chains a thread (arithmetic, 8-byte shared loads or stores of a
// 16 KB region, conflict-free, or 8-byte global stores, 8 lanes to 64 contiguous bytes as 04d's epilogue), until `done`
// is set
constexpr int LDS_REGION = 64 * 1024, LDS_FLOAT2 = 2048;   // byte offset of the loads' 16 KB, float2 in it
constexpr int STG_FLOAT2 = 132 * 128 * 64;                 // the stores' buffer (8 MB, reused)
__device__ float2 g_store_sink[STG_FLOAT2];
template <int MODE>
__device__ __forceinline__ void alu_loop(const volatile int* done, float* __restrict__ sink, float2* lds) {
    float v[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = 0.25f + 0.01f * (threadIdx.x & 7) + 0.1f * i;
    const int t = threadIdx.x & 127;
    unsigned step = 0;
#pragma unroll 1
    while (!*done) {
#pragma unroll 1
        for (int r = 0; r < 16; ++r, ++step)
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const int px = ((t >> 2) & 7) + 8 * (t >> 5), ch = (t & 3) + 4 * i;   // 04d's store pattern
                float2* const at = &g_store_sink[((blockIdx.x * 32 + ch) * 32 + px + 1024 * (step & 31)) % STG_FLOAT2];
                if constexpr (MODE == RS_GELU || MODE == CONCAT_GELU) {
                    v[i] = gelu_erf_fast(v[i]) + 0.5f;
                } else if constexpr (MODE == RS_LDS || MODE == SS_LDS || MODE == CONCAT_LDS) {
                    const float2 x = lds[(t + 128 * ((8 * step + i) & 15)) & (LDS_FLOAT2 - 1)];
                    v[i] += x.x + x.y;
                } else if constexpr (stg_mode(MODE)) {
                    *at = make_float2(v[i], v[i] + 1.0f);
                } else if constexpr (MODE == CONCAT_STS) {
                    lds[(t + 128 * ((8 * step + i) & 15)) & (LDS_FLOAT2 - 1)] =
                        make_float2(v[i], v[i] + 1.0f);
                    v[i] += 1.0f;
                } else if constexpr (MODE == CONCAT_EPI) {
                    const float e0 = gelu_erf_fast(v[i]), e1 = gelu_erf_fast(v[i] + 0.25f);
                    *at = make_float2(e0, e1);
                    v[i] = e0 + 0.5f;
                } else if constexpr (MODE == RS_FFMA1) {
                    v[0] = fmaf(v[0], 0.999f, 0.001f);
                } else {
                    v[i] = fmaf(v[i], 0.999f, 0.001f);
                }
            }
    }
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) sum += v[i];
    if (sum == 1234.5f) sink[0] = sum;   // never: keeps the chains alive
}

template <int MODE, int N, int WGS, int G, int ACCS>
__global__ void __launch_bounds__(128 * (WGS + (alu_mode(MODE) ? 1 : 0)), 1)
rate_kernel(long long* __restrict__ cycles, float* __restrict__ sink, int iters) {
    extern __shared__ __align__(128) unsigned char smem[];
    float* s = reinterpret_cast<float*>(smem);
    int* done = reinterpret_cast<int*>(smem + SMEM_BYTES - 16);
    for (int i = threadIdx.x; i < (64 + N) * 8; i += blockDim.x) s[i] = 0.0f;   // A (64 x 8), then B (N x 8)
    if (threadIdx.x == 0) *done = 0;
    fence_proxy_async();
    __syncthreads();
    if constexpr (alu_mode(MODE)) {
        if (threadIdx.x >= 128 * WGS) {
            alu_loop<MODE>(done, sink, reinterpret_cast<float2*>(smem + LDS_REGION));
            return;
        }
    }
    // K-major, no swizzle: [k-half][rows][4 channels]; lbo the k-halves' distance, sbo 8 rows'
    const uint64_t da = wgmma_desc(smem_addr(s), 64 * 16, 128);
    const uint64_t db = wgmma_desc(smem_addr(s + 64 * 8), N * 16, 128);
    const uint32_t a[4] = {0u, 0u, 0u, 0u};
    float acc[ACCS][N / 2], acc32[ACCS][16];
#pragma unroll
    for (int j = 0; j < ACCS; ++j) {
#pragma unroll
        for (int i = 0; i < N / 2; ++i) acc[j][i] = 0.0f;
#pragma unroll
        for (int i = 0; i < 16; ++i) acc32[j][i] = 0.0f;
    }
    long long t0;
    if constexpr (MODE == FRESH || MODE == FRESH3) {
        constexpr int SETS = MODE == FRESH3 ? 3 : 2;
        uint32_t fresh[SETS][4];
        const float* arow = s + (threadIdx.x & 127) * 4;       // 512 floats of A's zeros, 4 a thread
        t0 = clock64();
#pragma unroll 1
        for (int it = 0; it < iters; it += SETS) {
#pragma unroll
            for (int set = 0; set < SETS; ++set) {   // the set the group SETS back read: wait_group SETS - 1 freed it
#pragma unroll
                for (int q = 0; q < 4; ++q) fresh[set][q] = to_tf32(arow[(q + it + set) & 3]);
                wgmma_fence();
                issue_group<RS, N, G, ACCS>(acc, acc32, fresh[set], da, db);
                wgmma_commit();
                wgmma_wait<SETS - 1>();
            }
        }
    } else {
        t0 = clock64();
#pragma unroll 1
        for (int it = 0; it < iters; ++it) {
            wgmma_fence();
            issue_group<base_mode(MODE), N, G, ACCS>(acc, acc32, a, da, db);
            wgmma_commit();
            wgmma_wait<1>();
        }
    }
    wgmma_wait<0>();
    const long long t1 = clock64();
    if constexpr (alu_mode(MODE)) {
        // the arithmetic warpgroup stops once every wgmma warpgroup is done (barrier 1: the WGS x 128 of them)
        asm volatile("bar.sync 1, %0;\n" :: "n"(128 * WGS) : "memory");
        if (threadIdx.x == 0) *reinterpret_cast<volatile int*>(done) = 1;
    }
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < ACCS; ++j) {
        fence_operand(acc[j]);
        fence_operand(acc32[j]);
#pragma unroll
        for (int i = 0; i < N / 2; ++i) sum += acc[j][i];
#pragma unroll
        for (int i = 0; i < 16; ++i) sum += acc32[j][i];
    }
    if (sum != 0.0f) sink[0] = sum;   // never: every operand is zero; keeps the wgmmas alive
    if (threadIdx.x % 128 == 0) cycles[blockIdx.x * WGS + threadIdx.x / 128] = t1 - t0;
}

template <int MODE, int N, int WGS, int G, int ACCS>
const char* launch_case(long long* cycles, float* sink, int iters, int blocks, cudaStream_t stream) {
    auto kernel = rate_kernel<MODE, N, WGS, G, ACCS>;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES) != cudaSuccess)
        return "wgmma_rate: the device cannot give the kernel its shared memory";
    kernel<<<blocks, 128 * (WGS + (alu_mode(MODE) ? 1 : 0)), SMEM_BYTES, stream>>>(cycles, sink, iters);
    return nullptr;
}

}  // namespace cfmicro

// The host ABI of this file (convfuse/micro.py): the number of cases; one case's name (null past the last), and its
// mode, N, warpgroups, group size and accumulators; one launch of case `c` on `blocks` blocks (cycles: blocks x
// warpgroups entries).
int rate_cases() { return cfmicro::NCASES; }
const char* rate_case(int c, int* mode, int* n, int* wgs, int* g, int* accs) {
    if (c < 0 || c >= cfmicro::NCASES) return nullptr;
    const cfmicro::Case& k = cfmicro::CASES[c];
    *mode = k.mode; *n = k.n; *wgs = k.wgs; *g = k.g; *accs = k.accs;
    return k.name;
}
const char* rate_launch(int c, long long* cycles, float* sink, int iters, int blocks, cudaStream_t stream) {
    int dev = 0, major = 0, minor = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    if (major != 9 || minor != 0) return "wgmma_rate uses wgmma, built for sm_90a only: it needs an H100/H200";
    using namespace cfmicro;
#define CF_RATE_CASE(i)                                                                                             \
    case i:                                                                                                       \
        return launch_case<CASES[i].mode, CASES[i].n, CASES[i].wgs, CASES[i].g, CASES[i].accs>(cycles, sink, iters, \
                                                                                              blocks, stream)
    static_assert(NCASES == 34, "one CF_RATE_CASE a case");
    switch (c) {
        CF_RATE_CASE(0); CF_RATE_CASE(1); CF_RATE_CASE(2); CF_RATE_CASE(3); CF_RATE_CASE(4);
        CF_RATE_CASE(5); CF_RATE_CASE(6); CF_RATE_CASE(7); CF_RATE_CASE(8); CF_RATE_CASE(9); CF_RATE_CASE(10);
        CF_RATE_CASE(11); CF_RATE_CASE(12); CF_RATE_CASE(13); CF_RATE_CASE(14); CF_RATE_CASE(15); CF_RATE_CASE(16);
        CF_RATE_CASE(17); CF_RATE_CASE(18); CF_RATE_CASE(19); CF_RATE_CASE(20);
        CF_RATE_CASE(21); CF_RATE_CASE(22); CF_RATE_CASE(23); CF_RATE_CASE(24); CF_RATE_CASE(25); CF_RATE_CASE(26);
        CF_RATE_CASE(27); CF_RATE_CASE(28); CF_RATE_CASE(29); CF_RATE_CASE(30); CF_RATE_CASE(31); CF_RATE_CASE(32);
        CF_RATE_CASE(33);
#undef CF_RATE_CASE
        default: return "wgmma_rate: no such case";
    }
}
