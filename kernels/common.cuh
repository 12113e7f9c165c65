// common.cuh — the host ABI every kernel file implements, and the device helpers they share: the two epilogues
// (conv2d: multiplier, LeakyReLU, erf GELU; conv3d: LeakyReLU, sum, clamp, GELU on [-1, 1]), 16-byte loads and
// stores, cp.async, and the TF32 conversions and mma.sync of the sm_80 kernels.
//
// build.py prepends this file, as text, to each kernels/<problem>/<step>_<name>.cu before handing the
// result to torch.utils.cpp_extension.load_inline; the CPU test suite prepends it the same way and
// compiles each file with plain nvcc (no torch headers), so kernel files include nothing of torch.
//
// The ABI: each kernel file defines
//     const char* launch(const ConvArgs& a, cudaStream_t stream);
// which launches its kernel(s) on `stream` and returns nullptr, or a short message when the arguments
// are outside what the kernel supports (the Python wrapper raises it as a ValueError). The Python side
// (convfuse/registry.py) has already checked device, dtype, contiguity and shapes and has allocated `y`.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>
#include <mutex>

// struct ConvArgs is defined in kernels/conv_args.h, which build.py prepends before this file.


#define CF_SQRT1_2 0.70710678118654752440f

// Exact (erf) GELU, what F.gelu computes by default (approximate='none').
__device__ __forceinline__ float gelu_erf(float v) {
    return 0.5f * v * (1.0f + erff(v * CF_SQRT1_2));
}

__device__ __forceinline__ float leaky_relu(float v, float slope) {
    return v > 0.0f ? v : v * slope;
}

