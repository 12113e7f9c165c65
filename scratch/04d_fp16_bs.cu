// SCRATCH (issue 50, record 3): conv2d 04d with FP16 operands and the output through shared memory and the bulk-copy
// engine. Built in place of 04d_rs_tf32 by scripts/check_variant.py; not shipped.
//
// From 04d TF32: K = 16 channels of one tap per wgmma (m64n64k16 f16, A from registers), 16-channel chunks (4 a tile
//   where TF32 takes 8), the same 8-byte fragment loads per channel and half the cvt; weights FP16, scaled by 2^e
//   (f16_weight_exponent) and unscaled in the epilogue; a warpgroup with a non-finite tile recomputes it in FP32 (04c's
//   scheme). Two 26 KB stages a consumer (three do not fit beside the output buffers).
// The output: the dropped 04d FP16 build (lab/04d-fp16) stalled on its epilogue's STG.E.EF bursts (long scoreboard
//   26.0 k samples vs TF32's 7.6 k). A warp owns 16 pixels of every channel, so a channel row of the tile (256 B) is the
//   warpgroup's: per half row (32 channels x 64 pixels) every thread writes its values into one of two 8.5 KB buffers,
//   each channel row at its 16-byte phase in y, a named barrier, then lane 0 of warp w hands rows 8 w .. 8 w + 7 to
//   the bulk-copy engine (bulk_rows) and lanes 0-7 store the rows' 8-byte heads and tails.
// Shared memory: weights 73,728 B | 2 rings x 2 stages x 26,112 B | 2 consumers x 2 x 8,704 B | bias, mult 512 B | 16 B |
// 8 mbarriers: 213,584 B.

