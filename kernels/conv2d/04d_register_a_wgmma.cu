// 04d_register_a_wgmma — conv2d step 04d: the implicit GEMM turned around, pixels as M with the input operand
// loaded into registers, so that nothing is staged (sm_90a only: H100/H200).
//
// What changed from 04c and why. 04c multiplies weights (M = 64 Cout, from shared memory) by input pixels (N = 176,
//   from shared memory). TF32 wgmma reads shared operands K-major only, so every input value must first be transposed
//   into a pixel-major layout: 04c's producer warpgroups stage each chunk (shared loads, a TF32 rounding, shared
//   stores), and the 13:26 UTC record's source page (2026-12-02) shows the consumer issuing MMAs waiting at FULL for
//   them 44 % of its time, with the tensor pipe busy at most 45 %. wgmma can also take A from registers, in the
//   mma.sync fragment layout (a thread holds rows g, g + 8 and columns t, t + 4 of its warp's 16 x 8 slice), and a
//   register fragment can be loaded from any layout. So here M = 64 output pixels of one output row (warp w: pixels
//   16 w .. 16 w + 15), N = 64 Cout, K = 8 channels of one tap per k8 step: A from the raw NCHW rows as the TMA
//   writes them (four conflict-free 4-byte shared loads and four cvt.rn per fragment: lane (g, t) reads channel t's
//   row at pixel g, and a channel's pixels are 408 floats = 24 banks apart), B the weights, resident in shared memory
//   K-major ([chunk][tap][k-half][co][4 channels], 04c's layout). The producer only issues one TMA per chunk.
// Reuse. A consumer warpgroup owns ROWS output rows x 64 columns (ROWS m64n64 accumulators, 32 registers each).
//   Input row i of a chunk, shifted by tap column s, is one fragment; it serves output rows i - r for the taps
//   (r, s) with 0 <= i - r < ROWS: with ROWS 4, 18 fragments per chunk feed 36 wgmmas. Per m64n64k8 wgmma (32 cycles
//   of an SM's tensor pipe at its TF32 rate) shared memory serves B's 2 KB (16 wavefronts) and half a fragment load
//   (8): 75 % of the pipe's time against 04c's ~90 % (60 wavefronts per 88-cycle m64n176k8 plus the staging).
// Pipeline. Per input row: its three fragments loaded into one of two register sets, wgmma.fence, its wgmmas, the
//   stage's release after its last row's wgmmas (an mbarrier arrive of every consumer thread: wgmma never reads the
//   stage, and an HGMMA cannot issue before its fragment registers have arrived), a commit, then wgmma.wait_group 1
//   (the previous row's wgmmas, which read the other set, are done). Two consumer warpgroups work on their own tiles
//   at once, each with a ring of STAGES stages filled by one producer thread's TMA (8 channels x 6 rows x 68 pixels,
//   out-of-image pixels zero-filled; tiles start at multiples of 64 columns, so every box starts 16-byte aligned).
//   Shapes TMA cannot take (W % 4 != 0) copy with 4-byte cp.async onto the same mbarriers.
// Shared memory: weights 147,456 B | 2 rings x 3 stages x 13,056 B | 12 mbarriers = 225,888 B, one block per SM of
//   384 threads (a producer warpgroup at 40 registers, of which two threads issue copies; consumers at 232).
// Epilogue: bias, multiplier, LeakyReLU, GELU (erf polynomial, CF_GELU_FAST) on the accumulators; thread (g, t) holds
//   pixels g, g + 8 of its warp's 16 and channels 8 j + 2 t, + 1: plain 4-byte streaming stores, 8 lanes writing 32
//   contiguous bytes of one channel row. Registered since 2026-12-03 19:50 UTC with CF_PIXEL_PAIRS (the registry's
//   defines): its M rows g, g + 8 are pixels 2 g, 2 g + 1, so a fragment row is 4 eight-byte shared loads and a thread
//   stores two neighbouring pixels of a channel with one 8-byte store (8 lanes writing 64 contiguous bytes) where Wo is
//   even and y 8-byte aligned.
//
// Measured on the H200, 2026-12-02 16:05-16:30 UTC (results/device-logs/explore-2026-12-02h/, notes/kernel_log.md,
//   nineteenth session; times are medians of one interleaved run per process, eager and torch.compile beside them):
//   correct on the first run, its errors against float64 those of 04c TF32 to four digits (same operands, same
//   rounding). First build, the consumers in ping-pong (CF_PINGPONG, as 04c): 1.327 ms against 04c TF32's 1.343,
//   nothing gained: ncu counted 32 % fewer shared wavefronts and the tensor pipe still ~50 % busy. A lone warpgroup's
//   HGMMA issue is the bound there: ping-pong without fragment loads (CF_ABL_NOLDS) took 1.320, with three register
//   sets (CF_FRAG_SETS=3) 1.347, consecutive HGMMAs into different accumulators (CF_MMA_INTERLEAVE) 1.335. Both
//   consumers issuing at once (the default since): 1.210/1.205, then with the release moved after the HGMMAs (the
//   first builds arrived right after the loads, which the SASS showed not waiting for them: one bitwise case of 120
//   differed) 1.214/1.198 and 1.189/1.166 against 04c's 1.364/1.346 and 1.343/1.318. Ablations: no epilogue at all
//   (CF_ABL_NOEPI) 1.008, epilogue without stores (CF_ABL_NOSTORE) 1.244, fragments loaded once per tile 1.193: the
//   epilogue's arithmetic costs ~17 %, because while one consumer computes it the other issues alone. Not kept:
//   consumer 1 starting half a tile late (CF_SKEW) 1.240/1.218; three consumers of three rows with two stages each
//   (CF_CONSUMERS=3, CF_ROWS=3, CF_PITCH=72, CF_STAGES=2, CF_PRODUCER_REGS=40, CF_PARAMS_SMEM) 1.313/1.314, with three
//   register sets 1.249/1.237: their rings run dry (long-scoreboard stalls 4.55 per issue, 1.64 GB read from DRAM
//   against 1.17); CF_TF32_TRUNC (no cvt, the tensor core truncates) 1.208 against 1.214, rel-L2 5.2e-4 against 3.1e-4.
//   The record of 16:32 UTC: 1.153 ms, 4.31x eager, 1.99x torch.compile (04c TF32 1.286 in the same run). After it,
//   the fragment loads one row ahead (CF_FRAG_PREFETCH, bitwise equal): 1.167 against 1.167. The call-3 source page:
//   the consumers' epilogue executes 203 M warp instructions against their tile loop's 137 M. Twentieth session
//   (2026-12-02 from 17:45 UTC, explore-2026-12-02i/): CF_EPI_LEAN (the epilogue in 2,828 SASS instructions instead of
//   3,127) 1.244 against 1.239 and 1.187 against 1.177: fewer instructions, no faster. CF_EPI_OVERLAP (each row's
//   epilogue under the last chunk's later wgmmas, bitwise equal) 1.222 against 1.177 and 1.195 against 1.159: slower.
//   Twenty-seventh session (2026-12-03 from 17:05 UTC, explore-2026-12-03f/; the 16:53 record had this build at 1.163
//   ms, 1.98x torch.compile): six more candidates, each bitwise equal and none faster (two runs each, against the
//   registered build's 1.187-1.227 in the same processes). CF_W_BATCH (the weights 32 loads at a time) 1.228/1.234
//   against 1.216/1.227; CF_TILE_SPREAD (the leftover tiles to lone consumers) 1.252/1.259: the block's consumers on
//   neighbouring tiles share their input rows; CF_EPI_ROLL=1/2 (the epilogue in a loop over rows) 1.268/1.276 and
//   1.241/1.253, no-instruction stalls 0.11 -> 0.03 per issue: fetch was not the epilogue's bound. CF_ROWS=5 (with
//   CF_PITCH=72, CF_STAGES=2: three stages would need 244 KB) and CF_SET_CARRY (RsChunk's register sets carried over
//   chunk pairs, so the odd XH = 7 does not drain each chunk) 1.213/1.219 against 1.207/1.211: 3 % faster than
//   CF_STAGES=2 at four rows (1.251/1.253), which runs dry. CF_L2_PREFETCH=4 (the box four chunks ahead into L2)
//   1.304/1.297 against 1.187/1.191, DRAM reads 1.12 -> 1.66 GB. Parts (call 4, one run): registered 1.143, without the
//   epilogue's math 0.915, without stores 1.105; without the math two stages 0.913 (as fast as three) and five rows
//   0.881: two stages run dry only while one consumer is in its epilogue and the other, alone, outruns its copies.
//   CF_POOL (one pool of stages for both consumers, dealt by need; below, at its constants) was prepared then.
//   Twenty-eighth session (2026-12-03 from 18:34 UTC, explore-2026-12-03g/): CF_POOL bitwise equal and slower, five
//   rows on a pool of five 1.671 against 1.160 ms (DRAM reads 2.40 GB against 1.14), four rows on six 1.205; racecheck
//   hazards on the slot numbers' plain stores (tests/test_pool.py models the handoffs). CF_PIXEL_PAIRS (a warp's M rows
//   g, g + 8 as pixels 2 g, 2 g + 1: 8-byte fragment loads and stores) bitwise equal, 1.158/1.152 against 1.218/1.213
//   (call Q; shared loads 37.8 M -> 12.6 M, global stores halved, long-scoreboard stalls 2.22 -> 1.30 per issue),
//   registered: the 19:50 UTC record has this kernel at 1.082 ms, 4.59x eager, 2.13x torch.compile. Its SASS moves
//   each converted value two taps share into both taps' register quads (MOV 44.7 M warp instructions): CF_PAIR_CVT
//   (wgmma.cuh), each use converted on its own, built the same SASS (120 MOV; call R: 1.113/1.106 against 1.113/1.106).
//   CF_PAIR_SPLIT (wgmma.cuh: tap 1's pixels loaded on their own, no value with two uses) prepared, not measured.
// CF_3XTF32 (variant 04d_rs_3xtf32, twenty-ninth session, 2026-12-03, explore-2026-12-03h/): split-TF32 operands, three
//   products. Both weight parts resident need 295 KB for 64 Cout, so a block takes one half (N = 32, 147,456 B) and blocks
//   2 b, 2 b + 1 the same tiles; main products and corrections in accumulators of their own (the tensor core's adds round
//   toward zero). Call A (a producer warpgroup, whole rows in flight on two fragment sets): correct, 4.73 ms — ptxas
//   serialized every wgmma (C7512, "insufficient register resources"). Call B: no producer warpgroup (consumer_3x: 256
//   threads, warp 0 of each consumer copies its boxes) and one fragment set, 3.31-3.34 ms. Call C: the chunk in
//   tap-column groups (RsChunk3x::group, wgmma.cuh), 3.14-3.16 ms; three rows 3.30-3.32, three rows with two main
//   accumulators (CF_3X_MAIN2) 3.30-3.34 at rel-L2 1.0e-6 against 1.87e-6. The 21:41 UTC record: 3.000 ms, 1.66x eager,
//   0.77x torch.compile (notes/kernel_log.md). Thirtieth session (explore-2026-12-03i/), three rows a tile: a_big times
//   both weight parts in one m64n64k8 (CF_3X_CONCAT: two wgmmas a tap instead of three; four rows serialize) 3.11/3.08
//   against 3.33/3.29, three fragment sets (CF_3X_SETS=3, wait_group 2) 3.09/3.06, then the erf polynomial
//   (CF_GELU_FAST) 2.94/2.93 against 3.07/3.06 — the four-row build 3.11-3.17 in the same processes. Registered with
//   all three (the registry's defines): the 22:59 UTC record 2.800 ms, 1.79x eager, 0.82x torch.compile, rel-L2 1.86e-6.
//   Its tensor pipe is 68.8 % active (ncu); a microbenchmark (kernels/micro/wgmma_rate.cu) retires register-A m64n32k8
//   at the full TF32 rate, but only 78 % with A loaded before each group of 144 tensor cycles, as here. Thirty-first
//   session (2026-12-04, explore-2026-12-04/): CF_3X_PAIRS (two tap columns a group, RsChunk3x::pair) 3.03 against 3.00;
//   ablations (call K, timed only): without the epilogue's math 10.7 % faster, without the fragment loads 12.7 %, with
//   neither nor the splits 21.9 % (the tensor pipe 86.8 % active: only as fast as torch.compile); the next row's loads
//   under the current group (CF_3X_ROW_PREFETCH, bitwise equal) 2.965 against 3.008, registered: the 02:22 UTC record
//   2.778 ms, 1.79x eager, 0.83x torch.compile; the epilogue in a third warpgroup (CF_3X_EPI_WG, below) bitwise equal,
//   3.04 against 3.01: no faster (call O: its math 4 %, its stores 8 % more, from the third warpgroup).
//   Thirty-second session (2026-12-04 from 20:58 UTC, explore-2026-12-04b/): the wgmma rate microbenchmark has CONCAT's
//   pair at 66 % beside global stores, 78 % beside GELUs (MUFU), 48 % beside this epilogue, ~100 % beside shared loads;
//   but removing those from the epilogue lost (call R, one process): the rows through shared memory and the bulk-copy
//   engine (CF_3X_BULK_STORE, below) 3.258 against 2.978 for two stages, the GELU without MUFU (CF_GELU_ALU,
//   common.cuh) 3.009 against 2.892 — the epilogue costs its own length, while the other consumer issues alone. The
//   source page (call Q) showed that length latency-bound: two GELU chains at a time, a branch on pair_stores after each
//   pair. CF_EPI_ILP (store_row_pairs, below: 16 values, then their stores) bitwise equal, 2.826 against 2.873 ms, and
//   for TF32 1.073 against 1.105 (call S); measured, waiting for the record run that registers it (the device was
//   withdrawn before it: notes/call_record_epi_ilp.sh).

