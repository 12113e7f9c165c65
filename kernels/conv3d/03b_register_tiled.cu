// 03b_register_tiled — conv3d step 03b: register-tiled conv + epilogue, FP32 on CUDA cores (plain FFMA: no tensor cores, no TF32).
//
// What changed from 03a (block 16x8x2 threads, one output per thread, every operand read from global
// memory through L1, grid over (Cout, N, spatial tiles)): 03a issues a load of x (and a warp-uniform
// one of w) for every FMA and re-reads each input element for every output channel, so its ceiling is
// the load path, not the FMA pipes. Here a block computes all 64 output channels of a 2 x 2 x 64
// output tile; input window and weights are staged in shared memory with cp.async into a two-stage
// ring (16-byte copies when rows are 16-byte aligned, 4-byte copies otherwise), and every thread keeps
// an 8 channel x 8 pixel micro-tile in registers: per (ci, kd, kh) one input row of 6 floats feeds
// 3 taps x 8 channels x 4 pixels, and two LDS.128 of weights feed 64 FFMA (inner loop 1728 FFMA to
// 90 LDS, 94% FFMA in the SASS). The epilogue runs on the accumulators; the output tile goes out
// through shared memory so that every store instruction writes 32 consecutive floats of one row.
//
// Launch geometry
//   grid  N * ceil(Do/2) * ceil(Ho/2) * ceil(Wo/64) blocks, 1-D      full size: 128 * 7 * 31 * 1 = 27776
//   block 256 threads = 8 warps; warp w owns output row w/2 of the tile (depth (w/2)/2, row (w/2)%2)
//         and channels 32*(w%2) ..+31; lane: 4 channel groups (lane/8) x 8 pixel groups (lane%8)
//   tile  64 output channels x 2 depths x 2 rows x 64 columns per block (2 x 2 minimises the halo:
//         4 x 4 input rows per channel for 4 output rows)
//   micro-tile per thread: 8 channels x 8 pixels of one row, columns 4s..4s+3 and 32+4s..32+4s+3
//         (split in two so that the 8 lanes of a channel group read 128 contiguous bytes)
//   K loop: 4 stages of 2 input channels; stage = input 2 x 16 x 68 + weights 54 x 68 floats (23392 B)
//   shared memory 65536 B dynamic (2 stages = 46784 B, re-used as the 64 x 4 x 64 output tile, which
//         sets the size) -> 2 blocks/SM, registers capped at 128 by __launch_bounds__(256, 2)
//
// Bytes and FLOPs (full size N=128, 8->64, 16x64x64 -> 14x62x62)
//   DRAM: x read once 0.268 GB + y written once 1.764 GB + w 55 KB = 2.03 GB (0.49 ms at 4.18 TB/s)
//   L2 -> SM: x staged as 8 x 4 x 4 x 68 floats per block (halo 4x in depth and rows) = 0.97 GB;
//         w 55 KB per block x 27776 blocks = 1.54 GB
//   FLOPs: 2*N*64*14*62*62*216 = 190.5 GFLOP conv (+ 3.2% computed on the 2 padding columns of the
//         64-wide tile and discarded)
// Bound: FFMA issue: 42 TFLOP/s, 81 % of the measured FP32 peak (51.3).
// Measured (H200, 2026-12-05 record): 4.676 ms, 2.15x eager (whose cuDNN conv runs FP32 FFMA too).