namespace cf04d {

constexpr int CIN = 64, COUT = 64, KS = 3, TAPS = KS * KS;
constexpr int CHUNK = 16, NCHUNK = CIN / CHUNK;
constexpr int STAGES = 2, CONSUMERS = 2;
constexpr int WHALVES = NCHUNK * TAPS * 2 * COUT * 8;      // 36,864 halves = 73,728 B
constexpr int WFLOATS = WHALVES / 2;
constexpr int WSTEP = 2 * COUT * 16;                       // bytes per (chunk, tap): [k-half][co][8 channels FP16]
constexpr int ROWS = 4, PITCH = 68, THREADS = 128 * (1 + CONSUMERS);
constexpr int B_KHALF = COUT * 16;
constexpr int TW = 64;
constexpr int XH = ROWS + KS - 1;
constexpr int CHP = XH * PITCH;
constexpr int STAGE_FLOATS = CHUNK * CHP;
constexpr int RING_FLOATS = CONSUMERS * STAGES * STAGE_FLOATS;
constexpr int OPITCH = 68;                                 // 64 pixels + the 16-byte phase, 4 mod 32 banks
constexpr int OBUF = 32 * OPITCH;                          // half a row: 32 channels
constexpr int OUT_FLOATS = CONSUMERS * 2 * OBUF;
constexpr int NBARS = 2 * CONSUMERS * STAGES;
constexpr int SMEM_BYTES = (WFLOATS + RING_FLOATS + OUT_FLOATS + 2 * COUT + 4) * 4 + NBARS * 8;
static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 block can have (227 KB)");
static_assert((WFLOATS * 4) % 128 == 0 && (STAGE_FLOATS * 4) % 128 == 0, "TMA destinations 128-byte aligned");
constexpr int KERNEL_REGS = (65536 / THREADS) & ~7;
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = ((THREADS * KERNEL_REGS - 128 * PRODUCER_REGS) / (128 * CONSUMERS)) & ~7;

struct Geom {
    int N, H, W, Ho, Wo;
    int tiles_x, tiles_y, tiles;
    int tma;
    int ybulk;   // Wo even, y 8-byte aligned
};
struct TileCoord { int n, oh, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x, t = tile / g.tiles_x;
    return { t / g.tiles_y, (t % g.tiles_y) * ROWS, tx * TW };
}
__device__ __forceinline__ int first_tile(int k) { return blockIdx.x * CONSUMERS + k; }
__device__ __forceinline__ int tile_stride() { return CONSUMERS * gridDim.x; }

// h = ((s * 2 + kh) * 64 + co) * 8 + j  <-  w[co][16 chunk + 8 kh + j][tap] * 2^e, s = chunk * 9 + tap. Returns 2^-e.
__device__ __forceinline__ float stage_weights(float* sw, unsigned* smax, const float* __restrict__ w) {
    const int e = f16_weight_exponent(w, COUT * CIN * TAPS, smax);
    const float sc = ldexpf(1.0f, e);
    unsigned short* h = reinterpret_cast<unsigned short*>(sw);
    for (int u = threadIdx.x; u < WHALVES; u += THREADS) {
        const int j = u & 7, co = (u >> 3) & 63, kh = (u >> 9) & 1, s = u >> 10;
        const int chunk = s / TAPS, tap = s - chunk * TAPS;
        h[u] = f16_bits(__ldg(w + (co * CIN + CHUNK * chunk + 8 * kh + j) * TAPS + tap) * sc);
    }
    return ldexpf(1.0f, -e);
}

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

// D (64 pixels x 64 Cout) += A (64 x 16 FP16, registers) * B (16 x 64 FP16, shared, K-major)
__device__ __forceinline__ void wgmma_rs_m64n64k16_f16(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b) {
    asm volatile("{\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {" CF_WGMMA_REGS32 "}, "
                 "{%32, %33, %34, %35}, %36, 1, 1, 1, 0;\n}\n"
                 : CF_WGMMA_ACC32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

constexpr int SETS = 2;
// A thread (g, t): M rows g, g + 8 = pixels 2 g, 2 g + 1 (+ tap column s), K = channels 2 t, 2 t + 1 (a0, a1) and
// 2 t + 8, 2 t + 9 (a2, a3); `fb` = the box at channel 2 t, pixel 16 warp + 2 g. Per input row 8 8-byte loads and 8 cvt.
template <int I>
__device__ __forceinline__ void load_fragments(uint32_t (&a)[KS][4], const float* fb) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
        const float* p0 = fb + 8 * c * CHP + I * PITCH;
        const float2 l0 = *reinterpret_cast<const float2*>(p0);
        const float2 h0 = *reinterpret_cast<const float2*>(p0 + 2);
        const float2 l1 = *reinterpret_cast<const float2*>(p0 + CHP);
        const float2 h1 = *reinterpret_cast<const float2*>(p0 + CHP + 2);
        const uint32_t p[4] = {f16x2(l0.x, l1.x), f16x2(l0.y, l1.y), f16x2(h0.x, h1.x), f16x2(h0.y, h1.y)};
#pragma unroll
        for (int s = 0; s < KS; ++s) {
            a[s][2 * c] = p[s];
            a[s][2 * c + 1] = p[s + 1];
        }
    }
}
template <int I>
__device__ __forceinline__ void row_mmas(float (&acc)[ROWS][32], const uint32_t (&a)[KS][4], uint32_t wlo, uint32_t whi) {
#pragma unroll
    for (int r = 0; r < KS; ++r) {
        if (I - r < 0 || I - r >= ROWS) continue;
#pragma unroll
        for (int s = 0; s < KS; ++s)
            wgmma_rs_m64n64k16_f16(acc[I - r], a[s], desc_at(wlo, whi, (r * KS + s) * WSTEP));
    }
}
template <int I>
__device__ __forceinline__ void mma_rows(float (&acc)[ROWS][32], uint32_t (&frag)[SETS][KS][4], const float* fb,
                                         uint32_t wlo, uint32_t whi, uint64_t* empty) {
    load_fragments<I>(frag[I % SETS], fb);
    wgmma_fence();
    row_mmas<I>(acc, frag[I % SETS], wlo, whi);
    if (I == XH - 1) mbar_arrive(empty);
    wgmma_commit();
    wgmma_wait<SETS - 1>();
    if constexpr (I + 1 < XH) mma_rows<I + 1>(acc, frag, fb, wlo, whi, empty);
}
static_assert(XH % SETS == 0, "every chunk starts on register set 0");

// every thread of consumer warpgroup k: whether any of them passes true (a named barrier)
__device__ __forceinline__ bool wg_any(bool v, int id) {
    uint32_t r;
    asm volatile("{\n.reg .pred p, q;\nsetp.ne.u32 q, %1, 0;\nbar.red.or.pred p, %2, 128, q;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(r) : "r"((uint32_t)v), "r"(id) : "memory");
    return r != 0;
}
__device__ __forceinline__ void wg_sync(int id) { asm volatile("bar.sync %0, 128;\n" :: "r"(id) : "memory"); }

__device__ __forceinline__ float direct_conv(const float* __restrict__ x, const float* __restrict__ w, const Geom& g,
                                             int n, int co, int oh, int ox) {
    const long long cstride = (long long)g.H * g.W;
    const float* xp = x + ((long long)n * CIN * g.H + oh) * g.W + ox;
    const float* wp = w + co * CIN * TAPS;
    float s = 0.0f;
#pragma unroll 1
    for (int ci = 0; ci < CIN; ++ci)
#pragma unroll
        for (int t = 0; t < TAPS; ++t)
            s = fmaf(__ldg(xp + ci * cstride + (t / KS) * g.W + t % KS), __ldg(wp + ci * TAPS + t), s);
    return s;
}

__global__ void __launch_bounds__(THREADS, 1)
conv2d_rs_kernel(const __grid_constant__ CUtensorMap xmap, const float* __restrict__ x, const float* __restrict__ w,
                 const float* __restrict__ bias, const float* __restrict__ mult, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* sw = smem;
    float* rings = sw + WFLOATS;
    float* outs = rings + RING_FLOATS;
    float* sbm = outs + OUT_FLOATS;                      // bias | multiplier: LDS in the epilogue, not 32 live registers
    unsigned* smax = reinterpret_cast<unsigned*>(sbm + 2 * COUT);
    uint64_t* bars = reinterpret_cast<uint64_t*>(smax + 4);
    if (threadIdx.x == 0) {
        *smax = 0u;
        for (int i = 0; i < CONSUMERS * STAGES; ++i) {
            mbar_init(bars + i, g.tma ? 1 : 32);
            mbar_init(bars + CONSUMERS * STAGES + i, 128);
        }
        mbar_init_fence();
    }
    if (threadIdx.x < 2 * COUT) sbm[threadIdx.x] = threadIdx.x < COUT ? __ldg(bias + threadIdx.x) : __ldg(mult + threadIdx.x - COUT);
    __syncthreads();
    const float inv_scale = stage_weights(sw, smax, w);
    fence_proxy_async();
    __syncthreads();
    const int wg = threadIdx.x >> 7;
    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS>();
        const int stride = tile_stride();
        const int k = threadIdx.x >> 5, lane = threadIdx.x & 31;
        if (k >= CONSUMERS || (g.tma && lane != 0)) return;
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
                mbar_wait(empty + slot, phase ^ 1u);
                float* dst = ring + slot * STAGE_FLOATS;
                if (g.tma) {
                    mbar_arrive_expect_tx(full + slot, STAGE_FLOATS * 4);
                    tma_load_4d(dst, &xmap, tc.ox0, tc.oh, CHUNK * chunk, tc.n, full + slot);
                } else {
                    load_stage(dst, x, g, tc, CHUNK * chunk, lane);
                    cp_async_mbar_arrive(full + slot);
                }
                if (++slot == STAGES) { slot = 0; phase ^= 1u; }
            }
        }
        cp_async_wait<0>();
    } else {
        setmaxnreg_inc<CONSUMER_REGS>();
        const int stride = tile_stride();
        const int k = wg - 1, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
        const int gid = lane >> 2, tq = lane & 3;
        const int bar_id = 1 + k;
        const float* ring = rings + k * STAGES * STAGE_FLOATS + 2 * tq * CHP + 16 * warp + 2 * gid;
        float* obuf = outs + k * 2 * OBUF;
        uint64_t* full = bars + k * STAGES;
        uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
        const uint64_t d0 = wgmma_desc(smem_addr(sw), B_KHALF, 128);
        const uint32_t whi = (uint32_t)(d0 >> 32);
        const long long plane = (long long)g.Ho * g.Wo;
        int slot = 0, half_rows = 0;
        unsigned phase = 0;
        float acc[ROWS][32];
        uint32_t frag[SETS][KS][4];
#pragma unroll 1
        for (int tile = first_tile(k); tile < g.tiles; tile += stride) {
            const uint32_t wlo0 = opaque((uint32_t)d0);
#pragma unroll
            for (int o = 0; o < ROWS; ++o)
#pragma unroll
                for (int i = 0; i < 32; ++i) acc[o][i] = 0.0f;
#pragma unroll 1
            for (int chunk = 0; chunk < NCHUNK; ++chunk) {
                mbar_wait(full + slot, phase);
                const uint32_t wlo = __shfl_sync(~0u, wlo0 + chunk * (TAPS * WSTEP >> 4), 0);
                mma_rows<0>(acc, frag, ring + slot * STAGE_FLOATS, wlo, whi, empty + slot);
                if (++slot == STAGES) { slot = 0; phase ^= 1u; }
            }
            wgmma_wait<0>();
#pragma unroll
            for (int o = 0; o < ROWS; ++o) fence_operand(acc[o]);
            const TileCoord tc = tile_coord(g, tile);
            const int px = tc.ox0 + 16 * warp + 2 * gid;
            bool bad = false;
#pragma unroll
            for (int o = 0; o < ROWS; ++o) bad |= acc_nonfinite(acc[o]);
            if (wg_any(bad, bar_id)) {
                // an Inf or NaN input or weight, or |x| >= 65520: the warpgroup's tile in FP32
#pragma unroll 1
                for (int i = 0; i < ROWS * 32; ++i) {
                    const int o = i >> 5, r = i & 31, jj = r >> 2, q = (r >> 1) & 1, e = r & 1;
                    const int co = 8 * jj + 2 * tq + e, oh = tc.oh + o, ox = px + q;
                    if (oh < g.Ho && ox < g.Wo) {
                        const float v = direct_conv(x, w, g, tc.n, co, oh, ox) + __ldg(bias + co);
                        y[((long long)(tc.n * COUT + co) * g.Ho + oh) * g.Wo + ox] = epilogue_conv2d(v, __ldg(mult + co));
                    }
                }
                continue;
            }
            const int lim = min(TW, g.Wo - tc.ox0);
            if (g.ybulk) {
#pragma unroll
                for (int o = 0; o < ROWS; ++o) {
                    if (tc.oh + o >= g.Ho) break;                    // warpgroup-uniform
                    // channel 0's row of this output row, and the phase step between neighbouring channels (0 or 2)
                    const float* yr0 = y + ((long long)tc.n * COUT * g.Ho + tc.oh + o) * g.Wo + tc.ox0;
                    const int ph0 = (int)((reinterpret_cast<uintptr_t>(yr0) >> 2) & 3), pstep = (int)(plane & 3);
#pragma unroll
                    for (int half = 0; half < 2; ++half) {
                        float v[16];
#pragma unroll
                        for (int j = 0; j < 4; ++j)
#pragma unroll
                            for (int e = 0; e < 2; ++e) {
                                const int jj = 4 * half + j;
                                const float b = sbm[8 * jj + 2 * tq + e], m = sbm[COUT + 8 * jj + 2 * tq + e];
                                v[4 * j + 2 * e] = epilogue_conv2d_fast(fmaf(acc[o][4 * jj + e], inv_scale, b), m);
                                v[4 * j + 2 * e + 1] = epilogue_conv2d_fast(fmaf(acc[o][4 * jj + 2 + e], inv_scale, b), m);
                            }
                        float* buf = obuf + (half_rows & 1) * OBUF;
#pragma unroll
                        for (int j = 0; j < 4; ++j)
#pragma unroll
                            for (int e = 0; e < 2; ++e) {
                                const int lc = 8 * j + 2 * tq + e, ph = (ph0 + e * pstep) & 3;
                                *reinterpret_cast<float2*>(buf + lc * OPITCH + ph + 16 * warp + 2 * gid) =
                                    make_float2(v[4 * j + 2 * e], v[4 * j + 2 * e + 1]);
                            }
                        fence_proxy_async();
                        if (lane == 0) bulk_wait_read();             // this warp's copies of the other buffer read
                        wg_sync(bar_id);
                        const float* ybase = yr0 + (long long)(32 * half + 8 * warp) * plane;
                        const float* sbufw = buf + 8 * warp * OPITCH;
                        if (lane < 8) {
                            float* gr = const_cast<float*>(ybase) + lane * plane;
                            const RowSplit rs = row_split(gr, lim);
                            const float* sr = sbufw + lane * OPITCH + rs.phase;
                            if (rs.head) __stcs(reinterpret_cast<float2*>(gr), *reinterpret_cast<const float2*>(sr));
                            if (rs.tail)
                                __stcs(reinterpret_cast<float2*>(gr + lim - 2),
                                       *reinterpret_cast<const float2*>(sr + lim - 2));
                        }
                        const float* ub = reinterpret_cast<const float*>(
                            __shfl_sync(~0u, reinterpret_cast<uintptr_t>(ybase), 0));
                        const uint32_t sb = __shfl_sync(~0u, smem_addr(sbufw), 0);
                        const int ulim = __shfl_sync(~0u, lim, 0);
                        if (lane == 0) bulk_rows<8>(ub, plane, sb, OPITCH, ulim);
                        ++half_rows;
                    }
                }
            } else {
                float* yt = y + ((long long)tc.n * COUT + 2 * tq) * plane + (long long)tc.oh * g.Wo + px;
#pragma unroll
                for (int o = 0; o < ROWS; ++o) {
                    if (tc.oh + o >= g.Ho || px >= g.Wo) break;
#pragma unroll
                    for (int jj = 0; jj < 8; ++jj)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const float b = sbm[8 * jj + 2 * tq + e], m = sbm[COUT + 8 * jj + 2 * tq + e];
                            float* yp = yt + (8 * jj + e) * plane + o * g.Wo;
                            __stcs(yp, epilogue_conv2d_fast(fmaf(acc[o][4 * jj + e], inv_scale, b), m));
                            if (px + 1 < g.Wo)
                                __stcs(yp + 1, epilogue_conv2d_fast(fmaf(acc[o][4 * jj + 2 + e], inv_scale, b), m));
                        }
                }
            }
        }
        if (lane == 0) bulk_wait_all();
    }
