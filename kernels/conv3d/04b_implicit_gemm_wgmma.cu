// 04b_implicit_gemm_wgmma — conv3d step 04b: implicit-GEMM conv + fused epilogue on Hopper's warpgroup MMA
// (wgmma, sm_90a only: H100/H200), TF32 and FP16, output rows stored in groups. Every other GPU runs step 04
// (04_implicit_gemm_mma, mma.sync); the FP32-accurate splits of this step are 04b_split_wgmma.cu.
//
// What changed from 04. 04 was latency-bound: 128 accumulators per thread allowed 8 warps per SM, and every MMA
//   operand went through an LDS into registers. wgmma reads both operands from shared memory and runs asynchronously:
//   a warpgroup issues its tile's whole K loop and waits once, and a tile of 64 Cout x 64 pixels (one output row)
//   costs a thread 32 accumulators, so 4 warpgroups share an SM, each in its MMAs or its epilogue while the others
//   are in theirs. The weights stay in shared memory for the block's life; each tile's input is loaded into
//   registers during the previous tile's epilogue, then staged in the wgmma layout.
//
// Precisions (template parameter P; the registry's define CF_1XF16 picks fp16, no define tf32):
//   tf32   operands rounded to TF32: 27 m64n64k8 wgmmas per tile.
//   fp16   x and w in FP16 (TF32's 11 significant bits at twice its MMA rate), weights scaled by 2^e per call:
//          one k16 wgmma per tap pair, 14 per tile. A warp's tile is recomputed in FP32 where x or w is not finite
//          or |x| >= 65520.
// Output: a block's 4 warpgroups take 4 consecutive output rows per round, issue their wgmmas in turn, and their rows
//   leave in one tensor copy per channel group (store_tile_group); elsewhere a tile leaves alone (store_tile). At the
//   shapes it fits a second kernel (WIN) stages each input row once per block instead of once per tile that reads
//   it: tf32 a sweep along depth, fp16 a window of the round's rows.
//
// Launch: persistent, one block per SM (132 on the H200), tiles dealt block-major; 4 warpgroups (512 threads),
//   128 registers; shared memory 217,984 B (tf32) and 231,488 B (fp16).
//
// Bytes moved at full size (x 128 x 8 x 16 x 64 x 64, y 128 x 64 x 14 x 62 x 62): DRAM x once 0.27 GB + y once
//   1.76 GB (measured 2.01-2.08 GB). What bounds it: neither DRAM (the TF32 build moves 2.02 GB in 0.778 ms, 2.6
//   TB/s; writing y alone takes 0.38 ms) nor the tensor pipe (TF32's 197 GFLOP of wgmmas take 0.40 ms at 495 TFLOP/s):
//   the SM's own chain per warpgroup of staging, MMA turn, epilogue math and copies, which the warpgroups overlap only
//   in part.
//
// Measured (H200, record of 2026-12-05; eager 10.06 ms, torch.compile 5.83, step 04 1.632): tf32 0.778 ms, fp16
//   0.727; rel-L2 against float64 1.3e-4.
//
// Over 1,040 lines: the two builds share the staging, the turn order and the group store (about 600 lines), and each
//   has a WIN loop of its own (fp16's input window, TF32's depth sweep, about 130 lines each); apart, the shared half
//   would be written twice. What this file shares with 04b_split_wgmma.cu is in 04b_common.cuh.

// GEMM mapping: M = Cout = 64 (wgmma's fixed M), N = output pixels, K = 27 taps x 8 channels (one k8 step per tap).
//   A = weights. B = the haloed input tile: for tap (kd, kh, kw) the B operand of an output row is the staged input
//   row (kd, kh) shifted by kw pixels. Staged rows are exactly 64 pixels long and stored one after another, so one
//   wgmma of N = 64 starts kw pixels in: output columns 62 and 63 read the next row's first pixels and are never
//   stored (a tile covers 62 output columns; Wo = 62 at full size, so no padding is wasted there).
// Shared-memory layouts (no-swizzle K-major canonical layout: core matrices of 8 rows x 16 B):
//   weights  tf32 [tap][k-half][co 0..63][4 channels]: a tap's A = 2 x 8 core matrices, sbo 128 B, lbo 1024 B;
//            fp16 [tap 0..27][co][8 channels], tap 27 zero.
//   input    per warpgroup [k-half][depth 0..2][row 0..2][pixel 0..63][4 channels]: one pixel's 4 channels are one
//            16-byte core-matrix row, 8 pixels one core matrix; sbo 128 B, lbo = one k-half. Tap shifts move the start
//            address by whole 16-byte rows: legal without swizzle. fp16: [k-half][pixel][8 channels].
// Odd shapes: any N, D, H, W >= 3; pixels past the input are zero-filled when staged and feed only outputs that are
//   never stored.

#include "04b_common.cuh"   // the tile geometry, store_acc_tile, the buffer handshake, launch_geometry