namespace cf04d {

constexpr int CIN = 64, COUT = 64, KS = 3, TAPS = KS * KS;
constexpr int CHUNK = 8, NCHUNK = CIN / CHUNK;
#ifndef CF_ROWS
#define CF_ROWS 4
#endif
constexpr int ROWS = CF_ROWS;              // output rows per consumer tile: one m64n64 accumulator set each
constexpr int TW = 64;                     // output columns per tile: the wgmma's M
constexpr int XH = ROWS + KS - 1;          // input rows per chunk
#ifndef CF_PITCH
#define CF_PITCH 68
#endif
constexpr int PITCH = CF_PITCH;            // the TMA box's width: TW + 2 columns, rounded up to 16 bytes
constexpr int CHP = XH * PITCH;            // floats per channel of a stage
static_assert(CHP % 32 == 8 || CHP % 32 == 24, "fragment loads: channels t and t + 1 in disjoint banks");
constexpr int STAGE_FLOATS = CHUNK * CHP;  // [channel][row][PITCH]: the TMA box as it lands
#ifndef CF_STAGES
#define CF_STAGES 3
#endif
#ifndef CF_CONSUMERS
#define CF_CONSUMERS 2
#endif
constexpr int STAGES = CF_STAGES, CONSUMERS = CF_CONSUMERS;
#if defined(CF_POOL) && (defined(CF_PINGPONG) || defined(CF_SKEW) || defined(CF_EPI_OVERLAP) || defined(CF_FRAG_PREFETCH) \
    || defined(CF_L2_PREFETCH))
