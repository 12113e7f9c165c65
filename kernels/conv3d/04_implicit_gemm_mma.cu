// 04_implicit_gemm_mma — conv3d step 04: implicit-GEMM conv + fused epilogue on tensor cores (mma.sync.m16n8k8 TF32,
// sm_80+: the same code runs on A100 and H100/H200). One file, two precisions:
//   tf32     operands rounded to TF32 with cvt.rna.tf32.f32 (weights once per block, the input tile once per tile,
//            in shared memory), FP32 accumulate, one MMA per product.
//   3xtf32   (CF_3XTF32) x = big + small, big = x truncated to TF32, small = x - big, for inputs and weights at
//            fragment load (split_tf32); acc += a_small b_big + a_big b_small + a_big b_big (small products first,
//            small x small dropped): FP32-level accuracy for 3x the MMAs. K = 216 is short enough for one
//            accumulator (conv2d's K = 576 needs partial sums: its 04 says why).
// What changed from 03b: 03b's FFMA peak (~50 TFLOP/s on the H200) caps it at ~3.8 ms; 04 runs the 190 GFLOP on the
//   tensor cores, each warp 64 Cout x 64 pixels as 4 x 8 mma tiles.
// GEMM: M = Cout (64), N = output pixels, K = Cin x 27 = 216 ordered (tap, channel). Cin = 8 is one k8 step, so the
//   GEMM is 27 k-steps, one per tap, each reading B straight from a haloed input tile in shared memory at a
//   compile-time offset (no im2col). M = Cout because the mma accumulator gives each thread two adjacent pixels of
//   one channel: NCHW order. y (1.76 GB) is 6.6x x and K is short, so the weights stay resident in shared memory in
//   A-fragment order (one LDS.128 a fragment, pre-rounded for tf32), the epilogue runs only on pixels inside the
//   output and stores are aligned 16-byte streaming stores.
// Launch: persistent grid = min(tiles, SMs x resident blocks); a block of 4 warps (a warp one output row) computes
//   64 Cout x 2 depths x 2 rows x 64 columns, 128 accumulators a thread; tiles (n, depth pair, row pair, 64-column
//   band) dealt round-robin, column band fastest, so halo re-reads hit L2. At full size a 64-column band covers a
//   62-column row: 3 % of the MMAs land on padding, none of the epilogue does. Shared memory: weights 27 taps x 4 m16
//   x 32 lanes x float4 (55,296 B), input 8 channels x 4 depths x 4 rows x 68 columns (channel stride 1096 = 8 mod
//   32: a B fragment's 4 k-rows hit disjoint bank groups; 35,072 B), output staging 16 x 68 floats a warp (17,408 B):
//   107,776 B, 2 blocks an SM on H100/H200 (1 on A100), so one block's epilogue overlaps the other's MMAs. One input
//   buffer: the next tile's input is copied in while this tile's epilogue runs.
// Epilogue: acc + bias parked in the warp's staging buffer one 16-channel slice at a time (each row shifted by its
//   16-byte misalignment), then a lane a channel row: epilogue_conv3d on float4s, 16-byte streaming stores.
// Bytes: DRAM x read once 0.27 GB + y written once 1.76 GB = 2.03 GB (measured tf32 2.03 GB, 3xtf32 2.08 GB);
//   L2 -> SM x 0.97 GB, the weights once per block. FLOPs 190.5 G (3xtf32: 571 G of TF32 MMAs).
// Bound: latency (ncu: more than half the cycles no warp eligible; 128 accumulators and ~220 registers a thread
//   allow 8 warps an SM, every operand through an LDS into registers).
// Measured (H200, 2026-12-05 record): tf32 1.632 ms, 6.16x eager, 3.57x torch.compile, rel-L2 1.3e-4; 3xtf32 3.273 ms,
//   3.07x eager, 1.78x torch.compile, rel-L2 7.8e-7.
// Odd shapes: any N, D, H, W >= 3. Input past the volume is zero-filled by cp.async (src-size 0) and feeds only
//   outputs that are never stored; 16-byte copies when W % 4 == 0 and x is 16-byte aligned, 4-byte copies otherwise.

