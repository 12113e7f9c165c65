// wgmma.cuh — what the sm_90a kernels (steps 04b to 04e) share: the warpgroup MMA (wgmma) wrappers and shared-memory
// descriptors, mbarriers, TMA and bulk-copy helpers, the TF32, BF16 and FP16 operand conversions and splits, the
// epilogue stores from wgmma accumulators, step 04d's register-A chunk loops, and the host side of their launches.
//
// build.py prepends this file (after common.cuh) only to variants built for sm_90a. A warpgroup is 4
// consecutive warps starting at a warp index divisible by 4; every wgmma instruction is issued by all
// 128 threads together and runs asynchronously: operands are read from shared memory through 64-bit
// matrix descriptors, the FP32 accumulators stay in the issuing threads' registers.
//
// Ordering rules used by the kernels (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply"):
//   - shared memory written by ordinary stores is visible to wgmma (the async proxy) only after
//     fence.proxy.async.shared::cta in each writing thread, followed by a barrier;
//   - wgmma.fence before the first wgmma that touches accumulators other instructions wrote;
//   - wgmma.commit_group closes a group, wgmma.wait_group<N> waits until at most N groups are pending;
//     only then may the accumulators be read. fence_operand pins each accumulator register after the wait
//     so the compiler cannot hoist a read above it (the asm has no data dependence on them otherwise).
#pragma once
#include <cuda.h>               // CUtensorMap (TMA); the encoder is reached through the runtime (cf_encode_tma_4d)
#include <cudaTypedefs.h>

// --- the register-A core: step 04d's chunk loop and what it needs, pasted also into the family's tf32h design
// (convfuse/family/template.py) and so free of common.cuh: it needs <stdint.h> alone ---
// Shared-memory matrix descriptor, no swizzle ("interleave") layout, K-major: the operand is made of core
// matrices of 8 rows x 16 bytes (4 TF32), each stored as 128 contiguous bytes; lbo = byte distance
// between the two core matrices of one k8 step (K direction), sbo = byte distance between core matrices
// 8 rows apart (M or N direction). Addresses and offsets are encoded >> 4; bits 62-63 = 0: no swizzle.
constexpr uint32_t CORE_MATRIX_BYTES = 128;   // a core matrix, 8 rows x 16 B: the sbo of every K-major operand here
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t smem_byte_addr, uint32_t lbo, uint32_t sbo) {
    return (uint64_t)((smem_byte_addr & 0x3FFFFu) >> 4) | ((uint64_t)(lbo >> 4) << 16) |
           ((uint64_t)(sbo >> 4) << 32);
}

// Descriptor = base + a compile-time byte offset in its address field (shared addresses < 256 KB never
// carry into the lbo field). The base goes through an opaque move once per tile so the compiler cannot
// hoist dozens of loop-invariant 64-bit descriptors out of the tile loop (in conv3d 04b that held ~108
// registers and spilled).
__device__ __forceinline__ uint64_t desc_at(uint32_t lo, uint32_t hi, uint32_t byte_offset) {
    return ((uint64_t)hi << 32) | (lo + (byte_offset >> 4));
}
// --- wgmma primitives (tests/test_family_emulated.py replaces this block with host emulations) ---
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
template <int R>
__device__ __forceinline__ void fence_operand(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}
// Generic-proxy shared-memory writes -> visible to wgmma after the next barrier.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ uint32_t opaque(uint32_t v) {
    uint32_t r;
    asm volatile("mov.b32 %0, %1;\n" : "=r"(r) : "r"(v));
    return r;
}
// The accumulator operand lists of the wrappers (CF_WGMMA below says why they are macros).
#define CF_WGMMA_REGS32 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define CF_WGMMA_ACC32(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), \
    "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), \
    "+f"(d[30]), "+f"(d[31])
