// 04_implicit_gemm_mma — conv2d step 04: implicit-GEMM conv + fused epilogue on tensor cores (mma.sync.m16n8k8 TF32,
// sm_80+: the same code runs on A100 and H100/H200). One file, two precisions:
//   tf32     operands rounded with cvt.rna.tf32.f32 (weights by the pre-pass, the input once per stage in shared
//            memory), FP32 accumulate, one MMA per product: rel-L2 ~3.5e-4, the class of cuDNN with allow_tf32.
//   3xtf32   (CF_3XTF32) x = big + small; a_small b_big + a_big b_small + a_big b_big per k8 step (small products
//            first, small x small dropped), weights split once by the pre-pass (both parts cvt.rna), the input
//            at fragment load (split_tf32); block = 32 Cout.
// What changed from 03b: 03b's FFMA peak (~50 TFLOP/s on the H200) caps it at ~6 ms. 04 keeps its block tile (64
//   Cout x 4 rows x 64 columns), its 8-channel cp.async stages and haloed input tile, and hands the multiply-adds to
//   the tensor cores: each warp owns 64 Cout x 64 pixels as 4 x 8 mma tiles instead of an FFMA micro-tile.
// Why 3xTF32 accumulates in two levels: the tensor core adds each MMA into its accumulator with truncation (round
//   toward zero, no guard bits), so every MMA into an accumulator of magnitude |S| loses up to ~1 ulp(S) in one
//   direction: a bias growing with the number of MMAs. All 216 MMAs into one accumulator measured rel-L2 5e-6 (bound
//   2e-6). So the 9 MMAs of 3 taps go into a fresh partial sum (first MMA with C = 0), added to the total with a
//   round-to-nearest FADD: the truncations act at the partial's scale and, partials having either sign, largely
//   cancel (numpy model: 2.5-6.7e-7; a partial per tap models better but runs ptxas out of registers).
// GEMM: M = Cout, N = output pixels, K = 576 ordered (8-channel chunk, tap, channel). M = Cout because the mma
//   accumulator gives a thread two adjacent columns: two consecutive pixels of one channel, NCHW order. Each k8 step
//   is 8 channels at one tap, so B is read straight from the haloed input tile at a compile-time offset (no im2col);
//   the inner loop is LDS + HMMA only.
// Weights: a pre-pass (36,864 threads) writes them once per call to a pooled, stream-ordered buffer (147 KB; 295 KB
//   big + small) in A-fragment order, rounded or split: [chunk][Cout slice][tap][m16][part][lane][4]. Each block
//   streams its slice's chunk per K step from L2 (18 KB, linear 16-byte cp.async) and loads a fragment with one
//   LDS.128 (two for big + small); all weights resident would not fit next to the stages on an A100.
// Launch: persistent grid = min(tiles, SMs x 2); a block of 4 warps (a warp one output row) computes CO_T Cout x 4
//   rows x 64 columns (tf32: 64 Cout, 128 accumulators a thread; 3xtf32: 32 Cout, 64 + 64 partial sums); tiles (n,
//   rows, columns, Cout slice) dealt round-robin, slice fastest, so halos and the second slice's input come from L2.
//   2 cp.async stages of 31,488 B (8 channels x 6 rows x 68 columns, the chunk's weights), 234 (3xtf32 255)
//   registers: 2 blocks an SM, one block's epilogue beside the other's MMAs; the next tile's first chunk is in
//   flight during this tile's epilogue. Epilogue: acc + bias parked in the last chunk's stage, then a lane a channel
//   row: epilogue_conv2d (erff) on float4s, 16-byte streaming stores.
// Bytes: DRAM x 1.07 GB read + y 1.06 GB written once (measured tf32 2.17 GB, 3xtf32 2.21 GB); L2 -> SM tf32 x 1.71
//   GB + weights 2.42 GB, 3xtf32 x 3.42 GB + weights 4.83 GB.
// Bound: latency (ncu: 8 warps an SM, no warp eligible 55.6 % of cycles); 304 GFLOP of TF32 MMAs (3xtf32: 913).
// Measured (H200, 2026-12-05 record): tf32 2.174 ms, 2.29x eager, 1.06x torch.compile, rel-L2 3.5e-4; 3xtf32 5.340 ms,
//   0.93x eager, rel-L2 3.5e-7.
// Odd shapes: any N, H, W >= 3. Input past the edge is zero-filled by cp.async (src-size 0) and feeds only outputs
//   that are never stored; 16-byte copies when W % 4 == 0 and x is 16-byte aligned, 4-byte copies otherwise.

