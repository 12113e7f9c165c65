// 04c_warp_specialized_wgmma — conv2d step 04c: 04b's wgmma conv+epilogue with producer warpgroups, and FP16 operands:
// FP32 accuracy from three FP16 products, or TF32's precision at twice its MMA rate (sm_90a only: H100/H200).
//
// What changed from 04b. 04b's warpgroups each load, transpose, multiply and run the epilogue in one serial chain, and
//   ncu finds it latency-bound (42 % of issue slots busy, 0.6 eligible warps per scheduler). Here producer warpgroups
//   only load and stage, two consumer warpgroups only issue wgmmas and run the epilogue, and setmaxnreg moves registers
//   to the consumers. Per chunk (8 channels x 4 input rows x 88 pixels) one producer thread issues a TMA into a raw
//   buffer (two in turn, each completing on its mbarrier); the producer threads then convert it into a ring stage in
//   the MMAs' layout. Named barriers hand the stages over: FULL (producers arrive, the consumer waits) and EMPTY (the
//   consumer arrives once wgmma.wait_group shows the stage's MMAs done). TF32 and 3xFP16 fill one ring for both
//   consumers in the order of the block's tiles, and the consumers run their chunk loops in turn (ORDER barriers), so
//   one consumer's epilogue overlaps the other's MMAs; FP16 has a ring per consumer. The tile (64 Cout x 2 output rows
//   x 86 columns, N = 176), the weights resident in shared memory and the epilogue from the accumulators are 04b's.
// The precision (the registry's define):
//   TF32 (none): 9 m64n176k8 wgmmas a chunk; the stage holds channels 0-3 and 4-7 as two K-major parts.
//   CF_3XF16: FP32 accuracy in 1.5 TF32 passes of tensor time. FP16 has TF32's 11 significant bits at twice the MMA
//     rate: x w = x_hi w_hi + (x_lo w_hi + x_hi w_lo), the dropped x_lo w_lo 2^-22 relative. Per tap pair one k16 wgmma
//     multiplies [w_hi(t) | w_hi(t+1)] by [x_hi(t) | x_hi(t+1)] (an operand's second core matrix is `lbo` bytes after
//     its first: here the distance between two taps' windows), per tap one k16 [w_lo | w_hi] by [x_hi | x_lo]: 14
//     wgmmas a chunk. The tensor core adds into its FP32 accumulator rounding toward zero, so the main products and the
//     corrections take accumulators of their own (2 x 88 registers), added once before the epilogue.
//   CF_1XF16: x and w in FP16 alone, the main products only: 5 wgmmas a chunk where TF32 takes 9.
//   FP16 range: the weights are scaled per call by a power of two (the largest |w| just under 2^14; exact, undone after
//     the sum). |x| >= 65520, Inf or NaN make an output non-finite: a consumer thread with one recomputes its outputs
//     of the tile with FP32 FMAs from global memory (fp32_tile; only such inputs take it).
// Output: TF32 and FP16 through shared memory and the bulk-copy engine (store_tile_bulk): plain stores write each
//   quad's 32 bytes across two sectors (tiles start at 86-column steps of 254-float rows); 3xFP16 stores from
//   registers.
// Launch: a persistent grid, one block per SM. TF32: 512 threads, two producer warpgroups at 56 registers, consumers at
//   200, 228,576 B of shared memory. 3xFP16: 384 threads, one producer at 56, consumers at 224 (both accumulator sets),
//   217,376 B. FP16: 512 threads, producers at 48, consumers at 208, 181,360 B.
// Bytes: x 1.07 GB and y 1.06 GB at one pass each; ncu reads 1.08-1.14 GB and writes 1.04 GB.
// Bound: not memory (1.2-2.0 TB/s of 4.3). TF32: the producers' staging (shared loads, rounding, stores): the consumer
//   issuing MMAs waits at FULL 44 % of its time, which 04d removes. 3xFP16: the consumers' 14 wgmmas a chunk. FP16: the
//   producers' conversion.
// Measured (H200, 2026-12-05 record): TF32 1.286 ms, 3.88x eager, 1.80x torch.compile; 3xFP16 1.722 ms, 2.89x eager,
//   1.34x torch.compile, rel-L2 1.0e-6; FP16 1.052 ms, 4.73x eager, 2.19x torch.compile.

