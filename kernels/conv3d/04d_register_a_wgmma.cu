// 04d_register_a_wgmma — conv3d step 04d: conv2d 04d's turned-around implicit GEMM for the 3-D conv: output pixels as
// M, the input operand loaded into registers from the TMA's raw rows, nothing staged (sm_90a only: H100/H200).
//
// What changed from 04b. 04b multiplies weights (M = 64 Cout) by input pixels (N), both from shared memory; TF32 wgmma
//   reads shared operands K-major only, so each warpgroup transposes its tile's input into a pixel-major layout before
//   its 27 wgmmas, and that staging is about a sixth of 04b's time. wgmma's A may instead come from registers in the
//   mma.sync fragment layout (thread (g, t) of a warp holds rows g, g + 8 and columns t, t + 4 of its 16 x 8 slice),
//   and a fragment can be loaded from any layout. Here M = 64 output pixels of one output row (warp w: pixels 16 w ..
//   16 w + 15), N = 64 Cout, K = the 8 input channels of one tap (Cin = 8: one k8 step per tap, 27 per output row). A
//   comes from the raw NCDHW rows as the TMA writes them (four 4-byte shared loads and four cvt.rn per fragment; a
//   channel's pixels are CHP floats apart, CHP = 24 mod 32, so no bank conflicts); B is the weights, resident in shared
//   memory K-major ([tap][k-half][co][4 channels], 04b's layout).
// Reuse. A consumer warpgroup owns ROWS = 4 output rows of one output depth x 64 columns (4 m64n64 accumulators, 32
//   registers each). A tile's input is three chunks, one per depth tap kd: 6 input rows of depth od + kd, 8 channels,
//   68 columns (one TMA box). Input row i of a chunk, shifted by tap column s, is one fragment; it serves output rows i
//   - r for the taps (kd, r, s) with 0 <= i - r < ROWS: 18 fragments per chunk feed 36 wgmmas, 108 per tile.
// Pipeline (conv2d 04d's): per input row its three fragments go into one of two register sets, wgmma.fence, its wgmmas,
//   a commit, wgmma.wait_group 1 (the previous row's wgmmas, which read the other set, are done); the stage is released
//   after the chunk's last row's wgmmas. The two consumers work on their own tiles at once, each with a ring filled by
//   one producer thread's TMA (x as the 4-D (W, H, D, N * 8); tiles start at multiples of 64 columns, so boxes start
//   16-byte aligned; out-of-image pixels zero-filled). Shapes TMA cannot take (W % 4 != 0) copy with 4-byte cp.async
//   onto the same mbarriers. A tile is 3 chunks where conv2d's is 8, so a ring of 6 stages holds two tiles: the
//   producer runs a tile ahead.
// Launch: a persistent grid, one block per SM of 384 threads: a producer warpgroup at 40 registers (two threads issue
//   copies), two consumers at 232. Shared memory: weights 55,296 B | 2 rings x 6 stages x 13,056 B | 24 mbarriers =
//   212,160 B.
// Epilogue: 04b's folded form (epilogue_conv3d_folded) on the accumulators; thread (g, t) holds pixels g, g + 8 of its
//   warp's 16 and channels 8 j + 2 t, + 1: 4-byte streaming stores, 8 lanes writing 32 contiguous bytes of a row.
// Bytes and bound: x 0.27 GB and y 1.76 GB at the model's one pass each; ncu reads 0.61 GB (the depth taps' boxes
//   overlap) and writes 1.87 GB. The output bounds it: a tile stores the 64 KB that conv2d 04d's does behind 108 wgmmas
//   instead of 288, and 8-pixel runs of a 248-byte row straddle L2 sectors; the stores and the LSU's full queue hold
//   about half the warp samples. With K = 216 per output there is too little MMA time to hide the epilogue behind: this
//   mapping is slower than 04b for conv3d, and stays as that measured negative.
// Measured (H200, 2026-12-05 record): 1.819 ms, 5.53x eager, 3.20x torch.compile (04b TF32: 0.778 ms).

