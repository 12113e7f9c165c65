"""A traced model's kernel: the generated epilogue compiled into the conv template, its torch glue, its build.

`source(traced, design=...)` is the CUDA text nvcc compiles (kernels/family/family_args.h, the design's template from
kernels/family/, the generated `FamilyEpilogue`, one `family_launch` instantiating it for <Cin, Cout, dims>); `glue(...)` is the C++ that
`torch.utils.cpp_extension.load_inline` compiles with the host compiler, as convfuse/build.py does for the study's
kernels (same nvcc flags, same torch-header stub). `compile_usage` compiles the source alone with nvcc for ptxas'
report (CPU tests); `FusedFamily` is the module a GPU session runs: the model's own parameters, the generated kernel.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import NamedTuple

import torch
import torch.nn as nn

from .. import build as B
from ..registry import KERNELS, ROOT
from . import epilogue as E
from . import trace as T

FAMILY_KERNELS = KERNELS / "family"


class Design(NamedTuple):
    """A template design: its file, launch function, precision class of convfuse/verify.py's bounds, the template
    arguments it adds after <CIN, COUT, DIMS, Epi> (a design of a template parameter, not of a file), the GPU targets it
    is built for (build.ARCHS, or one arch-specific target such as "90a": then kernels/wgmma.cuh's register-A core is
    pasted in), the template file it builds on (pasted before its own), and the conv dimensions it takes."""
    file: str
    launch: str
    precision: str
    args: str = ""
    archs: tuple = B.ARCHS
    base: str = ""
    dims: tuple = (2, 3)


# The templates a generated epilogue is compiled into. fp32: direct conv on FP32 CUDA cores; tf32: implicit GEMM on
# mma.sync (sm_80+); 3xtf32: the same template on split operands, three TF32 MMAs per product (the FP32 class on tensor
# cores); tf32w and 3xtf32w: the study's step-04 design on mma.sync (a haloed input window per 8-channel chunk by
# cp.async, weights pre-arranged in fragment order, M = Cout), in the same two classes. The next GPU run times both
# mma.sync templates in one process; the slower pair is then deleted. tf32h: the window's pipeline around study step
# 04d's wgmma core (M = pixels, A from registers), sm_90a and 2-D only.
DESIGNS = {"fp32": Design("conv_epilogue.cuh", "launch", "fp32"),
           "tf32": Design("conv_epilogue_mma.cuh", "launch_mma", "tf32"),
           "3xtf32": Design("conv_epilogue_mma.cuh", "launch_mma", "3xtf32", "cf_family::k3xTF32"),
           "tf32w": Design("conv_epilogue_window.cuh", "launch_window", "tf32"),
           "3xtf32w": Design("conv_epilogue_window.cuh", "launch_window", "3xtf32", "cf_family::k3xTF32"),
           "tf32h": Design("conv_epilogue_window_wgmma.cuh", "launch_window", "tf32", "cf_family::kTF32H", ("90a",),
                           "conv_epilogue_window.cuh", (2,))}
# The files of kernels/family/: everything the family's kernels compile, nothing else (tests/test_family_template.py
# holds the directory to this list, as test_registry does for kernels/<problem>/).
# the tensor-core primitives both mma.sync templates share, pasted before either
MMA_PRIMITIVES = "mma_primitives.cuh"
MMA_TEMPLATES = ("conv_epilogue_mma.cuh", "conv_epilogue_window.cuh")
TEMPLATE_FILES = tuple(dict.fromkeys(("family_args.h", MMA_PRIMITIVES) + tuple(d.file for d in DESIGNS.values())))
# the sm_90a designs' share of kernels/wgmma.cuh: its register-A core, free of common.cuh (the rest needs it and the
# study's ConvArgs)
WGMMA_CORE = ("// --- the register-A core:", "// --- end of the register-A core ---")


def launch_call(design: str, cin: int, cout: int, dims: int) -> str:
    """The launch function's instantiation in a generated source, e.g. launch_mma<64, 128, 2, FamilyEpilogue>."""
    d = DESIGNS[design]
    return f"{d.launch}<{cin}, {cout}, {dims}, FamilyEpilogue{', ' + d.args if d.args else ''}>"


def precision(design: str) -> str:
    return DESIGNS[design].precision


def takes(design: str, dims: int) -> bool:
    """Whether a design compiles a conv of `dims` dimensions (tf32h: 2-D only)."""
    return dims in DESIGNS[design].dims


def arch_specific(design: str) -> bool:
    return any(a.endswith("a") for a in DESIGNS[design].archs)