namespace c3d_rt {

constexpr int CIN = 8, COUT = 64, KS = 3, TAPS = KS * KS * KS;
constexpr int THREADS = 256;
constexpr int TD = 2, TH = 2, TW = 64;      // output tile: depths x rows x columns
constexpr int TR = TD * TH;                 // output rows per tile: 4, one per warp pair
constexpr int ID = TD + KS - 1, IH = TH + KS - 1;  // input window: 4 depths x 4 rows per channel
constexpr int IR = ID * IH;                 // input rows per channel: 16
constexpr int IW = 68;                      // input row stride: 66 needed, rounded up to 17 float4
constexpr int CK = 2;                       // input channels per stage
constexpr int KSTAGES = CIN / CK;           // 4
constexpr int WR = CK * TAPS;               // weight rows per stage (ci, kd, kh, kw): 54
constexpr int WS = 68;                      // weight row stride: 64 channels + 4, so that the transposing
                                            // 4-byte cp.async stores (lane = 8 rows x 4 channels)
                                            // hit 32 distinct banks
constexpr int IN_FLOATS = CK * IR * IW;     // 2176
constexpr int W_FLOATS = WR * WS;           // 3672
constexpr int STAGE_FLOATS = IN_FLOATS + W_FLOATS;
constexpr int OUT_FLOATS = COUT * TR * TW;  // 16384
constexpr int SMEM_FLOATS = 2 * STAGE_FLOATS > OUT_FLOATS ? 2 * STAGE_FLOATS : OUT_FLOATS;
constexpr int SMEM_BYTES = SMEM_FLOATS * 4; // 65536
constexpr int WGROUPS = (WR + 7) / 8;       // weight rows are copied 8 at a time: 7 groups, last one 6 rows
static_assert(CK * ID == THREADS / 32, "one warp stages one input depth (4 rows) of one channel");
static_assert(STAGE_FLOATS % 4 == 0 && IN_FLOATS % 4 == 0, "stage buffers must stay 16-byte aligned");

// cp_async16/cp_async4 (src-size 0 zero-fills: halo beyond the input reads as 0 and is never
// stored), cp_async_commit, cp_async_wait: kernels/common.cuh

// Stage one group of CK input channels: the 4 x 4 x 68 input window of each, and their weights
// transposed to [ci][kd][kh][kw][cout] so that a thread's 8 output channels are two LDS.128.
//   xs: this warp's input channel and depth at the tile origin (row oh0, column ow0); always inside the
//       volume (clamped to depth od0 when the warp's depth is past the end), so it doubles as the
//       harmless address of zero-filling copies
//   ws: this lane's first weight of the stage; hlim/wlim: window rows/columns inside the volume
//       (hlim = 0 when the warp's depth is outside it)
template <bool VEC>
__device__ __forceinline__ void load_stage(float* s_in, float* s_w, const float* xs, const float* ws,
                                           int hlim, int wlim, int W, int lane, int wp) {
    {
        // Lane = 8 consecutive (ci,kd,kh,kw) rows x 4 channels, warp = 4 channels: global reads come in
        // 32-byte runs per channel, shared stores land on 32 distinct banks (row stride 68 = 4 mod 32).
        const int r_lo = lane & 7;
        float* dst = s_w + r_lo * WS + wp * 4 + (lane >> 3);
#pragma unroll
        for (int i = 0; i < 2 * WGROUPS; ++i) {
            const int r_hi = i >> 1, half = i & 1;   // half: channels co or co + 32
            if (r_hi * 8 + 8 <= WR || r_hi * 8 + r_lo < WR)
                cp_async4(dst + r_hi * 8 * WS + half * 32, ws + half * 32 * (CIN * TAPS) + r_hi * 8, 4);
        }
    }
    // Warp wp stages rows 0..3 of depth wp%4 of channel wp/4, lanes run along the row: coalesced
    // global reads, consecutive shared stores.
    float* dst = s_in + wp * (IH * IW);
    if (VEC) {
        // W % 4 == 0 here, so a float4 that starts inside the row ends inside it.
        const bool colok = 4 * lane < wlim;
        if (lane < IW / 4) {
#pragma unroll
            for (int row = 0; row < IH; ++row) {
                const bool ok = colok && row < hlim;
                cp_async16(dst + row * IW + 4 * lane, ok ? xs + (size_t)row * W + 4 * lane : xs, ok ? 16 : 0);
            }
        }
    } else {
        // A rolled loop: unrolled, the compiler hoists every per-element address out of the stage loop
        // and runs out of registers.
        const bool ok0 = lane < wlim, ok1 = lane + 32 < wlim, ok2 = lane + 64 < wlim;
#pragma unroll 1
        for (int row = 0; row < IH; ++row) {
            const bool rok = row < hlim;
            const float* src = xs + (size_t)row * W + lane;
            float* d = dst + row * IW + lane;
            cp_async4(d, rok && ok0 ? src : xs, rok && ok0 ? 4 : 0);
            cp_async4(d + 32, rok && ok1 ? src + 32 : xs, rok && ok1 ? 4 : 0);
            if (lane < IW - 64) cp_async4(d + 64, rok && ok2 ? src + 64 : xs, rok && ok2 ? 4 : 0);
        }
    }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
conv3d_rt_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                 const float* __restrict__ param, float* __restrict__ y,
                 int D, int H, int W, int Do, int Ho, int Wo, int tiles, int tiles_h, int tiles_w) {
    extern __shared__ float4 smem4[];
    float* smem = reinterpret_cast<float*>(smem4);

    const int tid = threadIdx.x, lane = tid & 31, wp = tid >> 5;
    const int r = wp >> 1;                              // output row within the tile: depth r/2, row r%2
    const int cg = 4 * (wp & 1) + (lane >> 3);          // channel group: channels 8cg .. 8cg+7
    const int s = lane & 7;                             // pixel group: columns 4s.., 32+4s..

    // Batch outermost, so that neighbouring blocks share halo rows while they are in L2.
    const int n = blockIdx.x / tiles, tile = blockIdx.x - n * tiles;
    const int tdh = tile / tiles_w, tw = tile - tdh * tiles_w;
    const int td = tdh / tiles_h, th = tdh - td * tiles_h;
    const int od0 = td * TD, oh0 = th * TH, ow0 = tw * TW;
    const size_t HW = (size_t)H * W;

    // Staging role of this warp: channel wp / ID of the stage, input depth wp % ID of the window.
    const int sdz = wp % ID;
    const bool dok = od0 + sdz < D;
    const int hlim = dok ? H - oh0 : 0, wlim = W - ow0;
    // 64-bit offsets: y holds 4.4e8 floats at full size, so 5x the batch would pass 2^31.
    const float* xs =
        x + (((size_t)n * CIN + wp / ID) * D + od0 + (dok ? sdz : 0)) * HW + (size_t)oh0 * W + ow0;
    const float* ws = w + (size_t)(wp * 4 + (lane >> 3)) * (CIN * TAPS) + (lane & 7);
    const size_t xstep = (size_t)CK * D * HW;           // next stage: CK channels further

    float acc[8][8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int p = 0; p < 8; ++p) acc[j][p] = 0.0f;

    load_stage<VEC>(smem, smem + IN_FLOATS, xs, ws, hlim, wlim, W, lane, wp);
    cp_async_commit();

    // This thread's output row reads input rows (dz + kd, hy + kh) of the 4 x 4 window.
    const int in_row0 = (r / TH) * IH + (r % TH);
    for (int ks = 0; ks < KSTAGES; ++ks) {
        if (ks + 1 < KSTAGES) {
            float* nb = smem + ((ks + 1) & 1) * STAGE_FLOATS;
            load_stage<VEC>(nb, nb + IN_FLOATS, xs + (ks + 1) * xstep, ws + (ks + 1) * CK * TAPS,
                            hlim, wlim, W, lane, wp);
        }
        cp_async_commit();          // possibly empty, so that "all but the newest group" is stage ks
        cp_async_wait<1>();
        __syncthreads();

        const float* s_in = smem + (ks & 1) * STAGE_FLOATS + in_row0 * IW + 4 * s;
        const float* s_w = smem + (ks & 1) * STAGE_FLOATS + IN_FLOATS + 8 * cg;
#pragma unroll 1
        for (int c = 0; c < CK; ++c) {
#pragma unroll
            for (int kd = 0; kd < KS; ++kd) {
#pragma unroll
                for (int kh = 0; kh < KS; ++kh) {
                    const float* row = s_in + (c * IR + kd * IH + kh) * IW;
                    const float4 a0 = *reinterpret_cast<const float4*>(row);
                    const float2 a1 = *reinterpret_cast<const float2*>(row + 4);
                    const float4 b0 = *reinterpret_cast<const float4*>(row + 32);
                    const float2 b1 = *reinterpret_cast<const float2*>(row + 36);
                    const float xa[6] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y};
                    const float xb[6] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y};
#pragma unroll
                    for (int kw = 0; kw < KS; ++kw) {
                        const float* wr = s_w + (c * TAPS + (kd * KS + kh) * KS + kw) * WS;
                        const float4 w0 = *reinterpret_cast<const float4*>(wr);
                        const float4 w1 = *reinterpret_cast<const float4*>(wr + 4);
                        const float wv[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
#pragma unroll
                        for (int j = 0; j < 8; ++j)
#pragma unroll
                            for (int p = 0; p < 4; ++p) {
                                acc[j][p] = fmaf(wv[j], xa[p + kw], acc[j][p]);
                                acc[j][4 + p] = fmaf(wv[j], xb[p + kw], acc[j][4 + p]);
                            }
                    }
                }
            }
        }
        __syncthreads();            // stage ks is overwritten by the load issued next iteration
    }

