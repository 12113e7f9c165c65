// 04e_winograd_wgmma — conv2d step 04e: Winograd F(2x2, 3x3) on the tensor cores in 3xTF32, the output transform and
// the epilogue in registers (sm_90a only: H100/H200).
//
// What changed from 04d and why. 04d's 3xTF32 build does the direct conv's 913 GFLOP of TF32 tensor work (three passes
//   of 304 GFLOP), 1.85 ms at the H200's datasheet TF32 rate (494.5 TFLOP/s dense) before anything else. Winograd
//   F(2x2, 3x3) computes each 2x2 block of outputs (a "tile") from its 4x4 input patch d with 16 multiplies per (Cin,
//   Cout) instead of 36: U = B^T d B, V = G g G^T, M = sum over Cin of U * V (16 GEMMs, one per patch position p),
//   y = A^T M A. In 3xTF32 that is 406 GFLOP of tensor work, 0.82 ms at that rate. Accuracy (convfuse/winograd.py, a
//   CPU model with the tensor core's truncating adds): rel-L2 2.9e-7 (randn 3.2e-7) with this kernel's accumulation
//   (each GEMM's sums over 16 channels, 6 truncating adds, then FP32 round-to-nearest adds in the output transform),
//   against the bound 2e-6; measured 3.7e-7.
// The GEMMs. M = 64 tiles a warpgroup (2 tile rows x 32 tile columns: 4 output rows x 64 columns; a warp's M rows
//   g, g + 8 are the tiles above each other at tile column 8 warp + g), N = 64 Cout, K = the input channels. A (U_p)
//   is built in registers from the raw NCHW rows of a TMA box (8-byte shared loads, adds, the split), B (V_p, big and
//   small parts) streams through shared memory from a pre-pass buffer (512 KB). Registers bound the design: the output
//   transform needs a tile's 16 M values, so the warpgroup keeps its 4 outputs a tile and Cout as accumulated sums Y
//   (4 x 32 registers) and adds each GEMM's result into them (+-1 coefficients, 36 adds per 16 M values); a GEMM's
//   accumulator is 32 registers, and two (a pair of patch positions in one row r of B^T, which share their row sums) 64.
// Loop. For each 16-channel piece of the input (a stage of the input ring, 50,688 B: 16 channels x 6 rows x 132
//   columns, both warpgroups' tiles), for each of 8 pairs of patch positions (a stage of the weight ring, 16 KB: two
//   positions x two k8 steps x [big | small] x 64 Cout x 8 channels): per k8 step the pair's fragments (8 registers
//   each, big and small) and six m64n64k8 wgmmas (a_small w_big, a_big w_small, a_big w_big for each position; the
//   first zeroes the accumulator), then the pair's accumulators added into Y.
// Launch: persistent grid, one block an SM of two consumer warpgroups (256 threads, 254 registers), a block tile of
//   4 x 128 outputs; 2 input and 4 weight stages, 166,984 B of shared memory. The rings are shared by both warpgroups;
//   a stage is refilled by the warpgroup that releases it second (a counter in shared memory), so neither waits for
//   the other to free a slot it still reads. A stage's 8-byte loads hit 32 banks a half-warp (a channel 792 floats =
//   24 mod 32 banks on; lanes g read pixel pairs 2 apart).
// Special values. Winograd mixes every input of a patch into every output of its tile, so an Inf or NaN input would
//   turn outputs that do not read it into NaN (Inf - Inf). Each thread checks its sums before the epilogue; the
//   non-finite ones (only with Inf, NaN or overflowing inputs) are recomputed as the direct FP32 conv from global
//   memory, which gives eager's class.
// Bytes: DRAM x 1.08 GB read + y 1.03 GB written (measured 2.12 GB); L2 -> SM the 512 KB of weights a block tile
//   (4.3 GB) and its 16 input boxes (1.7 GB): ncu counts 7.8 GB of L2 traffic, 28 % of L2's peak.
// Bound: latency. No unit is near its limit (ncu: tensor pipe 38 % busy, issue 43 %, L2 28 %): each warpgroup builds
//   a pair's fragments, issues six wgmmas and waits for them before the next pair (one fragment set fits 254
//   registers), and the SM's other warpgroup rarely fills the gap.
// Measured (H200, 2026-12-05 record): 2.252 ms, 2.21x eager, 1.03x torch.compile (04d 3xTF32: 2.755 ms).

