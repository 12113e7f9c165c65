// 04c_warp_specialized_wgmma — conv2d step 04c: the 04b wgmma conv+epilogue with a producer warpgroup, and
// FP32 accuracy from three FP16 products (sm_90a only: H100/H200).
//
// What changed from 04b and why. 04b's warpgroups each load, transpose, multiply and run the epilogue in
//   one serial chain; ncu (H200, 2026-12-01) found it latency-bound: 42 % of issue slots busy, 0.6 eligible
//   warps per scheduler, the loads its longest link (0.43 of 1.67 ms by ablation). Here one warpgroup only
//   loads and stages; two consumer warpgroups only issue wgmmas and run the epilogue. setmaxnreg moves
//   registers to the consumers (56 producer / 224 consumer), which is what makes room for CF_3XF16's two
//   accumulator sets. Per consumer, its 64 producer threads copy a chunk (8 channels x 4 rows x 88 pixels)
//   with cp.async (8 bytes: a pixel pair) into a raw buffer (no registers held while in flight, out-of-image pixels
//   zero-filled), then convert it into a 2-stage ring in the MMAs' layout (a pixel's 8 channels per thread:
//   conflict-free shared loads, two 16-byte stores); the next chunk's copies start as soon as the raw buffer
//   is read. Named barriers hand the ring's stages over: FULL (producer arrives, consumer waits) and EMPTY
//   (consumer arrives once its wgmma.wait_group shows the stage's MMAs done, producer waits).
//
// CF_3XF16: FP32 accuracy in 1.5 TF32 passes of tensor time. 04b could not do FP32 accuracy for conv2d:
//   split-TF32 (3 passes) has a tensor floor of 2.2 ms, 96 % of torch.compile, and TF32 + BF16 (2 passes)
//   needs 295 KB of weights. FP16 has TF32's 11 significant bits at twice the MMA rate, and FP16 hi + lo
//   weights take 147,456 B, what 04b's TF32 weights take: x w = x_hi w_hi + (x_lo w_hi + x_hi w_lo), the
//   dropped x_lo w_lo is 2^-22 relative, as in 3xtf32. Per 8-channel chunk and tap pair, one k16 wgmma
//   multiplies [w_hi(t) | w_hi(t+1)] by [x_hi(t) | x_hi(t+1)] (the second core matrix of an operand is
//   `lbo` bytes after the first, and lbo may be any multiple of 16: here the distance between two taps'
//   shifted windows); tap 8 pairs with a 1 KB zero block. Per tap one k16 wgmma multiplies [w_lo | w_hi]
//   by [x_hi | x_lo]: both corrections. 14 wgmmas per chunk where TF32 needs 9 (1.56x the tensor time).
//   Accuracy: the tensor core adds each wgmma into its FP32 accumulator rounding toward zero (kernel log,
//   2026-11-29), so one accumulator taking all 112 would drift ~2.5e-6 (bound 2e-6). The main products
//   (40 wgmmas) and the corrections (72, values ~2^-11 of the sum, so their truncations are that much
//   smaller) get separate accumulators, added once in FP32 before the epilogue: 2 x 88 registers per thread.
// Range: FP16 has 5 exponent bits. The weights are scaled by a power of two per call so that the largest
//   finite |w| lands just under 2^14 (exact; undone after the sum). The input is not scaled: |x| >= 65520
//   rounds x_hi to Inf, as do Inf and NaN inputs, and every output that reads such an x is then non-finite;
//   a consumer thread with a non-finite output recomputes its outputs of the tile with FP32 FMAs from global
//   memory (slow, and exact to FP32 and to eager's Inf/NaN propagation; only such inputs take it).
//
// Shared memory (TH 2, 2 consumers, 2 stages): zero block 1,024 B | weights 147,456 B | 2 raw buffers of
//   11,776 B (CF_TMA's 92-pixel rows; 11,264 B with cp.async) | 2 x 2 stages x 11,328 B | 16 B | 2 mbarriers =
//   217,376 B; one block per SM, of 384 threads (3xFP16) or 512 (TF32: two producers).
//   weights, TF32 build: as 04b, [k-step][k-half][co][4 channels]. CF_3XF16: per chunk [w_lo(tap 0..8)]
//     [w_hi(tap 0..8)], each 1 KB = [co][8 channels FP16]: w_lo(t) + 9 KB = w_hi(t), w_hi(t) + 1 KB = w_hi(t+1).
//   stage: [part][row 0..TH+1][pixel 0..87][16 B] (+ 64 B read only by discarded columns); TF32: parts are
//     channels 0-3 and 4-7; CF_3XF16: x_hi and x_lo of the 8 channels.
// Everything else (tile shape 64 Cout x TH rows x 88 columns, epilogue from the accumulators, stores) is 04b's.
//
// Measured on the H200 (2026-12-01, scripts/check_variant.py and the record; results/device-logs/
//   explore-2026-12-01b/): correct on the first run (3xfp16 rel-L2 9.0e-7, max-abs 1.1e-5 against float64
//   on randn inputs; tf32 as 04b). First version, loads into registers (8 per pixel, 2 pixels in flight per
//   producer thread): 3xfp16 3.22 ms, tf32 2.87; 3 pixels in flight: tf32 2.37 — the producer's loads were
//   the limit. With cp.async into the raw buffer: 3xfp16 2.06-2.08 ms (torch.compile 2.30), tf32 1.76-1.78
//   (04b 1.67). A half-chunk pipeline (one half's copies in flight while the other half is staged, 4
//   producer barriers per chunk instead of 2) was slower: 2.30 and 1.97 ms (notes/patches/
//   conv2d_04c_half_chunk_producer.patch). ncu: 38 % of issue slots busy, 0.53 eligible warps per scheduler.
//   ncu source-level samples: 29.6 % of all warp samples are consumers waiting at FULL, i.e. for the
//   producer. 8-byte copies of pixel pairs (then the candidate CF_LD8, half the copy instructions): 3xfp16
//   2.01 ms against 2.10, tf32 1.64 against 1.80 in one process (torch.compile 2.32); consumers at FULL
//   26.3 %. Now the default: 3xfp16 2.00 ms, tf32 1.62 (04b 1.67, torch.compile 2.31) in one process, 2026-12-01
//   06:15 UTC (results/device-logs/explore-2026-12-01c/).
// Two producer warpgroups (CF_PRODUCERS, the TF32 build's default since 2026-12-01's third record): the samples
//   say the consumers wait for one producer, so 256 producer threads (128 per consumer) at 48 registers, the
//   consumers at 208, 512 threads per block. Predicted 1.35-1.45 ms (the FULL waits mostly gone); measured
//   1.499 against 1.611 with one producer (04b 1.676, torch.compile 2.297), one process, 06:46 UTC
//   (results/device-logs/explore-2026-12-01c/explore_producers.log): 7 % faster, less than predicted.
//   The 3xFP16 build keeps one: its producer spills below 56 registers (ptxas: 112 B at 32, 180 B at 40), and
//   its consumers need 224 for both accumulator sets.
//
// CF_1XF16 (precision "fp16", the variant 04c_ws_fp16): x and w in FP16 alone, TF32's 11 significant bits at twice
//   its MMA rate, so a TF32-class kernel rather than a TF32 one. 3xFP16's main products without the corrections: 5
//   wgmmas per chunk where TF32 takes 9; the producer converts 8 channels to one 16-byte row per pixel (4 cvt)
//   where TF32 rounds 8 values (4 instructions each) into two rows. Weights w_hi only, [chunk][tap][co][8 channels]
//   (73,728 B), so two raw buffers per consumer (CF_RAWS: chunks i+1 and i+2 in flight while i is staged) and three
//   ring stages of half the size fit: 1,024 + 73,728 + 4 x 11,776 + 2 x 3 x 5,696 + 16 + 32 (mbarriers) = 156,080 B,
//   plus 2,752 B of padding for compute-sanitizer (SANITIZER_PAD). Range as 3xFP16: weights scaled per call; a non-finite sum
//   of a consumer thread's accumulators (acc_nonfinite, wgmma.cuh) sends its outputs of the tile to the FP32 path.
//   Two producer warpgroups, as TF32.
//   Measured on the H200, 2026-12-01 from 10:21 UTC (results/device-logs/explore-2026-12-01d/, one process per
//   call): one raw buffer and two stages 1.431 and 1.411 ms against TF32 1.519 and 1.497; three stages 1.425 and
//   1.411 (no change then); with one producer 1.493. Then two raw buffers: 1.375 (one: 1.472, three: 1.388 in the
//   same process; that call's producer loop, since restructured, also made TF32 slower: 1.606), and with three
//   stages 1.339: the default. With the producer's next-tile coordinates computed once per tile (not per chunk):
//   1.196 ms in the record of 10:39 UTC, where compute-sanitizer flagged the last stage (SANITIZER_PAD). Copies
//   without the select per channel in load_raw: 1.262 against 1.219 (fp16), 1.492 against 1.515 (TF32) in one
//   process; not kept. CF_RNA_ADD (TF32 rounding by adding half an ulp to the bits, tf32_round_mma): TF32
//   1.526 against 1.519, no change.
//
// CF_TMA (the default since 2026-12-01 ~12:25 UTC; CF_NO_TMA restores the cp.async copies): one thread per
//   consumer copies a whole chunk with one TMA (cp.async.bulk.tensor.4d: 8 channels x XH rows x 92 pixels, out-of-
//   image pixels zero-filled by the TMA unit) where 128 producer threads issued 16 8-byte cp.async each; the raw
//   buffer completes on an mbarrier, and the producers keep only the conversion. A box must start 16-byte aligned in
//   global memory: on the H200 an inner coordinate of 1, 2 or 86 floats was an illegal instruction (a standalone
//   test, 2026-12-01), and tiles start at multiples of 86 columns, so the box starts at the multiple of 4 at or
//   below the tile and is 4 pixels wider (RAW_PITCH 92; the producer reads with a shift of 0 or 2). Shapes TMA
//   cannot take (W % 4 != 0, x not 16-byte aligned) copy with cp.async onto the same mbarriers; the odd shape
//   (1, 64, 21, 92) runs the TMA path with boxes past the image's right and bottom edges.
//   Predicted 1.02-1.10 ms for fp16 (the producer's copy instructions gone); measured in one process (H200,
//   results/device-logs/explore-2026-12-01e/): fp16 1.169 against 1.233, TF32 1.514 against 1.558 (with 56
//   producer registers: 48 spills 8 B), 3xFP16 2.035 against 2.125; eager 5.047, torch.compile 2.341. 3-5 %, less
//   than predicted: the conversion, not the copy issue, is most of the producer's time. A third raw buffer: 1.170.
// Ablation knobs (wrong outputs on purpose; scripts/check_variant.py times them), as in 04b: CF_ABL_NOSTAGE: the
//   producer waits for each raw buffer and hands the stage over without converting it; CF_ABL_NOMMA: the consumers
//   take and release each stage without MMAs (zero accumulators); CF_ABL_RAWEPI: acc + bias stored without the
//   epilogue; CF_ABL_NOSTORE (wgmma.cuh): the epilogue computed, nothing stored. TMA path only.
// Measured on the H200, 2026-12-01 from 13:15 UTC (results/device-logs/explore-2026-12-01f/, one process per call):
//   ncu per-instruction samples of the TF32 build at full clock: 49 % of warp samples are producers, 21 % of all
//   waiting at their raw buffer's mbarrier (the TMA's data: one raw buffer per consumer, so the next chunk's copy
//   starts only once this one is staged); 22.5 % are consumers waiting at FULL. The epilogue's __ldg of bias and
//   multiplier, suspected before, hold under 1 %: staging them in shared memory gave 1.507 against 1.515 ms (TF32),
//   1.184 against 1.166 (fp16), 2.027 against 2.043 (3xFP16), not kept.
//   CF_RAW_CH=4 (candidate): half-chunk raw buffers, three per consumer in the same shared memory, so one chunk's
//   copies are in flight while half a chunk is staged. Predicted 1.38-1.43 ms for TF32 (the mbarrier waits hidden);
//   measured 1.564 against 1.485 (3xFP16 2.130 against 1.977; fp16 with four 1.336 against 1.135), and 1.579 against
//   1.491 in a second call. The mbarrier waits left the samples, and the producer's own synchronisation (a second
//   producer barrier and mbarrier wait per chunk; 8-byte stores in the FP16 builds) cost more than they had.
//   CF_SHARED_RING (3xFP16's default since 2026-12-01 ~14:00 UTC; CF_RING_PER_CONSUMER restores a ring per consumer):
//   all producer threads fill one ring, in the order of the block's tiles, and the consumers take tiles in turn and
//   run their chunk loops in turn (ORDER barriers; CUTLASS's "ping-pong" schedule), so one consumer's epilogue runs
//   while the other issues MMAs; half the buffers per SM, so two raw buffers and four stages fit. Predicted: TF32
//   1.49 -> 1.05-1.25 ms (the TMA waits hidden, epilogues beside MMAs), fp16 1.15 -> 1.0-1.1, 3xFP16 2.0 -> 1.7-1.9.
//   Measured, two calls: 3xFP16 1.736 against 2.065 and 1.739 against 2.084 (rel-L2 8.9e-7 on every shape): right;
//   TF32 1.526 against 1.520 and 1.535 against 1.545, fp16 1.300 against 1.179: wrong. 3xFP16's consumers were the
//   longer side (14 wgmmas per chunk where TF32 has 9) and now overlap; ncu of the shared TF32
//   build still finds its producers waiting on the TMA's data (8.5 % of samples, with two raw buffers; three did
//   not help: 1.532) and its consumers at FULL and ORDER (23 %). Nor did more copies in flight (a third call): TF32
//   with 2 stages and 5 raw buffers 1.523, 3 and 4 1.516, against 1.522; fp16 with 6 and 6 1.270 against 1.166;
//   3xFP16 with 3 and 4 1.719, 2 and 5 1.769, against 1.712. What bounds the TF32 build is open (kernel log).
// H200, 2026-12-02 from 00:10 UTC (results/device-logs/explore-2026-12-02a/, two calls, three interleaved runs):
//   CF_TF32_RN (wgmma.cuh; the TF32 build's default since the record after it): the producer's staged operands rounded
//   by one F2FP.TF32 (cvt.rn) instead of cvt.rna's three or four instructions: 1.418, 1.413, 1.416 against 1.431,
//   1.432, 1.429 ms; 7.7 % fewer warp instructions (474.1 M -> 437.6 M). CF_DESC_BASE (candidate) cut the consumers'
//   instructions instead, and was slower (its comment in mma_chunk says why).
// H200, 2026-12-02 from 12:46 UTC (results/device-logs/explore-2026-12-02g/, four calls, two processes each):
//   CF_BULK_STORE (TF32's and FP16's default since the 13:26 UTC record): the output through shared memory and the
//   bulk-copy engine (store_tile_bulk), conv3d 04b's scheme. The plain stores wrote each quad's 32 bytes across two
//   sectors (tiles start at 86-column steps of 254-float rows): L2 write requests 55.8 M -> 31.2 M (ncu), the DRAM bytes
//   the same. TF32 has room for the buffers only with the shared ring (CF_SHARED_RING, 3 stages), which alone was
//   faster now (1.455 -> 1.392 ms; level on 2026-12-01 with 4 stages, before CF_TF32_RN): with both 1.319 and 1.304
//   against 1.455 and 1.455; FP16 1.069 and 1.064 against 1.138 and 1.126. Bitwise equal at output offsets of 0, 4 and
//   8 bytes. Not kept (bitwise equal, slower or level): one set of output buffers for both consumers (CF_OUT_SHARED)
//   with deeper rings (3 stages and 3 raw buffers, or 4 stages: 1.34 against 1.33), half-pixel staging items
//   (CF_STAGE_HALF: 1.31 against 1.29), the refill issued by the last producer warp out of a raw buffer
//   (CF_RAW_COUNT: 1.37). The shared-ring build's source page: the consumer issuing MMAs waits at FULL 44 % of its
//   time and almost never for its MMAs; the producers' chunk is a chain of short waits and steps (kernel log).