namespace cf04 {

constexpr int CIN = 64, COUT = 64, KS = 3, TAPS = KS * KS;
constexpr int WARPS = 4;                         // output rows = warps per block
constexpr int THREADS = WARPS * 32;
constexpr int TW = 64;                           // output columns per tile: 8 n8 tiles per warp
constexpr int CK = 8;                            // input channels per K chunk: one k8 step per tap
constexpr int NCHUNK = CIN / CK;
constexpr int STAGES = 2;
constexpr int XROWS = WARPS + KS - 1;
constexpr int XCHUNKS = (TW + KS - 1 + 3) / 4;   // 16-byte chunks per staged input row (17)
constexpr int XRS = XCHUNKS * 4;                 // 68
constexpr int XCS = XROWS * XRS;                 // channel stride: 408
static_assert(XCS % 32 == 8 || XCS % 32 == 24, "the 4 k-rows of a B fragment must hit disjoint bank groups");
constexpr int X_STAGE = CK * XCS;                // floats; item k of the copy is float4 k of the stage
constexpr int X_ITEMS = X_STAGE / 4;
#ifdef CF_3XTF32
constexpr bool SPLIT = true;                     // 3xtf32 (the registry's define, read here only)
#else
constexpr bool SPLIT = false;                    // tf32
#endif
constexpr int WPARTS = SPLIT ? 2 : 1;            // 3xtf32: big, small
constexpr int MT = SPLIT ? 2 : 4;                // m16 tiles per warp: a block owns 32 (3xtf32) or all 64 Cout
constexpr int FLUSH = 3;                         // 3xtf32: taps per MMA partial sum, see the header
static_assert(TAPS % FLUSH == 0, "a partial sum covers whole taps of one chunk");
static_assert(MT == 4 || MT == 2, "the pre-pass decodes i with a shift");
constexpr int CO_T = 16 * MT;                    // Cout per block tile
constexpr int CO_SPLIT = COUT / CO_T;            // Cout slices per output tile: 1 (tf32) or 2 (3xtf32)
constexpr int W_STAGE = TAPS * MT * WPARTS * 32 * 4;  // one chunk of one slice's fragment-ordered weights
constexpr int W_ITEMS = W_STAGE / 4;
constexpr int WPREP_FLOATS = NCHUNK * CO_SPLIT * W_STAGE;
constexpr int STAGE = X_STAGE + W_STAGE;
constexpr int ORS = 68;                          // staging row: up to 3 shift + 64 pixels, 17 float4
constexpr int O_WARP = 16 * ORS;
static_assert(WARPS * O_WARP <= STAGE, "output staging lives in the stage the last chunk used");
constexpr size_t SMEM_BYTES = size_t(STAGES) * STAGE * sizeof(float);

// smem_addr, cp_async*, to_tf32, split_tf32, mma_tf32: kernels/common.cuh
// 3xtf32: d = a*b + 0 opens a partial sum (C is the zero register in SASS, no zeroing instructions).
__device__ __forceinline__ void mma_tf32_zc(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
}

struct Geom {
    int N, H, W, Ho, Wo;
    int tiles_x, tiles_y, tiles;
    bool xvec;   // 16-byte cp.async legal for x rows
};

// Tile = (n, row band, column band, Cout slice hc), hc fastest: the two slices of one output tile run on
// neighbouring blocks at the same time, so the second read of its input comes from L2. tf32: hc = 0.
struct TileCoord { int n, oy0, ox0, hc; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int hc = tile % CO_SPLIT;
    tile /= CO_SPLIT;
    const int tx = tile % g.tiles_x;
    const int t2 = tile / g.tiles_x;
    return { t2 / g.tiles_y, (t2 % g.tiles_y) * WARPS, tx * TW, hc };
}

// Weight pre-pass (one tiny kernel per call): PyTorch [Cout][Cin][3][3] → the A-fragment order of the
// main loop, [chunk][Cout slice hc][tap][m16 tile i][part][lane][r] (i < MT), rounded to TF32 (cvt.rna)
// or split into big/small for 3xTF32, so one (chunk, slice) is one contiguous W_STAGE block. The main
// kernel then copies each chunk's weights with linear 16-byte cp.async, loads an A fragment with one
// LDS.128 (big and small: two), and never converts a weight: without this, every block would re-round
// (or re-split) all 36,864 weights for every tile.
//   a[r] of lane (gid, tq) in m16 tile i of slice hc
//       = W[cout = 16(MT hc + i) + gid + 8(r&1)][cin = 8cc + tq + 4(r>>1)][tap]
__global__ void __launch_bounds__(256)
conv2d_wprep_kernel(const float* __restrict__ w, float* __restrict__ wf) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= WPREP_FLOATS) return;
    const int r = f & 3, lane = (f >> 2) & 31;
    int t = f >> 7;
    const int part = t % WPARTS;
    t /= WPARTS;
    const int i = t & (MT - 1);
    t >>= (MT == 4 ? 2 : 1);
    const int tap = t % TAPS;
    t /= TAPS;
    const int hc = t % CO_SPLIT, cc = t / CO_SPLIT;
    const int co = 16 * (MT * hc + i) + (lane >> 2) + 8 * (r & 1);
    const int ci = cc * CK + (lane & 3) + 4 * (r >> 1);
    const float v = w[(co * CIN + ci) * TAPS + tap];
    // 3xtf32: big from v clamped to +-TF32_MAX, so +-Inf lands in small, not Inf - Inf (see split_tf32)
    const uint32_t big = to_tf32(WPARTS == 2 ? clamp_tf32_max(v) : v);
    wf[f] = part == 0 ? __uint_as_float(big) : __uint_as_float(to_tf32(v - __uint_as_float(big)));
}

