"""The generated kernels, run on the CPU: each family problem's whole CUDA source (template + generated epilogue +
launch), in each template design, compiled as C++ by g++ with a small shim for CUDA's built-ins, every CUDA thread a
host thread and __syncthreads a std::barrier, one block at a time; mma.sync a warp-wide exchange of the fragments
(laid out as the PTX ISA gives them) with a float64 dot product, cvt.rna.tf32 a bit rounding; then held to the
verification protocol's bound of the design's precision class (convfuse/verify.py) against the float64 model, on
NaN-poisoned outputs and odd shapes: tails of a thread's pixels or of a block's, a partial last pass of channels, a
K that is no multiple of the stage, the reduction over channels. The window designs (conv_epilogue_window.cuh) add
cp.async (each copy done at its thread's wait_group, so a read before the wait sees NaN-poisoned shared memory),
dynamic shared memory (poisoned before each block), a persistent grid on one emulated SM (a block walks several tiles
and Cout slices, the pipeline across them) and their weight pre-pass (a second launch, into a poisoned buffer).

What this checks is the kernel's own arithmetic and indexing, as written; not what only a GPU shows (nvcc's code,
memory ordering between warps, a cp.async landing early while a warp still reads its stage, timing). The compile tests (test_family_template.py) and the GPU run
(scripts/family_gpu.py) cover those."""
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch
import torch.nn as nn

from convfuse import problems as P
from convfuse import verify as V
from convfuse.family import models as M
from convfuse.family import template as TP
from convfuse.family import trace as T

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found: the emulation compiles with it")