namespace cf04b {

enum class Prec { TF32, FP16 };
#ifdef CF_1XF16
constexpr Prec PREC = Prec::FP16;        // the build's precision: read once here, a template parameter below
#else
constexpr Prec PREC = Prec::TF32;
#endif

constexpr int WGS = 4;                   // 128 registers per thread at 512 threads
constexpr int THREADS = 128 * WGS;
constexpr int XBUF = 2 * XHALF + 16;     // floats per warpgroup, + 64 B: the discarded columns read 2 pixels past the end
constexpr uint32_t A_LBO = COUT * CORE_ROW, SBO = CORE_MATRIX_BYTES;   // A: k-halves 1 KB apart, core matrices 8 rows apart
constexpr uintptr_t TMA_ALIGN = 128;     // a tensor copy's shared-memory box starts 128-byte aligned
constexpr uint32_t A1_TAP = COUT * 16, A1_HI = 0;   // fp16: bytes per tap of A, and w_hi's place in it

// The group store: GROUP consecutive output rows (of GROUP warpgroups) per box, a box (and a FULL and an EMPTY
// mbarrier) per warp of a slot; fp16 boxes of 4 rows of 62 pixels, 992 bytes per channel, a whole number of 32-byte
// sectors, in 2 sets (round r's boxes in set r % 2: a slot's warp writes round r + 1's rows while round r's copy may
// still be reading its box); tf32 boxes of two rows: a warpgroup waits for its partner's copy alone, not for the
// round's last warpgroup's.
template <Prec P> constexpr int GROUP = P == Prec::FP16 ? 4 : 2;
template <Prec P> constexpr int GSETS = P == Prec::FP16 ? 2 : 1;
template <Prec P> constexpr int GPX = GROUP<P> * TW;                   // pixels per box row
template <Prec P> constexpr int GBOX = 16 * GPX<P>;                    // floats per box: a warp's 16 channels
template <Prec P> constexpr int GBARS = GSETS<P> * 4 * (WGS / GROUP<P>);
template <Prec P> constexpr int GBUF_FLOATS = GBARS<P> * GBOX<P> + int(TMA_ALIGN / 4) + 4 * GBARS<P>;   // + room to
                                                                            // align, 2 mbarriers (16 B) per box
static_assert(WGS % GROUP<Prec::FP16> == 0 && WGS % GROUP<Prec::TF32> == 0, "groups of warpgroups");
static_assert(GBOX<Prec::FP16> * 4 % 128 == 0 && GBOX<Prec::TF32> * 4 % 128 == 0 && GPX<Prec::FP16> <= 256,
              "boxes 128-byte aligned, box rows of at most 256 elements");

// The input window (fp16, WIN): 3 buffers of 8 rows per depth in the warpgroups' buffers
constexpr int WROWS = 8;                             // window rows per depth
constexpr int WBUF = XD * WROWS * XP * 4 + 16;       // floats per window buffer (+ 64 B the discarded columns read)
constexpr int WBUFS = 3;
static_assert(WBUFS * WBUF <= WGS * XBUF, "the windows fit in the warpgroups' buffers");
constexpr int WIN_ITEMS = 2;                         // a thread's (k-half, depth, row, quad) items per round: <= 768 of 1024
// The depth sweep (tf32, WIN): 8 slots of a slab (a round's 6 input rows of one depth) where the buffers were
constexpr int DW_RROWS = WGS;                        // output rows of a round: one per warpgroup
constexpr int DW_ROWS = DW_RROWS + KS - 1;           // input rows of a slab: a round's 4 output rows and the halo
constexpr int DW_HALF = DW_ROWS * XP * 4;            // floats per k-half of a slab
constexpr int DW_SLAB = 2 * DW_HALF;                 // 12,288 B
constexpr int DW_SLOTS = 8;
constexpr int DW_SLAB_ITEMS = 2 * DW_ROWS * (XW / 4);   // (k-half, row, quad) items of a slab: 192
constexpr int DW_ITEMS = 2;                          // a thread's items per round: up to 3 slabs over the block
static_assert(3 * DW_SLAB_ITEMS <= THREADS * DW_ITEMS && DW_SLAB_ITEMS % WGS == 0, "a round's items over the threads");
constexpr int DW_BARS_AT = DW_SLOTS * DW_SLAB + 16;  // + 64 B the discarded columns read past the last slot
constexpr int DW_FLOATS = DW_BARS_AT + 4 * 3;        // 3 "staged" and 3 "read" mbarriers

// Shared memory, in floats: weights | the warpgroups' buffers (or the windows, or the slabs) | the group store's boxes
// and mbarriers | fp16: the window's zero row and mbarriers | (bias, sum) per channel | the weights' max (fp16)
template <Prec P> constexpr int WFLOATS = P == Prec::FP16 ? (TAPS + 1) * WTAP / 2 : WPART;   // fp16: w_hi alone,
                                                                                           // 1 KB per tap
template <Prec P> constexpr int XREGION = P == Prec::TF32 && DW_FLOATS > WGS * XBUF ? DW_FLOATS : WGS * XBUF;
template <Prec P> constexpr int WIN_AT = WFLOATS<P> + XREGION<P> + GBUF_FLOATS<P>;
template <Prec P> constexpr int WIN_FLOATS = P == Prec::FP16 ? XP * 4 + 4 * WBUFS : 0;   // a zero row (tap 26's
                                                                                       // partner in B), 2 mbarriers a buffer
template <Prec P> constexpr int SMEM_FLOATS = WIN_AT<P> + WIN_FLOATS<P> + CHAN_FLOATS + SMAX_FLOATS;
template <Prec P> constexpr size_t SMEM_BYTES = size_t(SMEM_FLOATS<P>) * sizeof(float);
static_assert(XBUF % 4 == 0 && WPART % 4 == 0, "16-byte aligned buffers");
static_assert(SMEM_BYTES<Prec::FP16> <= 232448 && SMEM_BYTES<Prec::TF32> <= 232448,
              "more shared memory than an sm_90 block can have (227 KB)");

struct Geom {
    int N, D, H, W, Do, Ho, Wo;
    int tiles_x, tiles_y, tiles;
    bool xvec;   // 16-byte loads legal for x rows (W % 4 == 0, x 16-byte aligned)
    bool xlean;  // the lean loads: xvec, and one image's input has fewer than 2^31 elements (32-bit offsets)
    bool ylean;  // 8-byte stores: Wo even, y 8-byte aligned, one image's output under 2^31 elements
    bool ytma;   // the kernel parameter ymap describes y (ylean, a plane a multiple of 4 floats)
    bool ygroup; // the group store: ytma, Wo = 62 (a tile is a whole row), Do Ho a multiple of GROUP or a sweep shape
    int sx, sy, sd, sn;   // the tile stride (grid x warpgroups) in digits (tx, ty, od, n): walk_next
    int dw_groups, dw_rounds;   // the depth sweep: groups of 4 output rows per plane, rounds (n, group, od) in all
};

// One pixel's 4 channels (k-half `half`) into the wgmma layout: pixel index pix = (dz*XH + hy)*XP + px.
// tf32: rounded. fp16: [k-half][pixel][8 channels FP16], k-half 0 only.
template <Prec P>
__device__ __forceinline__ void store_pixel(float* sx, int half, int pix, const float (&e)[4]) {
    if constexpr (P == Prec::FP16) {
        *reinterpret_cast<uint2*>(sx + pix * 4 + 2 * half) = make_uint2(f16x2(e[0], e[1]), f16x2(e[2], e[3]));
    } else {
        *reinterpret_cast<float4*>(sx + half * XHALF + pix * 4) =
            make_float4(tf32_round_rn(e[0]), tf32_round_rn(e[1]), tf32_round_rn(e[2]), tf32_round_rn(e[3]));
    }
}

// Staging in 4-pixel items (k-half, depth, row, quad), quad fastest: a thread loads 4 channels x 4 pixels per item
// into registers, 16 bytes a load (load_input_lean), one tile ahead, in flight during the epilogue; then transposes
// them to 4 pixels x 4 channels and writes four 16-byte core-matrix rows per item (store_input).
constexpr int X_ITEMS = 2 * XD * XH * (XW / 4);     // items per tile: 288
constexpr int ITEMS_PER_THREAD = (X_ITEMS + 127) / 128;
struct Item { int q, hy, dz, half; };
__device__ __forceinline__ Item item_of(int it) {
    const int q = it % (XW / 4), row = it / (XW / 4);
    const int hy = row % XH, t = row / XH;
    return { q, hy, t % XD, t / XD };
}

// The tile loop without division: a tile's coordinates advance by the stride's digits, addresses are 32-bit offsets
// within one image from per-thread constants plus one 64-bit image base, and loads are predicated, not branched around.
struct Walk { int tx, ty, od, n; };
__device__ __forceinline__ Walk walk_of(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x, t = tile / g.tiles_x, ty = t % g.tiles_y, u = t / g.tiles_y;
    return { tx, ty, u % g.Do, u / g.Do };
}
// tile += stride as a digit-wise add with carries: each digit of the stride is below its radix
__device__ __forceinline__ void walk_next(Walk& w, const Geom& g) {
    w.tx += g.sx;
    int c = w.tx >= g.tiles_x;
    w.tx -= c ? g.tiles_x : 0;
    w.ty += g.sy + c;
    c = w.ty >= g.tiles_y;
    w.ty -= c ? g.tiles_y : 0;
    w.od += g.sd + c;
    c = w.od >= g.Do;
    w.od -= c ? g.Do : 0;
    w.n += g.sn + c;
}
__device__ __forceinline__ TileCoord coord_of(const Walk& w) { return { w.n, w.od, w.ty, w.tx * TW }; }

// x[p..p+3] if ok, else zeros: one predicated 16-byte load, no branch
__device__ __forceinline__ float4 ldg4_or_zero(const float* p, bool ok) {
    float4 v;
    asm("{\n.reg .pred q;\nsetp.ne.b32 q, %5, 0;\nmov.b32 %0, 0;\nmov.b32 %1, 0;\nmov.b32 %2, 0;\nmov.b32 %3, 0;\n"
        "@q ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];\n}\n"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "r"((int)ok));
    return v;
}
// x[a..a+3] if ok; the registers are left as they were otherwise (the caller never uses them then)
__device__ __forceinline__ float4 ldg4_if(uint64_t a, bool ok) {
    float4 v;
    asm("{\n.reg .pred q;\nsetp.ne.b32 q, %5, 0;\n@q ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];\n}\n"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(a), "r"((int)ok));
    return v;
}

// Per-thread constants of the lean loads: each staging item's offset within an image (unsigned: only used where
// g.xlean says it fits) and its first column (a column past any W where the thread has no item).
struct Lean { unsigned xoff[ITEMS_PER_THREAD]; int xcol[ITEMS_PER_THREAD]; };
__device__ __forceinline__ Lean lean_of(const Geom& g, int tid) {
    Lean l;
#pragma unroll
    for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
        const int it = tid + 128 * k;
        const auto [q, hy, dz, half] = item_of(it);
        const bool has = it < X_ITEMS;
        l.xoff[k] = has ? ((4u * half * g.D + dz) * g.H + hy) * g.W + 4 * q : 0u;
        l.xcol[k] = has ? 4 * q : 0x40000000;
    }
    return l;
}
struct Staged { float4 v[ITEMS_PER_THREAD][4]; };   // [item][channel] = 4 pixels

// Any shape: 64-bit addresses, a load per pixel where the 16-byte loads are not legal
__device__ __forceinline__ void load_input(Staged& s, const float* __restrict__ x, const Geom& g, TileCoord tc,
                                           int tid) {
    const long long cstride = (long long)g.D * g.H * g.W;
    const bool vec = g.xvec && (tc.ox0 % 4 == 0);
#pragma unroll
    for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
        const int it = tid + 128 * k;
        const auto [q, hy, dz, half] = item_of(it);
        const int id = tc.od + dz, ih = tc.oh0 + hy, ix = tc.ox0 + 4 * q;
        const bool row_ok = it < X_ITEMS && id < g.D && ih < g.H;
        const float* src = x + (((long long)(tc.n * CIN + 4 * half) * g.D + (row_ok ? id : 0)) * g.H
                                + (row_ok ? ih : 0)) * g.W + ix;
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            float4& d = s.v[k][c];
            if (vec) {
                d = (row_ok && ix < g.W) ? ld_global_f4(src + c * cstride) : make_float4(0.f, 0.f, 0.f, 0.f);
            } else {
                const float* r = src + c * cstride;
                d.x = (row_ok && ix     < g.W) ? __ldg(r)     : 0.0f;
                d.y = (row_ok && ix + 1 < g.W) ? __ldg(r + 1) : 0.0f;
                d.z = (row_ok && ix + 2 < g.W) ? __ldg(r + 2) : 0.0f;
                d.w = (row_ok && ix + 3 < g.W) ? __ldg(r + 3) : 0.0f;
            }
        }
    }
}