// --- register-A TF32 wgmma over the rows of a TMA box (step 04d, conv2d and conv3d) ---------------------------------
// The box lands as [channel][row][PITCH], a channel CHP floats on. M = 64 output pixels of one output row (warp w: pixels
// 16 w .. 16 w + 15), N = 64 Cout (B: the weights, K-major in shared memory, WSTEP bytes a tap), K = 8 channels of one
// tap. A thread (g, t)'s fragment is mma.sync's: pixels g and g + 8, channels t and t + 4, four 4-byte shared loads and
// four cvt.rn straight from the box (CHP = 8 or 24 mod 32: the warp's loads hit 32 banks). Input row I of a chunk,
// shifted by tap column s, is one fragment and serves output rows I - r for the taps (r, s) with 0 <= I - r < ROWS.
// D (64 pixels x 64 Cout) += A (64 x 8, registers) * B (8 x 64, shared, K-major); ACC = 0 overwrites D (conv2d 04e).
template <int ACC = 1>
__device__ __forceinline__ void wgmma_rs_m64n64k8(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {" CF_WGMMA_REGS32 "}, "
                 "{%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
                 : CF_WGMMA_ACC32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(ACC));
}
__device__ __forceinline__ uint32_t tf32_bits(float v) {
    uint32_t r;
    asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
    return r;
}
// --- end of wgmma primitives ---
// One chunk (one box) of a consumer tile of ROWS output rows: XH = ROWS + 2 input rows, each loaded into register set
// I % SETS, fenced, its wgmmas issued and committed, then wait_group SETS - 1 (the row that used the next set is done).
// The stage is released (`release()`: 04d's mbarrier arrive of every consumer thread; nothing in the family's tf32h,
// whose block barrier does it) after the last row's wgmmas: an HGMMA cannot issue before its fragment registers have
// arrived, so the box's loads are done (an arrive right after the loads could precede their completion).
// PAIRS (conv2d 04d): the M rows g and g + 8 of a warp's 16 are its pixels 2 g and 2 g + 1, so that a
// thread's three taps need pixels 2 g .. 2 g + 3 of a channel, two 8-byte loads (instead of six 4-byte ones) and four
// cvt (instead of six), and its accumulators hold two neighbouring pixels of a channel: one 8-byte store.
template <int ROWS, int PITCH, int CHP, int SETS, int WSTEP, bool PAIRS = false>
struct RsChunk {
    static constexpr int KS = 3, XH = ROWS + KS - 1;
    // input row I's three fragments (taps s = 0, 1, 2): a0 (pixel g, channel t), a1 (g + 8, t), a2 (g, t + 4),
    // a3 (g + 8, t + 4), from `fb` = the box at channel t, pixel 16 warp + g (PAIRS: pixels 2 g, 2 g + 1 for g, g + 8,
    // `fb` at pixel 16 warp + 2 g)
    template <int I>
    static __device__ __forceinline__ void load_fragments(uint32_t (&a)[KS][4], const float* fb) {
        if constexpr (PAIRS) {
            static_assert(PITCH % 2 == 0 && CHP % 2 == 0, "8-byte loads");
#pragma unroll
            for (int c = 0; c < 2; ++c) {
                const float2 lo = *reinterpret_cast<const float2*>(fb + 4 * c * CHP + I * PITCH);
                const float2 hi = *reinterpret_cast<const float2*>(fb + 4 * c * CHP + I * PITCH + 2);
                const uint32_t p[4] = {tf32_bits(lo.x), tf32_bits(lo.y), tf32_bits(hi.x), tf32_bits(hi.y)};
#pragma unroll
                for (int s = 0; s < KS; ++s) {
                    a[s][2 * c] = p[s];
                    a[s][2 * c + 1] = p[s + 1];
                }
            }
        } else {
#pragma unroll
            for (int s = 0; s < KS; ++s) {
                a[s][0] = tf32_bits(fb[I * PITCH + s]);
                a[s][1] = tf32_bits(fb[I * PITCH + s + 8]);
                a[s][2] = tf32_bits(fb[4 * CHP + I * PITCH + s]);
                a[s][3] = tf32_bits(fb[4 * CHP + I * PITCH + s + 8]);
            }
        }
    }
    // input row I's wgmmas: tap (r, s) into output row I - r
    template <int I>
    static __device__ __forceinline__ void row_mmas(float (&acc)[ROWS][32], const uint32_t (&a)[KS][4], uint32_t wlo,
                                                    uint32_t whi) {
#pragma unroll
        for (int r = 0; r < KS; ++r) {
            if (I - r < 0 || I - r >= ROWS) continue;
#pragma unroll
            for (int s = 0; s < KS; ++s) wgmma_rs_m64n64k8(acc[I - r], a[s], desc_at(wlo, whi, (r * KS + s) * WSTEP));
        }
    }
    template <int I, class Release>
    static __device__ __forceinline__ void mma_row(float (&acc)[ROWS][32], uint32_t (&frag)[SETS][KS][4], const float* fb,
                                                   uint32_t wlo, uint32_t whi, Release release) {
        load_fragments<I>(frag[I % SETS], fb);
        wgmma_fence();                             // the fragment registers were written by ordinary instructions
        row_mmas<I>(acc, frag[I % SETS], wlo, whi);
        if (I == XH - 1) release();
        wgmma_commit();
        if constexpr (I == XH - 1 && XH % SETS != 0)
            wgmma_wait<0>();                       // the next chunk's first row takes set 0 again: all of this one read
        else
            wgmma_wait<SETS - 1>();
    }
    template <int I, class Release>
    static __device__ __forceinline__ void mma_rows(float (&acc)[ROWS][32], uint32_t (&frag)[SETS][KS][4], const float* fb,
                                                    uint32_t wlo, uint32_t whi, Release release) {
        mma_row<I>(acc, frag, fb, wlo, whi, release);
        if constexpr (I + 1 < XH) mma_rows<I + 1>(acc, frag, fb, wlo, whi, release);
    }
};
// --- end of the register-A core ---