namespace cf04 {

constexpr int CIN = 8, COUT = 64, KS = 3, TAPS = KS * KS * KS;
constexpr int TD = 2, TH = 2;                    // output depths x rows per tile: one warp per output row
constexpr int WARPS = TD * TH;
constexpr int THREADS = WARPS * 32;
constexpr int TW = 64;                           // output columns per tile: 8 n8 tiles per warp
constexpr int XD = TD + KS - 1, XH = TH + KS - 1;
constexpr int XCHUNKS = (TW + KS - 1 + 3) / 4;   // 16-byte chunks per staged input row (17)
constexpr int XRS = XCHUNKS * 4;                 // 68
constexpr int XSS = XH * XRS;                    // depth-slice stride
constexpr int pad_bank(int v) { while (v % 32 != 8 && v % 32 != 24) v += 4; return v; }
constexpr int XCS = pad_bank(XD * XSS);          // channel stride ≡ 8 or 24 (mod 32): 1096
constexpr int X_FLOATS = CIN * XCS;
constexpr int X_ITEMS = CIN * XD * XH * XCHUNKS; // 16-byte copies per tile (2176 = 17 per thread)
constexpr int WF_FLOATS = TAPS * 4 * 32 * 4;     // weights in A-fragment order
constexpr int ORS = 68;                          // staging row: up to 3 shift + 64 pixels, 17 float4
constexpr int O_WARP = 16 * ORS;
constexpr int SMEM_FLOATS = WF_FLOATS + X_FLOATS + WARPS * O_WARP;
constexpr size_t SMEM_BYTES = size_t(SMEM_FLOATS) * sizeof(float);
static_assert(XCS % 4 == 0 && X_FLOATS % 4 == 0 && WF_FLOATS % 4 == 0 && ORS % 4 == 0, "16-byte aligned smem");
static_assert(CIN == 8, "one k8 MMA step per tap");
#ifdef CF_3XTF32
constexpr bool SPLIT = true;                     // 3xtf32 (the registry's define, read here only)
#else
constexpr bool SPLIT = false;                    // tf32
#endif

// smem_addr, cp_async*, to_tf32, split_tf32, mma_tf32: kernels/common.cuh

struct Geom {
    int N, D, H, W, Do, Ho, Wo;
    int tiles_x, tiles_y, tiles_z, tiles;
    bool xvec;   // 16-byte cp.async legal for x rows
};

struct TileCoord { int n, od0, oh0, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x;
    int t = tile / g.tiles_x;
    const int ty = t % g.tiles_y;
    t /= g.tiles_y;
    const int tz = t % g.tiles_z;
    return { t / g.tiles_z, tz * TD, ty * TH, tx * TW };
}

// Issue the cp.async copies of one tile's input: 8 ch x XD depth slices x XH rows x 68 columns.
__device__ __forceinline__ void load_tile(float* sx, const float* __restrict__ x, const Geom& g, TileCoord tc) {
    for (int it = threadIdx.x; it < X_ITEMS; it += THREADS) {
        const int row = it / XCHUNKS, q = it - row * XCHUNKS;
        const int hy = row % XH, t = row / XH;
        const int dz = t % XD, c = t / XD;
        const int id = tc.od0 + dz, ih = tc.oh0 + hy, ix = tc.ox0 + 4 * q;
        float* dst = sx + c * XCS + dz * XSS + hy * XRS + 4 * q;
        const bool row_ok = id < g.D && ih < g.H;
        const float* src = x + (((long long)(tc.n * CIN + c) * g.D + (row_ok ? id : 0)) * g.H
                                + (row_ok ? ih : 0)) * g.W;
        if (g.xvec) {
            const bool ok = row_ok && ix < g.W;   // W % 4 == 0 and ix % 4 == 0: all four or none in range
            cp_async16(dst, ok ? src + ix : x, ok ? 16 : 0);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool ok = row_ok && ix + e < g.W;
                cp_async4(dst + e, ok ? src + ix + e : x, ok ? 4 : 0);
            }
        }
    }
}