# CUDA's built-ins on the host: a block's threads are std::threads with a thread-local threadIdx; shared memory is a
# function-local static (one block runs at a time); __ldg is a load.
SHIM = r"""
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) alignas(n)
typedef struct CUstream_st* cudaStream_t;
struct cf_dim3 { unsigned x = 0, y = 0, z = 0; };
thread_local cf_dim3 threadIdx, blockIdx, blockDim, gridDim;
static std::barrier<>* cf_barrier = nullptr;
inline void __syncthreads() { cf_barrier->arrive_and_wait(); }
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
inline float __int_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
inline float2 make_float2(float x, float y) { return {x, y}; }
using std::isnan;
// a warp's mma.sync: every lane posts its fragments, waits for the warp, computes its four results; the posts alternate
// between two slots, so a lane can post the next MMA's while another still reads this one's (it cannot post the one
// after before every lane has reached the next MMA's wait, i.e. is done reading)
struct cf_spin_barrier {   // a warp's barrier: the last to arrive opens it, the others yield until it opens
    std::atomic<unsigned> count{0}, phase{0};
    unsigned n;
    explicit cf_spin_barrier(unsigned n_) : n(n_) {}
    void arrive_and_wait() {
        const unsigned ph = phase.load(std::memory_order_acquire);
        if (count.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
            count.store(0, std::memory_order_relaxed);
            phase.fetch_add(1, std::memory_order_release);
        } else {
            while (phase.load(std::memory_order_acquire) == ph) std::this_thread::yield();
        }
    }
};
struct cf_warp { unsigned a[2][32][4]; unsigned b[2][32][2]; cf_spin_barrier* bar; };
static cf_warp cf_warps[32];
thread_local unsigned cf_lane, cf_wid, cf_slot;
inline void __syncwarp() { cf_warps[cf_wid].bar->arrive_and_wait(); }
// The runtime calls of a launch that sizes a persistent grid and allocates a pre-pass buffer: one device of
// CF_EMU_SMS SMs (1: a block walks several tiles), 2 blocks an SM; the pool's memory is malloc'd, NaN-poisoned.
#ifndef CF_EMU_SMS
#define CF_EMU_SMS 1
#endif
typedef int cudaError_t;
constexpr cudaError_t cudaSuccess = 0;
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize };
enum { cudaMemAllocationTypePinned, cudaMemLocationTypeDevice };
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold };
struct cf_pool {};
typedef cf_pool* cudaMemPool_t;
struct cudaMemLocation { int type, id; };
struct cudaMemPoolProps { int allocType; cudaMemLocation location; };
inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr, int) { *v = CF_EMU_SMS; return cudaSuccess; }
template <class F> cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }
template <class F> cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, F, int, size_t) {
    *n = 2; return cudaSuccess; }
inline cudaError_t cudaMemPoolCreate(cudaMemPool_t* p, const cudaMemPoolProps*) {
    static cf_pool pool; *p = &pool; return cudaSuccess; }
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) { return cudaSuccess; }
inline cudaError_t cudaMallocFromPoolAsync(void** p, size_t n, cudaMemPool_t, cudaStream_t) {
    float* f = static_cast<float*>(std::malloc(n));
    for (size_t i = 0; i < n / 4; ++i) f[i] = std::nanf("");
    *p = f; return cudaSuccess; }
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { std::free(p); return cudaSuccess; }
// cp.async: each copy is queued by its thread and done at that thread's next wait_group 0 (zero-filling past src-size),
// so a read before the wait sees the NaN-poisoned or stale shared memory; a 16-byte copy checks its alignment, a
// thread that ends with copies not waited for aborts. Not modelled: a copy landing early, while another warp still reads
// the stage it overwrites (the kernel's __syncthreads before each refill is what guards that, on a GPU only).
struct cf_copy { void* dst; const void* src; int bytes, size; };
thread_local std::vector<cf_copy> cf_pending;
inline void cf_cp_async(float* dst, const float* src, int src_bytes, int size) {
    if (size == 16 && (reinterpret_cast<uintptr_t>(dst) % 16 || (src_bytes && reinterpret_cast<uintptr_t>(src) % 16))) {
        std::fprintf(stderr, "misaligned 16-byte cp.async\n"); std::abort(); }
    cf_pending.push_back({dst, src, src_bytes, size});
}
inline void cf_cp_wait_all() {
    for (auto& c : cf_pending) {
        std::memcpy(c.dst, c.src, c.bytes);
        std::memset(static_cast<char*>(c.dst) + c.bytes, 0, c.size - c.bytes);
    }
    cf_pending.clear();
}
// dynamic shared memory: one buffer, NaN-poisoned before each block
static std::vector<float> cf_dynamic_smem;
inline float cf_bits(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned cf_tf32(float x) {   // cvt.rna.tf32.f32: 10 mantissa bits, to nearest, ties away from zero
    unsigned u; std::memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
    return u;
}
// The tensor core's sum for one element of one m16n8k8 TF32 MMA, modelled after Fasi et al., "Numerical behavior of
// NVIDIA tensor cores" (2021, A100 TF32): operands read as TF32 (the low 13 bits ignored), every product exact; the
// accumulator and the products added in blocks of CF_EMU_BLOCK = 4 products, each block's terms aligned to its
// largest exponent with truncation (CF_EMU_BITS significant bits kept, no guard bits), summed, the sum normalized
// toward zero. CF_EMU_BITS = 22, not FP32's 24: calibrated to lose at least what a GPU lost. Notebook 04's first
// conv2d 3xTF32 kernel put all 216 MMAs of K = 64 x 9 into one accumulator and measured rel-L2 5e-6 on the H200; the
// family's 3xtf32 template with its partial sums removed (the same 216 MMAs an accumulator) emulates at 1.8e-6 with
// 24 bits, 3.6e-6 with 23, 6.8e-6 with 22. One calibration point, one GPU: a model, not the hardware's specification.
// -DCF_EMU_RN instead adds in float64 and rounds once to nearest (an ordinary FP32 accumulator, kinder than the GPU).
#ifndef CF_EMU_BITS
#define CF_EMU_BITS 22
#endif
#ifndef CF_EMU_BLOCK
#define CF_EMU_BLOCK 4
#endif
inline float cf_rz(double s) {   // s to FP32 toward zero
    float f = (float)s;
    if (!std::isfinite(f)) f = std::copysign(3.4028234663852886e38f, (float)s);   // RZ never overflows
    else if (std::fabs((double)f) > std::fabs(s)) f = std::nextafterf(f, 0.0f);
    return f;
}
inline float cf_block(float c, const double* p, int n) {
    double terms[9], exact = c;
    terms[0] = c;
    int emax = -100000;
    bool finite = std::isfinite(c);
    for (int i = 0; i < n; ++i) { terms[i + 1] = p[i]; exact += p[i]; finite = finite && std::isfinite(p[i]); }
    if (!finite) return (float)exact;   // Inf or NaN: IEEE's answer
    for (int i = 0; i <= n; ++i)
        if (terms[i] != 0.0) { int e; std::frexp(terms[i], &e); emax = std::max(emax, e); }
    if (emax == -100000) return c + 0.0f;   // every term zero
    const double q = std::ldexp(1.0, emax - CF_EMU_BITS);   // the last place kept, below the largest term's top bit
    double s = 0.0;
    for (int i = 0; i <= n; ++i) s += std::trunc(terms[i] / q) * q;   // exact: each term a multiple of q, < 2^(emax)
    return cf_rz(s);
}
inline void cf_mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    cf_warp& w = cf_warps[cf_wid];
    const unsigned s = cf_slot ^= 1u;
    for (int i = 0; i < 4; ++i) w.a[s][cf_lane][i] = a[i];
    w.b[s][cf_lane][0] = b[0]; w.b[s][cf_lane][1] = b[1];
    w.bar->arrive_and_wait();
    // the operands as the tensor core reads them: TF32, the low 13 bits ignored
    auto A = [&](int row, int k) {
        return cf_bits(w.a[s][(row % 8) * 4 + k % 4][(row >= 8) + 2 * (k >= 4)] & 0xffffe000u); };
    auto B = [&](int k, int col) { return cf_bits(w.b[s][col * 4 + k % 4][k >= 4] & 0xffffe000u); };
    const int g = cf_lane / 4, t = cf_lane % 4;
    for (int e = 0; e < 4; ++e) {
        const int row = g + (e >= 2 ? 8 : 0), col = 2 * t + (e & 1);
        double p[8];
        for (int k = 0; k < 8; ++k) p[k] = (double)A(row, k) * B(k, col);   // exact: 11 x 11 significant bits
#ifdef CF_EMU_RN
        double s = d[e];
        for (int k = 0; k < 8; ++k) s += p[k];
        d[e] = (float)s;
#else
        for (int k = 0; k < 8; k += CF_EMU_BLOCK) d[e] = cf_block(d[e], p + k, CF_EMU_BLOCK);
#endif
    }
}
// wgmma (tf32h): m64nNk8 TF32 with A from registers, D += A B. Every thread of the warpgroup posts its A fragment and
// the B descriptor (slots alternating as cf_mma's), waits for the warpgroup, computes its accumulators. The PTX ISA's
// layouts: warp w of the warpgroup holds A rows 16 w .. 16 w + 15 as mma.m16n8k8's A (lane 4 g + t: a = A[g][t],
// A[g+8][t], A[g][t+4], A[g+8][t+4]); d[4 j + e] = D[16 w + g + 8 (e >= 2)][8 j + 2 t + (e & 1)]. B through its
// shared-memory descriptor, no swizzle, K-major: start address, leading byte offset (the k8 step's second 4-wide core
// matrix, along K), stride byte offset (the next 8 columns of N), each >> 4 in bits 0-13, 16-29, 32-45, bits 62-63 the
// swizzle (0); B[k][n] at start + (k / 4) lbo + (n / 8) sbo + 16 (n % 8) + 4 (k % 4) from the dynamic shared memory.
// Synchronous at issue: B read and D written when the instruction is issued, so the emulation cannot catch a missing
// wgmma.fence, commit or wait_group, a register set reloaded while a wgmma still reads it, or a missing
// fence.proxy.async (all no-ops here); ptxas' serialization notes and a GPU run are what check those.
struct cf_wg { unsigned a[2][128][4]; uint64_t desc[2][128]; cf_spin_barrier* bar; };
static cf_wg cf_wgs[8];
thread_local unsigned cf_wg_slot;
inline uint64_t __cvta_generic_to_shared(const void* p) {   // the byte offset in the dynamic shared memory
    return (uint64_t)(static_cast<const char*>(p) - reinterpret_cast<const char*>(cf_dynamic_smem.data()));
}
inline unsigned cf_tf32_rn(float x) {   // cvt.rn.tf32.f32: to nearest, ties to even
    unsigned u; std::memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
    return u;
}
template <int ACC, int NACC>
inline void cf_wgmma_rs(float (&d)[NACC], const unsigned (&a)[4], uint64_t desc) {
    const unsigned me = threadIdx.x % 128;
    cf_wg& w = cf_wgs[threadIdx.x / 128];
    const unsigned s = cf_wg_slot ^= 1u;
    for (int i = 0; i < 4; ++i) w.a[s][me][i] = a[i];
    w.desc[s][me] = desc;
    w.bar->arrive_and_wait();
    for (int i = 0; i < 128; ++i)
        if (w.desc[s][i] != desc) { std::fprintf(stderr, "wgmma: descriptors differ in the warpgroup\n"); std::abort(); }
    if (desc >> 62) { std::fprintf(stderr, "wgmma: a swizzled descriptor\n"); std::abort(); }
    const size_t start = (desc & 0x3fffu) << 4, lbo = ((desc >> 16) & 0x3fffu) << 4, sbo = ((desc >> 32) & 0x3fffu) << 4;
    auto B = [&](int k, int n) {
        const size_t off = start + (k / 4) * lbo + (n / 8) * sbo + 16 * (n % 8) + 4 * (k % 4);
        if (off + 4 > cf_dynamic_smem.size() * 4) { std::fprintf(stderr, "wgmma: B past shared memory\n"); std::abort(); }
        unsigned u; std::memcpy(&u, reinterpret_cast<const char*>(cf_dynamic_smem.data()) + off, 4);
        return cf_bits(u & 0xffffe000u);
    };
    auto A = [&](int row, int k) {
        const int r = row % 16;
        return cf_bits(w.a[s][32 * (row / 16) + (r % 8) * 4 + k % 4][(r >= 8) + 2 * (k >= 4)] & 0xffffe000u); };
    const int g = (me % 32) / 4, t = me % 4, row0 = 16 * (me / 32) + g;
    for (int j = 0; j < NACC / 4; ++j)
        for (int e = 0; e < 4; ++e) {
            const int row = row0 + (e >= 2 ? 8 : 0), col = 8 * j + 2 * t + (e & 1);
            double p[8];
            for (int k = 0; k < 8; ++k) p[k] = (double)A(row, k) * B(k, col);
            float c = ACC ? d[4 * j + e] : 0.0f;
#ifdef CF_EMU_RN
            double sum = c;
            for (int k = 0; k < 8; ++k) sum += p[k];
            c = (float)sum;
#else
            for (int k = 0; k < 8; k += CF_EMU_BLOCK) c = cf_block(c, p + k, CF_EMU_BLOCK);
#endif
            d[4 * j + e] = c;
        }
}
template <class K, class... A>
void cf_emulate_launch(K kernel, unsigned blocks, unsigned threads, size_t smem, const A&... args) {
    for (unsigned b = 0; b < blocks; ++b) {
        cf_dynamic_smem.assign(smem / 4, std::nanf(""));
        std::barrier<> bar(threads);
        std::vector<cf_spin_barrier*> warp_bars;
        for (unsigned w = 0; w < threads / 32; ++w) cf_warps[w].bar = warp_bars.emplace_back(new cf_spin_barrier(32));
        for (unsigned w = 0; w < threads / 128; ++w) cf_wgs[w].bar = warp_bars.emplace_back(new cf_spin_barrier(128));
        cf_barrier = &bar;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < threads; ++t)
            ts.emplace_back([&kernel, &args..., b, t, blocks, threads] {
                blockIdx.x = b; threadIdx.x = t; gridDim.x = blocks; blockDim.x = threads;
                cf_lane = t % 32; cf_wid = t / 32;
                kernel(args...);
                if (!cf_pending.empty()) { std::fprintf(stderr, "cp.async copies never waited for\n"); std::abort(); }
            });
        for (auto& th : ts) th.join();
        for (auto* p : warp_bars) delete p;
    }
}
"""