// Named barriers (ids 1..15; 0 is __syncthreads) over N threads, whole warps. named_sync waits until N threads have
// arrived; named_arrive counts this warp in and goes on: the signal half of a producer/consumer or turn-taking pair,
// whose other side syncs on the same id.
template <int N>
__device__ __forceinline__ void named_sync(int id) { asm volatile("bar.sync %0, %1;\n" :: "r"(id), "n"(N) : "memory"); }
template <int N>
__device__ __forceinline__ void named_arrive(int id) { asm volatile("bar.arrive %0, %1;\n" :: "r"(id), "n"(N) : "memory"); }
// Barrier for one warpgroup only.
__device__ __forceinline__ void warpgroup_barrier(int id) { named_sync<128>(id); }

// --- TMA and mbarriers (cp.async.bulk.tensor completes on an mbarrier, not in cp.async's commit groups) -----
// A barrier waits for `count` arrivals plus the transaction bytes announced with expect_tx; its phase flips
// when both are done, and waiters spin on the parity of the phase they expect.
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(smem_addr(bar)), "r"(count) : "memory");
}
// The init is visible to the async proxy (TMA completes on the barrier) only after this fence and a barrier.
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// One arrival that also announces `bytes` of TMA transactions to come.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// An arrival triggered when all of this thread's earlier cp.async copies have landed (noinc: counted in init's count).
__device__ __forceinline__ void cp_async_mbar_arrive(uint64_t* bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" :: "r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
    asm volatile("{\n\t.reg .pred done;\n"
                 "WAIT:\n\tmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "\t@!done bra WAIT;\n}\n" :: "r"(smem_addr(bar)), "r"(parity) : "memory");
}
// One arrival of this thread on `bar` (a consumer releasing a stage, a warp telling others its rows are in).
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(smem_addr(bar)) : "memory");
}
// Warp-specialised blocks (04c, 04d): the producer warpgroup gives registers back, the consumers take them.
template <int R> __device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(R)); }
template <int R> __device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(R)); }
// A box of a 4-D tensor (coordinates innermost first, out-of-range elements zero-filled) into shared memory
// (128-byte aligned), completing on `bar`. `map` is a __grid_constant__ kernel parameter.
__device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, int c0, int c1, int c2, int c3,
                                            uint64_t* bar) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\n"
                 :: "r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
                    "r"(smem_addr(bar)) : "memory");
}

// --- the bulk-copy engine, shared -> global (the output stores of conv3d 04b and conv2d 04c) ---------------------
// cp.async.bulk copies whole 16-byte units whose shared and global addresses agree mod 16; it completes in bulk groups
// of the issuing thread, and .read says only that its shared memory may be written again.
__device__ __forceinline__ void bulk_store(const float* gdst, uint32_t ssrc, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
                 :: "l"(gdst), "r"(ssrc), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// all but this thread's newest bulk group have read their shared memory
__device__ __forceinline__ void bulk_wait_read_but_last() { asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

// Where a channel row starts in y and how it splits: an 8-byte head up to the next 16-byte boundary, a body of whole
// 16-byte units for the engine, an 8-byte tail (Wo even, so every part is a pixel pair).
struct RowSplit { int phase, head, body, tail; };
__device__ __forceinline__ RowSplit row_split(const float* grow, int lim) {
    const int phase = (int)((reinterpret_cast<uintptr_t>(grow) >> 2) & 3);     // 0 or 2 floats
    const int head = phase ? 4 - phase : 0, body = (lim - head) & ~3;
    return {phase, head, body, lim - head - body};
}

// The bodies of R channel rows of y, `plane` floats apart from ybase, whose copies in shared memory lie `pitch` floats
// apart from sbase, each at its row's 16-byte phase: one cp.async.bulk a row, then one bulk group. The calling lane
// passes warp-uniform values (a copy is a uniform-datapath instruction: per-lane addresses make the compiler loop over
// the lanes). `lim`: the row's columns.
template <int R>
__device__ __forceinline__ void bulk_rows(const float* ybase, long long plane, uint32_t sbase, int pitch, int lim) {
    if (plane % 4 == 0) {                   // every row at one phase (the full problems): one split for all
        const RowSplit rs = row_split(ybase, lim);
        if (rs.body > 0) {
#pragma unroll
            for (int r = 0; r < R; ++r)
                bulk_store(ybase + r * plane + rs.head, sbase + 4 * (r * pitch + rs.phase + rs.head), 4 * rs.body);
        }
    } else {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float* grow = ybase + r * plane;
            const RowSplit rs = row_split(grow, lim);
            if (rs.body > 0)
                bulk_store(grow + rs.head, sbase + 4 * (r * pitch + rs.phase + rs.head), 4 * rs.body);
        }
    }
    bulk_commit();
}

__device__ __forceinline__ void st_shared_f2(uint32_t addr, float2 v) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" :: "r"(addr), "f"(v.x), "f"(v.y) : "memory");
}