#error "CF_POOL replaces the rings of the registered chunk loop only"
#endif
#if defined(CF_PIXEL_PAIRS) && (defined(CF_FRAG_PREFETCH) || defined(CF_EPI_OVERLAP) || defined(CF_EPI_LEAN) \
    || defined(CF_EPI_ROLL) || ((defined(CF_ABL_NOEPI) || defined(CF_ABL_NOSTORE)) && !defined(CF_3XTF32)))
#error "CF_PIXEL_PAIRS pairs the registered fragment loads and epilogue only"
#endif
#if defined(CF_3XTF32) && (!defined(CF_PIXEL_PAIRS) || defined(CF_POOL) || defined(CF_PINGPONG) || defined(CF_SKEW) \
    || defined(CF_TILE_SPREAD) || defined(CF_SET_CARRY) || defined(CF_PARAMS_SMEM) || defined(CF_L2_PREFETCH) \
    || defined(CF_W_BATCH) || defined(CF_TF32_TRUNC) || defined(CF_MMA_INTERLEAVE))
#error "CF_3XTF32 splits the registered build (pixel pairs, two rings) only"
#endif
#ifdef CF_3XTF32
constexpr int THREADS = 128 * CONSUMERS;   // no producer warpgroup: each consumer copies its own boxes (consumer_3x)
#else
constexpr int THREADS = 128 * (1 + CONSUMERS);
#endif
constexpr int WFLOATS = NCHUNK * TAPS * 2 * COUT * 4;      // 36,864 floats = 147,456 B
constexpr int WSTEP = 2 * COUT * 4 * 4;                    // bytes per (chunk, tap): 2 KB
#ifdef CF_3XTF32
// CF_3XTF32 (variant 04d_rs_3xtf32): a block computes one half of the Cout, NB = 32 (RsChunk3x, wgmma.cuh); per
// (chunk, tap) [w_big | w_small], each [k-half][32 Cout][4 channels] (1 KB), so WSTEP and WFLOATS stay as above
#ifdef CF_3X_CONCAT
// CF_3X_CONCAT (registered since the thirtieth session): per (chunk, tap) [k-half][w_big | w_small][32 Cout][4
// channels], read as N = 64 (RsChunk3x's AW)
constexpr int NB = COUT / 2, W_SMALL = WSTEP / 2, B_KHALF = 2 * NB * 16, AW = 32;
#else
constexpr int NB = COUT / 2, W_SMALL = WSTEP / 2, B_KHALF = NB * 16, AW = 16;
#endif
#else
constexpr int NB = COUT, B_KHALF = COUT * 16;              // Cout per block; bytes between a k8 step's two halves
#endif
constexpr int RING_FLOATS = CONSUMERS * STAGES * STAGE_FLOATS;
constexpr int NBARS = 2 * CONSUMERS * STAGES;              // FULL and EMPTY per stage
constexpr int QSLOT_BYTES = 0;
constexpr int PARAM_FLOATS = 0;
constexpr int EPI_FLOATS = 0;
constexpr int SMEM_BYTES = (WFLOATS + RING_FLOATS + EPI_FLOATS) * 4 + NBARS * 8 + PARAM_FLOATS * 4 + QSLOT_BYTES;
static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 block can have (227 KB)");
static_assert((WFLOATS * 4) % 128 == 0 && (STAGE_FLOATS * 4) % 128 == 0, "TMA destinations 128-byte aligned");
constexpr int KERNEL_REGS = (65536 / THREADS) & ~7;        // what __launch_bounds__(THREADS, 1) allows: 168
#ifndef CF_PRODUCER_REGS
#define CF_PRODUCER_REGS 40
#endif
constexpr int PRODUCER_REGS = CF_PRODUCER_REGS;
constexpr int CONSUMER_REGS = ((THREADS * KERNEL_REGS - 128 * PRODUCER_REGS) / (128 * CONSUMERS)) & ~7;
static_assert(CONSUMER_REGS <= 256 && 128 * PRODUCER_REGS + 128 * CONSUMERS * CONSUMER_REGS <= THREADS * KERNEL_REGS,
              "register pool");