// Issue the cp.async copies of one K chunk (8 input channels) of one tile into one stage.
// Input item k = (channel c, staged row r, float4 q), k = (c*XROWS + r)*17 + q, is float4 k of the stage;
// a thread's items are k = tid + THREADS*j, so (c, r, q) advance by constants instead of being divided out.
__device__ __forceinline__ void load_chunk(float* sx, float* sw, const float* __restrict__ x,
                                           const float* __restrict__ wf, const Geom& g, TileCoord tc, int cc) {
    const int tid = threadIdx.x;
    const float* wsrc = wf + (cc * CO_SPLIT + tc.hc) * W_STAGE;
#pragma unroll
    for (int k = tid; k < W_ITEMS; k += THREADS) cp_async16(sw + 4 * k, wsrc + 4 * k, 16);
    constexpr int DQ = THREADS % XCHUNKS, DROW = THREADS / XCHUNKS;
    constexpr int DR = DROW % XROWS, DC = DROW / XROWS;
    const float* xb = x + ((long long)(tc.n * CIN + cc * CK) * g.H + tc.oy0) * g.W + tc.ox0;
    const int rlim = g.H - tc.oy0, clim = g.W - tc.ox0;   // staged row r, column col exist iff < lim
    int q = tid % XCHUNKS, r = tid / XCHUNKS, c = r / XROWS;
    r -= c * XROWS;
    for (int k = tid; k < X_ITEMS; k += THREADS) {
        float* dst = sx + 4 * k;
        const float* src = xb + (long long)(c * g.H + r) * g.W + 4 * q;
        if (g.xvec) {
            const bool ok = r < rlim && 4 * q < clim;   // W % 4 == 0 and ox0 % 4 == 0: all four or none
            cp_async16(dst, ok ? src : x, ok ? 16 : 0);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool ok = r < rlim && 4 * q + e < clim;
                cp_async4(dst + e, ok ? src + e : x, ok ? 4 : 0);
            }
        }
        q += DQ; r += DR; c += DC;
        if (q >= XCHUNKS) { q -= XCHUNKS; ++r; }
        if (r >= XROWS) { r -= XROWS; ++c; }
    }
}