__device__ __forceinline__ float tf32_round(float v) { return __uint_as_float(to_tf32(v)); }
// Rounded to nearest, ties to even (cvt.rn.tf32.f32, sm_90 and later) instead of ties away (cvt.rna): one
// F2FP.TF32.F32.PACK_B in SASS where cvt.rna is emulated (FSETP, a predicated IADD of half an ulp, a LOP3 mask and a
// constant). The two differ only on exact ties. Without .satfinite (sm_100 only) +-Inf stays +-Inf and NaN stays NaN,
// as with cvt.rna.
__device__ __forceinline__ float tf32_round_rn(float v) {
    uint32_t r;
    asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
    return __uint_as_float(r);
}
// 3xtf32 split done once per staged element, so both parts are rounded (cvt.rna), unlike split_tf32's
// per-MMA truncation. Non-finite x as in split_tf32: big from x clamped to +-TF32_MAX, so +-Inf travels in
// the small part (a_big * Inf has eager's sign) and NaN too.
__device__ __forceinline__ void split_rounded(float x, float& big, float& small) {
    big = tf32_round(clamp_tf32_max(x));
    small = tf32_round(x - big);
}

// D (64 x N, FP32) += A (64 x K, shared) * B (K x N, shared), both K-major; accumulate = 0 overwrites D.
// Accumulator fragment per thread (warp w of the warpgroup, lane = 4*gid + tq): for n8 column group j,
//   d[4j + 0..1] = D[16w + gid    ][8j + 2tq + 0..1],  d[4j + 2..3] = D[16w + gid + 8][8j + 2tq + 0..1]
// i.e. mma.sync's m16n8 C fragment repeated over the N/8 column groups; the N of an overload is twice the
// size of its accumulator array. Inline PTX has no register-array syntax, so the operand lists are spelled
// out once here (CF_WGMMA_REGS<n>: "%0, ..., %<n-1>", CF_WGMMA_ACC<n>: the matching "+f" operands) and
// CF_WGMMA defines one wrapper per (type, N): the descriptors are operands n and n+1, `accumulate` n+2.
//   tf32 k8: a core matrix row is 4 values of K.  f16 / bf16 k16: 8 values of K in the same 16 bytes, so a
//   k16 step has the byte geometry of a TF32 k8 step (two core matrices along K, lbo apart) and takes the
//   tensor core as long: twice the multiply-adds per instruction.
#define CF_WGMMA_REGS44 CF_WGMMA_REGS32 ", " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43"
#define CF_WGMMA_ACC44(d) \
    CF_WGMMA_ACC32(d), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), \
    "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
#define CF_WGMMA_REGS64 CF_WGMMA_REGS44 ", " \
    "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, " \
    "%60, %61, %62, %63"
#define CF_WGMMA_ACC64(d) \
    CF_WGMMA_ACC44(d), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), \
    "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), \
    "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define CF_WGMMA_REGS88 CF_WGMMA_REGS64 ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87"
#define CF_WGMMA_ACC88(d) \
    CF_WGMMA_ACC64(d), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
    "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
    "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
    "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define CF_WGMMA(NAME, SHAPE_TYPES, NACC, DESC_OPS, PRED_OP, TAIL)                                              \
    __device__ __forceinline__ void NAME(float (&d)[NACC], uint64_t desc_a, uint64_t desc_b, int accumulate) { \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRED_OP ", 0;\n"                                        \
                     "wgmma.mma_async.sync.aligned." SHAPE_TYPES " {" CF_WGMMA_REGS##NACC "}, " DESC_OPS         \
                     ", p, 1, 1" TAIL ";\n}\n"                                                                  \
                     : CF_WGMMA_ACC##NACC(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate));                    \
    }