// CF_EPI_ILP (measured: explore-2026-12-04b/callS, bitwise equal, 1.6 % and 2.9 % faster; to be registered with the
// next record, notes/call_record_epi_ilp.sh): the pixel-pair epilogue computed 16 values at a time, then stored. The
// registered epilogue computes two values, then branches on pair_stores to store them: the branch closes a basic block
// every two values, so ptxas can overlap only two GELU chains (~20 dependent instructions, two MUFU each). The 3xTF32
// build's source page (explore-2026-12-04b/callQ) has its consumers' warps 16.7 % of their samples in the epilogue,
// issuing in 4.5 points of them and waiting on fixed-latency dependencies in 7.2; its SASS, two chains and a BSSY a pair.
// Here 16 values a thread (a row in 3xTF32, half a row in TF32) are one block of independent chains, and their stores
// follow under one branch. The same arithmetic: bitwise equal. Values v[4 jj + 2 e + q]: channel 8 jj + e (+ 2 tq, the
// caller's yrow), pixel q of the pair.
template <int NJ>
__device__ __forceinline__ void store_row_pairs(const float (&v)[4 * NJ], float* yrow, long long plane, bool pair_stores,
                                                bool second) {
    if (pair_stores) {
#pragma unroll
        for (int jj = 0; jj < NJ; ++jj)
#pragma unroll
            for (int e = 0; e < 2; ++e)
                __stcs(reinterpret_cast<float2*>(yrow + (8 * jj + e) * plane),
                       make_float2(v[4 * jj + 2 * e], v[4 * jj + 2 * e + 1]));
    } else {
#pragma unroll
        for (int jj = 0; jj < NJ; ++jj)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                __stcs(yrow + (8 * jj + e) * plane, v[4 * jj + 2 * e]);
                if (second) __stcs(yrow + (8 * jj + e) * plane + 1, v[4 * jj + 2 * e + 1]);
            }
    }
}
struct Geom {
    int N, H, W, Ho, Wo;
    int tiles_x, tiles_y, tiles;
    int tma;     // the kernel parameter xmap describes x (W % 4 == 0, x 16-byte aligned)
};
struct TileCoord { int n, oh, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x, t = tile / g.tiles_x;
    return { t / g.tiles_y, (t % g.tiles_y) * ROWS, tx * TW };
}
// Consumer k's tiles: blockIdx.x * 2 + k, then 2 gridDim.x apart (the block's tiles in turn, consumer j % 2 takes j).
#if   defined(CF_3XTF32)
// blocks 2 b and 2 b + 1 (Cout halves 0 and 1) take the same tiles, block pair b's as the default deals block b's
__device__ __forceinline__ int first_tile(int k) { return (blockIdx.x >> 1) * CONSUMERS + k; }
#else
__device__ __forceinline__ int first_tile(int k) { return blockIdx.x * CONSUMERS + k; }
#endif
#ifdef CF_3XTF32
#define TILE_STRIDE (CONSUMERS * (gridDim.x >> 1))
#else
#define TILE_STRIDE (CONSUMERS * gridDim.x)
#endif

// ORDER barrier k: consumer k may issue its tile's MMAs (the other consumer has issued its last ones).
__device__ __forceinline__ void order_wait(int k) { asm volatile("bar.sync %0, 256;\n" :: "r"(1 + k) : "memory"); }
__device__ __forceinline__ void order_pass(int k) { asm volatile("bar.arrive %0, 256;\n" :: "r"(2 - k) : "memory"); }

