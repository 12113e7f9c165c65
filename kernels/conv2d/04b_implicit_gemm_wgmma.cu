// 04b_implicit_gemm_wgmma — conv2d step 04b: implicit-GEMM conv + fused epilogue on Hopper's warpgroup MMA (wgmma,
// sm_90a only: H100/H200), TF32. 04_implicit_gemm_mma stays the step for every other GPU.
//
// What changed from 04: 04 is latency-bound (8 warps an SM, every operand through LDS into registers before its
//   mma.sync). wgmma reads both operands from shared memory, asynchronously: a warpgroup keeps one group of MMAs in
//   flight while it stages the next input chunk, and three independent warpgroups share the SM.
// GEMM: M = Cout = 64, N = TH = 2 output rows x 88 columns (86 outputs + 2 discarded: Wo = 254 = 3 x 86 - 4, so three
//   column tiles a row waste 1.6 % of the MMAs), K = 8 chunks of 8 input channels x 9 taps = 72 k8 steps. A = the
//   weights, all 72 k-steps resident for the persistent block (147,456 B). B = the input chunk, 8 channels x 4 rows x
//   88 pixels, stored transposed to pixel-major and rounded to TF32; tap (kh, kw) reads rows kh, kh + 1 shifted by kw
//   pixels: one descriptor, its start moved by kw 16-byte core-matrix rows. Two rows a tile make each chunk's MMAs
//   long enough to hide the next chunk's loads, and 4 staged rows serve 2 output rows instead of 3 serving 1.
// Why no 3xTF32 here: the weights' big and small parts take 295 KB, more than an SM has; streaming them per chunk
//   ties the warpgroups of a block to one pipeline (a TF32 + BF16 build that did took 4.65 ms). conv2d's FP32-accurate
//   wgmma kernels are 04c (3xFP16), 04d and 04e (3xTF32).
// Launch: persistent grid, one block an SM: 3 warpgroups (384 threads, 168 registers), each its own tile of 2 rows x
//   86 columns; shared memory 147,456 B of weights + 3 warpgroups x 2 buffers x 11,328 B = 215,424 B. Per (tile,
//   chunk) step a warpgroup waits until at most one MMA group is pending, stores the chunk it loaded into registers
//   a step earlier, fences (fence.proxy.async), issues the next step's loads, then 9 wgmmas and a commit. After a
//   tile's last chunk: bias, epilogue_conv2d_fast and predicated 8-byte streaming stores straight from the
//   accumulators.
// Bytes: DRAM x 1.07 GB read + y 1.06 GB written once (measured 2.12 GB); L2 -> SM 2 input rows per output row
//   (~2.2 GB of x), the weights once per block.
// Bound: the staging of x through registers. With no loads and no staging the MMAs alone take 0.71 ms, 104 % of the
//   measured TF32 rate; the loads are the longest link (not their DRAM latency: an L2 prefetch did not help),
//   because a warpgroup uses its register loads one step after issuing them.
// Measured (H200, 2026-12-05 record): 1.667 ms, 2.99x eager, 1.38x torch.compile; rel-L2 3.5e-4 against float64.
// Odd shapes: any N, H, W >= 3; pixels past the input row are zero-filled when staged and feed only outputs that are
//   never stored.