// The lean loads: 32-bit offsets within the image, one predicated 16-byte load each (load_input where the vector
// loads are not legal: W % 4 != 0, x misaligned, a tile starting at a column not a multiple of 4)
template <Prec P>
__device__ __forceinline__ void load_input_lean(Staged& s, const float* __restrict__ x, const Geom& g, TileCoord tc,
                                                int tid, const Lean& l) {
    if (!g.xlean || (tc.ox0 & 3)) {
        load_input(s, x, g, tc, tid);
        return;
    }
    const unsigned plane = (unsigned)g.D * g.H * g.W;
    const float* xs = x + (long long)tc.n * (CIN * plane);
    const unsigned toff = ((unsigned)tc.od * g.H + tc.oh0) * g.W + tc.ox0;
    // Tiles that end inside the input (every tile at the full shape): one 64-bit address per item, the other three
    // channels a 64-bit add of the plane's bytes each, and no zeros written ahead of the loads (an item that is not
    // there is never stored). TF32 only: the fp16 build measured slower with it.
    if constexpr (P == Prec::TF32) {
        if (tc.ox0 + XW <= g.W) {
            const uint64_t plane_bytes = 4ull * plane;
#pragma unroll
            for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
                const bool has = l.xcol[k] < XW;
                uint64_t a = reinterpret_cast<uint64_t>(xs + (toff + l.xoff[k]));
#pragma unroll
                for (int c = 0; c < 4; ++c, a += plane_bytes) s.v[k][c] = ldg4_if(a, has);
            }
            return;
        }
    }
#pragma unroll
    for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
        const bool ok = tc.ox0 + l.xcol[k] < g.W;
        const unsigned off = toff + l.xoff[k];
#pragma unroll
        for (int c = 0; c < 4; ++c) s.v[k][c] = ldg4_or_zero(xs + (off + c * plane), ok);
    }
}

// The items' stores without bank conflicts. A quarter-warp's lanes hold consecutive quads, 64 bytes apart, so the
// four stores of an item, one pixel each in the same order in every lane, would meet only two 16-byte bank groups per
// 8 lanes. Lanes 2i and 2i + 1 start at pixel i of their quad and go round it instead, so each store of a quarter-warp
// covers 8 different 16-byte groups: 4 wavefronts per instruction instead of 16, for 8 selects per float4.
__device__ __forceinline__ float4 rotate4(float4 v, int r) {    // component j <- component (j + r) % 4
    if (r & 1) v = make_float4(v.y, v.z, v.w, v.x);
    if (r & 2) v = make_float4(v.z, v.w, v.x, v.y);
    return v;
}
// An item's 4 channels x 4 pixels, rotated, handed to put(pixel, its 4 channels) one pixel at a time. The lane's
// rotation is read again per item: hoisted out of the items, the four rotated store offsets stay live across them
// and TF32 spills at its 128 registers.
template <class Put>
__device__ __forceinline__ void put_rotated(const float4 (&item)[4], int rot_of_lane, Put put) {
    int rot = rot_of_lane;
    asm volatile("" : "+r"(rot));
    float4 v[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) v[c] = rotate4(item[c], rot);
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        float e[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) e[c] = (&v[c].x)[p];
        put((p + rot) & 3, e);
    }
}
template <Prec P>
__device__ __forceinline__ void store_input(float* sx, const Staged& s, int tid) {
    const int rot_of_lane = (tid >> 1) & 3;
#pragma unroll
    for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
        const int it = tid + 128 * k;
        if (it >= X_ITEMS) break;
        const Item m = item_of(it);
        put_rotated(s.v[k], rot_of_lane, [&](int px, const float (&e)[4]) {
            store_pixel<P>(sx, m.half, (m.dz * XH + m.hy) * XP + 4 * m.q + px, e);
        });
    }
}

// The wgmmas of one tile, issued as one group (not waited for). Descriptors: A for tap t at sw + t*WTAP floats; B for
// tap (kd, kh, kw) at the staged row (kd, kh) plus kw pixels (desc_at, opaque: kernels/wgmma.cuh). B's base is
// broadcast from lane 0, so the compiler knows it is warp-uniform and keeps it in a uniform register (one R2UR per
// tile and a UIADD3 per wgmma, as for A, whose base is the block's); else each wgmma's B descriptor is formed in a
// vector register and moved (VIADD, R2UR).
template <Prec P>
__device__ __forceinline__ void mma_issue(float (&acc)[NACC], const float* sw, const float* sx) {
    constexpr uint32_t B_LBO = XHALF * 4;
    auto tap_boff = [](int kd, int kh, int kw) -> uint32_t { return ((kd * XH + kh) * XP + kw) * CORE_ROW; };
    const uint64_t a0 = wgmma_desc(smem_addr(sw), A_LBO, SBO), b0 = wgmma_desc(smem_addr(sx), B_LBO, SBO);
    const uint32_t alo = opaque((uint32_t)a0), blo = __shfl_sync(0xffffffffu, opaque((uint32_t)b0), 0);
    const uint32_t ahi = (uint32_t)(a0 >> 32), bhi = (uint32_t)(b0 >> 32);
    if constexpr (P == Prec::FP16) {
        // per tap pair one k16 wgmma, [w_hi(t-1) | w_hi(t)] . [x(t-1) | x(t)]: A's second core matrix a tap on, B's at
        // the distance between the two taps' windows (the bases with lbo 0, each wgmma's lbo its own)
        const uint32_t alo0 = alo - (A_LBO >> 4 << 16), blo0 = blo - (B_LBO >> 4 << 16);
        wgmma_fence();
#pragma unroll
        for (int tap = 1; tap < TAPS; tap += 2) {
            const int t0 = tap - 1, kd0 = t0 / 9, kh0 = (t0 / 3) % 3, kw0 = t0 % 3;
            const uint32_t boff0 = tap_boff(kd0, kh0, kw0), boff = tap_boff(tap / 9, (tap / 3) % 3, tap % 3);
            wgmma_f16(acc, desc_lbo(alo0, ahi, t0 * A1_TAP + A1_HI, A1_TAP),
                      desc_lbo(blo0, bhi, boff0, boff - boff0), tap > 1);
        }
        // tap 26 pairs with the zero tap 27 of A; B's second core matrix is k-half 1, never written, zero since the
        // block started
        constexpr uint32_t boff26 = ((2 * XH + 2) * XP + 2) * CORE_ROW;
        wgmma_f16(acc, desc_lbo(alo0, ahi, 26 * A1_TAP + A1_HI, A1_TAP), desc_lbo(blo0, bhi, boff26, B_LBO), 1);
    } else {
        wgmma_fence();
#pragma unroll
        for (int tap = 0; tap < TAPS; ++tap) {
            const int kd = tap / 9, kh = (tap / 3) % 3, kw = tap % 3;
            wgmma_tf32(acc, desc_at(alo, ahi, tap * WTAP * 4), desc_at(blo, bhi, tap_boff(kd, kh, kw)), tap > 0);
        }
    }
    wgmma_commit();
}

// The block's warpgroups issue their wgmmas in turn, 0, 1, .., WGS - 1, 0, .. (named barriers 1 + WGS + wg, each
// between a warpgroup and the one before it: 256 threads): one warpgroup's wgmmas reach the tensor pipe together
// instead of interleaved with another's, so it finishes its MMAs sooner and the warpgroups' epilogues fall between the
// others' MMAs. In round k the warpgroups with a tile are a prefix 0..m-1 of the block's (tiles are dealt
// block-major): the turn goes from m - 1 to warpgroup 0 (`to`), and `pass` is false where the next turn's warpgroup
// has no tile, so every wait has its arrive.
static_assert(WGS >= 2 && 2 * WGS < 16, "turn barriers");
constexpr int TURN_THREADS = 2 * 128;
__device__ __forceinline__ void turn_wait(int wg) { named_sync<TURN_THREADS>(1 + WGS + wg); }
__device__ __forceinline__ void turn_pass(int to) { named_arrive<TURN_THREADS>(1 + WGS + to); }
template <Prec P>
__device__ __forceinline__ void mma_ordered(float (&acc)[NACC], const float* sw, const float* sx, int wg, bool wait,
                                            bool pass, int to) {
    if (wait) turn_wait(wg);
    mma_issue<P>(acc, sw, sx);
    if (pass) turn_pass(to);
    wgmma_wait<0>();
    fence_operand(acc);
}

// One output from its accumulator: (bias b, sum s of its channel; scale undoes fp16's weight scale), bias and sum
// folded into the leaky ReLU (one instruction fewer per output, fp16's scale in its FFMAs), TF32 with the degree-3
// GELU on the halved clamp (common.cuh).
template <Prec P>
__device__ __forceinline__ float epilogue_acc(float a, float scale, float b, float s) {
    return epilogue_conv3d_folded<P == Prec::TF32, P == Prec::TF32>(a, scale, b + s, fmaf(0.2f, b, s));
}

