// conv2d step 04 — implicit-GEMM conv + fused epilogue on tensor cores (mma.sync m16n8k8 TF32, sm_80+).
//
// What changed from 03b. 03b is an FP32 CUDA-core register-tiled conv; FP32 FMA peak (~50 TFLOP/s on the
// H200) caps it at ~6 ms. Here the same fused conv+epilogue runs its 304 GFLOP on tensor cores, in one of
// two precisions chosen at compile time:
//   default      tf32:   operands rounded to TF32 (cvt.rna), FP32 accumulate. 1 MMA per product.
//                        Rel-L2 ~1e-4..1e-3 vs float64, what cuDNN does with allow_tf32.
//   -DCF_3XTF32  3xtf32: each operand split x = big + small (big = tf32(x), small = tf32(x - big)) and
//                        acc += a_small*b_big + a_big*b_small + a_big*b_big (small products first), the
//                        CUTLASS "fast FP32" trick: FP32-level accuracy for 3x the tensor-core work.
//
// GEMM mapping: M = Cout (64), N = output pixels, K = Cin*3*3 = 576, ordered (channel chunk, tap, channel).
//   M = Cout rather than M = pixels because the accumulator of mma.m16n8 puts two *adjacent columns* (N)
//   in each thread: with N = pixels a thread holds consecutive pixels of one channel, the NCHW order of y.
//   The K order (tap outer, 8 channels inner) makes every k8 step "8 channels at one tap", so B is read
//   straight out of a haloed input tile in shared memory (no im2col buffer) and the tap shift is a
//   compile-time offset: every fragment load is one LDS with an immediate.
//
// Tiles: block = 4 warps = 64 Cout x (4 output rows x 64 output columns); warp = 64 Cout x 64 pixels of
//   one output row (4 m16 tiles x 8 n8 tiles, 128 FP32 accumulators per thread). K is walked in 8 chunks
//   of 8 input channels; a chunk = 9 k8 steps (one per tap) = 288 MMAs per warp (864 for 3xtf32).
//   Stages: 2 (cp.async double buffer), one __syncthreads per chunk. Per stage:
//     input tile   8 ch x 6 rows x 68 cols (halo 2 + 2 spare for 16-byte copies), channel stride 408
//                  (= 24 mod 32 banks: the 4 k-rows of a B fragment land on disjoint 8-bank groups)  13,056 B
//     weights      64 Cout x 72 (8 ch x 9 taps, PyTorch order), row stride 76 (= 12 mod 32 banks:
//                  A fragment loads are conflict-free)                                               19,456 B
//   plus a per-warp output staging buffer 16 x 68 floats (4 warps)                                    17,408 B
//   dynamic smem = 2 x 32,512 + 17,408 = 82,432 B  → 2 blocks/SM on H100/H200 (228 KB) and on A100 (164 KB).
//   Weights (147 KB) are re-streamed from L2 per tile rather than kept resident: resident they would not
//   fit next to the pipeline on an A100, and two 4-warp blocks per SM let one block's epilogue (erf-GELU
//   on 128 values per thread, ~25% of the MMA time) overlap the other block's MMAs.
//
// Launch: persistent grid = min(tiles, SMs x resident blocks per SM), 128 threads; tile t = (n, row band,
//   64-column band), column band fastest, handed out round-robin so co-resident blocks work on adjacent
//   tiles and halo rows are re-read from L2, not DRAM. The (tile, chunk) sequence of a block is one
//   flattened pipeline, so the next tile's first chunk loads while this tile's epilogue runs.
//
// Epilogue, in registers: v = acc + bias[c]; y = epilogue_conv2d(v, multiplier[c]). Each warp writes one
//   m16 slice (16 channels x 64 pixels) to its staging buffer, shifted by the row's 16-byte misalignment,
//   then stores it as aligned 16-byte streaming stores (scalar only at ragged row ends): y written once.
//
// Traffic at full size (N=64, 64x256x256 → 64x254x254):
//   FLOPs      2*64*64*254*254*576 = 304.4 GFLOP (3xtf32 issues 3x the MMAs: 913 GFLOP of TF32 work)
//   DRAM       x read once 1.07 GB (halo re-reads hit L2) + y written once 1.06 GB = 2.13 GB (floor 0.51 ms)
//   L2 → SM    x 1.07 GB x (6/4 rows x 68/64 cols) = 1.71 GB, weights 147 KB x 16,384 tiles = 2.42 GB
// Predicted H200: tf32 ~1.0 ms (mma.sync reaches ~60-70% of the 495 TFLOP/s TF32 peak; epilogue hidden by
//   the second block), 3xtf32 ~2.8 ms (MMA-bound, 3x the MMAs).
//
// Odd shapes: any N, H, W >= 3. Rows/columns past the input are zero-filled by cp.async (src-size 0);
//   16-byte copies are used only when W % 4 == 0 and x is 16-byte aligned, else 4-byte copies.

