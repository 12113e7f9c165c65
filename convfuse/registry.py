"""THE one list of variants: every reference row and every kernel of the study, for both problems.

A variant's key is its name everywhere else (results files, plots, notebooks). Kernel variants name
their source file, ``kernels/<problem>/<source>.cu``; two variants may share one file and differ by
compile-time defines (step 04's tf32 and 3xtf32).

Every kernel variant takes ``(x, weight, bias, param)`` and an optional preallocated ``out`` and checks
its inputs here, in Python, before any CUDA is touched: a bad call raises a clear ``ValueError`` or
``TypeError`` instead of computing garbage.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F

from . import problems as P

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"

# Precision classes (DESIGN.md): what the arithmetic is, and so which verification bound applies.
PRECISIONS = ("fp32", "tf32", "fp16", "3xtf32", "tf32+bf16", "3xfp16")


@dataclass(frozen=True)
class Variant:
    key: str                 # unique within a problem; the name in results, plots and notebooks
    problem: str             # "conv2d" | "conv3d"
    step: str                # "00" … "04", zero-padded, the same for both problems
    precision: str           # one of PRECISIONS (reference rows: what PyTorch does by default)
    kind: str                # "reference" | "epilogue" (torch conv + our kernel) | "fused" (our kernel only)
    title: str
    source: str | None = None          # file stem under kernels/<problem>/
    defines: tuple = ()                # extra -D flags for the build
    layouts: str = "NCHW/NCDHW contiguous only; channels_last is refused"
    notes: str = ""
    archs: tuple = ("80", "90")        # GPU targets it is built for: A100 (sm_80), H100/H200 (sm_90)
    needs_cc: tuple | None = None      # (major, minor) the GPU must have, for arch-specific (sm_90a) code
    algorithm: str = "direct"          # how its conv is computed: a key of traffic.ALGORITHM_WORK

    @property
    def is_kernel(self) -> bool:
        return self.kind in ("epilogue", "fused")

    def runs_on(self, capability: tuple) -> bool:
        """Whether this variant can run on a GPU of this compute capability."""
        return self.needs_cc is None or tuple(capability) == tuple(self.needs_cc)

    @property
    def source_path(self) -> Path | None:
        return KERNELS / self.problem / f"{self.source}.cu" if self.source else None

    @property
    def build_name(self) -> str:
        return f"convfuse_{self.problem}_{self.key}"


def _kernels(problem: str) -> list[Variant]:
    return _ladder(problem) + (_hopper(problem) if problem in HOPPER_PROBLEMS else [])


# Step 04c (sm_90a, conv2d): 04b's GEMM in a warp-specialised block (producer warpgroups: two in TF32 and fp16,
# one in 3xfp16; two consumers), conv2d's FP32-accurate kernel in 3xfp16 (FP16 hi + lo parts; kernels/conv2d/04c_*.cu
# says why). Step 04b (sm_90a wgmma): tf32 for both problems; FP32-accurate for conv3d only: 3xtf32, tf32+bf16
# (a TF32 pass and one BF16 pass for both corrections) and 3xfp16 (04c's FP16 hi + lo scheme). fp16 on both: FP16
# operands alone, TF32's precision class at half its tensor time (conv2d 1.20 ms against TF32's 1.48; conv3d 1.38
# against 1.26, slower: H200 record of 2026-12-01 10:52 UTC). conv2d's split
# weights (295 KB either way) do not fit an SM's shared memory next to anything; the CF_TF32BF16 candidate
# streams them per chunk, which ties the warpgroups of a block to one pipeline (measured 2026-12-01: 4.6 ms,
# rel-L2 3.2e-6, over the FP32 bound; kernels/conv2d/04b_implicit_gemm_wgmma.cu).
# Step 04d (sm_90a): the implicit GEMM turned around, output pixels as M and the input fragments loaded from the TMA's
# raw rows into registers (wgmma with A in registers), so nothing is transposed or staged; TF32 (the kernels' headers say
# why and what was measured). conv2d's fastest TF32 kernel; on conv3d a measured negative (1.82 ms against 04b's 0.90:
# its short tiles cannot hide their stores).
HOPPER_PROBLEMS = ("conv2d", "conv3d")
_SM90A = dict(source="04b_implicit_gemm_wgmma", archs=("90a",), needs_cc=(9, 0),
              notes="sm_90a only (H100/H200); refused with a clear error on other GPUs")
_SM90A_WS = dict(_SM90A, source="04c_warp_specialized_wgmma")
_SM90A_RS = dict(_SM90A, source="04d_register_a_wgmma")


# conv2d 04c TF32: one ring for both consumers (CF_SHARED_RING, 3 stages with the output buffers) and the output through
# shared memory and the bulk-copy engine (CF_BULK_STORE); fp16 takes the bulk stores alone (its ring per consumer fits them)
_CONV2D_04C_OUT = ("CF_SHARED_RING", "CF_BULK_STORE")
_CONV3D_TF32 = ("CF_MMA_ORDER", "CF_BULK_STORE", "CF_LEAN", "CF_TMA_STORE", "CF_STAGE_ROT", "CF_BOX_STS",
                "CF_DESC_UNIFORM")    # conv3d 04b TF32 and fp16
# folded epilogue: TF32 0.972 vs 0.991 ms, fp16 defines it itself (the kernel); the loads' addresses: TF32 0.957 and 0.961
# vs 0.978 and 0.978, fp16 slower (a candidate); cvt.rn rounding (TF32 only): 0.937 and 0.940 vs 0.978
# the rows of a block's 4 warpgroups in one sector-aligned tensor copy per channel group (TF32 only: the FP16 builds'
# FP32 path would leave a slot unwritten): 0.903 and 0.901 vs 0.927 and 0.925 (H200 2026-12-02, explore-2026-12-02b/call5)
# the depth sweep (TF32, at shapes with Wo = 62, even Ho, Do >= 2; others take the loop above): a block's rounds move
# along depth, one 6-row slab staged per round, units dealt round-robin, the slab staged before the epilogue, the
# address arithmetic only in threads with an item: 0.888, 0.890 vs 0.898, 0.901; 0.879, 0.882 vs 0.892, 0.893; 0.885,
# 0.883 vs 0.895, 0.896 (H200 2026-12-03, explore-2026-12-03b/call1-3; notes/kernel_log.md, twenty-third session)
_CONV3D_TF32_SWEEP = ("CF_DWIN", "CF_DWIN_WAVES", "CF_DWIN_EARLY", "CF_DWIN_BRANCH")
# the sweep's output in boxes of two rows (a warpgroup waits for its partner's copy, not the round's last warpgroup's)
# with the clamped GELU's degree-3 polynomial and the GELU of the halved clamp (common.cuh): 0.816, 0.817 vs 0.887,
# 0.886 (H200 2026-12-03, explore-2026-12-03c/call3-4; notes/kernel_log.md, twenty-fourth session)
_CONV3D_TF32_BOX2 = ("CF_GROUP=2", "CF_GELU_Q3", "CF_GELU_HALF")
# the boxes' channel rows in the order 8 (c / 8) + 2 (c % 4) + (c / 4) % 2, free of shared-store bank conflicts, copied
# out through a 5-D map of y: 0.799, 0.797 vs 0.814, 0.812 (floor 0.636, 0.632 vs 0.690, 0.686; ncu store bank
# conflicts 1.25 M vs 16.3 M) (H200 2026-12-03, explore-2026-12-03e/call1; notes/kernel_log.md, twenty-sixth session)
_CONV3D_TF32_ROWMAP = ("CF_BOX_ROWMAP",)
# the last slot's wait for its copy's reads and the box's EMPTY arrive moved to the next round, after its wgmmas are
# issued: 0.768, 0.772 vs 0.795, 0.797 (ncu long-scoreboard stalls per issue 0.79 vs 1.17) (H200 2026-12-03,
# explore-2026-12-03e/call3; notes/kernel_log.md, twenty-sixth session; registered by the twenty-seventh with its record)
_CONV3D_TF32_DEFER = ("CF_GROUP_DEFER",)
# conv2d 04d_rs_tf32: a warp's M rows g, g + 8 as its pixels 2 g, 2 g + 1 (8-byte fragment loads and stores): bitwise
# equal, 1.158, 1.152 vs 1.218, 1.213 ms (H200 2026-12-03, explore-2026-12-03g/callQ; notes/kernel_log.md,
# twenty-eighth session; registered by it with its record)
_CONV2D_TF32_PAIRS = ("CF_PIXEL_PAIRS",)
# conv2d 04d_rs_3xtf32: three rows, a_big times both weight parts in one wgmma, three fragment sets, the erf polynomial
# (thirtieth session, explore-2026-12-03i/callE-F); the next row's loads under the current group: bitwise equal, 2.965,
# 2.966 vs 3.008, 3.007 ms (H200 2026-12-04, explore-2026-12-04/callL; thirty-first session, registered with its record)
_CONV2D_3XTF32 = ("CF_ROWS=3", "CF_PITCH=72", "CF_3X_CONCAT", "CF_3X_SETS=3", "CF_GELU_FAST", "CF_3X_ROW_PREFETCH")
# conv2d 04d, both builds: the pixel-pair epilogue 16 values at a time, then their stores (two values and a branch before
# it): bitwise equal, TF32 1.073 vs 1.105, 3xTF32 2.826 vs 2.873 ms (H200 2026-12-04 21:38 UTC, explore-2026-12-04b/callS;
# measured by the thirty-second session, registered with the record that followed)
_CONV2D_EPI_ILP = ("CF_EPI_ILP",)
_CONV3D_TF32_ONLY = ("CF_EPI_FOLD", "CF_LOAD_ADDR", "CF_TF32_RN", "CF_GROUP_STORE") + _CONV3D_TF32_SWEEP \
    + _CONV3D_TF32_BOX2 + _CONV3D_TF32_ROWMAP + _CONV3D_TF32_DEFER
# FP16: the group stores under a window of input rows per round shared by the block's warpgroups, staged after the
# round's stores, w_hi alone and two sets of group boxes: 0.775, 0.776, 0.774 vs 0.817, 0.817, 0.829 (H200 2026-12-02,
# explore-2026-12-02e/call5-6; notes/kernel_log.md, sixteenth session); and the last slot's lane waiting for the previous
# round's copy to have read its box, not its own copy: 0.738, 0.737 vs 0.772, 0.774 (H200 2026-12-02, explore-2026-12-02f/call2)
_CONV3D_FP16_ONLY = ("CF_GROUP_STORE", "CF_XWIN", "CF_XWIN_LATE", "CF_XWIN_W1", "CF_GROUP_DOUBLE", "CF_GROUP_LAZY")
# What the conv3d 04b candidates below were measured without: they name the later defaults they leave out
# ("-NAME", with_defines), so each stays the build that was measured (CF_RAW, CF_OUT_SMEM and CF_WINDOW cannot
# take the bulk store at all).
# the tensor copy needs the bulk store; CF_LOAD_ADDR acts on CF_LEAN's loads only
_BEFORE_BULK = ("-CF_TMA_STORE", "-CF_BULK_STORE", "-CF_LEAN", "-CF_STAGE_ROT", "-CF_BOX_STS", "-CF_LOAD_ADDR")
_BEFORE_BOX = ("-CF_BOX_STS",)          # candidates measured before the box stores (and, TF32, the folded epilogue)


def _hopper(problem: str) -> list[Variant]:
    # conv2d's epilogue uses the polynomial erf (common.cuh gelu_erf_fast): 1.66 vs 1.69 ms, H200 2026-12-01
    # conv3d: the warpgroups issue their MMAs in turn (CF_MMA_ORDER): TF32 1.198 vs 1.228 and 1.173 vs 1.250 ms, fp16
    # 1.202 vs 1.408 and 1.181 vs 1.394, H200 2026-12-01 14:38 and 14:50 UTC; no gain for 3xfp16 and 3xtf32.
    # conv3d: the output through the bulk-copy engine (CF_BULK_STORE) with the lean loop (CF_LEAN): TF32 1.142 vs 1.195,
    # fp16 1.062 vs 1.184; 3xfp16 the bulk store alone, 1.317 vs 1.343 and 1.347 vs 1.369 (H200 2026-12-01 16:16 and
    # 16:22 UTC; results/device-logs/explore-2026-12-01h/). A warp's rows in one tensor copy (CF_TMA_STORE): fp16 1.027 vs
    # 1.059 (H200 2026-12-01 17:45 UTC, explore-2026-12-01i/); without the lean stores, which made TF32 spill: TF32
    # 1.092 vs 1.117, fp16 0.985 vs 1.056 with the row copies (18:20 UTC); 3xfp16 1.347 vs 1.336 (a candidate). The
    # staging's stores without bank conflicts (CF_STAGE_ROT): TF32 1.046 vs 1.097, fp16 0.873 vs 0.993 (21:02 UTC,
    # explore-2026-12-01k/call2/); 3xfp16 1.349 vs 1.348 (a candidate). Each wgmma issued from uniform registers
    # (CF_DESC_UNIFORM): TF32 with the next two 0.921, 0.920 and 0.921 vs 0.978, 0.978 and 0.984, fp16 alone 0.822 and
    # 0.825 vs 0.835 and 0.833, 3xfp16 1.303 and 1.302 vs 1.325 and 1.326 (H200 2026-12-02 00:1x UTC,
    # explore-2026-12-02a/; the kernel's header has each cut alone)
    out = [Variant("04b_wgmma_tf32", problem, "04b", "tf32", "fused",
                   "implicit-GEMM conv+epilogue on Hopper warpgroup MMA (wgmma), TF32",
                   defines=("CF_GELU_FAST",) if problem == "conv2d" else _CONV3D_TF32 + _CONV3D_TF32_ONLY, **_SM90A)]
    if problem == "conv3d":
        out += [Variant("04b_wgmma_3xtf32", problem, "04b", "3xtf32", "fused",
                        "implicit-GEMM conv+epilogue on Hopper warpgroup MMA (wgmma), split-TF32 (FP32 accuracy)",
                        defines=("CF_3XTF32",), **_SM90A),
                Variant("04b_wgmma_tf32bf16", problem, "04b", "tf32+bf16", "fused",
                        "implicit-GEMM conv+epilogue on Hopper wgmma, TF32 + one BF16 correction pass "
                        "(FP32 accuracy in two tensor passes)",
                        defines=("CF_TF32BF16",), **_SM90A),
                Variant("04b_wgmma_3xfp16", problem, "04b", "3xfp16", "fused",
                        "implicit-GEMM conv+epilogue on Hopper wgmma, FP16 hi/lo operands, three products in "
                        "1.5 TF32 passes of tensor time (FP32 accuracy)",
                        defines=("CF_3XF16", "CF_BULK_STORE", "CF_DESC_UNIFORM"), **_SM90A),
                Variant("04b_wgmma_fp16", problem, "04b", "fp16", "fused",
                        "implicit-GEMM conv+epilogue on Hopper wgmma, FP16 operands (TF32's precision, half "
                        "its tensor time)",
                        defines=("CF_1XF16",) + _CONV3D_TF32 + _CONV3D_FP16_ONLY, **_SM90A)]
    if problem == "conv2d":
        out += [Variant("04c_ws_tf32", problem, "04c", "tf32", "fused",
                        "04b with two producer warpgroups (TMA into raw buffers, then one 3-stage ring for both "
                        "consumers in turn), output through the bulk-copy engine, TF32",
                        # staged operands rounded by cvt.rn: 1.418, 1.413, 1.416 vs 1.431, 1.432, 1.429 ms (2026-12-02);
                        # one ring (3 stages) and the bulk stores: 1.319, 1.304 vs 1.455, 1.455 (2026-12-02 12:47 UTC)
                        defines=("CF_GELU_FAST", "CF_TF32_RN") + _CONV2D_04C_OUT, **_SM90A_WS),
                Variant("04c_ws_3xfp16", problem, "04c", "3xfp16", "fused",
                        "warp-specialised wgmma conv+epilogue, FP16 hi/lo operands, three products in 1.5 TF32 "
                        "passes of tensor time (FP32 accuracy)",
                        defines=("CF_3XF16",), **_SM90A_WS),
                Variant("04c_ws_fp16", problem, "04c", "fp16", "fused",
                        "warp-specialised wgmma conv+epilogue, FP16 operands (TF32's precision, half its "
                        "tensor time)",
                        # the bulk stores: 1.069, 1.064 vs 1.138, 1.126 ms (2026-12-02 12:47 UTC)
                        defines=("CF_GELU_FAST", "CF_1XF16", "CF_BULK_STORE"), **_SM90A_WS),
                Variant("04d_rs_tf32", problem, "04d", "tf32", "fused",
                        "implicit GEMM turned around: output pixels as M, the input fragments loaded from the TMA's raw "
                        "rows into registers (wgmma with A in registers), nothing staged, TF32",
                        defines=("CF_GELU_FAST",) + _CONV2D_TF32_PAIRS + _CONV2D_EPI_ILP, **_SM90A_RS),
                Variant("04d_rs_3xtf32", problem, "04d", "3xtf32", "fused",
                        "04d with split-TF32 operands (big + small parts, three products), a block per half of the "
                        "Cout so that both weight parts stay resident (FP32 accuracy)",
                        # three rows a tile, a_big times both weight parts in one m64n64k8 (CF_3X_CONCAT), three
                        # fragment sets (CF_3X_SETS=3), the erf polynomial: 2.943, 2.934 vs four rows (the 21:41 UTC
                        # record's build) 3.107, 3.126 ms (H200 2026-12-03 22:51 UTC, explore-2026-12-03i/callF)
                        defines=_CONV2D_TF32_PAIRS + ("CF_3XTF32",) + _CONV2D_3XTF32 + _CONV2D_EPI_ILP, **_SM90A_RS)]
    if problem == "conv3d":
        out += [Variant("04d_rs_tf32", problem, "04d", "tf32", "fused",
                        "implicit GEMM turned around: output pixels as M, the input fragments loaded from the TMA's raw "
                        "rows into registers (wgmma with A in registers), nothing staged, TF32",
                        **_SM90A_RS)]
    if problem == "conv2d":
        out += [Variant("04e_wino_3xtf32", problem, "04e", "3xtf32", "fused",
                        "Winograd F(2x2, 3x3) on the tensor cores with split-TF32 operands (three products), the "
                        "output transform and the epilogue in registers (FP32 accuracy)",
                        # call U (H200, 2026-12-05 02:47 UTC, results/device-logs/explore-2026-12-05/callU): with the
                        # descriptors in uniform registers 2.256 ms against the base build's 2.300, 04d_rs_3xtf32's
                        # 2.788 and torch.compile's 2.306 in one process; rel-L2 3.46e-7 on every shape (randn);
                        # sanitizers clean, hardening 16/16
                        defines=("CF_GELU_FAST", "CF_WINO_DESC_UNIFORM"), algorithm="winograd_f2x2_3x3",
                        **dict(_SM90A, source="04e_winograd_wgmma"))]
    return out


# Opt-in builds: a registered variant plus -D defines, in no table. scripts/check_variant.py verifies and
# times them (device_session.sh explore), tests/test_kernels_compile.py keeps them compiling without
# spills. Measured on the H200, 2026-12-01 (results/device-logs/explore-2026-12-01/explore.log), against
# the variant built as registered: none wins, so none is promoted; they stay as the record of what was tried.
_MEASURED_BEFORE_CUTS = (
    ("conv3d", "04b_wgmma_tf32", (*_BEFORE_BULK, "-CF_EPI_FOLD", "CF_RAW")),               # 1.40 vs 1.28 ms
    ("conv3d", "04b_wgmma_tf32", (*_BEFORE_BULK, "-CF_EPI_FOLD", "CF_RAW", "CF_WGS=3")),   # 1.46
    ("conv3d", "04b_wgmma_tf32", (*_BEFORE_BULK, "-CF_EPI_FOLD", "CF_RAW", "CF_TH=2", "CF_WGS=3")),  # 1.47
    ("conv3d", "04b_wgmma_3xtf32", ("CF_RAW", "CF_WGS=2")),                # 2.58 vs 2.30
    ("conv3d", "04b_wgmma_tf32bf16", ("CF_RAW", "CF_WGS=2")),              # 2.42 vs 2.18
    ("conv2d", "04b_wgmma_tf32", ("CF_TF32BF16",)),                        # 4.65, rel-L2 3.2e-6: fails FP32
    ("conv2d", "04b_wgmma_tf32", ("CF_WGS=2",)),                           # 2.15 vs 1.69 (exact erf)
    ("conv2d", "04b_wgmma_tf32", ("CF_XBUFS=3", "CF_WGS=2")),              # 2.16
    # conv3d: the stores cost 0.26 ms (ablation); staged through shared memory and copied out during the
    # next tile's MMAs instead: 1.75 vs 1.27 ms, slower (notes/kernel_log.md, 2026-12-01)
    ("conv3d", "04b_wgmma_tf32", (*_BEFORE_BULK, "-CF_EPI_FOLD", "CF_OUT_SMEM")),
    # H200, 2026-12-01 from 10:21 UTC (results/device-logs/explore-2026-12-01d/; kernel headers say why): single-pixel
    # staging wins for the split builds (now their default; CF_STAGE_QUAD is the former) and loses for tf32
    ("conv3d", "04b_wgmma_tf32", (*_BEFORE_BULK, "-CF_EPI_FOLD", "CF_STAGE_PIX")),         # 1.460 vs 1.272
    # ("conv3d", "04b_wgmma_3xfp16", ("CF_STAGE_QUAD",)): 1.631 vs 1.461, retired 2026-12-01 ~12:30 UTC: since
    # bias and sum come from shared memory it spills 4 B at its 128 registers (ptxas), so it is no longer the build
    # that was measured; the measurement stays in the stage-pix log. CF_STAGE_QUAD still restores the old staging.
    ("conv3d", "04b_wgmma_tf32", (*_BEFORE_BULK, "CF_EPI_FOLD")),          # 1.257 vs 1.260
    ("conv3d", "04b_wgmma_tf32", (*_BEFORE_BULK, "-CF_EPI_FOLD", "CF_RNA_ADD")),           # 1.295 vs 1.260
    ("conv2d", "04c_ws_tf32", ("CF_RNA_ADD",)),                            # 1.526 vs 1.519
    ("conv2d", "04c_ws_fp16", ("CF_RAWS=1",)),                             # 1.472 vs 1.375 (explore-3: two stages, a producer loop since restructured)
    # H200, 2026-12-01 ~12:25 UTC (results/device-logs/explore-2026-12-01e/, one process): one TMA per chunk
    # (04c's default since) against the producer threads' cp.async copies (CF_NO_TMA), and a third raw buffer
    ("conv2d", "04c_ws_fp16", ("CF_NO_TMA",)),                             # 1.233 vs 1.169
    ("conv2d", "04c_ws_tf32", ("CF_NO_TMA",)),                             # 1.558 vs 1.514
    ("conv2d", "04c_ws_3xfp16", ("CF_NO_TMA",)),                           # 2.125 vs 2.035
    ("conv2d", "04c_ws_fp16", ("CF_RAWS=3",)),                             # 1.170 vs 1.169
    # H200, 2026-12-01 from 14:26 UTC (results/device-logs/explore-2026-12-01g/; the 04b header says why), conv3d
    # 04b TF32 with its registered CF_MMA_ORDER unless noted: the integer overhead removed, and a ring of input rows.
    # (The conv3d TF32 and fp16 candidates above were measured before the turns were registered: built today they
    # take the turns too, so their times above are of builds without them.)
    # ("conv3d", "04b_wgmma_tf32", ("CF_LEAN",)): 1.194 vs 1.198 with the turns (1.364 vs 1.269 without);
    # with CF_BULK_STORE it paid (1.142 vs 1.215) and is now in the TF32 and fp16 defaults
    ("conv3d", "04b_wgmma_tf32", (*_BEFORE_BULK, "-CF_EPI_FOLD", "CF_WINDOW", "CF_WINDOW_ROWS=2")),  # 1.510 vs 1.173; 1.523 vs 1.174
    # (16:43 UTC, profiled beside R = 1, 1.229: its loads' latency is exposed, notes/kernel_log.md)
    ("conv3d", "04b_wgmma_tf32", (*_BEFORE_BULK, "-CF_EPI_FOLD", "CF_WINDOW", "CF_WINDOW_ROWS=8", "CF_WGS=6")),  # 1.831
    ("conv3d", "04b_wgmma_3xfp16", ("-CF_BULK_STORE", "CF_LEAN", "CF_LOAD_EARLY")),  # 1.333 vs 1.368 (one call)
    # H200, 2026-12-01 from 16:10 UTC (results/device-logs/explore-2026-12-01h/): with the bulk store registered,
    # the lean loop and early loads do not pay for 3xfp16 (the 04b header says why TF32 and fp16 took CF_LEAN)
    ("conv3d", "04b_wgmma_3xfp16", ("CF_LEAN", "CF_LOAD_EARLY")),          # 1.352 vs 1.347
    # H200, 2026-12-01 from 17:43 UTC (results/device-logs/explore-2026-12-01i/): a warp's rows in one tensor copy,
    # the TF32 and fp16 default since (above)
    ("conv3d", "04b_wgmma_3xfp16", ("CF_TMA_STORE",)),                     # 1.347 vs 1.336
    # H200, 2026-12-01 from 19:27 UTC (results/device-logs/explore-2026-12-01j/): the next tile staged under this
    # tile's MMAs, in a second input buffer that also takes the output (CF_XDOUBLE); bitwise equal, slower. These and all
    # conv3d TF32 and fp16 candidates above were measured before CF_STAGE_ROT was registered, and leave it out
    ("conv3d", "04b_wgmma_tf32", ("CF_XDOUBLE", "-CF_STAGE_ROT", *_BEFORE_BOX, "-CF_EPI_FOLD")),   # 1.462 vs 1.091
    ("conv3d", "04b_wgmma_3xfp16", ("CF_LEAN", "CF_MMA_ORDER", "CF_XDOUBLE")),  # 1.364 vs 1.349
    # ... with the output in a buffer of its own (CF_XOUT_APART), 3 warpgroups for the shared memory: slower than 3
    # warpgroups without CF_XDOUBLE (TF32 1.147, fp16 1.023; 19:35 UTC)
    ("conv3d", "04b_wgmma_tf32", ("CF_XDOUBLE", "CF_XOUT_APART", "CF_WGS=3", "-CF_STAGE_ROT", *_BEFORE_BOX, "-CF_EPI_FOLD")),  # 1.245 vs 1.096
    ("conv3d", "04b_wgmma_fp16", ("CF_XDOUBLE", "CF_XOUT_APART", "CF_WGS=3", "-CF_STAGE_ROT", *_BEFORE_BOX)),   # 1.025 vs 0.988
    ("conv3d", "04b_wgmma_3xfp16", ("CF_LEAN", "CF_MMA_ORDER", "CF_XDOUBLE", "CF_XOUT_APART", "CF_WGS=3")),  # 1.626 vs 1.324
    # the staging stores without bank conflicts (CF_STAGE_ROT; 144 shared-memory wavefronts per tile instead of 576), under
    # the MMAs and before them. H200 2026-12-01 20:56 UTC (explore-2026-12-01k/call1/, one process), the rotation's
    # offsets then hoisted (TF32 at 4 warpgroups spilled 12 B): 1.098, 1.094 and 0.907 against 1.115 (TF32, 4
    # warpgroups), 1.168 (TF32, 3) and 1.004 (fp16); 3xfp16 1.357 against 1.358
    # rotation read per item (no spill), 21:02 UTC (explore-2026-12-01k/call2/): TF32 4 warpgroups 1.046 vs 1.097, fp16
    # 0.873 vs 0.993: both defaults since; 3 warpgroups TF32 1.081, + CF_XDOUBLE + CF_XOUT_APART 1.080, fp16 0.900;
    # 3xfp16 1.349 vs 1.348
    ("conv3d", "04b_wgmma_tf32", ("CF_XDOUBLE", "CF_XOUT_APART", "CF_WGS=3", *_BEFORE_BOX, "-CF_EPI_FOLD")),  # with the rotation
    ("conv3d", "04b_wgmma_tf32", ("CF_WGS=3", *_BEFORE_BOX, "-CF_EPI_FOLD")),
    ("conv3d", "04b_wgmma_fp16", ("CF_WGS=3", *_BEFORE_BOX)),
    ("conv3d", "04b_wgmma_3xfp16", ("CF_STAGE_ROT",)),
    # the staging without conflicts and without the rotation's selects (65-pixel rows, 2 quads x 4 rows per quarter-warp;
    # wgmma_model.c3_skewed_items). H200 2026-12-01 22:40 UTC (explore-2026-12-01l/callA/, one process, two runs): bitwise
    # equal, sanitizer clean, slower than the registered builds with the box stores
    ("conv3d", "04b_wgmma_tf32", ("-CF_STAGE_ROT", "CF_STAGE_SKEW")),    # 1.065, 1.061 vs 0.970, 0.966
    ("conv3d", "04b_wgmma_fp16", ("-CF_STAGE_ROT", "CF_STAGE_SKEW")),    # 0.875, 0.877 vs 0.837, 0.832
    # H200, 2026-12-01 from 13:15 UTC (results/device-logs/explore-2026-12-01f/, one process per call): half-chunk
    # raw buffers, three per consumer (one chunk's TMA copies in flight while half a chunk is staged)
    ("conv2d", "04c_ws_tf32", ("CF_RAW_CH=4",)),                           # 1.564 vs 1.485; 1.579 vs 1.491
    ("conv2d", "04c_ws_3xfp16", ("CF_RAW_CH=4",)),                         # 2.130 vs 1.977
    ("conv2d", "04c_ws_fp16", ("CF_RAW_CH=4", "CF_RAWS=4")),               # 1.336 vs 1.135
    # one ring for both consumers, chunk loops in turn (CF_SHARED_RING, 3xFP16's default since) against a ring each
    ("conv2d", "04c_ws_3xfp16", ("CF_RING_PER_CONSUMER",)),                # 2.065 vs 1.736; 2.084 vs 1.739
    ("conv2d", "04c_ws_tf32", ("CF_SHARED_RING",)),                        # 1.526 vs 1.520; 1.535 vs 1.545
    ("conv2d", "04c_ws_fp16", ("CF_SHARED_RING",)),                        # 1.300 vs 1.179
    # H200, 2026-12-02 from 00:10 UTC (results/device-logs/explore-2026-12-02a/, two calls): the three cuts below
    # (_CUTS) each alone, against the builds registered then; bitwise equal, memcheck clean, and slower
    ("conv3d", "04b_wgmma_fp16", ("CF_LOAD_ADDR",)),   # 0.874, 0.863 vs 0.835, 0.833: 354 MB from DRAM vs 281 (ncu)
    ("conv2d", "04c_ws_tf32", ("CF_DESC_BASE",)),      # 1.452, 1.445, 1.446 vs 1.431, 1.432, 1.429
)
# Registered 2026-12-02 (the kernels' headers say why and what each measured). Every candidate above was measured
# without them, so it leaves out those its variant is now built with ("-NAME"), and stays the build that was measured.
_CUTS = ("CF_LOAD_ADDR", "CF_DESC_UNIFORM", "CF_TF32_RN", "CF_GROUP_STORE") + _CONV3D_FP16_ONLY[1:] + _CONV3D_TF32_SWEEP \
    + _CONV3D_TF32_BOX2 + _CONV3D_TF32_ROWMAP + _CONV3D_TF32_DEFER + _CONV2D_TF32_PAIRS + _CONV2D_EPI_ILP


def _spelled_against(candidates, cuts) -> tuple:
    """Candidates measured before the defines `cuts(key)` were registered, spelled against the registration now, so
    each stays the build that was measured: a cut its variant is built with now and it was measured without becomes
    "-NAME"; one it was measured with is the default now and is dropped from its list; a candidate left with no
    defines is the registration itself and is dropped."""
    registered = {(v.problem, v.key): v.defines for p in HOPPER_PROBLEMS for v in _hopper(p)}
    out = []
    for p, k, d in candidates:
        now = [c for c in cuts(k) if c in registered.get((p, k), ())]
        d = tuple(x for x in d if x not in now) + tuple(f"-{c}" for c in now if c not in d and f"-{c}" not in d)
        if d:
            out.append((p, k, d))
    return tuple(out)


def _measured_builds(candidates) -> tuple:
    return _spelled_against(candidates, lambda k: _CUTS + (_CONV2D_04C_OUT if k.startswith("04c") else ()))


# conv2d 04d with three consumers of three output rows (a 72-pixel box keeps a channel 8 banks on; two stages per ring fit)
_04D_THREE = ("CF_CONSUMERS=3", "CF_ROWS=3", "CF_PITCH=72", "CF_STAGES=2", "CF_PRODUCER_REGS=40", "CF_PARAMS_SMEM")
# conv3d 04d with three consumers of three rows (a 72-pixel box; the 55 KB of conv3d weights leave room for five stages
# per ring; bias and sum in shared memory for the 152-register budget), and four of two (a 4-row box puts a channel 16
# banks on at any width, so the box takes a fifth row it never reads; three stages; consumers at 104 registers)
_04D3_THREE = ("CF_CONSUMERS=3", "CF_ROWS=3", "CF_PITCH=72", "CF_STAGES=5", "CF_PARAMS_SMEM")
_04D3_FOUR = ("CF_CONSUMERS=4", "CF_ROWS=2", "CF_PITCH=72", "CF_BOX_ROWS=5", "CF_STAGES=3", "CF_PARAMS_SMEM")
# Measured after the cuts, on the builds registered then (conv3d TF32: before its depth sweep, spelled against it by
# _spelled_against). H200, 2026-12-02 from 03:44 UTC (results/device-logs/explore-2026-12-02c/; the 04b header says why):
_MEASURED_ON_CURRENT = _spelled_against((
    # a producer warpgroup: TMA boxes transposed from shared memory, a buffer per consumer; bitwise equal
    ("conv3d", "04b_wgmma_tf32", ("CF_PRODUCER",)),      # 1.190, 1.191, 1.198 vs 0.896, 0.899, 0.905
    # each warpgroup stages from TMA boxes: first version hung on (3, 8, 10, 64, 64); with one named barrier per
    # direction (tests/test_handoffs.py) bitwise equal and slower: 1.052, 1.045 vs 0.901, 0.895
    ("conv3d", "04b_wgmma_tf32", ("CF_TMA_STAGE",)),
    # each block takes a contiguous range of rounds (the dealing a window kept across rounds needs); bitwise equal,
    # 0.902, 0.901 vs 0.901, 0.900 with 2.6x the DRAM reads
    ("conv3d", "04b_wgmma_tf32", ("CF_DEAL_CONTIG",)),
    # H200, 2026-12-02 from 07:17 UTC (results/device-logs/explore-2026-12-02e/; notes/kernel_log.md, sixteenth session),
    # spelled against FP16's registration since (what each leaves out of it):
    # the group stores for fp16: its FP32 path's sums leave through them too (fp32_acc); bitwise equal,
    # 0.828, 0.832 vs 0.826, 0.825 (without staging 0.645 vs 0.885: the staging is now what bounds it)
    ("conv3d", "04b_wgmma_fp16", ("-CF_XWIN", "-CF_XWIN_LATE", "-CF_XWIN_W1", "-CF_GROUP_DOUBLE", "-CF_GROUP_LAZY")),
    # and on them, a window per round shared by the block's warpgroups (CF_XWIN, tests/test_xwin.py): bitwise equal,
    # half the staging's items, 0.828, 0.834 vs 0.828, 0.836 (the waits moved to the turns and the output boxes)
    ("conv3d", "04b_wgmma_fp16", ("-CF_XWIN_LATE", "-CF_XWIN_W1", "-CF_GROUP_DOUBLE", "-CF_GROUP_LAZY")),
    # the window staged after the round's stores: 0.799, 0.800 vs 0.814, 0.814 (fp16 as registered then); without MMA
    # turns 0.885, 0.887, both 0.864, 0.865
    ("conv3d", "04b_wgmma_fp16", ("-CF_XWIN_W1", "-CF_GROUP_DOUBLE", "-CF_GROUP_LAZY")),
    ("conv3d", "04b_wgmma_fp16", ("CF_XWIN_NOTURN", "-CF_XWIN_LATE", "-CF_XWIN_W1", "-CF_GROUP_DOUBLE", "-CF_GROUP_LAZY")),
    ("conv3d", "04b_wgmma_fp16", ("CF_XWIN_NOTURN", "-CF_XWIN_W1", "-CF_GROUP_DOUBLE", "-CF_GROUP_LAZY")),
    # w_hi alone: 0.818, 0.820 vs 0.796, 0.799 without it (slower, not explained); it makes room for two sets of boxes
    ("conv3d", "04b_wgmma_fp16", ("-CF_GROUP_DOUBLE", "-CF_GROUP_LAZY")),
    # two sets of boxes, the last slot waiting for its own copy's reads: 0.775, 0.776, 0.774 vs 0.817, 0.817, 0.829
    # (registered FP16 then); the 09:47 UTC record's FP16 (0.773 ms). Without that wait (CF_GROUP_LAZY, registered
    # since): 0.738, 0.737 against it, bitwise equal (explore-2026-12-02f/call2)
    ("conv3d", "04b_wgmma_fp16", ("-CF_GROUP_LAZY",)),
    # H200, 2026-12-02 from 12:46 UTC (results/device-logs/explore-2026-12-02g/; notes/kernel_log.md, eighteenth
    # session), conv2d 04c TF32 on its registration since; all bitwise equal to the build registered before:
    # 2 stages and 3 raw buffers: 1.331, 1.316 vs 1.319, 1.304
    ("conv2d", "04c_ws_tf32", ("CF_STAGES=2", "CF_RAWS=3")),
    # one set of output buffers for both consumers (OUT barriers): alone 1.340, 1.341 vs 1.333, 1.329; with 3 raw buffers
    # 1.337, 1.340; with 4 stages 1.338, 1.339: the depth of the copy pipeline does not bound it
    ("conv2d", "04c_ws_tf32", ("CF_OUT_SHARED",)),
    ("conv2d", "04c_ws_tf32", ("CF_OUT_SHARED", "CF_RAWS=3")),
    ("conv2d", "04c_ws_tf32", ("CF_OUT_SHARED", "CF_STAGES=4")),
    # staging items of half a pixel's channels: 1.310, 1.308 vs 1.293, 1.292; the refill issued by the last warp out of
    # a raw buffer (no producer barrier): 1.365, 1.366; both 1.362, 1.364
    ("conv2d", "04c_ws_tf32", ("CF_STAGE_HALF",)),
    ("conv2d", "04c_ws_tf32", ("CF_RAW_COUNT",)),
    # H200, 2026-12-02 from 16:05 UTC (results/device-logs/explore-2026-12-02h/; notes/kernel_log.md, nineteenth session),
    # conv2d 04d on its registration (both consumers issuing at once, each stage released after its last row's wgmmas);
    # bitwise equal to it but CF_TF32_TRUNC. The consumers in ping-pong, as 04c: 1.335 vs 1.214 (a lone warpgroup's HGMMA
    # issue bounds it: without its fragment loads 1.320)
    ("conv2d", "04d_rs_tf32", ("CF_PINGPONG",)),
    # consumer 1 half a tile late, so that the epilogues fall apart: 1.240, 1.218 vs 1.214, 1.198
    ("conv2d", "04d_rs_tf32", ("CF_SKEW",)),
    # consecutive wgmmas into different accumulators: 1.216 vs 1.214 (with ping-pong, call 2: 1.335, 1.331 vs 1.343, 1.340)
    ("conv2d", "04d_rs_tf32", ("CF_MMA_INTERLEAVE",)),
    # no cvt, the tensor core truncates: 1.208 vs 1.214, rel-L2 5.2e-4 vs 3.1e-4
    ("conv2d", "04d_rs_tf32", ("CF_TF32_TRUNC",)),
    # three consumers of three rows, two stages each: 1.313, 1.314 vs 1.189, 1.166 (their rings run dry); with three
    # register sets 1.249, 1.237
    ("conv2d", "04d_rs_tf32", _04D_THREE),
    ("conv2d", "04d_rs_tf32", _04D_THREE + ("CF_FRAG_SETS=3",)),
    # H200, 2026-12-02 from 17:45 UTC (results/device-logs/explore-2026-12-02i/; notes/kernel_log.md, twentieth session).
    # conv2d 04d's epilogue in fewer instructions (bias folded into the multiplier's FMA, LeakyReLU as one FMNMX, the
    # channel rows' addresses stepped per output row; 2,828 SASS instructions against 3,127; one rounding fewer, within
    # the TF32 bound): 1.244 vs 1.239, 1.187 vs 1.177
    ("conv2d", "04d_rs_tf32", ("CF_EPI_LEAN",)),
    # each output row's epilogue while the last chunk's later wgmmas are in flight (the last chunk peeled); bitwise
    # equal: 1.222 vs 1.177, 1.195 vs 1.159
    ("conv2d", "04d_rs_tf32", ("CF_EPI_OVERLAP",)),
    # H200, 2026-12-03 from 17:05 UTC (results/device-logs/explore-2026-12-03f/call1-3; notes/kernel_log.md, twenty-seventh
    # session), after the 16:53 record put 04d at 1.98x torch.compile: each bitwise equal, none faster (two runs each,
    # against the registered build's 1.216, 1.227 / 1.207, 1.211 / 1.187, 1.191 in the same processes). The weights 32
    # loads at a time 1.228, 1.234; the leftover tiles to lone consumers 1.252, 1.259; the epilogue in a loop over one /
    # two rows 1.268, 1.276 / 1.241, 1.253 (no-instruction stalls 0.11 -> 0.03 per issue)
    ("conv2d", "04d_rs_tf32", ("CF_W_BATCH",)),
    ("conv2d", "04d_rs_tf32", ("CF_TILE_SPREAD",)),
    ("conv2d", "04d_rs_tf32", ("CF_EPI_ROLL=1",)),
    ("conv2d", "04d_rs_tf32", ("CF_EPI_ROLL=2",)),
    # two stages a ring 1.251, 1.253 (they run dry); five rows on two stages 1.243, 1.239, with the register sets carried
    # over chunk pairs 1.213, 1.219 and 1.196, 1.200, with the parameters in shared memory too 1.220, 1.222
    ("conv2d", "04d_rs_tf32", ("CF_STAGES=2",)),
    ("conv2d", "04d_rs_tf32", ("CF_ROWS=5", "CF_PITCH=72", "CF_STAGES=2")),
    ("conv2d", "04d_rs_tf32", ("CF_ROWS=5", "CF_PITCH=72", "CF_STAGES=2", "CF_SET_CARRY")),
    ("conv2d", "04d_rs_tf32", ("CF_ROWS=5", "CF_PITCH=72", "CF_STAGES=2", "CF_SET_CARRY", "CF_PARAMS_SMEM")),
    # the box four chunks ahead prefetched into L2: 1.304, 1.297 (DRAM reads 1.12 -> 1.66 GB)
    ("conv2d", "04d_rs_tf32", ("CF_L2_PREFETCH=4",)),
    # conv3d 04d, bitwise equal to its registration: three consumers of three rows 2.010, 2.011 vs 1.820, 1.819; four of
    # two 1.888, 1.876 (without stores, CF_ABL_NOSTORE: 0.867 vs 0.973; 04b TF32 0.894 with everything)
    ("conv3d", "04d_rs_tf32", _04D3_THREE),
    ("conv3d", "04d_rs_tf32", _04D3_FOUR),
    # H200, 2026-12-03 from 06:24 UTC (results/device-logs/explore-2026-12-03/; notes/kernel_log.md, twenty-second
    # session). conv3d TF32's depth sweep: a block's rounds move along depth, one 6-row slab staged per round into a ring
    # of 8 slots (tests/test_dwin.py), a fifth of the registered rows; bitwise equal (even Ho only) and slower, per round
    # as fast as the registered loop with 3.2 % more rounds (rows 58-59 twice): 0.985, 0.984 vs 0.892, 0.893 (walk by
    # cursors); units dealt round-robin 0.955, 0.956, 0.954; the slab staged before the epilogue 0.945, 0.943, 0.942
    # vs 0.893; the same without its mbarrier waits (CF_ABL_DWIN_NOWAIT) 0.937
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN",)),
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN", "CF_DWIN_EARLY")),
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN", "CF_DWIN_WAVES")),
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN", "CF_DWIN_WAVES", "CF_DWIN_EARLY")),
    # H200, 2026-12-03 08:33 UTC (results/device-logs/explore-2026-12-03b/call1; twenty-third session): the item's
    # address arithmetic only in the threads that have one (CF_DWIN_BRANCH); bitwise equal, protocol 12/12, memcheck
    # clean: 0.943, 0.945 without and 0.888, 0.890 with the early staging, vs 0.898, 0.901 registered
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN", "CF_DWIN_WAVES", "CF_DWIN_BRANCH")),
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN", "CF_DWIN_WAVES", "CF_DWIN_EARLY", "CF_DWIN_BRANCH")),
    # 08:45 UTC (call2): the sweep's staging in channel quads over all four warps (CF_DWIN_CHAN); bitwise equal,
    # protocol 12/12, memcheck/racecheck/synccheck clean, slower: 0.980, 0.980 vs 0.879, 0.882 (CF_DWIN_BRANCH) and
    # 0.892, 0.893 registered (915 warp instructions per warp tile against 820: each quad's address worked out alone)
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN", "CF_DWIN_WAVES", "CF_DWIN_EARLY", "CF_DWIN_CHAN")),
    # 08:52 UTC (call3): CF_DWIN_BRANCH with a depth step's item address stepped one depth plane on (CF_DWIN_STEP);
    # bitwise equal, protocol 12/12, sanitizers clean, slower: 0.917, 0.917 vs 0.885, 0.883 (832 warp instructions per
    # warp tile against 820: its load path fell from 23.5 to 10.9, and LOP3/LEA grew around the group store at 128 registers)
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN", "CF_DWIN_WAVES", "CF_DWIN_EARLY", "CF_DWIN_BRANCH", "CF_DWIN_STEP")),
), lambda k: _CONV3D_TF32_SWEEP + _CONV3D_TF32_BOX2 + _CONV3D_TF32_ROWMAP + _CONV3D_TF32_DEFER + _CONV2D_TF32_PAIRS
   + _CONV2D_EPI_ILP)
# H200, 2026-12-03 10:48 UTC (results/device-logs/explore-2026-12-03c/call1-2; twenty-fourth session), on the registered
# build (its depth sweep): each cut of warp instructions ran slower. All 12/12 under the protocol; CF_DESC_HI and
# CF_DWIN_N128 bitwise equal (84 cases); memcheck clean (all three; N128 with them). Two or three timings against the
# registered build's 0.883, 0.886, 0.883, 0.880:
_MEASURED_ON_SWEEP = _spelled_against((
    # the clamped GELU with a degree-3 polynomial (one FFMA fewer per output, max abs error 2.6e-7): 0.895, 0.897, 0.895, 0.892
    ("conv3d", "04b_wgmma_tf32", ("CF_GELU_Q3",)),
    # the descriptors' high words kept in registers (3 uniform instructions per wgmma, not 4): 0.918, 0.921
    ("conv3d", "04b_wgmma_tf32", ("CF_DESC_HI",)),
    ("conv3d", "04b_wgmma_tf32", ("CF_DESC_HI", "CF_GELU_Q3")),                   # 0.908, 0.911
    # the GELU of the halved clamp (one FMUL fewer per output; ptxas moved half the epilogue's math after the EMPTY
    # wait): 0.936, 0.941, 0.936, 0.932
    ("conv3d", "04b_wgmma_tf32", ("CF_GELU_HALF",)),
    ("conv3d", "04b_wgmma_tf32", ("CF_DESC_HI", "CF_GELU_Q3", "CF_GELU_HALF")),   # 0.919, 0.923
    # the sweep on 2 warpgroups of two rows, one m64n128k8 per tap (226 registers): 0.993, 0.998, 0.992, 0.989 (its
    # floor without epilogue and stores 0.592 against the registered build's 0.635: the epilogue no longer hides)
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN_N128",)),
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN_N128", "CF_DESC_HI", "CF_GELU_Q3", "CF_GELU_HALF")),   # 0.992, 0.997
    # call 3 (11:12 UTC): the sweep's output in boxes of two rows (a warpgroup's next rows wait for its partner's copy,
    # not for the round's last warpgroup's): bitwise equal, memcheck / racecheck / synccheck clean, 0.842, 0.845; with
    # the degree-3 GELU 0.817, 0.820 (12/12); with the three cuts 0.825, 0.824
    ("conv3d", "04b_wgmma_tf32", ("CF_GROUP=2",)),
    ("conv3d", "04b_wgmma_tf32", ("CF_GROUP=2", "CF_GELU_Q3")),
    ("conv3d", "04b_wgmma_tf32", ("CF_GROUP=2", "CF_DESC_HI", "CF_GELU_Q3", "CF_GELU_HALF")),
    # call 4 (11:47 UTC), each other cut on boxes of two rows with the degree-3 GELU (0.820, 0.821 in that process; all
    # 12/12; the pair memcheck / racecheck / synccheck clean): the GELU of the halved clamp 0.816, 0.817 (the fastest;
    # ncu 817 vs 829 us); descriptors' high words 0.826, 0.828; the halved clamp without Q3 0.837, 0.837. Registered by
    # the next session at its start, with the 13:15 UTC record (0.811 ms)
    ("conv3d", "04b_wgmma_tf32", ("CF_GROUP=2", "CF_GELU_Q3", "CF_DESC_HI")),
    ("conv3d", "04b_wgmma_tf32", ("CF_GROUP=2", "CF_GELU_Q3", "CF_GELU_HALF")),
    ("conv3d", "04b_wgmma_tf32", ("CF_GROUP=2", "CF_GELU_HALF")),
), lambda k: _CONV3D_TF32_BOX2 + _CONV3D_TF32_ROWMAP + _CONV3D_TF32_DEFER)   # registered 2026-12-03 (the last but one of these)
_MEASURED_ON_BOX2 = _spelled_against((
    # H200, 2026-12-03 13:06 UTC (results/device-logs/explore-2026-12-03d/call1; twenty-fifth session), on the build
    # registered with boxes of two rows: a plane's last group skips the rows the group before computed (CF_DWIN_SKIP), alone and with
    # the leftover rounds dealt by cost (CF_DWIN_WEIGHT=48, 40, 32); bitwise equal, 12/12, W = 40's three sanitizers
    # clean; slower: 0.849, 0.847 and 0.856, 0.875, 0.899 vs 0.817, 0.816 (DRAM reads 333-338 MB vs 274: the blocks
    # fall out of step, and the second read of the rows neighbouring units share misses L2)
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN_SKIP",)),
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN_SKIP", "CF_DWIN_WEIGHT=48")),
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN_SKIP", "CF_DWIN_WEIGHT=40")),
    ("conv3d", "04b_wgmma_tf32", ("CF_DWIN_SKIP", "CF_DWIN_WEIGHT=32")),
    # H200, 2026-12-03 15:00 UTC (explore-2026-12-03e/call1; twenty-sixth session): prepared by the twenty-fifth, whose
    # last device-seconds could not start a machine; measured faster and registered (_CONV3D_TF32_ROWMAP)
    ("conv3d", "04b_wgmma_tf32", ("CF_BOX_ROWMAP",)),
), lambda k: _CONV3D_TF32_ROWMAP + _CONV3D_TF32_DEFER)
# Measured on the registration with the rows' order (H200, 2026-12-03 15:45 UTC, explore-2026-12-03e/call3; twenty-sixth
# session): the last slot's wait for its copy's reads and the box's EMPTY arrive moved to the next round, after its
# wgmmas are issued (CF_GROUP_DEFER): bitwise equal, 12/12, memcheck / racecheck / synccheck clean, and faster: 0.768,
# 0.772 vs 0.795, 0.797 (13.1x eager, 7.6x torch.compile in that process). Registered by the twenty-seventh session
# (_CONV3D_TF32_DEFER) at its start, with a record; the build of the 15:07 record stays a candidate ("-CF_GROUP_DEFER").
_MEASURED_ON_ROWMAP = _spelled_against((
    ("conv3d", "04b_wgmma_tf32", ("CF_GROUP_DEFER",)),
), lambda k: _CONV3D_TF32_DEFER)
# Prepared by the twenty-seventh session, measured by the twenty-eighth (H200, 2026-12-03 18:36 UTC,
# explore-2026-12-03g/callP): conv2d 04d on one pool of stages dealt by need (CF_POOL), bitwise equal, 15/15, memcheck
# and synccheck clean, racecheck 12 hazards (the slot numbers' plain stores; not settled); slower: five rows on a pool
# of five 1.671, 1.668 (DRAM reads 2.40 GB against 1.14), four rows on six 1.205, 1.201, against 1.160, 1.155.
_MEASURED_POOL = _spelled_against((
    ("conv2d", "04d_rs_tf32", ("CF_ROWS=5", "CF_PITCH=72", "CF_SET_CARRY", "CF_PARAMS_SMEM", "CF_POOL=5")),
    ("conv2d", "04d_rs_tf32", ("CF_POOL=6",)),
), lambda k: _CONV2D_TF32_PAIRS + _CONV2D_EPI_ILP)
# H200, 2026-12-03 19:40 UTC (explore-2026-12-03g/callQ; twenty-eighth session): conv2d 04d's M rows as pixel pairs,
# registered (_CONV2D_TF32_PAIRS); the build of the 16:53 record stays a candidate ("-CF_PIXEL_PAIRS"). Pairs at five
# rows on two stages: 15/15, slower, 1.424, 1.417 vs 1.222, 1.218 unpaired (ncu barrier stalls 2.83 per issue vs 0.12).
_MEASURED_PAIRS = _spelled_against((
    ("conv2d", "04d_rs_tf32", ("-CF_PIXEL_PAIRS",)),
    ("conv2d", "04d_rs_tf32", ("CF_ROWS=5", "CF_PITCH=72", "CF_STAGES=2", "CF_SET_CARRY", "CF_PARAMS_SMEM")),
    # each use of a shared value converted on its own (20:16 UTC, callR): the same SASS as the registered pairs (ptxas
    # merged the conversions and kept its 120 MOV), bitwise equal, 1.113, 1.106 vs 1.113, 1.106
    ("conv2d", "04d_rs_tf32", ("CF_PAIR_CVT",)),
), lambda k: _CONV2D_EPI_ILP)
# H200, 2026-12-03 22:4x UTC (explore-2026-12-03i/callE; thirtieth session): tap 1's pixels loaded on their own, so that
# no converted value has two uses (CF_PAIR_SPLIT): ptxas built the same SASS counts (MOV 120), bitwise equal, 1.145,
# 1.146 vs 1.141, 1.146 ms.
_MEASURED_PAIR_SPLIT = _spelled_against((
    ("conv2d", "04d_rs_tf32", ("CF_PAIR_SPLIT",)),
), lambda k: _CONV2D_EPI_ILP)
# conv2d 04d 3xTF32 on its way to the registered build (_CONV2D_3XTF32), each 15/15, the sanitizers clean. H200,
# 2026-12-03 21:31 UTC (explore-2026-12-03h/callC): four rows, the 21:41 UTC record's build, 3.135, 3.159 ms; three rows
# 3.297, 3.320, with the odd chunks' main products in a second accumulator (36 truncating adds each at the sum's ulp
# instead of 72) 3.295, 3.337 at rel-L2 1.02e-6 against 1.87e-6 (the bound 2e-6). 22:40 UTC (explore-2026-12-03i/callE):
# three rows 3.325, 3.291; with CONCAT 3.112, 3.084; with three sets 3.266, 3.234; with both 3.092, 3.062, against four
# rows 3.169, 3.131. 22:51 UTC (callF): both plus the erf polynomial (registered) 2.943, 2.934 vs 3.068, 3.056 without.
# Four rows with MAIN2, with CONCAT or with three sets make ptxas serialize the wgmmas (C7512).
# 2026-12-04 01:50 UTC (explore-2026-12-04/callJ; thirty-first session): two tap columns a group on two register sets
# (CF_3X_PAIRS) bitwise equal, 3.031, 3.028 vs 3.005, 2.994 (tensor pipe 68.2 % vs 68.9 %). 02:10 UTC (callL): the
# epilogue in a third warpgroup (CF_3X_EPI_WG: two stages, two fragment sets, consumers at 232 registers) bitwise equal,
# 3.041, 3.043 vs 3.077, 3.065 for two sets without it and 3.008, 3.007 for the registered build; with the row prefetch
# 3.068, 3.067; racecheck reports its named-barrier handoff of the sums (77 hazards; every output bitwise equal).
_WAITING = ()
_NOT_3X = ("-CF_3X_CONCAT", "-CF_3X_SETS=3", "-CF_GELU_FAST", "-CF_3X_ROW_PREFETCH")
_NOT_PREFETCH = ("-CF_3X_ROW_PREFETCH",)
_MEASURED_3XTF32 = _spelled_against((
    ("conv2d", "04d_rs_3xtf32", ("-CF_ROWS=3", "-CF_PITCH=72") + _NOT_3X),
    ("conv2d", "04d_rs_3xtf32", _NOT_3X),
    ("conv2d", "04d_rs_3xtf32", _NOT_3X + ("CF_3X_MAIN2",)),
    ("conv2d", "04d_rs_3xtf32", ("-CF_3X_SETS=3", "-CF_GELU_FAST") + _NOT_PREFETCH),
    ("conv2d", "04d_rs_3xtf32", ("-CF_3X_CONCAT", "-CF_GELU_FAST") + _NOT_PREFETCH),
    ("conv2d", "04d_rs_3xtf32", ("-CF_GELU_FAST",) + _NOT_PREFETCH),
    ("conv2d", "04d_rs_3xtf32", _NOT_PREFETCH),
    ("conv2d", "04d_rs_3xtf32", ("-CF_3X_SETS=3", "CF_3X_PAIRS") + _NOT_PREFETCH),
    ("conv2d", "04d_rs_3xtf32", ("CF_3X_EPI_WG", "CF_STAGES=2", "-CF_3X_SETS=3") + _NOT_PREFETCH),
    ("conv2d", "04d_rs_3xtf32", ("CF_3X_EPI_WG", "CF_STAGES=2", "-CF_3X_SETS=3")),
    # 2026-12-04 21:1x-21:3x UTC (explore-2026-12-04b/callQ, callR; thirty-second session), each verified: four rows
    # without CONCAT (three m64n32k8 a tap, two sets) 3.023, 3.038 vs 2.831, 2.843; the rows through shared memory and
    # the bulk-copy engine (CF_3X_BULK_STORE, two stages; bitwise equal to the two-stage build) 3.258 vs 2.978 and
    # 2.892 registered; the GELU without MUFU (CF_GELU_ALU) 3.009 vs 2.892
    ("conv2d", "04d_rs_3xtf32", ("-CF_ROWS=3", "-CF_PITCH=72", "-CF_3X_CONCAT", "-CF_3X_SETS=3", "CF_ROWS=4", "CF_PITCH=68")),
    ("conv2d", "04d_rs_3xtf32", ("CF_STAGES=2", "CF_3X_BULK_STORE")),
    ("conv2d", "04d_rs_3xtf32", ("CF_GELU_ALU",)),
), lambda k: _CONV2D_EPI_ILP)
CANDIDATES = _measured_builds(_MEASURED_BEFORE_CUTS) + _MEASURED_ON_CURRENT + _MEASURED_ON_SWEEP + _MEASURED_ON_BOX2 \
    + _MEASURED_ON_ROWMAP + _MEASURED_POOL + _MEASURED_PAIRS + _MEASURED_PAIR_SPLIT + _MEASURED_3XTF32 \
    + _WAITING
# The 04b kernels' ablation switches (parts switched off, so wrong outputs on purpose: timed only).
ABLATIONS = (("CF_ABL_RAWEPI",), ("CF_ABL_NOSTORE",), ("CF_ABL_NOLOAD",), ("CF_ABL_NOLOAD", "CF_ABL_NOSTAGE"),
             ("CF_ABL_NOLOAD", "CF_ABL_NOSTAGE", "CF_ABL_RAWEPI", "CF_ABL_NOSTORE"))


def with_defines(variant: Variant, defines) -> Variant:
    """A tuning, candidate or ablation build of `variant`: extra -D NAME[=VALUE], key suffixed with them. "-NAME"
    leaves out a define the variant is registered with (key tag "no_name"), so a candidate can stay the build that
    was measured after the variant's defaults moved on."""
    if not defines:
        return variant
    drop = {d[1:] for d in defines if d.startswith("-")}
    unknown = drop - set(variant.defines)
    if unknown:
        raise ValueError(f"{variant.problem}/{variant.key} is not built with {', '.join(sorted(unknown))}: "
                         f"nothing to leave out (its defines: {', '.join(variant.defines) or 'none'})")
    tag = "_".join(("no_" + d[1:] if d.startswith("-") else d).replace("=", "").lower() for d in defines)
    kept = tuple(d for d in variant.defines if d not in drop)
    return replace(variant, key=f"{variant.key}_{tag}",
                   defines=kept + tuple(d.replace("=", " ", 1) for d in defines if not d.startswith("-")))