// A tile's outputs straight from the accumulators (store_acc_tile, 04b_common.cuh)
template <Prec P>
__device__ __forceinline__ void store_tile(const float (&acc)[NACC], const float2* schan, float* __restrict__ y,
                                           const Geom& g, TileCoord tc, int warp, int lane, float scale = 1.0f) {
    store_acc_tile(acc, schan, y, g, tc, warp, lane,
                   [&](float a, float2 bs) { return epilogue_acc<P>(a, scale, bs.x, bs.y); });
}

__device__ __forceinline__ void tma_store_4d(const CUtensorMap* map, const void* src, int c0, int c1, int c2, int c3) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                 :: "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
__device__ __forceinline__ void tma_store_5d(const CUtensorMap* map, const void* src, int c0, int c1, int c2, int c3,
                                             int c4) {
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n"
                 :: "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
                    "r"(c4) : "memory");
}
// The group store: the output rows of GROUP warpgroups leave in one tensor copy per channel group. The tiles are dealt
// block-major, so warpgroups wg = GROUP k .. GROUP k + GROUP - 1 of a block hold GROUP consecutive rows of the same
// planes in every round, and at the full size (Wo = 62: a tile is a whole row) those rows are one run of y per
// channel (fp16: 4 x 248 = 992 bytes, 32-byte aligned; TF32: 496 bytes, 16-byte aligned). 62-pixel rows share a
// 32-byte sector with the next row's tile at 3 of 4 row ends, and the L2 writes such rows at about half the rate of
// sector-aligned runs (1.8 against 3.8 TB/s, measured apart from the kernel). Warp w of each warpgroup of a group
// writes its 16 channels' row into slot wg % GROUP of box w; the last slot's warp waits for the others (FULL), copies
// the box out, waits until the engine has read it and tells the others (EMPTY), which wait for that before they next
// write the box. The epilogue's math runs before that wait, so only its 16 shared stores do.
// TF32 (boxes of two rows): a box row is 124 floats, 28 banks on, so the 8 channel rows one st.shared.v2 writes would
// start 4 banks apart and the rows of gid g and g + 1 overlap (4 wavefronts where 2 would do). The box takes its
// channel rows in the order row(c) = 8 (c / 8) + 2 (c % 4) + (c / 4) % 2, so that gid 0-3 write rows 0, 2, 4, 6 (0,
// 24, 16, 8 banks on) and gid 4-7 rows 1, 3, 5, 7; the copy reads them back through a 5-D map of y whose channel dims
// are (c / 4) % 2, c % 4, c / 8 (strides 4, 1, 8 planes), so global memory gets the usual order. DEFER: the last slot's
// warp issues the copy and goes on; its wait for the engine's reads and the EMPTY arrive that frees the box for the
// partner move to the next round (group_release), after this warpgroup has issued its wgmmas, so that they overlap
// its MMAs instead of holding the warp (and with it the turn order) in the store.
// fp16 (two sets of boxes): the last slot's warp waits only for the previous round's copy to have read its box, and
// frees that box, the other set's.
template <Prec P, bool DEFER = false>
__device__ __forceinline__ void store_tile_group(float (&acc)[NACC], const float2* schan, float* gbuf, uint64_t* gbar,
                                                 const CUtensorMap* ymap, const Geom& g, TileCoord tc, int wg,
                                                 int warp, int lane, unsigned round, float scale = 1.0f) {
    constexpr bool FP16 = P == Prec::FP16;
    const bool first_round = round == 0;
    const int gid = lane >> 2, tq = lane & 3, slot = wg % GROUP<P>;
    const int b = (FP16 ? (round & 1) * (GBARS<P> / 2) : 0) + (wg / GROUP<P>) * 4 + warp;
    if (FP16) round >>= 1;                  // the uses of this box before this one
    float* box = gbuf + b * GBOX<P>;
    uint64_t* full = gbar + b;
    uint64_t* empty = gbar + GBARS<P> + b;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float2 bs_c = schan[16 * warp + gid + 8 * h];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            acc[4 * j + 2 * h] = epilogue_acc<P>(acc[4 * j + 2 * h], scale, bs_c.x, bs_c.y);
            acc[4 * j + 2 * h + 1] = epilogue_acc<P>(acc[4 * j + 2 * h + 1], scale, bs_c.x, bs_c.y);
        }
    }
    if (slot < GROUP<P> - 1 && round > 0) mbar_wait(empty, (round - 1) & 1);   // the last round's copy has read the box
    // channel gid's row in the box; channel gid + 8's is 8 rows on
    const int brow = FP16 ? gid : 2 * (gid & 3) + (gid >> 2);
    const uint32_t lane_box = smem_addr(box) + 4u * (brow * GPX<P> + slot * TW + 2 * tq);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int j = 0; j < 8; ++j)             // not columns 62-63 (j = 7, tq = 3): they are the next slot's 0-1
            if (j < 7 || tq < 3)
                st_shared_f2(lane_box + 4u * (8 * h * GPX<P> + 8 * j), make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]));
    fence_proxy_async();                    // the copy engine reads shared memory through the async proxy
    __syncwarp();
    if (slot < GROUP<P> - 1) {
        if (lane == 0) mbar_arrive(full);
        return;
    }
    mbar_wait(full, round & 1);             // the other slots' rows are in the box
    if (lane == 0) {
        const int row0 = (tc.od * g.Ho + tc.oh0 - (GROUP<P> - 1)) * g.Wo;
        if constexpr (FP16) {
            tma_store_4d(ymap, box, row0, 16 * warp, tc.n, 0);
            bulk_commit();
            bulk_wait_read_but_last();      // the last round's copy has read its box, the other set's: free it
            if (!first_round) mbar_arrive(gbar + GBARS<P> + (b ^ (GBARS<P> / 2)));
        } else {
            tma_store_5d(ymap, box, row0, 0, 0, 2 * warp, tc.n);
            bulk_commit();
            if (!DEFER) bulk_wait_read();   // the box is free again: at most the one copy in flight per box
            if (!DEFER) mbar_arrive(empty);
        }
    }
    __syncwarp();
}
// The last slot's release of its box from the round before (DEFER in store_tile_group): the copy has read it, the
// partner may write it again
template <Prec P>
__device__ __forceinline__ void group_release(uint64_t* gbar, int wg, int warp, int lane) {
    if (wg % GROUP<P> == GROUP<P> - 1 && lane == 0) {
        bulk_wait_read();
        mbar_arrive(gbar + GBARS<P> + (wg / GROUP<P>) * 4 + warp);
    }
    __syncwarp();
}

// The FP32 path of an fp16 tile whose FP16 operands cannot carry the input: each of this thread's outputs as a plain
// FP32 dot product from global memory (slow; only non-finite or |x| >= 65520 inputs and non-finite weights take it),
// so Inf and NaN propagate as in eager. A whole warp takes it when one of its threads must (__ballot_sync): the group
// store is warp-collective. The FP32 sums go into the accumulators (unscaled: the caller passes scale 1) and leave
// through the same stores as every other tile, so a warp taking this path still writes its slot of the group's box.
// Outputs that are not stored (the MMA's discarded columns, rows or columns past the output) are left as they are.
__device__ __forceinline__ void fp32_acc(float (&acc)[NACC], const float* __restrict__ x, const float* __restrict__ w,
                                         const Geom& g, TileCoord tc, int warp, int lane) {
    const long long plane = (long long)g.H * g.W, cstride = (long long)g.D * plane;
#pragma unroll 1
    for (int i = 0; i < NACC; ++i) {
        const int e = i & 1, h = (i >> 1) & 1, j = (i >> 2) % (XW / 8), t = (i >> 2) / (XW / 8);
        const int col = 8 * j + 2 * (lane & 3) + e;
        const int co = acc_channel(warp, lane, h), oh = tc.oh0 + t, ox = tc.ox0 + col;
        if (oh >= g.Ho || col >= TW || ox >= g.Wo) continue;
        const float* xp = x + tc.n * CIN * cstride + tc.od * plane + (long long)oh * g.W + ox;
        float v = 0.0f;
#pragma unroll 1
        for (int ci = 0; ci < CIN; ++ci)
#pragma unroll 1
            for (int tap = 0; tap < TAPS; ++tap)
                v = fmaf(__ldg(xp + ci * cstride + (tap / 9) * plane + ((tap / 3) % 3) * g.W + tap % 3),
                         __ldg(w + (co * CIN + ci) * TAPS + tap), v);
#pragma unroll
        for (int k = 0; k < NACC; ++k)          // constant indices: acc stays in registers
            if (k == i) acc[k] = v;
    }
}

