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
  fp16s, 3xfp16s
                fp16 and 3xfp16 with the input scaled too (issue 66): a power of two per block of the window a
                kernel's producer stages (INPUT_BLOCK: an image, a chunk of channels, an output tile), from the
                block's largest finite |x|, puts that |x| just under 2^14 as the weights' scale does; undone with the
                weights' scale on the accumulator (exact: powers of two). Not yet a kernel.
  3xfp16c, fp16f, 3xfp16f
                fixed powers of two instead of a block's max|x| (issue 66: nothing to reduce before the first
                conversion). 3xfp16c: 3xfp16 with both lo parts times 2^CORRECTION_SHIFT (x_lo 2^11 has x_hi's
                magnitude, so it stays normal ~2^11 further down), the corrections' own accumulator times 2^-11 when
                added. fp16f / 3xfp16f: the input times 2^INPUT_SHIFT before its FP16 rounding (3xfp16f with 3xfp16c's
                corrections); an output whose window holds |x| 2^INPUT_SHIFT >= 65520 comes from the kernels' FP32 path
                (exact, slow: fallback_share says how often). Not yet kernels.
  fp32          the reference: x * w unrounded, the FP32 conv eager runs with TF32 off (its floor in each table).

Input scale (issue 66). FP16 has 5 exponent bits: below 2^-14 (6.1e-5) a value is subnormal and keeps fewer bits, below
2^-25 it is zero. Unscaled, the FP16 input loses bits once |x| is small (3xfp16's lo part ~ |x| 2^-11 from |x| ~ 0.1 on,
fp16's hi part from |x| ~ 1e-4 on), which a bias hides; scale_table and held_range give each scheme's error and the
range of input scales where it holds its class (verify.BOUNDS), with the model's bias and with bias zeroed.
"""
from __future__ import annotations

import copy
import functools
import math

import torch
import torch.nn.functional as F

from . import problems as P
from . import verify as V
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
    if scheme == "fp32":
        return [(x, w)]
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
    raise ValueError(f"unknown scheme {scheme!r}; known: "
                     f"{', '.join(SCHEMES + SCALED_SCHEMES + FIXED_SCHEMES + ('fp32',))}")


SCHEMES = ("tf32", "fp16", "3xtf32", "tf32+bf16", "3xfp16")     # the kernels' schemes (TENSOR_PASSES' keys)
SCALED_SCHEMES = ("fp16s", "3xfp16s")   # the FP16 schemes with a power-of-two input scale per staged block
FIXED_SCHEMES = ("3xfp16c", "fp16f", "3xfp16f")   # the FP16 schemes with fixed powers of two
CORRECTION_SHIFT = 11     # 3xfp16c: the lo parts' exponent shift (FP16's 11 significant bits)
INPUT_SHIFT = 6           # fp16f, 3xfp16f: the input's (held 1e-6..1e2 without the FP32 path: the scale table)
FP16_MAX = 65520.0        # the first |v| FP16 rounds to Inf
# the precision class (verify.BOUNDS) each scheme is held to; the others are their own class
SCHEME_CLASS = {"fp16s": "fp16", "3xfp16s": "3xfp16", "3xfp16c": "3xfp16", "fp16f": "fp16", "3xfp16f": "3xfp16"}
# The block of the input one exponent covers: (channels, output tile): conv2d 04c's chunk (8 channels of the window of a
# tile of 2 output rows x 86 columns), conv3d 04b's tile (all 8 channels, one output row of up to 62 columns).
INPUT_BLOCK = {"conv2d": (8, 2, 86), "conv3d": (8, 1, 1, 62)}


def scheme_class(scheme: str) -> str:
    return SCHEME_CLASS.get(scheme, scheme)


def pow2_scale(amax: torch.Tensor) -> torch.Tensor:
    """weight_scale elementwise: 2^e with the largest finite |x| of a block times 2^e just under 2^14 (e <= 100);
    1 where a block has no finite nonzero value."""
    a = torch.where(torch.isfinite(amax), amax, torch.zeros_like(amax)).double()
    e = torch.frexp(a).exponent
    s = torch.pow(2.0, torch.clamp(14 - e, max=100).double())
    return torch.where(a > 0, s, torch.ones_like(s))


def _windows(x: torch.Tensor, k: int, tile: tuple):
    """The input windows of the output tiles, zero past the input's edge (as a TMA box reads): (N * tiles, C, *window),
    and the tile counts per spatial dimension."""
    dims = x.dim() - 2
    out = [s - k + 1 for s in x.shape[2:]]
    counts = [-(-o // t) for o, t in zip(out, tile)]
    pad = []
    for s, t, n in reversed(list(zip(x.shape[2:], tile, counts))):
        pad += [0, n * t + k - 1 - s]
    v = F.pad(x, pad)
    for i, t in enumerate(tile):
        v = v.unfold(2 + i, t + k - 1, t)            # (N, C, n1.., w1..)
    n, c = x.shape[:2]
    perm = [0, *range(2, 2 + dims), 1, *range(2 + dims, 2 + 2 * dims)]
    return v.permute(perm).reshape(n * math.prod(counts), c, *[t + k - 1 for t in tile]), counts


def _tiled_conv(xp: torch.Tensor, wp: torch.Tensor, shape: tuple, tile: tuple, counts: list) -> torch.Tensor:
    """Each window's conv put back at its tile's place, cropped to the output."""
    conv = F.conv2d if len(tile) == 2 else F.conv3d
    dims, k = len(tile), wp.shape[-1]
    z = conv(xp, wp)                                   # (N * tiles, Cout, *tile)
    n, co = shape[0], wp.shape[0]
    z = z.reshape(n, *counts, co, *tile)
    perm = [0, dims + 1] + [i for d in range(dims) for i in (1 + d, dims + 2 + d)]
    z = z.permute(perm).reshape(n, co, *[c * t for c, t in zip(counts, tile)])
    return z[(slice(None), slice(None), *[slice(0, s - k + 1) for s in shape[2:]])].contiguous()   # as eager's: CPU
    # kernels of the epilogue (GELU) round differently on a strided tensor


def split_fp16_blocks(win: torch.Tensor, channels: int):
    """(hi, lo) FP16 parts of each window with a power of two per (window, chunk of `channels` channels), undone."""
    m, c = win.shape[:2]
    blocks = win.reshape(m, c // channels, -1)
    s = pow2_scale(blocks.abs().amax(dim=-1)).float()          # (m, chunks)
    s = s.repeat_interleave(channels, dim=1).view(m, c, *([1] * (win.dim() - 2)))
    v = win.float() * s
    hi = v.half().float()
    return hi / s, (v - hi).half().float() / s


class _Given(torch.nn.Module):
    """Stands in for the model's conv: returns a precomputed conv output (bias included)."""

    def __init__(self, z: torch.Tensor):
        super().__init__()
        self.z = z

    def forward(self, _x):
        return self.z


@torch.no_grad()
def modelled_output(prob: P.Problem, model: torch.nn.Module, x: torch.Tensor, scheme: str,
                    input_block: str = "block") -> torch.Tensor:
    """The problem's output with its conv computed as `scheme` would on a tensor core (FP32 result). For the scaled
    schemes, input_block "block" takes an input exponent per INPUT_BLOCK, "call" one for the whole input."""
    conv = F.conv2d if prob.dims == 2 else F.conv3d
    w = model.conv.weight.detach()
    if scheme in FIXED_SCHEMES:
        return output_from_conv(prob, model, x, fixed_conv(prob, x, w, scheme)[0])
    z = None
    for part in (_scaled_parts(prob, x, w, scheme, input_block) if scheme in SCALED_SCHEMES else
                 (conv(xp, wp) for xp, wp in _passes(scheme, x, w))):
        z = part if z is None else z + part
    return output_from_conv(prob, model, x, z)


def _scaled_parts(prob: P.Problem, x: torch.Tensor, w: torch.Tensor, scheme: str, input_block: str = "block"):
    """fp16s / 3xfp16s: each pass's conv, tile by tile, the input rounded to FP16 at its block's scale (input_block
    "call": one scale for the whole input, a pre-pass's max|x|)."""
    wh, wl = split_fp16(w, weight_scale(w))
    if input_block == "call":
        xh, xl = split_fp16(x, pow2_scale(x.abs().amax()).item())
        conv = F.conv2d if prob.dims == 2 else F.conv3d
        for xp, wp in ([(xh, wh)] if scheme == "fp16s" else [(xl, wh), (xh, wl), (xh, wh)]):
            yield conv(xp, wp)
        return
    if input_block != "block":
        raise ValueError(f"unknown input_block {input_block!r}; use 'block' or 'call'")
    channels, *tile = INPUT_BLOCK[prob.key]
    win, counts = _windows(x.float(), prob.kernel_size, tuple(tile))
    xh, xl = split_fp16_blocks(win, min(channels, x.shape[1]))
    pairs = [(xh, wh)] if scheme == "fp16s" else [(xl, wh), (xh, wl), (xh, wh)]
    for xp, wp in pairs:
        yield _tiled_conv(xp, wp, tuple(x.shape), tuple(tile), counts)


def fixed_conv(prob: P.Problem, x: torch.Tensor, w: torch.Tensor, scheme: str) -> tuple[torch.Tensor, float]:
    """(conv without bias, fallback_share) of a FIXED_SCHEMES scheme: the FP16 passes at fixed powers of two, undone on
    the sums (exact), and the FP32 conv wherever an output's window holds an input FP16 cannot hold at the input's
    shift (|x| 2^shift >= 65520, Inf, NaN), as the kernels' FP32 path computes it; fallback_share: the share of
    outputs that took it."""
    conv = F.conv2d if prob.dims == 2 else F.conv3d
    sx, sw = 2.0 ** (INPUT_SHIFT if scheme in ("fp16f", "3xfp16f") else 0), weight_scale(w)
    v, wv = x.float() * sx, w.float() * sw
    xh, wh = v.half().float(), wv.half().float()
    z = conv(torch.nan_to_num(xh, posinf=0.0, neginf=0.0), wh)
    if scheme != "fp16f":
        c = 2.0 ** CORRECTION_SHIFT
        xl = torch.nan_to_num(((v - xh) * c).half().float(), nan=0.0)
        wl = ((wv - wh) * c).half().float()
        z = z + (conv(torch.nan_to_num(xh, posinf=0.0, neginf=0.0), wl) + conv(xl, wh)) / c
    z = z / (sx * sw)
    over = ~torch.isfinite(xh)
    if not over.any():
        return z, 0.0
    hit = conv(over.float().sum(1, keepdim=True), torch.ones((1, 1) + tuple(w.shape[2:]))) > 0
    return torch.where(hit, conv(x.float(), w.float()), z), hit.float().mean().item()


@torch.no_grad()
def output_from_conv(prob: P.Problem, model: torch.nn.Module, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """The problem's FP32 output from a modelled conv result z (no bias): bias, then the model's own epilogue."""
    z = z.float() + model.conv.bias.detach().view(1, -1, *([1] * prob.dims))
    m = copy.deepcopy(model).float()
    m.conv = _Given(z)
    return m(x).float()


BIAS_MODES = ("model", "zero")      # the model's own conv bias, or bias zeroed (a bias masks the conv's own error)
# input scales of the table: unit, the small decades where FP16 runs out of exponent, and a large one (issue 66)
SCALES = (1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e3)


@torch.no_grad()
def model_errors(problem: str, shape=None, seed: int = 0, schemes=SCHEMES, dist: str = "rand", scale: float = 1.0,
                 bias: str = "model") -> dict:
    """{scheme: {rel_l2, max_abs}} against the float64 ground truth, on a KernelBench-drawn input of `shape` (a slice
    of the full problem keeps this to seconds on a CPU) times `scale`, with the model's conv bias or (bias="zero") none."""
    if bias not in BIAS_MODES:
        raise ValueError(f"unknown bias mode {bias!r}; known: {', '.join(BIAS_MODES)}")
    prob = P.get(problem)
    model = prob.make_model(seed=seed)
    if bias == "zero":
        model.conv.bias.zero_()
    x = prob.make_input(shape, seed=seed, dist=dist) * scale
    ref = P.ground_truth(model, x)
    out = {}
    for s in schemes:
        share = None
        if s in FIXED_SCHEMES:      # fixed_conv also says how many outputs took the FP32 path
            z, share = fixed_conv(prob, x, model.conv.weight.detach(), s)
            y = output_from_conv(prob, model, x, z)
        else:
            y = modelled_output(prob, model, x, s)
        d = y.double() - ref
        out[s] = {"rel_l2": (torch.linalg.vector_norm(d) / torch.linalg.vector_norm(ref)).item(),
                  "max_abs": d.abs().max().item(), **({} if share is None else {"fallback_share": share})}
    return out


# The small input the CPU tests and the table use: one image at a reduced spatial size (output 22 x 22; conv3d 4 x 14 x 14).
TABLE_SHAPE = {"conv2d": (1, 64, 24, 24), "conv3d": (1, 8, 6, 16, 16)}


def class_holds(err: dict, scheme: str, scale: float = 1.0) -> bool:
    """Whether modelled errors {rel_l2, max_abs} keep the scheme's class bound (verify.BOUNDS; the max-abs bound
    taken at the input's scale, verify.max_abs_bound)."""
    return V.within_bounds({**err, "nonfinite_mismatch": 0}, scheme_class(scheme), scale=scale)


def scale_table(problem: str, scales=SCALES, bias: str = "zero", schemes=SCHEMES + SCALED_SCHEMES + FIXED_SCHEMES,
                shape=None, seed: int = 0, dist: str = "randn", reference: bool = True) -> list[dict]:
    """One row per (scale, scheme): the modelled rel-L2 and max-abs against float64 on `shape` (TABLE_SHAPE unless
    given) times the scale, the class and its bound, and whether it holds. `reference` adds eager FP32's own error
    (scheme "fp32") at each scale: the floor beside which each scheme's error is read."""
    rows = []
    for sc, errs in _table(problem, tuple(scales), bias, tuple(schemes) + (("fp32",) if reference else ()),
                           tuple(shape or TABLE_SHAPE[problem]), seed, dist):
        for scheme, e in errs.items():
            cls = scheme_class(scheme)
            rows.append({"problem": problem, "bias": bias, "scale": sc, "scheme": scheme, "class": cls,
                         "rel_l2": e["rel_l2"], "max_abs": e["max_abs"], "bound_rel_l2": V.BOUNDS[cls][1],
                         "bound_max_abs": V.max_abs_bound(cls, sc), "holds": class_holds(e, scheme, sc),
                         "fallback_share": e.get("fallback_share", 0.0)})
    return rows


@functools.lru_cache(maxsize=64)
def _table(problem, scales, bias, schemes, shape, seed, dist):
    return [(sc, model_errors(problem, shape, seed=seed, schemes=schemes, dist=dist, scale=sc, bias=bias))
            for sc in scales]


def held_range(problem: str, scheme: str, bias: str | None = None, scales=V.SCALES, **kw) -> tuple | None:
    """(lo, hi): the smallest and largest input scale of `scales` between which the scheme holds its class at every
    scale tested, with the model's bias and with bias zeroed (or the one `bias` mode), taken outward from scale 1;
    None if it fails at scale 1."""
    ordered = sorted(scales)
    ok = {sc: True for sc in ordered}
    for b in ([bias] if bias else BIAS_MODES):
        for r in scale_table(problem, tuple(scales), b, **kw):      # the whole table: one cached computation
            if r["scheme"] == scheme:
                ok[r["scale"]] = ok[r["scale"]] and r["holds"]
    i = ordered.index(1)
    if not ok[1]:
        return None
    lo = hi = i
    while lo > 0 and ok[ordered[lo - 1]]:
        lo -= 1
    while hi < len(ordered) - 1 and ok[ordered[hi + 1]]:
        hi += 1
    return ordered[lo], ordered[hi]


def format_table(rows: list[dict], value: str = "rel_l2") -> str:
    """A markdown table: scales down, schemes across, `value` per cell, a failing cell in bold."""
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    scales = list(dict.fromkeys(r["scale"] for r in rows))
    cell = {(r["scale"], r["scheme"]): r for r in rows}

    def fmt(r):
        t = f"{r[value]:.1e}"
        return t if r["holds"] or r["scheme"] == "fp32" else f"**{t}**"

    head = ["input x"] + [f"{s} ({scheme_class(s)}, {cell[(scales[0], s)]['bound_rel_l2']:.0e})"
                          if s != "fp32" else "fp32 (eager's floor)" for s in schemes]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for sc in scales:
        lines.append("| " + " | ".join([f"{sc:g}"] + [fmt(cell[(sc, s)]) for s in schemes]) + " |")
    return "\n".join(lines)