// Weights, once per block, TF32-rounded: f = ((s * 2 + half) * 64 + co) * 4 + e  <-  w[co][8 chunk + 4 half + e][tap],
// s = chunk * 9 + tap (04c's layout): per (chunk, tap) the B operand of a k8 step, core matrices 8 Cout x 4 channels.
// (CF_W_BATCH's index; the default loop below keeps its own text, which builds the recorded machine code)
__device__ __forceinline__ int weight_index(int f) {
    const int e = f & 3, co = (f >> 2) & 63, half = (f >> 8) & 1, s = f >> 9;
    const int chunk = s / TAPS, tap = s - chunk * TAPS;
    return (co * CIN + CHUNK * chunk + 4 * half + e) * TAPS + tap;
}
__device__ __forceinline__ void stage_weights(float* sw, const float* __restrict__ w) {
#if defined(CF_3XTF32)
    // f = (((s * 2 + part) * 2 + half) * 32 + co) * 4 + e  <-  the part (0: big, 1: small; both rounded, split_rounded)
    // of w[32 (block % 2) + co][8 chunk + 4 half + e][tap]
    const int c0 = NB * (blockIdx.x & 1);
    for (int f = threadIdx.x; f < WFLOATS; f += THREADS) {
#ifdef CF_3X_CONCAT
        const int e = f & 3, co = (f >> 2) & (NB - 1), part = (f >> 7) & 1, half = (f >> 8) & 1, s = f >> 9;
#else
        const int e = f & 3, co = (f >> 2) & (NB - 1), half = (f >> 7) & 1, part = (f >> 8) & 1, s = f >> 9;
#endif
        const int chunk = s / TAPS, tap = s - chunk * TAPS;
        float big, small;
        split_rounded(__ldg(w + ((c0 + co) * CIN + CHUNK * chunk + 4 * half + e) * TAPS + tap), big, small);
        sw[f] = part ? small : big;
    }
#else
    for (int f = threadIdx.x; f < WFLOATS; f += THREADS) {
        const int e = f & 3, co = (f >> 2) & 63, half = (f >> 8) & 1, s = f >> 9;
        const int chunk = s / TAPS, tap = s - chunk * TAPS;
        sw[f] = tf32_round(__ldg(w + (co * CIN + CHUNK * chunk + 4 * half + e) * TAPS + tap));
    }
#endif
}

// The copy for shapes TMA cannot take: the box's floats with 4-byte cp.async by one warp, zero-filled outside the image.
__device__ __forceinline__ void load_stage(float* dst, const float* __restrict__ x, const Geom& g, TileCoord tc, int c0,
                                           int lane) {
#pragma unroll 1
    for (int e = lane; e < STAGE_FLOATS; e += 32) {
        const int ch = e / CHP, rem = e - ch * CHP, row = rem / PITCH, col = rem - row * PITCH;
        const int gy = tc.oh + row, gx = tc.ox0 + col;
        const bool ok = gy < g.H && gx < g.W;
        const float* src = ok ? x + (((long long)tc.n * CIN + c0 + ch) * g.H + gy) * g.W + gx : x;
        cp_async4(dst + e, src, ok ? 4 : 0);
    }
}

// Register sets for the fragments: a row's wgmmas may still read set I % SETS while SETS - 1 later rows load theirs.
#ifndef CF_FRAG_SETS
#define CF_FRAG_SETS 2
#endif
constexpr int SETS = CF_FRAG_SETS;
// CF_PIXEL_PAIRS (registered 2026-12-03 with the 19:50 UTC record): a warp's M rows g and g + 8 are its pixels 2 g and
// 2 g + 1 (RsChunk's PAIRS). The nineteenth session's source page (explore-2026-12-02h/call3) has the consumers' MMA
// loop waiting on its fragment loads (short scoreboard, 15 % of all samples) and the epilogue's instructions on
// registers that earlier stores still have to read (long scoreboard, 11 %); here a row's fragments take 4 shared loads
// (8-byte) and 8 cvt instead of 12 and 12, and the epilogue 16 stores a row (8-byte, where Wo is even and y aligned)
// instead of 32. The same products in the same order.
constexpr bool PIXEL_PAIRS = true;
constexpr int GSTEP = PIXEL_PAIRS ? 2 : 1;                 // pixels between a thread's M row g and the next lane group's
using Chunk = RsChunk<ROWS, PITCH, CHP, SETS, WSTEP, PIXEL_PAIRS>;   // fragment loads and wgmmas of one chunk (wgmma.cuh)
#ifdef CF_3XTF32
#ifndef CF_3X_SETS
#define CF_3X_SETS 2
#endif
using Chunk3x = RsChunk3x<ROWS, PITCH, CHP, WSTEP, W_SMALL, CF_3X_SETS>;
#endif


