// conv_epilogue_mma.cuh — the family's tensor-core conv template: implicit GEMM on mma.sync m16n8k8 TF32 (sm_80+,
// precision class tf32: TF32 operands, FP32 accumulate, as PyTorch's cuDNN conv by default), the same generated
// epilogue as conv_epilogue.cuh compiled in; conv 2-D or 3-D, k=3, stride 1, no padding, any Cin and Cout.
//
// GEMM: M = output pixels (N * Do * Ho * Wo, flattened), N = Cout, K = Cin * taps (taps 9 or 27; k = ci * taps + tap,
// the weight's own layout, so B is read straight from w). A block computes a tile of kBM = 64 pixels and walks Cout in
// passes of kBN = 32 channels; its 4 warps own 16 pixels x 32 channels each (4 mma tiles of 16 x 8). Per K step of
// kBK = 32 the block stages A (64 x 32, gathered from x: neighbouring threads take neighbouring pixels, so the loads
// coalesce along a row) and B (32 x 32 from w) in shared memory, rounded to TF32 once, then each warp runs 4 x 4 mmas.
// The epilogue adds the conv bias, applies the generated ops per accumulator element and stores; with a reduction over
// channels each pass folds its 32 channels per pixel through shared memory, in channel order, and the last pass stores.
// A first, simple design: no cp.async pipeline, no register double-buffering; correctness first.
#pragma once

namespace cf_family {

constexpr int kMmaThreads = 128;   // 4 warps
constexpr int kBM = 64;            // output pixels per block
constexpr int kBN = 32;            // output channels per pass
constexpr int kBK = 32;            // K per shared-memory stage

// --- tensor-core primitives (tests/test_family_emulated.py replaces this block with host emulations) ---
__device__ __forceinline__ unsigned to_tf32(float x) {   // round to nearest, ties away: what cuDNN's TF32 path does
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}
// d += A (16 x 8, row) * B (8 x 8, col); lane = 4 g + t holds a = A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4];
// b = B[t][g], B[t+4][g]; d = D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1] (PTX ISA, mma.m16n8k8 .tf32)
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// --- end of tensor-core primitives ---

template <int CIN, int COUT, int DIMS, class Epi>
__global__ void __launch_bounds__(kMmaThreads) conv_epilogue_mma_kernel(const FamilyArgs a) {
    constexpr int TAPS = DIMS == 3 ? 27 : 9;
    constexpr int K = CIN * TAPS;
    // row strides of 36 and 40 words: a warp's fragment reads (8 rows x 4 columns of A, 4 rows x 8 columns of B) fall in
    // 32 distinct banks
    __shared__ unsigned As[kBM][kBK + 4];
    __shared__ unsigned Bs[kBK][kBN + 8];
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
                As[ar][c] = to_tf32(v);
            }
            for (int kk = threadIdx.x / kBN; kk < kBK; kk += kMmaThreads / kBN) {
                const int nn = threadIdx.x % kBN, co = co0 + nn, k = k0 + kk;
                Bs[kk][nn] = to_tf32(co < COUT && k < K ? __ldg(a.w + (long long)co * K + k) : 0.0f);
            }
            __syncthreads();
#pragma unroll
            for (int ks = 0; ks < kBK; ks += 8) {
                const int r = warp * 16;
                const unsigned af[4] = {As[r + g][ks + t], As[r + g + 8][ks + t], As[r + g][ks + t + 4],
                                        As[r + g + 8][ks + t + 4]};
#pragma unroll
                for (int j = 0; j < kBN / 8; ++j) {
                    const unsigned bf[2] = {Bs[ks + t][8 * j + g], Bs[ks + t + 4][8 * j + g]};
                    mma_tf32(acc[j], af, bf);
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

template <int CIN, int COUT, int DIMS, class Epi>
const char* launch_mma(const FamilyArgs& a, cudaStream_t stream) {
    static_assert(DIMS == 2 || DIMS == 3, "the family's convs are 2-D or 3-D");
    if (a.Cin != CIN) return "in_channels differ from the ones this kernel was generated for";
    if (a.Cout != COUT) return "out_channels differ from the ones this kernel was generated for";
    if (a.Wo != a.W - 2 || a.Ho != a.H - 2 || (DIMS == 3 ? a.Do != a.D - 2 : (a.D != 1 || a.Do != 1)))
        return "output extent is not the input's minus 2 (kernel size 3, stride 1, no padding)";
    if (a.N <= 0 || a.Do <= 0 || a.Ho <= 0 || a.Wo <= 0) return nullptr;   // nothing to compute
    const long long blocks = ((long long)a.N * a.Do * a.Ho * a.Wo + kBM - 1) / kBM;
    if (blocks > 0x7fffffffLL) return "input too large for a 1-D grid";
    conv_epilogue_mma_kernel<CIN, COUT, DIMS, Epi><<<(unsigned)blocks, kMmaThreads, 0, stream>>>(a);
    return nullptr;
}

}  // namespace cf_family
