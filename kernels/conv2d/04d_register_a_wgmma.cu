// 04d_register_a_wgmma — conv2d step 04d: the implicit GEMM turned around, output pixels as M with the input operand
// loaded into registers, so that nothing is staged (sm_90a only: H100/H200).
//
// What changed from 04c. 04c multiplies weights (M = 64 Cout) by input pixels (N = 176), both from shared memory. TF32
//   wgmma reads shared operands K-major only, so 04c's producer warpgroups transpose every chunk into a pixel-major
//   stage, and its consumer issuing MMAs waits for them at FULL 44 % of its time, the tensor pipe at most 45 % busy.
//   wgmma can also take A from registers in the mma.sync fragment layout, and a register fragment can be loaded from
//   any layout. Here M = 64 output pixels of one output row, N = 64 Cout, K = 8 channels of one tap per k8 step. A
//   comes from the raw NCHW rows as the TMA writes them: a warp's M rows g, g + 8 are its pixels 2 g, 2 g + 1, so lane
//   (g, t) reads channel t's row at pixels 2 g, 2 g + 1 with one 8-byte shared load (a channel's pixels are CHP = 8 or
//   24 mod 32 floats apart: no bank conflicts) and converts them with cvt.rn. B is the weights, resident in shared
//   memory K-major ([chunk][tap][k-half][co][4 channels], 04c's layout). The producer only issues one TMA per chunk.
// Reuse. A consumer warpgroup owns ROWS output rows x 64 columns (an m64n64 accumulator per row). Input row i of a
//   chunk, shifted by tap column s, is one fragment; it serves output rows i - r for the taps (r, s) with 0 <= i - r <
//   ROWS: with ROWS 4, 18 fragments per chunk feed 36 wgmmas.
// Pipeline. Per input row: its three fragments into one of two register sets, wgmma.fence, its wgmmas, a commit, then
//   wgmma.wait_group 1 (the previous row's wgmmas, which read the other set, are done); the stage is released (an
//   mbarrier arrive of every consumer thread) after its last row's wgmmas. Two consumer warpgroups work on their own
//   tiles at once, each with a 3-stage ring filled by one producer thread's TMA (8 channels x XH rows x PITCH pixels,
//   out-of-image pixels zero-filled; tiles start at multiples of 64 columns, so boxes start 16-byte aligned). Shapes
//   TMA cannot take (W % 4 != 0) copy with 4-byte cp.async onto the same mbarriers.
// Epilogue: bias, multiplier, LeakyReLU, GELU (erf polynomial) on the accumulators, 16 values, then their 8-byte
//   streaming stores (a thread holds two neighbouring pixels of a channel).
// CF_3XTF32 (04d_rs_3xtf32): split-TF32 operands (big + small, three products) for FP32 accuracy. Both weight parts for
//   64 Cout need 295 KB, so a block takes one Cout half (N = 32, 147,456 B) and blocks 2 b, 2 b + 1 the same tiles.
//   Three rows a tile; per tap a_big times [w_big | w_small] in one m64n64k8 and a_small w_big in one m64n32k8, issued
//   in tap-column groups on three fragment register sets (RsChunk3x, wgmma.cuh); main products and corrections in
//   accumulators of their own (the tensor core's adds round toward zero). No producer warpgroup (consumer_3x).
// Launch: a persistent grid, one block per SM. TF32: 384 threads (producer warpgroup at 40 registers, consumers at
//   232); weights 147,456 B | 2 rings x 3 stages x 13,056 B | 12 mbarriers = 225,888 B. 3xTF32: an even grid of 256
//   threads; weights 147,456 B | 2 rings x 3 stages x 11,520 B | 12 mbarriers = 216,672 B.
// Bytes: x 1.07 GB and y 1.06 GB at one pass each; ncu reads 1.09 GB (TF32) and 1.20 GB (3xTF32), writes 1.03-1.05 GB.
// Bound: not memory (~2 TB/s of 4.3). TF32: wgmma issue; while one consumer runs its epilogue the other issues alone
//   (285 TFLOPS of 410). 3xTF32: the tensor pipe ~69 % active; the fragment splits and loads in front of each group and
//   the epilogue's math and stores, beside which a lone warpgroup's wgmmas retire below the TF32 rate.
// Measured (H200, 2026-12-05 record): TF32 1.077 ms, 4.63x eager, 2.14x torch.compile; 3xTF32 2.755 ms, 1.81x eager,
//   0.84x torch.compile, rel-L2 1.86e-6.