namespace cf04c {

#if defined(CF_3XF16)
constexpr bool X3F16 = true, X1F16 = false;
#elif defined(CF_1XF16)
constexpr bool X3F16 = false, X1F16 = true;
#else
constexpr bool X3F16 = false, X1F16 = false;
#endif
constexpr bool F16 = X3F16 || X1F16;       // FP16 operands: weights scaled per call, the FP32 path for large inputs

constexpr int CIN = 64, COUT = 64, KS = 3, TAPS = KS * KS;
constexpr int CHUNK = 8, NCHUNK = CIN / CHUNK;
constexpr int XW = 88;                   // staged pixels per input row = MMA columns per output row
constexpr int TW = XW - (KS - 1);        // output columns per tile (86)
constexpr int TH = 2;                    // output rows per tile: one wgmma with N = XW * TH
constexpr int XH = TH + KS - 1;          // staged input rows
constexpr int NJ = XW / 8;               // n8 column groups per output row (11)
constexpr int NACC = XW * TH / 2;        // accumulators per thread per set
constexpr int CONSUMERS = 2;
// Producer warpgroups: two would leave 3xFP16's consumers too few registers for both accumulator sets.
constexpr int PRODUCERS = X3F16 ? 1 : 2;
// One ring (and one set of raw buffers) for both consumers, filled in the order of the block's tiles; FP16 a ring per
// consumer (its stages are half the size).
constexpr int PIPES = X1F16 ? CONSUMERS : 1;
// Ring stages: TF32's fourth does not fit beside the output buffers.
constexpr int STAGES = X3F16 ? 4 : 3;
constexpr int RAWS = 2;                  // raw buffers per ring: the next chunk's copy in flight while one is staged
// Producer registers: the fewest at which the producer loop does not spill (ptxas: TF32's spills at 48, FP16's and
// 3xFP16's at 40); 3xFP16's consumers need the 224 left at 56.
constexpr int PRODUCER_REGS = X1F16 ? 48 : 56;
constexpr bool BULK_STORE = !X3F16;      // the output through the bulk-copy engine (3xFP16: no room for its buffers)
constexpr int THREADS = 128 * (PRODUCERS + CONSUMERS);
constexpr int PTHREADS = 128 * PRODUCERS / PIPES;   // producer threads per ring
constexpr int BAR_COUNT = PTHREADS + 128;           // threads meeting at one FULL or EMPTY barrier
constexpr int KERNEL_REGS = (65536 / THREADS) & ~7; // what __launch_bounds__(THREADS, 1) allows
constexpr int CONSUMER_REGS = ((THREADS * KERNEL_REGS - 128 * PRODUCERS * PRODUCER_REGS) / (128 * CONSUMERS)) & ~7;
static_assert(KERNEL_REGS <= 256 && CONSUMER_REGS <= 256 && PRODUCER_REGS >= 24, "setmaxnreg range");
static_assert(128 * PRODUCERS * PRODUCER_REGS + 128 * CONSUMERS * CONSUMER_REGS <= THREADS * KERNEL_REGS,
              "register pool");
static_assert(2 * PIPES * STAGES + PIPES + (PIPES == 1 ? CONSUMERS : 0) <= 15, "named barriers 1..15");
static_assert(PTHREADS % 32 == 0, "whole producer warps per consumer");

// Shared memory: zero block | weights | raw buffers | ring stages | output buffers | 16 B (the weights' largest |w|) |
// mbarriers | (FP16) SANITIZER_PAD.
constexpr int XPIX = XH * XW;                       // staged pixels per stage (352)
constexpr int XPART = XPIX * 4;                     // floats per part (16 B per pixel)
// stage: [part][row 0..XH-1][pixel 0..87][16 B] (+ 64 B read only by discarded columns); TF32: parts are channels 0-3
// and 4-7; 3xFP16: x_hi and x_lo of the 8 channels; FP16: x of the 8 channels, one part
constexpr int XBUF = (X1F16 ? 1 : 2) * XPART + 16;
constexpr int KSTEPS = NCHUNK * TAPS;
// weights: TF32 as 04b, [k-step][k-half][co][4 channels]; 3xFP16 per chunk [w_lo(tap 0..8)][w_hi(tap 0..8)], each
// 1 KB = [co][8 channels FP16]; FP16 w_hi alone, [chunk][tap] (73,728 B)
constexpr int WFLOATS = (X1F16 ? 1 : 2) * KSTEPS * COUT * 4;
constexpr uint32_t W_KHALF_BYTES = COUT * 16;             // TF32: a k-half of a k-step's A, [co][4 channels]: its lbo
constexpr uint32_t W_KSTEP_BYTES = 2 * W_KHALF_BYTES;     // TF32: a k-step's A (2 KB)
constexpr int W_TAP_HALVES = COUT * CHUNK;                // FP16: a (chunk, tap)'s A, [co][8 channels] (1 KB)
constexpr int W_PART_HALVES = TAPS * W_TAP_HALVES;        // FP16: a chunk's 9 taps of one part (w_lo or w_hi)
constexpr uint32_t W_TAP_BYTES = W_TAP_HALVES * 2, W_PART_BYTES = W_PART_HALVES * 2;
constexpr uint32_t W_CHUNK_BYTES = (X3F16 ? 2 : 1) * W_PART_BYTES;   // FP16: a chunk's A, [w_lo | w_hi] or w_hi
constexpr int ZFLOATS = COUT * 4;                   // the zero block: 64 rows x 16 B
// A TMA box must start 16 bytes aligned in global memory (an inner coordinate of 1, 2 or 86 floats is an illegal
// instruction), and tile columns start at multiples of 86: the box starts at the multiple of 4 at or below the tile
// (shift 0 or 2) and is 92 pixels wide, so every raw row holds 4 pixels more than it stages.
constexpr int RAW_PITCH = XW + 4;
constexpr int RAW_PIX = XH * RAW_PITCH;             // a channel's pixels in the raw buffer
constexpr int RAWF = CHUNK * RAW_PIX;               // one raw buffer as loaded: [channel][row][RAW_PITCH pixels] FP32
// Staged pixel p (row p / XW, column p % XW) in a channel of the raw buffer.
__device__ __forceinline__ int raw_index(int p) { return p + (RAW_PITCH - XW) * (p / XW); }
// compute-sanitizer's memcheck takes a wgmma operand to span N x K elements from its start address (5,632 B here),
// where the MMA reads 2 x 22 core matrices lbo apart: from a window 2,816 B into FP16's last stage that passes the
// allocation's end. 2,752 B of padding keep it inside.
constexpr int SANITIZER_PAD = X1F16 ? 688 : 0;
constexpr int MBAR_FLOATS = 2 * PIPES * RAWS;       // an mbarrier (8 B) per raw buffer
// Output buffers: per consumer warp, 8 channel rows of one output row (a round: h, t) at their 16-byte phase in y.
// Pitch 88 floats (24 mod 32 banks): the STS.64 of a half-warp (gid 0-3, 4 quads) land in 32 distinct banks.
constexpr int OPITCH = XW;
constexpr int OWARP = 8 * OPITCH;                   // 2,816 B per warp
constexpr int OUT_FLOATS = BULK_STORE ? CONSUMERS * 4 * OWARP : 0;   // 11,264 B per consumer
static_assert(OPITCH % 4 == 0 && OPITCH >= TW + 2, "16-byte aligned rows with room for the phase");
constexpr int SMAX_FLOATS = 4;                      // the weights' largest |w| (FP16), 16 B
constexpr int SMEM_FLOATS = ZFLOATS + WFLOATS + PIPES * RAWS * RAWF + PIPES * STAGES * XBUF + OUT_FLOATS + SMAX_FLOATS +
                            MBAR_FLOATS + SANITIZER_PAD;
constexpr size_t SMEM_BYTES = size_t(SMEM_FLOATS) * sizeof(float);
constexpr int ROUNDS = (XPIX + PTHREADS - 1) / PTHREADS;   // pixels per producer thread per chunk
static_assert(XBUF % 4 == 0 && XW % 8 == 0, "16-byte aligned stages, core matrices of 8 rows");
static_assert(TW % 2 == 0, "tile columns start even: 8-byte copies of pixel pairs");
static_assert((ZFLOATS + WFLOATS) % 32 == 0 && RAWF % 32 == 0, "raw buffers 128-byte aligned (TMA destinations)");
static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 block can have (227 KB)");

struct Geom {
    int N, H, W, Ho, Wo;
    int tiles_x, tiles;
    int xvec;    // 8-byte copies legal (W even, x 8-byte aligned; tile columns start even)
    int tma;     // the kernel parameter xmap describes x (W % 4 == 0, x 16-byte aligned)
    int ybulk;   // BULK_STORE: output rows through the bulk-copy engine (Wo even, y 8-byte aligned)
};

struct TileCoord { int n, oh, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x, t = tile / g.tiles_x;
    const int rows = (g.Ho + TH - 1) / TH;
    return { t / rows, (t % rows) * TH, tx * TW };
}

// The named barriers, one helper per idiom (named_sync, named_arrive: kernels/wgmma.cuh). A stage's handover: FULL
// (a ring's producers arrive, its consumer waits) and EMPTY (the consumer arrives, the producers wait).
__device__ __forceinline__ int full_bar(int k, int s) { return 1 + k * STAGES + s; }
__device__ __forceinline__ int empty_bar(int k, int s) { return 1 + PIPES * STAGES + k * STAGES + s; }
__device__ __forceinline__ void bar_sync(int id) { named_sync<BAR_COUNT>(id); }
__device__ __forceinline__ void bar_arrive(int id) { named_arrive<BAR_COUNT>(id); }
// One ring: consumer k may start its chunk loop (the previous tile's consumer has issued its last MMAs): the two
// consumers' turn, ORDER k.
constexpr int ORDER_COUNT = 128 * CONSUMERS;
__device__ __forceinline__ int order_bar(int k) { return 1 + 2 * PIPES * STAGES + PIPES + k; }
__device__ __forceinline__ void order_wait(int k) { named_sync<ORDER_COUNT>(order_bar(k)); }
__device__ __forceinline__ void order_pass(int k) { named_arrive<ORDER_COUNT>(order_bar(k)); }
// The tile a block's ring k carries j-th (one ring: the tiles of both consumers in turn, consumer j % CONSUMERS takes
// it); the same tiles per consumer either way: blockIdx.x * CONSUMERS + k, then gridDim.x * CONSUMERS apart.
__device__ __forceinline__ int ring_tile(int k, int j) {
    return PIPES == 1 ? blockIdx.x * CONSUMERS + j % CONSUMERS + (j / CONSUMERS) * gridDim.x * CONSUMERS
                      : blockIdx.x * CONSUMERS + k + j * gridDim.x * CONSUMERS;
}
// The PTHREADS producer threads of ring k among themselves.
__device__ __forceinline__ void producer_sync(int k) { named_sync<PTHREADS>(1 + 2 * PIPES * STAGES + k); }

// SBO: core matrices 8 rows apart for every operand here; lbo varies per wgmma.
__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t lbo) { return wgmma_desc(addr, lbo, CORE_MATRIX_BYTES); }
// Byte offset of tap t's window in a stage part: staged row kh, shifted by kw pixels.
__host__ __device__ constexpr uint32_t tap_offset(int t) { return ((t / KS) * XW + t % KS) * 16; }