namespace cf04c {


constexpr int CIN = 64, COUT = 64, KS = 3, TAPS = KS * KS;
constexpr int CHUNK = 8, NCHUNK = CIN / CHUNK;
constexpr int XW = 88;                   // staged pixels per input row = MMA columns per output row
constexpr int TW = XW - (KS - 1);        // output columns per tile (86)
#ifndef CF_TH
#define CF_TH 2
#endif
constexpr int TH = CF_TH;                // output rows per tile: one wgmma with N = XW * TH
constexpr int XH = TH + KS - 1;          // staged input rows
constexpr int NJ = XW / 8;               // n8 column groups per output row (11)
constexpr int NACC = XW * TH / 2;        // accumulators per thread per set
#ifndef CF_CONSUMERS
#define CF_CONSUMERS 2
#endif
#ifndef CF_PRODUCERS
#ifdef CF_3XF16
#define CF_PRODUCERS 1                   // producer warpgroups; two would leave 3xFP16's consumers too few registers
#else
#define CF_PRODUCERS 2                   // TF32: 1.50 ms against 1.61 with one (H200, 2026-12-01)
#endif
#endif
#define CF_TMA                           // one TMA per chunk: fp16 1.169 ms against 1.233 with cp.async (H200, 2026-12-01)
#if defined(CF_1XF16) && !defined(CF_NO_PIX_OFFSETS) && !defined(CF_TMA)
#define CF_PIX_OFFSETS                   // 1.214 ms against 1.247 (H200, 2026-12-01 11:12 UTC, one process)
#endif
#if defined(CF_3XF16) && defined(CF_TMA) && !defined(CF_RING_PER_CONSUMER) && !defined(CF_SHARED_RING)
#define CF_SHARED_RING                   // 3xFP16: 1.736 ms against 2.065 per consumer (H200, 2026-12-01, one process)
#endif
#ifdef CF_SHARED_RING
// CF_SHARED_RING (3xFP16's default; CF_RING_PER_CONSUMER restores a ring per consumer): one ring and one set of raw buffers for both consumers, filled by all producer threads
// in the order of the block's tiles; the consumers take tiles in turn and run their chunk loops in turn (ORDER
// barriers), so one consumer's epilogue overlaps the other's MMAs. Half the buffers per SM: deeper ones fit.
constexpr int PIPES = 1;
#if !defined(CF_STAGES) && defined(CF_1XF16)
#define CF_STAGES 6
#elif !defined(CF_STAGES) && defined(CF_BULK_STORE)
#define CF_STAGES 3                      // TF32 with the output buffers (a fourth stage does not fit beside them)
#elif !defined(CF_STAGES)
#define CF_STAGES 4
#endif
#if !defined(CF_RAWS) && defined(CF_1XF16)
#define CF_RAWS 3
#elif !defined(CF_RAWS)
#define CF_RAWS 2
#endif
#ifndef CF_TMA
#error "CF_SHARED_RING needs the TMA producer loop"
#endif
#else
constexpr int PIPES = CF_CONSUMERS;      // a ring and raw buffers per consumer
#endif
#ifndef CF_STAGES
#ifdef CF_1XF16
#define CF_STAGES 3                      // FP16 stages are half the size: 1.34 ms against 1.38 with 2 (H200, 2026-12-01)
#else
#define CF_STAGES 2                      // with a raw buffer per consumer, 3 would need 239 KB
#endif
#endif
constexpr int CONSUMERS = CF_CONSUMERS, STAGES = CF_STAGES, PRODUCERS = CF_PRODUCERS;
constexpr int THREADS = 128 * (PRODUCERS + CONSUMERS);
constexpr int PTHREADS = 128 * PRODUCERS / PIPES;   // producer threads per ring
constexpr int BAR_COUNT = PTHREADS + 128;           // threads meeting at one FULL or EMPTY barrier
constexpr int KERNEL_REGS = (65536 / THREADS) & ~7; // what __launch_bounds__(THREADS, 1) allows
#ifndef CF_PRODUCER_REGS
#if CF_PRODUCERS == 1
#define CF_PRODUCER_REGS 56              // 3xf16: 64 leaves the consumers 216 registers, and they spill
#elif defined(CF_TMA) && !defined(CF_1XF16)
#define CF_PRODUCER_REGS 56              // TF32: TMA's producer loop spills 8 B at 48 (ptxas); the consumers get 200
#else
#define CF_PRODUCER_REGS 48              // 40 spills 8 B (ptxas); the TF32 consumers get 208
#endif
#endif
constexpr int PRODUCER_REGS = CF_PRODUCER_REGS;
constexpr int CONSUMER_REGS = ((THREADS * KERNEL_REGS - 128 * PRODUCERS * PRODUCER_REGS) / (128 * CONSUMERS)) & ~7;
static_assert(KERNEL_REGS <= 256 && CONSUMER_REGS <= 256 && PRODUCER_REGS >= 24, "setmaxnreg range");
static_assert(128 * PRODUCERS * PRODUCER_REGS + 128 * CONSUMERS * CONSUMER_REGS <= THREADS * KERNEL_REGS, "register pool");
constexpr int OUT_BARS = 0;
static_assert(2 * PIPES * STAGES + PIPES + (PIPES == 1 ? CONSUMERS : 0) + OUT_BARS <= 15, "named barriers 1..15");
static_assert(PTHREADS % 32 == 0, "whole producer warps per consumer");

constexpr int XPIX = XH * XW;                       // staged pixels per stage (352 at TH 2)
constexpr int XPART = XPIX * 4;                     // floats per part (16 B per pixel)
#ifdef CF_1XF16
constexpr int XBUF = XPART + 16;                    // one stage: x in FP16, a pixel's 8 channels per 16 B
#else
constexpr int XBUF = 2 * XPART + 16;                // one stage (+ 64 B for the discarded columns)
#endif
constexpr int KSTEPS = NCHUNK * TAPS;
#ifdef CF_1XF16
constexpr int WFLOATS = KSTEPS * COUT * 4;          // 18,432 floats = 73,728 B: FP16 w_hi only
#else
constexpr int WFLOATS = KSTEPS * 2 * COUT * 4;      // 36,864 floats = 147,456 B, TF32 or FP16 hi + lo
#endif
constexpr int ZFLOATS = COUT * 4;                   // the zero block: 64 rows x 16 B
#ifdef CF_TMA
// A TMA box must start 16 bytes aligned in global memory (H200: an inner coordinate of 1, 2 or 86 floats is an
// illegal instruction), and tile columns start at multiples of 86: the box starts at the multiple of 4 at or
// below the tile (shift 0 or 2) and is 92 pixels wide, so every raw row holds 4 pixels more than it stages.
constexpr int RAW_PITCH = XW + 4;
#else
constexpr int RAW_PITCH = XW;
#endif
constexpr int RAW_PIX = XH * RAW_PITCH;             // a channel's pixels in the raw buffer
#ifndef CF_RAW_CH
#define CF_RAW_CH 8                      // CF_RAW_CH=4 (TMA only): half-chunk buffers, slower (H200, 2026-12-01)
#endif
constexpr int RAW_CH = CF_RAW_CH;                   // channels per raw buffer (one TMA box)
constexpr int UNITS = CHUNK / RAW_CH;               // raw buffers per chunk
constexpr int RAWF = RAW_CH * RAW_PIX;              // one raw buffer as loaded: [channel][row][RAW_PITCH pixels] FP32
// Staged pixel p (row p / XW, column p % XW) in a channel of the raw buffer.
__device__ __forceinline__ int raw_index(int p) { return p + (RAW_PITCH - XW) * (p / XW); }
#ifndef CF_RAWS
#ifdef CF_1XF16
#define CF_RAWS 2                        // raw buffers per consumer: chunk i+2's copies in flight while i is staged
#elif CF_RAW_CH == 4
#define CF_RAWS 3                        // half-chunk buffers: one chunk in flight while half a chunk is staged
#else
#define CF_RAWS 1                        // TF32 and 3xFP16 whole-chunk buffers: a second would need 250 KB
#endif
#endif
constexpr int RAWS = CF_RAWS;
static_assert(CHUNK % RAW_CH == 0 && RAW_CH % 4 == 0, "raw buffers of whole 4-channel groups");
#ifndef CF_TMA
static_assert(RAW_CH == CHUNK, "the cp.async producer loops copy whole chunks");
#endif
#ifdef CF_1XF16
// compute-sanitizer's memcheck takes a wgmma operand to span N x K elements from its start address (5,632 B here),
// where the MMA reads 2 x 22 core matrices lbo apart: from a window 2,816 B into the last stage that would pass the
// allocation's end (14 "invalid __shared__ read" reports, H200 2026-12-01). 2,752 B of padding keep it inside.
constexpr int SANITIZER_PAD = 688;
#else
constexpr int SANITIZER_PAD = 0;
#endif
#ifdef CF_TMA
constexpr int MBAR_FLOATS = 2 * PIPES * RAWS;       // an mbarrier (8 B) per raw buffer
#else
constexpr int MBAR_FLOATS = 0;
#endif
#ifdef CF_BULK_STORE
// CF_BULK_STORE: per consumer warp, 8 channel rows of one output row (a round: h, t) at their 16-byte phase in y.
// Pitch 88 floats (24 mod 32 banks): the STS.64 of a half-warp (gid 0-3, 4 quads) land in 32 distinct banks.
constexpr int OPITCH = XW;
constexpr int OWARP = 8 * OPITCH;                   // 2,816 B per warp
constexpr int OUT_SETS = CONSUMERS;
constexpr int OUT_FLOATS = OUT_SETS * 4 * OWARP;    // 11,264 B per set
static_assert(OPITCH % 4 == 0 && OPITCH >= TW + 2, "16-byte aligned rows with room for the phase");
#else
constexpr int OUT_FLOATS = 0;
#endif
constexpr int COUNT_FLOATS = 0;
constexpr int SMEM_FLOATS = ZFLOATS + WFLOATS + PIPES * RAWS * RAWF + PIPES * STAGES * XBUF + OUT_FLOATS + 4 +
                            MBAR_FLOATS + COUNT_FLOATS + SANITIZER_PAD;
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
    int tma;     // CF_TMA: the kernel parameter xmap describes x (W % 4 == 0, x 16-byte aligned)
#ifdef CF_BULK_STORE
    int ybulk;   // output rows through the bulk-copy engine (Wo even, y 8-byte aligned)
#endif
};