// Exact-form GELU for every float with a cheaper erf: erf by Abramowitz & Stegun 7.1.26, 1 - t P(t) exp(-x^2) with
// t = 1 / (1 + 0.3275911 x), |error| <= 1.5e-7 in exact arithmetic; one rcp.approx, one ex2.approx and ~13 FP32
// instructions against erff's two polynomials and selects, for errors against float64 unchanged to 4 digits.
// tests/test_erf_poly.py evaluates it as the device does. NaN in gives NaN out; +Inf gives +Inf, -Inf gives NaN,
// as gelu_erf.
__device__ __forceinline__ float rcp_approx(float x) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ float ex2_approx(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ float gelu_erf_fast(float v) {
    const float x = fabsf(v) * CF_SQRT1_2;
    const float t = rcp_approx(fmaf(0.3275911f, x, 1.0f));
    float p = 1.061405429f;
    p = fmaf(p, t, -1.453152027f);
    p = fmaf(p, t, 1.421413741f);
    p = fmaf(p, t, -0.284496736f);
    p = fmaf(p, t, 0.254829592f);
    const float e = ex2_approx(x * x * -1.44269504088896341f);   // exp(-x^2)
    const float erf_x = copysignf(fmaf(-p * t, e, 1.0f), v);
    return v * fmaf(erf_x, 0.5f, 0.5f);
}

// conv2d epilogue: x * multiplier[c] -> LeakyReLU(0.01) -> GELU, with erff or (_fast) gelu_erf_fast
__device__ __forceinline__ float epilogue_conv2d_fast(float acc, float multiplier) {
    return gelu_erf_fast(leaky_relu(acc * multiplier, 0.01f));
}
__device__ __forceinline__ float epilogue_conv2d(float acc, float multiplier) {
    return gelu_erf(leaky_relu(acc * multiplier, 0.01f));
}

// NaN-propagating min/max (PTX min.NaN / max.NaN, sm_80+, one FMNMX each): torch.clamp keeps NaN,
// fminf/fmaxf would return the bound instead.
__device__ __forceinline__ float fmax_nan(float a, float b) {
    float d;
    asm("max.NaN.f32 %0, %1, %2;\n" : "=f"(d) : "f"(a), "f"(b));
    return d;
}
__device__ __forceinline__ float fmin_nan(float a, float b) {
    float d;
    asm("min.NaN.f32 %0, %1, %2;\n" : "=f"(d) : "f"(a), "f"(b));
    return d;
}

// GELU for |v| <= 1 only, which is all conv3d's clamp lets through: gelu(v) = v (0.5 + 0.5 erf(v/sqrt2))
// = v (0.5 + v Q(v^2)), Q a degree-4 polynomial (erf(x) = x P(x^2), P fitted for relative error on
// |x| <= 0.7072; Q(t) = P(t/2) / (2 sqrt2)). 7 FP32 instructions; erff must serve every float (~10
// selects and two polynomials in SASS). Max abs error 8.4e-8 on [-1, 1] in FP32 Horner
// (tests/test_erf_poly.py checks it). NaN in gives NaN out.
// HALF: the argument is u = v / 2 and the result gelu(v) = gelu(2 u) (the caller halves its per-channel constants and
// the clamp's bounds: exact). With t = v^2 = 4 s, s = u^2, gelu = v/2 + t Q(t) = fma(s, R(s), u), R(s) = 4 Q(4 s):
// Q's coefficient of degree k scaled by 4^(k+1) (exact), one FFMA where v (0.5 + v Q) takes an FFMA and an FMUL; only
// the last rounding differs from the plain form.
template <bool HALF, int K>
__device__ __forceinline__ constexpr float quarter_scale() { return HALF ? float(1 << (2 * K + 2)) : 1; }
template <bool HALF = false>
__device__ __forceinline__ float gelu_clamped(float v) {
    const float t = v * v;
    float q = 9.501314343651757e-05f * quarter_scale<HALF, 4>();
    q = fmaf(q, t, -0.001170811359770596f * quarter_scale<HALF, 3>());
    q = fmaf(q, t, 0.009968046098947525f * quarter_scale<HALF, 2>());
    q = fmaf(q, t, -0.06648974120616913f * quarter_scale<HALF, 1>());
    q = fmaf(q, t, 0.3989422619342804f * quarter_scale<HALF, 0>());
    return HALF ? fmaf(t, q, v) : v * fmaf(v, q, 0.5f);
}

// The same with a degree-3 Q: one FFMA fewer per output, max abs error 2.6e-7 on [-1, 1] in FP32 Horner
// (tests/test_erf_poly.py), against a TF32 output's ~1e-3. Fitted for the absolute error of gelu (weight v^2 on Q's
// error), near-minimax by reweighted least squares.
template <bool HALF = false>
__device__ __forceinline__ float gelu_clamped_q3(float v) {
    const float t = v * v;
    float q = -0.0009404191572896882f * quarter_scale<HALF, 3>();
    q = fmaf(q, t, 0.009775658211267935f * quarter_scale<HALF, 2>());
    q = fmaf(q, t, -0.06642652036206113f * quarter_scale<HALF, 1>());
    q = fmaf(q, t, 0.39893582628911944f * quarter_scale<HALF, 0>());
    return HALF ? fmaf(t, q, v) : v * fmaf(v, q, 0.5f);
}
template <bool Q3, bool HALF = false>
__device__ __forceinline__ float gelu_clamped_as(float v) {
    if constexpr (Q3) return gelu_clamped_q3<HALF>(v); else return gelu_clamped<HALF>(v);
}

// conv3d epilogue: leaky_relu(0.2) -> + sum_tensor[c] -> clamp(-1, 1) -> GELU, 12 instructions.
// leaky_relu with a slope below 1 is max(v, slope v) (NaN and +-Inf pass through unchanged).
// Q3: the GELU by gelu_clamped_q3 instead of gelu_clamped.
template <bool Q3 = false>
__device__ __forceinline__ float epilogue_conv3d(float acc, float sum_c) {
    float v = fmaxf(acc, 0.2f * acc) + sum_c;
    v = fmin_nan(fmax_nan(v, -1.0f), 1.0f);
    return gelu_clamped_as<Q3>(v);
}
// The same on a scaled accumulator with the bias b and sum s folded per channel (bs = b + s, b2s = 0.2 b + s):
// leaky(scale acc + b) + s = max(scale acc + bs, 0.2 scale acc + b2s), two FFMA and one FMNMX where the form
// above takes FADD, FMUL, FMNMX, FADD (and an FMUL to undo a weight scale). Rounding: an ulp from eager's order.
// HALF: all of it on v / 2 (constants and clamp halved, exact), the GELU in gelu_clamped's HALF form.
template <bool Q3 = false, bool HALF = false>
__device__ __forceinline__ float epilogue_conv3d_folded(float acc, float scale, float bs, float b2s) {
    if constexpr (HALF) {
        float u = fmaxf(fmaf(acc, 0.5f * scale, 0.5f * bs), fmaf(acc, 0.5f * (0.2f * scale), 0.5f * b2s));   // v / 2
        u = fmin_nan(fmax_nan(u, -0.5f), 0.5f);
        return gelu_clamped_as<Q3, true>(u);
    } else {
        float v = fmaxf(fmaf(acc, scale, bs), fmaf(acc, 0.2f * scale, b2s));
        v = fmin_nan(fmax_nan(v, -1.0f), 1.0f);
        return gelu_clamped_as<Q3>(v);
    }
}

__device__ __forceinline__ float4 ld_global_f4(const float* p) {
    return __ldg(reinterpret_cast<const float4*>(p));
}

// Streaming store: the output is never re-read by this kernel, so don't let it evict inputs from L2.
__device__ __forceinline__ void st_global_f4(float* p, float4 v) {
    __stcs(reinterpret_cast<float4*>(p), v);
}

__host__ __device__ __forceinline__ int cf_ceil_div(int a, int b) { return (a + b - 1) / b; }

// --- PTX wrappers shared by the cp.async and tensor-core kernels (steps 03b, 04; sm_80 and later) -----
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// src_bytes < cp-size zero-fills the rest: out-of-range rows/columns become the zero padding of the GEMM.
__device__ __forceinline__ void cp_async16(float* dst, const float* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async8(float* dst, const float* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async4(float* dst, const float* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

__device__ __forceinline__ uint32_t to_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}
// 3xTF32 split (for the input operand), CUTLASS's cheapest "fast FP32" variant: big = x with its low 13 mantissa bits cleared
// (round toward zero: exactly TF32), small = x - big (exact in FP32, |small| < 2^-10 |x|)
// handed to the MMA as is: the tensor core reads its top 19 bits, i.e. truncates it as well. That is 2
// instructions per operand element; two cvt.rna would be 6-8 in SASS. The truncations scale every
// product by nearly the same 1 - O(2^-22), a uniform bias, not noise; a numpy model of this exact split
// with FP32 accumulation gives rel-L2 ~4e-7 on the conv (bound 2e-6), vs ~3e-7 with both parts rounded.
// Non-finite x: big is taken from x clamped to +-TF32_MAX (2 FMNMX; the identity on every finite x), so
// +-Inf gives big = +-TF32_MAX and small = +-Inf, not Inf - Inf = NaN. Only a_big * b_small then meets the
// Inf, with the sign of eager's w * x; the other two products stay finite. (small = 0 would not do: the
// weight's small part is 0 or of the opposite sign too often — conv2d's cvt.rna residuals: half of
// them — and a_small * Inf would give 0 * Inf or Inf - Inf.) NaN: fmaxf drops it, small = NaN carries it.
#define CF_TF32_MAX __uint_as_float(0x7f7fe000u)   // the largest finite TF32 value, (2 - 2^-10) 2^127
__device__ __forceinline__ float clamp_tf32_max(float x) {
    return fminf(fmaxf(x, -CF_TF32_MAX), CF_TF32_MAX);
}
__device__ __forceinline__ void split_tf32(float x, uint32_t& big, uint32_t& small) {
    big = __float_as_uint(clamp_tf32_max(x)) & 0xffffe000u;
    small = __float_as_uint(x - __uint_as_float(big));
}
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Per-device pool for a kernel's pre-pass buffer (the weights of conv2d 04 and 04e in the order their main loops
// read): stream-ordered alloc/free keeps concurrent launches on different streams
// independent, and a pool that never trims makes every call after the first free of driver work.
inline cudaMemPool_t cf_weight_pool(int dev) {
    static std::mutex mu;
    static cudaMemPool_t pools[64] = {};
    if (dev < 0 || dev >= 64) return nullptr;
    std::lock_guard<std::mutex> lock(mu);
    if (!pools[dev]) {
        cudaMemPoolProps props = {};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        cudaMemPool_t p;
        if (cudaMemPoolCreate(&p, &props) != cudaSuccess) return nullptr;
        uint64_t keep = ~0ull;
        cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
        pools[dev] = p;
    }
    return pools[dev];
}