namespace cf04d {

constexpr int CIN = 64, COUT = 64, KS = 3, TAPS = KS * KS;
constexpr int CHUNK = 8, NCHUNK = CIN / CHUNK;
constexpr int STAGES = 3, CONSUMERS = 2;
constexpr int WFLOATS = NCHUNK * TAPS * 2 * COUT * 4;      // 36,864 floats = 147,456 B
constexpr int WSTEP = 2 * COUT * 4 * 4;                    // bytes per (chunk, tap): 2 KB
#ifdef CF_3XTF32
constexpr bool SPLIT = true;               // 3xtf32 (the registry's define, read here only)
#else
constexpr bool SPLIT = false;              // tf32
#endif
// 3xTF32: three rows a tile: four serialize the wgmmas (ptxas C7512, too few registers). A block computes one half of
// the Cout, NB = 32; per (chunk, tap) [k-half][w_big | w_small][32 Cout][4 channels] (2 KB: WSTEP and WFLOATS as
// TF32's), read as N = 64 (AW = 32 accumulators a row). No producer warpgroup: each consumer copies its own boxes
// (consumer_3x).
constexpr int ROWS = SPLIT ? 3 : 4, PITCH = SPLIT ? 72 : 68;
constexpr int THREADS = 128 * (SPLIT ? CONSUMERS : 1 + CONSUMERS), BLOCKS_PER_TILE = SPLIT ? 2 : 1;
constexpr int NB = SPLIT ? COUT / 2 : COUT;                // Cout per block
constexpr int B_KHALF = (SPLIT ? 2 * NB : NB) * 16;        // bytes between a k8 step's two halves
constexpr int AW = 32;
// ROWS: output rows per consumer tile (one m64n64 accumulator set each); PITCH: the TMA box's width, TW + 2 columns
// rounded up to 16 bytes, and CHP % 32 = 24 (TF32) or 8 (3xTF32)
constexpr int TW = 64;                     // output columns per tile: the wgmma's M
constexpr int XH = ROWS + KS - 1;          // input rows per chunk
constexpr int CHP = XH * PITCH;            // floats per channel of a stage
static_assert(CHP % 32 == 8 || CHP % 32 == 24, "fragment loads: channels t and t + 1 in disjoint banks");
constexpr int STAGE_FLOATS = CHUNK * CHP;  // [channel][row][PITCH]: the TMA box as it lands
constexpr int RING_FLOATS = CONSUMERS * STAGES * STAGE_FLOATS;
constexpr int NBARS = 2 * CONSUMERS * STAGES;              // FULL and EMPTY per stage
constexpr int SMEM_BYTES = (WFLOATS + RING_FLOATS) * 4 + NBARS * 8;
static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 block can have (227 KB)");
static_assert((WFLOATS * 4) % 128 == 0 && (STAGE_FLOATS * 4) % 128 == 0, "TMA destinations 128-byte aligned");
constexpr int KERNEL_REGS = (65536 / THREADS) & ~7;        // what __launch_bounds__(THREADS, 1) allows: 168
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = ((THREADS * KERNEL_REGS - 128 * PRODUCER_REGS) / (128 * CONSUMERS)) & ~7;
static_assert(CONSUMER_REGS <= 256 && 128 * PRODUCER_REGS + 128 * CONSUMERS * CONSUMER_REGS <= THREADS * KERNEL_REGS,
              "register pool");

// The pixel-pair epilogue, 16 values at a time, then their stores: storing each pair as it is computed puts a branch on
// pair_stores after every two values, a basic block in which ptxas can overlap only two GELU chains (~20 dependent
// instructions, two MUFU each). Here 16 values a thread (a row in 3xTF32, half a row in TF32) are one block of
// independent chains, and their stores follow under one branch. Values v[4 jj + 2 e + q]: channel 8 jj + e (+ 2 tq,
// the caller's yrow), pixel q of the pair.
template <int NJ>
__device__ __forceinline__ void store_row_pairs(const float (&v)[4 * NJ], float* yrow, long long plane, bool pair_stores,
                                                bool second) {
    if (pair_stores) {
#pragma unroll
        for (int jj = 0; jj < NJ; ++jj)
#pragma unroll
            for (int e = 0; e < 2; ++e)
                __stcs(reinterpret_cast<float2*>(yrow + (8 * jj + e) * plane),
                       make_float2(v[4 * jj + 2 * e], v[4 * jj + 2 * e + 1]));
    } else {
#pragma unroll
        for (int jj = 0; jj < NJ; ++jj)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                __stcs(yrow + (8 * jj + e) * plane, v[4 * jj + 2 * e]);
                if (second) __stcs(yrow + (8 * jj + e) * plane + 1, v[4 * jj + 2 * e + 1]);
            }
    }
}
struct Geom {
    int N, H, W, Ho, Wo;
    int tiles_x, tiles_y, tiles;
    int tma;     // the kernel parameter xmap describes x (W % 4 == 0, x 16-byte aligned)
};
struct TileCoord { int n, oh, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x, t = tile / g.tiles_x;
    return { t / g.tiles_y, (t % g.tiles_y) * ROWS, tx * TW };
}
// Consumer k's tiles: BLOCKS_PER_TILE blocks in turn take the same tiles (3xTF32: blocks 2 b and 2 b + 1, Cout halves 0
// and 1); block (pair) b's consumer k takes tile 2 b + k, then 2 (blocks or block pairs) apart.
__device__ __forceinline__ int first_tile(int k) { return (blockIdx.x / BLOCKS_PER_TILE) * CONSUMERS + k; }
__device__ __forceinline__ int tile_stride() { return CONSUMERS * (gridDim.x / BLOCKS_PER_TILE); }

