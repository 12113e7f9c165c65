// conv_epilogue_window.cuh — the family's second tensor-core template: the study's step-04 design (kernels/conv2d/
// 04_implicit_gemm_mma.cu, kernels/conv3d/04_implicit_gemm_mma.cu) for any Cin and Cout, 2-D or 3-D (k=3, stride 1, no
// padding), with the generated epilogue compiled in. mma.sync m16n8k8 TF32 (sm_80+). Two designs from one file, the
// template parameter S, in the precision classes of the first template's two:
//   kTF32 (design tf32w): TF32 operands (weights rounded by the pre-pass, the input window once in shared memory),
//     FP32 accumulate, one MMA per product.
//   k3xTF32 (design 3xtf32w, the FP32 bound): v = big + small; weights split by the pre-pass (big = cvt.rna(v clamped
//     to the largest finite TF32), small = cvt.rna(v - big)), the input at fragment load the study's cheap way (big = v
//     clamped, low 13 bits cleared; small = v - big, read by the MMA as TF32); small x big + big x small + big x big.
//   kTF32H (design tf32h, sm_90a, 2-D): this file's pipeline around conv_epilogue_window_wgmma.cuh's wgmma core (its
//     WinCore), the accumulators as study step 04d's.
//
// What changed from the first family design (conv_epilogue_mma.cuh, tf32 / 3xtf32; H100 2026-12-07 8x slower than the
//   study's 04 on 54 and 90): there each block gathered A per element from global memory with a div/mod per element,
//   re-gathered the input for every 32 Cout, had 64-pixel tiles, no cp.async, 16-accumulator warps. Here, as in 04:
//   GEMM: M = Cout, N = output pixels, K = (8-channel chunk, tap, channel). M = Cout because a thread's accumulator
//     pairs are then two consecutive pixels of one channel (NCHW). Each k8 step is the chunk's 8 channels at one tap,
//     so B is read straight from a haloed input window in shared memory at a compile-time tap offset (no im2col, no
//     division in the inner loop: LDS + MMA); Cin past a multiple of 8 (3, 17) is zero-filled (window and weights).
//   Weights: a pre-pass (one small kernel per call, grid-stride) writes them in A-fragment order, rounded or split,
//     [chunk][Cout slice][tap][m16][part][lane][4], to a stream-ordered pooled buffer; one fragment is one LDS.128
//     (3xtf32: two). All chunks and slices within kResidentBytes (Cin up to 8, but 90 in 3xtf32w): copied once a
//     block and kept; else (Cin 64; 90 in 3xtf32w) each stage copies its (chunk, slice) with linear 16-byte cp.async.
//   Input window: per chunk, 8 channels x (TD+2 depths) x (TH+2 rows) x 68 columns by cp.async, 16-byte where W % 4 ==
//     0 and x is 16-byte aligned, 4-byte otherwise, zero-filled past the volume; channel stride padded to 8 or 24
//     mod 32 (a B fragment's 4 k-rows in disjoint bank groups).
//   Launch: persistent grid = min(tiles, SMs x resident blocks); a block of 4 warps, a warp one output row x 64
//     columns (8 n8 tiles) x CO_T Cout (MT m16 tiles): 2-D 4 rows, 3-D 2 depths x 2 rows. CO_T = Cout rounded up to 16,
//     at most 64 (tf32: 128 accumulators a thread) or 32 (3xtf32: 64 + 32 partial sums); a block walks its tile's Cout
//     slices in turn (Cout 128: 2 tf32, 4 3xtf32), restaging the window (from L2) per slice, so one block sees every
//     channel of its pixels: the reduction over channels is a register fold, per lane 2 pixels, in channel order.
//     Stages: 2, double-buffered over the flattened (tile, slice, chunk) sequence (the next tile's first chunk is in
//     flight during this tile's epilogue); 1 where two would not leave 2 blocks an SM (3-D: window 35 KB, weights
//     55 KB; the next tile's window is copied under the epilogue, as conv3d 04).
//   Epilogue: acc + bias parked per warp, 16 channels x 64 pixels at a time (float2, conflict-free), read back a lane
//     a pixel: Epi::apply, coalesced streaming stores (a warp: 32 consecutive pixels of a channel); with kReduces,
//     Epi::combine into the lane's 2 registers, Epi::post(finish) and one store after the last slice.
//   3xTF32's two levels (the first template's header): a tap's 3 MMAs into a fresh partial sum, added with a
//     round-to-nearest FADD. Emulated, worst of three draws: 54 4.8e-7, kb57 4.2e-7; a partial per kernel row (as 04)
//     gave 1.4e-6, too near the 2e-6 bound. Partials for 4 of the 8 n8 columns at a time: all 8 spilled at 255 registers.
// Per problem (ptxas 13.0, sm_90, registers; shared memory a block; all 2 blocks an SM, none spills):
//   54 (64->64)        tf32w 238 regs, 2 stages, 80 KB (weights per chunk)  3xtf32w 227, 2 slices of 32, 80 KB
//   kb1/kb4/kb32 (->128) tf32w 228-239, 2 slices of 64, 80 KB              3xtf32w 221-227, 4 slices, 80 KB
//   kb57/kb71 (8->64)  tf32w 207, weights resident, 62 KB                   3xtf32w 207, 80 KB
//   90 (3-D 8->64)     tf32w 242, weights resident, 1 stage, 106 KB         3xtf32w 217, weights per slice, 106 KB
//   kb7 (3-D 8->32)    tf32w 156, 1 stage, 79 KB                            3xtf32w 200, 106 KB
//   kb48 (3-D 3->16)   tf32w 112, 2 stages, 100 KB                          3xtf32w 122, 1 stage, 79 KB
// SASS (sm_90, 54): tf32w's chunk loop is 288 HMMA and 165 LDS only, as 04's; 3xtf32w's kernel row 144 HMMA beside
//   220 FADD (splits, partial sums), 89 FMNMX, 48 LOP3, 56 LDS (a partial per row would drop 128 of those FADDs).
// Bytes (DRAM, KernelBench shapes, x read once + y written once): 54 1.07 + 1.06 GB; 90 0.27 + 1.76 GB; kb1 0.54 +
//   1.04 GB; kb57 0.07 + 0.52 GB. L2 -> SM: the window 1.5x (2-D) or 2x (3-D) of x per Cout slice; the weights per
//   chunk and tile where not resident (54 tf32w 2.4 GB, as 04; 90 3xtf32w 3 GB).
// Bound: as 04, the LDS -> MMA latency at 8 warps an SM (54: 304 GFLOP of TF32 MMAs, 3xtf32w 3x), y's writes where
//   the GEMM is small (kb57: 0.59 GB of DRAM traffic, 0.19 ms at the H100's 3.04 TB/s; its K = 72 MMAs take less).
// PREDICTION (H100, not yet run on a GPU), from 04's measured 2.178 / 1.849 ms (tf32) and 5.34 / 3.25 ms (3xtf32) and
//   the bytes above; what this template adds to 04: generic index math, an epilogue of scalar stores (04: 16-byte),
//   3xtf32w's partial sum per tap (04: per row) and A's fragments loaded twice:
//     54   tf32w 2.3 ms (1.2x torch.compile's 2.75), 3xtf32w 5.8 ms (1.7x eager FP32's 9.92)
//     90   tf32w 2.0 ms (2.9x compile's 5.87), 3xtf32w 4.5 ms (a slice restages 55 KB of weights; 2.5x eager FP32)
//     kb1  tf32w 2.3 ms (54's MMA work; 0.85x compile's 1.95: slower), 3xtf32w 5.8 ms (1.6x eager FP32's 9.08)
//     kb57 tf32w 0.25 ms (y-write bound; 3.2x compile's 0.80), 3xtf32w 0.3 ms (9.9x eager FP32's 2.98)
//   Against the first family design's H100 times (2026-12-07, tf32): 54 8x, 90 5.8x, kb1 7.8x, kb57 5x.
// Odd shapes: any N, D, H, W >= 3; rows and columns past the output computed on zero-filled input, never stored.
#pragma once

