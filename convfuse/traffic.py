"""FLOPs and DRAM bytes per variant, GPU ceilings, and the roofline prediction — the one place for them.

Bytes are counted as the code moves them: each kernel a variant launches, its reads and writes of
whole tensors in DRAM (eager: the conv writes y, then every elementwise op reads and writes it again).
Re-reads that tiling sends to L2 are counted separately (`l2_reread_factor`); the DRAM model assumes
L2 catches them, which Nsight Compute can check (`dram_bytes_measured` in a results record).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from . import problems as P

FLOAT_BYTES = 4

# FLOPs per output element of the epilogue, counting erf as one operation (an approximation: erff is
# ~10 FMAs on the CUDA cores, but it overlaps memory traffic in every variant of the study).
# conv2d: bias add, x*multiplier, LeakyReLU (select+mul), GELU (mul, erf, add, mul, mul).
# conv3d: bias add, leaky (select+mul), + sum, clamp (2 compares), GELU (5).
EPILOGUE_FLOPS = {"conv2d": 1 + 1 + 2 + 5, "conv3d": 1 + 2 + 1 + 2 + 5}


# Tensor-core passes over K, in units of one TF32 pass: 3xTF32 issues three TF32 MMAs per product; the
# TF32 + BF16-correction scheme (convfuse/splits.py; conv3d 04b_wgmma_tf32bf16) one TF32 pass and one BF16
# pass of twice the K, and a BF16 k16 MMA takes the tensor core as long as a TF32 k8 one. 3xFP16 (conv2d
# 04c_ws_3xfp16, conv3d 04b_wgmma_3xfp16): three FP16 products, each at twice the TF32 rate. FP16 (conv2d
# 04c_ws_fp16, conv3d 04b_wgmma_fp16): one FP16 product, TF32's precision at twice its rate.
TENSOR_PASSES = {"tf32": 1, "fp16": 0.5, "3xtf32": 3, "tf32+bf16": 2, "3xfp16": 1.5}


@dataclass(frozen=True)
class GPU:
    key: str
    name: str
    dram_gbps: float        # GB/s
    fp32_tflops: float      # FP32 CUDA cores, dense
    tf32_tflops: float      # TF32 tensor cores, dense (datasheets print the 2:4-sparse figure, twice this)
    source: str

    @property
    def tflops(self) -> dict:
        # A split scheme of P tensor passes (3xTF32: three TF32 MMAs per product): 1/P of the TF32 rate at best.
        return {"fp32": self.fp32_tflops,
                **{scheme: self.tf32_tflops / passes for scheme, passes in TENSOR_PASSES.items()}}


A100_SRC = ("NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): "
            "FP32 19.5 TFLOPS, TF32 156 TFLOPS dense (312 sparse), 1,555 GB/s (40GB) / 2,039 GB/s (80GB SXM)")
H100_SRC = ("NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100): SXM FP32 67, "
            "TF32 989 sparse = 494.5 dense TFLOPS, 3.35 TB/s; PCIe FP32 51, TF32 756 sparse = 378 dense, 2.0 TB/s")
H200_SRC = ("NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200): SXM FP32 67, "
            "TF32 989 sparse = 494.5 dense TFLOPS, 4.8 TB/s HBM3e")

DATASHEET_GPUS = (
    GPU("a100-40gb", "A100 40GB SXM", 1555, 19.5, 156, A100_SRC),
    GPU("a100-80gb", "A100 80GB SXM", 2039, 19.5, 156, A100_SRC),
    GPU("h100-sxm", "H100 SXM 80GB", 3350, 67, 494.5, H100_SRC),
    GPU("h100-pcie", "H100 PCIe 80GB", 2000, 51, 378, H100_SRC),
    GPU("h200", "H200 SXM 141GB", 4800, 67, 494.5, H200_SRC),
)


# Eager and torch.compile times KernelBench publishes for these two problems at today's shapes (its
# repository's results/timing/): the only H100 measurements there are, anchors for the H100 predictions.
KERNELBENCH_PUBLISHED_MS = {
    "h100-sxm": {"source": "KernelBench results/timing: H100 80GB HBM3, torch 2.9, L2 flushed",
                 "conv2d": {"eager": 6.08, "compile": 2.79}, "conv3d": {"eager": 11.4, "compile": 10.0}},
    "h100-pcie": {"source": "KernelBench results/timing: H100 PCIe, torch 2.5",
                  "conv2d": {"eager": 9.22, "compile": 4.31}, "conv3d": {"eager": 16.7, "compile": 8.63}},
}


def datasheet(key: str) -> GPU:
    for g in DATASHEET_GPUS:
        if g.key == key:
            return g
    raise ValueError(f"unknown GPU {key!r}; known: {', '.join(g.key for g in DATASHEET_GPUS)}")


def measured_gpu(env: dict) -> GPU:
    """The ceilings a recorded run measured on its own GPU (copy bandwidth, FP32/TF32 matmul)."""
    return GPU(f"{env['slug']}-measured", f"{env['gpu']} (measured)", env["copy_gbps"], env["fp32_tflops"],
               env["tf32_tflops"], f"measured in the run of {env.get('date', '?')}: device copy, 8192^3 matmul")


# --- counts ---------------------------------------------------------------------------------------
def _numel(shape) -> int:
    return math.prod(shape)


def shapes(problem: P.Problem, input_shape=None):
    x = tuple(input_shape or problem.input_shape)
    return x, problem.output_shape(x)


def gemm_dims(problem: P.Problem, input_shape=None) -> tuple[int, int, int]:
    """The implicit GEMM of the conv, C[M x N] = A[M x K] . B[K x N]: M = Cout, N = output pixels (all
    images), K = Cin . k^d."""
    y = problem.output_shape(input_shape)
    return problem.out_channels, y[0] * _numel(y[2:]), problem.in_channels * problem.kernel_size ** problem.dims


def conv_flops(problem: P.Problem, input_shape=None) -> int:
    _, y = shapes(problem, input_shape)
    return 2 * _numel(y) * problem.in_channels * problem.kernel_size ** problem.dims


def flops(problem: P.Problem, input_shape=None) -> int:
    """The model's FLOPs: every variant computes the same function."""
    _, y = shapes(problem, input_shape)
    return conv_flops(problem, input_shape) + EPILOGUE_FLOPS[problem.key] * _numel(y)