def runs_on(design: str, capability: tuple) -> str | None:
    """None where the design's machine code loads on a GPU of `capability`; else why not, in one line."""
    here = f"{capability[0]}{capability[1]}"
    if arch_specific(design) and f"{here}a" not in DESIGNS[design].archs:
        return (f"design {design!r} is built for {', '.join('sm_' + a for a in DESIGNS[design].archs)} only (H100, "
                f"H200); this GPU is sm_{here}: take tf32w, its mma.sync design for every GPU from sm_80")
    if capability < (8, 0):
        return f"the family's kernels are built for sm_80 and later; this GPU is sm_{here}"
    return None


def _wgmma_core() -> tuple[int, str]:
    """kernels/wgmma.cuh's register-A core: its first line's number and its text."""
    text = (KERNELS / "wgmma.cuh").read_text()
    start, end = text.index(WGMMA_CORE[0]), text.index(WGMMA_CORE[1]) + len(WGMMA_CORE[1])
    return text.count("\n", 0, start) + 1, text[start:end]


def _text(name: str) -> str:
    # pasted as text, so the include guard would only draw "#pragma once in main file" warnings
    return (FAMILY_KERNELS / name).read_text().replace("#pragma once\n", "")


def source(traced: T.Traced, generated: E.Generated | None = None, design: str = "fp32") -> str:
    """The whole CUDA translation unit for one traced model in one template design."""
    if design not in DESIGNS:
        raise ValueError(f"unknown template design {design!r}; known: {', '.join(DESIGNS)}")
    c = traced.conv
    if not takes(design, c.dims):
        raise ValueError(f"design {design!r} takes {' or '.join(f'{d}-D' for d in DESIGNS[design].dims)} convs; "
                         f"{traced.model_name}'s is {c.dims}-D")
    gen = generated or E.generate(traced)
    shown = FAMILY_KERNELS.relative_to(ROOT)
    d = DESIGNS[design]
    files = [f for f in (d.base, d.file) if f]
    shared = [f'#line 1 "{shown}/{MMA_PRIMITIVES}"', _text(MMA_PRIMITIVES)] if set(files) & set(MMA_TEMPLATES) else []
    if arch_specific(design):
        line, core = _wgmma_core()
        shared += ["#include <stdint.h>", f'#line {line} "{KERNELS.relative_to(ROOT)}/wgmma.cuh"', core]
    return "\n".join([
        f'#line 1 "{shown}/family_args.h"', _text("family_args.h"), *shared,
        *(x for f in files for x in (f'#line 1 "{shown}/{f}"', _text(f))),
        f'#line 1 "generated epilogue of {traced.model_name}"', gen.source,
        "const char* family_launch(const cf_family::FamilyArgs& a, cudaStream_t stream) {",
        f"    return cf_family::{launch_call(design, c.in_channels, c.out_channels, c.dims)}(a, stream);",
        "}",
        "int family_out_channels() { return FamilyEpilogue::kReduces ? 1 : " + str(c.out_channels) + "; }", ""])


GLUE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

// The Python side (FusedFamily) has checked devices, dtypes, contiguity and shapes; these checks keep a direct
// caller of the extension from reading out of bounds.
static void check_tensor(const at::Tensor& t, const char* name) {
    TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
    TORCH_CHECK(t.scalar_type() == at::kFloat, name, " must be float32");
    TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
}