#ifdef CF_3XTF32
// One box (tile, chunk) into a ring slot, by warp 0 of a consumer: lane 0's TMA, or the warp's 4-byte cp.async.
__device__ __forceinline__ void fill_slot(float* dst, uint64_t* full, const CUtensorMap& xmap, const float* __restrict__ x,
                                          const Geom& g, int tile, int chunk, int lane) {
    const TileCoord tc = tile_coord(g, tile);
    if (g.tma) {
        if (lane == 0) {
            mbar_arrive_expect_tx(full, STAGE_FLOATS * 4);
            tma_load_4d(dst, &xmap, tc.ox0, tc.oh, CHUNK * chunk, tc.n, full);
        }
    } else {
        load_stage(dst, x, g, tc, CHUNK * chunk, lane);
        cp_async_mbar_arrive(full);
    }
}
constexpr int MAINS = 1;
// chunks in pairs where the second takes the other main accumulator or starts on the other register set
constexpr int CHUNK_STEPS = Chunk3x::GROUPS;               // groups a chunk: tap columns (RsChunk3x::group)
constexpr int PAIRED = (MAINS == 2 || CHUNK_STEPS % 2 == 1) ? 2 : 1;
static_assert(NCHUNK % PAIRED == 0 && STAGES <= NCHUNK, "whole chunk pairs; a refill crosses one tile at most");
static_assert(AW == 16 || MAINS == 1, "CF_3X_CONCAT keeps one main accumulator");
// A consumer warpgroup of the 3xTF32 build. Without a producer warpgroup the block has 256 threads and no setmaxnreg, so
// ptxas may give each consumer thread up to 255 registers: call A's build (a producer warpgroup, consumers raised to 232)
// had its wgmmas serialized (ptxas C7512, "insufficient register resources"), 4.73 ms. Warp 0 copies this consumer's
// boxes: STAGES before the first tile, then box u + STAGES into box u's slot once every thread has read it (EMPTY).
__device__ __forceinline__ void consumer_3x(const CUtensorMap& xmap, const float* __restrict__ x,
                                            const float* __restrict__ bias, const float* __restrict__ mult,
                                            float* __restrict__ y, const Geom& g, const float* sw, float* rings,
                                            uint64_t* bars, int k) {
    const int stride = TILE_STRIDE;
    const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int gid = lane >> 2, tq = lane & 3;
    float* myring = rings + k * STAGES * STAGE_FLOATS;
    const float* ring = myring + tq * CHP + 16 * warp + GSTEP * gid;
    uint64_t* full = bars + k * STAGES;
    uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
    if (warp == 0) {
#pragma unroll 1
        for (int q = 0; q < STAGES; ++q) {
            const int t = first_tile(k) + (q / NCHUNK) * stride;
            if (t < g.tiles) fill_slot(myring + q * STAGE_FLOATS, full + q, xmap, x, g, t, q % NCHUNK, lane);
        }
    }
    const uint64_t d0 = wgmma_desc(smem_addr(sw), B_KHALF, 128);      // lbo: k-half 0 -> 1; sbo: 8 Cout
    const uint32_t whi = (uint32_t)(d0 >> 32);
    const int c0 = NB * (blockIdx.x & 1);
    const long long plane = (long long)g.Ho * g.Wo;
    const bool pair_stores = (g.Wo & 1) == 0 && (reinterpret_cast<uintptr_t>(y) & 7) == 0;
    int slot = 0;
    unsigned phase = 0;
    float acc[MAINS][ROWS][AW], cor[ROWS][16];
    uint32_t big[CF_3X_SETS][4], small[CF_3X_SETS][4];   // the tap groups' register sets
    float v[2][4];                             // the current input row's floats
    // after chunk `chunk` of `tile` has been read from `slot`: the box STAGES later into it
    auto refill = [&](int tile, int chunk) {
        if (warp != 0) return;
        int nt = tile, nc = chunk + STAGES;
        if (nc >= NCHUNK) { nc -= NCHUNK; nt += stride; }
        if (nt >= g.tiles) return;
        mbar_wait(empty + slot, phase);
        fill_slot(myring + slot * STAGE_FLOATS, full + slot, xmap, x, g, nt, nc, lane);
    };
#pragma unroll 1
    for (int tile = first_tile(k); tile < g.tiles; tile += stride) {
#pragma unroll
        for (int o = 0; o < ROWS; ++o)
#pragma unroll
            for (int i = 0; i < 16; ++i) {
                cor[o][i] = 0.0f;
#pragma unroll
                for (int m = 0; m < MAINS; ++m)
#pragma unroll
                    for (int a = i; a < AW; a += 16) acc[m][o][a] = 0.0f;
            }
        const uint32_t wlo0 = opaque((uint32_t)d0);
#pragma unroll 1
        for (int chunk = 0; chunk < NCHUNK; chunk += PAIRED) {
#pragma unroll
            for (int u = 0; u < PAIRED; ++u) {
                mbar_wait(full + slot, phase);
                const uint32_t wlo = __shfl_sync(~0u, wlo0 + (chunk + u) * (TAPS * WSTEP >> 4), 0);
                const float* fb = ring + slot * STAGE_FLOATS;
                const int m = MAINS == 2 ? u : 0;
                if ((u * Chunk3x::GROUPS) % CF_3X_SETS == 0)
                    Chunk3x::group<0, 0, MAINS, 0, AW>(acc, m, cor, big, small, v, fb, wlo, whi, empty + slot);
                else
                    Chunk3x::group<0, 0, MAINS, 1, AW>(acc, m, cor, big, small, v, fb, wlo, whi, empty + slot);
                refill(tile, chunk + u);
                if (++slot == STAGES) { slot = 0; phase ^= 1u; }
            }
        }
        wgmma_wait<0>();
#pragma unroll
        for (int o = 0; o < ROWS; ++o) {
#pragma unroll
            for (int m = 0; m < MAINS; ++m) fence_operand(acc[m][o]);
            fence_operand(cor[o]);
        }
        float b_r[8], m_r[8];                // this thread's 8 channels c0 + 8 j + 2 tq + e, read only now (L1)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                b_r[2 * j + e] = __ldg(bias + c0 + 8 * j + 2 * tq + e);
                m_r[2 * j + e] = __ldg(mult + c0 + 8 * j + 2 * tq + e);
            }
        const TileCoord tc = tile_coord(g, tile);
        const int px = tc.ox0 + 16 * warp + GSTEP * gid;
        float* yt = y + ((long long)tc.n * COUT + c0 + 2 * tq) * plane + (long long)tc.oh * g.Wo + px;
        auto sum = [&](int o, int i) {
            float v = acc[0][o][i];
#pragma unroll
            for (int m = 1; m < MAINS; ++m) v += acc[m][o][i];
            if constexpr (AW == 32) return v + (acc[0][o][16 + i] + cor[o][i]);   // columns 16 + i: a_big w_small
            else return v + cor[o][i];
        };
#pragma unroll
        for (int o = 0; o < ROWS; ++o) {
            if (tc.oh + o >= g.Ho || px >= g.Wo) break;
            // CF_EPI_ILP: a row's 16 values first, then their stores (store_row_pairs says why)
            float v[16];
#pragma unroll
            for (int jj = 0; jj < 4; ++jj)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    v[4 * jj + 2 * e] = epilogue_conv2d(sum(o, 4 * jj + e) + b_r[2 * jj + e], m_r[2 * jj + e]);
                    v[4 * jj + 2 * e + 1] = epilogue_conv2d(sum(o, 4 * jj + 2 + e) + b_r[2 * jj + e], m_r[2 * jj + e]);
                }
            store_row_pairs<4>(v, yt + o * g.Wo, plane, pair_stores, px + 1 < g.Wo);
            continue;
#pragma unroll
            for (int jj = 0; jj < 4; ++jj)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const float v0 = epilogue_conv2d(sum(o, 4 * jj + e) + b_r[2 * jj + e], m_r[2 * jj + e]);
                    const float v1 = epilogue_conv2d(sum(o, 4 * jj + 2 + e) + b_r[2 * jj + e], m_r[2 * jj + e]);
                    float* const at = yt + (8 * jj + e) * plane + o * g.Wo;
                    if (pair_stores) {
                        __stcs(reinterpret_cast<float2*>(at), make_float2(v0, v1));
                    } else {
                        __stcs(at, v0);
                        if (px + 1 < g.Wo) __stcs(at + 1, v1);
                    }
                }
        }
    }
    if (warp == 0) cp_async_wait<0>();          // the fallback's copies have landed before the warp exits
}
#endif