namespace cf04e {

constexpr int CIN = 64, COUT = 64, KS = 3;
constexpr int PIECE = 16, PIECES = CIN / PIECE;      // input channels a stage of the input ring
constexpr int PAIRS = 8;                             // patch positions p = 2 pair + q, q = 0, 1: row r = pair / 2
constexpr int TROWS = 2, TCOLS = 32;                 // tiles a warpgroup: 2 x 32 (M = 64)
constexpr int OROWS = 2 * TROWS, OCOLS = 2 * 2 * TCOLS;   // a block's outputs: 4 rows x 128 columns (two warpgroups)
constexpr int BOX_W = 132, BOX_H = OROWS + KS - 1;   // the input box: 130 columns needed, rounded up to 16 bytes
constexpr int CHP = BOX_H * BOX_W;                   // 792 floats a channel
static_assert(CHP % 32 == 8 || CHP % 32 == 24, "fragment loads: channels t, t + 1 in disjoint 8-bank groups");
constexpr int IN_STAGE = PIECE * CHP;                // 12,672 floats = 50,688 B
constexpr int PARTS = 2;                             // [big | small]
constexpr int W_OP = 2 * COUT * 4;                   // one B operand (k8 x 64 Cout, [k-half][co][4]): 512 floats
constexpr int W_STAGE = 2 * 2 * PARTS * W_OP;        // [q][kk][part] operands: 4,096 floats = 16 KB
constexpr int W_STAGES = PIECES * PAIRS;             // 32 weight stages a tile
constexpr int WT_FLOATS = W_STAGES * W_STAGE;        // the pre-pass buffer: 131,072 floats = 512 KB
constexpr int SIN = 2, SW = 4;                       // input and weight ring stages
constexpr int THREADS = 256;                         // two consumer warpgroups; no producer (a thread of each refills)
constexpr int SMEM_BYTES = (SIN * IN_STAGE + SW * W_STAGE) * 4 + (SIN + SW) * 8 + (SIN + SW) * 4;
static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 block can have (227 KB)");
static_assert((IN_STAGE * 4) % 128 == 0 && (W_STAGE * 4) % 128 == 0, "TMA and bulk-copy destinations 128-byte aligned");

// B^T's rows (and the same combinations along columns): U[r] = d[A] + S d[B]
__host__ __device__ constexpr int bt_a(int r) { return r == 0 ? 0 : r == 2 ? 2 : 1; }
__host__ __device__ constexpr int bt_b(int r) { return r == 0 ? 2 : r == 2 ? 1 : r == 1 ? 2 : 3; }
__host__ __device__ constexpr bool bt_plus(int r) { return r == 1; }
// A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]
__host__ __device__ constexpr int at(int i, int r) { return i == 0 ? (r < 3 ? 1 : 0) : (r == 0 ? 0 : r == 1 ? 1 : -1); }
// G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
__device__ __forceinline__ double gcoef(int r, int a) {
    if (r == 0) return a == 0 ? 1.0 : 0.0;
    if (r == 3) return a == 2 ? 1.0 : 0.0;
    return (r == 2 && a == 1) ? -0.5 : 0.5;
}

struct Geom {
    int N, H, W, Ho, Wo;
    int tiles_x, tiles_y, tiles;   // block tiles: OROWS x OCOLS outputs of one image
    int tma;                       // xmap describes x (W % 4 == 0, x 16-byte aligned); else 4-byte cp.async
};
struct TileCoord { int n, oy0, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x, t = tile / g.tiles_x;
    return { t / g.tiles_y, (t % g.tiles_y) * OROWS, tx * OCOLS };
}

// The pre-pass: V = G g G^T per (Cout, Cin) in float64, rounded once to FP32, split (split_rounded: both parts
// TF32-rounded, Inf carried in the small part), laid out as the weight ring's stages:
// f = (((((s * 2 + q) * 2 + kk) * PARTS + part) * 2 + khalf) * 64 + co) * 4 + e  <-  part of V_p[co][ci],
// s = piece * 8 + pair, p = 2 pair + q, ci = 16 piece + 8 kk + 4 khalf + e.
__global__ void conv2d_wino_weights(const float* __restrict__ w, float* __restrict__ wt) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= WT_FLOATS) return;
    const int e = f & 3, co = (f >> 2) & 63, khalf = (f >> 8) & 1;
    const int part = (f >> 9) & 1, kk = (f >> (8 + PARTS)) & 1;
    const int q = (f >> (9 + PARTS)) & 1, s = f >> (10 + PARTS);
    const int piece = s >> 3, pair = s & 7;
    const int ci = PIECE * piece + 8 * kk + 4 * khalf + e, p = 2 * pair + q, r = p >> 2, c = p & 3;
    const float* gw = w + (co * CIN + ci) * KS * KS;
    double v = 0.0;
    for (int a = 0; a < KS; ++a)
        for (int b = 0; b < KS; ++b) v += gcoef(r, a) * (double)__ldg(gw + KS * a + b) * gcoef(c, b);
    float big, small;
    split_rounded((float)v, big, small);
    wt[f] = part ? small : big;
}