MAIN = r"""
static std::vector<float> read(const char* path, size_t n) {
    std::vector<float> v(n);
    FILE* f = std::fopen(path, "rb");
    if (!f || std::fread(v.data(), 4, n, f) != n) { std::fprintf(stderr, "cannot read %s\n", path); std::exit(2); }
    std::fclose(f);
    return v;
}
// argv: N Cin Cout D H W x.bin w.bin bias.bin|- y.bin p0.bin ...
int main(int argc, char** argv) {
    cf_family::FamilyArgs a = {};
    a.N = std::atoi(argv[1]); a.Cin = std::atoi(argv[2]); a.Cout = std::atoi(argv[3]);
    a.D = std::atoi(argv[4]); a.H = std::atoi(argv[5]); a.W = std::atoi(argv[6]);
    const bool three = a.D > 0;
    if (!three) a.D = 1;
    a.Do = three ? a.D - 2 : 1; a.Ho = a.H - 2; a.Wo = a.W - 2;
    const int taps = three ? 27 : 9;
    auto x = read(argv[7], (size_t)a.N * a.Cin * a.D * a.H * a.W);
    auto w = read(argv[8], (size_t)a.Cout * a.Cin * taps);
    std::vector<float> b;
    if (std::strcmp(argv[9], "-") != 0) b = read(argv[9], a.Cout);
    std::vector<std::vector<float>> ps;
    for (int i = 11; i < argc; ++i) {   // "path:count"
        const char* colon = std::strrchr(argv[i], ':');
        std::string path(argv[i], colon - argv[i]);
        ps.push_back(read(path.c_str(), std::atoi(colon + 1)));
    }
    const size_t ny = (size_t)a.N * family_out_channels() * a.Do * a.Ho * a.Wo;
    std::vector<float> y(ny, std::nanf(""));   // poisoned: an element the kernel does not write stays NaN
    a.x = x.data(); a.w = w.data(); a.bias = b.empty() ? nullptr : b.data(); a.y = y.data();
    for (size_t i = 0; i < ps.size(); ++i) a.params.p[i] = ps[i].data();
    const char* err = family_launch(a, nullptr);
    if (err) { std::printf("refused: %s\n", err); return 3; }
    FILE* f = std::fopen(argv[10], "wb");
    std::fwrite(y.data(), 4, ny, f);
    std::fclose(f);
    return 0;
}
"""