namespace cf04 {

constexpr int CIN = 64, COUT = 64, KS = 3, TAPS = KS * KS;
#ifndef CF_CONV2D_ROWS
#define CF_CONV2D_ROWS 4          // output rows per block = warps per block (8 → 1 block/SM, half the weight traffic)
#endif
constexpr int WARPS = CF_CONV2D_ROWS;
constexpr int THREADS = WARPS * 32;
constexpr int TW = 64;                       // output columns per tile: 8 n8 tiles per warp
constexpr int CK = 8;                        // input channels per K chunk: one k8 step per tap
constexpr int NCHUNK = CIN / CK;
constexpr int STAGES = 2;
constexpr int XROWS = WARPS + KS - 1;
constexpr int XCHUNKS = (TW + KS - 1 + 3) / 4;   // 16-byte chunks per staged input row (17)
constexpr int XRS = XCHUNKS * 4;                 // 68
constexpr int pad_bank(int v) { while (v % 32 != 8 && v % 32 != 24) v += 4; return v; }
constexpr int XCS = pad_bank(XROWS * XRS);       // channel stride ≡ 8 or 24 (mod 32)
constexpr int WK = CK * TAPS;                    // 72 weights per Cout per chunk
constexpr int WCHUNKS = WK / 4;                  // 18
constexpr int WLD = 76;                          // ≡ 12 (mod 32): g*WLD + tq*9 hits 32 distinct banks
constexpr int X_STAGE = CK * XCS;                // floats
constexpr int W_STAGE = COUT * WLD;
constexpr int STAGE = X_STAGE + W_STAGE;
constexpr int ORS = 68;                          // staging row: up to 3 shift + 64 pixels, 17 float4
constexpr int O_WARP = 16 * ORS;
constexpr int SMEM_FLOATS = STAGES * STAGE + WARPS * O_WARP;
constexpr size_t SMEM_BYTES = size_t(SMEM_FLOATS) * sizeof(float);
static_assert(XCS % 4 == 0 && WLD % 4 == 0 && STAGE % 4 == 0 && ORS % 4 == 0, "16-byte aligned smem rows");
static_assert(WLD >= WK && WLD % 8 == 4, "conflict-free A fragments need WLD ≡ 4 (mod 8)");
static_assert(XRS >= TW + KS - 1, "staged input row covers the halo");

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// src_bytes < cp-size zero-fills the rest: out-of-range rows/columns become the zero padding of the GEMM.
__device__ __forceinline__ void cp_async16(float* dst, const float* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async4(float* dst, const float* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory"); }

__device__ __forceinline__ uint32_t to_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}
// 3xTF32 split. big keeps cvt.rna (NaN/Inf-safe); small = x - big is exact in FP32 and finite whenever x
// is, so it is rounded with the bare round-half-away bit trick (2 integer ops instead of cvt's 4), leaving
// an error of at most 2^-22 |x| per operand.
__device__ __forceinline__ void split_tf32(float x, uint32_t& big, uint32_t& small) {
    big = to_tf32(x);
    small = (__float_as_uint(x - __uint_as_float(big)) + 0x1000u) & 0xffffe000u;
}
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

struct Geom {
    int N, H, W, Ho, Wo;
    int tiles_x, tiles_y, tiles;
    bool xvec, wvec;   // 16-byte cp.async legal for x rows / weight rows
};

struct TileCoord { int n, oy0, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x;
    const int t2 = tile / g.tiles_x;
    return { t2 / g.tiles_y, (t2 % g.tiles_y) * WARPS, tx * TW };
}

// Issue the cp.async copies of one K chunk (8 input channels) of one tile into one stage.
__device__ __forceinline__ void load_chunk(float* sx, float* sw, const float* __restrict__ x,
                                           const float* __restrict__ w, const Geom& g, TileCoord tc, int cc) {
    const int tid = threadIdx.x;
    for (int it = tid; it < CK * XROWS * XCHUNKS; it += THREADS) {
        const int row = it / XCHUNKS, q = it - row * XCHUNKS;
        const int c = row / XROWS, r = row - c * XROWS;
        const int iy = tc.oy0 + r, ix = tc.ox0 + 4 * q;
        float* dst = sx + c * XCS + r * XRS + 4 * q;
        const bool row_ok = iy < g.H;
        const float* src = x + ((long long)(tc.n * CIN + cc * CK + c) * g.H + (row_ok ? iy : 0)) * g.W;
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
    for (int it = tid; it < COUT * WCHUNKS; it += THREADS) {
        const int m = it / WCHUNKS, q = it - m * WCHUNKS;
        const float* src = w + (long long)m * (CIN * TAPS) + cc * WK + 4 * q;
        float* dst = sw + m * WLD + 4 * q;
        if (g.wvec) {
            cp_async16(dst, src, 16);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) cp_async4(dst + e, src + e, 4);
        }
    }
}

#ifndef CF_3XTF32
// TF32: round the chunk once in shared memory (each thread the elements it copied itself, which its own
// cp.async.wait_group made visible to it), so the inner loop loads MMA operands with no conversion.
__device__ __forceinline__ void round_float4(float* p) {
    float4 v = *reinterpret_cast<float4*>(p);
    v.x = __uint_as_float(to_tf32(v.x)); v.y = __uint_as_float(to_tf32(v.y));
    v.z = __uint_as_float(to_tf32(v.z)); v.w = __uint_as_float(to_tf32(v.w));
    *reinterpret_cast<float4*>(p) = v;
}
__device__ __forceinline__ void round_chunk(float* sx, float* sw) {
    const int tid = threadIdx.x;
    for (int it = tid; it < CK * XROWS * XCHUNKS; it += THREADS) {
        const int row = it / XCHUNKS, q = it - row * XCHUNKS;
        const int c = row / XROWS, r = row - c * XROWS;
        round_float4(sx + c * XCS + r * XRS + 4 * q);
    }
    for (int it = tid; it < COUT * WCHUNKS; it += THREADS) {
        const int m = it / WCHUNKS, q = it - m * WCHUNKS;
        round_float4(sw + m * WLD + 4 * q);
    }
}
#endif

// One K chunk: 9 taps x (4 m16 x 8 n8) MMAs for this warp's 64 Cout x 64 pixels.
//   A (16 Cout x 8 ch):  a[r] = W[cout = 16i + gid + 8(r&1)][ch = tq + 4(r>>1)][tap]
//   B (8 ch x 8 px):     b[r] = X[ch = tq + 4r][row = warp + ky][col = 8j + gid + kx]
__device__ __forceinline__ void compute_chunk(float (&acc)[4][8][4], const float* sx, const float* sw,
                                              int warp, int gid, int tq) {
    const float* xs = sx + tq * XCS + warp * XRS + gid;
    const float* ws = sw + gid * WLD + tq * TAPS;
#pragma unroll
    for (int tap = 0; tap < TAPS; ++tap) {
        const int ky = tap / KS, kx = tap % KS;
#ifdef CF_3XTF32
        uint32_t ab[4][4], as[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                split_tf32(ws[(16 * i + 8 * (r & 1)) * WLD + 4 * TAPS * (r >> 1) + tap], ab[i][r], as[i][r]);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            uint32_t bb0, bs0, bb1, bs1;
            split_tf32(xs[ky * XRS + kx + 8 * j], bb0, bs0);
            split_tf32(xs[4 * XCS + ky * XRS + kx + 8 * j], bb1, bs1);
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                mma_tf32(acc[i][j], as[i], bb0, bb1);
                mma_tf32(acc[i][j], ab[i], bs0, bs1);
                mma_tf32(acc[i][j], ab[i], bb0, bb1);
            }
        }
#else
        uint32_t a[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                a[i][r] = __float_as_uint(ws[(16 * i + 8 * (r & 1)) * WLD + 4 * TAPS * (r >> 1) + tap]);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const uint32_t b0 = __float_as_uint(xs[ky * XRS + kx + 8 * j]);
            const uint32_t b1 = __float_as_uint(xs[4 * XCS + ky * XRS + kx + 8 * j]);
#pragma unroll
            for (int i = 0; i < 4; ++i) mma_tf32(acc[i][j], a[i], b0, b1);
        }
#endif
    }
}

// Bias, epilogue and 16-byte stores of this warp's output row, one m16 slice (16 channels) at a time
// through the warp's staging buffer. The accumulators (+ bias) are parked in staging first and the
// epilogue runs on float4s read back from it: erf-GELU then never has more than 4 values in flight next
// to the 128 live accumulators (computing it straight from the accumulators needs > 255 registers), and
// it runs only for pixels inside the output. Staging row r holds channel 16i + r shifted right by that
// row's misalignment sh (floats), so float4 k of the staging row is the aligned global float4 at
// y_row - sh + 4k. Row c's misalignment is (sh0 + c * (plane mod 4)) mod 4: no 64-bit math per row.
__device__ __forceinline__ void store_tile(float (&acc)[4][8][4], float* stg, const float* __restrict__ bias,
                                           const float* __restrict__ mult, float* __restrict__ y, const Geom& g,
                                           TileCoord tc, int warp, int lane) {
    const int oy = tc.oy0 + warp;
    if (oy >= g.Ho) return;                     // warp-uniform: this row band overhangs the output
    const int gid = lane >> 2, tq = lane & 3;
    const int L = min(TW, g.Wo - tc.ox0);       // valid pixels in this row segment
    const long long plane = (long long)g.Ho * g.Wo;
    float* yrow0 = y + ((long long)tc.n * COUT * g.Ho + oy) * g.Wo + tc.ox0;   // channel 0
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
        const float p = __ldg(mult + c);
#pragma unroll 1
        for (int k = 0; k < 9; ++k) {
            const int q4 = 8 * k + 4 * hl;      // staging column of this float4
            const int lo = q4 - sh;             // tile column of its first element
            if (lo >= L) continue;
            float4 v = *reinterpret_cast<const float4*>(srow + q4);
            v.x = epilogue_conv2d(v.x, p); v.y = epilogue_conv2d(v.y, p); v.z = epilogue_conv2d(v.z, p); v.w = epilogue_conv2d(v.w, p);
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

__global__ void __launch_bounds__(THREADS, 8 / WARPS)
conv2d_mma_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                  const float* __restrict__ mult, float* __restrict__ y, Geom g) {
    extern __shared__ __align__(16) float smem[];
    float* stg = smem + STAGES * STAGE;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int gid = lane >> 2, tq = lane & 3;

    const int my_tiles = (g.tiles - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;
    const int iters = my_tiles * NCHUNK;
    auto tile_of = [&](int it) { return tile_coord(g, (int)blockIdx.x + (it / NCHUNK) * (int)gridDim.x); };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < iters) load_chunk(smem + s * STAGE, smem + s * STAGE + X_STAGE, x, w, g, tile_of(s), s % NCHUNK);
        cp_async_commit();
    }

    // acc is zeroed at the top of the tile loop, never inside the chunk loop: a conditional reset there
    // makes the compiler keep two copies of the 128 accumulators (and spill).
    int it = 0;                                  // flattened (tile, chunk) index: the pipeline position
#pragma unroll 1
    for (int t = 0; t < my_tiles; ++t) {
        float acc[4][8][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

#pragma unroll 1
        for (int cc = 0; cc < NCHUNK; ++cc, ++it) {
            float* sx = smem + (it % STAGES) * STAGE;
            float* sw = sx + X_STAGE;
            cp_async_wait<STAGES - 2>();         // this thread's copies of chunk `it` have landed
#ifndef CF_3XTF32
            round_chunk(sx, sw);
#endif
            __syncthreads();                     // ... everyone's; and stage (it-1) is no longer read
            const int nx = it + STAGES - 1;      // refill the stage chunk it-1 used; may be the next tile's
            if (nx < iters) {
                float* nsx = smem + (nx % STAGES) * STAGE;
                load_chunk(nsx, nsx + X_STAGE, x, w, g, tile_of(nx), nx % NCHUNK);
            }
            cp_async_commit();
            compute_chunk(acc, sx, sw, warp, gid, tq);
        }
        store_tile(acc, stg + warp * O_WARP, bias, mult, y, g, tile_of(it - 1), warp, lane);
    }
    cp_async_wait<0>();
}

}  // namespace cf04

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace cf04;
    if (a.Cin != CIN || a.Cout != COUT || a.k != KS)
        return "04_implicit_gemm_mma (conv2d) supports only Cin=64, Cout=64, kernel_size=3";
    if (a.D != 1 || a.Do != 1) return "04_implicit_gemm_mma (conv2d) expects D = Do = 1";
    if (a.N < 1 || a.H < KS || a.W < KS) return "04_implicit_gemm_mma (conv2d) needs N >= 1 and H, W >= 3";
    if (a.Ho != a.H - KS + 1 || a.Wo != a.W - KS + 1)
        return "04_implicit_gemm_mma (conv2d) computes a valid (unpadded) stride-1 conv: Ho = H-2, Wo = W-2";