// TF32: round the chunk's input once in shared memory (each thread the float4s it copied itself, which its
// own cp.async.wait_group made visible to it), so the inner loop feeds the MMAs with no conversion.
__device__ __forceinline__ void round_chunk(float* sx) {
    for (int k = threadIdx.x; k < X_ITEMS; k += THREADS) {
        float4* p = reinterpret_cast<float4*>(sx) + k;
        float4 v = *p;
        v.x = __uint_as_float(to_tf32(v.x)); v.y = __uint_as_float(to_tf32(v.y));
        v.z = __uint_as_float(to_tf32(v.z)); v.w = __uint_as_float(to_tf32(v.w));
        *p = v;
    }
}

// One K chunk: 9 taps x (MT m16 x 8 n8) MMAs for this warp's CO_T Cout x 64 pixels.
//   A (16 Cout x 8 ch):  the lane's float4 at sw[(tap*MT + i)*WPARTS + part][lane] (see the pre-pass)
//   B (8 ch x 8 px):     b[r] = X[ch = tq + 4r][row = warp + ky][col = 8j + gid + kx]
__device__ __forceinline__ void compute_chunk(float (&acc)[MT][8][4], const float* sx, const float* sw,
                                              int warp, int lane) {
    const int gid = lane >> 2, tq = lane & 3;
    const float* xs = sx + tq * XCS + warp * XRS + gid;
    const float4* wq = reinterpret_cast<const float4*>(sw) + lane;
#pragma unroll
    for (int tap = 0; tap < TAPS; ++tap) {
        const int ky = tap / KS, kx = tap % KS;
        uint32_t a[MT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i) {
            const float4 v = wq[(tap * MT + i) * 32];
            a[i][0] = __float_as_uint(v.x); a[i][1] = __float_as_uint(v.y);
            a[i][2] = __float_as_uint(v.z); a[i][3] = __float_as_uint(v.w);
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const uint32_t b0 = __float_as_uint(xs[ky * XRS + kx + 8 * j]);
            const uint32_t b1 = __float_as_uint(xs[4 * XCS + ky * XRS + kx + 8 * j]);
#pragma unroll
            for (int i = 0; i < MT; ++i) mma_tf32(acc[i][j], a[i], b0, b1);
        }
    }
}