__global__ void __launch_bounds__(THREADS, 1)
conv2d_rs_kernel(const __grid_constant__ CUtensorMap xmap, const float* __restrict__ x, const float* __restrict__ w,
                 const float* __restrict__ bias, const float* __restrict__ mult, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* sw = smem;
    float* rings = sw + WFLOATS;
    uint64_t* bars = reinterpret_cast<uint64_t*>(rings + RING_FLOATS + EPI_FLOATS);
    if (threadIdx.x == 0) {
        for (int i = 0; i < CONSUMERS * STAGES; ++i) {
            mbar_init(bars + i, g.tma ? 1 : 32);                       // FULL: the TMA's expect_tx, or a warp's cp.async
            mbar_init(bars + CONSUMERS * STAGES + i, 128);             // EMPTY: every thread of the consumer
        }
        mbar_init_fence();
    }
    stage_weights(sw, w);
    fence_proxy_async();                         // the weights, written by ordinary stores, are read by wgmma
    __syncthreads();
    const int wg = threadIdx.x >> 7;
#ifdef CF_3XTF32
    consumer_3x(xmap, x, bias, mult, y, g, sw, rings, bars, wg);
#else
    if (wg == 0) {
        // ---- producer: warp k fills consumer k's ring, one TMA per chunk ----
        setmaxnreg_dec<PRODUCER_REGS>();
        const int stride = TILE_STRIDE;             // in each branch: read before setmaxnreg, it was kept on the stack
        const int k = threadIdx.x >> 5, lane = threadIdx.x & 31;
        if (k >= CONSUMERS || (g.tma && lane != 0)) return;     // one thread per ring issues its TMAs
        float* ring = rings + k * STAGES * STAGE_FLOATS;
        uint64_t* full = bars + k * STAGES;
        uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
        int slot = 0;
        unsigned phase = 0;
#pragma unroll 1
        for (int tile = first_tile(k); tile < g.tiles; tile += stride) {
            const TileCoord tc = tile_coord(g, tile);
#pragma unroll 1
            for (int chunk = 0; chunk < NCHUNK; ++chunk) {
                mbar_wait(empty + slot, phase ^ 1u);      // a fresh barrier's previous phase counts as complete
                float* dst = ring + slot * STAGE_FLOATS;
                if (g.tma) {
                    if (lane == 0) {
                        mbar_arrive_expect_tx(full + slot, STAGE_FLOATS * 4);
                        tma_load_4d(dst, &xmap, tc.ox0, tc.oh, CHUNK * chunk, tc.n, full + slot);
                    }
                } else {
                    load_stage(dst, x, g, tc, CHUNK * chunk, lane);
                    cp_async_mbar_arrive(full + slot);
                }
                if (++slot == STAGES) { slot = 0; phase ^= 1u; }
            }
        }
        cp_async_wait<0>();                          // the fallback's copies have landed before the thread exits
    } else {
        // ---- consumer: fragments from the ring, MMAs, epilogue from the accumulators ----
        setmaxnreg_inc<CONSUMER_REGS>();
        const int stride = TILE_STRIDE;
        const int k = wg - 1, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
        const int gid = lane >> 2, tq = lane & 3;
        const float* ring = rings + k * STAGES * STAGE_FLOATS + tq * CHP + 16 * warp + GSTEP * gid;
        uint64_t* full = bars + k * STAGES;
        uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
#define BOX_WAIT() mbar_wait(full + slot, phase)
#define BOX_NEXT() if (++slot == STAGES) { slot = 0; phase ^= 1u; }
        const uint64_t d0 = wgmma_desc(smem_addr(sw), B_KHALF, 128);   // lbo: k-half 0 -> 1; sbo: 8 Cout
        const uint32_t whi = (uint32_t)(d0 >> 32);
        // this thread's 16 channels 8 j + 2 tq + e: bias and multiplier
        float b_r[16], m_r[16];
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                b_r[2 * j + e] = __ldg(bias + 8 * j + 2 * tq + e);
                m_r[2 * j + e] = __ldg(mult + 8 * j + 2 * tq + e);
            }
        auto pidx = [](int jj, int e) { return 2 * jj + e; };
        const long long plane = (long long)g.Ho * g.Wo;
        int slot = 0;
        unsigned phase = 0;
        float acc[ROWS][32];
        uint32_t frag[SETS][3][4];
#pragma unroll 1
        for (int tile = first_tile(k), j = k; tile < g.tiles; tile += stride, j += CONSUMERS) {
#pragma unroll
            for (int o = 0; o < ROWS; ++o)
#pragma unroll
                for (int i = 0; i < 32; ++i) acc[o][i] = 0.0f;
            const uint32_t wlo0 = opaque((uint32_t)d0);
#pragma unroll 1
            for (int chunk = 0; chunk < NCHUNK; ++chunk) {
                BOX_WAIT();
                // the chunk's weights, broadcast from lane 0 so that the compiler knows the descriptors are warp-uniform
                // and keeps them in uniform registers (without it, some builds moved each one with two R2UR per wgmma)
                const uint32_t wlo = __shfl_sync(~0u, wlo0 + chunk * (TAPS * WSTEP >> 4), 0);
                Chunk::mma_rows<0>(acc, frag, ring + slot * STAGE_FLOATS, wlo, whi, empty + slot, chunk == 0);
                BOX_NEXT();
            }
            // this tile's MMAs are issued: the block's next tile (the other consumer's) may issue its own
            wgmma_wait<0>();
#pragma unroll
            for (int o = 0; o < ROWS; ++o) fence_operand(acc[o]);
            const TileCoord tc = tile_coord(g, tile);
            const int px = tc.ox0 + 16 * warp + GSTEP * gid;
            float* yt = y + ((long long)tc.n * COUT + 2 * tq) * plane + (long long)tc.oh * g.Wo + px;
            // pixels px, px + 1 of each channel row: one 8-byte store where Wo is even and y 8-byte aligned (then px + 1
            // < Wo wherever px is, and every row and channel plane starts at an even float), else two 4-byte ones (an
            // output 4 bytes into its buffer: the first build stored 8 bytes there, a misaligned address, call Q)
            const bool pair_stores = (g.Wo & 1) == 0 && (reinterpret_cast<uintptr_t>(y) & 7) == 0;
#pragma unroll
            for (int o = 0; o < ROWS; ++o) {
                if (tc.oh + o >= g.Ho || px >= g.Wo) break;
                // CF_EPI_ILP: half a row's values (16) first, then their stores (store_row_pairs says why;
                // a whole row's 32 spilled 20 bytes)
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    float v[16];
#pragma unroll
                    for (int j = 0; j < 4; ++j)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const int jj = 4 * half + j;
                            v[4 * j + 2 * e] = epilogue_conv2d(acc[o][4 * jj + e] + b_r[pidx(jj, e)], m_r[pidx(jj, e)]);
                            v[4 * j + 2 * e + 1] = epilogue_conv2d(acc[o][4 * jj + 2 + e] + b_r[pidx(jj, e)], m_r[pidx(jj, e)]);
                        }
                    store_row_pairs<4>(v, yt + 32 * half * plane + o * g.Wo, plane, pair_stores, px + 1 < g.Wo);
                }
            }
        }
    }
