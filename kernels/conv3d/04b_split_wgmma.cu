// 04b_split_wgmma — conv3d step 04b, the FP32-accurate builds: implicit-GEMM conv + fused epilogue on Hopper's
// warpgroup MMA (wgmma, sm_90a only: H100/H200) with each operand split in two parts. The TF32 and FP16 builds of
// this step, and what changed from step 04, are 04b_implicit_gemm_wgmma.cu; this file is that kernel's tile loop
// with a second staged part and no group store.
//
// What changed from 04b's TF32 build: each input pixel and weight is staged as two parts whose products add up to
//   FP32 accuracy, so staging writes twice the bytes and each tap takes two or three wgmmas. Pixels are staged one per
//   thread (a warp's 32 consecutive pixel rows: conflict-free 16-byte stores of each part), and each tile is stored
//   alone, without the turn order or the group store.
//
// Precisions (template parameter P; the registry's define picks it: CF_3XTF32, CF_TF32BF16, CF_3XF16):
//   3xfp16     FP16 hi + lo parts (wgmma.cuh): per tap one k16 wgmma for both corrections, per tap pair one for
//              the main products, 41 per tile: FP32-level accuracy at 1.5 TF32 passes of tensor time. A warp's tile
//              is recomputed in FP32 where x or w is not finite or |x| >= 65520; tiles leave through the bulk-copy
//              engine (store_tile_bulk).
//   tf32+bf16  TF32 big + small parts; per tap one BF16 k16 wgmma for both corrections and one TF32 for big x big: 54.
//   3xtf32     both parts in TF32, three wgmmas per tap: 81.
//
// Launch: persistent, one block per SM (132 on the H200), tiles dealt block-major.
//   3xfp16              4 warpgroups (512 threads), 128 registers; shared memory 205,584 B
//   3xtf32, tf32+bf16   3 warpgroups (384 threads), 143 and 144 registers; 222,096 B
//
// Bytes moved at full size (x 128 x 8 x 16 x 64 x 64, y 128 x 64 x 14 x 62 x 62): DRAM x once 0.27 GB + y once
//   1.76 GB, as 04b's TF32 build. What bounds it: as 04b's TF32 build, the SM's chain per warpgroup of staging,
//   MMAs and epilogue, here with a second part to stage and 1.5 (3xfp16), 2 (tf32+bf16) or 3 (3xtf32) TF32 passes
//   of tensor time (0.40 ms a pass at 495 TFLOP/s: 0.6, 0.8 and 1.2 ms of the 1.33, 1.64 and 1.89 measured).
//
// Measured (H200, record of 2026-12-05; 04b tf32 0.778 ms): 3xfp16 1.331, tf32+bf16 1.641, 3xtf32 1.888; rel-L2
//   against float64 3.4e-7 to 6.5e-7.

// GEMM mapping: M = Cout = 64 (wgmma's fixed M), N = output pixels, K = 27 taps x 8 channels (one k8 step per tap).
//   A = weights. B = the haloed input tile: for tap (kd, kh, kw) the B operand of an output row is the staged input
//   row (kd, kh) shifted by kw pixels. Staged rows are exactly 64 pixels long and stored one after another, so one
//   wgmma of N = 64 starts kw pixels in: output columns 62 and 63 read the next row's first pixels and are never
//   stored (a tile covers 62 output columns; Wo = 62 at full size, so no padding is wasted there).
// Shared-memory layouts (no-swizzle K-major canonical layout: core matrices of 8 rows x 16 B):
//   weights  [part][tap][k-half][co 0..63][4 channels]: a tap's A = 2 x 8 core matrices, sbo 128 B, lbo 1024 B;
//            3xfp16 [tap 0..27][lo, hi][co][8 channels], tap 27 zero.
//   input    per warpgroup [part][k-half][depth 0..2][row 0..2][pixel 0..63][4 channels]: one pixel's 4 channels are
//            one 16-byte core-matrix row, 8 pixels one core matrix; sbo 128 B, lbo = one k-half. Tap shifts move the
//            start address by whole 16-byte rows: legal without swizzle. 3xfp16: [k-half][pixel][8 channels].
// Odd shapes: any N, D, H, W >= 3; pixels past the input are zero-filled when staged and feed only outputs that are
//   never stored.