// Weights, once per block. TF32: f = ((s * 2 + half) * 64 + co) * 4 + e  <-  w[co][8 chunk + 4 half + e][tap], rounded,
// s = chunk * 9 + tap (04c's layout): per (chunk, tap) the B operand of a k8 step, core matrices 8 Cout x 4 channels.
// 3xTF32: f = (((s * 2 + half) * 2 + part) * 32 + co) * 4 + e  <-  the part (0: big, 1: small; both rounded,
// split_rounded) of w[32 (block % 2) + co][8 chunk + 4 half + e][tap].
__device__ __forceinline__ void stage_weights(float* sw, const float* __restrict__ w) {
    if constexpr (BLOCKS_PER_TILE == 2) {
        const int c0 = NB * (blockIdx.x & 1);
        for (int f = threadIdx.x; f < WFLOATS; f += THREADS) {
            const int e = f & 3, co = (f >> 2) & (NB - 1), part = (f >> 7) & 1, half = (f >> 8) & 1, s = f >> 9;
            const int chunk = s / TAPS, tap = s - chunk * TAPS;
            float big, small;
            split_rounded(__ldg(w + ((c0 + co) * CIN + CHUNK * chunk + 4 * half + e) * TAPS + tap), big, small);
            sw[f] = part ? small : big;
        }
    } else {
        for (int f = threadIdx.x; f < WFLOATS; f += THREADS) {
            const int e = f & 3, co = (f >> 2) & 63, half = (f >> 8) & 1, s = f >> 9;
            const int chunk = s / TAPS, tap = s - chunk * TAPS;
            sw[f] = tf32_round(__ldg(w + (co * CIN + CHUNK * chunk + 4 * half + e) * TAPS + tap));
        }
    }
}

// The copy for shapes TMA cannot take: the box's floats with 4-byte cp.async by one warp, zero-filled outside the image.
__device__ __forceinline__ void load_stage(float* dst, const float* __restrict__ x, const Geom& g, TileCoord tc, int c0,
                                           int lane) {
#pragma unroll 1
    for (int e = lane; e < STAGE_FLOATS; e += 32) {
        const int ch = e / CHP, rem = e - ch * CHP, row = rem / PITCH, col = rem - row * PITCH;
        const int gy = tc.oh + row, gx = tc.ox0 + col;
        const bool ok = gy < g.H && gx < g.W;
        const float* src = ok ? x + (((long long)tc.n * CIN + c0 + ch) * g.H + gy) * g.W + gx : x;
        cp_async4(dst + e, src, ok ? 4 : 0);
    }
}