// TF32: round the tile once in shared memory (each thread the elements it copied itself, which its own
// cp.async.wait_group made visible to it), so the 27 k-steps load MMA operands with no conversion.
__device__ __forceinline__ void round_tile(float* sx) {
    for (int it = threadIdx.x; it < X_ITEMS; it += THREADS) {
        const int row = it / XCHUNKS, q = it - row * XCHUNKS;
        const int hy = row % XH, t = row / XH;
        const int dz = t % XD, c = t / XD;
        float* p = sx + c * XCS + dz * XSS + hy * XRS + 4 * q;
        float4 v = *reinterpret_cast<float4*>(p);
        v.x = __uint_as_float(to_tf32(v.x)); v.y = __uint_as_float(to_tf32(v.y));
        v.z = __uint_as_float(to_tf32(v.z)); v.w = __uint_as_float(to_tf32(v.w));
        *reinterpret_cast<float4*>(p) = v;
    }
}

// 27 k-steps x (4 m16 x 8 n8) MMAs for this warp's 64 Cout x 64 pixels.
//   A (16 Cout x 8 ch):  the lane's float4 wf[(tap*4 + i)*32 + lane] = {a0..a3},
//                        a[r] = W[cout = 16i + gid + 8(r&1)][ch = tq + 4(r>>1)][tap] (laid out by the prologue)
//   B (8 ch x 8 px):     b[r] = X[ch = tq + 4r][depth dl + kd][row hl + kh][col 8j + gid + kw]
__device__ __forceinline__ void compute_tile(float (&acc)[4][8][4], const float* sx, const float* swf,
                                             int warp, int lane) {
    const int gid = lane >> 2, tq = lane & 3;
    const float* xs = sx + tq * XCS + (warp / TH) * XSS + (warp % TH) * XRS + gid;
    const float4* wf = reinterpret_cast<const float4*>(swf) + lane;
#pragma unroll 1
    for (int kd = 0; kd < KS; ++kd) {
        const float* xk = xs + kd * XSS;
        const float4* wk = wf + kd * (KS * KS * 4 * 32);
#pragma unroll
        for (int khw = 0; khw < KS * KS; ++khw) {
            const int kh = khw / KS, kw = khw % KS;
            if constexpr (SPLIT) {
                uint32_t ab[4][4], as[4][4];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const float4 v = wk[(khw * 4 + i) * 32];
                    split_tf32(v.x, ab[i][0], as[i][0]); split_tf32(v.y, ab[i][1], as[i][1]);
                    split_tf32(v.z, ab[i][2], as[i][2]); split_tf32(v.w, ab[i][3], as[i][3]);
                }
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    uint32_t bb0, bs0, bb1, bs1;
                    split_tf32(xk[kh * XRS + kw + 8 * j], bb0, bs0);
                    split_tf32(xk[4 * XCS + kh * XRS + kw + 8 * j], bb1, bs1);
#pragma unroll
                    for (int i = 0; i < 4; ++i) {
                        mma_tf32(acc[i][j], as[i], bb0, bb1);
                        mma_tf32(acc[i][j], ab[i], bs0, bs1);
                        mma_tf32(acc[i][j], ab[i], bb0, bb1);
                    }
                }
            } else {
                uint32_t a[4][4];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const float4 v = wk[(khw * 4 + i) * 32];
                    a[i][0] = __float_as_uint(v.x); a[i][1] = __float_as_uint(v.y);
                    a[i][2] = __float_as_uint(v.z); a[i][3] = __float_as_uint(v.w);
                }
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const uint32_t b0 = __float_as_uint(xk[kh * XRS + kw + 8 * j]);
                    const uint32_t b1 = __float_as_uint(xk[4 * XCS + kh * XRS + kw + 8 * j]);
#pragma unroll
                    for (int i = 0; i < 4; ++i) mma_tf32(acc[i][j], a[i], b0, b1);
                }
            }
        }
    }
}

