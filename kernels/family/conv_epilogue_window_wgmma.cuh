// conv_epilogue_window_wgmma.cuh — design tf32h (TF32, sm_90a, 2-D): the window template's pipeline
// (conv_epilogue_window.cuh, pasted before this file: a haloed cp.async window per 8-channel chunk, pre-arranged weights,
// persistent tiles, 2 stages, Cout slices, its drain) around study step 04d's wgmma core (kernels/wgmma.cuh's RsChunk,
// pasted before both). This file is only what differs: the window's WinCore for kTF32H.
//
// What changed from the window's mma.sync (tf32w): the GEMM turned around as in 04d. M = 64 output pixels of one row,
//   N = the Cout slice padded to 64, K = 8 channels of one tap. A from registers, straight from the window (RsChunk with
//   PAIRS: a warp's M rows g, g + 8 are its pixels 2 g, 2 g + 1, one 8-byte LDS per channel and input row, cvt.rn at
//   load); the window's 2-D layout is 04d's box (row stride 68, channel stride 408 = 24 mod 32). B: the weights,
//   written by the pre-pass K-major without swizzle, per (chunk, slice) [tap][k-half][co 64][4 channels] (04d's layout,
//   2 KB a tap), read through a shared-memory descriptor. A block is one warpgroup owning 4 output rows x 64 columns,
//   an m64n64 accumulator a row (128 registers a thread, tf32w's count); input row I's three fragments serve output rows
//   I - r: 18 fragments (24 8-byte loads a thread) and 36 wgmmas a chunk where tf32w issues 288 mma.sync a warp.
// Async order. cp.async writes shared memory in the generic proxy and wgmma reads B in the async proxy: every thread
//   fences (fence.proxy.async) after its wait and before the barrier. The window's A rows are read by LDS before their
//   wgmmas issue; RsChunk waits before a register set is reloaded; wait_group 0 ends every chunk (its stage, weights
//   too, is refilled after the next barrier, and its fragment registers die with the call).
// Epilogue: accumulators + bias parked 16 channels at a time for all 4 rows by the whole warpgroup ([row][channel]
//   [pixel], row stride 68: the pixel-pair float2 stores conflict-free), a barrier, each warp drains its row as tf32w
//   does (win_drain), a barrier.
// Launch: tf32w's: persistent grid, 128 threads, 2 blocks an SM (__launch_bounds__(128, 2): 255 registers), 2 stages.
//   3-D problems stay on tf32w: template.py refuses tf32h for them, and WinCore asserts it.
// Per problem (ptxas 13.0, sm_90a; shared memory a block, dynamic, from WinGeom; no spills, no stack, no serialized wgmma):
//   54 (64->64)           210 registers, 2 stages of window and weights, 78.5 KB
//   kb1/kb4/kb32 (->128)  214/214/210, 2 slices of 64, 78.5 KB
//   kb57/kb71 (8->64)     210, weights resident (18 KB), 60.5 KB
// Bytes: tf32w's. DRAM: x read once, y written once (54 1.07 + 1.06 GB; kb4 1.07 + 2.1 GB; kb32 1.07 GB + 16 MB). L2 ->
//   SM: the window 1.5x of x per slice, the weights 18 KB per chunk and tile where not resident (04d keeps all 147 KB
//   resident): 54 and kb1 2.4 GB, kb4 and kb32 4.8 GB.
// Bound: wgmma issue as 04d (285 TFLOPS of 410 there), less what the drain before each stage refill and the weight
//   copies take, and the epilogue (here the same block's, there the other consumer's time).
// PREDICTION (H100, not yet run on a GPU), from 04d's 1.076 ms on 54 (the H100 record) and tf32w's predicted 2.3 ms;
//   what tf32h adds to 04d: weights restaged per chunk, a drained wgmma queue and a barrier a chunk, one warpgroup a
//   block (04d: a producer and two consumers), the generic epilogue through shared staging with 4-byte stores:
//     54   tf32h 1.4 ms (2.0x torch.compile's 2.75)
//     kb1  tf32h 1.4 ms (54's MMA work; 1.4x compile's 1.95)
//     kb4  tf32h 2.8 ms (twice 54's MMAs and y; 1.6x compile's 4.55)
//     kb32 tf32h 2.6 ms (twice the MMAs, no y; 1.2x compile's 3.15)
#pragma once