// Weights, once per block. TF32: f = ((s*2 + half)*64 + co)*4 + e  <-  w[co][8*chunk + 4*half + e][tap], s = chunk*9 +
// tap (as 04b), rounded to TF32; returns 1. FP16: w * 2^e (f16_weight_exponent: max|w| 2^e < 2^14), 1 KB =
// [co][8 channels] per (chunk, tap): FP16 w_hi alone, [chunk][tap]: w(t) + 1 KB = w(t + 1); 3xFP16 hi + lo, per chunk
// [w_lo(tap 0..8)][w_hi(tap 0..8)]: w_lo(t) + 9 KB = w_hi(t). Returns 2^-e.
__device__ float stage_weights(float* sw, unsigned* smax, const float* __restrict__ w) {
    if constexpr (F16) {
        const int e = f16_weight_exponent(w, COUT * CIN * TAPS, smax);
        const float s = ldexpf(1.0f, e);
        unsigned short* h = reinterpret_cast<unsigned short*>(sw);
        // u = ((c*9 + t)*64 + co)*8 + ch  <-  w[co][8c + ch][t]
        for (int u = threadIdx.x; u < COUT * CIN * TAPS; u += THREADS) {
            const int ch = u & 7, co = (u >> 3) & 63, ct = u >> 9, c = ct / TAPS, t = ct - c * TAPS;
            const float v = __ldg(w + (co * CIN + CHUNK * c + ch) * TAPS + t) * s;
            const unsigned short hi = f16_bits(v);
            if constexpr (X3F16) {
                const int at = c * (2 * W_PART_HALVES) + t * W_TAP_HALVES + co * CHUNK + ch;   // lo; hi a part on
                h[at] = f16_bits(v - f16_value(hi));
                h[at + W_PART_HALVES] = hi;
            } else {
                h[u] = hi;
            }
        }
        return ldexpf(1.0f, -e);
    } else {
        for (int f = threadIdx.x; f < WFLOATS; f += THREADS) {
            const int e = f & 3, co = (f >> 2) & 63, half = (f >> 8) & 1, s = f >> 9;
            const int chunk = s / TAPS, tap = s - chunk * TAPS;
            sw[f] = tf32_round(__ldg(w + (co * CIN + CHUNK * chunk + 4 * half + e) * TAPS + tap));
        }
        return 1.0f;
    }
}