#endif  // CF_3XTF32
#endif
#undef BOX_WAIT
#undef BOX_NEXT
}

}  // namespace cf04d

const char* launch(const ConvArgs& a, cudaStream_t stream) {
    using namespace cf04d;
    constexpr const char* NAME = "04d_register_a_wgmma (conv2d)";
    static_assert(CIN == 64 && COUT == 64 && KS == 3, "the shapes cf_conv2d_shape checks");
    if (const char* err = cf_conv2d_shape(a, NAME)) return err;
    int dev = 0, sms = 0, grid = 0;
    if (const char* err = cf_sm90a_device(NAME, dev, sms)) return err;
    Geom g;
    g.N = a.N; g.H = a.H; g.W = a.W; g.Ho = a.Ho; g.Wo = a.Wo;
    g.tiles_x = cf_ceil_div(a.Wo, TW);
    g.tiles_y = cf_ceil_div(a.Ho, ROWS);
    const long long tiles = (long long)a.N * g.tiles_y * g.tiles_x;
    if (tiles > 0x7fffffffLL - 2LL * sms * CONSUMERS)
        return "04d_register_a_wgmma (conv2d): too many tiles for a 32-bit tile index";
    g.tiles = (int)tiles;
    CUtensorMap xmap{};
    g.tma = cf_encode_tma_4d(&xmap, a.x, {(uint64_t)a.W, (uint64_t)a.H, (uint64_t)CIN, (uint64_t)a.N},
                             {(uint32_t)PITCH, (uint32_t)XH, (uint32_t)CHUNK, 1u}) ? 1 : 0;
#ifdef CF_3XTF32
    // a block per Cout half and tile set: an even grid, blocks 2 b and 2 b + 1 on the same tiles
    if (const char* err = cf_persistent_grid(conv2d_rs_kernel, THREADS, SMEM_BYTES,
                                             2 * ((tiles + CONSUMERS - 1) / CONSUMERS), sms, NAME, grid))
        return err;
    grid &= ~1;
    if (grid < 2) return "04d_register_a_wgmma (conv2d): 3xTF32 needs two blocks at once, one per Cout half";
#else
    if (const char* err = cf_persistent_grid(conv2d_rs_kernel, THREADS, SMEM_BYTES,
                                             (tiles + CONSUMERS - 1) / CONSUMERS, sms, NAME, grid))
        return err;
#endif
    conv2d_rs_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(xmap, a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}