// A 1-D bulk copy global -> shared, completing on `bar` (16-byte aligned addresses, bytes a multiple of 16).
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}
// One weight stage (stage u of the cyclic sequence) into ring slot `slot`, by one thread.
__device__ __forceinline__ void fill_weights(float* wring, uint64_t* full_w, const float* __restrict__ wt, int slot, int u) {
    mbar_arrive_expect_tx(full_w + slot, W_STAGE * 4);
    bulk_load(wring + slot * W_STAGE, wt + (u % W_STAGES) * W_STAGE, W_STAGE * 4, full_w + slot);
}

// One input stage: the box (16 channels from `piece`, 6 rows, 132 columns at the block tile's corner), by TMA (one
// thread) or, where TMA cannot take x, by one warp's 4-byte cp.async, zero-filled outside the image.
__device__ __forceinline__ void fill_input(float* dst, uint64_t* full, const CUtensorMap& xmap, const float* __restrict__ x,
                                           const Geom& g, int tile, int piece, int lane) {
    const TileCoord tc = tile_coord(g, tile < g.tiles ? tile : g.tiles - 1);   // a guard: never past the last
    if (g.tma) {
        if (lane == 0) {
            fence_proxy_async();                  // the slot's generic-proxy reads before the async proxy's writes
            mbar_arrive_expect_tx(full, IN_STAGE * 4);
            tma_load_4d(dst, &xmap, tc.ox0, tc.oy0, PIECE * piece, tc.n, full);
        }
    } else {
#pragma unroll 1
        for (int e = lane; e < IN_STAGE; e += 32) {
            const int ch = e / CHP, rem = e - ch * CHP, row = rem / BOX_W, col = rem - row * BOX_W;
            const int gy = tc.oy0 + row, gx = tc.ox0 + col;
            const bool ok = gy < g.H && gx < g.W;
            const float* src = ok ? x + (((long long)tc.n * CIN + PIECE * piece + ch) * g.H + gy) * g.W + gx : x;
            cp_async4(dst + e, src, ok ? 4 : 0);
        }
        cp_async_mbar_arrive(full);
    }
}

// The direct FP32 conv of one output (no bias): the path for sums that came out non-finite.
__device__ __forceinline__ float direct_output(const float* __restrict__ x, const float* __restrict__ w, const Geom& g,
                                            int n, int co, int oy, int ox) {
    float s = 0.0f;
#pragma unroll 1
    for (int ci = 0; ci < CIN; ++ci) {
        const float* xr = x + (((long long)n * CIN + ci) * g.H + oy) * g.W + ox;
        const float* wr = w + (co * CIN + ci) * KS * KS;
#pragma unroll
        for (int a = 0; a < KS; ++a)
#pragma unroll
            for (int b = 0; b < KS; ++b) s = fmaf(__ldg(xr + (long long)a * g.W + b), __ldg(wr + KS * a + b), s);
    }
    return s;
}