// The input window (fp16, WIN): a block's 4 warpgroups hold 4 consecutive output rows in every round (block-major
// dealing), whose inputs overlap: 6 rows per depth instead of 4 x 3 (8 when the 4 rows cross into the next plane).
// One window per round holds them, each row staged once by one of the block's 512 threads; window r sits in buffer
// r % 3 and is staged two rounds ahead, so no warpgroup waits for another's staging (an mbarrier per buffer for
// "staged" and one for "read by every warpgroup's wgmmas"). Rows 0..k0+1 of a depth hold the first plane's rows from
// the round's first output row (k0 of the 4 tiles in it), rows k0+2..7 the next plane's from row 0: warpgroup wg's tap
// (kd, kh) reads row kd * 8 + wg + kh (+2 past the first plane), an offset known at compile time but for the base.
// A round's window: its first output row (oh0 of plane (n0, od0)), how many of its 4 tiles lie in that plane (k0), and
// the next plane (n1, od1), whose rows 0..5-k0 follow at window row k0 + 2 when k0 < 4 (has1: that plane exists).
struct WinRound { int n0, od0, oh0, k0, n1, od1; bool has1; };
__device__ __forceinline__ WinRound win_round(const Geom& g, const Walk& w) {
    WinRound r;
    r.n0 = w.n; r.od0 = w.od; r.oh0 = w.ty;
    r.k0 = min(4, g.Ho - w.ty);
    const bool wrap = w.od + 1 == g.Do;
    r.od1 = wrap ? 0 : w.od + 1;
    r.n1 = wrap ? w.n + 1 : w.n;
    r.has1 = r.k0 < 4 && r.n1 < g.N;
    return r;
}
// Item i of a round: quad q (4 pixels) of window row wr at depth dz, k-half `half`: rows per depth nr = 6 (one plane)
// or 8 (two), so 96 nr items, quads fastest (a warp loads two 256-byte row runs per channel)
struct WinItems { float4 v[WIN_ITEMS][4]; int at[WIN_ITEMS]; };   // at: 2 (staged pixel) + half, or -1: no item
__device__ __forceinline__ void win_load(WinItems& s, const float* __restrict__ x, const Geom& g, const WinRound& r) {
    const int nr = r.k0 < 4 ? WROWS : 6;
    const unsigned plane = (unsigned)g.D * g.H * g.W;
#pragma unroll
    for (int k = 0; k < WIN_ITEMS; ++k) {
        const int i = threadIdx.x + THREADS * k, q = i & 15, rr = i >> 4;
        const int wr = nr == WROWS ? rr & 7 : rr % 6, t = nr == WROWS ? rr >> 3 : rr / 6;
        const int dz = t % 3, half = t / 3;
        const bool next = wr >= r.k0 + 2;                       // the next plane's rows (k0 < 4 only)
        const bool ok = i < 96 * nr && (!next || r.has1) && 4 * q < g.W;
        const int n = next ? r.n1 : r.n0, row = next ? wr - (r.k0 + 2) : r.oh0 + wr;
        const unsigned off = ((4u * half * g.D + (next ? r.od1 : r.od0) + dz) * g.H + row) * g.W + 4 * q;
        const float* xs = x + (long long)(ok ? n : 0) * (CIN * plane) + (ok ? off : 0u);
#pragma unroll
        for (int c = 0; c < 4; ++c) s.v[k][c] = ldg4_or_zero(xs + c * plane, ok);
        s.at[k] = i < 96 * nr && (!next || r.has1) ? 2 * ((dz * WROWS + wr) * XP + 4 * q) + half : -1;
    }
}
// The items into window buffer sxw, rotated as store_input's; columns past W are stored as the zeros win_load left there
__device__ __forceinline__ void win_stage(float* sxw, const WinItems& s) {
    const int rot_of_lane = (threadIdx.x >> 1) & 3;
#pragma unroll
    for (int k = 0; k < WIN_ITEMS; ++k) {
        if (s.at[k] < 0) continue;
        put_rotated(s.v[k], rot_of_lane, [&](int px, const float (&e)[4]) {
            store_pixel<Prec::FP16>(sxw, s.at[k] & 1, (s.at[k] >> 1) + px, e);
        });
    }
}
// A tile's 14 k16 wgmmas from the window (mma_issue's fp16 path with rows WROWS apart per depth): B's base is the
// warpgroup's first row in buffer sxw; tap 26 pairs with the zero row `zrow` (a runtime lbo: the row is past every window)
__device__ __forceinline__ void win_mma_issue(float (&acc)[NACC], const float* sw, const float* sxw, const float* zrow) {
    auto tap_boff = [](int kd, int kh, int kw) -> uint32_t { return ((kd * WROWS + kh) * XP + kw) * 16; };
    const uint64_t a0 = wgmma_desc(smem_addr(sw), A_LBO, SBO), b0 = wgmma_desc(smem_addr(sxw), 0, SBO);
    const uint32_t alo = opaque((uint32_t)a0), blo0 = __shfl_sync(0xffffffffu, opaque((uint32_t)b0), 0);
    const uint32_t ahi = (uint32_t)(a0 >> 32), bhi = (uint32_t)(b0 >> 32);
    const uint32_t alo0 = alo - (A_LBO >> 4 << 16);
    wgmma_fence();
#pragma unroll
    for (int tap = 1; tap < TAPS; tap += 2) {
        const int t0 = tap - 1, kd0 = t0 / 9, kh0 = (t0 / 3) % 3, kw0 = t0 % 3;
        const int kd = tap / 9, kh = (tap / 3) % 3, kw = tap % 3;
        const uint32_t boff0 = tap_boff(kd0, kh0, kw0), boff = tap_boff(kd, kh, kw);
        wgmma_f16(acc, desc_lbo(alo0, ahi, t0 * A1_TAP + A1_HI, A1_TAP), desc_lbo(blo0, bhi, boff0, boff - boff0),
                  tap > 1);
    }
    constexpr uint32_t boff26 = ((2 * WROWS + 2) * XP + 2) * CORE_ROW;
    const uint32_t zlbo = smem_addr(zrow) - smem_addr(sxw) - boff26;
    wgmma_f16(acc, desc_lbo(alo0, ahi, 26 * A1_TAP + A1_HI, A1_TAP), desc_lbo(blo0, bhi, boff26, zlbo), 1);
    wgmma_commit();
}