#include "04b_common.cuh"   // the tile geometry, store_acc_tile, the buffer handshake, launch_geometry

namespace cf04b {

enum class Prec { S3XTF32, TF32BF16, S3XF16 };   // the parts: TF32 big + small, TF32 + BF16, FP16 hi + lo
#if defined(CF_3XTF32)
constexpr Prec PREC = Prec::S3XTF32;     // the build's precision: read once here, a template parameter below
#elif defined(CF_TF32BF16)
constexpr Prec PREC = Prec::TF32BF16;
#else
constexpr Prec PREC = Prec::S3XF16;
#endif

// Two staged parts (the TF32 splits) leave room for 3 warpgroups: 4 would need 258 KB of shared memory. 3xfp16 packs
// both parts in one (FP16 hi and lo in the two k-halves): 4 warpgroups, 128 registers per thread at 512 threads.
template <Prec P> constexpr int PARTS = P == Prec::S3XF16 ? 1 : 2;
template <Prec P> constexpr int WGS = P == Prec::S3XF16 ? 4 : 3;
template <Prec P> constexpr int THREADS = 128 * WGS<P>;
constexpr int XPART = 2 * XHALF + 16;               // + 64 B: the discarded columns read 2 pixels past the end
template <Prec P> constexpr int XBUF = PARTS<P> * XPART;   // floats per warpgroup
// 3xfp16's A: [w_lo | w_hi] FP16 per tap (2 KB), and a zero tap 27; the TF32 splits' two parts
template <Prec P> constexpr int WFLOATS = P == Prec::S3XF16 ? (TAPS + 1) * WTAP : PARTS<P> * WPART;
constexpr uint32_t A1_TAP = WTAP * 4, A1_HI = COUT * CORE_ROW;   // 3xfp16: bytes per tap of A, w_hi's place in it
constexpr int BPITCH = XW + 8;                      // 3xfp16's output rows in shared memory: 16-byte rows 8 banks
                                                    // apart, so a half-warp's STS.64 over four rows meets no bank twice
template <Prec P> constexpr int XBULK = P == Prec::S3XF16 ? COUT * BPITCH : 0;   // a warpgroup's output tile, epilogue
                                                                               // applied (store_tile_bulk)
// Shared memory, in floats: weights | the warpgroups' buffers (staging, then 3xfp16's output tile) | (bias, sum) | max
template <Prec P> constexpr int SMEM_FLOATS = WFLOATS<P> + WGS<P> * (XBUF<P> + XBULK<P>) + CHAN_FLOATS + SMAX_FLOATS;
template <Prec P> constexpr size_t SMEM_BYTES = size_t(SMEM_FLOATS<P>) * sizeof(float);
static_assert(XPART % 4 == 0 && WPART % 4 == 0, "16-byte aligned buffers");
static_assert(SMEM_BYTES<Prec::S3XTF32> <= 232448 && SMEM_BYTES<Prec::TF32BF16> <= 232448 &&
              SMEM_BYTES<Prec::S3XF16> <= 232448, "more shared memory than an sm_90 block can have (227 KB)");

struct Geom {   // the first fields as 04b_implicit_gemm_wgmma.cu's (launch_geometry fills them; 04b_common.cuh)
    int N, D, H, W, Do, Ho, Wo;
    int tiles_x, tiles_y, tiles;
    bool xvec;   // 16-byte loads legal for x rows (W % 4 == 0, x 16-byte aligned)
    bool xlean;  // the lean loads: xvec, and one image's input has fewer than 2^31 elements (32-bit offsets)
    bool ylean;  // 8-byte stores: Wo even, y 8-byte aligned, one image's output under 2^31 elements
};

__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x;
    int t = tile / g.tiles_x;
    const int ty = t % g.tiles_y;
    t /= g.tiles_y;
    return { t / g.Do, t % g.Do, ty, tx * TW };
}