_LAUNCH = re.compile(r"(conv_\w+_kernel<[^>]*>)<<<([^,]+), ([^,]+), ([^,]+), stream>>>\(([^;]*)\);")
_PRIMITIVES = re.compile(r"// --- tensor-core primitives .*?// --- end of tensor-core primitives ---", re.S)
_HOST_PRIMITIVES = """inline unsigned to_tf32(float x) { return cf_tf32(x); }
inline void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) { cf_mma(d, a, b); }"""
_CP_ASYNC = re.compile(r"// --- cp.async primitives .*?// --- end of cp.async primitives ---", re.S)
_HOST_CP_ASYNC = """inline void cp_async16(float* d, const float* s, int n) { cf_cp_async(d, s, n, 16); }
inline void cp_async4(float* d, const float* s, int n) { cf_cp_async(d, s, n, 4); }
inline void cp_async_commit() {}
inline void cp_async_wait_all() { cf_cp_wait_all(); }"""
_WGMMA = re.compile(r"// --- wgmma primitives .*?// --- end of wgmma primitives ---", re.S)
_HOST_WGMMA = """inline void wgmma_fence() {}
inline void wgmma_commit() {}
template <int N> inline void wgmma_wait() {}
template <int R> inline void fence_operand(float (&)[R]) {}
inline void fence_proxy_async() {}
inline uint32_t opaque(uint32_t v) { return v; }
template <int ACC = 1>
inline void wgmma_rs_m64n64k8(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b) { cf_wgmma_rs<ACC>(d, a, desc_b); }
inline uint32_t tf32_bits(float v) { return cf_tf32_rn(v); }"""
_DYNAMIC_SMEM = "extern __shared__ __align__(16) float smem[];"