namespace cf04d3 {

constexpr int CIN = 8, COUT = 64, KS = 3, TAPS = KS * KS;   // TAPS: the (kh, kw) taps of one depth tap kd (a chunk)
constexpr int NCHUNK = KS;                                  // chunks per tile: the depth taps
constexpr int ROWS = 4;                    // output rows per consumer tile: one m64n64 accumulator set each
constexpr int TW = 64;                     // output columns per tile: the wgmma's M
constexpr int XH = ROWS + KS - 1;          // input rows per chunk
constexpr int PITCH = 68;                  // the TMA box's width: TW + 2 columns, rounded up to 16 bytes
constexpr int CHP = XH * PITCH;            // floats per channel of a stage
static_assert(CHP % 32 == 8 || CHP % 32 == 24, "fragment loads: channels t and t + 1 in disjoint banks");
constexpr int STAGE_FLOATS = CIN * CHP;    // [channel][row][PITCH]: the TMA box as it lands
constexpr int STAGES = 6, CONSUMERS = 2;   // a ring holds two tiles of 3 chunks
constexpr int THREADS = 128 * (1 + CONSUMERS);
constexpr int WFLOATS = KS * TAPS * 2 * COUT * 4;          // 13,824 floats = 55,296 B
constexpr int WSTEP = 2 * COUT * 4 * 4;                    // bytes per tap: 2 KB
constexpr uint32_t B_KHALF = COUT * 16;                    // bytes between a tap's two k-halves: [co][4 channels]
constexpr int NBARS = 2 * CONSUMERS * STAGES;              // FULL and EMPTY per stage
constexpr int SMEM_BYTES = (WFLOATS + CONSUMERS * STAGES * STAGE_FLOATS) * 4 + NBARS * 8;
static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 block can have (227 KB)");
static_assert((WFLOATS * 4) % 128 == 0 && (STAGE_FLOATS * 4) % 128 == 0, "TMA destinations 128-byte aligned");
constexpr int KERNEL_REGS = (65536 / THREADS) & ~7;        // what __launch_bounds__(THREADS, 1) allows
constexpr int PRODUCER_REGS = 40;                         // two threads issue copies; the rest go to the consumers
constexpr int CONSUMER_REGS = ((THREADS * KERNEL_REGS - 128 * PRODUCER_REGS) / (128 * CONSUMERS)) & ~7;
static_assert(CONSUMER_REGS <= 256 && 128 * PRODUCER_REGS + 128 * CONSUMERS * CONSUMER_REGS <= THREADS * KERNEL_REGS,
              "register pool");

struct Geom {
    int N, D, H, W, Do, Ho, Wo;
    int tiles_x, tiles_y, tiles;
    int tma;     // the kernel parameter xmap describes x (W % 4 == 0, x 16-byte aligned)
};
struct TileCoord { int n, od, oh, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x;
    int t = tile / g.tiles_x;
    const int ty = t % g.tiles_y;
    t /= g.tiles_y;
    return { t / g.Do, t % g.Do, ty * ROWS, tx * TW };
}
// Consumer k's tiles: blockIdx.x * CONSUMERS + k, then CONSUMERS gridDim.x apart.
__device__ __forceinline__ int first_tile(int k) { return blockIdx.x * CONSUMERS + k; }

// Weights, once per block, TF32-rounded: f = ((s * 2 + half) * 64 + co) * 4 + e  <-  w[co][4 half + e][s], s = the tap
// kd * 9 + kh * 3 + kw (04b's layout): per tap the B operand of a k8 step, core matrices 8 Cout x 4 channels.
__device__ __forceinline__ void stage_weights(float* sw, const float* __restrict__ w) {
    for (int f = threadIdx.x; f < WFLOATS; f += THREADS) {
        const int e = f & 3, co = (f >> 2) & 63, half = (f >> 8) & 1, s = f >> 9;
        sw[f] = tf32_round(__ldg(w + (co * CIN + 4 * half + e) * (KS * TAPS) + s));
    }
}

// The copy for shapes TMA cannot take: the box's floats with 4-byte cp.async by one warp, zero-filled outside the image.
__device__ __forceinline__ void load_stage(float* dst, const float* __restrict__ x, const Geom& g, TileCoord tc, int kd,
                                           int lane) {
    const int gz = tc.od + kd;                   // < D: od <= D - 3
#pragma unroll 1
    for (int e = lane; e < STAGE_FLOATS; e += 32) {
        const int ch = e / CHP, rem = e - ch * CHP, row = rem / PITCH, col = rem - row * PITCH;
        const int gy = tc.oh + row, gx = tc.ox0 + col;
        const bool ok = gy < g.H && gx < g.W;
        const float* src = ok ? x + ((((long long)tc.n * CIN + ch) * g.D + gz) * g.H + gy) * g.W + gx : x;
        cp_async4(dst + e, src, ok ? 4 : 0);
    }
}

// Register sets for the fragments: a row's wgmmas may still read set I % SETS while SETS - 1 later rows load theirs.
constexpr int SETS = 2;
using Chunk = RsChunk<ROWS, PITCH, CHP, SETS, WSTEP>;   // fragment loads and wgmmas of one chunk (wgmma.cuh)

__global__ void __launch_bounds__(THREADS, 1)
conv3d_rs_kernel(const __grid_constant__ CUtensorMap xmap, const float* __restrict__ x, const float* __restrict__ w,
                 const float* __restrict__ bias, const float* __restrict__ sum, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* sw = smem;
    float* rings = sw + WFLOATS;
    uint64_t* bars = reinterpret_cast<uint64_t*>(rings + CONSUMERS * STAGES * STAGE_FLOATS);
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
    if (wg == 0) {
        // ---- producer: warp k fills consumer k's ring, one TMA per chunk ----
        setmaxnreg_dec<PRODUCER_REGS>();
        const int stride = CONSUMERS * gridDim.x;
        const int k = threadIdx.x >> 5, lane = threadIdx.x & 31;
        if (k >= CONSUMERS || (g.tma && lane != 0)) return;     // one thread per ring issues its TMAs
        float* ring = rings + k * STAGES * STAGE_FLOATS;
        uint64_t* full = bars + k * STAGES;
        uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
        int slot = 0;
        unsigned phase = 0;
#pragma unroll 1
        for (int tile = first_tile(k); tile < g.tiles; tile += stride) {
            const TileCoord tc = tile_coord(g, tile);
#pragma unroll 1
            for (int kd = 0; kd < NCHUNK; ++kd) {
                mbar_wait(empty + slot, phase ^ 1u);      // a fresh barrier's previous phase counts as complete
                float* dst = ring + slot * STAGE_FLOATS;
                if (g.tma) {
                    mbar_arrive_expect_tx(full + slot, STAGE_FLOATS * 4);
                    tma_load_4d(dst, &xmap, tc.ox0, tc.oh, tc.od + kd, tc.n * CIN, full + slot);
                } else {
                    load_stage(dst, x, g, tc, kd, lane);
                    cp_async_mbar_arrive(full + slot);
                }
                if (++slot == STAGES) { slot = 0; phase ^= 1u; }
            }
        }
        cp_async_wait<0>();                          // the fallback's copies have landed before the thread exits
    } else {
        // ---- consumer: fragments from the ring, MMAs, epilogue from the accumulators ----
        setmaxnreg_inc<CONSUMER_REGS>();
        const int stride = CONSUMERS * gridDim.x;
        const int k = wg - 1, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
        const int gid = lane >> 2, tq = lane & 3;
        const float* ring = rings + k * STAGES * STAGE_FLOATS + tq * CHP + 16 * warp + gid;
        uint64_t* full = bars + k * STAGES;
        uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
        const uint64_t d0 = wgmma_desc(smem_addr(sw), B_KHALF, CORE_MATRIX_BYTES);   // lbo: k-half 0 -> 1; sbo: 8 Cout
        const uint32_t whi = (uint32_t)(d0 >> 32);
        // this thread's 16 channels 8 j + 2 tq + e: b + s and 0.2 b + s (epilogue_conv3d_folded)
        float bs_r[16], b2s_r[16];
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const float b = __ldg(bias + 8 * j + 2 * tq + e), s = __ldg(sum + 8 * j + 2 * tq + e);
                bs_r[2 * j + e] = b + s;
                b2s_r[2 * j + e] = fmaf(0.2f, b, s);
            }
        const int plane = g.Do * g.Ho * g.Wo;      // < 2^31 / 64: launch() checks
        int slot = 0;
        unsigned phase = 0;
        float acc[ROWS][32];
        uint32_t frag[SETS][3][4];
        const uint32_t wlo0 = opaque((uint32_t)d0);
#pragma unroll 1
        for (int tile = first_tile(k); tile < g.tiles; tile += stride) {
#pragma unroll
            for (int o = 0; o < ROWS; ++o)
#pragma unroll
                for (int i = 0; i < 32; ++i) acc[o][i] = 0.0f;
#pragma unroll 1
            for (int kd = 0; kd < NCHUNK; ++kd) {
                mbar_wait(full + slot, phase);
                // the depth tap's weights, broadcast from lane 0 so that the compiler knows the descriptors are
                // warp-uniform and keeps them in uniform registers (conv2d 04d: without it, two R2UR per wgmma)
                const uint32_t wlo = __shfl_sync(~0u, wlo0 + kd * (TAPS * WSTEP >> 4), 0);
                Chunk::mma_rows<0>(acc, frag, ring + slot * STAGE_FLOATS, wlo, whi,
                                   [&] { mbar_arrive(empty + slot); });
                if (++slot == STAGES) { slot = 0; phase ^= 1u; }
            }
            wgmma_wait<0>();
#pragma unroll
            for (int o = 0; o < ROWS; ++o) fence_operand(acc[o]);
            const TileCoord tc = tile_coord(g, tile);
            const int px = tc.ox0 + 16 * warp + gid;
            float* yt = y + ((long long)tc.n * COUT + 2 * tq) * plane + ((long long)tc.od * g.Ho + tc.oh) * g.Wo + px;
#pragma unroll
            for (int o = 0; o < ROWS; ++o) {
                if (tc.oh + o >= g.Ho) break;
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    if (px + 8 * h >= g.Wo) continue;
#pragma unroll
                    for (int jj = 0; jj < 8; ++jj)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const float v = epilogue_conv3d_folded<false, false>(acc[o][4 * jj + 2 * h + e], 1.0f,
                                                                   bs_r[2 * jj + e], b2s_r[2 * jj + e]);
                            __stcs(yt + (8 * jj + e) * plane + o * g.Wo + 8 * h, v);
                        }
                }
            }
        }
    }