namespace cf_family {

constexpr int kWinWarps = 4;                  // a warp one output row
constexpr int kWinThreads = 128;
static_assert(kWinThreads == 32 * kWinWarps, "a block is kWinWarps warps");
constexpr int kTW = 64;                       // output columns per warp row: 8 n8 tiles
constexpr int kCK = 8;                        // input channels per chunk: one k8 step per tap
constexpr int kCoutSlice = 64;                // tf32: Cout a slice at most (128 accumulators a thread)
constexpr int kCoutSlice3x = 32;              // 3xtf32: Cout a slice at most (64 accumulators + 32 partial sums)
constexpr int kXQ = 17;                       // 16-byte items per staged row (66 columns used)
constexpr int kXRS = 68;                      // staged row stride, floats
constexpr int kORS = 72;                      // epilogue staging row stride: 8 mod 32, float2 parking conflict-free
constexpr int kORSH = 68;                     // tf32h's: 4 mod 32, its float2 parking (pixel pairs) conflict-free
constexpr int kResidentBytes = 65536;         // pre-arranged weights up to this: copied once a block, kept
constexpr int kSmemCap = 113 * 1024;          // two blocks an SM on H100/H200 (228 KB, 1 KB reserved a block)
constexpr int kFlushTaps = 1;                 // 3xTF32: taps per partial sum, 1 or 3 (see the header)
constexpr int kPrepThreads = 256;             // the weight pre-pass

enum Split : int { kTF32 = 0, k3xTF32 = 1, kTF32H = 2 };

__host__ __device__ constexpr int win_pad_bank(int v) {   // a channel stride of 8 or 24 mod 32 words
    while (v % 32 != 8 && v % 32 != 24) v += 4;
    return v;
}

// Everything the launch, the pre-pass and the kernel derive from <CIN, COUT, DIMS, S>.
template <int CIN, int COUT, int DIMS, Split S>
struct WinGeom {
    static_assert(DIMS == 2 || DIMS == 3, "the family's convs are 2-D or 3-D");
    static constexpr int TAPS = DIMS == 3 ? 27 : 9;
    static constexpr int KD = DIMS == 3 ? 3 : 1;
    static constexpr int TD = DIMS == 3 ? 2 : 1, TH = kWinWarps / TD;   // output depths x rows a tile
    static constexpr int XD = DIMS == 3 ? TD + 2 : 1, XH = TH + 2;      // staged depths x rows
    static constexpr int XSS = XH * kXRS;                               // staged depth-slice stride
    static constexpr int XCS = win_pad_bank(XD * XSS);                  // staged channel stride
    static constexpr int NCHUNK = (CIN + kCK - 1) / kCK;
    static constexpr int CO16 = (COUT + 15) / 16 * 16;
    static constexpr int CO_MAX = S == k3xTF32 ? kCoutSlice3x : kCoutSlice;
    static constexpr int CO_T = S == kTF32H ? kCoutSlice                // Cout a slice (tf32h: wgmma's N, padded)
                                           : CO16 < CO_MAX ? CO16 : CO_MAX;
    static constexpr int MT = CO_T / 16;                                // m16 tiles a warp
    static constexpr int CO_SPLIT = (COUT + CO_T - 1) / CO_T;           // slices a tile
    static constexpr int PARTS = S == k3xTF32 ? 2 : 1;                  // weight planes: big (tf32: rounded), small
    static constexpr int W_SLICE = TAPS * MT * PARTS * 128;            // floats of one (chunk, slice)
    static constexpr int W_TOTAL = NCHUNK * CO_SPLIT * W_SLICE;
    static constexpr bool RESIDENT = W_TOTAL * 4 <= kResidentBytes;
    static constexpr int X_STAGE = kCK * XCS;
    static constexpr int X_ITEMS = kCK * XD * XH * kXQ;                // 16-byte items of one window
    static constexpr int STAGE = X_STAGE + (RESIDENT ? 0 : W_SLICE);
    static constexpr int ORS = S == kTF32H ? kORSH : kORS;
    static constexpr int STG = kWinWarps * 16 * ORS;                   // epilogue staging
    static constexpr int FIXED = (RESIDENT ? W_TOTAL : 0) + STG;
    static constexpr int STAGES = (FIXED + 2 * STAGE) * 4 <= kSmemCap ? 2 : 1;
    static constexpr int SMEM_BYTES = (FIXED + STAGES * STAGE) * 4;
    static constexpr int PER_TILE = CO_SPLIT * NCHUNK;                  // pipeline steps a tile
    static_assert(XCS % 4 == 0 && STG % 4 == 0 && W_SLICE % 4 == 0 && STAGE % 4 == 0, "16-byte aligned stages");
    static_assert(3 % kFlushTaps == 0, "a partial sum covers whole taps of one kernel row (win_compute's loop)");
};

// The tile walk: tiles = N x ceil(Do / TD) x ceil(Ho / TH) x ceil(Wo / 64), columns fastest.
struct WinTiles {
    int tiles_x, tiles_y, tiles_z, tiles;
    bool xvec;   // 16-byte cp.async legal for x rows
};
struct WinTile { int n, od0, oh0, ox0; };


// --- cp.async primitives (tests/test_family_emulated.py replaces this block with host emulations) ---
// src_bytes < the copy's size zero-fills the rest: input past the volume becomes the GEMM's zero padding.
__device__ __forceinline__ void cp_async16(float* dst, const float* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async4(float* dst, const float* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }
// --- end of cp.async primitives ---

// 3xTF32 split of an input element at fragment load (kernels/common.cuh's): big = v clamped to +-TF32_MAX (so an Inf
// lands in small), low 13 bits cleared; small = v - big, exact, handed to the MMA as is.
__device__ __forceinline__ void win_split_fast(float v, unsigned& big, unsigned& small) {
    constexpr float kTF32Max = 0x1.ffcp+127f;
    big = __float_as_uint(fminf(fmaxf(v, -kTF32Max), kTF32Max)) & 0xffffe000u;
    small = __float_as_uint(v - __uint_as_float(big));
}

template <class G>
__device__ __forceinline__ WinTile win_tile(const FamilyArgs& a, const WinTiles& g, int tile) {
    const int tx = tile % g.tiles_x;
    int t = tile / g.tiles_x;
    const int ty = t % g.tiles_y;
    t /= g.tiles_y;
    const int tz = t % g.tiles_z;
    return {t / g.tiles_z, tz * G::TD, ty * G::TH, tx * kTW};
}

// The cp.async copies of chunk cc's window: item k = ((c * XD + dz) * XH + hy) * 17 + q, items tid + 128 j.
template <class G, int CIN>
__device__ __forceinline__ void win_load_x(float* sx, const FamilyArgs& a, const WinTiles& g, WinTile tc, int cc) {
    for (int k = threadIdx.x; k < G::X_ITEMS; k += kWinThreads) {
        const int q = k % kXQ;
        int row = k / kXQ;
        const int hy = row % G::XH;
        row /= G::XH;
        const int dz = row % G::XD, c = row / G::XD;
        const int ci = kCK * cc + c, id = tc.od0 + dz, ih = tc.oh0 + hy, ix = tc.ox0 + 4 * q;
        float* dst = sx + c * G::XCS + dz * G::XSS + hy * kXRS + 4 * q;
        const bool row_ok = ci < CIN && id < a.D && ih < a.H;
        const float* src = a.x + ((((long long)tc.n * CIN + (row_ok ? ci : 0)) * a.D + (row_ok ? id : 0)) * a.H +
                                  (row_ok ? ih : 0)) * a.W;
        if (g.xvec) {
            const bool ok = row_ok && ix < a.W;   // W % 4 == 0, ix % 4 == 0: all four or none
            cp_async16(dst, ok ? src + ix : a.x, ok ? 16 : 0);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool ok = row_ok && ix + e < a.W;
                cp_async4(dst + e, ok ? src + ix + e : a.x, ok ? 4 : 0);
            }
        }
    }
}

// TF32: round the window once in shared memory, each thread the items it copied itself (its own wait made them visible
// to it), so the MMAs take B with no conversion.
template <class G>
__device__ __forceinline__ void win_round_x(float* sx) {
    for (int k = threadIdx.x; k < G::X_ITEMS; k += kWinThreads) {
        const int q = k % kXQ, row = k / kXQ;
        const int hy = row % G::XH, dz = (row / G::XH) % G::XD, c = row / (G::XH * G::XD);
        float4* p = reinterpret_cast<float4*>(sx + c * G::XCS + dz * G::XSS + hy * kXRS + 4 * q);
        float4 v = *p;
        v.x = __uint_as_float(to_tf32(v.x)); v.y = __uint_as_float(to_tf32(v.y));
        v.z = __uint_as_float(to_tf32(v.z)); v.w = __uint_as_float(to_tf32(v.w));
        *p = v;
    }
}

// One chunk: TAPS k8 steps x (MT m16 x 8 n8) MMAs for this warp's CO_T Cout x 64 pixels.
//   A: the lane's float4 at sw[((tap MT + i) PARTS + part) 32 + lane] (the pre-pass's order)
//   B: b[r] = X[ch = t + 4 r][depth + kz][row + ky][col 8 j + g + kx]
template <class G, Split S>
__device__ __forceinline__ void win_compute(float (&acc)[G::MT][8][4], const float* sx, const float* sw, int warp,
                                            int lane) {
    const int g = lane >> 2, t = lane & 3;
    const float* xs = sx + t * G::XCS + (warp / G::TH) * G::XSS + (warp % G::TH) * kXRS + g;
    const float4* wq = reinterpret_cast<const float4*>(sw) + lane;
#pragma unroll 1
    for (int kz = 0; kz < G::KD; ++kz) {
        const float* xk = xs + kz * G::XSS;
        const float4* wk = wq + kz * 9 * G::MT * G::PARTS * 32;
        if constexpr (S == k3xTF32) {
            // Two halves of 4 n8 columns, each over all taps: the partial sums then cost 4 x MT x 4 registers, not
            // 8 x MT x 4, for A's fragments loaded twice. A partial sum is one kernel row (kFlushTaps = 3 taps, kx
            // unrolled) and the rows are a loop, not unrolled: unrolled, ptxas hoisted the loads of later rows and
            // spilled at 255 registers.
#pragma unroll
            for (int jh = 0; jh < 8; jh += 4) {
#pragma unroll 1
                for (int ky = 0; ky < 3; ++ky) {
                    const float* xr = xk + ky * kXRS + 8 * jh;
                    const float4* wr = wk + ky * 3 * G::MT * 2 * 32;
                    float part[G::MT][4][4];
#pragma unroll
                    for (int kx = 0; kx < 3; ++kx) {
                        if (kx % kFlushTaps == 0) {
#pragma unroll
                            for (int i = 0; i < G::MT; ++i)
#pragma unroll
                                for (int j = 0; j < 4; ++j)
#pragma unroll
                                    for (int e = 0; e < 4; ++e) part[i][j][e] = 0.0f;
                        }
                        unsigned ab[G::MT][4], as[G::MT][4];
#pragma unroll
                        for (int i = 0; i < G::MT; ++i) {
                            const float4 vb = wr[((kx * G::MT + i) * 2) * 32], vs = wr[((kx * G::MT + i) * 2 + 1) * 32];
                            ab[i][0] = __float_as_uint(vb.x); ab[i][1] = __float_as_uint(vb.y);
                            ab[i][2] = __float_as_uint(vb.z); ab[i][3] = __float_as_uint(vb.w);
                            as[i][0] = __float_as_uint(vs.x); as[i][1] = __float_as_uint(vs.y);
                            as[i][2] = __float_as_uint(vs.z); as[i][3] = __float_as_uint(vs.w);
                        }
                        unsigned bb[4][2], bs[4][2];
#pragma unroll
                        for (int j = 0; j < 4; ++j) {
                            win_split_fast(xr[kx + 8 * j], bb[j][0], bs[j][0]);
                            win_split_fast(xr[4 * G::XCS + kx + 8 * j], bb[j][1], bs[j][1]);
                        }
                        // small products first
#pragma unroll
                        for (int j = 0; j < 4; ++j)
#pragma unroll
                            for (int i = 0; i < G::MT; ++i) mma_tf32(part[i][j], as[i], bb[j]);
#pragma unroll
                        for (int j = 0; j < 4; ++j)
#pragma unroll
                            for (int i = 0; i < G::MT; ++i) mma_tf32(part[i][j], ab[i], bs[j]);
#pragma unroll
                        for (int j = 0; j < 4; ++j)
#pragma unroll
                            for (int i = 0; i < G::MT; ++i) mma_tf32(part[i][j], ab[i], bb[j]);
                        if (kx % kFlushTaps == kFlushTaps - 1) {
#pragma unroll
                            for (int i = 0; i < G::MT; ++i)
#pragma unroll
                                for (int j = 0; j < 4; ++j)
#pragma unroll
                                    for (int e = 0; e < 4; ++e) acc[i][jh + j][e] += part[i][j][e];
                        }
                    }
                }
            }
        } else {
#pragma unroll
            for (int khw = 0; khw < 9; ++khw) {
                const int ky = khw / 3, kx = khw % 3;
                unsigned af[G::MT][4];
#pragma unroll
                for (int i = 0; i < G::MT; ++i) {
                    const float4 v = wk[(khw * G::MT + i) * 32];
                    af[i][0] = __float_as_uint(v.x); af[i][1] = __float_as_uint(v.y);
                    af[i][2] = __float_as_uint(v.z); af[i][3] = __float_as_uint(v.w);
                }
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const unsigned bf[2] = {__float_as_uint(xk[ky * kXRS + kx + 8 * j]),
                                            __float_as_uint(xk[4 * G::XCS + ky * kXRS + kx + 8 * j])};
#pragma unroll
                    for (int i = 0; i < G::MT; ++i) mma_tf32(acc[i][j], af[i], bf);
                }
            }
        }
    }
}