    // Epilogue on the accumulators, then the output tile [64 ch][4 rows][64 cols] over the stage
    // buffers (the loop's last barrier freed them). One channel at a time, so its 8 accumulators die
    // as soon as they are stored and the erf temporaries find registers.
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const float b = __ldg(bias + 8 * cg + j), sc = __ldg(param + 8 * cg + j);
        float v[8];
#pragma unroll
        for (int p = 0; p < 8; ++p) v[p] = epilogue_conv3d(acc[j][p] + b, sc);
        float* o = smem + ((8 * cg + j) * TR + r) * TW + 4 * s;
        *reinterpret_cast<float4*>(o) = make_float4(v[0], v[1], v[2], v[3]);
        *reinterpret_cast<float4*>(o + 32) = make_float4(v[4], v[5], v[6], v[7]);
    }
    __syncthreads();

    // Warp = 32 consecutive columns of one row: each store is one coalesced 128-byte run. Scalar, since
    // rows of odd width (62 at full size) are not 16-byte aligned.
    const int orow = tid / TW, ocol = tid % TW;
    const int od = od0 + orow / TH, oh = oh0 + orow % TH, ow = ow0 + ocol;
    if (od < Do && oh < Ho && ow < Wo) {
        const size_t vol = (size_t)Do * Ho * Wo;
        float* dst = y + (size_t)n * COUT * vol + ((size_t)od * Ho + oh) * Wo + ow;
        const float* src = smem + orow * TW + ocol;
#pragma unroll 16
        for (int co = 0; co < COUT; ++co) __stcs(dst + co * vol, src[co * TR * TW]);
    }
}

}  // namespace c3d_rt

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace c3d_rt;
    if (a.Cin != CIN || a.Cout != COUT || a.k != KS)
        return "03b_register_tiled conv3d supports Cin=8, Cout=64, k=3 only";
    if (a.D < KS || a.H < KS || a.W < KS) return "03b_register_tiled conv3d: D, H and W must be >= k";
    if (a.Do != a.D - KS + 1 || a.Ho != a.H - KS + 1 || a.Wo != a.W - KS + 1)
        return "03b_register_tiled conv3d: output must be (D-k+1, H-k+1, W-k+1) (stride 1, no padding)";
    const long long tiles_w = cf_ceil_div(a.Wo, TW), tiles_h = cf_ceil_div(a.Ho, TH);
    const long long tiles = (long long)cf_ceil_div(a.Do, TD) * tiles_h * tiles_w;
    if (a.N < 1 || tiles * a.N > 0x7fffffffLL)
        return "03b_register_tiled conv3d: batch x output tiles must be in 1 .. 2^31-1";

    // 16-byte cp.async needs every staged row start 16-byte aligned: W % 4 == 0 and an aligned base.
    const bool vec = (a.W % 4 == 0) && ((reinterpret_cast<uintptr_t>(a.x) & 15) == 0);
    auto kern = vec ? conv3d_rt_kernel<true> : conv3d_rt_kernel<false>;
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES) != cudaSuccess) {
        (void)cudaGetLastError();   // not sticky: clear it so the caller's launch check doesn't report it too
        return "03b_register_tiled conv3d: cannot reserve 64 KB of shared memory per block";
    }
    const dim3 grid((unsigned)(tiles * a.N));
    kern<<<grid, THREADS, SMEM_BYTES, stream>>>(a.x, a.w, a.bias, a.param, a.y, a.D, a.H, a.W, a.Do, a.Ho,
                                                a.Wo, (int)tiles, (int)tiles_h, (int)tiles_w);
    return nullptr;   // launch errors are left for the caller's C10_CUDA_KERNEL_LAUNCH_CHECK
}