// compute_chunk's 3xtf32 form: each operand split into big and small parts, three MMAs per product.
__device__ __forceinline__ void compute_chunk_split(float (&acc)[MT][8][4], const float* sx, const float* sw,
                                                    int warp, int lane) {
    const int gid = lane >> 2, tq = lane & 3;
    const float* xs = sx + tq * XCS + warp * XRS + gid;
    const float4* wq = reinterpret_cast<const float4*>(sw) + lane;
    // Two-level accumulation: the MMAs of FLUSH taps (3*FLUSH MMAs, 8*FLUSH products per element) go into
    // a fresh partial sum, which is then added to the FP32 total with an ordinary round-to-nearest FADD.
    // The tensor core's own additions truncate (see the header); this keeps each truncation at the scale
    // of a small partial sum and lets the errors of successive partials, of either sign, cancel.
    float part[MT][8][4];
#pragma unroll
    for (int tap = 0; tap < TAPS; ++tap) {
        const int ky = tap / KS, kx = tap % KS;
        uint32_t ab[MT][4], as[MT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i) {
            const float4 vb = wq[((tap * MT + i) * 2) * 32], vs = wq[((tap * MT + i) * 2 + 1) * 32];
            ab[i][0] = __float_as_uint(vb.x); ab[i][1] = __float_as_uint(vb.y);
            ab[i][2] = __float_as_uint(vb.z); ab[i][3] = __float_as_uint(vb.w);
            as[i][0] = __float_as_uint(vs.x); as[i][1] = __float_as_uint(vs.y);
            as[i][2] = __float_as_uint(vs.z); as[i][3] = __float_as_uint(vs.w);
        }
        // Two halves of 4 n8 columns, each in three passes over its 2 x 4 tiles (small products first),
        // then its flush. Numerically the same per element as a plain j loop; this order is what lets
        // ptxas keep dependent MMAs apart (SASS: median 24 instructions from an MMA to the next MMA on
        // the same tile, vs 20 with more back-to-back pairs) and the half's B fragments die early.
#pragma unroll
        for (int jh = 0; jh < 8; jh += 4) {
            uint32_t bb[4][2], bs[4][2];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                split_tf32(xs[ky * XRS + kx + 8 * (jh + j)], bb[j][0], bs[j][0]);
                split_tf32(xs[4 * XCS + ky * XRS + kx + 8 * (jh + j)], bb[j][1], bs[j][1]);
            }
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    if (tap % FLUSH == 0) mma_tf32_zc(part[i][jh + j], as[i], bb[j][0], bb[j][1]);
                    else                  mma_tf32(part[i][jh + j], as[i], bb[j][0], bb[j][1]);
                }
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int i = 0; i < MT; ++i) mma_tf32(part[i][jh + j], ab[i], bs[j][0], bs[j][1]);
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int i = 0; i < MT; ++i) mma_tf32(part[i][jh + j], ab[i], bb[j][0], bb[j][1]);
            if (tap % FLUSH == FLUSH - 1) {
#pragma unroll
                for (int j = 0; j < 4; ++j)
#pragma unroll
                    for (int i = 0; i < MT; ++i)
#pragma unroll
                        for (int r = 0; r < 4; ++r) acc[i][jh + j][r] += part[i][jh + j][r];
            }
        }
    }
}