# How many multiplies an algorithm's GEMMs do for the conv, as a share of the direct conv's (conv_flops). Winograd
# F(2x2, 3x3) computes a 2x2 block of outputs from 16 products per (Cin, Cout) where the direct conv takes 36; its
# transforms are additions, counted as neither. `flops` stays the problem's figure, in which every variant's speed is
# quoted (an "effective" rate for Winograd); `work_share` turns it into the work a variant really does, for the
# roofline and the compute floors.
ALGORITHM_WORK = {"direct": 1.0, "winograd_f2x2_3x3": 16 / 36}


def _variant(problem: P.Problem, variant: str):
    from . import registry as R

    return R.get(problem.key, variant)


def algorithm(problem: P.Problem, variant: str) -> str:
    return _variant(problem, variant).algorithm


def conv_work_flops(problem: P.Problem, variant: str, input_shape=None) -> float:
    """The multiply-adds (x 2) of the variant's conv: the direct conv's for every variant but Winograd."""
    return conv_flops(problem, input_shape) * ALGORITHM_WORK[algorithm(problem, variant)]


def work_share(problem: P.Problem, variant: str, input_shape=None) -> float:
    """The variant's FLOPs over the problem's (`flops`): 1.0 for every direct conv, less for Winograd."""
    ratio = ALGORITHM_WORK[algorithm(problem, variant)]
    if ratio == 1.0:
        return 1.0
    f = flops(problem, input_shape)
    return (conv_work_flops(problem, variant, input_shape) + f - conv_flops(problem, input_shape)) / f


def weight_bytes(problem: P.Problem) -> int:
    return FLOAT_BYTES * (problem.out_channels * problem.in_channels * problem.kernel_size ** problem.dims
                          + 2 * problem.out_channels)


def floor_bytes(problem: P.Problem, input_shape=None) -> int:
    """Fewest DRAM bytes any implementation moves: the input read once, the output written once."""
    x, y = shapes(problem, input_shape)
    return FLOAT_BYTES * (_numel(x) + _numel(y))


# Eager's elementwise passes after the conv, in order (PyTorch adds the conv bias in its own pass on
# the cuDNN NCHW path; notebook 00's profiler table shows the kernels).
ELEMENTWISE_OPS = {
    "conv2d": ("bias add", "x * multiplier", "LeakyReLU", "GELU"),
    "conv3d": ("bias add", "leaky_relu", "+ sum_tensor", "clamp", "GELU"),
}

# How cuDNN runs the NCHW conv, read off the profiler on the H200 (cuDNN 9.19, torch 2.11): with TF32
# allowed, conv2d takes an NHWC tensor-core kernel and transposes x in and y out around it; conv3d, and
# conv2d with TF32 off, run one FP32 kernel straight on NCHW. Another GPU or cuDNN may choose
# otherwise; `make profile` measures the bytes of each recorded run (`dram_bytes_measured`).
CUDNN_TRANSPOSES = {"conv2d": True, "conv3d": False}
# ... and in which arithmetic: the TF32 tensor-core kernel for conv2d, an FP32 kernel for conv3d (the
# channels_last path takes a TF32 NHWC kernel for both).
CUDNN_MATH = {"conv2d": "tf32", "conv3d": "fp32"}
_CUDNN_DEFAULT_PATH = ("eager", "compile", "cudnn_conv", "01_epilogue_fused", "02_epilogue_vec3d")