// B^T's row R of a tile's patch, at the stage's channel and tile (`fc`): t[k] = d[A][k] +- d[B][k] for the patch's four
// columns, from two 16-byte rows read as float2 pairs (the compiler drops the loads of columns a caller does not use).
template <int R>
__device__ __forceinline__ void row_combination(const float* fc, float (&t)[4]) {
    const float* ra = fc + bt_a(R) * BOX_W;
    const float* rb = fc + bt_b(R) * BOX_W;
    const float2 a01 = *reinterpret_cast<const float2*>(ra), a23 = *reinterpret_cast<const float2*>(ra + 2);
    const float2 b01 = *reinterpret_cast<const float2*>(rb), b23 = *reinterpret_cast<const float2*>(rb + 2);
    if constexpr (bt_plus(R)) {
        t[0] = a01.x + b01.x; t[1] = a01.y + b01.y; t[2] = a23.x + b23.x; t[3] = a23.y + b23.y;
    } else {
        t[0] = a01.x - b01.x; t[1] = a01.y - b01.y; t[2] = a23.x - b23.x; t[3] = a23.y - b23.y;
    }
}
// A pair's fragments for k8 step KK of a stage: positions (R, 2 CP + q), q = 0, 1. `fb`: the stage at channel tq,
// column of this thread's tile (h = 0). Fragment register h + 2 cc: tile h (M row g + 8 h), channel tq + 4 cc.
// U is split as 04d splits its inputs (split_tf32 without the clamp: a non-finite U makes non-finite sums, which the
// direct path recomputes): big = the top 19 bits, small = the rest, which the tensor core truncates.
template <int R, int CP, int KK>
__device__ __forceinline__ void pair_fragments(const float* fb, uint32_t (&big)[2][4], uint32_t (&small)[2][4]) {
#pragma unroll
    for (int cc = 0; cc < 2; ++cc) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float t[4];
            row_combination<R>(fb + (8 * KK + 4 * cc) * CHP + 2 * h * BOX_W, t);
#pragma unroll
            for (int q = 0; q < 2; ++q) {
                const int c = 2 * CP + q;
                const float u = bt_plus(c) ? t[bt_a(c)] + t[bt_b(c)] : t[bt_a(c)] - t[bt_b(c)];
                const uint32_t b = __float_as_uint(u) & 0xffffe000u;
                big[q][h + 2 * cc] = b;
                small[q][h + 2 * cc] = __float_as_uint(u - __uint_as_float(b));
            }
        }
    }
}
// The pair's wgmmas of k8 step KK: the weight stage's operand (q, KK, part) at ((q * 2 + KK) * PARTS + part) * 2 KB.
// a_small w_big, a_big w_small, a_big w_big for each position: six.
template <int KK>
__device__ __forceinline__ void pair_mmas(float (&acc)[2][32], const uint32_t (&big)[2][4], const uint32_t (&small)[2][4],
                                          uint32_t wlo, uint32_t whi) {
    auto desc = [&](int q, int part) { return desc_at(wlo, whi, ((q * 2 + KK) * PARTS + part) * W_OP * 4); };
    wgmma_rs_m64n64k8<KK>(acc[0], small[0], desc(0, 0));
    wgmma_rs_m64n64k8<KK>(acc[1], small[1], desc(1, 0));
    wgmma_rs_m64n64k8<1>(acc[0], big[0], desc(0, 1));
    wgmma_rs_m64n64k8<1>(acc[1], big[1], desc(1, 1));
    wgmma_rs_m64n64k8<1>(acc[0], big[0], desc(0, 0));
    wgmma_rs_m64n64k8<1>(acc[1], big[1], desc(1, 0));
}
// Y[2 i + j] += A^T[i][R] A^T[j][c] M_(R, c) for the pair's two positions (the output transform, term by term).
template <int R, int CP>
__device__ __forceinline__ void add_pair(float (&y)[4][32], const float (&acc)[2][32]) {
#pragma unroll
    for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int coef = at(i, R) * at(j, 2 * CP + q);
                if (coef == 0) continue;
#pragma unroll
                for (int n = 0; n < 32; ++n)
                    y[2 * i + j][n] = coef > 0 ? y[2 * i + j][n] + acc[q][n] : y[2 * i + j][n] - acc[q][n];
            }
}

// Ring bookkeeping: the FULL barriers and the release counters. A warpgroup releases a stage after its 128 threads
// are done with it (a warpgroup barrier); the second of the two to release it refills it (returns true to thread 0).
// The counter only grows (two releases a fill: the second sees an odd count), so no plain store races an atomic.
__device__ __forceinline__ bool release_is_last(int* cnt, int wg) {
    warpgroup_barrier(1 + wg);
    bool last = false;
    if ((threadIdx.x & 127) == 0) {
        __threadfence_block();
        last = (atomicAdd(cnt, 1) & 1) == 1;
        __threadfence_block();
    }
    return last;
}

struct Rings {
    float* in;  float* w;  uint64_t* full_in;  uint64_t* full_w;  int* cnt_in;  int* cnt_w;
};

