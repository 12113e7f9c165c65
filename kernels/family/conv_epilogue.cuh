// conv_epilogue.cuh — the family's conv template: conv (2-D or 3-D, k=3, stride 1, no padding) with a generated
// epilogue compiled in (convfuse/family/epilogue.py writes `struct FamilyEpilogue`; template.py instantiates
// launch<Cin, Cout, dims, FamilyEpilogue>). The fp32 design (convfuse/family/template.py, DESIGNS): direct conv on FP32
// CUDA cores, register-tiled (precision class fp32), for any Cin and Cout; conv_epilogue_mma.cuh is the tf32 design.
//
// Geometry: a thread owns kTP consecutive output pixels of one output row (n, od, oh) and walks all Cout channels in
// passes of kTC, holding kTC x kTP accumulators; per pass the block stages the weights of kTC channels x CIC input
// channels in shared memory (read as broadcasts: every thread of a warp reads the same weight), and each thread reads
// its input rows (kTP + 2 floats per row and tap row; neighbours' reads overlap and coalesce) through the read-only
// cache. Because one thread sees every channel of its pixels, a reduction over channels (min/max/sum/mean) is a
// register fold, in channel order 0..C-1, with no exchange between threads.
// kTC x kTP = 8 x 8: with 16 x 4 (as many accumulators) ptxas 13.0 held some builds to 96 or 128 registers and spilled
// (conv2d 54 on sm_90: 64 bytes of spill loads); with 8 x 8 none of the nine spills on sm_80 or sm_90 (152-168
// registers). __launch_bounds__(kThreads, 1) leaves ptxas the whole register file: held to 168, Cout = 20 (a partial
// last pass) spilled 24 bytes on sm_80.
// Bytes: reads x once per channel pass from L1/L2 (DRAM about once), the weights once per block, writes y once.
#pragma once