namespace cf04b {

constexpr int CIN = 64, COUT = 64, KS = 3, TAPS = KS * KS;
constexpr int CHUNK = 8, NCHUNK = CIN / CHUNK, KSTEPS = NCHUNK * TAPS;
constexpr int XW = 88;                   // staged pixels per input row = MMA columns (wgmma N)
constexpr int TW = XW - (KS - 1);        // output columns per tile (86)
constexpr int TH = 2;                    // output rows per tile: one wgmma with N = XW * TH
constexpr int XH = TH + KS - 1;          // staged input rows
constexpr int NJ = XW / 8;               // n8 column groups per output row (11)
constexpr int NACC = XW * TH / 2;        // accumulators per thread (44 per row)
constexpr int WGS = 3;                   // warpgroups per block
constexpr int NBUF = 2;                  // staged-chunk buffers per warpgroup (buf ^= 1 below)
constexpr int THREADS = 128 * WGS;
constexpr int XHALF = XH * XW * 4;                  // floats per k-half of a staged chunk
constexpr int XBUF = 2 * XHALF + 16;                // one buffer (+ 64 B for the discarded columns)
constexpr int WSTEP = 2 * COUT * 4;                 // floats per k-step of A
constexpr int WFLOATS = KSTEPS * WSTEP;             // 36,864
constexpr int SMEM_FLOATS = WFLOATS + WGS * NBUF * XBUF;
constexpr size_t SMEM_BYTES = size_t(SMEM_FLOATS) * sizeof(float);
constexpr int X_ITEMS = 2 * XH * (XW / 4);          // (k-half, row, 4-pixel quad) per chunk: 132
constexpr int ITEMS_PER_THREAD = (X_ITEMS + 127) / 128;
static_assert(XW % 8 == 0 && XBUF % 4 == 0, "core matrices of 8 rows; 16-byte aligned buffers");
static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 block can have (227 KB)");

struct Geom {
    int N, H, W, Ho, Wo;
    int tiles_x, tiles;
    int xvec;    // 2: 8-byte loads legal (W even, x 8-byte aligned); 0: scalar
};

struct TileCoord { int n, oh, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x, t = tile / g.tiles_x;
    const int rows = (g.Ho + TH - 1) / TH;
    return { t / rows, (t % rows) * TH, tx * TW };
}

struct Staged { float4 v[ITEMS_PER_THREAD][4]; };   // [item][channel] = 4 pixels

// Loads of one chunk: item = (k-half, row, quad); 4 channels x 4 pixels into registers.
__device__ __forceinline__ void load_chunk(Staged& s, const float* __restrict__ x, const Geom& g, TileCoord tc,
                                           int chunk, int tid) {
    const long long cstride = (long long)g.H * g.W;
    const bool vec = g.xvec && (tc.ox0 % 2 == 0);
#pragma unroll
    for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
        const int it = tid + 128 * k;
        const int q = it % (XW / 4), t = it / (XW / 4);
        const int row = t % XH, half = t / XH;
        const int ih = tc.oh + row, ix = tc.ox0 + 4 * q;
        const bool ok = it < X_ITEMS && ih < g.H;
        const float* src = x + ((long long)(tc.n * CIN + CHUNK * chunk + 4 * half) * g.H + (ok ? ih : 0)) * g.W + ix;
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            float4& d = s.v[k][c];
            const float* r = src + c * cstride;
            if (vec) {   // W even, ix even: pairs are both in the row or both out
                const float2 a = (ok && ix < g.W) ? __ldg(reinterpret_cast<const float2*>(r)) : make_float2(0.f, 0.f);
                const float2 b = (ok && ix + 2 < g.W) ? __ldg(reinterpret_cast<const float2*>(r + 2)) : make_float2(0.f, 0.f);
                d = make_float4(a.x, a.y, b.x, b.y);
            } else {
                d.x = (ok && ix     < g.W) ? __ldg(r)     : 0.0f;
                d.y = (ok && ix + 1 < g.W) ? __ldg(r + 1) : 0.0f;
                d.z = (ok && ix + 2 < g.W) ? __ldg(r + 2) : 0.0f;
                d.w = (ok && ix + 3 < g.W) ? __ldg(r + 3) : 0.0f;
            }
        }
    }
}

__device__ __forceinline__ void store_chunk(float* sx, const Staged& s, int tid) {
#pragma unroll
    for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
        const int it = tid + 128 * k;
        if (it >= X_ITEMS) break;
        const int q = it % (XW / 4), t = it / (XW / 4);
        const int row = t % XH, half = t / XH;
        float* dst = sx + half * XHALF + (row * XW + 4 * q) * 4;
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            *reinterpret_cast<float4*>(dst + 4 * p) =
                make_float4(tf32_round((&s.v[k][0].x)[p]), tf32_round((&s.v[k][1].x)[p]),
                            tf32_round((&s.v[k][2].x)[p]), tf32_round((&s.v[k][3].x)[p]));
        }
    }
}


// The 9 wgmmas of one chunk: A at k-step chunk*9 + tap, B at staged row kh shifted by kw pixels.
__device__ __forceinline__ void mma_chunk(float (&acc)[NACC], uint32_t alo, uint32_t ahi, uint32_t blo,
                                          uint32_t bhi, int chunk) {
    wgmma_fence();
#pragma unroll
    for (int tap = 0; tap < TAPS; ++tap) {
        const int kh = tap / KS, kw = tap % KS;
        const uint64_t da = desc_at(alo, ahi, (chunk * TAPS + tap) * WSTEP * 4);
        const uint64_t db = desc_at(blo, bhi, (kh * XW + kw) * 16);
        wgmma_tf32(acc, da, db, chunk > 0 || tap > 0);
    }
    wgmma_commit();
}

// Descriptors of the weights (A, base sw) and of this warpgroup's input buffers (B, base sx); per wgmma
// only the low word's start address moves (desc_at).
struct Operands { uint64_t a0, b0; uint32_t ahi, bhi; };
__device__ __forceinline__ Operands operands(const float* sw, const float* sx) {
    constexpr uint32_t A_LBO = COUT * 16, SBO = 128, B_LBO = XHALF * 4;
    const uint64_t a0 = wgmma_desc(smem_addr(sw), A_LBO, SBO), b0 = wgmma_desc(smem_addr(sx), B_LBO, SBO);
    return {a0, b0, (uint32_t)(a0 >> 32), (uint32_t)(b0 >> 32)};
}