template <int PAIR>
__device__ __forceinline__ void pair_step(float (&y)[4][32], float (&acc)[2][32], uint32_t (&big)[2][4],
                                          uint32_t (&small)[2][4], const float* fb, const Rings& rg,
                                          const float* __restrict__ wt, int& uw, int wtotal, uint32_t wlo0, uint32_t whi,
                                          int wg) {
    constexpr int R = PAIR / 2, CP = PAIR % 2;
    const int slot = uw % SW;
    mbar_wait(rg.full_w + slot, (uw / SW) & 1);
    // the stage's descriptor base broadcast from lane 0, so that the compiler forms the pair's 12 descriptors in uniform
    // registers (UIADD3, UMOV) instead of vector registers moved by two R2URs each: 5 % fewer instructions a piece
    const uint32_t wlo = __shfl_sync(0xffffffffu, wlo0 + ((slot * W_STAGE * 4) >> 4), 0);
    pair_fragments<R, CP, 0>(fb, big, small);
    wgmma_fence();
    pair_mmas<0>(acc, big, small, wlo, whi);
    wgmma_commit();
    wgmma_wait<0>();                              // one fragment set: k8 step 1 writes the registers step 0 read
    pair_fragments<R, CP, 1>(fb, big, small);
    wgmma_fence();
    pair_mmas<1>(acc, big, small, wlo, whi);
    wgmma_commit();
    wgmma_wait<0>();
    fence_operand(acc[0]);
    fence_operand(acc[1]);
    const bool last = release_is_last(rg.cnt_w + slot, wg);
    if (last && uw + SW < wtotal) {
        fence_proxy_async();
        fill_weights(rg.w, rg.full_w, wt, slot, uw + SW);
    }
    add_pair<R, CP>(y, acc);
    ++uw;
}


// The outputs whose sums were non-finite (bit 32 a + m of redo: y[a][m]), from the direct FP32 conv (eager's Inf/NaN
// class), over what the tile's stores wrote: y[2 i + j][4 jj + 2 h + e] is output (oy0 + 2 h + i, ox + j), Cout
// 8 jj + 2 tq + e
__device__ __forceinline__ void redo_nonfinite(const uint32_t (&redo)[4], const float* __restrict__ x,
                                              const float* __restrict__ w, const float* __restrict__ bias,
                                              const float* __restrict__ mult, float* __restrict__ yout, const Geom& g,
                                              TileCoord tc, int ox, int tq, long long plane) {
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        uint32_t bits = redo[a];
#pragma unroll 1
        while (bits) {
            const int m = __ffs(bits) - 1;
            bits &= bits - 1;
            const int i = a >> 1, j = a & 1, jj = m >> 2, h = (m >> 1) & 1, e = m & 1;
            const int oy = tc.oy0 + 2 * h + i, oxj = ox + j, co = 8 * jj + 2 * tq + e;
            if (oy >= g.Ho || oxj >= g.Wo) continue;
            const float s = direct_output(x, w, g, tc.n, co, oy, oxj) + __ldg(bias + co);
            __stcs(yout + ((long long)tc.n * COUT + co) * plane + (long long)oy * g.Wo + oxj,
                   epilogue_conv2d_fast(s, __ldg(mult + co)));
        }
    }
}