def explore_specs() -> list[str]:
    """check_variant.py's specs for the next device call: each 04b variant as committed, the candidates,
    and the ablations of the 04b kernels (problem:key@NAME=VALUE,...)."""
    spec = lambda p, k, d=(): f"{p}:{k}" + (f"@{','.join(d)}" if d else "")   # noqa: E731
    out = [spec(v.problem, v.key) for v in kernel_variants() if v.step == "04b"]
    out += [spec(*c) for c in CANDIDATES]
    out += [spec(v.problem, v.key, _before_bulk(v) + a) for a in ABLATIONS for v in kernel_variants()
            if v.step == "04b" and (v.precision == "tf32" or a == ABLATIONS[-1])]
    return out


def _before_bulk(v: Variant) -> tuple:
    """The ablation switches act on conv3d 04b's register-staged loop and store_tile, not on the bulk or tensor-copy
    store or the lean loop: an ablation build leaves those out, as the builds the ablations measured did."""
    return tuple(d for d in _BEFORE_BULK + tuple(f"-{x}" for x in _CONV3D_TF32_SWEEP) if d[1:] in v.defines)


def _ladder(problem: str) -> list[Variant]:
    return [
        Variant("01_epilogue_fused", problem, "01", "tf32", "epilogue",
                "cuDNN conv (no bias) + one fused bias+epilogue kernel, 1-D grid",
                source="01_epilogue_fused",
                notes="conv by cuDNN with PyTorch's defaults (TF32 allowed), so the precision is eager's"),
        Variant("02_epilogue_vec3d", problem, "02", "tf32", "epilogue",
                "cuDNN conv (no bias) + vectorized 3-D-grid epilogue",
                source="02_epilogue_vec3d",
                notes="conv by cuDNN with PyTorch's defaults (TF32 allowed), so the precision is eager's"),
        Variant("03a_seed_fused", problem, "03a", "fp32", "fused",
                "fully fused conv+epilogue as the seeds designed it (FP32 CUDA cores)",
                source="03a_seed_fused"),
        Variant("03b_register_tiled", problem, "03b", "fp32", "fused",
                "register-tiled fully fused conv+epilogue (FP32 CUDA cores)",
                source="03b_register_tiled"),
        Variant("04_mma_tf32", problem, "04", "tf32", "fused",
                "implicit-GEMM conv+epilogue on tensor cores, TF32 (mma.sync m16n8k8)",
                source="04_implicit_gemm_mma"),
        Variant("04_mma_3xtf32", problem, "04", "3xtf32", "fused",
                "implicit-GEMM conv+epilogue on tensor cores, split-TF32 (3 MMAs, FP32 accuracy)",
                source="04_implicit_gemm_mma", defines=("CF_3XTF32",)),
    ]