// One pixel's 4 channels (k-half `half`) into the wgmma layout: pixel index pix = (dz*XH + hy)*XP + px.
// 3xtf32: big and small parts, each rounded, into parts 0 and 1. tf32+bf16: the TF32 big part into part 0; part 1
// is the BF16 operand of the correction pass, [k-half][pixel][8 channels]: k-half 0 holds x_small, k-half 1 x_big,
// both rounded to BF16, this item's 4 channels at byte 8*half of the row. 3xfp16: one part, [k-half][pixel][8
// channels FP16], k-half 0 = x_hi, k-half 1 = x_lo.
template <Prec P>
__device__ __forceinline__ void store_pixel(float* sx, int half, int pix, const float (&e)[4]) {
    if constexpr (P == Prec::S3XF16) {
        uint2 hi, lo;
        split_f16x2(e[0], e[1], hi.x, lo.x);
        split_f16x2(e[2], e[3], hi.y, lo.y);
        float* h = sx + pix * 4 + 2 * half;
        *reinterpret_cast<uint2*>(h) = hi;
        *reinterpret_cast<uint2*>(h + XHALF) = lo;
    } else if constexpr (P == Prec::S3XTF32) {
        float* dst = sx + half * XHALF + pix * 4;
        float b[4], sm[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) split_rounded(e[c], b[c], sm[c]);
        *reinterpret_cast<float4*>(dst) = make_float4(b[0], b[1], b[2], b[3]);
        *reinterpret_cast<float4*>(dst + XPART) = make_float4(sm[0], sm[1], sm[2], sm[3]);
    } else {
        float* dst = sx + half * XHALF + pix * 4;
        float b[4], sm[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            b[c] = tf32_round(clamp_tf32_max(e[c]));
            sm[c] = e[c] - b[c];
        }
        *reinterpret_cast<float4*>(dst) = make_float4(b[0], b[1], b[2], b[3]);
        float* bf = sx + XPART + pix * 4 + 2 * half;
        *reinterpret_cast<uint2*>(bf) = make_uint2(bf16x2(sm[0], sm[1]), bf16x2(sm[2], sm[3]));
        *reinterpret_cast<uint2*>(bf + XHALF) = make_uint2(bf16x2(clamp_bf16_max(b[0]), clamp_bf16_max(b[1])),
                                                           bf16x2(clamp_bf16_max(b[2]), clamp_bf16_max(b[3])));
    }
}

// Staging by single pixels (two parts per pixel): k-half h = tid / 64 (4 channels),
// pixel px = tid % 64, all 9 (depth, row) pairs of the tile, loaded one tile ahead. A warp loads 32 consecutive pixels
// of a channel row (128 B) and stores 32 consecutive pixel rows: conflict-free 16-byte shared stores.
constexpr int PIX_ROWS = XD * XH;
struct Staged { float v[PIX_ROWS][4]; };

// x[p] if ok, else 0, as one predicated load (a ternary around __ldg compiles to a branch per load)
__device__ __forceinline__ float ldg_or_zero(const float* p, bool ok) {
    float v;
    asm("{\n.reg .pred q;\nsetp.ne.b32 q, %2, 0;\nmov.b32 %0, 0;\n@q ld.global.nc.f32 %0, [%1];\n}\n"
        : "=f"(v) : "l"(p), "r"((int)ok));
    return v;
}