// Register sets for the fragments: a row's wgmmas may still read set I % SETS while SETS - 1 later rows load theirs.
constexpr int SETS = 2;
// A warp's M rows g and g + 8 are its pixels 2 g and 2 g + 1 (RsChunk's PAIRS): a row's fragments take 4 8-byte shared
// loads and 8 cvt instead of 12 and 12, and the epilogue 16 8-byte stores a row (where Wo is even and y aligned)
// instead of 32 4-byte ones. The same products in the same order as pixels g, g + 8.
constexpr int GSTEP = 2;                                   // pixels between a thread's M row g and the next lane group's
using Chunk = RsChunk<ROWS, PITCH, CHP, SETS, WSTEP, true>;   // fragment loads and wgmmas of one chunk (wgmma.cuh)

// 3xTF32: three register sets for the tap groups (wait_group 2): two groups stay queued behind the one being split.
constexpr int SETS3 = 3;
using Chunk3x = RsChunk3x<ROWS, PITCH, CHP, WSTEP, SETS3>;
// One box (tile, chunk) into a ring slot, by warp 0 of a consumer: lane 0's TMA, or the warp's 4-byte cp.async.
__device__ __forceinline__ void fill_slot(float* dst, uint64_t* full, const CUtensorMap& xmap, const float* __restrict__ x,
                                          const Geom& g, int tile, int chunk, int lane) {
    const TileCoord tc = tile_coord(g, tile);
    if (g.tma) {
        if (lane == 0) {
            mbar_arrive_expect_tx(full, STAGE_FLOATS * 4);
            tma_load_4d(dst, &xmap, tc.ox0, tc.oh, CHUNK * chunk, tc.n, full);
        }
    } else {
        load_stage(dst, x, g, tc, CHUNK * chunk, lane);
        cp_async_mbar_arrive(full);
    }
}
static_assert(Chunk3x::GROUPS % SETS3 == 0, "every chunk starts on register set 0");
// two chunks per trip of the chunk loop
static_assert(NCHUNK % 2 == 0 && STAGES <= NCHUNK, "chunks in pairs; a refill crosses one tile at most");
// A consumer warpgroup of the 3xTF32 build. Without a producer warpgroup the block has 256 threads and no setmaxnreg, so
// ptxas may give each consumer thread up to 255 registers: with a producer warpgroup (consumers raised to 232) it
// serialized every wgmma (ptxas C7512, "insufficient register resources"). Warp 0 copies this consumer's boxes: STAGES
// before the first tile, then box u + STAGES into box u's slot once every thread has read it (EMPTY).
__device__ __forceinline__ void consumer_3x(const CUtensorMap& xmap, const float* __restrict__ x,
                                            const float* __restrict__ bias, const float* __restrict__ mult,
                                            float* __restrict__ y, const Geom& g, const float* sw, float* rings,
                                            uint64_t* bars, int k) {
    const int stride = tile_stride();
    const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int gid = lane >> 2, tq = lane & 3;
    float* myring = rings + k * STAGES * STAGE_FLOATS;
    const float* ring = myring + tq * CHP + 16 * warp + GSTEP * gid;
    uint64_t* full = bars + k * STAGES;
    uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
    if (warp == 0) {
#pragma unroll 1
        for (int q = 0; q < STAGES; ++q) {
            const int t = first_tile(k) + (q / NCHUNK) * stride;
            if (t < g.tiles) fill_slot(myring + q * STAGE_FLOATS, full + q, xmap, x, g, t, q % NCHUNK, lane);
        }
    }
    const uint64_t d0 = wgmma_desc(smem_addr(sw), B_KHALF, CORE_MATRIX_BYTES);   // lbo: k-half 0 -> 1; sbo: 8 Cout
    const uint32_t whi = (uint32_t)(d0 >> 32);
    const int c0 = NB * (blockIdx.x & 1);
    const long long plane = (long long)g.Ho * g.Wo;
    const bool pair_stores = (g.Wo & 1) == 0 && (reinterpret_cast<uintptr_t>(y) & 7) == 0;
    int slot = 0;
    unsigned phase = 0;
    float acc[ROWS][AW], cor[ROWS][16];        // acc[o]: columns 0-15 a_big w_big, 16-31 a_big w_small
    uint32_t big[SETS3][4], small[SETS3][4];   // the tap groups' register sets
    float xrow[2][4];                          // the current input row's floats
    // after chunk `chunk` of `tile` has been read from `slot`: the box STAGES later into it
    auto refill = [&](int tile, int chunk) {
        if (warp != 0) return;
        int nt = tile, nc = chunk + STAGES;
        if (nc >= NCHUNK) { nc -= NCHUNK; nt += stride; }
        if (nt >= g.tiles) return;
        mbar_wait(empty + slot, phase);
        fill_slot(myring + slot * STAGE_FLOATS, full + slot, xmap, x, g, nt, nc, lane);
    };
#pragma unroll 1
    for (int tile = first_tile(k); tile < g.tiles; tile += stride) {
#pragma unroll
        for (int o = 0; o < ROWS; ++o)
#pragma unroll
            for (int i = 0; i < 16; ++i) {
                cor[o][i] = 0.0f;
                acc[o][i] = 0.0f;
                acc[o][16 + i] = 0.0f;
            }
        const uint32_t wlo0 = opaque((uint32_t)d0);
#pragma unroll 1
        for (int chunk = 0; chunk < NCHUNK; chunk += 2) {
#pragma unroll
            for (int u = 0; u < 2; ++u) {
                mbar_wait(full + slot, phase);
                const uint32_t wlo = __shfl_sync(~0u, wlo0 + (chunk + u) * (TAPS * WSTEP >> 4), 0);
                Chunk3x::group<0, 0>(acc, cor, big, small, xrow, ring + slot * STAGE_FLOATS, wlo, whi, empty + slot);
                refill(tile, chunk + u);
                if (++slot == STAGES) { slot = 0; phase ^= 1u; }
            }
        }
        wgmma_wait<0>();
#pragma unroll
        for (int o = 0; o < ROWS; ++o) {
            fence_operand(acc[o]);
            fence_operand(cor[o]);
        }
        float b_r[8], m_r[8];                // this thread's 8 channels c0 + 8 j + 2 tq + e, read only now (L1)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                b_r[2 * j + e] = __ldg(bias + c0 + 8 * j + 2 * tq + e);
                m_r[2 * j + e] = __ldg(mult + c0 + 8 * j + 2 * tq + e);
            }
        const TileCoord tc = tile_coord(g, tile);
        const int px = tc.ox0 + 16 * warp + GSTEP * gid;
        float* yt = y + ((long long)tc.n * COUT + c0 + 2 * tq) * plane + (long long)tc.oh * g.Wo + px;
        auto sum = [&](int o, int i) { return acc[o][i] + (acc[o][16 + i] + cor[o][i]); };
#pragma unroll
        for (int o = 0; o < ROWS; ++o) {
            if (tc.oh + o >= g.Ho || px >= g.Wo) break;
            // a row's 16 values first, then their stores (store_row_pairs says why)
            float v[16];
#pragma unroll
            for (int jj = 0; jj < 4; ++jj)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const float b = b_r[2 * jj + e], m = m_r[2 * jj + e];
                    v[4 * jj + 2 * e] = epilogue_conv2d_fast(sum(o, 4 * jj + e) + b, m);
                    v[4 * jj + 2 * e + 1] = epilogue_conv2d_fast(sum(o, 4 * jj + 2 + e) + b, m);
                }
            store_row_pairs<4>(v, yt + o * g.Wo, plane, pair_stores, px + 1 < g.Wo);
        }
    }
    if (warp == 0) cp_async_wait<0>();          // the fallback's copies have landed before the warp exits
}