def _references(problem: str) -> list[Variant]:
    return [
        Variant("eager", problem, "00", "tf32", "reference", "eager PyTorch, defaults (cuDNN TF32 allowed)",
                layouts="any"),
        Variant("eager_fp32", problem, "00", "fp32", "reference", "eager PyTorch, TF32 off", layouts="any"),
        Variant("channels_last", problem, "00", "tf32", "reference",
                "eager PyTorch, channels_last model and input (conversion of x timed)", layouts="any"),
        Variant("compile", problem, "00", "tf32", "reference", "torch.compile (default mode)", layouts="any"),
        Variant("cudnn_conv", problem, "00", "tf32", "reference", "the conv alone (cuDNN, with bias)",
                layouts="any", notes="not the whole model: timed, not verified against it"),
    ]


VARIANTS: tuple[Variant, ...] = tuple(
    v for p in P.PROBLEMS for v in (_references(p) + _kernels(p))
)


# Prepared, not registered: kernels whose source is written and compile-checked (tests/test_kernels_compile.py) but
# that no record holds. Not in VARIANTS (no record, no notebook row, no CI expectation of a measurement); `get` finds
# them, so that scripts/check_variant.py can verify and time them on the device. conv2d 04e's TF32 build (Winograd
# F(2x2, 3x3), one product): verified in call U (H200, 2026-12-05; rel-L2 5.0e-4, sanitizers clean, hardening
# passed) and slower than 04d's TF32 build (1.853 ms, 1.646 with CF_WINO_ROWS, against 1.102), so not registered.
PREPARED: tuple[Variant, ...] = (
    Variant("04e_wino_tf32", "conv2d", "04e", "tf32", "fused",
            "Winograd F(2x2, 3x3) on the tensor cores in TF32 (one product), the output transform and the "
            "epilogue in registers",
            defines=("CF_WINO_TF32", "CF_GELU_FAST"), algorithm="winograd_f2x2_3x3",
            **dict(_SM90A, source="04e_winograd_wgmma")),
)