CF_WGMMA(wgmma_tf32, "m64n64k8.f32.tf32.tf32",    32, "%32, %33",   "%34",  "")
CF_WGMMA(wgmma_tf32, "m64n176k8.f32.tf32.tf32",   88, "%88, %89",   "%90",  "")
// 16-bit operands, K-major (imm-trans-a = imm-trans-b = 0). BF16: the TF32 + BF16 scheme's correction pass
// (convfuse/splits.py); FP16: the 3xfp16 scheme (hi + lo parts, 11 significant bits each).
CF_WGMMA(wgmma_bf16, "m64n64k16.f32.bf16.bf16",   32, "%32, %33",   "%34",  ", 0, 0")
CF_WGMMA(wgmma_f16,  "m64n64k16.f32.f16.f16",     32, "%32, %33",   "%34",  ", 0, 0")
CF_WGMMA(wgmma_f16,  "m64n176k16.f32.f16.f16",    88, "%88, %89",   "%90",  ", 0, 0")
#undef CF_WGMMA

// Two floats -> two BF16 (round to nearest even) in one 32-bit word, `lo` at the lower address.
__device__ __forceinline__ uint32_t bf16x2(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ unsigned short bf16_bits(float v) {
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(v));
    return r;
}
// The largest finite BF16, (2 - 2^-7) 2^127. A TF32 big part clamped to +-TF32_MAX would round to +-Inf in
// BF16; clamped here first, x_big * w_small stays finite like the other passes (see split_rounded).
#define CF_BF16_MAX __uint_as_float(0x7f7f0000u)
__device__ __forceinline__ float clamp_bf16_max(float x) { return fminf(fmaxf(x, -CF_BF16_MAX), CF_BF16_MAX); }

// --- FP16 hi + lo parts: the 3xfp16 scheme (convfuse/splits.py) ------------------------------------------
// x = hi + lo with hi = FP16(x), lo = FP16(x - hi): 22 significant bits, as split TF32. Per tap
// x w = x_hi w_hi + (x_lo w_hi + x_hi w_lo); the dropped x_lo w_lo is 2^-22 relative. Products of two FP16
// values are exact in the FP32 accumulator.
#define CF_F32_INF __int_as_float(0x7f800000)
__device__ __forceinline__ unsigned short f16_bits(float v) {
    unsigned short r;
    asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(r) : "f"(v));
    return r;
}
__device__ __forceinline__ float f16_value(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;\n" : "=f"(f) : "h"(h));
    return f;
}
// Two floats -> two FP16 (round to nearest even) in one word, `lo` at the lower address (lower k), and back.
__device__ __forceinline__ uint32_t f16x2(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ float2 f16x2_value(uint32_t h) {
    float2 f;
    asm("{\n.reg .f16 a, b;\nmov.b32 {a, b}, %2;\ncvt.f32.f16 %0, a;\ncvt.f32.f16 %1, b;\n}\n"
        : "=f"(f.x), "=f"(f.y) : "r"(h));
    return f;
}
// Two values' hi parts and lo parts, each pair in one word. |v| >= 65520 makes hi Inf (and lo NaN or Inf),
// as do Inf and NaN: every output that reads such a value is then non-finite, and the kernels recompute
// exactly those outputs in FP32 (their fp32 paths).
__device__ __forceinline__ void split_f16x2(float a, float b, uint32_t& hi, uint32_t& lo) {
    hi = f16x2(a, b);
    const float2 h = f16x2_value(hi);
    lo = f16x2(a - h.x, b - h.y);
}
// FP16 has 5 exponent bits, so the weights are scaled by 2^e per call, e such that the largest finite |w|
// lands just under 2^14 (exact; the sum is multiplied by 2^-e). Finite weights set the scale; Inf and NaN
// stay what they are. Called by every thread of the block, with *smax zeroed and a barrier before it.
__device__ __forceinline__ int f16_weight_exponent(const float* __restrict__ w, int n, unsigned* smax) {
    float m = 0.0f;
    for (int f = threadIdx.x; f < n; f += blockDim.x) {
        const float a = fabsf(__ldg(w + f));
        if (a < CF_F32_INF) m = fmaxf(m, a);
    }
    const unsigned mb = __reduce_max_sync(0xffffffffu, __float_as_uint(m));
    if ((threadIdx.x & 31) == 0) atomicMax(smax, mb);
    __syncthreads();
    const float mx = __uint_as_float(*smax);
    int E = 0;
    if (mx > 0.0f) frexpf(mx, &E);          // mx < 2^E
    return mx > 0.0f ? min(14 - E, 100) : 0;
}
// Whether an accumulator is Inf or NaN, from their sum (8 partial sums: 31 FADDs, 6 deep, where a check per
// accumulator takes two instructions each): an Inf or NaN product (an input or weight FP16 cannot carry) makes
// the sum non-finite; so does a finite overflow of the sum, and the FP32 path serves that tile correctly too.
template <int N>
__device__ __forceinline__ bool acc_nonfinite(const float (&acc)[N]) {
    static_assert(N % 8 == 0, "whole partial sums");
    float part[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) part[i] = acc[i];
#pragma unroll
    for (int i = 8; i < N; ++i) part[i & 7] += acc[i];
    const float sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    return !(fabsf(sum) < CF_F32_INF);
}
// An operand descriptor whose lbo differs from the base's (desc_at's base has lbo 0): tap pairing puts the
// second core matrix of a k16 step at another tap's window, `lbo` bytes on.
__device__ __forceinline__ uint64_t desc_lbo(uint32_t lo, uint32_t hi, uint32_t byte_offset, uint32_t lbo) {
    return ((uint64_t)hi << 32) | (lo + (byte_offset >> 4) + ((lbo >> 4) << 16));
}

// --- epilogue from the accumulators ----------------------------------------------------------------------
// This thread's two output channels, accumulator rows 16*warp + gid and + 8 (the fragment above).
__device__ __forceinline__ int acc_channel(int warp, int lane, int h) { return 16 * warp + (lane >> 2) + 8 * h; }
// Their bias and epilogue parameter.
__device__ __forceinline__ void channel_params(const float* __restrict__ bias, const float* __restrict__ param,
                                               int warp, int lane, float (&bias_r)[2], float (&param_r)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        bias_r[h] = __ldg(bias + acc_channel(warp, lane, h));
        param_r[h] = __ldg(param + acc_channel(warp, lane, h));
    }
}