// The copy for shapes TMA cannot take: a chunk (8 channels from c0) x XPIX staged pixels, global -> a raw buffer with
// cp.async (no registers held while they are in flight; out-of-image pixels zero-filled): 8-byte copies of pixel pairs
// where W is even and x 8-byte aligned (tile columns start at multiples of TW = 86, so a pair is in the row or out of
// it whole), 4-byte copies of single pixels otherwise. Consecutive threads, consecutive addresses. 64-bit base per
// chunk, 32-bit offsets inside it (launch refuses 8 H W >= 2^31).
__device__ __forceinline__ void load_raw(float* raw, const float* __restrict__ x, const Geom& g, TileCoord tc,
                                         int c0, int ptid) {
    const int hw = g.H * g.W;
    const float* xc = x + (long long)(tc.n * CIN + c0) * hw;
    if (g.xvec) {
#pragma unroll 1
        for (int r = 0; r < (XPIX / 2 + PTHREADS - 1) / PTHREADS; ++r) {
            const int p = 2 * (ptid + PTHREADS * r);
            if (p < XPIX) {
                const int row = p / XW, px = p - row * XW;
                const int ih = tc.oh + row, ix = tc.ox0 + px;
                const bool ok = ih < g.H && ix < g.W;
                const float* src = xc + (ok ? ih * g.W + ix : 0);
#pragma unroll
                for (int c = 0; c < CHUNK; ++c)
                    cp_async8(raw + c * RAW_PIX + raw_index(p), src + (ok ? c * hw : 0), ok ? 8 : 0);
            }
        }
        cp_async_commit();
        return;
    }
#pragma unroll 1
    for (int r = 0; r < ROUNDS; ++r) {
        const int p = ptid + PTHREADS * r;
        if (p < XPIX) {
            const int row = p / XW, px = p - row * XW;
            const int ih = tc.oh + row, ix = tc.ox0 + px;
            const bool ok = ih < g.H && ix < g.W;
            const float* src = xc + (ok ? ih * g.W + ix : 0);
#pragma unroll
            for (int c = 0; c < CHUNK; ++c)
                cp_async4(raw + c * RAW_PIX + raw_index(p), src + (ok ? c * hw : 0), ok ? 4 : 0);
        }
    }
    cp_async_commit();
}