__device__ __forceinline__ void load_input(Staged& s, const float* __restrict__ x, const Geom& g, TileCoord tc,
                                           int tid) {
    const long long cstride = (long long)g.D * g.H * g.W;
    const int half = tid / XW, px = tid % XW, ix = tc.ox0 + px;
    const float* p0 = x + (((long long)(tc.n * CIN + 4 * half) * g.D + tc.od) * g.H + tc.oh0) * g.W + ix;
#pragma unroll
    for (int k = 0; k < PIX_ROWS; ++k) {
        const int dz = k / XH, hy = k % XH;
        const bool ok = ix < g.W && tc.od + dz < g.D && tc.oh0 + hy < g.H;
        const float* p = p0 + (dz * g.H + hy) * g.W;
#pragma unroll
        for (int c = 0; c < 4; ++c) s.v[k][c] = ldg_or_zero(p + c * cstride, ok);
    }
}

template <Prec P>
__device__ __forceinline__ void store_input(float* sx, const Staged& s, int tid) {
    const int half = tid / XW, px = tid % XW;
#pragma unroll
    for (int k = 0; k < PIX_ROWS; ++k) store_pixel<P>(sx, half, k * XW + px, s.v[k]);
}

// The wgmmas of one tile, issued as one group (not waited for). Descriptors: A for tap t at sw + t*WTAP floats; B for
// tap (kd, kh, kw) at the staged row (kd, kh) plus kw pixels (desc_at, opaque: kernels/wgmma.cuh); a second part
// (the TF32 splits) WPART floats on in A and XPART in B.
template <Prec P>
__device__ __forceinline__ void mma_issue(float (&acc)[NACC], const float* sw, const float* sx) {
    constexpr uint32_t A_LBO = COUT * CORE_ROW, SBO = CORE_MATRIX_BYTES, B_LBO = XHALF * 4;
    constexpr uint32_t A_PART = WPART * 4, B_PART = XPART * 4;      // bytes from a part to the next
    auto tap_boff = [](int kd, int kh, int kw) -> uint32_t { return ((kd * XH + kh) * XP + kw) * CORE_ROW; };
    const uint64_t a0 = wgmma_desc(smem_addr(sw), A_LBO, SBO), b0 = wgmma_desc(smem_addr(sx), B_LBO, SBO);
    // 3xfp16: B's base broadcast from lane 0, so the compiler knows it is warp-uniform and keeps it in a uniform
    // register (one R2UR per tile and a UIADD3 per wgmma, as for A, whose base is the block's); else each wgmma's B
    // descriptor is formed in a vector register and moved (VIADD, R2UR)
    const uint32_t alo = opaque((uint32_t)a0);
    const uint32_t blo = P == Prec::S3XF16 ? __shfl_sync(0xffffffffu, opaque((uint32_t)b0), 0) : opaque((uint32_t)b0);
    const uint32_t ahi = (uint32_t)(a0 >> 32), bhi = (uint32_t)(b0 >> 32);
    const uint32_t alo0 = alo - (A_LBO >> 4 << 16), blo0 = blo - (B_LBO >> 4 << 16);   // 3xfp16: the bases, lbo 0
    wgmma_fence();
#pragma unroll
    for (int tap = 0; tap < TAPS; ++tap) {
        const int kd = tap / 9, kh = (tap / 3) % 3, kw = tap % 3;
        const uint32_t boff = tap_boff(kd, kh, kw), aoff = tap * WTAP * 4;
        const uint64_t da = desc_at(alo, ahi, aoff), db = desc_at(blo, bhi, boff);
        if constexpr (P == Prec::S3XTF32) {
            const uint64_t da_s = desc_at(alo, ahi, A_PART + aoff), db_s = desc_at(blo, bhi, B_PART + boff);
            // small products first, so the big one lands on an accumulator that already holds them
            wgmma_tf32(acc, da_s, db, tap > 0);
            wgmma_tf32(acc, da, db_s, 1);
            wgmma_tf32(acc, da, db, 1);
        } else if constexpr (P == Prec::TF32BF16) {
            // x_small w_big + x_big w_small as one BF16 k16 pass ([x_small | x_big] . [w_big ; w_small]), then
            // x_big w_big in TF32: two passes of tensor time instead of three
            const uint64_t da_c = desc_at(alo, ahi, A_PART + aoff), db_c = desc_at(blo, bhi, B_PART + boff);
            wgmma_bf16(acc, da_c, db_c, tap > 0);
            wgmma_tf32(acc, da, db, 1);
        } else {
            // both corrections, [w_lo | w_hi] . [x_hi | x_lo] (the tf32 geometry: A lbo 1 KB, B lbo one k-half);
            // after each odd tap the main products of the pair, [w_hi(t-1) | w_hi(t)] . [x_hi(t-1) | x_hi(t)]:
            // A's second core matrix 2 KB on, B's at the distance between the two taps' windows
            wgmma_f16(acc, da, db, tap > 0);
            if (tap % 2 == 1) {
                const int t0 = tap - 1, kd0 = t0 / 9, kh0 = (t0 / 3) % 3, kw0 = t0 % 3;
                const uint32_t boff0 = tap_boff(kd0, kh0, kw0);
                wgmma_f16(acc, desc_lbo(alo0, ahi, t0 * A1_TAP + A1_HI, A1_TAP),
                          desc_lbo(blo0, bhi, boff0, boff - boff0), 1);
            }
        }
    }
    if constexpr (P == Prec::S3XF16) {
        // tap 26 pairs with the zero tap 27 of A; B's second core matrix is x_lo(26), finite wherever x_hi is
        constexpr uint32_t boff26 = ((2 * XH + 2) * XP + 2) * CORE_ROW;
        wgmma_f16(acc, desc_lbo(alo0, ahi, 26 * A1_TAP + A1_HI, A1_TAP), desc_lbo(blo0, bhi, boff26, B_LBO), 1);
    }
    wgmma_commit();
}