    Geom g;
    g.N = a.N; g.H = a.H; g.W = a.W; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, TW);
    g.tiles_y = cf_ceil_div(a.Ho, WARPS);
    const long long tiles = (long long)a.N * g.tiles_x * g.tiles_y;
    if (tiles > 0x7fffffffLL) return "04_implicit_gemm_mma (conv2d): too many tiles for a 32-bit tile index";
    g.tiles = (int)tiles;
    g.xvec = (a.W % 4 == 0) && (reinterpret_cast<uintptr_t>(a.x) % 16 == 0);
    g.wvec = reinterpret_cast<uintptr_t>(a.w) % 16 == 0;

    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return "04_implicit_gemm_mma (conv2d): cannot query the device";
    if (cudaFuncSetAttribute(conv2d_mma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)SMEM_BYTES) != cudaSuccess)
        return "04_implicit_gemm_mma (conv2d): device cannot give 82,432 B of shared memory per block";
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, conv2d_mma_kernel, THREADS, SMEM_BYTES) !=
            cudaSuccess || per_sm < 1)
        return "04_implicit_gemm_mma (conv2d): kernel does not fit on this device";
    const long long slots = (long long)sms * per_sm;
    const int grid = (int)(tiles < slots ? tiles : slots);
    conv2d_mma_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}
