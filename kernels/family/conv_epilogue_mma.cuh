// conv_epilogue_mma.cuh — the family's tensor-core conv template: implicit GEMM on mma.sync m16n8k8 TF32 (sm_80+),
// the same generated epilogue as conv_epilogue.cuh compiled in; conv 2-D or 3-D, k=3, stride 1, no padding, any Cin
// and Cout. Two designs from one file, the template parameter S:
//   kTF32 (design tf32, precision class tf32): TF32 operands, FP32 accumulate, one MMA per product, as PyTorch's cuDNN
//     conv by default.
//   k3xTF32 (design 3xtf32, the FP32 bound): v = big + small, both TF32 (split_tf32 below, as splits.py's), three MMAs
//     a product: small x big + big x small + big x big (small x small dropped: 2^-22 relative), each exact in FP32.
//
// GEMM: M = output pixels (N * Do * Ho * Wo, flattened), N = Cout, K = Cin * taps (taps 9 or 27; k = ci * taps + tap,
// the weight's own layout, so B is read straight from w). A block computes a tile of kBM = 64 pixels and walks Cout in
// passes of kBN = 32 channels; its 4 warps own 16 pixels x 32 channels each (4 mma tiles of 16 x 8). Per K step of
// kBK = 32 the block stages A (64 x 32, gathered from x: neighbouring threads take neighbouring pixels, so the loads
// coalesce along a row) and B (32 x 32 from w) in shared memory, rounded to TF32 once (3xTF32: split once, big and
// small in two planes), then each warp runs 4 x 4 mmas (3xTF32: 4 x 4 x 3). Launch geometry is the same for both:
// ceil(P / kBM) blocks of kMmaThreads = 128; shared memory 14.3 KB (3xTF32: 28.7 KB) + the fold's 8.4 KB when the
// epilogue reduces over channels.
// The epilogue adds the conv bias, applies the generated ops per accumulator element and stores; with a reduction over
// channels each pass folds its 32 channels per pixel through shared memory, in channel order, and the last pass stores.
//
// Why 3xTF32 accumulates in two levels (notebook 04, kernels/conv2d/04_implicit_gemm_mma.cu): the tensor core adds
// into its FP32 accumulator with truncation, so each MMA into an accumulator of magnitude |S| can lose ~1 ulp(S) toward
// zero (04: 216 MMAs into one accumulator, rel-L2 5e-6 on the H200, bound 2e-6). So every kFlushK = 8 of K opens a
// fresh partial sum, added to the total with a round-to-nearest FADD. Emulated (tests/test_family_emulated.py,
// truncation modelled pessimistically), 54 gives rel-L2 5.2e-7 with kFlushK = 8, 1.6e-6 with 32, 6.8e-6 with none.
// The partials cost 16 registers a thread: fewer blocks an SM (kMinBlocks3x below).
// Measured (H100, 2026-12-07, family_gpu.py's printed table; record lost): tf32 54 18.3 ms, 90 11.5, kb1 17.9, kb57
//   1.28 (torch.compile 2.75, 5.87, 1.95, 0.80), 3xtf32 ~1.9x tf32's: what conv_epilogue_window.cuh answers.
// A first, simple design: no cp.async pipeline, no register double-buffering; correctness first.
#pragma once