struct TileCoord { int n, oh, ox0; };
__device__ __forceinline__ TileCoord tile_coord(const Geom& g, int tile) {
    const int tx = tile % g.tiles_x, t = tile / g.tiles_x;
    const int rows = (g.Ho + TH - 1) / TH;
    return { t / rows, (t % rows) * TH, tx * TW };
}

__device__ __forceinline__ void bar_sync(int id) {
    asm volatile("bar.sync %0, %1;\n" :: "r"(id), "n"(BAR_COUNT) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id) {
    asm volatile("bar.arrive %0, %1;\n" :: "r"(id), "n"(BAR_COUNT) : "memory");
}
__device__ __forceinline__ int full_bar(int k, int s) { return 1 + k * STAGES + s; }
__device__ __forceinline__ int empty_bar(int k, int s) { return 1 + PIPES * STAGES + k * STAGES + s; }
// CF_SHARED_RING: consumer k may start its chunk loop (the previous tile's consumer has issued its last MMAs).
__device__ __forceinline__ int order_bar(int k) { return 1 + 2 * PIPES * STAGES + PIPES + k; }
// The tile a block's ring k carries j-th (in CF_SHARED_RING the tiles of all consumers in turn: consumer j % CONSUMERS
// takes it); the same tiles per consumer either way: blockIdx.x * CONSUMERS + k, then gridDim.x * CONSUMERS apart.
__device__ __forceinline__ int ring_tile(int k, int j) {
    return PIPES == 1 ? blockIdx.x * CONSUMERS + j % CONSUMERS + (j / CONSUMERS) * gridDim.x * CONSUMERS
                      : blockIdx.x * CONSUMERS + k + j * gridDim.x * CONSUMERS;
}
// The PTHREADS producer threads of ring k among themselves.
__device__ __forceinline__ void producer_sync(int k) {
    asm volatile("bar.sync %0, %1;\n" :: "r"(1 + 2 * PIPES * STAGES + k), "n"(PTHREADS) : "memory");
}

// SBO 128 B (core matrices 8 rows apart) for every operand here; lbo varies per wgmma.
__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t lbo) { return wgmma_desc(addr, lbo, 128); }
// Byte offset of tap t's window in a stage part: staged row kh, shifted by kw pixels.
__host__ __device__ constexpr uint32_t tap_offset(int t) { return ((t / KS) * XW + t % KS) * 16; }