#endif
}

}  // namespace cf04d3

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace cf04d3;
    constexpr const char* NAME = "04d_register_a_wgmma (conv3d)";
    static_assert(CIN == 8 && COUT == 64 && KS == 3, "the shapes cf_conv3d_shape checks");
    if (const char* err = cf_conv3d_shape(a, NAME)) return err;
    if ((long long)COUT * a.Do * a.Ho * a.Wo >= 0x80000000LL)
        return cf_message(NAME, ": an image's output must have fewer than 2^31 elements (32-bit offsets)");
    int dev = 0, sms = 0, grid = 0;
    if (const char* err = cf_sm90a_device(NAME, dev, sms)) return err;
    Geom g;
    g.N = a.N; g.D = a.D; g.H = a.H; g.W = a.W; g.Do = a.Do; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, TW);
    g.tiles_y = cf_ceil_div(a.Ho, ROWS);
    const long long tiles = (long long)a.N * a.Do * g.tiles_y * g.tiles_x;
    if (tiles > 0x7fffffffLL - 2LL * sms * CONSUMERS)
        return cf_message(NAME, ": too many tiles for a 32-bit tile index");
    g.tiles = (int)tiles;
    CUtensorMap xmap{};
    g.tma = (long long)a.N * CIN < 0x7fffffffLL &&
            cf_encode_tma_4d(&xmap, a.x, {(uint64_t)a.W, (uint64_t)a.H, (uint64_t)a.D, (uint64_t)a.N * CIN},
                             {(uint32_t)PITCH, (uint32_t)XH, 1u, (uint32_t)CIN}) ? 1 : 0;
    if (const char* err = cf_persistent_grid(conv3d_rs_kernel, THREADS, SMEM_BYTES,
                                             (tiles + CONSUMERS - 1) / CONSUMERS, sms, NAME, grid))
        return err;
    conv3d_rs_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(xmap, a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}