// Stores one output row of a thread's accumulator tile: v[2j + e] = column 8j + 2tq + e of the row starting at
// yq (column 2tq), lim = the row's columns in the output - 2tq. The caller computes all of a row's values
// before its first store and calls this with one 64-bit address per row; the stores are predicated (branching per
// pixel pair and recomputing addresses took ~40 instructions a pair and left the epilogue chain 2-way ILP). A quad
// of lanes writes 32 contiguous bytes with 8-byte streaming stores, or scalar ones where a row is not 8-byte aligned.
template <int NJ>
__device__ __forceinline__ void store_acc_row(float* yq, const float (&v)[2 * NJ], int lim) {
    if ((reinterpret_cast<uintptr_t>(yq) & 7) == 0) {
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            if (8 * j + 1 < lim)  __stcs(reinterpret_cast<float2*>(yq + 8 * j), make_float2(v[2 * j], v[2 * j + 1]));
            else if (8 * j < lim) __stcs(yq + 8 * j, v[2 * j]);
        }
    } else {
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            if (8 * j < lim)     __stcs(yq + 8 * j, v[2 * j]);
            if (8 * j + 1 < lim) __stcs(yq + 8 * j + 1, v[2 * j + 1]);
        }
    }
}


// --- conv2d 04d's 3xTF32: RsChunk with split operands -------------------------------------------------------------
// 3xTF32 needs both weight parts resident: 295 KB for all 64 Cout, so a block takes one half of them (N = 32: hi and lo
// parts of 32 Cout, 147,456 B, what the TF32 build's weights take) and blocks 2 b, 2 b + 1 the same tiles, one half each
// (the second reads the boxes from L2). Per tap and input row three m64n32k8 wgmmas: a_big w_big into `acc`, a_small
// w_big and a_big w_small into `cor`. The tensor core adds each wgmma into its FP32 accumulator rounding toward zero;
// the corrections, ~2^-11 of the sum, go to an accumulator of their own, so that their 144
// truncations are at its small ulp and only the 72 main products truncate at the sum's (04c's 3xFP16: 40).
// D (64 pixels x 32 Cout) += A (64 x 8, registers) * B (8 x 32, shared, K-major).
__device__ __forceinline__ void wgmma_rs_m64n32k8(float (&d)[16], const uint32_t (&a)[4], uint64_t desc_b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
                 "{%16, %17, %18, %19}, %20, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(1));
}
// One chunk as RsChunk with PAIRS, each fragment value split (split_tf32: big = the value's top 19 bits, small = the
// rest, handed to the tensor core as is), issued in groups of one tap column: group (I, S) = input row I's tap S, its
// big and small fragments (8 registers, set (3 I + S) % SETS) split from the row's 8 floats, then its up to 6 wgmmas
// (2 per output row it serves), a commit and wait_group SETS - 1, so that the next groups' splits overlap this one's
// wgmmas. Three sets (wait_group 2): two groups stay queued behind the one being split. Whole rows in flight (27
// wgmmas, 48 fragment registers in two sets) made ptxas serialize every wgmma (C7512); one set a row (each row
// waiting for its own wgmmas) kept the tensor pipe ~54 % busy.
// acc (32 accumulators a row: N = 64 columns) holds w_big's 32 Cout then w_small's: the weights laid out
// [k-half][part][Cout][4], so that one descriptor reads both parts as N = 64, or w_big alone as N = 32. Per tap a_big
// times both parts in one m64n64k8 and a_small w_big in an m64n32k8 into `cor`: two wgmmas a tap instead of three,
// the same products.
template <int ROWS, int PITCH, int CHP, int WSTEP, int SETS>
struct RsChunk3x {
    static constexpr int KS = 3, XH = ROWS + KS - 1;
    static constexpr int GROUPS = XH * KS;
    static_assert(GROUPS % SETS == 0, "every chunk starts on set 0");
    static_assert(PITCH % 2 == 0 && CHP % 2 == 0, "8-byte loads");
    // input row I: v[c][q] = pixel 2 g + q of channel t + 4 c (`fb` at channel t, pixel 16 warp + 2 g)
    template <int I>
    static __device__ __forceinline__ void load_row(float (&v)[2][4], const float* fb) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const float2 lo = *reinterpret_cast<const float2*>(fb + 4 * c * CHP + I * PITCH);
            const float2 hi = *reinterpret_cast<const float2*>(fb + 4 * c * CHP + I * PITCH + 2);
            v[c][0] = lo.x; v[c][1] = lo.y; v[c][2] = hi.x; v[c][3] = hi.y;
        }
    }
    // tap S's fragment: M rows g, g + 8 = pixels 2 g + S, 2 g + S + 1; K columns t, t + 4 = the two channels
    template <int S>
    static __device__ __forceinline__ void split_tap(uint32_t (&big)[4], uint32_t (&small)[4], const float (&v)[2][4]) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            split_tf32(v[c][S], big[2 * c], small[2 * c]);
            split_tf32(v[c][S + 1], big[2 * c + 1], small[2 * c + 1]);
        }
    }
    // item k of a chunk (input row k / KS, tap column k % KS): its up to 3 rows' wgmmas on one fragment set
    template <int K>
    static __device__ __forceinline__ void item_mmas(float (&acc)[ROWS][32], float (&cor)[ROWS][16],
                                                     const uint32_t (&big)[4], const uint32_t (&small)[4], uint32_t wlo,
                                                     uint32_t whi) {
        constexpr int I = K / KS, S = K % KS;
#pragma unroll
        for (int r = 0; r < KS; ++r) {
            if (I - r < 0 || I - r >= ROWS) continue;
            const uint32_t off = (r * KS + S) * WSTEP;
            wgmma_rs_m64n64k8(acc[I - r], big, desc_at(wlo, whi, off));
            wgmma_rs_m64n32k8(cor[I - r], small, desc_at(wlo, whi, off));
        }
    }
    template <int I, int S>
    static __device__ __forceinline__ void group(float (&acc)[ROWS][32], float (&cor)[ROWS][16],
                                                 uint32_t (&big)[SETS][4], uint32_t (&small)[SETS][4], float (&v)[2][4],
                                                 const float* fb, uint32_t wlo, uint32_t whi, uint64_t* empty) {
        constexpr int G = (I * KS + S) % SETS;
        if constexpr (S == 0 && I == 0) load_row<I>(v, fb);
        split_tap<S>(big[G], small[G], v);
        // the row's floats are dead once its last tap is split: the next row's are loaded into them now, under this
        // group's wgmmas and wait, not in front of the next group's split (the fragment loads are the long link)
        if constexpr (S == KS - 1 && I + 1 < XH) load_row<I + 1>(v, fb);
        wgmma_fence();                             // the fragment registers were written by ordinary instructions
        item_mmas<I * KS + S>(acc, cor, big[G], small[G], wlo, whi);
        if (I == XH - 1 && S == KS - 1) mbar_arrive(empty);   // the box's last loads were split above: it may be refilled
        wgmma_commit();
        wgmma_wait<SETS - 1>();                    // the group SETS - 1 back, which read the set split next, is done
        if constexpr (S + 1 < KS)
            group<I, S + 1>(acc, cor, big, small, v, fb, wlo, whi, empty);
        else if constexpr (I + 1 < XH)
            group<I + 1, 0>(acc, cor, big, small, v, fb, wlo, whi, empty);
    }
};