#ifdef CF_F16_OPERANDS
// Weights, once per block: w * 2^e (f16_weight_exponent: max|w| 2^e < 2^14) in FP16, 1 KB = [co][8 channels] per
// (chunk, tap). CF_1XF16: w_hi alone, [chunk][tap]: w(t) + 1 KB = w(t + 1). CF_3XF16: hi + lo, per chunk
// [w_lo(tap 0..8)][w_hi(tap 0..8)]: w_lo(t) + 9 KB = w_hi(t). Returns 2^-e.
__device__ float stage_weights(float* sw, unsigned* smax, const float* __restrict__ w) {
    const int e = f16_weight_exponent(w, COUT * CIN * TAPS, smax);
    const float s = ldexpf(1.0f, e);
    unsigned short* h = reinterpret_cast<unsigned short*>(sw);
    // u = ((c*9 + t)*64 + co)*8 + ch  <-  w[co][8c + ch][t]
    for (int u = threadIdx.x; u < COUT * CIN * TAPS; u += THREADS) {
        const int ch = u & 7, co = (u >> 3) & 63, ct = u >> 9, c = ct / TAPS, t = ct - c * TAPS;
        const float v = __ldg(w + (co * CIN + CHUNK * c + ch) * TAPS + t) * s;
        const unsigned short hi = f16_bits(v);
#ifdef CF_3XF16
        const int at = c * 9216 + t * 512 + co * 8 + ch;   // lo; hi 4608 halves (9 KB) further
        h[at] = f16_bits(v - f16_value(hi));
        h[at + 4608] = hi;
#else
        h[u] = hi;
#endif
    }
    return ldexpf(1.0f, -e);
}
#else
__device__ float stage_weights(float* sw, unsigned*, const float* __restrict__ w) {
    // f = ((s*2 + half)*64 + co)*4 + e  <-  w[co][8*chunk + 4*half + e][tap], s = chunk*9 + tap (as 04b)
    for (int f = threadIdx.x; f < WFLOATS; f += THREADS) {
        const int e = f & 3, co = (f >> 2) & 63, half = (f >> 8) & 1, s = f >> 9;
        const int chunk = s / TAPS, tap = s - chunk * TAPS;
        sw[f] = tf32_round(__ldg(w + (co * CIN + CHUNK * chunk + 4 * half + e) * TAPS + tap));
    }
    return 1.0f;
}
#endif