// A raw buffer -> one ring stage in the MMAs' layout, a pixel's 8 channels per thread: conflict-free 4-byte shared
// loads, 16-byte stores to consecutive rows.
//   TF32: part 0 = channels 0-3, part 1 = channels 4-7, rounded to TF32 by cvt.rn (one F2FP.TF32 in SASS where
//   cvt.rna takes three or four; the two differ only on exact ties).
//   3xFP16: part 0 = x_hi = FP16(x), part 1 = x_lo = FP16(x - x_hi); FP16: x_hi alone. |x| >= 65520 makes x_hi Inf,
//   and every output that reads it non-finite: the consumer then recomputes those outputs in FP32.
// shift: the tile's first column in the raw rows (0 or 2, see RAW_PITCH; 0 for the cp.async copies).
__device__ __forceinline__ void store_words(float* at, const uint32_t (&v)[4]) {
    *reinterpret_cast<uint4*>(at) = make_uint4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ void stage_raw(float* xs, const float* raw, int ptid, int shift) {
#pragma unroll 2
    for (int r = 0; r < ROUNDS; ++r) {
        const int p = ptid + PTHREADS * r;
        if (p < XPIX) {
            float v[CHUNK];
            // recomputed per chunk (opaque: hoisted out of the chunk loop, the rounds' indices took registers the
            // producer does not have: ptxas spilled 8 B (TF32) and 28 B (3xFP16))
            const int rp = raw_index(int(opaque(uint32_t(p)))) + shift;
#pragma unroll
            for (int c = 0; c < CHUNK; ++c) v[c] = raw[c * RAW_PIX + rp];
            if constexpr (F16) {
                float* at = xs + 4 * p;                  // the pixel's 8 channels in FP16: its 16-byte row
                uint32_t hi[CHUNK / 2];
                if constexpr (X3F16) {
                    uint32_t lo[CHUNK / 2];
#pragma unroll
                    for (int q = 0; q < CHUNK / 2; ++q) split_f16x2(v[2 * q], v[2 * q + 1], hi[q], lo[q]);
                    store_words(at + XPART, lo);
                } else {
#pragma unroll
                    for (int q = 0; q < CHUNK / 2; ++q) hi[q] = f16x2(v[2 * q], v[2 * q + 1]);
                }
                store_words(at, hi);
            } else {
#pragma unroll
                for (int q = 0; q < CHUNK / 4; ++q)
                    *reinterpret_cast<float4*>(xs + q * XPART + 4 * p) =
                        make_float4(tf32_round_rn(v[4 * q]), tf32_round_rn(v[4 * q + 1]),
                                    tf32_round_rn(v[4 * q + 2]), tf32_round_rn(v[4 * q + 3]));
            }
        }
    }
}

// One chunk's MMAs. xa: the stage; wa: the weights; za: the zero block (FP16: it pairs with tap 8).
//   TF32: per tap one k8 wgmma, w(tap) . x(tap window), both parts.
//   3xFP16: per tap both corrections into ac ([w_lo | w_hi] . [x_hi | x_lo]); per tap pair the main products into am
//   ([w_hi(t) | w_hi(t+1)] . [x_hi(t) | x_hi(t+1)]); tap 8 as [0 | w_hi(8)] . [x_hi(0) | x_hi(8)]. Interleaved so that
//   the tensor core has two independent accumulator chains.
//   FP16: 3xFP16's main products alone, 5 wgmmas.
__device__ __forceinline__ void mma_chunk(float (&am)[NACC], float (&ac)[NACC], uint32_t za, uint32_t wa,
                                          uint32_t xa, int chunk) {
    wgmma_fence();
    if constexpr (X3F16) {
        const uint32_t wc = wa + chunk * W_CHUNK_BYTES;  // this chunk's [w_lo(0..8)][w_hi(0..8)]
        const uint32_t wh = wc + W_PART_BYTES;           // its w_hi(0..8)
        const int more = chunk > 0;
#pragma unroll
        for (int t = 0; t < TAPS; ++t) {
            wgmma_f16(ac, desc(wc + t * W_TAP_BYTES, W_PART_BYTES), desc(xa + tap_offset(t), XPART * 4), more || t > 0);
            if (t % 2 == 1)
                wgmma_f16(am, desc(wh + (t - 1) * W_TAP_BYTES, W_TAP_BYTES),
                          desc(xa + tap_offset(t - 1), tap_offset(t) - tap_offset(t - 1)), more || t > 1);
        }
        wgmma_f16(am, desc(za, wh + (TAPS - 1) * W_TAP_BYTES - za), desc(xa, tap_offset(TAPS - 1)), 1);
    } else if constexpr (X1F16) {
        const uint32_t wc = wa + chunk * W_CHUNK_BYTES;  // this chunk's w(tap 0..8)
#pragma unroll
        for (int t = 1; t < TAPS; t += 2)
            wgmma_f16(am, desc(wc + (t - 1) * W_TAP_BYTES, W_TAP_BYTES),
                      desc(xa + tap_offset(t - 1), tap_offset(t) - tap_offset(t - 1)), chunk > 0 || t > 1);
        wgmma_f16(am, desc(za, wc + (TAPS - 1) * W_TAP_BYTES - za), desc(xa, tap_offset(TAPS - 1)), 1);
    } else {
#pragma unroll
        for (int t = 0; t < TAPS; ++t)
            wgmma_tf32(am, desc(wa + (chunk * TAPS + t) * W_KSTEP_BYTES, W_KHALF_BYTES),
                       desc(xa + tap_offset(t), XPART * 4), chunk > 0 || t > 0);
    }
    wgmma_commit();
}

// The conv2d epilogue: GELU by the erf polynomial (gelu_erf_fast), but 3xFP16's by erff.
__device__ __forceinline__ float epilogue(float acc, float m) {
    if constexpr (X3F16) return epilogue_conv2d(acc, m);
    else return epilogue_conv2d_fast(acc, m);
}

// A thread's values of output row t for its channel h (16 warp + gid + 8 h): v[2j + e] = column 8j + 2tq + e.
// FP16 undoes the weights' scale here.
__device__ __forceinline__ void epilogue_row(const float (&acc)[NACC], float b, float m, float scale, int t, int h,
                                             float (&v)[2 * NJ]) {
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
        if constexpr (X1F16) {
            v[2 * j]     = epilogue(fmaf(acc[4 * (NJ * t + j) + 2 * h], scale, b), m);
            v[2 * j + 1] = epilogue(fmaf(acc[4 * (NJ * t + j) + 2 * h + 1], scale, b), m);
        } else {
            v[2 * j]     = epilogue(acc[4 * (NJ * t + j) + 2 * h] + b, m);
            v[2 * j + 1] = epilogue(acc[4 * (NJ * t + j) + 2 * h + 1] + b, m);
        }
    }
}

// 04b's store_tile: bias, epilogue and stores from the accumulators (store_acc_row, kernels/wgmma.cuh).
__device__ __forceinline__ void store_tile(const float (&acc)[NACC], const float (&bias_r)[2],
                                           const float (&param_r)[2], float* __restrict__ y,
                                           const Geom& g, TileCoord tc, int warp, int lane, float scale = 1.0f) {
    const int gid = lane >> 2, tq = lane & 3;
    const int lim = min(TW, g.Wo - tc.ox0) - 2 * tq;     // pixel pair j is in the row when 8j < lim
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int c = 16 * warp + gid + 8 * h;
        float* yc = y + ((long long)(tc.n * COUT + c) * g.Ho + tc.oh) * g.Wo + tc.ox0 + 2 * tq;
#pragma unroll
        for (int t = 0; t < TH; ++t) {
            if (tc.oh + t >= g.Ho) break;       // warp-uniform
            float v[2 * NJ];
            epilogue_row(acc, bias_r[h], param_r[h], scale, t, h, v);
            store_acc_row<NJ>(yc + t * g.Wo, v, lim);
        }
    }
}