void forward(const at::Tensor& x, const at::Tensor& w, const c10::optional<at::Tensor>& bias,
             const std::vector<at::Tensor>& params, at::Tensor& y) {
    check_tensor(x, "x"); check_tensor(w, "weight"); check_tensor(y, "y");
    TORCH_CHECK(x.dim() == 4 || x.dim() == 5, "x must be 4-D or 5-D");
    TORCH_CHECK((int64_t)params.size() <= cf_family::kMaxParams, "too many epilogue tensors");
    const bool three = x.dim() == 5;
    cf_family::FamilyArgs a = {};
    a.x = x.data_ptr<float>();
    a.w = w.data_ptr<float>();
    if (bias.has_value()) { check_tensor(*bias, "bias"); a.bias = bias->data_ptr<float>(); }
    for (size_t i = 0; i < params.size(); ++i) { check_tensor(params[i], "epilogue tensor"); a.params.p[i] = params[i].data_ptr<float>(); }
    a.y = y.data_ptr<float>();
    a.N = (int)x.size(0); a.Cin = (int)x.size(1); a.Cout = (int)w.size(0);
    a.D = three ? (int)x.size(2) : 1; a.H = (int)x.size(-2); a.W = (int)x.size(-1);
    a.Do = three ? a.D - 2 : 1; a.Ho = a.H - 2; a.Wo = a.W - 2;
    TORCH_CHECK(w.numel() == (int64_t)a.Cout * a.Cin * (three ? 27 : 9), "weight must be [Cout, Cin, 3, 3(, 3)]");
    TORCH_CHECK(y.numel() == (int64_t)a.N * family_out_channels() * a.Do * a.Ho * a.Wo, "y has the wrong size");
    if (y.numel() == 0) return;
    const c10::cuda::CUDAGuard guard(x.device());
    const char* err = family_launch(a, c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == nullptr, "kernel refused the call: ", err ? err : "");
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""


def glue() -> str:
    """The host-compiled C++ of every family extension: the argument block, then the torch wrapper."""
    return _text("family_args.h") + GLUE


def build_name(traced: T.Traced, src: str) -> str:
    """A name per generated source, so that two models (or two versions of the generator) never share a cache (a
    design's targets follow from its source)."""
    digest = hashlib.sha256((src + glue() + repr(B.NVCC_FLAGS)).encode()).hexdigest()[:12]
    return f"convfuse_family_{traced.model_name.lower()[:40]}_{digest}"


def load(traced: T.Traced, src: str, verbose: bool = False, archs: tuple = B.ARCHS):
    """Build (or load from build/family/<name>) the extension for one generated source, for the GPU targets `archs`
    (its design's); needs a GPU and nvcc."""
    import torch.utils.cpp_extension as ext

    B.require_toolchain()
    name = build_name(traced, src)
    build_dir = B.BUILD_DIR / "family" / name
    build_dir.mkdir(parents=True, exist_ok=True)
    before = os.environ.get("TORCH_CUDA_ARCH_LIST")   # the caller's, restored after the build (as build.build)
    os.environ["TORCH_CUDA_ARCH_LIST"] = ";".join(f"{a[0]}.{a[1:]}" for a in archs)   # "90a" -> "9.0a"
    try:
        return ext.load_inline(name=name, cpp_sources=[glue()], cuda_sources=[src], functions=["forward"],
                               extra_cflags=["-O3"], extra_cuda_cflags=list(B.NVCC_FLAGS) + B._nvcc_torch_stub(),
                               build_directory=str(build_dir), verbose=verbose)
    except Exception as e:   # the compiler's output is in the message; keep the end
        raise B.BuildError(f"building the family kernel of {traced.model_name} failed:\n{str(e)[-4000:]}") from None
    finally:
        if before is None:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = before


def compile_usage(src: str, arch: str, stem: str = "family", nvcc: str | None = None) -> dict:
    """Compile a generated source alone (no torch) for sm_`arch` with -Xptxas -v: ptxas' report per kernel entry
    (build.parse_ptxas: registers, spills, stack frame)."""
    nvcc = nvcc or B.find_nvcc()
    if nvcc is None:
        raise B.BuildError("nvcc not found (set CUDA_HOME or put nvcc on PATH)")
    (B.BUILD_DIR / "ptxas").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=B.BUILD_DIR / "ptxas") as tmp:   # its own: compiles run side by side
        path = Path(tmp) / f"{stem}.cu"
        path.write_text(src)
        cmd = [nvcc, *B.NVCC_FLAGS, "-c", str(path), "-o", str(path.with_suffix(".o")),
               f"-gencode=arch=compute_{arch},code=sm_{arch}", "-Xptxas", "-v"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise B.BuildError(f"nvcc failed on {stem} for sm_{arch}:\n{proc.stderr[-4000:]}")
    return B.parse_ptxas(proc.stderr)


def output_shape(traced: T.Traced, input_shape) -> tuple:
    """The model's output shape for an input shape: the conv's (k=3, no padding), less the channel axis after a
    reduction (or 1 with keepdim)."""
    n, _, *spatial = input_shape
    out = (n, traced.conv.out_channels) + tuple(s - 2 for s in spatial)
    red = traced.reduction
    if red is None:
        return out
    return out[:1] + ((1,) if red.keepdim else ()) + out[2:]


# --- the generated kernels as one PyTorch operator ------------------------------------------------------------------
# torch.ops.convfuse.family(key, x, weight, bias, params) -> y: `key` names a FusedFamily made in this process (its
# generated source's build name), so torch.compile(fullgraph=True) keeps a model calling it in one graph node, as the
# study's kernels (convfuse/ops.py). Inference-only, as they are.
_FAMILY: weakref.WeakValueDictionary = weakref.WeakValueDictionary()   # a module's entry goes with the module


@torch.library.custom_op("convfuse::family", mutates_args=())
def family_op(key: str, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
              params: list[torch.Tensor]) -> torch.Tensor:
    f = _FAMILY[key]
    y = torch.empty(output_shape(f.traced, x.shape), device=x.device, dtype=torch.float32)
    f.ext.forward(x, weight.contiguous(), None if bias is None else bias.contiguous(), list(params), y)
    return y


@family_op.register_fake
def _(key, x, weight, bias, params):
    return x.new_empty(output_shape(_FAMILY[key].traced, tuple(x.shape)))


def _no_grad(ctx, *args):
    raise RuntimeError("convfuse::family is inference-only (it has no backward): call it under torch.no_grad() or "
                       "torch.inference_mode()")


family_op.register_autograd(_no_grad, setup_context=_no_grad)


class FusedFamily(nn.Module):
    """`model` computed by one generated kernel (template `design`, a key of DESIGNS): the conv and its epilogue,
    reading the model's own parameters at every call (so fresh parameters copied into the model count). Inference
    only, float32 CUDA tensors."""

    def __init__(self, model: nn.Module, traced: T.Traced | None = None, design: str = "fp32", verbose: bool = False,
                 ext=None):
        super().__init__()
        self.model = model
        self.design, self.precision = design, precision(design)
        self.traced = traced or T.trace(model)
        self.generated = E.generate(self.traced)
        self.source = source(self.traced, self.generated, design)
        w = model.get_submodule(self.traced.conv.path).weight
        why = runs_on(design, torch.cuda.get_device_capability(w.device)) if w.device.type == "cuda" else None
        if why:   # refused before the build: a kernel image this GPU cannot load would fail only at the first call
            raise ValueError(why)
        self.ext = ext if ext is not None else load(self.traced, self.source, verbose=verbose,
                                                    archs=DESIGNS[design].archs)
        self.key = f"{build_name(self.traced, self.source)}_{id(self):x}"     # this module's entry for family_op
        _FAMILY[self.key] = self

    def _tensors(self):
        conv = self.model.get_submodule(self.traced.conv.path)
        params = [T._getattr_path(self.model, p.name) for p in self.traced.params]
        return conv.weight, conv.bias, [p.detach().contiguous().reshape(-1) for p in params]

    def forward(self, x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor, not {type(x).__name__}")
        c = self.traced.conv
        if x.dim() != c.dims + 2:
            raise ValueError(f"x must be {c.dims + 2}-D for a {c.dims}-D conv, got {x.dim()}-D")
        if x.dtype != torch.float32:
            raise TypeError(f"x must be float32, not {x.dtype}")
        if not x.is_cuda:
            raise ValueError("x must be a CUDA tensor")
        if x.shape[1] != c.in_channels:
            raise ValueError(f"x has {x.shape[1]} channels; the conv takes in_channels={c.in_channels}")
        if any(s < 3 for s in x.shape[2:]):
            raise ValueError(f"spatial extent {tuple(x.shape[2:])} is smaller than the kernel size 3")
        if not x.is_contiguous():
            raise ValueError("x must be contiguous (NCHW / NCDHW); non-contiguous and channels_last are refused")
        w, b, params = self._tensors()
        if torch.is_grad_enabled() and (x.requires_grad or w.requires_grad):
            raise RuntimeError("the family's kernels are inference-only: call under torch.no_grad()")
        for name, t in [("weight", w), ("bias", b)] + list(zip(self.generated.params, params)):
            if t is not None and (t.device != x.device or t.dtype != torch.float32):
                raise ValueError(f"{name} must be float32 on {x.device}, is {t.dtype} on {t.device}")
        if out is None:       # through the operator: one graph node under torch.compile
            return family_op(self.key, x, w.detach(), None if b is None else b.detach(), params)
        shape = output_shape(self.traced, x.shape)
        if tuple(out.shape) != shape:
            raise ValueError(f"out has shape {tuple(out.shape)}, the output is {shape}")
        self.ext.forward(x, w.detach().contiguous(), None if b is None else b.detach().contiguous(), params, out)
        return out


def fuse(model: nn.Module, fallback: bool = False, design: str = "tf32", verbose: bool = False) -> nn.Module:
    """`model` as one generated kernel (FusedFamily), or UnsupportedModel naming why it is outside the family; with
    `fallback=True` the caller asked for eager PyTorch instead: the model itself comes back, with a warning naming
    the reason. `design`: tf32 by default, the class of PyTorch's own conv (cuDNN with TF32 allowed); fp32 for FP32
    CUDA-core arithmetic; 3xtf32 for the FP32 bound on tensor cores (split TF32); tf32w and 3xtf32w the same classes
    in the second mma.sync template (the study's step 04 made generic); tf32h the TF32 class on Hopper's wgmma (sm_90a
    only, 2-D convs only).
    (The library's `convfuse.fuse` is the public door; this is the family's.)"""
    import warnings

    try:
        traced = T.trace(model)
        E.generate(traced)            # the generator's own refusals (too many tensors) before any build
    except T.UnsupportedModel as e:
        if not fallback:
            raise
        warnings.warn(f"convfuse: running {type(model).__name__} in eager PyTorch: {e}", stacklevel=2)
        return model
    return FusedFamily(model, traced, design=design, verbose=verbose)