// --- host side of the sm_90a launches ----------------------------------------------------------------------
#include <string>
// A launch message: `name` (e.g. "04b_implicit_gemm_wgmma (conv3d)") + `text`, valid until the next one.
inline const char* cf_message(const char* name, const char* text) {
    static thread_local std::string m;
    m = std::string(name) + text;
    return m.c_str();
}
// The current device must be compute capability 9.0: wgmma code is built for sm_90a only. sms = its SMs.
inline const char* cf_sm90a_device(const char* name, int& dev, int& sms) {
    int major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        return cf_message(name, ": cannot query the device");
    if (major != 9 || minor != 0)
        return cf_message(name, " uses wgmma, built for sm_90a only: it needs a compute capability 9.0 GPU "
                                "(H100/H200); use 04_mma_* elsewhere");
    return nullptr;
}
// The shapes conv2d's sm_90a kernels compute: Cin = Cout = 64, k = 3, a valid (unpadded) stride-1 conv.
inline const char* cf_conv2d_shape(const ConvArgs& a, const char* name) {
    if (a.Cin != 64 || a.Cout != 64 || a.k != 3) return cf_message(name, " supports only Cin=64, Cout=64, kernel_size=3");
    if (a.N < 1 || a.H < 3 || a.W < 3) return cf_message(name, " needs N >= 1 and H, W >= 3");
    if (a.Ho != a.H - 2 || a.Wo != a.W - 2)
        return cf_message(name, " computes a valid (unpadded) stride-1 conv: Ho = H-2, Wo = W-2");
    return nullptr;
}
// The shapes conv3d's sm_90a kernels compute: Cin = 8, Cout = 64, k = 3, a valid (unpadded) stride-1 conv.
inline const char* cf_conv3d_shape(const ConvArgs& a, const char* name) {
    if (a.Cin != 8 || a.Cout != 64 || a.k != 3) return cf_message(name, " supports only Cin=8, Cout=64, kernel_size=3");
    if (a.N < 1 || a.D < 3 || a.H < 3 || a.W < 3) return cf_message(name, " needs N >= 1 and D, H, W >= 3");
    if (a.Do != a.D - 2 || a.Ho != a.H - 2 || a.Wo != a.W - 2)
        return cf_message(name, " computes a valid (unpadded) stride-1 conv: Do = D-2, Ho = H-2, Wo = W-2");
    return nullptr;
}
// cuTensorMapEncodeTiled is a driver function: reached through the runtime's entry-point query, so the extension
// needs no -lcuda; null where the driver lacks it.
inline PFN_cuTensorMapEncodeTiled_v12000 cf_tma_encoder() {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            fn = nullptr;
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    }();
    return encode;
}
// A TMA map of an FP32 tensor of rank R (2..5) with explicit strides (bytes, dims 1..R-1; dim 0 is dense), so that a
// box can take the dims in another order than memory does (conv3d 04b: a box's channel rows permuted).
template <int R>
inline bool cf_encode_tma_strided(CUtensorMap* map, const float* base, const uint64_t (&dims)[R],
                                  const uint64_t (&strides)[R - 1], const uint32_t (&box)[R]) {
    const PFN_cuTensorMapEncodeTiled_v12000 encode = cf_tma_encoder();
    if (!encode || reinterpret_cast<uintptr_t>(base) % 16 != 0) return false;
    cuuint64_t gdims[R], gstr[R - 1];
    cuuint32_t boxd[R], estr[R];
    for (int i = 0; i < R; ++i) { gdims[i] = dims[i]; boxd[i] = box[i]; estr[i] = 1; }
    for (int i = 0; i < R - 1; ++i) {
        if (strides[i] % 16 != 0) return false;
        gstr[i] = strides[i];
    }
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, R, const_cast<float*>(base), gdims, gstr, boxd, estr,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}
// A TMA map of a 4-D FP32 tensor (dims innermost first, densely packed) with box `box`; out-of-range elements
// read as zero. False where TMA cannot take the tensor (base not 16-byte aligned, a row's bytes
// not a multiple of 16) or the driver lacks the function: the kernel then copies with cp.async.
inline bool cf_encode_tma_4d(CUtensorMap* map, const float* base, const uint64_t (&dims)[4], const uint32_t (&box)[4]) {
    return cf_encode_tma_strided<4>(map, base, dims, {dims[0] * 4, dims[0] * dims[1] * 4, dims[0] * dims[1] * dims[2] * 4},
                                    box);
}
// Grid of a persistent kernel: as many blocks as fit on the device at once, at most `blocks`.
template <typename Kernel>
inline const char* cf_persistent_grid(Kernel kernel, int threads, size_t smem, long long blocks, int sms,
                                      const char* name, int& grid) {
    int per_sm = 0;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess)
        return cf_message(name, ": device cannot give the kernel its dynamic shared memory");
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) != cudaSuccess || per_sm < 1)
        return cf_message(name, ": kernel does not fit on this device");
    const long long slots = (long long)sms * per_sm;
    grid = (int)(blocks < slots ? blocks : slots);
    return nullptr;
}