// The output through shared memory and the bulk-copy engine (TF32, FP16), conv3d 04b's scheme. The
//   plain stores write each quad's 32 bytes at a column 86 tx of a 254-float row: two partly written sectors per quad,
//   so every sector of y reaches L2 in two halves, and 44 STG.64 per thread and tile. Here a warp writes one round
//   (row t, channels 16 warp + 8 h + 0..7) into its 8 x 88-float buffer, each row at its 16-byte phase in y; lane 0
//   hands the 8 rows' 16-byte bodies to the engine (one cp.async.bulk each, whole sectors but at the rows' ends), lanes
//   0-7 store the 8-byte head and tail of one row each. Four rounds per tile; a round waits for the engine to have
//   read the previous one (cp.async.bulk.wait_group.read), its values computed before that wait.
__device__ __forceinline__ void store_tile_bulk(const float (&acc)[NACC], const float (&bias_r)[2],
                                                const float (&param_r)[2], float* __restrict__ y, float* sbuf,
                                                const Geom& g, TileCoord tc, int warp, int lane, float scale = 1.0f) {
    const int gid = lane >> 2, tq = lane & 3;
    const int lim = min(TW, g.Wo - tc.ox0);              // even: Wo even, ox0 = 86 tx
    const long long plane = (long long)g.Ho * g.Wo;
    // channel 16 warp, row oh
    float* yrow0 = y + ((long long)(tc.n * COUT + 16 * warp) * g.Ho + tc.oh) * g.Wo + tc.ox0;
    // warp-uniform copies for lane 0's bulk copies (per-lane values there make the compiler loop over lanes: conv3d)
    const float* ybase = reinterpret_cast<const float*>(__shfl_sync(~0u, reinterpret_cast<uintptr_t>(yrow0), 0));
    const uint32_t sbase = __shfl_sync(~0u, smem_addr(sbuf), 0);
    const int ulim = __shfl_sync(~0u, lim, 0);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int t = 0; t < TH; ++t) {
            if (tc.oh + t >= g.Ho) break;       // warp-uniform
            float v[2 * NJ];
            epilogue_row(acc, bias_r[h], param_r[h], scale, t, h, v);
            if (lane == 0) bulk_wait_read();    // the engine has read this warp's previous round
            __syncwarp();
            const float* grow = yrow0 + (gid + 8 * h) * plane + t * g.Wo;
            float* srow = sbuf + gid * OPITCH + (int)((reinterpret_cast<uintptr_t>(grow) >> 2) & 3);
#pragma unroll
            for (int j = 0; j < NJ; ++j)
                if (8 * j + 2 * tq < lim)
                    *reinterpret_cast<float2*>(srow + 8 * j + 2 * tq) = make_float2(v[2 * j], v[2 * j + 1]);
            fence_proxy_async();                // the engine reads shared memory through the async proxy
            __syncwarp();
            if (lane < 8) {                     // the rows' 8-byte ends: row `lane` of the round
                float* gr = yrow0 + (lane + 8 * h) * plane + t * g.Wo;
                const RowSplit rs = row_split(gr, lim);
                const float* sr = sbuf + lane * OPITCH + rs.phase;
                if (rs.head) __stcs(reinterpret_cast<float2*>(gr), *reinterpret_cast<const float2*>(sr));
                if (rs.tail)
                    __stcs(reinterpret_cast<float2*>(gr + lim - 2), *reinterpret_cast<const float2*>(sr + lim - 2));
            }
            if (lane == 0) bulk_rows<8>(ybase + 8 * h * plane + t * g.Wo, plane, sbase, OPITCH, ulim);
        }
    }
}

// The FP32 path of a tile whose input FP16 cannot carry: one output as a plain FP32 dot product.
__device__ __forceinline__ float direct_conv(const float* __restrict__ x, const float* __restrict__ w, const Geom& g,
                                          int n, int co, int oh, int ox) {
    const long long cstride = (long long)g.H * g.W;
    const float* xp = x + ((long long)n * CIN * g.H + oh) * g.W + ox;
    const float* wp = w + co * CIN * TAPS;
    float s = 0.0f;
#pragma unroll 1
    for (int ci = 0; ci < CIN; ++ci)
#pragma unroll
        for (int t = 0; t < TAPS; ++t)
            s = fmaf(__ldg(xp + ci * cstride + (t / KS) * g.W + t % KS), __ldg(wp + ci * TAPS + t), s);
    return s;
}
// Bias, epilogue and a plain store per output, in the accumulator order (a runtime loop: nothing else is live).
__device__ __forceinline__ void fp32_tile(const float* __restrict__ x, const float* __restrict__ w,
                                          const float (&bias_r)[2], const float (&param_r)[2], float* __restrict__ y,
                                          const Geom& g, TileCoord tc, int warp, int lane) {
    const int gid = lane >> 2, tq = lane & 3;
#pragma unroll 1
    for (int i = 0; i < NACC; ++i) {
        const int e = i & 1, h = (i >> 1) & 1, j = (i >> 2) % NJ, t = (i >> 2) / NJ;
        const int col = 8 * j + 2 * tq + e, co = 16 * warp + gid + 8 * h, oh = tc.oh + t, ox = tc.ox0 + col;
        if (oh < g.Ho && col < TW && ox < g.Wo) {
            const float v = direct_conv(x, w, g, tc.n, co, oh, ox) + (h ? bias_r[1] : bias_r[0]);
            y[((long long)(tc.n * COUT + co) * g.Ho + oh) * g.Wo + ox] = epilogue(v, h ? param_r[1] : param_r[0]);
        }
    }
}