def host_source(cuda_source: str) -> str:
    """The generated CUDA source as host C++: the shim for cuda_runtime.h, each launch as a call of the emulator, the
    tensor-core, wgmma and cp.async primitives (PTX) as their host emulations, dynamic shared memory as the shim's
    buffer."""
    window = "conv_epilogue_window_kernel" in cuda_source
    src, n = _LAUNCH.subn(r"cf_emulate_launch(\1, \2, \3, \4, \5);", cuda_source)
    assert n == (2 if window else 1), "the template's launch lines changed: update _LAUNCH"
    src, n = _PRIMITIVES.subn(_HOST_PRIMITIVES, src)
    assert n == (1 if "conv_epilogue_mma_kernel" in src or window else 0), "the tensor-core primitives' markers changed"
    src, n = _CP_ASYNC.subn(_HOST_CP_ASYNC, src)
    assert n == (1 if window else 0), "the cp.async primitives' markers changed"
    src, n = _WGMMA.subn(_HOST_WGMMA, src)
    assert n == (1 if '"kernels/wgmma.cuh"' in src else 0), "the wgmma primitives' markers changed"
    assert src.count(_DYNAMIC_SMEM) == (1 if window else 0), "the dynamic shared memory's declaration changed"
    src = src.replace(_DYNAMIC_SMEM, "float* smem = cf_dynamic_smem.data();")
    return src.replace("#include <cuda_runtime.h>", SHIM) + MAIN