def compute_precision(problem: P.Problem, variant: str, precision: str) -> str:
    """The arithmetic the variant's conv really runs in: a variant's class says what is allowed
    (PyTorch allows TF32), cuDNN decides what it uses."""
    return CUDNN_MATH[problem.key] if variant in _CUDNN_DEFAULT_PATH else precision


def kernels(problem: P.Problem, variant: str, input_shape=None) -> list[tuple[str, int, int]]:
    """[(kernel, DRAM bytes read, DRAM bytes written)] for one call of the variant, as its code runs."""
    x, y = shapes(problem, input_shape)
    bx, by, bw = FLOAT_BYTES * _numel(x), FLOAT_BYTES * _numel(y), weight_bytes(problem)
    passes = [(op, by, by) for op in ELEMENTWISE_OPS[problem.key]]

    def cudnn_nchw(tf32=True):
        if tf32 and CUDNN_TRANSPOSES[problem.key]:
            return [("cuDNN x NCHW->NHWC", bx, bx), ("cuDNN conv (NHWC, TF32)", bx + bw, by),
                    ("cuDNN y NHWC->NCHW", by, by)]
        return [("cuDNN conv (NCHW)", bx + bw, by)]

    nhwc_conv = ("cuDNN conv (NHWC)", bx + bw, by)
    if variant == "eager":
        return cudnn_nchw() + passes
    if variant == "eager_fp32":
        return cudnn_nchw(tf32=False) + passes
    if variant == "channels_last":
        return [("x to channels_last", bx, bx), nhwc_conv] + passes
    if variant == "compile":
        if CUDNN_TRANSPOSES[problem.key]:   # inductor transposes x itself and fuses y's transpose in
            return [("inductor x to NHWC", bx, bx), nhwc_conv, ("inductor fused epilogue (NHWC->NCHW)", by, by)]
        return cudnn_nchw() + [("inductor fused bias+epilogue", by, by)]
    if variant == "cudnn_fused":
        return [("cuDNN fused graph (NHWC conv+epilogue)", bx + bw, by)]
    if variant == "cudnn_fused_nchw":
        return [("x NCHW->NHWC", bx, bx), ("cuDNN fused graph (NHWC conv+epilogue)", bx + bw, by),
                ("y NHWC->NCHW", by, by)]
    if variant == "cudnn_conv":
        return cudnn_nchw() + [passes[0]]
    if variant in ("01_epilogue_fused", "02_epilogue_vec3d"):
        return cudnn_nchw() + [("fused bias+epilogue", by, by)]
    if algorithm(problem, variant) == "winograd_f2x2_3x3":
        # V = G g G^T for 16 patch positions x Cin x Cout, big and small parts in 3xTF32, written once by a pre-pass
        # and read once from DRAM (every block streams it again from L2)
        parts = 2 if _variant(problem, variant).precision == "3xtf32" else 1
        wt = FLOAT_BYTES * 16 * problem.in_channels * problem.out_channels * parts
        return [("Winograd weight transform (pre-pass)", bw, wt),
                ("fused conv+epilogue (Winograd)", bx + wt + FLOAT_BYTES * 2 * problem.out_channels, by)]
    if variant.startswith(("03", "04")):
        return [("fused conv+epilogue", bx + bw, by)]
    raise ValueError(f"no traffic model for variant {variant!r}")


def kernel_category(name: str) -> str:
    """What a kernel of `kernels()` is, for charts: the names above are written to be read this way."""
    if name.startswith("cuDNN fused graph"):
        return "fused conv+epilogue (one kernel)"
    if "pre-pass" in name:
        return "weight pre-pass"
    if name.startswith("fused conv"):
        return "fused conv+epilogue (one kernel)"
    if "fused" in name:
        return "fused epilogue (one pass)"
    if name.startswith("cuDNN conv"):
        return "conv (cuDNN)"
    if "->" in name or " to " in name:
        return "layout conversion"
    return "eager elementwise pass"


def model_bytes(problem: P.Problem, variant: str, input_shape=None) -> int:
    return sum(r + w for _, r, w in kernels(problem, variant, input_shape))


# Why a variant's measured DRAM bytes (Nsight Compute) differ from the model by more than 10 %, where the
# measurement showed it; the model keeps counting what the code must move, and this says what else moved.
MODEL_CAVEATS = {
    ("conv3d", "03a_seed_fused"): (
        "the seed's 16x8x2 thread blocks cover 62-wide output rows in 16-float pieces that start at "
        "arbitrary 8-byte offsets, so most 32-byte sectors at a piece's ends are written by two blocks at "
        "different times: ncu counts 2.34 GB written for 1.76 GB of output. And x, read once per output "
        "channel by 64 blocks that are not co-resident, comes from DRAM 5 times (1.37 GB read for 0.27 GB)."),
}