// The TF32 build's producer warpgroup: warp k fills consumer k's ring, one TMA per chunk. The ring and its mbarriers
// are found from the shared-memory symbol here, as in the kernel: from pointers passed in, their offsets fold otherwise
// and the machine code moves.
__device__ __forceinline__ void producer(const CUtensorMap& xmap, const float* __restrict__ x, const Geom& g) {
    extern __shared__ __align__(128) float smem[];
    float* rings = smem + WFLOATS;
    uint64_t* bars = reinterpret_cast<uint64_t*>(rings + RING_FLOATS);
    setmaxnreg_dec<PRODUCER_REGS>();
    const int stride = tile_stride();           // after setmaxnreg: read before it, it was kept on the stack
    const int k = threadIdx.x >> 5, lane = threadIdx.x & 31;
    // one thread per ring issues its TMAs (`|`: with `||` this function's exit compiles to two branches, not one)
    if ((k >= CONSUMERS) | (g.tma && lane != 0)) return;
    float* ring = rings + k * STAGES * STAGE_FLOATS;
    uint64_t* full = bars + k * STAGES;
    uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
    int slot = 0;
    unsigned phase = 0;
#pragma unroll 1
    for (int tile = first_tile(k); tile < g.tiles; tile += stride) {
        const TileCoord tc = tile_coord(g, tile);
#pragma unroll 1
        for (int chunk = 0; chunk < NCHUNK; ++chunk) {
            mbar_wait(empty + slot, phase ^ 1u);      // a fresh barrier's previous phase counts as complete
            float* dst = ring + slot * STAGE_FLOATS;
            if (g.tma) {
                if (lane == 0) {
                    mbar_arrive_expect_tx(full + slot, STAGE_FLOATS * 4);
                    tma_load_4d(dst, &xmap, tc.ox0, tc.oh, CHUNK * chunk, tc.n, full + slot);
                }
            } else {
                load_stage(dst, x, g, tc, CHUNK * chunk, lane);
                cp_async_mbar_arrive(full + slot);
            }
            if (++slot == STAGES) { slot = 0; phase ^= 1u; }
        }
    }
    cp_async_wait<0>();                          // the fallback's copies have landed before the thread exits
}