// The kernel: both rings' first stages, the chunk loop over pieces (pair_step per Winograd pair), the epilogue and its
// stores, the non-finite outputs again (redo_nonfinite).
// Over 130 lines: the epilogue's stores moved into a function of their own compile to other machine code than the
// record's (scripts/same_machine_code.py), which no GPU has measured.
__global__ void __launch_bounds__(THREADS, 1)
conv2d_wino_kernel(const __grid_constant__ CUtensorMap xmap, const float* __restrict__ x, const float* __restrict__ w,
                   const float* __restrict__ wt, const float* __restrict__ bias, const float* __restrict__ mult,
                   float* __restrict__ yout, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    Rings rg;
    rg.in = smem;
    rg.w = rg.in + SIN * IN_STAGE;
    rg.full_in = reinterpret_cast<uint64_t*>(rg.w + SW * W_STAGE);
    rg.full_w = rg.full_in + SIN;
    rg.cnt_in = reinterpret_cast<int*>(rg.full_w + SW);
    rg.cnt_w = rg.cnt_in + SIN;
    const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int gid = lane >> 2, tq = lane & 3;
    const int ntiles = blockIdx.x < g.tiles ? (g.tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    auto tile_of = [&](int k) { return (int)blockIdx.x + k * (int)gridDim.x; };
    const int intotal = ntiles * PIECES, wtotal = ntiles * W_STAGES;
    if (threadIdx.x == 0) {
        for (int i = 0; i < SIN; ++i) { mbar_init(rg.full_in + i, g.tma ? 1 : 32); rg.cnt_in[i] = 0; }
        for (int i = 0; i < SW; ++i) { mbar_init(rg.full_w + i, 1); rg.cnt_w[i] = 0; }
        mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x < 32) {                       // warp 0: the first stages of both rings
        for (int u = 0; u < SIN && u < intotal; ++u)
            fill_input(rg.in + u * IN_STAGE, rg.full_in + u, xmap, x, g, tile_of(u / PIECES), u % PIECES, lane);
        if (lane == 0)
            for (int u = 0; u < SW && u < wtotal; ++u) fill_weights(rg.w, rg.full_w, wt, u, u);
    }
    const uint64_t d0 = wgmma_desc(smem_addr(rg.w), COUT * 16, CORE_MATRIX_BYTES);   // lbo: k-half 0 -> 1; sbo: 8 Cout
    const uint32_t whi = (uint32_t)(d0 >> 32);
    const uint32_t wlo0 = opaque((uint32_t)d0);
    const int col = 64 * wg + 16 * warp + 2 * gid;  // this thread's tile's first column in the block tile
    const long long plane = (long long)g.Ho * g.Wo;
    const bool pair_stores = (g.Wo & 1) == 0 && (reinterpret_cast<uintptr_t>(yout) & 7) == 0;
    int uin = 0, uw = 0;
    float y[4][32], acc[2][32];
    uint32_t big[2][4], small[2][4];
#pragma unroll 1
    for (int k = 0; k < ntiles; ++k) {
        const int tile = tile_of(k);
#pragma unroll
        for (int a = 0; a < 4; ++a)
#pragma unroll
            for (int n = 0; n < 32; ++n) y[a][n] = 0.0f;
#pragma unroll 1
        for (int piece = 0; piece < PIECES; ++piece) {
            const int slot = uin % SIN;
            mbar_wait(rg.full_in + slot, (uin / SIN) & 1);
            const float* fb = rg.in + slot * IN_STAGE + tq * CHP + col;
            pair_step<0>(y, acc, big, small, fb, rg, wt, uw, wtotal, wlo0, whi, wg);
            pair_step<1>(y, acc, big, small, fb, rg, wt, uw, wtotal, wlo0, whi, wg);
            pair_step<2>(y, acc, big, small, fb, rg, wt, uw, wtotal, wlo0, whi, wg);
            pair_step<3>(y, acc, big, small, fb, rg, wt, uw, wtotal, wlo0, whi, wg);
            pair_step<4>(y, acc, big, small, fb, rg, wt, uw, wtotal, wlo0, whi, wg);
            pair_step<5>(y, acc, big, small, fb, rg, wt, uw, wtotal, wlo0, whi, wg);
            pair_step<6>(y, acc, big, small, fb, rg, wt, uw, wtotal, wlo0, whi, wg);
            pair_step<7>(y, acc, big, small, fb, rg, wt, uw, wtotal, wlo0, whi, wg);
            // the stage's last loads were read into fragments before the wgmmas that used them
            bool last = release_is_last(rg.cnt_in + slot, wg);
            if (warp == 0) {
                last = __shfl_sync(~0u, last, 0);
                if (last && uin + SIN < intotal)
                    fill_input(rg.in + slot * IN_STAGE, rg.full_in + slot, xmap, x, g,
                               tile_of((uin + SIN) / PIECES), (uin + SIN) % PIECES, lane);
            }
            ++uin;
        }
        // ---- epilogue: bias, multiplier, LeakyReLU, GELU; outputs (oy0 + 2 h + i, ox + j), Cout 8 jj + 2 tq + e ----
        const TileCoord tc = tile_coord(g, tile);
        const int ox = tc.ox0 + col;
        // the non-finite sums (Inf or NaN inputs, or overflow): bit 32 a + m of `redo` for y[a][m], recomputed after
        // the stores below by the direct path (a loop on the bits, so that the sums need not stay live through it)
        uint32_t redo[4] = {0u, 0u, 0u, 0u};
        bool bad = false;
#pragma unroll
        for (int a = 0; a < 4; ++a) bad |= acc_nonfinite(y[a]);
        if (bad) {
#pragma unroll
            for (int a = 0; a < 4; ++a)
#pragma unroll
                for (int m = 0; m < 32; ++m) redo[a] |= (fabsf(y[a][m]) < CF_F32_INF ? 0u : 1u) << m;
        }
        float b_r[16], m_r[16];                   // channels 8 jj + 2 tq + e at [2 jj + e]
#pragma unroll
        for (int jj = 0; jj < 8; ++jj)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                b_r[2 * jj + e] = __ldg(bias + 8 * jj + 2 * tq + e);
                m_r[2 * jj + e] = __ldg(mult + 8 * jj + 2 * tq + e);
            }
        float* const yt = yout + (long long)tc.n * COUT * plane + (long long)(2 * tq) * plane + ox;
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int oy = tc.oy0 + 2 * h + i;
                if (oy >= g.Ho || ox >= g.Wo) continue;
                float v[32];                      // [2 (2 jj + e) + j]: a row's 16 channels x 2 pixels, then the stores
#pragma unroll
                for (int jj = 0; jj < 8; ++jj)
#pragma unroll
                    for (int e = 0; e < 2; ++e)
#pragma unroll
                        for (int j = 0; j < 2; ++j)
                            v[2 * (2 * jj + e) + j] =
                                epilogue_conv2d_fast(y[2 * i + j][4 * jj + 2 * h + e] + b_r[2 * jj + e], m_r[2 * jj + e]);
                float* const yr = yt + (long long)oy * g.Wo;
                if (pair_stores) {
#pragma unroll
                    for (int c = 0; c < 16; ++c)
                        __stcs(reinterpret_cast<float2*>(yr + (8 * (c >> 1) + (c & 1)) * plane),
                               make_float2(v[2 * c], v[2 * c + 1]));
                } else {
#pragma unroll
                    for (int c = 0; c < 16; ++c) {
                        __stcs(yr + (8 * (c >> 1) + (c & 1)) * plane, v[2 * c]);
                        if (ox + 1 < g.Wo) __stcs(yr + (8 * (c >> 1) + (c & 1)) * plane + 1, v[2 * c + 1]);
                    }
                }
            }
        if (bad) redo_nonfinite(redo, x, w, bias, mult, yout, g, tc, ox, tq, plane);
    }
    if (warp == 0) cp_async_wait<0>();            // the fallback's copies have landed before the warp exits