template <Prec P>
__device__ __forceinline__ void mma_tile(float (&acc)[NACC], const float* sw, const float* sx) {
    mma_issue<P>(acc, sw, sx);
    wgmma_wait<0>();
    fence_operand(acc);
}

// One output from its accumulator: (bias b, sum s of its channel; scale undoes 3xfp16's weight scale), added in
// eager's order (04b's TF32 and FP16 builds fold them into the leaky ReLU, an ulp from it).
__device__ __forceinline__ float epilogue_acc(float a, float scale, float b, float s) {
    return epilogue_conv3d<false>(a * scale + b, s);
}

// A tile's outputs straight from the accumulators (store_acc_tile, 04b_common.cuh)
__device__ __forceinline__ void store_tile(const float (&acc)[NACC], const float2* schan, float* __restrict__ y,
                                           const Geom& g, TileCoord tc, int warp, int lane, float scale = 1.0f) {
    store_acc_tile(acc, schan, y, g, tc, warp, lane,
                   [&](float a, float2 bs) { return epilogue_acc(a, scale, bs.x, bs.y); });
}

// 3xfp16: the output through shared memory and the bulk-copy engine: the epilogue writes the tile into this warpgroup's
// buffer, each channel row at the same 16-byte phase as its place in y, and the row goes to global memory by
// cp.async.bulk (whole 16-byte units) with at most one 8-byte store before and after it. Each warp hands its own 16
// channel rows over, so no warpgroup barrier joins the epilogue: a fence and __syncwarp order the warp's STS before its
// copies, and before the warp next writes the buffer (a whole tile later) its issuing lane waits for the engine's
// reads. Rows need 8-byte alignment (Wo even, y 8-byte aligned: g.ylean), else store_tile. put(r, col, v) writes the
// pixel pair (col, col + 1) of the warp's channel row r.
template <class Put>
__device__ __forceinline__ void epilogue_to_buffer(const float (&acc)[NACC], const float2* schan, int warp, int lane,
                                                   float scale, Put put) {
    const int gid = lane >> 2, tq = lane & 3;
    if (lane == 0) bulk_wait_read();        // this warp's copies of the last tile have left the buffer
    __syncwarp();
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = gid + 8 * h;
        const float2 bs_c = schan[16 * warp + r];
#pragma unroll
        for (int j = 0; j < 8; ++j)
            put(r, 8 * j + 2 * tq, make_float2(epilogue_acc(acc[4 * j + 2 * h], scale, bs_c.x, bs_c.y),
                                               epilogue_acc(acc[4 * j + 2 * h + 1], scale, bs_c.x, bs_c.y)));
    }
    fence_proxy_async();                    // the copy engine reads shared memory through the async proxy
    __syncwarp();
}