// The producer: PTHREADS threads per ring; RAWS - 1 raw buffers in flight while one is staged. One thread per ring
// copies a raw buffer with one TMA (a box of RAW_PITCH pixels x XH rows x 8 channels, exactly the raw buffer's layout,
// out-of-image pixels zero-filled): the producer keeps only the conversion. Each raw buffer completes on its mbarrier;
// shapes TMA cannot take (W % 4 != 0) copy with cp.async onto the same barriers. The buffers are found from the
// shared-memory symbol, as in the kernel (from pointers passed in, the offsets would fold another way: other SASS).
__device__ __forceinline__ void producer(const CUtensorMap& xmap, const float* __restrict__ x, const Geom& g) {
    extern __shared__ __align__(128) float smem[];
    float* raws = smem + ZFLOATS + WFLOATS;
    float* sx = raws + PIPES * RAWS * RAWF;
    uint64_t* rawbar = reinterpret_cast<uint64_t*>(sx + PIPES * STAGES * XBUF + OUT_FLOATS + SMAX_FLOATS);
    setmaxnreg_dec<PRODUCER_REGS>();
    const int k = threadIdx.x / PTHREADS, ptid = threadIdx.x % PTHREADS;
    float* ring = sx + k * STAGES * XBUF;
    int tile = blockIdx.x * CONSUMERS + k, slot = 0;
    float* raw0 = raws + k * RAWS * RAWF;
    uint64_t* bars = rawbar + k * RAWS;
    int buf = 0, next_j = 0, next_chunk = 0;         // the next raw buffer's contents: tile j, chunk
    int next_tile = ring_tile(k, 0);
    unsigned parity = 0u;                            // bit b: the phase raw buffer b completes next
    TileCoord ntc = tile_coord(g, next_tile);
    auto copy_next = [&](int b, bool issue) {
        if (next_tile < g.tiles) {
            if (g.tma) {
                if (issue) {
                    mbar_arrive_expect_tx(bars + b, RAWF * 4);
                    tma_load_4d(raw0 + b * RAWF, &xmap, ntc.ox0 & ~3, ntc.oh, CHUNK * next_chunk, ntc.n, bars + b);
                }
            } else {
                load_raw(raw0 + b * RAWF, x, g, ntc, CHUNK * next_chunk, ptid);
                cp_async_mbar_arrive(bars + b);
            }
        }
        if (++next_chunk == NCHUNK) {
            next_chunk = 0;
            next_tile = ring_tile(k, ++next_j);
            ntc = tile_coord(g, next_tile);
        }
    };
    for (int b = 0; b < RAWS; ++b) copy_next(b, ptid == 0);
#pragma unroll 1
    for (int j = 0; (tile = ring_tile(k, j)) < g.tiles; ++j) {
        const int shift = g.tma ? tile_coord(g, tile).ox0 & 3 : 0;
#pragma unroll 1
        for (int chunk = 0; chunk < NCHUNK; ++chunk) {
            mbar_wait(bars + buf, (parity >> buf) & 1u);   // the buffer has landed
            parity ^= 1u << buf;
            bar_sync(empty_bar(k, slot));
            stage_raw(ring + slot * XBUF, raw0 + buf * RAWF, ptid, shift);
            fence_proxy_async();
            bar_arrive(full_bar(k, slot));
            producer_sync(k);                        // the raw buffer is read: refill it
            copy_next(buf, ptid == 0);
            buf = buf + 1 == RAWS ? 0 : buf + 1;
            slot = slot + 1 == STAGES ? 0 : slot + 1;
        }
    }
    for (int s = 0; s < STAGES; ++s) bar_sync(empty_bar(k, s));   // the consumer's last releases
}