// The depth sweep (TF32, WIN): a round is the block's 4 warpgroups on output rows oh0..oh0 + 3 of one plane (oh0 =
// 4 grp, the last group of a plane at Ho - 4: rows 58-59 computed twice at the full shape, the same values written
// twice), and the block's next round is the same rows one depth on. Their input is 6 rows of 3 depths; one depth on,
// only the deepest slab (6 rows, 12 KB) is new: a round stages 192 items (k-half, row, quad) over the block's 512
// threads where the tile loop stages 4 x 288, and 576 on a unit's first round (or the block's). Slab s in slot s % 8;
// round r's taps kd read slabs e - 3 + kd (e: slabs staged through round r); the slabs of round r + 2 are staged
// during round r, once round r - 1's wgmmas have read theirs (with 8 slots and Do >= 2 none of round r's is
// overwritten). An mbarrier per round (ring of 3) for "staged", one for "read".
// Round q: plane (n, od), rows oh0..oh0 + 3 (q = (n groups + grp) Do + od)
struct DwRound { int n, od, oh0; };
__device__ __forceinline__ DwRound dw_round(const Geom& g, int q) {
    const int u = q / g.Do, od = q - u * g.Do, n = u / g.dw_groups, grp = u - n * g.dw_groups;
    return { n, od, min(DW_RROWS * grp, g.Ho - DW_RROWS) };
}
// The block's rounds: whole units (n, group: Do rounds) dealt round-robin, unit b + i grid in wave i < full, so that
// neighbouring groups of rows, which share two input rows, run at once on neighbouring blocks and the second read of
// those rows finds them in L2 (the input is read from DRAM once); then the units left over split by rounds from t0 (a
// cut one round before a unit's end moves on one: two three-slab rounds in a row would need 9 slots).
struct DwOrder { int full, t0, rounds; };
__device__ __forceinline__ DwOrder dw_order(const Geom& g) {
    const int units = g.dw_rounds / g.Do, full = units / (int)gridDim.x;
    const long long tail = (long long)(units - full * (int)gridDim.x) * g.Do;
    auto cut = [&](int b) { const int t = (int)(b * tail / gridDim.x); return t % g.Do == g.Do - 1 ? t + 1 : t; };
    const int t0 = cut(blockIdx.x);
    return { full, t0, full * g.Do + cut(blockIdx.x + 1) - t0 };
}
__device__ __forceinline__ int dw_q(const Geom& g, const DwOrder& o, int r) {
    if (r < o.full * g.Do) {
        const int i = r / g.Do;
        return (int)(blockIdx.x + i * gridDim.x) * g.Do + r - i * g.Do;
    }
    return o.full * (int)gridDim.x * g.Do + o.t0 + r - o.full * g.Do;
}
// A cursor over the block's rounds: the variable divisions of dw_q / dw_round once per unit, not per round. A seek
// lands on a first round: r = 0, a unit's start or the tail's.
struct DwCur { int r, n, od, oh0; bool first; };
__device__ __forceinline__ DwCur dw_seek(const Geom& g, const DwOrder& o, int r) {
    const DwRound d = dw_round(g, dw_q(g, o, r));
    return { r, d.n, d.od, d.oh0, true };
}
__device__ __forceinline__ void dw_next(DwCur& c, const Geom& g, const DwOrder& o) {
    if (c.od + 1 < g.Do && c.r + 1 != o.full * g.Do) { ++c.r; ++c.od; c.first = false; }
    else c = dw_seek(g, o, c.r + 1);
}
// A round's new slabs (depths od..od + 2 when first, else od + 2) from slot s0 on: warpgroup wg loads items
// wg m .. wg m + m - 1 of them (m = 48 per slab), quads fastest (a warp reads two 256-byte row runs per channel).
// Every item is inside the input: W = 64, rows oh0..oh0 + 5 <= H - 1, depths <= D - 1 (sweep shapes, launch).
struct DwItems {
    float4 v[DW_ITEMS][4]; int at[DW_ITEMS];   // at: the item's first float in the slots, or -1
};
__device__ __forceinline__ void dw_load(DwItems& s, const float* __restrict__ x, const Geom& g, const DwRound& r,
                                        bool first, int s0, int wg, int tid) {
    const int m = (first ? 3 : 1) * (DW_SLAB_ITEMS / WGS);
    const int d0 = first ? r.od : r.od + KS - 1;
    const uint64_t plane_bytes = 4ull * g.D * g.H * g.W;
#pragma unroll
    for (int k = 0; k < DW_ITEMS; ++k) {
        const int li = tid + 128 * k, gi = wg * m + li;
        const bool ok = li < m;
        if (!ok) { s.at[k] = -1; continue; }    // no address arithmetic without an item (whole warps: items are
                                                // warp-contiguous)
        const int j = gi / DW_SLAB_ITEMS, rest = gi - j * DW_SLAB_ITEMS;
        const int half = rest / (DW_SLAB_ITEMS / 2), rr = rest - half * (DW_SLAB_ITEMS / 2);
        const int row = rr >> 4, quad = rr & 15;
        uint64_t a = reinterpret_cast<uint64_t>(
            x + ((((long long)r.n * CIN + 4 * half) * g.D + d0 + j) * g.H + r.oh0 + row) * g.W + 4 * quad);
#pragma unroll
        for (int c = 0; c < 4; ++c, a += plane_bytes) s.v[k][c] = ldg4_if(a, ok);
        const int slot = (s0 + j) & (DW_SLOTS - 1);
        s.at[k] = ok ? slot * DW_SLAB + half * DW_HALF + (row * XP + 4 * quad) * 4 : -1;
    }
}
// The items into their slots: transposed to pixel-major, rounded, rotated as store_input's
__device__ __forceinline__ void dw_stage(float* slabs, const DwItems& s, int tid) {
    const int rot_of_lane = (tid >> 1) & 3;
#pragma unroll
    for (int k = 0; k < DW_ITEMS; ++k) {
        if (s.at[k] < 0) continue;
        put_rotated(s.v[k], rot_of_lane, [&](int px, const float (&e)[4]) {
            *reinterpret_cast<float4*>(slabs + s.at[k] + 4 * px) =
                make_float4(tf32_round_rn(e[0]), tf32_round_rn(e[1]), tf32_round_rn(e[2]), tf32_round_rn(e[3]));
        });
    }
}
// A tile's 27 wgmmas (mma_issue's order): tap (kd, kh, kw) reads row wg + kh of the slab in slot (e - 3 + kd) % 8, kw
// pixels in
__device__ __forceinline__ void dw_mma_issue(float (&acc)[NACC], const float* sw, const float* slabs, int e, int wg) {
    constexpr uint32_t B_LBO = DW_HALF * 4;
    const uint64_t a0 = wgmma_desc(smem_addr(sw), A_LBO, SBO);
    const uint64_t b0 = wgmma_desc(smem_addr(slabs + wg * XP * 4), B_LBO, SBO);
    const uint32_t alo = opaque((uint32_t)a0), blo = __shfl_sync(0xffffffffu, opaque((uint32_t)b0), 0);
    const uint32_t ahi = (uint32_t)(a0 >> 32), bhi = (uint32_t)(b0 >> 32);
    uint32_t bkd[KS];
#pragma unroll
    for (int kd = 0; kd < KS; ++kd)
        bkd[kd] = __shfl_sync(0xffffffffu, blo + (((e - KS + kd) & (DW_SLOTS - 1)) * DW_SLAB * 4 >> 4), 0);
    wgmma_fence();
#pragma unroll
    for (int tap = 0; tap < TAPS; ++tap) {
        const int kd = tap / 9, kh = (tap / 3) % 3, kw = tap % 3;
        wgmma_tf32(acc, desc_at(alo, ahi, tap * WTAP * 4), desc_at(bkd[kd], bhi, (kh * XP + kw) * CORE_ROW), tap > 0);
    }
    wgmma_commit();
}

// ---- the kernel's parts, in the order it runs them ----------------------------------------------------------------

// Weights, once per block, and (bias, sum) per channel. TF32: element f = ((tap*2 + half)*64 + co)*4 + e  <-
// w[co][4*half + e][tap], rounded. fp16: w * 2^e (f16_weight_exponent) as FP16 [tap 0..27][co][8 channels], 1 KB per
// tap, w_hi(t) + 1 KB = w_hi(t + 1), tap 27 zero; the rest of shared memory is zeroed first: the discarded columns
// read the buffers' last 64 bytes, and a NaN bit pattern there would send a thread to the FP32 path for nothing.
// Returns what undoes the weights' scale (1 for TF32).
template <Prec P>
__device__ __forceinline__ float stage_weights(float* smem, const float* __restrict__ w) {
    float* sw = smem;
    float inv_scale = 1.0f;
    if constexpr (P == Prec::FP16) {
        unsigned* smax = reinterpret_cast<unsigned*>(smem + SMEM_FLOATS<P> - SMAX_FLOATS);
        for (int i = WFLOATS<P> + threadIdx.x; i < SMEM_FLOATS<P>; i += THREADS) smem[i] = 0.0f;
        __syncthreads();
        const int wexp = f16_weight_exponent(w, COUT * CIN * TAPS, smax);
        const float wscale = ldexpf(1.0f, wexp);
        inv_scale = ldexpf(1.0f, -wexp);
        for (int u = threadIdx.x; u < (TAPS + 1) * COUT * CIN; u += THREADS) {
            const int ch = u & 7, co = (u >> 3) & 63, tap = u >> 9;
            const float v = tap < TAPS ? __ldg(w + (co * CIN + ch) * TAPS + tap) * wscale : 0.0f;
            reinterpret_cast<unsigned short*>(sw)[tap * COUT * 8 + co * 8 + ch] = f16_bits(v);
        }
    } else {
        for (int f = threadIdx.x; f < WPART; f += THREADS) {
            const int e = f & 3, co = (f >> 2) & 63, half = (f >> 8) & 1, tap = f >> 9;
            sw[f] = tf32_round(__ldg(w + (co * CIN + 4 * half + e) * TAPS + tap));
        }
    }
    return inv_scale;
}

// The mbarriers: the group store's FULL (the other slots' warps) and EMPTY (the copying lane) per box; WIN: a
// window's or round's "staged" and "read", 16 warps each (one thread initialises them all: synccheck lost count of
// them with several threads)
template <Prec P, bool WIN>
__device__ __forceinline__ void init_barriers(float* smem, uint64_t* gbar) {
    if (threadIdx.x < GBARS<P>) {
        mbar_init(gbar + threadIdx.x, GROUP<P> - 1);
        mbar_init(gbar + GBARS<P> + threadIdx.x, 1);
    }
    if constexpr (WIN) {
        if (threadIdx.x == 0) {
            uint64_t* bars = P == Prec::FP16 ? reinterpret_cast<uint64_t*>(smem + WIN_AT<P> + XP * 4)
                                             : reinterpret_cast<uint64_t*>(smem + WFLOATS<P> + DW_BARS_AT);
#pragma unroll
            for (int i = 0; i < 2 * WBUFS; ++i) mbar_init(bars + i, THREADS / 32);
        }
    }
    mbar_init_fence();                      // the inits visible to the async proxy (TMA) too
}

// Staged items made visible to every warpgroup's wgmmas: the async-proxy fence, then this warp's arrival on `full`
__device__ __forceinline__ void publish_staged(uint64_t* full, int lane) {
    fence_proxy_async();
    __syncwarp();
    if (lane == 0) mbar_arrive(full);
}
// This warp's arrival on `bar` once all its lanes are past what it releases
__device__ __forceinline__ void warp_arrive(uint64_t* bar, int lane) {
    __syncwarp();
    if (lane == 0) mbar_arrive(bar);
}