__device__ __forceinline__ void store_tile_bulk(const float (&acc)[NACC], const float2* schan, float* sout,
                                                float* __restrict__ y, const Geom& g, TileCoord tc, int warp,
                                                int lane, float scale = 1.0f) {
    const long long plane = (long long)g.Do * g.Ho * g.Wo;
    float* yrow0 = y + (long long)tc.n * COUT * plane + ((long long)tc.od * g.Ho + tc.oh0) * g.Wo + tc.ox0;
    const int lim = min(TW, g.Wo - tc.ox0);                 // even: Wo even, ox0 = 62 tx
    epilogue_to_buffer(acc, schan, warp, lane, scale, [&](int r, int col, float2 v) {
        const int c = 16 * warp + r;        // each row at its 16-byte phase in y
        *reinterpret_cast<float2*>(sout + c * BPITCH + row_split(yrow0 + c * plane, lim).phase + col) = v;
    });
    if (lane < 16) {                        // the rows' 8-byte ends: one row per lane
        const int c = 16 * warp + lane;
        float* grow = yrow0 + c * plane;
        const RowSplit rs = row_split(grow, lim);
        const float* srow = sout + c * BPITCH + rs.phase;
        if (rs.head) __stcs(reinterpret_cast<float2*>(grow), *reinterpret_cast<const float2*>(srow));
        if (rs.tail)
            __stcs(reinterpret_cast<float2*>(grow + lim - 2), *reinterpret_cast<const float2*>(srow + lim - 2));
    }
    // The bodies: a cp.async.bulk is a warp-level (uniform datapath) instruction, so per-lane addresses would make
    // the compiler loop over the lanes (a waterfall of R2UR, 12 instructions per row). The warp's base addresses
    // broadcast from lane 0 are warp-uniform, and so is all that follows.
    const float* ybase = reinterpret_cast<const float*>(__shfl_sync(~0u, reinterpret_cast<uintptr_t>(yrow0 + 16 * warp * plane), 0));
    const uint32_t sbase = __shfl_sync(~0u, smem_addr(sout + 16 * warp * BPITCH), 0);
    const int ulim = __shfl_sync(~0u, lim, 0);
    if (lane == 0) bulk_rows<16>(ybase, plane, sbase, BPITCH, ulim);
}