namespace cf_family {

constexpr int kThreads = 128;   // threads per block
constexpr int kTP = 8;           // output pixels per thread, consecutive along W
constexpr int kTC = 8;           // output channels per pass: kTC * kTP = 64 accumulators per thread
constexpr int kK = 3;           // kernel extent along each convolved axis

// Input channels staged per pass: the largest divisor of Cin up to `cap`, so the loop has no tail (Cin = 3 stages 3).
__host__ __device__ constexpr int staged_channels(int cin, int cap) {
    for (int d = cin < cap ? cin : cap; d > 1; --d)
        if (cin % d == 0) return d;
    return 1;
}

template <int CIN, int COUT, int DIMS, class Epi>
__global__ void __launch_bounds__(kThreads, 1) conv_epilogue_kernel(const FamilyArgs a) {
    constexpr int KD = DIMS == 3 ? kK : 1;
    constexpr int TAPS = KD * kK * kK;
    constexpr int CIC = staged_channels(CIN, DIMS == 3 ? 8 : 16);   // 3-D: 27 taps, so fewer channels per stage
    __shared__ float ws[kTC][CIC][TAPS];

    const int groups = (a.Wo + kTP - 1) / kTP;
    const long long items = (long long)a.N * a.Do * a.Ho * groups;
    const long long item = (long long)blockIdx.x * kThreads + threadIdx.x;
    const bool active = item < items;
    int n = 0, od = 0, oh = 0, ow0 = 0;
    if (active) {
        long long r = item / groups;
        ow0 = (int)(item - r * groups) * kTP;
        oh = (int)(r % a.Ho);
        r /= a.Ho;
        od = (int)(r % a.Do);
        n = (int)(r / a.Do);
    }
    const int valid = a.Wo - ow0 < kTP ? a.Wo - ow0 : kTP;   // pixels of this thread inside the row
    const long long plane = (long long)a.H * a.W;
    const long long x_ch = (long long)a.D * plane;
    const float* xb = a.x + (long long)n * CIN * x_ch + ((long long)od * a.H + oh) * a.W + ow0;
    const long long y_plane = (long long)a.Do * a.Ho * a.Wo;
    const long long y_pix = ((long long)od * a.Ho + oh) * a.Wo + ow0;

    float red[kTP];
#pragma unroll
    for (int p = 0; p < kTP; ++p) red[p] = Epi::init();

    for (int co0 = 0; co0 < COUT; co0 += kTC) {
        float acc[kTC][kTP];
#pragma unroll
        for (int j = 0; j < kTC; ++j) {
            const int co = co0 + j;
            const float b = (a.bias != nullptr && co < COUT) ? __ldg(a.bias + co) : 0.0f;
#pragma unroll
            for (int p = 0; p < kTP; ++p) acc[j][p] = b;
        }
        for (int ci0 = 0; ci0 < CIN; ci0 += CIC) {
            __syncthreads();   // every thread is done with the previous slice
            for (int i = threadIdx.x; i < kTC * CIC * TAPS; i += kThreads) {
                const int co = co0 + i / (CIC * TAPS);
                // weight [co][ci0 + ci][tap] = w[(co * CIN + ci0) * TAPS + ci * TAPS + tap]; channels past Cout weigh 0
                (&ws[0][0][0])[i] = co < COUT ? __ldg(a.w + ((long long)co * CIN + ci0) * TAPS + i % (CIC * TAPS))
                                              : 0.0f;
            }
            __syncthreads();
            if (!active) continue;
            for (int ci = 0; ci < CIC; ++ci) {
                const float* xc = xb + (long long)(ci0 + ci) * x_ch;
#pragma unroll 1   // 3-D: one input plane's 3 rows at a time; unrolled, ptxas hoists all 9 rows' loads (230-254 registers)
                for (int kz = 0; kz < KD; ++kz) {
#pragma unroll
                    for (int ky = 0; ky < kK; ++ky) {
                        const float* row = xc + (long long)kz * plane + ky * a.W;
                        float in[kTP + kK - 1];
#pragma unroll
                        for (int t = 0; t < kTP + kK - 1; ++t)   // columns past the row's last pixel are never used
                            in[t] = t < valid + kK - 1 ? __ldg(row + t) : 0.0f;
#pragma unroll
                        for (int kx = 0; kx < kK; ++kx) {
#pragma unroll
                            for (int j = 0; j < kTC; ++j) {
                                const float wv = ws[j][ci][(kz * kK + ky) * kK + kx];
#pragma unroll
                                for (int p = 0; p < kTP; ++p) acc[j][p] = fmaf(wv, in[p + kx], acc[j][p]);
                            }
                        }
                    }
                }
            }
        }
        if (!active) continue;
#pragma unroll
        for (int j = 0; j < kTC; ++j) {
            const int co = co0 + j;
            if (co >= COUT) break;
#pragma unroll
            for (int p = 0; p < kTP; ++p) {
                if (p >= valid) break;
                const float v = Epi::apply(acc[j][p], co, a.params);
                if constexpr (Epi::kReduces)
                    red[p] = Epi::combine(red[p], v);
                else
                    a.y[((long long)n * COUT + co) * y_plane + y_pix + p] = v;
            }
        }
    }
    if constexpr (Epi::kReduces) {
        if (!active) return;
#pragma unroll
        for (int p = 0; p < kTP; ++p)
            if (p < valid) a.y[(long long)n * y_plane + y_pix + p] = Epi::post(Epi::finish(red[p]), a.params);
    }
}

template <int CIN, int COUT, int DIMS, class Epi>
const char* launch(const FamilyArgs& a, cudaStream_t stream) {
    if (const char* err = shape_error<CIN, COUT, DIMS>(a)) return err;
    if (a.N <= 0 || a.Do <= 0 || a.Ho <= 0 || a.Wo <= 0) return nullptr;   // nothing to compute
    const long long items = (long long)a.N * a.Do * a.Ho * ((a.Wo + kTP - 1) / kTP);
    const long long blocks = (items + kThreads - 1) / kThreads;
    if (blocks > 0x7fffffffLL) return "input too large for a 1-D grid";
    conv_epilogue_kernel<CIN, COUT, DIMS, Epi><<<(unsigned)blocks, kThreads, 0, stream>>>(a);
    return nullptr;
}

}  // namespace cf_family