# Builds of 04e that its first device call timed beside it (explore-2026-12-05/callU/call_wino_u.sh): three input
# stages; warpgroup 1 a pair behind warpgroup 0 (CF_WINO_SKEW), also with six weight stages; clusters of two blocks
# sharing each weight stage's copy (CF_WINO_CLUSTER=2); each pair's descriptors in uniform registers
# (CF_WINO_DESC_UNIFORM: 5 % fewer SASS instructions a piece, thirty-fourth session).
PREPARED_BUILDS = (
    ("conv2d", "04e_wino_3xtf32", ("CF_WINO_IN_STAGES=3",)),
    ("conv2d", "04e_wino_3xtf32", ("CF_WINO_SKEW",)),
    ("conv2d", "04e_wino_3xtf32", ("CF_WINO_SKEW", "CF_WINO_W_STAGES=6")),
    ("conv2d", "04e_wino_3xtf32", ("CF_WINO_CLUSTER=2",)),
    # the TF32 build with each row's column sums in the tensor core (CF_WINO_ROWS: 41 % fewer SASS instructions a piece)
    ("conv2d", "04e_wino_tf32", ("CF_WINO_ROWS",)),
)


def all_variants(problem: str | None = None, kind: str | None = None) -> list[Variant]:
    return [v for v in VARIANTS if (problem is None or v.problem == problem) and (kind is None or v.kind == kind)]