// The drain of a warp's row, shared by every design: 16 parked channels c0 .. c0 + 15 (staging row r = channel c0 + r,
// column = pixel, row stride ORS), read back a lane a pixel (columns lane, lane + 32): Epi::apply, then a streaming store
// or the fold over channels (channel order: slices, 16-channel groups, rows increasing). The caller has checked that the
// row is in the output.
template <class G, int COUT, class Epi>
__device__ __forceinline__ void win_drain(float (&racc)[2], const float* stg, const FamilyArgs& a, WinTile tc, int c0,
                                          int warp, int lane) {
    const int od = tc.od0 + warp / G::TH, oh = tc.oh0 + warp % G::TH;
    const int L = a.Wo - tc.ox0 < kTW ? a.Wo - tc.ox0 : kTW;   // valid pixels of the row segment
    const long long plane = (long long)a.Do * a.Ho * a.Wo;
    const long long pix = ((long long)od * a.Ho + oh) * a.Wo + tc.ox0;
#pragma unroll 1
    for (int r = 0; r < 16; ++r) {
        const int c = c0 + r;
        if (c >= COUT) break;   // warp-uniform: Cout's padding
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int col = lane + 32 * half;
            if (col >= L) continue;
            const float v = Epi::apply(stg[r * G::ORS + col], c, a.params);
            if constexpr (Epi::kReduces) racc[half] = Epi::combine(racc[half], v);
            else __stcs(a.y + ((long long)tc.n * COUT + c) * plane + pix + col, v);
        }
    }
}