__global__ void __launch_bounds__(THREADS, 1)
conv2d_rs_kernel(const __grid_constant__ CUtensorMap xmap, const float* __restrict__ x, const float* __restrict__ w,
                 const float* __restrict__ bias, const float* __restrict__ mult, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* sw = smem;
    float* rings = sw + WFLOATS;
    uint64_t* bars = reinterpret_cast<uint64_t*>(rings + RING_FLOATS);
    if (threadIdx.x == 0) {
        for (int i = 0; i < CONSUMERS * STAGES; ++i) {
            mbar_init(bars + i, g.tma ? 1 : 32);                       // FULL: the TMA's expect_tx, or a warp's cp.async
            mbar_init(bars + CONSUMERS * STAGES + i, 128);             // EMPTY: every thread of the consumer
        }
        mbar_init_fence();
    }
    stage_weights(sw, w);
    fence_proxy_async();                         // the weights, written by ordinary stores, are read by wgmma
    __syncthreads();
    const int wg = threadIdx.x >> 7;
    if constexpr (SPLIT) {
        consumer_3x(xmap, x, bias, mult, y, g, sw, rings, bars, wg);
    } else if (wg == 0) {
        producer(xmap, x, g);
    } else {
        // ---- consumer: fragments from the ring, MMAs, epilogue from the accumulators ----
        setmaxnreg_inc<CONSUMER_REGS>();
        const int stride = tile_stride();           // after setmaxnreg, as the producer's
        const int k = wg - 1, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
        const int gid = lane >> 2, tq = lane & 3;
        const float* ring = rings + k * STAGES * STAGE_FLOATS + tq * CHP + 16 * warp + GSTEP * gid;
        uint64_t* full = bars + k * STAGES;
        uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
        const uint64_t d0 = wgmma_desc(smem_addr(sw), B_KHALF, CORE_MATRIX_BYTES);   // lbo: k-half 0 -> 1; sbo: 8 Cout
        const uint32_t whi = (uint32_t)(d0 >> 32);
        // this thread's 16 channels 8 j + 2 tq + e: bias and multiplier
        float b_r[16], m_r[16];
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                b_r[2 * j + e] = __ldg(bias + 8 * j + 2 * tq + e);
                m_r[2 * j + e] = __ldg(mult + 8 * j + 2 * tq + e);
            }
        const long long plane = (long long)g.Ho * g.Wo;
        int slot = 0;
        unsigned phase = 0;
        float acc[ROWS][32];
        uint32_t frag[SETS][3][4];
#pragma unroll 1
        for (int tile = first_tile(k); tile < g.tiles; tile += stride) {
#pragma unroll
            for (int o = 0; o < ROWS; ++o)
#pragma unroll
                for (int i = 0; i < 32; ++i) acc[o][i] = 0.0f;
            const uint32_t wlo0 = opaque((uint32_t)d0);
#pragma unroll 1
            for (int chunk = 0; chunk < NCHUNK; ++chunk) {
                mbar_wait(full + slot, phase);
                // the chunk's weights, broadcast from lane 0 so that the compiler knows the descriptors are warp-uniform
                // and keeps them in uniform registers (without it, some builds moved each one with two R2UR per wgmma)
                const uint32_t wlo = __shfl_sync(~0u, wlo0 + chunk * (TAPS * WSTEP >> 4), 0);
                Chunk::mma_rows<0>(acc, frag, ring + slot * STAGE_FLOATS, wlo, whi,
                                   [&] { mbar_arrive(empty + slot); });
                if (++slot == STAGES) { slot = 0; phase ^= 1u; }
            }
            wgmma_wait<0>();
#pragma unroll
            for (int o = 0; o < ROWS; ++o) fence_operand(acc[o]);
            const TileCoord tc = tile_coord(g, tile);
            const int px = tc.ox0 + 16 * warp + GSTEP * gid;
            float* yt = y + ((long long)tc.n * COUT + 2 * tq) * plane + (long long)tc.oh * g.Wo + px;
            // pixels px, px + 1 of each channel row: one 8-byte store where Wo is even and y 8-byte aligned (then px + 1
            // < Wo wherever px is, and every row and channel plane starts at an even float), else two 4-byte ones (an
            // output 4 bytes into its buffer would make the 8-byte store misaligned)
            const bool pair_stores = (g.Wo & 1) == 0 && (reinterpret_cast<uintptr_t>(y) & 7) == 0;
#pragma unroll
            for (int o = 0; o < ROWS; ++o) {
                if (tc.oh + o >= g.Ho || px >= g.Wo) break;
                // half a row's values (16) first, then their stores (store_row_pairs says why;
                // a whole row's 32 spilled 20 bytes)
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    float v[16];
#pragma unroll
                    for (int j = 0; j < 4; ++j)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const int jj = 4 * half + j;
                            const float b = b_r[2 * jj + e], m = m_r[2 * jj + e];
                            v[4 * j + 2 * e] = epilogue_conv2d_fast(acc[o][4 * jj + e] + b, m);
                            v[4 * j + 2 * e + 1] = epilogue_conv2d_fast(acc[o][4 * jj + 2 + e] + b, m);
                        }
                    store_row_pairs<4>(v, yt + 32 * half * plane + o * g.Wo, plane, pair_stores, px + 1 < g.Wo);
                }
            }
        }
    }