// Producer, step 1: RAW_CH channels (from c0) x XPIX staged pixels, global -> the consumer's raw buffer with
// cp.async (no registers held while they are in flight; out-of-image pixels zero-filled): 8-byte copies of
// pixel pairs where W is even and x 8-byte aligned (tile columns start at multiples of TW = 86, so a pair
// is in the row or out of it whole), 4-byte copies of single pixels otherwise. Consecutive threads,
// consecutive addresses. 64-bit base per chunk, 32-bit offsets inside it (launch refuses 8 H W >= 2^31).
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
                for (int c = 0; c < RAW_CH; ++c) cp_async8(raw + c * RAW_PIX + raw_index(p), src + (ok ? c * hw : 0), ok ? 8 : 0);
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
            for (int c = 0; c < RAW_CH; ++c) cp_async4(raw + c * RAW_PIX + raw_index(p), src + (ok ? c * hw : 0), ok ? 4 : 0);
        }
    }
    cp_async_commit();
}

#ifdef CF_PIX_OFFSETS
// CF_PIX_OFFSETS (candidate): a producer thread's pixel pairs are the same in every chunk of a tile, so their
// offsets in a channel plane and whether they lie in the image are computed once per tile, not per chunk (the
// division by XW and the bounds tests leave the chunk loop). 8-byte copies only; 4-byte ones as before.
constexpr int PAIR_ROUNDS = (XPIX / 2 + PTHREADS - 1) / PTHREADS;
struct PairOffsets { int off[PAIR_ROUNDS]; unsigned ok; };
__device__ __forceinline__ PairOffsets pair_offsets(const Geom& g, TileCoord tc, int ptid) {
    PairOffsets o;
    o.ok = 0u;
#pragma unroll
    for (int r = 0; r < PAIR_ROUNDS; ++r) {
        const int p = 2 * (ptid + PTHREADS * r);
        const int row = p / XW, px = p - row * XW;
        const int ih = tc.oh + row, ix = tc.ox0 + px;
        const bool ok = p < XPIX && ih < g.H && ix < g.W;
        o.off[r] = ok ? ih * g.W + ix : 0;
        o.ok |= unsigned(ok) << r;
    }
    return o;
}
__device__ __forceinline__ void load_raw_pairs(float* raw, const float* __restrict__ x, const Geom& g, int n,
                                               const PairOffsets& o, int chunk, int ptid) {
    const int hw = g.H * g.W;
    const float* xc = x + (long long)(n * CIN + CHUNK * chunk) * hw;
#pragma unroll
    for (int r = 0; r < PAIR_ROUNDS; ++r) {
        const int p = 2 * (ptid + PTHREADS * r);
        if (p < XPIX) {
            const bool ok = (o.ok >> r) & 1u;
            const float* src = xc + o.off[r];
#pragma unroll
            for (int c = 0; c < CHUNK; ++c) cp_async8(raw + c * RAW_PIX + raw_index(p), src + (ok ? c * hw : 0), ok ? 8 : 0);
        }
    }
    cp_async_commit();
}
#endif