def kernel_variants(problem: str | None = None) -> list[Variant]:
    return [v for v in all_variants(problem) if v.is_kernel]


def get(problem: str, key: str) -> Variant:
    for v in VARIANTS + PREPARED:
        if v.problem == problem and v.key == key:
            return v
    known = ", ".join(v.key for v in all_variants(problem))
    prepared = ", ".join(v.key for v in PREPARED if v.problem == problem)
    raise ValueError(f"unknown variant {key!r} for problem {problem!r}; known: {known}"
                     + (f"; prepared, not yet registered: {prepared}" if prepared else ""))


# --- input checks: one place, pure Python, testable without a GPU --------------------------------
def check_inputs(variant: Variant, x, weight, bias, param) -> None:
    """Raise a clear error if a kernel variant cannot compute this call correctly."""
    prob = P.get(variant.problem)
    d = prob.dims
    name = f"{variant.problem}/{variant.key}"
    tensors = {"x": x, "weight": weight, "bias": bias, "param": param}
    for tname, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: {tname} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype != torch.float32:
            raise TypeError(f"{name}: {tname} must be float32, got {t.dtype} (these kernels are FP32-in, FP32-out)")
    if x.dim() != d + 2:
        raise ValueError(f"{name}: x must be {d + 2}-D [N, C, {'D, ' if d == 3 else ''}H, W], got shape {tuple(x.shape)}")
    cin, cout, k = prob.in_channels, prob.out_channels, prob.kernel_size
    if x.shape[1] != cin:
        raise ValueError(f"{name}: supports in_channels = {cin} only, got x with {x.shape[1]} channels")
    want_w = (cout, cin) + (k,) * d
    if tuple(weight.shape) != want_w:
        raise ValueError(f"{name}: supports weight of shape {want_w} only (Cout, Cin, kernel {k}), got {tuple(weight.shape)}")
    if tuple(bias.shape) != (cout,):
        raise ValueError(f"{name}: bias must have shape ({cout},), got {tuple(bias.shape)}")
    if param.numel() != cout or any(s != 1 for s in param.shape[1:]) or param.shape[0] != cout:
        raise ValueError(f"{name}: the epilogue parameter must have shape ({cout}, {', '.join(['1'] * d)}), "
                         f"got {tuple(param.shape)}")
    small = [s for s in x.shape[2:] if s < k]
    if small:
        raise ValueError(f"{name}: every spatial size must be >= kernel size {k}, got x shape {tuple(x.shape)}")
    if not x.is_contiguous():
        fmt = "channels_last" if x.is_contiguous(memory_format=torch.channels_last if d == 2 else torch.channels_last_3d) else "non-contiguous"
        raise ValueError(f"{name}: x must be contiguous {'NCHW' if d == 2 else 'NCDHW'}, got a {fmt} tensor; "
                         f"call x.contiguous() first")
    if not weight.is_contiguous():
        raise ValueError(f"{name}: weight must be contiguous")
    for tname, t in tensors.items():
        if t.device.type != "cuda":
            raise ValueError(f"{name}: {tname} must be a CUDA tensor, got device {t.device}")
    devs = {t.device for t in tensors.values()}
    if len(devs) > 1:
        raise ValueError(f"{name}: all tensors must be on one device, got {sorted(map(str, devs))}")