// One slice's epilogue for this warp's row: acc + bias parked 16 channels at a time in the warp's staging (float2,
// conflict-free), then drained.
template <class G, int COUT, class Epi>
__device__ __forceinline__ void win_epilogue(float (&acc)[G::MT][8][4], float (&racc)[2], float* stg,
                                             const FamilyArgs& a, WinTile tc, int hc, int warp, int lane) {
    const int od = tc.od0 + warp / G::TH, oh = tc.oh0 + warp % G::TH;
    if (od >= a.Do || oh >= a.Ho) return;   // warp-uniform: this row overhangs the output
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < G::MT; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = g + 8 * h, c = G::CO_T * hc + 16 * i + r;
            const float b = a.bias != nullptr && c < COUT ? __ldg(a.bias + c) : 0.0f;
            float* srow = stg + r * kORS + 2 * t;
#pragma unroll
            for (int j = 0; j < 8; ++j)
                *reinterpret_cast<float2*>(srow + 8 * j) = make_float2(acc[i][j][2 * h] + b, acc[i][j][2 * h + 1] + b);
        }
        __syncwarp();
        win_drain<G, COUT, Epi>(racc, stg, a, tc, G::CO_T * hc + 16 * i, warp, lane);
        __syncwarp();   // the staging is rewritten by the next m16 tile
    }
}