// Producer, step 2: a raw buffer -> its channels of one ring stage in the MMAs' layout, a pixel's RAW_CH channels
// per thread: conflict-free 4-byte shared loads, 16-byte stores to consecutive rows (8-byte ones for FP16 halves).
//   TF32: part 0 = channels 0-3, part 1 = channels 4-7, rounded to TF32.
//   CF_3XF16: part 0 = x_hi = FP16(x), part 1 = x_lo = FP16(x - x_hi). |x| >= 65520 makes x_hi Inf, and
//   every output that reads it non-finite: the consumer then recomputes those outputs in FP32.
// unit: which RAW_CH channels of the chunk the buffer holds (0 for whole chunks). shift: the tile's first column
// in the raw rows (CF_TMA: 0 or 2, see RAW_PITCH; else 0).
template <int W>
__device__ __forceinline__ void store_words(float* at, const uint32_t (&v)[W]) {
    if constexpr (W == 4) *reinterpret_cast<uint4*>(at) = make_uint4(v[0], v[1], v[2], v[3]);
    else *reinterpret_cast<uint2*>(at) = make_uint2(v[0], v[1]);
}
__device__ __forceinline__ void stage_raw(float* xs, const float* raw, int ptid, int shift = 0, int unit = 0) {
#pragma unroll 2
    for (int r = 0; r < ROUNDS; ++r) {
        const int p = ptid + PTHREADS * r;
        if (p < XPIX) {
            float v[RAW_CH];
            // CF_TMA: recomputed per chunk (opaque: hoisted out of the chunk loop, the rounds' indices took
            // registers the producer does not have: ptxas spilled 8 B (TF32) and 28 B (3xFP16))
            const int rp = RAW_PITCH == XW ? p : raw_index(int(opaque(uint32_t(p)))) + shift;
#pragma unroll
            for (int c = 0; c < RAW_CH; ++c) v[c] = raw[c * RAW_PIX + rp];
#if defined(CF_F16_OPERANDS)
            float* at = xs + 4 * p + unit * (RAW_CH / 2);   // a unit's channels: RAW_CH FP16 of the pixel's row
            uint32_t hi[RAW_CH / 2];
#ifdef CF_3XF16
            uint32_t lo[RAW_CH / 2];
#pragma unroll
            for (int q = 0; q < RAW_CH / 2; ++q) split_f16x2(v[2 * q], v[2 * q + 1], hi[q], lo[q]);
            store_words(at + XPART, lo);
#else
#pragma unroll
            for (int q = 0; q < RAW_CH / 2; ++q) hi[q] = f16x2(v[2 * q], v[2 * q + 1]);
#endif
            store_words(at, hi);
#else
#pragma unroll
            for (int q = 0; q < RAW_CH / 4; ++q)
                *reinterpret_cast<float4*>(xs + (unit * (RAW_CH / 4) + q) * XPART + 4 * p) =
                    make_float4(CF_TF32_STAGE(v[4 * q]), CF_TF32_STAGE(v[4 * q + 1]), CF_TF32_STAGE(v[4 * q + 2]),
                                CF_TF32_STAGE(v[4 * q + 3]));
#endif
        }
    }
}

#ifdef CF_3XF16
// One chunk: per tap both corrections into ac ([w_lo | w_hi] . [x_hi | x_lo]); per tap pair the main
// products into am ([w_hi(t) | w_hi(t+1)] . [x_hi(t) | x_hi(t+1)]); tap 8 as [0 | w_hi(8)] . [x_hi(0) | x_hi(8)].
// Interleaved so that the tensor core has two independent accumulator chains.
__device__ __forceinline__ void mma_chunk(float (&am)[NACC], float (&ac)[NACC], uint32_t za, uint32_t wa,
                                          uint32_t xa, int chunk) {
    const uint32_t wc = wa + chunk * 18432;          // this chunk's [w_lo(0..8)][w_hi(0..8)]
    const int more = chunk > 0;
    wgmma_fence();
#pragma unroll
    for (int t = 0; t < TAPS; ++t) {
        wgmma_f16(ac, desc(wc + t * 1024, 9216), desc(xa + tap_offset(t), XPART * 4), more || t > 0);
        if (t % 2 == 1)
            wgmma_f16(am, desc(wc + 9216 + (t - 1) * 1024, 1024),
                      desc(xa + tap_offset(t - 1), tap_offset(t) - tap_offset(t - 1)), more || t > 1);
    }
    wgmma_f16(am, desc(za, wc + 9216 + 8 * 1024 - za), desc(xa, tap_offset(8)), 1);
    wgmma_commit();
}
#elif defined(CF_1XF16)
// One chunk in FP16 (x and w_hi, 11 significant bits as TF32): 3xfp16's main products alone, per tap pair
// [w_hi(t) | w_hi(t+1)] . [x(t) | x(t+1)] and tap 8 as [0 | w_hi(8)] . [x(0) | x(8)]: 5 wgmmas where TF32 needs 9.
__device__ __forceinline__ void mma_chunk(float (&am)[NACC], float (&)[NACC], uint32_t za, uint32_t wa,
                                          uint32_t xa, int chunk) {
    const uint32_t wc = wa + chunk * 9216;           // this chunk's w(tap 0..8)
    wgmma_fence();
#pragma unroll
    for (int t = 1; t < TAPS; t += 2)
        wgmma_f16(am, desc(wc + (t - 1) * 1024, 1024),
                  desc(xa + tap_offset(t - 1), tap_offset(t) - tap_offset(t - 1)), chunk > 0 || t > 1);
    wgmma_f16(am, desc(za, wc + 8 * 1024 - za), desc(xa, tap_offset(8)), 1);
    wgmma_commit();
}
#else
__device__ __forceinline__ void mma_chunk(float (&acc)[NACC], float (&)[NACC], uint32_t, uint32_t wa,
                                          uint32_t xa, int chunk) {
    wgmma_fence();
#pragma unroll
    for (int t = 0; t < TAPS; ++t)
        wgmma_tf32(acc, desc(wa + (chunk * TAPS + t) * 2048, 1024), desc(xa + tap_offset(t), XPART * 4),
                   chunk > 0 || t > 0);
    wgmma_commit();
}
#endif

// A thread's values of output row t for its channel h (16 warp + gid + 8 h): v[2j + e] = column 8j + 2tq + e.
__device__ __forceinline__ void epilogue_row(const float (&acc)[NACC], float b, float m, float scale, int t, int h,
                                             float (&v)[2 * NJ]) {
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
#if   defined(CF_1XF16)
        v[2 * j]     = epilogue_conv2d(fmaf(acc[4 * (NJ * t + j) + 2 * h], scale, b), m);
        v[2 * j + 1] = epilogue_conv2d(fmaf(acc[4 * (NJ * t + j) + 2 * h + 1], scale, b), m);
#else
        (void)scale;
        v[2 * j]     = epilogue_conv2d(acc[4 * (NJ * t + j) + 2 * h] + b, m);
        v[2 * j + 1] = epilogue_conv2d(acc[4 * (NJ * t + j) + 2 * h + 1] + b, m);
#endif
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

#ifdef CF_BULK_STORE
// CF_BULK_STORE (candidate): the output through shared memory and the bulk-copy engine, conv3d 04b's scheme. The
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
    float* yrow0 = y + ((long long)(tc.n * COUT + 16 * warp) * g.Ho + tc.oh) * g.Wo + tc.ox0;   // channel 16 warp, row oh
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
                if (8 * j + 2 * tq < lim) *reinterpret_cast<float2*>(srow + 8 * j + 2 * tq) = make_float2(v[2 * j], v[2 * j + 1]);
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
#endif

#ifdef CF_F16_OPERANDS
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
            y[((long long)(tc.n * COUT + co) * g.Ho + oh) * g.Wo + ox] = epilogue_conv2d(v, h ? param_r[1] : param_r[0]);
        }
    }
}
#endif