namespace cf_family {

constexpr int kHSets = 2;                              // fragment register sets (RsChunk)
constexpr uint32_t kHKHalf = kCoutSlice * 16;          // bytes between a k8 step's two core-matrix columns (lbo)
constexpr int kHTapBytes = 2 * kHKHalf;                // one tap's B

template <int CIN, int COUT, int DIMS>
struct WinCore<CIN, COUT, DIMS, kTF32H> {
    static_assert(DIMS == 2, "tf32h is 2-D only: a 3-D conv takes tf32w (template.py refuses it too)");
    using G = WinGeom<CIN, COUT, DIMS, kTF32H>;
    static_assert(G::XH == 6 && G::XCS % 32 == 24, "04d's box: 6 input rows, channel stride 24 mod 32");
    using Chunk = RsChunk<kWinWarps, kXRS, G::XCS, kHSets, kHTapBytes, true>;
    using Acc = float[kWinWarps][32];                  // output row o: 04d's m64n64 accumulator
    static __device__ __forceinline__ void zero(Acc& acc) {
#pragma unroll
        for (int o = 0; o < kWinWarps; ++o)
#pragma unroll
            for (int i = 0; i < 32; ++i) acc[o][i] = 0.0f;
    }
    // this thread's cp.async writes (generic proxy) made visible to wgmma's reads of B, before the barrier
    static __device__ __forceinline__ void landed(float*) { fence_proxy_async(); }
    static __device__ __forceinline__ void compute(Acc& acc, const float* st, const float* sw, int warp, int lane) {
        const uint64_t d = wgmma_desc((uint32_t)__cvta_generic_to_shared(sw), kHKHalf, CORE_MATRIX_BYTES);
        uint32_t frag[kHSets][3][4];
        Chunk::template mma_rows<0>(acc, frag, st + (lane & 3) * G::XCS + 16 * warp + 2 * (lane >> 2), (uint32_t)d,
                                    (uint32_t)(d >> 32), [] {});
        wgmma_wait<0>();   // B may be this stage's, and `frag` dies here: no wgmma may outlive the call
    }
    // thread (warp w, g, t) holds acc[o][4 j + e + 2 q] = row o, pixel 16 w + 2 g + q, channel 8 j + 2 t + e
    template <class Epi>
    static __device__ __forceinline__ void epilogue(Acc& acc, float (&racc)[2], float* stg, const FamilyArgs& a,
                                                    WinTile tc, int hc, int warp, int lane) {
        wgmma_wait<0>();
#pragma unroll
        for (int o = 0; o < kWinWarps; ++o) fence_operand(acc[o]);
        const int g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int i = 0; i < G::MT; ++i) {
            const int c0 = G::CO_T * hc + 16 * i;
            if (c0 >= COUT) break;   // block-uniform: the slice's padding
#pragma unroll
            for (int jj = 0; jj < 2; ++jj)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int r = 8 * jj + 2 * t + e, j = 2 * i + jj;
                    const float b = a.bias != nullptr && c0 + r < COUT ? __ldg(a.bias + c0 + r) : 0.0f;
#pragma unroll
                    for (int o = 0; o < kWinWarps; ++o)
                        *reinterpret_cast<float2*>(stg + (16 * o + r) * G::ORS + 16 * warp + 2 * g) =
                            make_float2(acc[o][4 * j + e] + b, acc[o][4 * j + e + 2] + b);
                }
            __syncthreads();
            if (tc.oh0 + warp < a.Ho) win_drain<G, COUT, Epi>(racc, stg + 16 * warp * G::ORS, a, tc, c0, warp, lane);
            __syncthreads();   // the staging is rewritten by the next 16 channels
        }
    }
    // [chunk cc][slice hc][tap][k-half][co][4]: B[k][n] of tap `tap` = W[64 hc + n][8 cc + k], a core matrix 8 Cout x 4
    // channels (128 bytes), k-halves kHKHalf apart; rounded (cvt.rna); zero past Cout and Cin.
    static __device__ __forceinline__ float weight(const float* __restrict__ w, int f) {
        const int e = f & 3, co = (f >> 2) & (kCoutSlice - 1), half = (f >> 8) & 1;
        int s = f >> 9;
        const int tap = s % G::TAPS;
        s /= G::TAPS;
        const int c = G::CO_T * (s % G::CO_SPLIT) + co, ci = kCK * (s / G::CO_SPLIT) + 4 * half + e;
        const float v = c < COUT && ci < CIN ? __ldg(w + ((long long)c * CIN + ci) * G::TAPS + tap) : 0.0f;
        return __uint_as_float(to_tf32(v));
    }
};

}  // namespace cf_family
