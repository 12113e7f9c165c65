// mma_primitives.cuh — the tensor-core primitives both mma.sync templates of the family use (conv_epilogue_mma.cuh,
// conv_epilogue_window.cuh), pasted before either by convfuse/family/template.py: one place for the TF32 rounding and
// the MMA's fragment layout. tests/test_family_emulated.py replaces the marked block with host emulations.
#pragma once

namespace cf_family {

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

}  // namespace cf_family