// Bias, epilogue and 16-byte stores of this warp's output row, one m16 slice (16 channels) at a time
// through the warp's staging buffer. The accumulators (+ bias) are parked in staging first and the
// epilogue runs on float4s read back from it: the GELU then never has more than 4 values in flight next
// to the 128 live accumulators (computing it straight from the accumulators spilled registers), and
// it runs only for pixels inside the output. Staging row r holds channel 16i + r shifted right by that
// row's misalignment sh (floats), so float4 k of the staging row is the aligned global float4 at
// y_row - sh + 4k. Row c's misalignment is (sh0 + c * (plane mod 4)) mod 4: no 64-bit math per row.
__device__ __forceinline__ void store_tile(float (&acc)[4][8][4], float* stg, const float* __restrict__ bias,
                                           const float* __restrict__ addend, float* __restrict__ y,
                                           const Geom& g, TileCoord tc, int warp, int lane) {
    const int od = tc.od0 + warp / TH, oh = tc.oh0 + warp % TH;
    if (od >= g.Do || oh >= g.Ho) return;       // warp-uniform: this row overhangs the output
    const int gid = lane >> 2, tq = lane & 3;
    const int L = min(TW, g.Wo - tc.ox0);       // valid pixels in this row segment
    const long long plane = (long long)g.Do * g.Ho * g.Wo;
    float* yrow0 = y + (((long long)tc.n * COUT * g.Do + od) * g.Ho + oh) * g.Wo + tc.ox0;   // channel 0
    const int sh0 = (int)((reinterpret_cast<uintptr_t>(yrow0) >> 2) & 3);
    const int pm = (int)(plane & 3);
    const int sr = lane & 15, hl = lane >> 4;   // store phase: staging row sr, float4 chunks hl, hl+2, ...
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = gid + 8 * h, c = 16 * i + r;
            const float b = __ldg(bias + c);
            float* srow = stg + r * ORS + ((sh0 + c * pm) & 3) + 2 * tq;
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                srow[8 * j]     = acc[i][j][2 * h] + b;
                srow[8 * j + 1] = acc[i][j][2 * h + 1] + b;
            }
        }
        __syncwarp();
        // Each lane owns one staging row (channel) and every other float4 of it: the row pointer, shift
        // and per-channel parameter are loop-invariant; a warp store covers 16 rows x 32 contiguous bytes.
        // Up to 17 float4 per row (a shifted full-width row); chunk 17 (hl = 1, k = 8) is always past L.
        const int c = 16 * i + sr;
        const int sh = (sh0 + c * pm) & 3;
        float* yrow = yrow0 + c * plane - sh;   // 16-byte aligned; element e of float4 q is yrow[4q + e]
        const float* srow = stg + sr * ORS;
        const float p = __ldg(addend + c);
#pragma unroll 1
        for (int k = 0; k < 9; ++k) {
            const int q4 = 8 * k + 4 * hl;      // staging column of this float4
            const int lo = q4 - sh;             // tile column of its first element
            if (lo >= L) continue;
            float4 v = *reinterpret_cast<const float4*>(srow + q4);
            v.x = epilogue_conv3d(v.x, p); v.y = epilogue_conv3d(v.y, p);
            v.z = epilogue_conv3d(v.z, p); v.w = epilogue_conv3d(v.w, p);
            float* dst = yrow + q4;
            if (lo >= 0 && lo + 4 <= L) {
                st_global_f4(dst, v);
            } else {
                if (lo >= 0)                   __stcs(dst,     v.x);
                if (lo + 1 >= 0 && lo + 1 < L) __stcs(dst + 1, v.y);
                if (lo + 2 >= 0 && lo + 2 < L) __stcs(dst + 2, v.z);
                if (lo + 3 < L)                __stcs(dst + 3, v.w);
            }
        }
        __syncwarp();                            // staging is rewritten by the next slice
    }
}