__global__ void __launch_bounds__(THREADS, 1)
conv2d_ws_kernel(const __grid_constant__ CUtensorMap xmap, const float* __restrict__ x, const float* __restrict__ w,
                 const float* __restrict__ bias, const float* __restrict__ mult, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* zero = smem;                                  // first: every other operand lies after it (lbo > 0)
    float* sw = smem + ZFLOATS;
    float* raws = sw + WFLOATS;
    float* sx = raws + PIPES * RAWS * RAWF;
    float* sout = sx + PIPES * STAGES * XBUF;            // CF_BULK_STORE: the consumer warps' output buffers
    unsigned* smax = reinterpret_cast<unsigned*>(sout + OUT_FLOATS);
    for (int i = threadIdx.x; i < ZFLOATS; i += THREADS) zero[i] = 0.0f;
    for (int i = threadIdx.x; i < PIPES * STAGES * XBUF; i += THREADS) sx[i] = 0.0f;   // pads stay 0
    if (threadIdx.x == 0) *smax = 0u;
#ifdef CF_TMA
    uint64_t* rawbar = reinterpret_cast<uint64_t*>(smax + 4);
    if (threadIdx.x == 0) {
        // TMA: one arrival (the issuing thread's expect_tx) and the bytes; cp.async: every producer thread's
        // copies (cp_async_mbar_arrive)
        for (int i = 0; i < PIPES * RAWS; ++i) mbar_init(rawbar + i, g.tma ? 1 : PTHREADS);
        mbar_init_fence();
    }
#endif
    __syncthreads();
    const float inv_scale = stage_weights(sw, smax, w);
    fence_proxy_async();
    __syncthreads();
    const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
    const int stride = gridDim.x * CONSUMERS;
    if (wg < PRODUCERS) {
        // ---- producer: PTHREADS threads per consumer: raw chunk i+1 in flight while chunk i is staged ----
        setmaxnreg_dec<PRODUCER_REGS>();
        const int k = threadIdx.x / PTHREADS, ptid = threadIdx.x % PTHREADS;
        float* ring = sx + k * STAGES * XBUF;
        int tile = blockIdx.x * CONSUMERS + k, slot = 0;
#if defined(CF_TMA)
        // CF_TMA: one thread per ring copies a raw buffer (RAW_CH channels of a chunk) with one TMA (a box of
        // RAW_PITCH pixels x XH rows x RAW_CH channels, exactly the raw buffer's layout, out-of-image pixels zero-
        // filled), where 128 threads issued 16 8-byte cp.async each: the producer keeps only the conversion. Each raw
        // buffer completes on its mbarrier; shapes TMA cannot take (W % 4 != 0) copy with cp.async onto the same
        // barriers. Buffers are refilled in turn, RAWS - 1 of them in flight while one is staged.
        float* raw0 = raws + k * RAWS * RAWF;
        uint64_t* bars = rawbar + k * RAWS;
        int buf = 0, next_j = 0, next_unit = 0;          // the next raw buffer's contents: tile j, chunk * UNITS + unit
        int next_tile = ring_tile(k, 0);
        unsigned parity = 0u;                            // bit b: the phase raw buffer b completes next
        TileCoord ntc = tile_coord(g, next_tile);
        auto copy_next = [&](int b, bool issue) {
            if (next_tile < g.tiles) {
                if (g.tma) {
                    if (issue) {
                        mbar_arrive_expect_tx(bars + b, RAWF * 4);
                        tma_load_4d(raw0 + b * RAWF, &xmap, ntc.ox0 & ~3, ntc.oh, RAW_CH * next_unit, ntc.n, bars + b);
                    }
                } else {
                    load_raw(raw0 + b * RAWF, x, g, ntc, RAW_CH * next_unit, ptid);
                    cp_async_mbar_arrive(bars + b);
                }
            }
            if (++next_unit == NCHUNK * UNITS) {
                next_unit = 0;
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
#pragma unroll 1
                for (int unit = 0; unit < UNITS; ++unit) {
                    mbar_wait(bars + buf, (parity >> buf) & 1u);   // the buffer has landed
                    parity ^= 1u << buf;
                    if (unit == 0) bar_sync(empty_bar(k, slot));
                    stage_raw(ring + slot * XBUF, raw0 + buf * RAWF, ptid, shift, unit);
                    if (unit == UNITS - 1) {
                        fence_proxy_async();
                        bar_arrive(full_bar(k, slot));
                    }
                    producer_sync(k);                    // the raw buffer is read: refill it
                    copy_next(buf, ptid == 0);
                    buf = buf + 1 == RAWS ? 0 : buf + 1;
                }
                slot = slot + 1 == STAGES ? 0 : slot + 1;
            }
        }
#elif CF_RAWS == 1
        float* raw = raws + k * RAWF;
        if (tile < g.tiles) load_raw(raw, x, g, tile_coord(g, tile), 0, ptid);
#pragma unroll 1
        for (; tile < g.tiles; tile += stride) {
            const TileCoord tc = tile_coord(g, tile);
#pragma unroll 1
            for (int chunk = 0; chunk < NCHUNK; ++chunk) {
                cp_async_wait<0>();
                producer_sync(k);                        // every thread's copies of this chunk have landed
                bar_sync(empty_bar(k, slot));
                stage_raw(ring + slot * XBUF, raw, ptid);
                fence_proxy_async();
                bar_arrive(full_bar(k, slot));
                producer_sync(k);                        // the raw buffer is read: refill it
                if (chunk + 1 < NCHUNK) load_raw(raw, x, g, tc, CHUNK * (chunk + 1), ptid);
                else if (tile + stride < g.tiles) load_raw(raw, x, g, tile_coord(g, tile + stride), 0, ptid);
                slot = slot + 1 == STAGES ? 0 : slot + 1;
            }
        }
#else
        // RAWS raw buffers in turn: the copies of chunks i+1 .. i+RAWS-1 in flight while chunk i is staged. One
        // commit group per chunk (an empty one past the last) keeps cp.async.wait_group's count exact.
        float* raw0 = raws + k * RAWS * RAWF;
        int buf = 0, next_tile = tile, next_chunk = 0;   // the next chunk to copy
        TileCoord ntc = tile_coord(g, next_tile);
#ifdef CF_PIX_OFFSETS
        PairOffsets po = pair_offsets(g, ntc, ptid);
#endif
        auto copy_next = [&](int b) {
#ifdef CF_PIX_OFFSETS
            if (next_tile < g.tiles && g.xvec) load_raw_pairs(raw0 + b * RAWF, x, g, ntc.n, po, next_chunk, ptid);
            else
#endif
            if (next_tile < g.tiles) load_raw(raw0 + b * RAWF, x, g, ntc, CHUNK * next_chunk, ptid);
            else cp_async_commit();
            if (++next_chunk == NCHUNK) {
                next_chunk = 0;
                next_tile += stride;
                ntc = tile_coord(g, next_tile);
#ifdef CF_PIX_OFFSETS
                po = pair_offsets(g, ntc, ptid);
#endif
            }
        };
        for (int b = 0; b < RAWS; ++b) copy_next(b);
#pragma unroll 1
        for (; tile < g.tiles; tile += stride) {
#pragma unroll 1
            for (int chunk = 0; chunk < NCHUNK; ++chunk) {
                cp_async_wait<RAWS - 1>();
                producer_sync(k);                        // every thread's copies of this chunk have landed
                bar_sync(empty_bar(k, slot));
                stage_raw(ring + slot * XBUF, raw0 + buf * RAWF, ptid);
                fence_proxy_async();
                bar_arrive(full_bar(k, slot));
                producer_sync(k);                        // the raw buffer is read: refill it
                copy_next(buf);
                buf = buf + 1 == RAWS ? 0 : buf + 1;
                slot = slot + 1 == STAGES ? 0 : slot + 1;
            }
        }
#endif
        for (int s = 0; s < STAGES; ++s) bar_sync(empty_bar(k, s));   // the consumer's last releases
    } else {
        // ---- consumer: MMAs from the ring, epilogue from the accumulators ------------------------------
        setmaxnreg_inc<CONSUMER_REGS>();
        const int k = wg - PRODUCERS, warp = tid >> 5, lane = threadIdx.x & 31;
        const uint32_t wa = smem_addr(sw);      // the zero block and this consumer's ring at fixed offsets from it
        const int pipe = PIPES == 1 ? 0 : k;             // the ring this consumer reads
        const uint32_t ra = wa + (WFLOATS + PIPES * RAWS * RAWF + pipe * STAGES * XBUF) * 4;
        float am[NACC];
#ifdef CF_3XF16
        float ac[NACC];
#else
        float (&ac)[NACC] = am;
#endif
        if (PIPES > 1 || k == 0)
            for (int s = 0; s < STAGES; ++s) bar_arrive(empty_bar(pipe, s));   // every stage starts empty
        int slot = PIPES == 1 ? k * NCHUNK % STAGES : 0;
#pragma unroll 1
        for (int tile = blockIdx.x * CONSUMERS + k, j = k; tile < g.tiles; tile += stride, j += CONSUMERS) {
            int prev = -1;
            if (PIPES == 1 && j > 0) asm volatile("bar.sync %0, 256;\n" :: "r"(order_bar(k)) : "memory");
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
                    asm volatile("bar.arrive %0, 256;\n" :: "r"(order_bar((k + 1) % CONSUMERS)) : "memory");
                slot = (slot + (CONSUMERS - 1) * NCHUNK) % STAGES;
            }
            wgmma_wait<0>();
            fence_operand(am);
#ifdef CF_3XF16
            fence_operand(ac);
#endif
            bar_arrive(empty_bar(pipe, prev));
            // bias, parameter and tile coordinates only now: 224 registers hold both accumulator sets with
            // no room to spare (ptxas spilled 16 B with them live across the MMA loop)
            const TileCoord tc = tile_coord(g, tile);
            float bias_r[2], param_r[2];
            channel_params(bias, mult, warp, lane, bias_r, param_r);
            auto out_done = [] {};
            auto put_tile = [&](float scale) {
#ifdef CF_BULK_STORE
                if (g.ybulk) {
                    store_tile_bulk(am, bias_r, param_r, y, sout + (4 * (k % OUT_SETS) + warp) * OWARP, g, tc, warp, lane,
                                    scale);
                    return;
                }
#endif
                store_tile(am, bias_r, param_r, y, g, tc, warp, lane, scale);
            };
            (void)out_done;
#if defined(CF_BULK_STORE) && defined(CF_F16_OPERANDS)
            // the bulk store is a warp's (__syncwarp, shuffles): a lane's FP32 path takes its whole warp along
            auto warp_any = [&](bool b) { return g.ybulk ? __any_sync(~0u, b) : b; };
#elif defined(CF_F16_OPERANDS)
            auto warp_any = [](bool b) { return b; };
#endif
#ifdef CF_3XF16
            bool bad = false;
#pragma unroll
            for (int i = 0; i < NACC; ++i) {
                am[i] = (am[i] + ac[i]) * inv_scale;
                bad |= !(fabsf(am[i]) < CF_F32_INF);
            }
            if (warp_any(bad)) {                 // an Inf or NaN input, or |x| >= 65520: this thread's outputs in FP32
                fp32_tile(x, w, bias_r, param_r, y, g, tc, warp, lane);
                out_done();
                continue;
            }
            put_tile(1.0f);
            out_done();
#elif defined(CF_1XF16)
            if (warp_any(acc_nonfinite(am))) {   // an Inf or NaN input or weight, or |x| >= 65520
                fp32_tile(x, w, bias_r, param_r, y, g, tc, warp, lane);
                out_done();
                continue;
            }
            put_tile(inv_scale);
            out_done();
#else
            (void)inv_scale;
            put_tile(1.0f);
            out_done();
#endif
        }
#ifdef CF_BULK_STORE
        if (lane == 0) bulk_wait_all();          // every bulk copy done before the block's shared memory goes
#endif
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
#ifdef CF_BULK_STORE
    g.ybulk = (a.Wo % 2 == 0) && (reinterpret_cast<uintptr_t>(a.y) % 8 == 0);
#endif
    CUtensorMap xmap{};
    g.tma = 0;
#ifdef CF_TMA
    g.tma = cf_encode_tma_4d(&xmap, a.x, {(uint64_t)a.W, (uint64_t)a.H, (uint64_t)CIN, (uint64_t)a.N},
                             {(uint32_t)RAW_PITCH, (uint32_t)XH, (uint32_t)RAW_CH, 1u});   // RAWF floats: expect_tx's count
#endif
    if ((long long)CHUNK * a.H * a.W >= (1LL << 31))
        return "04c_warp_specialized_wgmma (conv2d): an image plane of more than 2^28 pixels exceeds its 32-bit "
               "offsets within a chunk (2^31 elements)";
    if (const char* err = cf_persistent_grid(conv2d_ws_kernel, THREADS, SMEM_BYTES,
                                             (tiles + CONSUMERS - 1) / CONSUMERS, sms, NAME, grid))
        return err;
    conv2d_ws_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(xmap, a.x, a.w, a.bias, a.param, a.y, g);
    return nullptr;
}