// The window loop (fp16, WIN). Round r: the block's tiles t0 + r stride + 0..3, warpgroup wg's the wg-th. Window r in
// buffer r % 3; in round r each warpgroup, once its wgmmas are done and its output stored, stages its threads' items of
// window r + 2 (the buffer round r - 1 used: wempty) and issues the loads of window r + 3, in flight during the next
// round.
__device__ __forceinline__ void window_rounds(float* smem, const float2* schan, float* gbuf, uint64_t* gbar,
                                              const CUtensorMap* ymap, const float* __restrict__ x,
                                              const float* __restrict__ w, float* __restrict__ y, const Geom& g,
                                              float inv_scale) {
    constexpr Prec P = Prec::FP16;
    const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
    const int warp = tid >> 5, lane = threadIdx.x & 31;
    const float* const sw = smem;
    const int stride = gridDim.x * WGS, t0 = blockIdx.x * WGS;
    float* const wins = smem + WFLOATS<P>;
    const float* const zrow = smem + WIN_AT<P>;
    uint64_t* const wfull = reinterpret_cast<uint64_t*>(smem + WIN_AT<P> + XP * 4);   // past the zero row
    uint64_t* const wempty = wfull + WBUFS;
    const int rounds = (g.tiles - t0 + stride - 1) / stride;
    Walk wt = walk_of(g, t0), wl = wt;      // round r's first tile; the next window to load
    WinItems st;
#pragma unroll 1
    for (int r = 0; r < 2 && r < rounds; ++r) {
        win_load(st, x, g, win_round(g, wl));
        win_stage(wins + r * WBUF, st);
        publish_staged(wfull + r, lane);
        walk_next(wl, g);
    }
    if (rounds > 2) win_load(st, x, g, win_round(g, wl));
#pragma unroll 1
    for (int r = 0; r < rounds; ++r) {
        const int b = r % WBUFS, tile_r = t0 + r * stride, tile = tile_r + wg;
        const int k0 = min(4, g.Ho - wt.ty);
        TileCoord tc = { wt.n, wt.od, wt.ty + wg, 0 };
        if (tc.oh0 >= g.Ho) {                       // this warpgroup's row is in the next plane
            tc.oh0 -= g.Ho;
            if (++tc.od == g.Do) { tc.od = 0; ++tc.n; }
        }
        walk_next(wt, g);
        mbar_wait(wfull + b, (r / WBUFS) & 1);
        float acc[NACC];
        const bool has = tile < g.tiles;
        if (has) {
            if (!(wg == 0 && r == 0)) turn_wait(wg);
            win_mma_issue(acc, sw, wins + b * WBUF + (wg + (wg >= k0 ? 2 : 0)) * XP * 4, zrow);
            if (wg + 1 < WGS ? tile + 1 < g.tiles : tile_r + stride < g.tiles) turn_pass((wg + 1) % WGS);
            wgmma_wait<0>();
            fence_operand(acc);
        }
        warp_arrive(wempty + b, lane);
        if (has) {
            const bool fp32 = __ballot_sync(~0u, acc_nonfinite(acc)) != 0u;  // Inf or NaN in x or w, or |x| >= 65520
            if (fp32) fp32_acc(acc, x, w, g, tc, warp, lane);
            const float scale = fp32 ? 1.0f : inv_scale;
            if (g.ygroup && tile_r + GROUP<P> - 1 < g.tiles)
                store_tile_group<P>(acc, schan, gbuf, gbar, ymap, g, tc, wg, warp, lane, unsigned(r), scale);
            else
                store_tile<P>(acc, schan, y, g, tc, warp, lane, scale);
        }
        if (r + 2 < rounds) {
            const int b2 = (r + 2) % WBUFS;
            if (r >= 1) mbar_wait(wempty + b2, ((r - 1) / WBUFS) & 1);    // round r - 1's wgmmas have read it
            win_stage(wins + b2 * WBUF, st);
            publish_staged(wfull + b2, lane);
            walk_next(wl, g);
            if (r + 3 < rounds) win_load(st, x, g, win_round(g, wl));
        }
    }
}

// The depth sweep's loop (TF32, WIN): the block's rounds r (dw_order, dw_q); a thread loads round r + 3's items
// during round r, while its epilogue and round r + 1 run, and stages them, before its epilogue, in round r + 1.
__device__ __forceinline__ void sweep_rounds(float* smem, const float2* schan, float* gbuf, uint64_t* gbar,
                                             const CUtensorMap* ymap, const float* __restrict__ x, const Geom& g) {
    constexpr Prec P = Prec::TF32;
    const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
    const int warp = tid >> 5, lane = threadIdx.x & 31;
    const float* const sw = smem;
    float* const slabs = smem + WFLOATS<P>;
    uint64_t* const wfull = reinterpret_cast<uint64_t*>(slabs + DW_BARS_AT);
    uint64_t* const wempty = wfull + 3;
    const DwOrder o = dw_order(g);
    const int rounds = o.rounds;
    DwCur cl = dw_seek(g, o, 0), cc = cl;   // the next round to load, the round computed
    int el = 0;                             // the slabs staged before the next round to load
    DwItems st;
#pragma unroll 1
    for (int r = 0; r < 2 && r < rounds; ++r) {
        dw_load(st, x, g, { cl.n, cl.od, cl.oh0 }, cl.first, el & (DW_SLOTS - 1), wg, tid);
        dw_stage(slabs, st, tid);
        publish_staged(wfull + r, lane);
        el += cl.first ? KS : 1;
        dw_next(cl, g, o);
    }
    bool fl = false;
    if (rounds > 2) {
        fl = cl.first;
        dw_load(st, x, g, { cl.n, cl.od, cl.oh0 }, fl, el & (DW_SLOTS - 1), wg, tid);
    }
    int e = 0;                              // slabs staged through round r
#pragma unroll 1
    for (int r = 0; r < rounds; ++r, dw_next(cc, g, o)) {
        const int b = r % 3;
        e += cc.first ? KS : 1;
        const TileCoord tc = { cc.n, cc.od, cc.oh0 + wg, 0 };
        mbar_wait(wfull + b, (r / 3) & 1);
        float acc[NACC];
        if (!(wg == 0 && r == 0)) turn_wait(wg);
        dw_mma_issue(acc, sw, slabs, e, wg);
        if (wg + 1 < WGS || r + 1 < rounds) turn_pass((wg + 1) % WGS);
        if (r > 0) group_release<P>(gbar, wg, warp, lane);     // last round's box, while this round's wgmmas run
        wgmma_wait<0>();
        fence_operand(acc);
        warp_arrive(wempty + b, lane);
        if (r + 2 < rounds) {
            if (r >= 1) mbar_wait(wempty + (r - 1) % 3, ((r - 1) / 3) & 1);   // round r - 1's wgmmas have read it
            dw_stage(slabs, st, tid);
            publish_staged(wfull + (r + 2) % 3, lane);
            el += fl ? KS : 1;
            dw_next(cl, g, o);
            if (r + 3 < rounds) {
                fl = cl.first;
                dw_load(st, x, g, { cl.n, cl.od, cl.oh0 }, fl, el & (DW_SLOTS - 1), wg, tid);
            }
        }
        store_tile_group<P, true>(acc, schan, gbuf, gbar, ymap, g, tc, wg, warp, lane, unsigned(r));
    }
}