#endif
}

}  // namespace cf04d

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace cf04d;
    constexpr const char* NAME = "04d_register_a_wgmma (conv2d, FP16 scratch)";
    if (const char* err = cf_conv2d_shape(a, NAME)) return err;
    int dev = 0, sms = 0, grid = 0;
    if (const char* err = cf_sm90a_device(NAME, dev, sms)) return err;
    Geom g;
    g.N = a.N; g.H = a.H; g.W = a.W; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, TW);
    g.tiles_y = cf_ceil_div(a.Ho, ROWS);
    const long long tiles = (long long)a.N * g.tiles_y * g.tiles_x;
    if (tiles > 0x7fffffffLL - 2LL * sms * CONSUMERS) return "too many tiles";
    g.tiles = (int)tiles;
    g.ybulk = (a.Wo % 2 == 0) && (reinterpret_cast<uintptr_t>(a.y) % 8 == 0);
    CUtensorMap xmap{};
    g.tma = cf_encode_tma_4d(&xmap, a.x, {(uint64_t)a.W, (uint64_t)a.H, (uint64_t)CIN, (uint64_t)a.N},
                             {(uint32_t)PITCH, (uint32_t)XH, (uint32_t)CHUNK, 1u}) ? 1 : 0;
    if (const char* err = cf_persistent_grid(conv2d_rs_kernel, THREADS, SMEM_BYTES, (tiles + CONSUMERS - 1) / CONSUMERS,
                                             sms, NAME, grid))
        return err;
    conv2d_rs_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(xmap, a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}
