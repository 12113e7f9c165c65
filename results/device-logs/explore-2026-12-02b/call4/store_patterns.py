"""Session helper (untracked): how fast can one write conv3d's output (1.76 GB, [128][64][14*62*62] FP32) with
tensor copies from shared memory, by the geometry of what each warp writes? Persistent grid as 04b (132 blocks x
4 warpgroups x 4 warps; tiles dealt block-major); per tile each warp waits for its last copy to have read its box
(cp.async.bulk.wait_group.read 0, as 04b), then copies a box of 16 channel rows out. No arithmetic, no loads: the
box holds garbage. Modes:
  A  04b: 62-pixel tiles, a box of 16 x 60 pixels 16-byte aligned + the left-out pair per row as an 8-byte store
  B  A without the pair stores (those 8 bytes per row never written)
  C  124-pixel tiles (two output rows, 496 B), a box of 16 x 124: every row 16-byte aligned, no pairs
  D  64-pixel tiles (256 B, sector aligned), box 16 x 64 (the plane's last tile clipped)
  E  128-pixel tiles (512 B), box 16 x 128 (clipped)
  H  each warp's box is 8 KB contiguous (16 consecutive 128-pixel rows): the ideal tensor-copy stream
"""
import sys
import torch
from torch.utils.cpp_extension import load_inline

CUDA = r'''
#include <cuda.h>
#include <cudaTypedefs.h>
#include <torch/extension.h>

__device__ __forceinline__ uint32_t saddr(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__global__ void __launch_bounds__(512, 1) pattern(const __grid_constant__ CUtensorMap map, float* y, long long tiles,
        int tpn, int step, int pairs, int hmode, long long plane) {
    extern __shared__ __align__(128) float sm[];
    const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    float* box = sm + (threadIdx.x >> 5) * 16 * 128;
    for (int i = threadIdx.x; i < 16 * 16 * 128; i += 512) sm[i] = 1.0f;
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    for (long long g = (long long)blockIdx.x * 4 + wg; g < tiles; g += (long long)gridDim.x * 4) {
        if (lane == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
        __syncwarp();
        int c0, c1, c2;
        int s = 0, n = 0, x0 = 0;
        if (hmode) { c0 = 0; c1 = (int)(g * 64 + warp * 16); c2 = 0; }
        else {
            n = (int)(g / tpn); x0 = (int)(g % tpn) * step;
            s = pairs >= 0 ? (x0 & 2) : 0;
            c0 = x0 + s; c1 = 16 * warp; c2 = n;
        }
        if (pairs == 1 && lane < 16)
            __stcs(reinterpret_cast<float2*>(y + ((long long)n * 64 + 16 * warp + lane) * plane + x0 + (s ? 0 : 60)),
                   make_float2(2.0f, 2.0f));
        if (lane == 0) {
            asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                         :: "l"(reinterpret_cast<uint64_t>(&map)), "r"(saddr(box)), "r"(c0), "r"(c1), "r"(c2), "r"(0)
                         : "memory");
            asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        }
    }
    if (lane == 0) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
static PFN_cuTensorMapEncodeTiled_v12000 enc() {
    void* fn = nullptr; cudaDriverEntryPointQueryResult q;
    TORCH_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}
void launch(torch::Tensor y, std::string mode) {
    const long long N = 128, C = 64, P = 14 * 62 * 62;
    TORCH_CHECK(y.numel() == N * C * P);
    CUtensorMap map;
    cuuint64_t dims[4]; cuuint64_t str[3]; cuuint32_t box[4] = {0, 16, 1, 1}, es[4] = {1, 1, 1, 1};
    long long tiles; int tpn = 0, step = 0, pairs = 0, hmode = 0;
    if (mode == "H") {
        dims[0] = 128; dims[1] = N * C * P / 128; dims[2] = 1; dims[3] = 1; box[0] = 128; hmode = 1;
        tiles = (long long)dims[1] / 64;
    } else {
        dims[0] = P; dims[1] = C; dims[2] = N; dims[3] = 1;
        if (mode == "A" || mode == "B") { step = 62; box[0] = 60; pairs = mode == "A" ? 1 : 0; }
        else if (mode == "C") { step = 124; box[0] = 124; pairs = -1; }
        else if (mode == "D") { step = 64; box[0] = 64; pairs = -1; }
        else { step = 128; box[0] = 128; pairs = -1; }
        tpn = (int)((P + step - 1) / step); tiles = N * tpn;
    }
    str[0] = dims[0] * 4; str[1] = dims[0] * dims[1] * 4; str[2] = dims[0] * dims[1] * dims[2] * 4;
    TORCH_CHECK(enc()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, y.data_ptr(), dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS);
    const int smem = 16 * 16 * 128 * 4;
    static bool once = [] { return cudaFuncSetAttribute(pattern, cudaFuncAttributeMaxDynamicSharedMemorySize, 16 * 16 * 128 * 4) == cudaSuccess; }();
    TORCH_CHECK(once);
    pattern<<<132, 512, smem, 0>>>(map, y.data_ptr<float>(), tiles, tpn, step, pairs, hmode, P);
    TORCH_CHECK(cudaGetLastError() == cudaSuccess);
}
'''
CPP = "void launch(torch::Tensor y, std::string mode);"


def med(fn, n=30):
    for _ in range(5): fn()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]


def main():
    m = load_inline("store_patterns", CPP, cuda_sources=CUDA, functions=["launch"], verbose=False,
                    extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a"])
    y = torch.empty(128 * 64 * 14 * 62 * 62, device="cuda")
    nb = y.numel() * 4
    if sys.argv[1:2] == ["ncu"]:               # one launch of each named mode (and fill_), for ncu's counters
        y.fill_(0.5)
        for mode in sys.argv[2:]:
            m.launch(y, mode)
        torch.cuda.synchronize()
        return
    # coverage check: modes A, C, D, E, H must write every element (the box holds 1.0, the pairs 2.0)
    for mode in "ACDEH":
        y.fill_(float("nan")); m.launch(y, mode); torch.cuda.synchronize()
        print(f"mode {mode}: unwritten {torch.isnan(y).sum().item()} of {y.numel()}", flush=True)
    for r in range(2):
        print(f"fill_: {med(lambda: y.fill_(0.5)):.3f} ms", flush=True)
        for mode in "ABCDEH":
            ms = med(lambda: m.launch(y, mode))
            print(f"mode {mode}: {ms:.3f} ms  {nb / ms / 1e9:.2f} TB/s", flush=True)


if __name__ == "__main__":
    main()