// Bias, epilogue and stores straight from the accumulators (store_acc_row, kernels/wgmma.cuh): acc[4j + 2h
// + e] = channel 16*warp + gid + 8h, column 8j + 2tq + e (j = 0..10). The channels' bias and parameter are
// the same for every tile: they live in registers (channel_params).
__device__ __forceinline__ void store_tile(const float (&acc)[NACC], const float (&bias_r)[2],
                                           const float (&param_r)[2], float* __restrict__ y,
                                           const Geom& g, TileCoord tc, int warp, int lane) {
    const int gid = lane >> 2, tq = lane & 3;
    const int lim = min(TW, g.Wo - tc.ox0) - 2 * tq;     // pixel pair j is in the row when 8j < lim
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int c = 16 * warp + gid + 8 * h;
        const float b = bias_r[h], m = param_r[h];
        float* yc = y + ((long long)(tc.n * COUT + c) * g.Ho + tc.oh) * g.Wo + tc.ox0 + 2 * tq;
#pragma unroll
        for (int t = 0; t < TH; ++t) {
            if (tc.oh + t >= g.Ho) break;       // warp-uniform
            float v[2 * NJ];
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                v[2 * j]     = epilogue_conv2d_fast(acc[4 * (NJ * t + j) + 2 * h] + b, m);
                v[2 * j + 1] = epilogue_conv2d_fast(acc[4 * (NJ * t + j) + 2 * h + 1] + b, m);
            }
            store_acc_row<NJ>(yc + t * g.Wo, v, lim);
        }
    }
}

__global__ void __launch_bounds__(THREADS, 1)
conv2d_wgmma_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                    const float* __restrict__ mult, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* sw = smem;
    const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
    const int warp = tid >> 5, lane = threadIdx.x & 31;
    float* sx = smem + WFLOATS + wg * NBUF * XBUF;

    // Weights, once per block: f = ((s*2 + half)*64 + co)*4 + e  <-  w[co][8*chunk + 4*half + e][tap], s = chunk*9 + tap.
    for (int f = threadIdx.x; f < WFLOATS; f += THREADS) {
        const int e = f & 3, co = (f >> 2) & 63, half = (f >> 8) & 1, s = f >> 9;
        const int chunk = s / TAPS, tap = s - chunk * TAPS;
        sw[f] = tf32_round(__ldg(w + (co * CIN + CHUNK * chunk + 4 * half + e) * TAPS + tap));
    }
    fence_proxy_async();
    __syncthreads();

    const Operands ops = operands(sw, sx);
    const uint64_t a0 = ops.a0, b0 = ops.b0;
    const uint32_t ahi = ops.ahi, bhi = ops.bhi;
    float bias_r[2], param_r[2];
    channel_params(bias, mult, warp, lane, bias_r, param_r);
    const int stride = gridDim.x * WGS;
    int tile = blockIdx.x * WGS + wg;
    Staged st;
    if (tile < g.tiles) load_chunk(st, x, g, tile_coord(g, tile), 0, tid);
    float acc[NACC];
    int buf = 0;
#pragma unroll 1
    for (; tile < g.tiles; tile += stride) {
        const TileCoord tc = tile_coord(g, tile);
#pragma unroll 1
        for (int chunk = 0; chunk < NCHUNK; ++chunk) {
            wgmma_wait<NBUF - 1>();             // the group that read buffer `buf` NBUF steps ago is done
            warpgroup_barrier(1 + wg);          // ... in every warp
            store_chunk(sx + buf * XBUF, st, tid);
            fence_proxy_async();
            warpgroup_barrier(1 + wg);
            // the next step's loads, in flight during this chunk's MMAs
            if (chunk + 1 < NCHUNK) load_chunk(st, x, g, tc, chunk + 1, tid);
            else if (tile + stride < g.tiles) load_chunk(st, x, g, tile_coord(g, tile + stride), 0, tid);
            const uint32_t alo = opaque((uint32_t)a0), blo = opaque((uint32_t)b0 + buf * (XBUF * 4 >> 4));
            mma_chunk(acc, alo, ahi, blo, bhi, chunk);
            buf ^= 1;
        }
        wgmma_wait<0>();
        fence_operand(acc);
        store_tile(acc, bias_r, param_r, y, g, tc, warp, lane);
    }
#endif
}


}  // namespace cf04b

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace cf04b;
    constexpr const char* NAME = "04b_implicit_gemm_wgmma (conv2d)";
    static_assert(CIN == 64 && COUT == 64 && KS == 3, "the shapes cf_conv2d_shape checks");
    if (const char* err = cf_conv2d_shape(a, NAME)) return err;
    int dev = 0, sms = 0, grid = 0;
    if (const char* err = cf_sm90a_device(NAME, dev, sms)) return err;

    Geom g;
    g.N = a.N; g.H = a.H; g.W = a.W; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, TW);
    const long long tiles = (long long)a.N * cf_ceil_div(a.Ho, TH) * g.tiles_x;
    if (tiles > 0x7fffffffLL - (long long)sms * WGS)
        return "04b_implicit_gemm_wgmma (conv2d): too many tiles for a 32-bit tile index";
    g.tiles = (int)tiles;
    g.xvec = (a.W % 2 == 0) && (reinterpret_cast<uintptr_t>(a.x) % 8 == 0);

    const auto kernel = conv2d_wgmma_kernel;
    if (const char* err = cf_persistent_grid(kernel, THREADS, SMEM_BYTES, (tiles + WGS - 1) / WGS, sms, NAME, grid))
        return err;
    kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}