def _compile(tmp_path, name, cuda_source, defines=()):
    exe = tmp_path / name
    src = tmp_path / f"{name}.cpp"
    src.write_text(host_source(cuda_source))
    proc = subprocess.run(["g++", "-std=c++20", "-O2", "-fno-strict-aliasing", "-pthread", "-Wno-unknown-pragmas",
                           *(f"-D{d}" for d in defines),
                           str(src), "-o", str(exe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return exe


def _dump(path, t):
    np.ascontiguousarray(t.detach().float().numpy()).tofile(path)
    return str(path)


def run_emulated(exe, tmp_path, model, traced, x, tag="run"):
    conv = model.get_submodule(traced.conv.path)
    d = tmp_path / tag
    d.mkdir()
    dims = list(x.shape[2:]) if x.dim() == 5 else [0] + list(x.shape[2:])
    args = [str(exe), *map(str, [x.shape[0], x.shape[1], conv.out_channels, *dims]),
            _dump(d / "x", x), _dump(d / "w", conv.weight),
            _dump(d / "b", conv.bias) if conv.bias is not None else "-", str(d / "y")]
    for p in traced.params:
        t = T._getattr_path(model, p.name)
        args.append(f"{_dump(d / p.name, t)}:{t.numel()}")
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode == 3:
        return proc.stdout.strip()
    assert proc.returncode == 0, proc.stderr
    shape = TP.output_shape(traced, tuple(x.shape))
    return torch.from_numpy(np.fromfile(d / "y", dtype=np.float32)).reshape(shape)


class Extra(nn.Module):
    """Beyond the nine: a partial last pass of channels (Cout 20), no conv bias, a mean without keepdim, Cin 1."""
    def __init__(self, cin=3, cout=20, dims=2, bias=False):
        super().__init__()
        self.conv = (nn.Conv2d if dims == 2 else nn.Conv3d)(cin, cout, 3, bias=bias)
        self.k = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        y = torch.nn.functional.softplus(self.conv(x), beta=2.0, threshold=3.0)
        return torch.tanh(y.mean(dim=1)) * self.k


class MinTanhTanh(nn.Module):
    """Of the class but not the nine (written here after KernelBench's level2/25): a min over channels, then ops."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(5, 12, 3)

    def forward(self, x):
        x = torch.min(self.conv(x), dim=1, keepdim=True)[0]
        return torch.tanh(torch.tanh(x))


class MinAddMul(nn.Module):
    """After level2/31: a minimum with a tensor made in forward, a per-channel bias, a scale."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 16, 3)
        self.bias = nn.Parameter(torch.randn(16, 1, 1))

    def forward(self, x):
        x = torch.min(self.conv(x), torch.tensor(0.5))
        return (x + self.bias) * 2.0


def _small_shapes(prob):
    """Odd shapes small enough for the emulator: a row of 11 outputs (one thread's 8 and a tail of 3), batch 2,
    3-D depth 3; and a row of 3 (a thread with one partial group only)."""
    c = prob.in_channels
    if prob.dims == 2:
        return [(2, c, 7, 13), (1, c, 3, 5)]
    return [(1, c, 5, 6, 13), (2, c, 3, 3, 5)]


def _window_shape(prob_or_shape):
    """The window designs' extra shape: W a multiple of 4 (their 16-byte cp.async path; the shapes above take the
    4-byte one) and Wo = W - 2 past one 64-column tile (a second tile of 2 columns)."""
    c, dims = prob_or_shape
    return (1, c, 6, 68) if dims == 2 else (1, c, 4, 5, 68)


def shapes_for(key, design):
    prob = M.FAMILY.get(key)
    shapes = _small_shapes(prob) if prob else EXTRA[key][1]
    if "conv_epilogue_window.cuh" in (TP.DESIGNS[design].file, TP.DESIGNS[design].base):
        shapes = shapes + [_window_shape((shapes[0][1], len(shapes[0]) - 2))]
    return shapes


EXTRA = {"cout20_mean": (Extra(), [(2, 3, 6, 12)]),
         "cin1_3d_bias": (Extra(cin=1, cout=9, dims=3, bias=True), [(1, 1, 4, 5, 11)]),
         "min_tanh_tanh": (MinTanhTanh(), [(2, 5, 5, 14)]),
         "min_add_mul": (MinAddMul(), [(1, 4, 6, 19)])}
_DIMS = {k: p.dims for k, p in M.FAMILY.items()} | {k: len(v[1][0]) - 2 for k, v in EXTRA.items()}
CASES = [(k, d) for k in list(M.FAMILY) + list(EXTRA) for d in TP.DESIGNS if TP.takes(d, _DIMS[k])]


@pytest.fixture(scope="module")
def executables(tmp_path_factory):
    """Every case compiled (in parallel; traced first, here: torch.fx's tracer is not thread-safe)."""
    tmp = tmp_path_factory.mktemp("emulated")
    models = {k: M.FAMILY[k].make_model(seed=0) for k in M.FAMILY} | {k: v[0] for k, v in EXTRA.items()}
    traced = {k: T.trace(m) for k, m in models.items()}
    sources = {(k, d): TP.source(traced[k], design=d) for k, d in CASES}
    with ThreadPoolExecutor() as pool:
        exes = dict(zip(sources, pool.map(lambda c: _compile(tmp, f"{c[0]}_{c[1]}", sources[c]), sources)))
    return {c: (exes[c], models[c[0]], traced[c[0]]) for c in sources}


@pytest.mark.parametrize("key,design", CASES, ids=[f"{k}-{d}" for k, d in CASES])
@torch.no_grad()
def test_the_generated_kernel_meets_its_bound_on_the_cpu(key, design, executables, tmp_path):
    exe, model, traced = executables[(key, design)]
    prob = M.FAMILY.get(key)
    shapes = shapes_for(key, design)
    for i, shape in enumerate(shapes):
        for seed, dist in V.TRIALS:
            if prob is not None:
                V.reseed(model, prob, seed)
                x = prob.make_input(shape, seed=seed, dist=dist)
            else:
                torch.manual_seed(seed)
                for p in model.parameters():
                    p.copy_(torch.randn_like(p))
                x = torch.randn(shape) if dist == "randn" else torch.rand(shape)
            y = run_emulated(exe, tmp_path, model, traced, x, tag=f"{i}_{seed}")
            m = V.compare(y, P.ground_truth(model, x))
            assert V.within_bounds(m, TP.precision(design)), (shape, seed, dist, m)


def test_the_emulation_catches_a_wrong_kernel(executables, tmp_path):
    """The check above can fail: the same source with the tail of a thread's pixels left unwritten, a channel's weights
    read from the next channel, two rows of an mma's A fragment swapped, a block's last pixel unwritten, 3xTF32 with
    one of its small products dropped, tf32h's wgmma operands misplaced (a tap, a pixel pair, the descriptor's strides)
    or read before they landed: each misses its bound (NaN left by the poisoning, or wrong values). And the
    3xTF32 partial sums are needed: with every MMA of conv2d's K = 576 in one accumulator, the modelled truncating adds
    miss the FP32 bound (the emulator's model is calibrated to notebook 04's GPU, which missed it so)."""
    prob = M.get("57")
    model = prob.make_model(seed=0)
    traced = T.trace(model)
    src = TP.source(traced)
    mma = TP.source(traced, design="tf32")
    mma3 = TP.source(traced, design="3xtf32")
    long_k = M.get("conv2d")
    long_model = long_k.make_model(seed=0)
    long_traced = T.trace(long_model)
    long3 = TP.source(long_traced, design="3xtf32")
    win = TP.source(traced, design="tf32w")
    win3 = TP.source(traced, design="3xtf32w")
    long3w = TP.source(long_traced, design="3xtf32w")
    hop, long_hop = TP.source(traced, design="tf32h"), TP.source(long_traced, design="tf32h")
    broken = {   # name: (the mutated source, the source it came from, its bound, the problem)
        "tail": (src.replace("if (p >= valid) break;", "if (p >= valid - 1) break;"), src, "fp32", prob),
        "channel": (src.replace("co < COUT ? __ldg(a.w + ((long long)co * CIN",
                                "co < COUT ? __ldg(a.w + ((long long)(co + 1) % COUT * CIN"), src, "fp32", prob),
        "fragment": (mma.replace("{As[0][r + g][ks + t], As[0][r + g + 8][ks + t],",
                                 "{As[0][r + g + 8][ks + t], As[0][r + g][ks + t],"), mma, "tf32", prob),
        "last_block_rows": (mma.replace("if (co >= COUT || m >= P) continue;", "if (co >= COUT || m + 1 >= P) continue;"),
                            mma, "tf32", prob),
        "small_product": (mma3.replace("mma_tf32(part[j], as, bf);   // x_small w_big", ""), mma3, "3xtf32", prob),
        "no_partial_sums": (long3.replace("mma_tf32(part[j],", "mma_tf32(acc[j],"), long3, "3xtf32", long_k),
        # the window designs: a stage read before its cp.async copies are waited for (the shim does them at the wait),
        # the last output channel unwritten, a tap's column offset lost, the second Cout slice reading the first's
        # weights, 3xtf32w without a small product or without its partial sums
        "window_no_wait": (win.replace("cp_async_wait_all();                       // this thread's", "// "), win,
                           "tf32", prob),
        "window_last_channel": (win.replace("if (c >= COUT) break;", "if (c + 1 >= COUT) break;"), win, "tf32", prob),
        "window_tap": (win.replace("{__float_as_uint(xk[ky * kXRS + kx + 8 * j]),",
                                   "{__float_as_uint(xk[ky * kXRS + 8 * j]),"), win, "tf32", prob),
        "window_slice": (win3.replace("sw_res + (cc * G::CO_SPLIT + hc) * G::W_SLICE",
                                      "sw_res + (cc * G::CO_SPLIT) * G::W_SLICE"), win3, "3xtf32", prob),
        "window_small_product": (win3.replace("for (int i = 0; i < G::MT; ++i) mma_tf32(part[i][j], as[i], bb[j]);",
                                              ""), win3, "3xtf32", prob),
        "window_no_partial_sums": (long3w.replace("mma_tf32(part[i][j],", "mma_tf32(acc[i][jh + j],"), long3w,
                                   "3xtf32", long_k),
        # tf32h: a tap's weights at the transposed tap's descriptor offset, a pixel pair parked swapped, the
        # descriptor's lbo and sbo exchanged, the stage's weights (conv2d's 8 chunks) read before their copies landed
        "tf32h_tap": (hop.replace("desc_at(wlo, whi, (r * KS + s) * WSTEP)", "desc_at(wlo, whi, (s * KS + r) * WSTEP)"),
                      hop, "tf32", prob),
        "tf32h_pairs": (hop.replace("make_float2(acc[o][4 * j + e] + b, acc[o][4 * j + e + 2] + b)",
                                    "make_float2(acc[o][4 * j + e + 2] + b, acc[o][4 * j + e] + b)"), hop, "tf32", prob),
        "tf32h_lbo_sbo": (hop.replace("kHKHalf, CORE_MATRIX_BYTES)", "CORE_MATRIX_BYTES, kHKHalf)"), hop, "tf32", prob),
        "tf32h_no_wait": (long_hop.replace("cp_async_wait_all();                       // this thread's", "// "),
                          long_hop, "tf32", long_k),
    }
    for name, (text, original, bound, p) in broken.items():
        assert text != original, f"the {name} mutation no longer applies to the template"
        exe = _compile(tmp_path, f"broken_{name}", text)
        m_, t_ = (model, traced) if p is prob else (long_model, long_traced)
        x = p.make_input(_small_shapes(p)[0], seed=1, dist="randn")
        m = V.compare(run_emulated(exe, tmp_path, m_, t_, x, tag=name), P.ground_truth(m_, x))
        assert not V.within_bounds(m, bound), (name, m)


def test_the_launch_refuses_other_channel_counts(executables, tmp_path):
    exe, model, traced = executables[("kb1", "tf32")]
    x = torch.rand(1, 63, 5, 5)      # the kernel was generated for in_channels = 64
    big = nn.Conv2d(63, 128, 3)
    model.conv, saved = big, model.conv
    try:
        out = run_emulated(exe, tmp_path, model, traced, x, tag="refused")
    finally:
        model.conv = saved
    assert out == "refused: in_channels differ from the ones this kernel was generated for"