__global__ void __launch_bounds__(THREADS, 2)
conv3d_mma_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                  const float* __restrict__ addend, float* __restrict__ y, Geom g) {
    extern __shared__ __align__(16) float smem[];
    float* swf = smem;
    float* sx = swf + WF_FLOATS;
    float* stg = sx + X_FLOATS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

    int tile = blockIdx.x;
    if (tile < g.tiles) load_tile(sx, x, g, tile_coord(g, tile));
    cp_async_commit();

    // Weights into A-fragment order once per block (overlapping the first tile's copies). Element f:
    // r = f&3, lane = (f>>2)&31, m16 tile i = (f>>7)&3, tap = f>>9.
    for (int f = threadIdx.x; f < WF_FLOATS; f += THREADS) {
        const int r = f & 3, ln = (f >> 2) & 31, i = (f >> 7) & 3, tap = f >> 9;
        const int co = 16 * i + (ln >> 2) + 8 * (r & 1), ci = (ln & 3) + 4 * (r >> 1);
        const float v = __ldg(w + (co * CIN + ci) * TAPS + tap);
        swf[f] = SPLIT ? v : __uint_as_float(to_tf32(v));   // 3xtf32 splits it per k-step
    }

#pragma unroll 1
    for (; tile < g.tiles; tile += gridDim.x) {
        cp_async_wait<0>();                      // this thread's copies of this tile have landed
        if constexpr (!SPLIT) round_tile(sx);
        __syncthreads();                         // ... everyone's (and, the first time, the weights)
        float acc[4][8][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
        compute_tile(acc, sx, swf, warp, lane);
        __syncthreads();                         // input tile free: refill it under this tile's epilogue
        const int next = tile + gridDim.x;
        if (next < g.tiles) load_tile(sx, x, g, tile_coord(g, next));
        cp_async_commit();
        store_tile(acc, stg + warp * O_WARP, bias, addend, y, g, tile_coord(g, tile), warp, lane);
    }
    cp_async_wait<0>();
}

}  // namespace cf04

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace cf04;
    if (a.Cin != CIN || a.Cout != COUT || a.k != KS)
        return "04_implicit_gemm_mma (conv3d) supports only Cin=8, Cout=64, kernel_size=3";
    if (a.N < 1 || a.D < KS || a.H < KS || a.W < KS)
        return "04_implicit_gemm_mma (conv3d) needs N >= 1 and D, H, W >= 3";
    if (a.Do != a.D - KS + 1 || a.Ho != a.H - KS + 1 || a.Wo != a.W - KS + 1)
        return "04_implicit_gemm_mma (conv3d) computes a valid (unpadded) stride-1 conv: "
               "Do = D-2, Ho = H-2, Wo = W-2";

    Geom g;
    g.N = a.N; g.D = a.D; g.H = a.H; g.W = a.W; g.Do = a.Do; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, TW);
    g.tiles_y = cf_ceil_div(a.Ho, TH);
    g.tiles_z = cf_ceil_div(a.Do, TD);
    const long long tiles = (long long)a.N * g.tiles_x * g.tiles_y * g.tiles_z;
    if (tiles > 0x7fffffffLL) return "04_implicit_gemm_mma (conv3d): too many tiles for a 32-bit tile index";
    g.tiles = (int)tiles;
    g.xvec = (a.W % 4 == 0) && (reinterpret_cast<uintptr_t>(a.x) % 16 == 0);

    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return "04_implicit_gemm_mma (conv3d): cannot query the device";
    if (cudaFuncSetAttribute(conv3d_mma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)SMEM_BYTES) != cudaSuccess)
        return "04_implicit_gemm_mma (conv3d): device cannot give the kernel its dynamic shared memory";
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, conv3d_mma_kernel, THREADS, SMEM_BYTES) !=
            cudaSuccess || per_sm < 1)
        return "04_implicit_gemm_mma (conv3d): kernel does not fit on this device";
    const long long slots = (long long)sms * per_sm;
    const int grid = (int)(tiles < slots ? tiles : slots);
    conv3d_mma_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}
