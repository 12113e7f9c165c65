// 03a_seed_fused — conv2d step 03a: the seed documents' fully fused conv + epilogue, FP32 CUDA cores.
//
// What changed from step 02: no cuDNN and no intermediate tensor. One kernel reads x and the weights
// and writes the final output: the conv output never reaches DRAM. Built as the seed designed it:
// a block owns TC=4 output channels x an 8x8 output tile of one image; it stages the whole input
// tile (64 channels x 10x10, the 8x8 tile plus its 3x3 halo) and the 4 channels' weights
// (4x64x3x3) in shared memory; then each of its 256 threads computes ONE output: 576 FMAs reading
// both operands from shared memory, then bias + the epilogue in registers.
//
// Launch geometry: block 256 = TC*TH*TW threads; grid (ceil(Wo/8), ceil(Ho/8), N*Cout/4).
// Shared memory: 64*10*10*4 + 4*64*9*4 = 34,816 bytes a block.
// Bytes: each block reads its 10x10 input tile for all 64 channels: 1.5625x the 8x8 it owns, and
// that input is read again by each of the Cout/TC = 16 channel groups (through L2); writes y once.
// Bound: shared-memory loads: 2 per FMA, one output per thread (no register reuse); an SM serves one
// shared-memory wavefront a clock against four warp-FFMA, so 1/8 of the FP32 peak at best.
// Measured (H200, 2026-12-05 record): 51.56 ms, 0.10x eager: 5.9 TFLOP/s, 12 % of the measured FP32 peak.

constexpr int TC = 4, TH = 8, TW = 8, K = 3, CIN = 64;
constexpr int IN_H = TH + K - 1, IN_W = TW + K - 1;

__global__ void __launch_bounds__(TC * TH * TW)
conv2d_tiled_smem(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                  const float* __restrict__ mult, float* __restrict__ y,
                  int H, int W, int Cout, int Ho, int Wo) {
    __shared__ float s_in[CIN * IN_H * IN_W];
    __shared__ float s_w[TC * CIN * K * K];
    const int groups = Cout / TC;
    const int n = blockIdx.z / groups;
    const int c0 = (blockIdx.z % groups) * TC;
    const int h0 = blockIdx.y * TH, w0 = blockIdx.x * TW;
    const int tid = threadIdx.x;

    // the TC channels' weights are contiguous in [Cout, Cin, 3, 3]: a coalesced copy
    const float* wsrc = w + (size_t)c0 * CIN * K * K;
    for (int i = tid; i < TC * CIN * K * K; i += blockDim.x) s_w[i] = wsrc[i];

    const float* xn = x + (size_t)n * CIN * H * W;
    for (int i = tid; i < CIN * IN_H * IN_W; i += blockDim.x) {
        int ci = i / (IN_H * IN_W), r = i % (IN_H * IN_W);
        int hh = h0 + r / IN_W, ww = w0 + r % IN_W;
        s_in[i] = (hh < H && ww < W) ? xn[((size_t)ci * H + hh) * W + ww] : 0.0f;
    }
    __syncthreads();

    const int cl = tid / (TH * TW), hl = (tid / TW) % TH, wl = tid % TW;
    const int ho = h0 + hl, wo = w0 + wl, c = c0 + cl;
    if (ho >= Ho || wo >= Wo) return;
    float acc = 0.0f;
    const float* wc = s_w + cl * CIN * K * K;
#pragma unroll 4
    for (int ci = 0; ci < CIN; ++ci) {
#pragma unroll
        for (int kh = 0; kh < K; ++kh)
#pragma unroll
            for (int kw = 0; kw < K; ++kw)
                acc += s_in[(ci * IN_H + hl + kh) * IN_W + wl + kw] * wc[(ci * K + kh) * K + kw];
    }
    y[(((size_t)n * Cout + c) * Ho + ho) * Wo + wo] = epilogue_conv2d(acc + bias[c], mult[c]);
}

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    if (a.Cin != CIN) return "03a conv2d supports Cin = 64 only";
    if (a.k != K) return "03a conv2d supports kernel_size = 3 only";
    if (a.Cout % TC != 0) return "03a conv2d needs Cout to be a multiple of 4";
    if (a.N == 0 || a.Ho <= 0 || a.Wo <= 0) return nullptr;
    const long long z = (long long)a.N * (a.Cout / TC);
    if (z > 65535) return "03a conv2d: N * Cout / 4 exceeds the grid's z extent (65535)";
    dim3 grid(cf_ceil_div(a.Wo, TW), cf_ceil_div(a.Ho, TH), (unsigned)z);
    conv2d_tiled_smem<<<grid, TC * TH * TW, 0, stream>>>(a.x, a.w, a.bias, a.param, a.y, a.H, a.W, a.Cout, a.Ho, a.Wo);
    return nullptr;
}
