"""Numerical models of the tensor-core precisions, on the CPU: what accuracy a split scheme gives before
anyone writes its kernel.

A tensor core multiplies its operands exactly (a TF32 x TF32 product has 22 significant bits, a BF16 x
BF16 one 16: both fit FP32) and accumulates in FP32. So a float32 convolution of operands rounded
beforehand to TF32 or BF16 behaves like the MMA, up to the order of the FP32 additions. A scheme is a
list of passes, each a (input part, weight part) pair; the modelled conv is the FP32 sum of the passes,
then bias and the problem's epilogue, compared with the float64 ground truth as the verification protocol
does (rel-L2 and max-abs).

Schemes:
  tf32          x_big * w_big: the 04 tf32 kernels.
  fp16          x_hi * w_hi in FP16 (TF32's 11 significant bits at twice the MMA rate: half a TF32 pass of
                tensor time; weights scaled as for 3xfp16): conv2d 04c_ws_fp16, conv3d 04b_wgmma_fp16.
  3xtf32        + x_small * w_big + x_big * w_small, all TF32: the 04 / 04b 3xtf32 kernels (three passes).
  tf32+bf16     x_big * w_big in TF32, and both correction products in ONE BF16 pass of twice the K
                ([x_small | x_big] . [w_big ; w_small], parts rounded to BF16). A BF16 k16 MMA takes the
                tensor core as long as a TF32 k8 one, so this is two TF32 passes of tensor time, not three;
                conv3d 04b_wgmma_tf32bf16.
  3xfp16        x_hi w_hi + x_lo w_hi + x_hi w_lo with FP16 parts (11 significant bits each, like TF32, at
                twice the MMA rate: 1.5 TF32 passes of tensor time). FP16 has 5 exponent bits: the weights are
                scaled by a power of two so that max|w| lands at 2^14 (exact, undone after the sum); the
                input is not scaled (|x| >= 65520 rounds x_hi to Inf: the kernels' FP32 path). conv2d
                04c_ws_3xfp16, conv3d 04b_wgmma_3xfp16.
"""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

from . import problems as P
from .traffic import TENSOR_PASSES  # noqa: F401  (tensor time per scheme: one place, the traffic module)


def round_tf32(t: torch.Tensor) -> torch.Tensor:
    """FP32 -> TF32 (10 explicit mantissa bits), round to nearest with ties away from zero: cvt.rna.tf32.f32,
    what the kernels apply when they stage an operand. Finite inputs only."""
    bits = t.float().contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def round_bf16(t: torch.Tensor) -> torch.Tensor:
    """FP32 -> BF16 (7 explicit mantissa bits), round to nearest even, back as float32."""
    return t.float().to(torch.bfloat16).float()


def split_tf32(t: torch.Tensor):
    """(big, small): big = TF32(t), small = TF32(t - big), as split_rounded in kernels/wgmma.cuh."""
    big = round_tf32(t)
    return big, round_tf32(t.float() - big)


def split_fp16(t: torch.Tensor, scale: float = 1.0):
    """(hi, lo) FP16 parts of t * scale, divided by scale again: hi = FP16(t), lo = FP16(t - hi), both rounded
    to nearest even, as conv2d 04c's producer and weight staging do. |t * scale| >= 65520 gives hi = Inf
    (the kernel then recomputes the outputs that read it in FP32)."""
    v = t.float() * scale
    hi = v.half().float()
    return hi / scale, (v - hi).half().float() / scale


def weight_scale(w: torch.Tensor) -> float:
    """The power of two that puts the largest finite |w| just under 2^14 (04c's stage_weights); 1 when no
    weight is finite and nonzero."""
    import math

    a = w.abs()
    finite = a[torch.isfinite(a)]
    m = finite.max().item() if finite.numel() else 0.0
    if m == 0.0:
        return 1.0
    return 2.0 ** min(14 - math.frexp(m)[1], 100)


def _passes(scheme: str, x: torch.Tensor, w: torch.Tensor):
    if scheme == "fp16":
        return [(split_fp16(x)[0], split_fp16(w, weight_scale(w))[0])]
    if scheme == "3xfp16":
        xh, xl = split_fp16(x)
        wh, wl = split_fp16(w, weight_scale(w))
        return [(xl, wh), (xh, wl), (xh, wh)]
    xb, xs = split_tf32(x)
    wb, ws = split_tf32(w)
    if scheme == "tf32":
        return [(xb, wb)]
    if scheme == "3xtf32":
        return [(xs, wb), (xb, ws), (xb, wb)]
    if scheme == "tf32+bf16":
        # one BF16 pass over K doubled = the sum of its two halves' products, each exact in FP32
        return [(round_bf16(x.float() - xb), round_bf16(wb)), (round_bf16(xb), round_bf16(w.float() - wb)),
                (xb, wb)]
    raise ValueError(f"unknown scheme {scheme!r}; known: {', '.join(SCHEMES)}")


SCHEMES = ("tf32", "fp16", "3xtf32", "tf32+bf16", "3xfp16")


class _Given(torch.nn.Module):
    """Stands in for the model's conv: returns a precomputed conv output (bias included)."""

    def __init__(self, z: torch.Tensor):
        super().__init__()
        self.z = z

    def forward(self, _x):
        return self.z


@torch.no_grad()
def modelled_output(prob: P.Problem, model: torch.nn.Module, x: torch.Tensor, scheme: str) -> torch.Tensor:
    """The problem's output with its conv computed as `scheme` would on a tensor core (FP32 result)."""
    conv = F.conv2d if prob.dims == 2 else F.conv3d
    w = model.conv.weight.detach()
    z = None
    for xp, wp in _passes(scheme, x, w):
        part = conv(xp, wp)
        z = part if z is None else z + part
    return output_from_conv(prob, model, x, z)


@torch.no_grad()
def output_from_conv(prob: P.Problem, model: torch.nn.Module, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """The problem's FP32 output from a modelled conv result z (no bias): bias, then the model's own epilogue."""
    z = z.float() + model.conv.bias.detach().view(1, -1, *([1] * prob.dims))
    m = copy.deepcopy(model).float()
    m.conv = _Given(z)
    return m(x).float()


@torch.no_grad()
def model_errors(problem: str, shape=None, seed: int = 0, schemes=SCHEMES, dist: str = "rand") -> dict:
    """{scheme: {rel_l2, max_abs}} against the float64 ground truth, on a KernelBench-drawn input of
    `shape` (a slice of the full problem keeps this to seconds on a CPU)."""
    prob = P.get(problem)
    model = prob.make_model(seed=seed)
    x = prob.make_input(shape, seed=seed, dist=dist)
    ref = P.ground_truth(model, x)
    out = {}
    for s in schemes:
        d = modelled_output(prob, model, x, s).double() - ref
        out[s] = {"rel_l2": (torch.linalg.vector_norm(d) / torch.linalg.vector_norm(ref)).item(),
                  "max_abs": d.abs().max().item()}
    return out