#endif
}

}  // namespace cf04d

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace cf04d;
    constexpr const char* NAME = "04d_register_a_wgmma (conv2d)";
    static_assert(CIN == 64 && COUT == 64 && KS == 3, "the shapes cf_conv2d_shape checks");
    if (const char* err = cf_conv2d_shape(a, NAME)) return err;
    int dev = 0, sms = 0, grid = 0;
    if (const char* err = cf_sm90a_device(NAME, dev, sms)) return err;
    Geom g;
    g.N = a.N; g.H = a.H; g.W = a.W; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, TW);
    g.tiles_y = cf_ceil_div(a.Ho, ROWS);
    const long long tiles = (long long)a.N * g.tiles_y * g.tiles_x;
    if (tiles > 0x7fffffffLL - 2LL * sms * CONSUMERS)
        return "04d_register_a_wgmma (conv2d): too many tiles for a 32-bit tile index";
    g.tiles = (int)tiles;
    CUtensorMap xmap{};
    g.tma = cf_encode_tma_4d(&xmap, a.x, {(uint64_t)a.W, (uint64_t)a.H, (uint64_t)CIN, (uint64_t)a.N},
                             {(uint32_t)PITCH, (uint32_t)XH, (uint32_t)CHUNK, 1u}) ? 1 : 0;
    // 3xTF32: a block per Cout half and tile set, an even grid, blocks 2 b and 2 b + 1 on the same tiles
    if (const char* err = cf_persistent_grid(conv2d_rs_kernel, THREADS, SMEM_BYTES,
                                             BLOCKS_PER_TILE * ((tiles + CONSUMERS - 1) / CONSUMERS), sms, NAME, grid))
        return err;
    if constexpr (BLOCKS_PER_TILE == 2) {
        grid &= ~1;
        if (grid < 2) return "04d_register_a_wgmma (conv2d): 3xTF32 needs two blocks at once, one per Cout half";
    }
    conv2d_rs_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(xmap, a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}