// The FP32 path of a 3xfp16 tile whose FP16 parts cannot carry the input: each of this thread's outputs as a plain FP32 dot
// product from global memory (slow; only non-finite or |x| >= 65520 inputs and non-finite weights take it), so Inf
// and NaN propagate as in eager. A whole warp takes it when one of its threads must (__ballot_sync): the copy-engine
// stores are warp-collective (a __syncwarp, and lane 0 issues the warp's copy). Accumulator i's output (this thread's
// channel co, row oh, column ox) and its FP32 sum v of x and w; false where the output is not stored (the MMA's
// discarded columns, rows or columns past the output). The taps unrolled: nothing else is live.
__device__ __forceinline__ bool fp32_output(const float* __restrict__ x, const float* __restrict__ w, const Geom& g,
                                            TileCoord tc, int warp, int lane, int i, int& co, int& oh, int& ox, float& v) {
    const long long plane = (long long)g.H * g.W, cstride = (long long)g.D * plane;
    const int e = i & 1, h = (i >> 1) & 1, j = (i >> 2) % (XW / 8), t = (i >> 2) / (XW / 8);
    const int col = 8 * j + 2 * (lane & 3) + e;
    co = acc_channel(warp, lane, h);
    oh = tc.oh0 + t;
    ox = tc.ox0 + col;
    if (oh >= g.Ho || col >= TW || ox >= g.Wo) return false;
    const float* xp = x + tc.n * CIN * cstride + tc.od * plane + (long long)oh * g.W + ox;
    v = 0.0f;
#pragma unroll 1
    for (int ci = 0; ci < CIN; ++ci)
#pragma unroll
        for (int tap = 0; tap < TAPS; ++tap)
            v = fmaf(__ldg(xp + ci * cstride + (tap / 9) * plane + ((tap / 3) % 3) * g.W + tap % 3),
                     __ldg(w + (co * CIN + ci) * TAPS + tap), v);
    return true;
}
// 3xfp16: the tile's outputs written straight to y
__device__ __forceinline__ void fp32_tile(const float* __restrict__ x, const float* __restrict__ w,
                                          const float* __restrict__ bias, const float* __restrict__ addend,
                                          float* __restrict__ y, const Geom& g, TileCoord tc, int warp, int lane) {
#pragma unroll 1
    for (int i = 0; i < NACC; ++i) {
        int co, oh, ox;
        float v;
        if (!fp32_output(x, w, g, tc, warp, lane, i, co, oh, ox, v)) continue;
        y[(((long long)(tc.n * COUT + co) * g.Do + tc.od) * g.Ho + oh) * g.Wo + ox] =
            epilogue_conv3d<false>(v + __ldg(bias + co), __ldg(addend + co));
    }
}


template <Prec P>
__global__ void __launch_bounds__(THREADS<P>, 1)
conv3d_wgmma_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                    const float* __restrict__ addend, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* sw = smem;
    float2* schan = reinterpret_cast<float2*>(smem + SMEM_FLOATS<P> - SMAX_FLOATS - CHAN_FLOATS);
    const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
    const int warp = tid >> 5, lane = threadIdx.x & 31;
    float* sx = smem + WFLOATS<P> + wg * (XBUF<P> + XBULK<P>);
    float inv_scale = 1.0f;                 // what undoes 3xfp16's weight scale

    if constexpr (P == Prec::S3XF16) {
        // Weights, once per block: w * 2^e (f16_weight_exponent) as FP16 [tap 0..27][lo, hi][co][8 channels], 2 KB
        // per tap: tap t's [w_lo | w_hi] is the A of its corrections, and w_hi(t) + 2 KB = w_hi(t + 1); tap 27 is
        // zero. The rest of shared memory is zeroed once: the discarded columns read the buffers' last 64 bytes, and a
        // NaN bit pattern there would send a thread to the FP32 path for nothing.
        unsigned* smax = reinterpret_cast<unsigned*>(smem + SMEM_FLOATS<P> - SMAX_FLOATS);
        for (int i = WFLOATS<P> + threadIdx.x; i < SMEM_FLOATS<P>; i += THREADS<P>) smem[i] = 0.0f;
        __syncthreads();
        const int wexp = f16_weight_exponent(w, COUT * CIN * TAPS, smax);
        const float wscale = ldexpf(1.0f, wexp);
        inv_scale = ldexpf(1.0f, -wexp);
        for (int u = threadIdx.x; u < (TAPS + 1) * COUT * CIN; u += THREADS<P>) {
            const int ch = u & 7, co = (u >> 3) & 63, tap = u >> 9;
            const float v = tap < TAPS ? __ldg(w + (co * CIN + ch) * TAPS + tap) * wscale : 0.0f;
            const unsigned short hi = f16_bits(v);
            unsigned short* wt = reinterpret_cast<unsigned short*>(sw) + tap * 2 * COUT * 8 + co * 8 + ch;
            wt[0] = f16_bits(v - f16_value(hi));
            wt[COUT * 8] = hi;
        }
    } else {
        // Weights, once per block: element f = ((tap*2 + half)*64 + co)*4 + e  <-  w[co][4*half + e][tap].
        for (int f = threadIdx.x; f < WPART; f += THREADS<P>) {
            const int e = f & 3, co = (f >> 2) & 63, half = (f >> 8) & 1, tap = f >> 9;
            const float v = __ldg(w + (co * CIN + 4 * half + e) * TAPS + tap);
            if constexpr (P == Prec::S3XTF32) {
                split_rounded(v, sw[f], sw[WPART + f]);
            } else {
                // part 1, BF16 A of the correction pass: [tap][k-half][co][8 channels], k-half 0 = w_big, 1 = w_small
                const float big = tf32_round(clamp_tf32_max(v));
                sw[f] = big;
                unsigned short* wb =
                    reinterpret_cast<unsigned short*>(sw + WPART) + tap * 2 * COUT * 8 + co * 8 + 4 * half + e;
                wb[0] = bf16_bits(clamp_bf16_max(big));
                wb[COUT * 8] = bf16_bits(v - big);
            }
        }
    }
    for (int c = threadIdx.x; c < COUT; c += THREADS<P>) schan[c] = make_float2(__ldg(bias + c), __ldg(addend + c));
    fence_proxy_async();
    __syncthreads();

    const int stride = gridDim.x * WGS<P>;
    const unsigned tile0 = blockIdx.x * WGS<P>;               // tiles are dealt block-major
    int tile = tile0 + wg;
    // The tile loop: each warpgroup stages its own tile (loaded during the last tile's epilogue), runs its MMAs,
    // issues the next tile's loads, and stores its output
    float* sbulk = sx + XBUF<P>;           // 3xfp16: the output tile
    Staged st;
    if (tile < g.tiles) load_input(st, x, g, tile_coord(g, tile), tid);