# --- runners --------------------------------------------------------------------------------------
def kernel_runner(variant: Variant, ext):
    """A callable (x, weight, bias, param, out=None) -> y around a built extension."""
    prob = P.get(variant.problem)

    def run(x, weight, bias, param, out=None):
        check_inputs(variant, x, weight, bias, param)
        out_shape = prob.output_shape(x.shape)
        if out is None:
            out = torch.empty(out_shape, device=x.device, dtype=torch.float32)
        elif tuple(out.shape) != out_shape or not out.is_contiguous() or out.dtype != torch.float32:
            raise ValueError(f"out must be a contiguous float32 tensor of shape {out_shape}")
        if out.numel() == 0:
            return out
        b, p = bias.contiguous(), param.contiguous()
        if variant.kind == "epilogue":
            conv = P.eager_conv(prob, x, weight, None)   # cuDNN, PyTorch's defaults; bias goes in our epilogue
            ext.forward(conv, conv, b, p, out, prob.kernel_size, True)
        else:
            ext.forward(x, weight.contiguous(), b, p, out, prob.kernel_size, False)
        return out

    run.variant = variant
    return run


def epilogue_only_runner(variant: Variant, ext):
    """For epilogue variants: the kernel alone on a precomputed conv output (bias not yet added)."""
    prob = P.get(variant.problem)

    def run(conv_out, bias, param, out):
        ext.forward(conv_out, conv_out, bias, param, out, prob.kernel_size, True)
        return out

    return run


