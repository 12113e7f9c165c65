// 04b_common — what conv3d step 04b's two files share: 04b_implicit_gemm_wgmma.cu (TF32, FP16) and 04b_split_wgmma.cu
// (3xtf32, tf32+bf16, 3xfp16) each open with #include "04b_common.cuh" (convfuse/build.py pastes it in there).
// The tile's geometry, the store straight from the accumulators, the staging handshake of a warpgroup's buffer, and
// the launch's checks and geometry. Each file keeps its own Geom, a kernel parameter whose first fields are the same:
// as a shared base struct they would be padded to 44 bytes, moving the TF32/FP16 file's ytma and ygroup (now at
// bytes 43 and 44) and so the constant-bank offsets its machine code reads them at.
#pragma once

namespace cf04b {

constexpr int CIN = 8, COUT = 64, KS = 3, TAPS = KS * KS * KS;
constexpr int XW = 64;                   // staged pixels per input row = MMA columns per output row
constexpr int TW = XW - (KS - 1);        // output columns per tile (62)
constexpr int TH = 1;                    // output rows per tile: one m64n64 wgmma
constexpr int XD = KS, XH = TH + KS - 1; // staged depths and rows per tile
constexpr int NACC = XW * TH / 2;        // accumulators per thread
constexpr int XP = XW;                   // staged row pitch in pixels
constexpr int XHALF = XD * XH * XP * 4;  // floats per k-half of a staged tile
constexpr int WTAP = 2 * COUT * 4;       // floats per tap of A (TF32)
constexpr int WPART = TAPS * WTAP;
constexpr uint32_t CORE_ROW = 16;        // bytes per core-matrix row: one pixel's (or one channel's) 16-byte unit
constexpr int CHAN_FLOATS = 2 * COUT;    // (bias, sum) per channel, for the epilogue
constexpr int SMAX_FLOATS = 4;           // the weights' max (the FP16 builds), 16 B

struct TileCoord { int n, od, oh0, ox0; };

// A warpgroup restages its own buffer between its tiles: it waits until every warp's wgmmas of the last tile have read
// it (buffer_free), stores the next tile, then makes the stores visible to the async proxy the wgmmas read through and
// to the whole warpgroup (buffer_staged)
__device__ __forceinline__ void buffer_free(int wg) { warpgroup_barrier(1 + wg); }
__device__ __forceinline__ void buffer_staged(int wg) {
    fence_proxy_async();
    warpgroup_barrier(1 + wg);
}

// Bias, epilogue and stores straight from the accumulators (store_acc_row, kernels/wgmma.cuh): a thread holds two
// adjacent pixels of a channel row (acc[32t + 4j + 2h + e] = channel 16*warp + gid + 8h, row oh0 + t, column 8j + 2tq
// + e); each quad of lanes writes 32 contiguous bytes. out(a, (bias, sum)) is an output from its accumulator (each
// file's epilogue_acc). schan holds (bias, sum) per channel, staged in shared memory once per block: read per tile
// from global memory they often missed L1 (the input stream evicts them) and their first use waited on it; registers
// would hold them for free but spill the TF32 build at its 128.
template <class Geom, class Out>
__device__ __forceinline__ void store_acc_tile(const float (&acc)[NACC], const float2* schan, float* __restrict__ y,
                                               const Geom& g, TileCoord tc, int warp, int lane, Out out) {
    const int gid = lane >> 2, tq = lane & 3;
    const int lim = min(TW, g.Wo - tc.ox0) - 2 * tq;     // pixel pair j is in the row when 8j < lim
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int c = 16 * warp + gid + 8 * h;
        const float2 bs_c = schan[c];
        float* yc = y + (((long long)(tc.n * COUT + c) * g.Do + tc.od) * g.Ho + tc.oh0) * g.Wo + tc.ox0 + 2 * tq;
#pragma unroll
        for (int t = 0; t < TH; ++t) {
            if (tc.oh0 + t >= g.Ho) break;      // warp-uniform
            float v[16];
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                v[2 * j]     = out(acc[32 * t + 4 * j + 2 * h], bs_c);
                v[2 * j + 1] = out(acc[32 * t + 4 * j + 2 * h + 1], bs_c);
            }
            store_acc_row<8>(yc + t * g.Wo, v, lim);
        }
    }
}

// The launch's checks and the geometry both files' kernels take (Geom's first fields): the shapes, an sm_90a device
// (sms: its SM count), tiles of TW output columns of one row, a 32-bit tile index with room for a stride of `wgs`
// warpgroups per SM, which loads and stores are legal, and the blocks of `wgs` tiles. nullptr, or why it is refused.
template <class Geom>
const char* launch_geometry(const ConvArgs& a, const char* name, int wgs, Geom& g, int& sms, long long& blocks) {
    static_assert(CIN == 8 && COUT == 64 && KS == 3, "the shapes cf_conv3d_shape checks");
    if (const char* err = cf_conv3d_shape(a, name)) return err;
    int dev = 0;
    if (const char* err = cf_sm90a_device(name, dev, sms)) return err;
    g.N = a.N; g.D = a.D; g.H = a.H; g.W = a.W; g.Do = a.Do; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, TW);
    g.tiles_y = a.Ho;
    const long long tiles = (long long)a.N * a.Do * g.tiles_y * g.tiles_x;
    if (tiles > 0x7fffffffLL - (long long)sms * wgs)
        return cf_message(name, ": too many tiles for a 32-bit tile index");
    g.tiles = (int)tiles;
    g.xvec = (a.W % 4 == 0) && (reinterpret_cast<uintptr_t>(a.x) % 16 == 0);
    g.xlean = g.xvec && (long long)CIN * a.D * a.H * a.W < 0x80000000LL;
    g.ylean = a.Wo % 2 == 0 && (reinterpret_cast<uintptr_t>(a.y) % 8 == 0) &&
              (long long)COUT * a.Do * a.Ho * a.Wo < 0x80000000LL;
    blocks = (tiles + wgs - 1) / wgs;
    return nullptr;
}

}  // namespace cf04b