// Bias, epilogue and 16-byte stores of this warp's output row, one m16 slice (16 channels) at a time
// through the warp's staging buffer. The accumulators (+ bias) are parked in staging first and the
// epilogue runs on float4s read back from it: erf-GELU then never has more than 4 values in flight next
// to the 128 (3xtf32: 64) live accumulators (computing it straight from the accumulators spilled
// registers), and it runs only for pixels inside the output. Staging row r holds channel 16i + r (of the
// tile's Cout slice, from co0) shifted right by that
// row's misalignment sh (floats), so float4 k of the staging row is the aligned global float4 at
// y_row - sh + 4k. Row c's misalignment is (sh0 + c * (plane mod 4)) mod 4: no 64-bit math per row.
__device__ __forceinline__ void store_tile(float (&acc)[MT][8][4], float* stg, const float* __restrict__ bias,
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
    const int co0 = tc.hc * CO_T;               // this tile's first output channel (0 for tf32)
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = gid + 8 * h, c = co0 + 16 * i + r;
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
        const int c = co0 + 16 * i + sr;
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
            v.x = epilogue_conv2d(v.x, p); v.y = epilogue_conv2d(v.y, p);
            v.z = epilogue_conv2d(v.z, p); v.w = epilogue_conv2d(v.w, p);
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
conv2d_mma_kernel(const float* __restrict__ x, const float* __restrict__ wf, const float* __restrict__ bias,
                  const float* __restrict__ mult, float* __restrict__ y, Geom g) {
    extern __shared__ __align__(16) float smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

    const int my_tiles = (g.tiles - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;
    const int iters = my_tiles * NCHUNK;
    auto tile_of = [&](int it) { return tile_coord(g, (int)blockIdx.x + (it / NCHUNK) * (int)gridDim.x); };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < iters)
            load_chunk(smem + s * STAGE, smem + s * STAGE + X_STAGE, x, wf, g, tile_of(s), s % NCHUNK);
        cp_async_commit();
    }

    // acc is zeroed at the top of the tile loop, never inside the chunk loop: a conditional reset there
    // makes the compiler keep two copies of the 128 accumulators (and spill).
    int it = 0;                                  // flattened (tile, chunk) index: the pipeline position
#pragma unroll 1
    for (int t = 0; t < my_tiles; ++t) {
        float acc[MT][8][4];
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

#pragma unroll 1
        for (int cc = 0; cc < NCHUNK; ++cc, ++it) {
            float* sx = smem + (it % STAGES) * STAGE;
            cp_async_wait<STAGES - 2>();         // this thread's copies of chunk `it` have landed
            if constexpr (!SPLIT) round_chunk(sx);
            __syncthreads();                     // ... everyone's; and stage (it-1) is no longer read
            const int nx = it + STAGES - 1;      // refill the stage chunk it-1 used; may be the next tile's
            if (nx < iters) {
                float* nsx = smem + (nx % STAGES) * STAGE;
                load_chunk(nsx, nsx + X_STAGE, x, wf, g, tile_of(nx), nx % NCHUNK);
            }
            cp_async_commit();
            if constexpr (SPLIT) compute_chunk_split(acc, sx, sx + X_STAGE, warp, lane);
            else compute_chunk(acc, sx, sx + X_STAGE, warp, lane);
        }
        // The stage of the last chunk is free once every warp is done with it: it becomes the output
        // staging buffer, and is refilled only after the next chunk's barrier, i.e. after every store_tile.
        __syncthreads();
        float* stg = smem + ((it - 1) % STAGES) * STAGE + warp * O_WARP;
        store_tile(acc, stg, bias, mult, y, g, tile_of(it - 1), warp, lane);
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
    const long long tiles = (long long)a.N * g.tiles_x * g.tiles_y * CO_SPLIT;
    if (tiles > 0x7fffffffLL) return "04_implicit_gemm_mma (conv2d): too many tiles for a 32-bit tile index";
    g.tiles = (int)tiles;
    g.xvec = (a.W % 4 == 0) && (reinterpret_cast<uintptr_t>(a.x) % 16 == 0);

    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return "04_implicit_gemm_mma (conv2d): cannot query the device";
    if (cudaFuncSetAttribute(conv2d_mma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)SMEM_BYTES) != cudaSuccess)
        return "04_implicit_gemm_mma (conv2d): device cannot give the kernel its dynamic shared memory";
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, conv2d_mma_kernel, THREADS, SMEM_BYTES) !=
            cudaSuccess || per_sm < 1)
        return "04_implicit_gemm_mma (conv2d): kernel does not fit on this device";
    cudaMemPool_t pool = cf_weight_pool(dev);
    float* wf = nullptr;
    if (pool == nullptr ||
        cudaMallocFromPoolAsync(reinterpret_cast<void**>(&wf), WPREP_FLOATS * sizeof(float), pool, stream) !=
            cudaSuccess)
        return "04_implicit_gemm_mma (conv2d): cannot allocate the weight pre-pass buffer";

    conv2d_wprep_kernel<<<cf_ceil_div(WPREP_FLOATS, 256), 256, 0, stream>>>(a.w, wf);
    const long long slots = (long long)sms * per_sm;
    const int grid = (int)(tiles < slots ? tiles : slots);
    conv2d_mma_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(a.x, wf, a.bias, a.param, a.y, g);
    cudaFreeAsync(wf, stream);                   // stream-ordered: released once the kernel is done
    return nullptr;
}