#pragma unroll 1
    for (; tile < g.tiles; tile += stride) {
        const TileCoord tc = tile_coord(g, tile);
        buffer_free(wg);                        // every warp's wgmmas of the last tile have read the buffer
        store_input<P>(sx, st, tid);
        buffer_staged(wg);
        float acc[NACC];
        const int next = tile + stride;
        mma_tile<P>(acc, sw, sx);
        if (next < g.tiles) load_input(st, x, g, tile_coord(g, next), tid);   // in flight during the epilogue
        if constexpr (P == Prec::S3XF16) {
            bool bad = false;
#pragma unroll
            for (int i = 0; i < NACC; ++i) {
                acc[i] *= inv_scale;
                bad |= !(fabsf(acc[i]) < CF_F32_INF);
            }
            if (__ballot_sync(~0u, bad)) {       // an Inf or NaN input or weight, or |x| >= 65520
                fp32_tile(x, w, bias, addend, y, g, tc, warp, lane);
                continue;
            }
            if (g.ylean) store_tile_bulk(acc, schan, sbulk, y, g, tc, warp, lane, 1.0f);
            else store_tile(acc, schan, y, g, tc, warp, lane, 1.0f);
        } else {
            store_tile(acc, schan, y, g, tc, warp, lane);
        }
    }
    if constexpr (P == Prec::S3XF16)
        if (lane == 0) bulk_wait_all();         // every bulk copy done before the block's shared memory goes
#endif
}

template <Prec P>
const char* launch_with(const ConvArgs& a, cudaStream_t stream) {
    constexpr const char* NAME = "04b_split_wgmma (conv3d)";
    Geom g{};
    int sms = 0, grid = 0;
    long long blocks = 0;
    if (const char* err = launch_geometry(a, NAME, WGS<P>, g, sms, blocks)) return err;
    if (const char* err = cf_persistent_grid(conv3d_wgmma_kernel<P>, THREADS<P>, SMEM_BYTES<P>, blocks, sms, NAME, grid))
        return err;
    conv3d_wgmma_kernel<P><<<grid, THREADS<P>, SMEM_BYTES<P>, stream>>>(a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}

}  // namespace cf04b

const char* launch(const ConvArgs& a, cudaStream_t stream) { return cf04b::launch_with<cf04b::PREC>(a, stream); }