// The tile loop (every shape the window loops do not take): each warpgroup stages its own tile (loaded during the
// last tile's epilogue), takes its turn at the MMAs, issues the next tile's loads, and stores its output with its
// group's rows where it can. wg is read here, not passed: passed in, the compiler folds `wg + 1 < WGS` into a compare
// of threadIdx.x and the machine code moves (the kernel's own SASS, as before this loop was a function, is the record's)
template <Prec P>
__device__ __forceinline__ void tile_rounds(const float* sw, float* sx, const float2* schan, float* gbuf,
                                            uint64_t* gbar, const CUtensorMap* ymap, const float* __restrict__ x,
                                            const float* __restrict__ w, float* __restrict__ y, const Geom& g,
                                            float inv_scale, int tid, int warp, int lane) {
    const int wg = threadIdx.x >> 7;
    const int stride = gridDim.x * WGS;
    const unsigned tile0 = blockIdx.x * WGS;               // tiles are dealt block-major
    int tile = tile0 + wg;
    Staged st;
    const Lean lean = lean_of(g, tid);
    Walk walk = walk_of(g, tile);
    unsigned grounds = 0;                       // TF32: group rounds this thread has stored
    if (tile < g.tiles) load_input_lean<P>(st, x, g, coord_of(walk), tid, lean);
#pragma unroll 1
    for (; tile < g.tiles; tile += stride) {
        const TileCoord tc = coord_of(walk);
        walk_next(walk, g);                     // the next tile's coordinates (past the end on the last tile)
        buffer_free(wg);                        // every warp's wgmmas of the last tile have read the buffer
        store_input<P>(sx, st, tid);
        buffer_staged(wg);
        float acc[NACC];
        const int next = tile + stride;
        // warpgroup 0's first turn is its own; the next turn: wg + 1, or warpgroup 0 a round on
        mma_ordered<P>(acc, sw, sx, wg, !(wg == 0 && tile == tile0),
                       wg + 1 < WGS ? tile + 1 < g.tiles : tile + stride - (WGS - 1) < g.tiles, (wg + 1) % WGS);
        if (next < g.tiles) load_input_lean<P>(st, x, g, coord_of(walk), tid, lean);   // in flight during the epilogue
        // the group store in a round where the whole group has a tile (uniform in the group: tile - slot is the
        // group's first tile), else the tile alone
        const bool group = g.ygroup && tile - wg % GROUP<P> + GROUP<P> - 1 < g.tiles;
        if constexpr (P == Prec::FP16) {
            const bool fp32 = __ballot_sync(~0u, acc_nonfinite(acc)) != 0u;  // Inf or NaN in x or w, or |x| >= 65520
            if (fp32) fp32_acc(acc, x, w, g, tc, warp, lane);
            const float scale = fp32 ? 1.0f : inv_scale;
            // the round from the tile (a counter carried through this loop spilled): group rounds come first
            if (group)
                store_tile_group<P>(acc, schan, gbuf, gbar, ymap, g, tc, wg, warp, lane,
                                    unsigned(tile - tile0 - wg) / unsigned(stride), scale);
            else store_tile<P>(acc, schan, y, g, tc, warp, lane, scale);
        } else {
            if (group) store_tile_group<P>(acc, schan, gbuf, gbar, ymap, g, tc, wg, warp, lane, grounds++);
            else store_tile<P>(acc, schan, y, g, tc, warp, lane);
        }
    }
}

// Two kernels, each with its own registers: the window loop (WIN: the depth sweep in TF32, the input window in fp16)
// at the shapes it takes, and the tile loop at every other
template <Prec P, bool WIN>
__global__ void __launch_bounds__(THREADS, 1)
conv3d_wgmma_kernel(const __grid_constant__ CUtensorMap ymap, const float* __restrict__ x, const float* __restrict__ w,
                    const float* __restrict__ bias, const float* __restrict__ addend, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* sw = smem;
    float2* schan = reinterpret_cast<float2*>(smem + SMEM_FLOATS<P> - SMAX_FLOATS - CHAN_FLOATS);
    const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
    const int warp = tid >> 5, lane = threadIdx.x & 31;
    float* sx = smem + WFLOATS<P> + wg * XBUF;
    const float inv_scale = stage_weights<P>(smem, w);
    for (int c = threadIdx.x; c < COUT; c += THREADS) schan[c] = make_float2(__ldg(bias + c), __ldg(addend + c));
    float* gbuf = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(smem + WFLOATS<P> + XREGION<P>) + TMA_ALIGN - 1)
                                           & ~(TMA_ALIGN - 1));      // the boxes aligned as TMA wants
    uint64_t* gbar = reinterpret_cast<uint64_t*>(gbuf + GBARS<P> * GBOX<P>);
    init_barriers<P, WIN>(smem, gbar);
    fence_proxy_async();
    __syncthreads();
    if constexpr (WIN) {
        if constexpr (P == Prec::FP16) window_rounds(smem, schan, gbuf, gbar, &ymap, x, w, y, g, inv_scale);
        else sweep_rounds(smem, schan, gbuf, gbar, &ymap, x, g);
    } else {
        tile_rounds<P>(sw, sx, schan, gbuf, gbar, &ymap, x, w, y, g, inv_scale, tid, warp, lane);
    }
    if (lane == 0) bulk_wait_all();             // every bulk copy done before the block's shared memory goes
#endif
}

// The launch: the geometry, the tensor map of y for the group store, and which kernel
template <Prec P>
const char* launch_with(const ConvArgs& a, cudaStream_t stream) {
    constexpr const char* NAME = "04b_implicit_gemm_wgmma (conv3d)";
    constexpr size_t SMEM = SMEM_BYTES<P>;
    Geom g{};
    int sms = 0, grid = 0;
    long long blocks = 0;
    if (const char* err = launch_geometry(a, NAME, WGS, g, sms, blocks)) return err;

    // fp16: the window where a round's 4 tiles are whole rows (tiles_x = 1) of at most two planes (Ho >= 3), loads
    // lean. TF32: the depth sweep where a tile is a whole row of 64 input pixels (Wo = 62), a plane has 4 rows or
    // more, a unit 2 rounds or more (8 slots), loads are lean and the output takes the group store's tensor copies
    // (below). Ho even: a group's copy starts at pixel (od Ho + oh0) 62 of its plane, 16-byte aligned only for an even
    // row (an inner coordinate of 2 mod 4 floats is an illegal instruction)
    auto* const kernel = g.tiles_x == 1 && a.Ho >= 3 && g.xlean ? conv3d_wgmma_kernel<P, true> : conv3d_wgmma_kernel<P, false>;
    bool dw_shape = false;
    int dw_grid = 0;
    if constexpr (P == Prec::FP16) {
        if (const char* err = cf_persistent_grid(kernel, THREADS, SMEM, blocks, sms, NAME, grid)) return err;
    } else {
        g.dw_groups = cf_ceil_div(a.Ho, DW_RROWS);
        const long long dw_rounds = (long long)a.N * g.dw_groups * a.Do;
        g.dw_rounds = (int)(dw_rounds < 0x7fffffffLL ? dw_rounds : 0);
        dw_shape = a.Wo == TW && a.Ho >= DW_RROWS && a.Ho % 2 == 0 && a.Do >= 2 && g.xlean && dw_rounds < 0x7fffffffLL;
        if (const char* err = cf_persistent_grid(conv3d_wgmma_kernel<P, true>, THREADS, SMEM, blocks, sms, NAME, dw_grid))
            return err;
        if (const char* err = cf_persistent_grid(conv3d_wgmma_kernel<P, false>, THREADS, SMEM, blocks, sms, NAME, grid))
            return err;
    }
    {   // the tile stride, grid x warpgroups, as digits (tx, ty, od, n): the tile loop's walk (walk_next)
        long long t = (long long)grid * WGS;
        g.sx = (int)(t % g.tiles_x); t /= g.tiles_x;
        g.sy = (int)(t % g.tiles_y); t /= g.tiles_y;
        g.sd = (int)(t % a.Do); g.sn = (int)(t / a.Do);
    }
    CUtensorMap ymap{};
    const long long plane = (long long)a.Do * a.Ho * a.Wo;
    const uint32_t box0 = GPX<P>;       // GROUP whole rows: only where a tile is a whole row (Wo = TW)
    if constexpr (P == Prec::FP16) {
        const bool group_shape = a.Wo == TW && (a.Do * a.Ho) % GROUP<P> == 0;
        g.ytma = g.ylean && plane % 4 == 0 && plane < 0x80000000LL &&
                 cf_encode_tma_4d(&ymap, a.y, {(uint64_t)plane, (uint64_t)COUT, (uint64_t)a.N, 1}, {box0, 16, 1, 1});
        g.ygroup = g.ytma && group_shape;
        kernel<<<grid, THREADS, SMEM, stream>>>(ymap, a.x, a.w, a.bias, a.param, a.y, g);
    } else {
        // the depth sweep's rounds are 4 rows of one plane whatever Do Ho is: its box is the group's
        const bool group_shape = a.Wo == TW && ((a.Do * a.Ho) % GROUP<P> == 0 || dw_shape);
        // y as [n][c / 8][c % 4][(c / 4) % 2][plane] read innermost first: pixels, (c / 4) % 2, c % 4, c / 8, n
        const uint64_t pb = (uint64_t)plane * 4;
        g.ytma = g.ylean && plane % 4 == 0 && plane < 0x80000000LL &&
                 cf_encode_tma_strided<5>(&ymap, a.y, {(uint64_t)plane, 2, 4, (uint64_t)COUT / 8, (uint64_t)a.N},
                                          {4 * pb, pb, 8 * pb, (uint64_t)COUT * pb}, {box0, 2, 4, 2, 1});
        g.ygroup = g.ytma && group_shape;
        if (dw_shape && g.ygroup)
            conv3d_wgmma_kernel<P, true><<<dw_grid, THREADS, SMEM, stream>>>(ymap, a.x, a.w, a.bias, a.param, a.y, g);
        else
            conv3d_wgmma_kernel<P, false><<<grid, THREADS, SMEM, stream>>>(ymap, a.x, a.w, a.bias, a.param, a.y, g);
    }
    return nullptr;
}

}  // namespace cf04b

const char* launch(const ConvArgs& a, cudaStream_t stream) { return cf04b::launch_with<cf04b::PREC>(a, stream); }