// What the window's compute paths differ in (this file's mma.sync; tf32h's wgmma, conv_epilogue_window_wgmma.cuh,
// specializes it): the accumulators, what a thread does once its copies have landed, one chunk's MMAs, one slice's
// epilogue, and the pre-pass's element f.
template <int CIN, int COUT, int DIMS, Split S>
struct WinCore {
    using G = WinGeom<CIN, COUT, DIMS, S>;
    using Acc = float[G::MT][8][4];
    static __device__ __forceinline__ void zero(Acc& acc) {
#pragma unroll
        for (int i = 0; i < G::MT; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    }
    static __device__ __forceinline__ void landed(float* st) {
        if constexpr (S == kTF32) win_round_x<G>(st);
    }
    static __device__ __forceinline__ void compute(Acc& acc, const float* st, const float* sw, int warp, int lane) {
        win_compute<G, S>(acc, st, sw, warp, lane);
    }
    template <class Epi>
    static __device__ __forceinline__ void epilogue(Acc& acc, float (&racc)[2], float* stg, const FamilyArgs& a,
                                                    WinTile tc, int hc, int warp, int lane) {
        win_epilogue<G, COUT, Epi>(acc, racc, stg + warp * 16 * kORS, a, tc, hc, warp, lane);
    }
    // [chunk cc][slice hc][tap][m16 i][part][lane][r]: a[r] of lane (g, t) in m16 tile i of slice hc = W[co = CO_T hc +
    // 16 i + g + 8 (r & 1)][ci = 8 cc + t + 4 (r >> 1)], rounded (tf32) or split into big and small (3xtf32, both
    // cvt.rna); zero past Cout and Cin.
    static __device__ __forceinline__ float weight(const float* __restrict__ w, int f) {
        const int r = f & 3, lane = (f >> 2) & 31;
        int t = f >> 7;
        const int part = t % G::PARTS;
        t /= G::PARTS;
        const int i = t % G::MT;
        t /= G::MT;
        const int tap = t % G::TAPS;
        t /= G::TAPS;
        const int hc = t % G::CO_SPLIT, cc = t / G::CO_SPLIT;
        const int co = G::CO_T * hc + 16 * i + (lane >> 2) + 8 * (r & 1);
        const int ci = kCK * cc + (lane & 3) + 4 * (r >> 1);
        const float v = co < COUT && ci < CIN ? __ldg(w + ((long long)co * CIN + ci) * G::TAPS + tap) : 0.0f;
        if constexpr (S == k3xTF32) {
            constexpr float kTF32Max = 0x1.ffcp+127f;
            const unsigned big = to_tf32(fminf(fmaxf(v, -kTF32Max), kTF32Max));
            return __uint_as_float(part == 0 ? big : to_tf32(v - __uint_as_float(big)));
        }
        return __uint_as_float(to_tf32(v));
    }
};

// Weight pre-pass: PyTorch [Cout][Cin][taps] -> the layout the design's MMAs read (WinCore::weight: element f), to a
// buffer of W_TOTAL floats.
template <int CIN, int COUT, int DIMS, Split S>
__global__ void __launch_bounds__(kPrepThreads) conv_window_wprep_kernel(const float* __restrict__ w,
                                                                        float* __restrict__ wf) {
    using G = WinGeom<CIN, COUT, DIMS, S>;
    for (int f = blockIdx.x * blockDim.x + threadIdx.x; f < G::W_TOTAL; f += gridDim.x * blockDim.x)
        wf[f] = WinCore<CIN, COUT, DIMS, S>::weight(w, f);
}

template <int CIN, int COUT, int DIMS, class Epi, Split S = kTF32>
__global__ void __launch_bounds__(kWinThreads, 2)
conv_epilogue_window_kernel(const FamilyArgs a, const float* __restrict__ wf, const WinTiles g) {
    using G = WinGeom<CIN, COUT, DIMS, S>;
    using C = WinCore<CIN, COUT, DIMS, S>;
    extern __shared__ __align__(16) float smem[];
    float* sw_res = smem;                                       // RESIDENT: every chunk's and slice's weights
    float* stg = smem + (G::RESIDENT ? G::W_TOTAL : 0);         // epilogue staging, 16 x ORS a warp
    float* stages = stg + G::STG;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    const int my_tiles = (g.tiles - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;
    const int iters = my_tiles * G::PER_TILE;
    // pipeline step it = (tile of this block, slice hc, chunk cc), chunk fastest
    auto load = [&](int it) {
        const int cc = it % G::NCHUNK, hc = (it / G::NCHUNK) % G::CO_SPLIT;
        const WinTile tc = win_tile<G>(a, g, (int)blockIdx.x + (it / G::PER_TILE) * (int)gridDim.x);
        float* st = stages + (it % G::STAGES) * G::STAGE;
        win_load_x<G, CIN>(st, a, g, tc, cc);
        if constexpr (!G::RESIDENT) {
            const float* src = wf + (cc * G::CO_SPLIT + hc) * G::W_SLICE;
            for (int k = threadIdx.x; k < G::W_SLICE / 4; k += kWinThreads)
                cp_async16(st + G::X_STAGE + 4 * k, src + 4 * k, 16);
        }
    };

    if constexpr (G::RESIDENT)
        for (int k = threadIdx.x; k < G::W_TOTAL / 4; k += kWinThreads) cp_async16(sw_res + 4 * k, wf + 4 * k, 16);
    if (iters > 0) load(0);
    cp_async_commit();

    int it = 0;
#pragma unroll 1
    for (int tl = 0; tl < my_tiles; ++tl) {
        const WinTile tc = win_tile<G>(a, g, (int)blockIdx.x + tl * (int)gridDim.x);
        float racc[2] = {Epi::init(), Epi::init()};   // kReduces: this lane's pixels lane, lane + 32
#pragma unroll 1
        for (int hc = 0; hc < G::CO_SPLIT; ++hc) {
            typename C::Acc acc;
            C::zero(acc);
#pragma unroll 1
            for (int cc = 0; cc < G::NCHUNK; ++cc, ++it) {
                float* st = stages + (it % G::STAGES) * G::STAGE;
                cp_async_wait_all();                       // this thread's copies of step it have landed
                C::landed(st);
                __syncthreads();                           // ... everyone's; and no warp still reads step it - 1
                if constexpr (G::STAGES == 2) {            // refill the stage step it - 1 used
                    if (it + 1 < iters) load(it + 1);
                    cp_async_commit();
                }
                const float* sw = G::RESIDENT ? sw_res + (cc * G::CO_SPLIT + hc) * G::W_SLICE : st + G::X_STAGE;
                C::compute(acc, st, sw, warp, lane);
                if constexpr (G::STAGES == 1) {            // one stage: refill it once every warp is done with it
                    __syncthreads();
                    if (it + 1 < iters) load(it + 1);
                    cp_async_commit();
                }
            }
            C::template epilogue<Epi>(acc, racc, stg, a, tc, hc, warp, lane);
        }
        if constexpr (Epi::kReduces) {
            const int od = tc.od0 + warp / G::TH, oh = tc.oh0 + warp % G::TH;
            if (od < a.Do && oh < a.Ho) {
                const long long pix = ((long long)od * a.Ho + oh) * a.Wo + tc.ox0;
                const long long plane = (long long)a.Do * a.Ho * a.Wo;
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int col = lane + 32 * half;
                    if (tc.ox0 + col < a.Wo)
                        a.y[tc.n * plane + pix + col] = Epi::post(Epi::finish(racc[half]), a.params);
                }
            }
        }
    }
    cp_async_wait_all();
}

// The pre-pass's buffer: a pool per device that keeps its memory (stream-ordered, so launches on two streams never
// share a buffer, and every call after the first is free of driver work); created once, on first use.
inline cudaMemPool_t win_weight_pool(int dev) {
    struct Pools {
        cudaMemPool_t p[64] = {};
        Pools() {
            int n = 0;
            if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
            for (int d = 0; d < n && d < 64; ++d) {
                cudaMemPoolProps props = {};
                props.allocType = cudaMemAllocationTypePinned;
                props.location.type = cudaMemLocationTypeDevice;
                props.location.id = d;
                if (cudaMemPoolCreate(&p[d], &props) != cudaSuccess) { p[d] = nullptr; continue; }
                unsigned long long keep = ~0ull;
                cudaMemPoolSetAttribute(p[d], cudaMemPoolAttrReleaseThreshold, &keep);
            }
        }
    };
    static Pools pools;   // initialized once, thread-safe (C++11)
    return dev >= 0 && dev < 64 ? pools.p[dev] : nullptr;
}

template <int CIN, int COUT, int DIMS, class Epi, Split S = kTF32>
const char* launch_window(const FamilyArgs& a, cudaStream_t stream) {
    using G = WinGeom<CIN, COUT, DIMS, S>;
    if (const char* err = shape_error<CIN, COUT, DIMS>(a)) return err;
    if (a.N <= 0 || a.Do <= 0 || a.Ho <= 0 || a.Wo <= 0) return nullptr;   // nothing to compute
    WinTiles g;
    g.tiles_x = (a.Wo + kTW - 1) / kTW;
    g.tiles_y = (a.Ho + G::TH - 1) / G::TH;
    g.tiles_z = (a.Do + G::TD - 1) / G::TD;
    const long long tiles = (long long)a.N * g.tiles_z * g.tiles_y * g.tiles_x;
    if (tiles * G::PER_TILE > 0x7fffffffLL) return "input too large for a 32-bit tile index";
    g.tiles = (int)tiles;
    g.xvec = a.W % 4 == 0 && reinterpret_cast<unsigned long long>(a.x) % 16 == 0;

    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return "cannot query the device";
    if (cudaFuncSetAttribute(conv_epilogue_window_kernel<CIN, COUT, DIMS, Epi, S>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, G::SMEM_BYTES) != cudaSuccess)
        return "the device cannot give the kernel its dynamic shared memory";
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, conv_epilogue_window_kernel<CIN, COUT, DIMS, Epi, S>,
                                                      kWinThreads, G::SMEM_BYTES) != cudaSuccess || per_sm < 1)
        return "the kernel does not fit on this device";
    cudaMemPool_t pool = win_weight_pool(dev);
    float* wf = nullptr;
    if (pool == nullptr ||
        cudaMallocFromPoolAsync(reinterpret_cast<void**>(&wf), sizeof(float) * G::W_TOTAL, pool, stream) != cudaSuccess)
        return "cannot allocate the weight pre-pass buffer";
    const int prep_blocks = (G::W_TOTAL + kPrepThreads - 1) / kPrepThreads;
    const int prep_grid = prep_blocks < 4 * sms ? prep_blocks : 4 * sms;
    conv_window_wprep_kernel<CIN, COUT, DIMS, S><<<prep_grid, kPrepThreads, 0, stream>>>(a.w, wf);
    const long long slots = (long long)sms * per_sm;
    const int grid = (int)(tiles < slots ? tiles : slots);
    conv_epilogue_window_kernel<CIN, COUT, DIMS, Epi, S><<<grid, kWinThreads, G::SMEM_BYTES, stream>>>(a, wf, g);
    cudaFreeAsync(wf, stream);   // stream-ordered: released once the kernel is done
    return nullptr;
}

}  // namespace cf_family
