"""The wgmma rate microbenchmark (kernels/micro/wgmma_rate.cu): how many TF32 FLOP an SM retires a cycle when it
issues nothing but wgmmas of step 04's shapes, register-A (04d) or shared-memory A (04b/04c), N = 32 to 256.

`measure` runs on an H100/H200 (scripts/wgmma_rate.py writes its JSON); `table` reads a recorded JSON anywhere.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from . import build as B
from .registry import KERNELS
from .traffic import TF32_FLOP_PER_SM_CYCLE

SOURCE = KERNELS / "micro" / "wgmma_rate.cu"
MODES = {0: "RS", 1: "SS", 2: "RS concat", 3: "RS, A loaded", 4: "RS, A loaded, 3 sets", 5: "RS + FFMA warpgroup",
         6: "SS + FFMA warpgroup", 7: "RS + GELU warpgroup", 8: "RS concat + FFMA warpgroup",
         9: "RS + one FFMA chain warpgroup", 10: "RS + shared-load warpgroup", 11: "SS + shared-load warpgroup",
         12: "RS concat + shared-load warpgroup", 13: "RS concat + global-store warpgroup",
         14: "RS concat + GELU warpgroup", 15: "RS concat + shared-store warpgroup",
         16: "RS concat + epilogue warpgroup", 17: "RS + global-store warpgroup", 18: "SS + global-store warpgroup"}

GLUE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
int rate_cases();
const char* rate_case(int c, int* mode, int* n, int* wgs, int* g, int* accs);
const char* rate_launch(int c, long long* cycles, float* sink, int iters, int blocks, cudaStream_t stream);

std::vector<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int64_t>> cases() {
    std::vector<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int64_t>> out;
    for (int c = 0; c < rate_cases(); ++c) {
        int mode, n, wgs, g, accs;
        const char* name = rate_case(c, &mode, &n, &wgs, &g, &accs);
        out.emplace_back(name, mode, n, wgs, g, accs);
    }
    return out;
}
void run_case(int64_t c, at::Tensor& cycles, at::Tensor& sink, int64_t iters, int64_t blocks) {
    TORCH_CHECK(cycles.is_cuda() && cycles.scalar_type() == at::kLong, "cycles: a CUDA int64 tensor");
    TORCH_CHECK(sink.is_cuda() && sink.scalar_type() == at::kFloat, "sink: a CUDA float32 tensor");
    const char* err = rate_launch((int)c, reinterpret_cast<long long*>(cycles.data_ptr<int64_t>()), sink.data_ptr<float>(),
                                  (int)iters, (int)blocks, c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == nullptr, err ? err : "");
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""


def source_text() -> str:
    """What nvcc compiles: the headers the sm_90a kernels get (as build.kernel_source prepends them), then the file."""
    heads = "\n".join(B._headers_text(h) for h in ("conv_args.h", "common.cuh", "wgmma.cuh"))
    return f'{heads}\n#line 1 "kernels/micro/wgmma_rate.cu"\n{SOURCE.read_text()}'


def build(verbose: bool = False):
    """load_inline for sm_90a (cached under build/convfuse_micro_wgmma_rate)."""
    import torch.utils.cpp_extension as ext

    B.require_toolchain()
    os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"
    d = B.BUILD_DIR / "convfuse_micro_wgmma_rate"
    d.mkdir(parents=True, exist_ok=True)
    return ext.load_inline(name="convfuse_micro_wgmma_rate", cpp_sources=[GLUE], cuda_sources=[source_text()],
                           functions=["cases", "run_case"], extra_cflags=["-O3"],
                           extra_cuda_cflags=list(B.NVCC_FLAGS) + B._nvcc_torch_stub(), build_directory=str(d),
                           verbose=verbose)


def flop_per_group(mode: int, n: int, g: int) -> int:
    """TF32 FLOP of one warpgroup's group of wgmmas (CONCAT: each of the g an m64n64k8 and an m64n32k8)."""
    per = 2 * 64 * n * 8 + (2 * 64 * 32 * 8 if MODES[mode].startswith("RS concat") else 0)
    return g * per


def measure(mod, iters: int = 3996, repeats: int = 5, log=print) -> list[dict]:
    """Every case on one block per SM (`iters` groups a warpgroup, a multiple of 6), `repeats` launches: the SM's FLOP a cycle (median over launches of the
    slowest warpgroup's cycles) against TF32_FLOP_PER_SM_CYCLE."""
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    sink = torch.zeros(1, device="cuda")
    out = []
    for c, (name, mode, n, wgs, g, accs) in enumerate(mod.cases()):
        cycles = torch.zeros(sms * wgs, dtype=torch.int64, device="cuda")
        mod.run_case(c, cycles, sink, 10, sms)                      # warm-up
        worst = []
        for _ in range(repeats):
            mod.run_case(c, cycles, sink, iters, sms)
            torch.cuda.synchronize()
            worst.append(int(cycles.max()))
        cyc = sorted(worst)[len(worst) // 2]
        flop = wgs * iters * flop_per_group(mode, n, g)
        rec = {"case": name, "mode": MODES[mode], "n": n, "warpgroups": wgs, "group": g, "accumulators": accs,
               "iters": iters, "cycles": cyc, "flop_per_cycle": flop / cyc,
               "of_tf32_rate": flop / cyc / TF32_FLOP_PER_SM_CYCLE}
        log(f"[wgmma_rate] {name}: {rec['flop_per_cycle']:.0f} FLOP a cycle an SM, {rec['of_tf32_rate']:.1%}")
        out.append(rec)
    return out


def table(path: Path) -> pd.DataFrame:
    """A recorded run (JSON: {"env": ..., "cases": [...]}) as a table, one row a case."""
    cases = json.loads(Path(path).read_text())["cases"]
    t = pd.DataFrame(cases).set_index("case")
    return t[["mode", "n", "warpgroups", "group", "flop_per_cycle", "of_tf32_rate"]].rename(
        columns={"flop_per_cycle": "FLOP a cycle an SM", "of_tf32_rate": "× the dense TF32 rate"})