def reference_runner(variant: Variant, model):
    """Callables for the step-00 reference rows; `model` is the problem's nn.Module on the GPU."""
    prob = P.get(variant.problem)
    key = variant.key
    if key == "eager":
        return lambda x, *_, out=None: model(x)
    if key == "eager_fp32":
        def eager_fp32(x, *_, out=None):
            with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
                return model(x)
        return eager_fp32
    if key == "channels_last":
        import copy
        fmt = torch.channels_last if prob.dims == 2 else torch.channels_last_3d
        model_cl = copy.deepcopy(model)
        model_cl.conv.to(memory_format=fmt)     # the conv only: the epilogue parameter is not 4-D/5-D
        src, dst, seen = list(model.parameters()), list(model_cl.parameters()), [None]

        def channels_last(x, *_, out=None):
            version = tuple(p._version for p in src)
            if version != seen[0]:              # verify reseeds `model` in place: follow it
                with torch.no_grad():
                    for d, s in zip(dst, src):
                        d.copy_(s)
                seen[0] = version
            return model_cl(x.contiguous(memory_format=fmt))
        return channels_last
    if key == "compile":
        compiled = torch.compile(model)
        return lambda x, *_, out=None: compiled(x)
    if key == "cudnn_conv":
        conv = F.conv2d if prob.dims == 2 else F.conv3d
        return lambda x, *_, out=None: conv(x, model.conv.weight, model.conv.bias)
    raise ValueError(f"no reference runner for {key!r}")