namespace cf_family {

constexpr int kMmaThreads = 128;   // 4 warps
constexpr int kBM = 64;            // output pixels per block
constexpr int kBN = 32;            // output channels per pass
constexpr int kBK = 32;            // K per shared-memory stage
constexpr int kFlushK = 8;         // 3xTF32: K per partial sum (a multiple of 8 dividing kBK; see the header)
static_assert(kFlushK % 8 == 0 && kBK % kFlushK == 0, "a partial sum covers whole k8 steps of one stage");

// The template's precision: one TF32 MMA per product, or three on split operands (see the header).
enum Split : int { kTF32 = 0, k3xTF32 = 1 };
// 3xTF32: blocks an SM the launch bounds ask ptxas for (its register budget: 65536 / (128 x 3) = 170 a thread). With
// the thread count alone ptxas held 64 x 9 (K = 576) to 72 registers and spilled; with 4 (128 registers) the partial
// sums of kFlushK = 8 spilled; with 3 the nine take 100 to 150 (sm_80, sm_90), no spill: 3 blocks of 4 warps an SM.
// TF32: 0, the thread count alone, as before.
constexpr int kMinBlocks3x = 3;


// 3xTF32: v = big + small, both TF32; v clamped to +-TF32_MAX for big, so +-Inf gives big = +-TF32_MAX, small = +-Inf
// (not Inf - Inf); NaN: big finite, small NaN carries it.
__device__ __forceinline__ void split_tf32(float v, unsigned& big, unsigned& small) {
    constexpr float kTF32Max = 0x1.ffcp+127f;   // 0x7f7fe000, (2 - 2^-10) 2^127: the largest finite TF32
    big = to_tf32(fminf(fmaxf(v, -kTF32Max), kTF32Max));
    small = to_tf32(v - __uint_as_float(big));
}

template <int CIN, int COUT, int DIMS, class Epi, Split S = kTF32>
__global__ void __launch_bounds__(kMmaThreads, S == k3xTF32 ? kMinBlocks3x : 0)
conv_epilogue_mma_kernel(const FamilyArgs a) {
    constexpr int TAPS = DIMS == 3 ? 27 : 9;
    constexpr int K = CIN * TAPS;
    constexpr int PARTS = S == k3xTF32 ? 2 : 1;   // planes of the staged operands: [0] big (TF32: rounded), [1] small
    // row strides of 36 and 40 words: a warp's fragment reads (8 rows x 4 columns of A, 4 rows x 8 columns of B) fall in
    // 32 distinct banks
    __shared__ unsigned As[PARTS][kBM][kBK + 4];
    __shared__ unsigned Bs[PARTS][kBK][kBN + 8];
    __shared__ float Rs[Epi::kReduces ? kBM : 1][kBN + 1];   // one pass's epilogue values, for the fold over channels

    const long long plane_o = (long long)a.Do * a.Ho * a.Wo;
    const long long P = a.N * plane_o;
    const long long m0 = (long long)blockIdx.x * kBM;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

    // the A row this thread stages (every pass, every K step): its pixel's input corner x[n][0][od][oh][ow]
    const int ar = threadIdx.x % kBM, ac = threadIdx.x / kBM;
    const bool pvalid = m0 + ar < P;
    long long xbase = 0;
    if (pvalid) {
        long long r = m0 + ar;
        const int ow = (int)(r % a.Wo); r /= a.Wo;
        const int oh = (int)(r % a.Ho); r /= a.Ho;
        const int od = (int)(r % a.Do);
        const long long n = r / a.Do;
        xbase = (((n * CIN) * a.D + od) * a.H + oh) * (long long)a.W + ow;
    }
    float racc = Epi::init();   // threads < kBM: the fold over channels of pixel m0 + threadIdx.x

    for (int co0 = 0; co0 < COUT; co0 += kBN) {
        float acc[kBN / 8][4] = {};
        for (int k0 = 0; k0 < K; k0 += kBK) {
            __syncthreads();   // every warp is done with the previous stage (and the previous pass's fold)
            for (int c = ac; c < kBK; c += kMmaThreads / kBM) {
                const int k = k0 + c;
                float v = 0.0f;   // past K (the last step) or past the last pixel: zero, adds nothing
                if (pvalid && k < K) {
                    const int ci = k / TAPS, tap = k % TAPS;
                    const int kz = tap / 9, ky = (tap / 3) % 3, kx = tap % 3;
                    v = __ldg(a.x + xbase + (((long long)ci * a.D + kz) * a.H + ky) * a.W + kx);
                }
                if constexpr (S == k3xTF32) split_tf32(v, As[0][ar][c], As[1][ar][c]);
                else As[0][ar][c] = to_tf32(v);
            }
            for (int kk = threadIdx.x / kBN; kk < kBK; kk += kMmaThreads / kBN) {
                const int nn = threadIdx.x % kBN, co = co0 + nn, k = k0 + kk;
                const float v = co < COUT && k < K ? __ldg(a.w + (long long)co * K + k) : 0.0f;
                if constexpr (S == k3xTF32) split_tf32(v, Bs[0][kk][nn], Bs[1][kk][nn]);
                else Bs[0][kk][nn] = to_tf32(v);
            }
            __syncthreads();
            // TF32: straight into acc. 3xTF32: into a fresh partial sum per kFlushK of K, small products first, then
            // one round-to-nearest add into acc (the header: the tensor core's adds truncate).
            float part[kBN / 8][4];
#pragma unroll
            for (int ks = 0; ks < kBK; ks += 8) {
                if constexpr (S == k3xTF32) {
                    if (ks % kFlushK == 0) {
#pragma unroll
                        for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
                            for (int e = 0; e < 4; ++e) part[j][e] = 0.0f;
                    }
                }
                const int r = warp * 16;
                const unsigned af[4] = {As[0][r + g][ks + t], As[0][r + g + 8][ks + t], As[0][r + g][ks + t + 4],
                                        As[0][r + g + 8][ks + t + 4]};
#pragma unroll
                for (int j = 0; j < kBN / 8; ++j) {
                    const unsigned bf[2] = {Bs[0][ks + t][8 * j + g], Bs[0][ks + t + 4][8 * j + g]};
                    if constexpr (S == k3xTF32) {
                        const unsigned as[4] = {As[1][r + g][ks + t], As[1][r + g + 8][ks + t],
                                                As[1][r + g][ks + t + 4], As[1][r + g + 8][ks + t + 4]};
                        const unsigned bs[2] = {Bs[1][ks + t][8 * j + g], Bs[1][ks + t + 4][8 * j + g]};
                        mma_tf32(part[j], as, bf);   // x_small w_big
                        mma_tf32(part[j], af, bs);   // x_big w_small
                        mma_tf32(part[j], af, bf);   // x_big w_big
                    } else {
                        mma_tf32(acc[j], af, bf);
                    }
                }
                if constexpr (S == k3xTF32) {
                    if (ks % kFlushK == kFlushK - 8) {
#pragma unroll
                        for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
                            for (int e = 0; e < 4; ++e) acc[j][e] += part[j][e];
                    }
                }
            }
        }
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int row = warp * 16 + g + (e >= 2 ? 8 : 0), col = 8 * j + 2 * t + (e & 1);
                const int co = co0 + col;
                const long long m = m0 + row;
                if (co >= COUT || m >= P) continue;
                const float v = Epi::apply(acc[j][e] + (a.bias != nullptr ? __ldg(a.bias + co) : 0.0f), co, a.params);
                if constexpr (Epi::kReduces) {
                    Rs[row][col] = v;
                } else {
                    const long long n = m / plane_o;
                    a.y[(n * COUT + co) * plane_o + (m - n * plane_o)] = v;
                }
            }
        }
        if constexpr (Epi::kReduces) {
            __syncthreads();
            if (threadIdx.x < kBM && m0 + threadIdx.x < P)
                for (int c = 0; c < kBN && co0 + c < COUT; ++c) racc = Epi::combine(racc, Rs[threadIdx.x][c]);
        }
    }
    if constexpr (Epi::kReduces) {
        if (threadIdx.x < kBM && m0 + threadIdx.x < P) a.y[m0 + threadIdx.x] = Epi::post(Epi::finish(racc), a.params);
    }
}

template <int CIN, int COUT, int DIMS, class Epi, Split S = kTF32>
const char* launch_mma(const FamilyArgs& a, cudaStream_t stream) {
    if (const char* err = shape_error<CIN, COUT, DIMS>(a)) return err;
    if (a.N <= 0 || a.Do <= 0 || a.Ho <= 0 || a.Wo <= 0) return nullptr;   // nothing to compute
    const long long blocks = ((long long)a.N * a.Do * a.Ho * a.Wo + kBM - 1) / kBM;
    if (blocks > 0x7fffffffLL) return "input too large for a 1-D grid";
    conv_epilogue_mma_kernel<CIN, COUT, DIMS, Epi, S><<<(unsigned)blocks, kMmaThreads, 0, stream>>>(a);
    return nullptr;
}

}  // namespace cf_family