def bytes_deviations(records, threshold: float = 0.10) -> list[dict]:
    """Records whose measured DRAM bytes differ from the model by more than `threshold`, with the
    reason where MODEL_CAVEATS knows it."""
    out = []
    for r in records:
        meas = r.get("dram_bytes_measured")
        if not meas:
            continue
        model = model_bytes(P.get(r["problem"]), r["variant"])
        ratio = meas / model
        if abs(ratio - 1) > threshold:
            out.append({"problem": r["problem"], "variant": r["variant"], "model_gb": model / 1e9,
                        "measured_gb": meas / 1e9, "ratio": ratio,
                        "why": MODEL_CAVEATS.get((r["problem"], r["variant"]), "not explained yet")})
    return out


# How many times the fused kernels request each input element from L2 (tile halos, channel groups).
def l2_reread_factor(problem: P.Problem, variant: str) -> float | None:
    if variant == "03a_seed_fused":
        if problem.key == "conv2d":
            return (10 * 10) / (8 * 8) * (problem.out_channels / 4)   # halo x 16 channel groups
        # a block's 16x8x2 outputs need an 18x10x4 input window per channel (halo 2.81x), fetched from L2
        # once if L1 keeps it, and again by each of the 64 output-channel blocks
        return (18 * 10 * 4) / (16 * 8 * 2) * problem.out_channels
    return None


def predict_ms(problem: P.Problem, variant: str, precision: str, gpu: GPU, input_shape=None) -> dict:
    """Roofline prediction: the larger of bytes/bandwidth and FLOPs/peak of the variant's precision."""
    b = model_bytes(problem, variant, input_shape)
    f = flops(problem, input_shape) * work_share(problem, variant, input_shape)
    t_mem = b / (gpu.dram_gbps * 1e9) * 1e3
    t_math = f / (gpu.tflops[compute_precision(problem, variant, precision)] * 1e12) * 1e3
    return {"ms": max(t_mem, t_math), "memory_ms": t_mem, "math_ms": t_math,
            "bound": "memory" if t_mem >= t_math else "compute"}


def tensor_floor_ms(problem: P.Problem, gpu: GPU, scheme: str, input_shape=None) -> float:
    """The conv's FLOPs x the scheme's tensor-core passes at the GPU's TF32 rate: no direct conv of that
    scheme can be faster, whatever it does with its bytes (an algorithm that multiplies less, Winograd, can)."""
    return conv_flops(problem, input_shape) * TENSOR_PASSES[scheme] / (gpu.tf32_tflops * 1e12) * 1e3


def floors_ms(problem: P.Problem, gpu: GPU, input_shape=None) -> dict:
    f = conv_flops(problem, input_shape)
    return {"bytes": floor_bytes(problem, input_shape) / (gpu.dram_gbps * 1e9) * 1e3,
            "fp32": f / (gpu.fp32_tflops * 1e12) * 1e3,
            "tf32": f / (gpu.tf32_tflops * 1e12) * 1e3}


def prediction(gpu_key: str) -> dict:
    """The model's prediction of every variant on a datasheet GPU, as committed before that GPU's first record
    (results/predictions/<gpu key>.json): what the run is then held against, whatever the model becomes later."""
    from . import registry as R

    gpu = datasheet(gpu_key)
    preds = {}
    for pk, prob in P.PROBLEMS.items():
        preds[pk] = {}
        for v in R.all_variants(pk):
            p = predict_ms(prob, v.key, v.precision, gpu)
            preds[pk][v.key] = {k: (round(x, 4) if isinstance(x, float) else x) for k, x in p.items()}
            preds[pk][v.key]["precision"] = compute_precision(prob, v.key, v.precision)
    return {"gpu": asdict(gpu), "model": "traffic.predict_ms: the larger of the variant's modeled DRAM bytes over the "
            "datasheet bandwidth and its FLOPs over the datasheet peak of the arithmetic it runs (x tensor passes)",
            "predictions": preds}


def compute_floor_ms(prob: P.Problem, variant: str, precision: str, gpu) -> tuple[float, str]:
    """The least time the variant's arithmetic takes at the measured ceilings: its conv's multiplies (Winograd's
    fewer) at the FP32 rate, or x its tensor passes at the TF32 rate; and what that floor is."""
    cp = compute_precision(prob, variant, precision)
    work = conv_work_flops(prob, variant)
    if cp == "fp32":
        return work / (gpu.fp32_tflops * 1e12) * 1e3, "FP32"
    return work * TENSOR_PASSES[cp] / (gpu.tf32_tflops * 1e12) * 1e3, cp.upper().replace("X", "x")