__global__ void __launch_bounds__(THREADS, 1)
conv2d_ws_kernel(const __grid_constant__ CUtensorMap xmap, const float* __restrict__ x, const float* __restrict__ w,
                 const float* __restrict__ bias, const float* __restrict__ mult, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* zero = smem;                                  // first: every other operand lies after it (lbo > 0)
    float* sw = smem + ZFLOATS;
    float* raws = sw + WFLOATS;
    float* sx = raws + PIPES * RAWS * RAWF;
    float* sout = sx + PIPES * STAGES * XBUF;            // BULK_STORE: the consumer warps' output buffers
    unsigned* smax = reinterpret_cast<unsigned*>(sout + OUT_FLOATS);
    for (int i = threadIdx.x; i < ZFLOATS; i += THREADS) zero[i] = 0.0f;
    for (int i = threadIdx.x; i < PIPES * STAGES * XBUF; i += THREADS) sx[i] = 0.0f;   // pads stay 0
    if (threadIdx.x == 0) *smax = 0u;
    uint64_t* rawbar = reinterpret_cast<uint64_t*>(smax + SMAX_FLOATS);
    if (threadIdx.x == 0) {
        // TMA: one arrival (the issuing thread's expect_tx) and the bytes; cp.async: every producer thread's
        // copies (cp_async_mbar_arrive)
        for (int i = 0; i < PIPES * RAWS; ++i) mbar_init(rawbar + i, g.tma ? 1 : PTHREADS);
        mbar_init_fence();
    }
    __syncthreads();
    const float inv_scale = stage_weights(sw, smax, w);
    fence_proxy_async();
    __syncthreads();
    const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
    const int stride = gridDim.x * CONSUMERS;
    if (wg < PRODUCERS) {
        producer(xmap, x, g);
    } else {
        // ---- consumer: MMAs from the ring, epilogue from the accumulators ------------------------------
        setmaxnreg_inc<CONSUMER_REGS>();
        const int k = wg - PRODUCERS, warp = tid >> 5, lane = threadIdx.x & 31;
        const uint32_t wa = smem_addr(sw);      // the zero block and this consumer's ring at fixed offsets from it
        const int pipe = PIPES == 1 ? 0 : k;             // the ring this consumer reads
        const uint32_t ra = wa + (WFLOATS + PIPES * RAWS * RAWF + pipe * STAGES * XBUF) * 4;
        float am[NACC], corrections[NACC];       // 3xFP16's corrections have accumulators of their own
        float (&ac)[NACC] = X3F16 ? corrections : am;   // the other builds have no corrections (mma_chunk)
        if (PIPES > 1 || k == 0)
            for (int s = 0; s < STAGES; ++s) bar_arrive(empty_bar(pipe, s));   // every stage starts empty
        int slot = PIPES == 1 ? k * NCHUNK % STAGES : 0;
#pragma unroll 1
        for (int tile = blockIdx.x * CONSUMERS + k, j = k; tile < g.tiles; tile += stride, j += CONSUMERS) {
            int prev = -1;
            if (PIPES == 1 && j > 0) order_wait(k);
#pragma unroll 1
            for (int chunk = 0; chunk < NCHUNK; ++chunk) {
                bar_sync(full_bar(pipe, slot));
                mma_chunk(am, ac, wa - ZFLOATS * 4, wa, ra + slot * (XBUF * 4), chunk);
                wgmma_wait<1>();                 // the previous chunk's MMAs are done: release its stage
                if (prev >= 0) bar_arrive(empty_bar(pipe, prev));
                prev = slot;
                slot = slot + 1 == STAGES ? 0 : slot + 1;
            }
            if (PIPES == 1) {
                // the next tile's consumer may take the ring; this one's next chunks come CONSUMERS - 1 tiles later
                if (ring_tile(0, j + 1) < g.tiles)
                    order_pass((k + 1) % CONSUMERS);
                slot = (slot + (CONSUMERS - 1) * NCHUNK) % STAGES;
            }
            wgmma_wait<0>();
            fence_operand(am);
            if constexpr (X3F16) fence_operand(ac);
            bar_arrive(empty_bar(pipe, prev));
            // bias, parameter and tile coordinates only now: 224 registers hold both accumulator sets with
            // no room to spare (ptxas spilled 16 B with them live across the MMA loop)
            const TileCoord tc = tile_coord(g, tile);
            float bias_r[2], param_r[2];
            channel_params(bias, mult, warp, lane, bias_r, param_r);
            auto put_tile = [&](float scale) {
                if constexpr (BULK_STORE) {
                    if (g.ybulk) {
                        float* sbuf = sout + (4 * (k % CONSUMERS) + warp) * OWARP;
                        store_tile_bulk(am, bias_r, param_r, y, sbuf, g, tc, warp, lane, scale);
                        return;
                    }
                }
                store_tile(am, bias_r, param_r, y, g, tc, warp, lane, scale);
            };
            // the bulk store is a warp's (__syncwarp, shuffles): a lane's FP32 path takes its whole warp along
            auto warp_any = [ybulk = BULK_STORE && g.ybulk](bool b) { return ybulk ? __any_sync(~0u, b) : b; };
            if constexpr (X3F16) {
                bool bad = false;
#pragma unroll
                for (int i = 0; i < NACC; ++i) {
                    am[i] = (am[i] + ac[i]) * inv_scale;
                    bad |= !(fabsf(am[i]) < CF_F32_INF);
                }
                if (warp_any(bad)) {             // an Inf or NaN input, or |x| >= 65520: this thread's outputs in FP32
                    fp32_tile(x, w, bias_r, param_r, y, g, tc, warp, lane);
                    continue;
                }
                put_tile(1.0f);
            } else if constexpr (X1F16) {
                if (warp_any(acc_nonfinite(am))) {   // an Inf or NaN input or weight, or |x| >= 65520
                    fp32_tile(x, w, bias_r, param_r, y, g, tc, warp, lane);
                    continue;
                }
                put_tile(inv_scale);
            } else {
                put_tile(1.0f);
            }
        }
        if constexpr (BULK_STORE)
            if (lane == 0) bulk_wait_all();      // every bulk copy done before the block's shared memory goes
    }
#endif
}

}  // namespace cf04c

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace cf04c;
    constexpr const char* NAME = "04c_warp_specialized_wgmma (conv2d)";
    static_assert(CIN == 64 && COUT == 64 && KS == 3, "the shapes cf_conv2d_shape checks");
    if (const char* err = cf_conv2d_shape(a, NAME)) return err;
    int dev = 0, sms = 0, grid = 0;
    if (const char* err = cf_sm90a_device(NAME, dev, sms)) return err;
    Geom g;
    g.N = a.N; g.H = a.H; g.W = a.W; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, TW);
    const long long tiles = (long long)a.N * cf_ceil_div(a.Ho, TH) * g.tiles_x;
    if (tiles > 0x7fffffffLL - (long long)sms * CONSUMERS)
        return "04c_warp_specialized_wgmma (conv2d): too many tiles for a 32-bit tile index";
    g.tiles = (int)tiles;
    g.xvec = (a.W % 2 == 0) && (reinterpret_cast<uintptr_t>(a.x) % 8 == 0);
    g.ybulk = BULK_STORE && (a.Wo % 2 == 0) && (reinterpret_cast<uintptr_t>(a.y) % 8 == 0);
    CUtensorMap xmap{};
    // the box is a raw buffer: RAWF floats, expect_tx's count
    g.tma = cf_encode_tma_4d(&xmap, a.x, {(uint64_t)a.W, (uint64_t)a.H, (uint64_t)CIN, (uint64_t)a.N},
                             {(uint32_t)RAW_PITCH, (uint32_t)XH, (uint32_t)CHUNK, 1u});
    if ((long long)CHUNK * a.H * a.W >= (1LL << 31))
        return "04c_warp_specialized_wgmma (conv2d): an image plane of more than 2^28 pixels exceeds its 32-bit "
               "offsets within a chunk (2^31 elements)";
    if (const char* err = cf_persistent_grid(conv2d_ws_kernel, THREADS, SMEM_BYTES,
                                             (tiles + CONSUMERS - 1) / CONSUMERS, sms, NAME, grid))
        return err;
    conv2d_ws_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(xmap, a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}