#endif
}

}  // namespace cf04e

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace cf04e;
    constexpr const char* NAME = "04e_winograd_wgmma (conv2d)";
    if (const char* err = cf_conv2d_shape(a, NAME)) return err;
    int dev = 0, sms = 0, grid = 0;
    if (const char* err = cf_sm90a_device(NAME, dev, sms)) return err;
    Geom g;
    g.N = a.N; g.H = a.H; g.W = a.W; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, OCOLS);
    g.tiles_y = cf_ceil_div(a.Ho, OROWS);
    const long long tiles = (long long)a.N * g.tiles_y * g.tiles_x;
    if (tiles > 0x7fffffffLL / (PIECES * PAIRS) - 2LL * sms)
        return cf_message(NAME, ": too many tiles for the kernel's 32-bit stage counters");
    g.tiles = (int)tiles;
    CUtensorMap xmap{};
    g.tma = cf_encode_tma_4d(&xmap, a.x, {(uint64_t)a.W, (uint64_t)a.H, (uint64_t)CIN, (uint64_t)a.N},
                             {(uint32_t)BOX_W, (uint32_t)BOX_H, (uint32_t)PIECE, 1u}) ? 1 : 0;
    if (const char* err = cf_persistent_grid(conv2d_wino_kernel, THREADS, SMEM_BYTES, tiles, sms, NAME, grid))
        return err;
    cudaMemPool_t pool = cf_weight_pool(dev);
    float* wt = nullptr;
    if (pool == nullptr ||
        cudaMallocFromPoolAsync(reinterpret_cast<void**>(&wt), WT_FLOATS * sizeof(float), pool, stream) != cudaSuccess)
        return cf_message(NAME, ": cannot allocate the transformed-weight buffer");
    conv2d_wino_weights<<<WT_FLOATS / 256, 256, 0, stream>>>(a.w, wt);
    conv2d_wino_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(xmap, a.x, a.w, wt, a.bias, a.param, a.y, g);
    cudaFreeAsync(wt, stream);                    // stream-ordered: released once the kernel is done
    return nullptr;
}
