"""Winograd F(2x2, 3x3) for conv2d, on the CPU: the algebra, and what accuracy it would have in 3xTF32 on a tensor
core, before anyone writes its kernel.

Each 2x2 block of outputs ("a tile") reads a 4x4 patch d of the input (stride 2). With the standard matrices

    U = B^T d B   (input transform: adds and subtracts, exact in float64, two FP32 roundings in a kernel)
    V = G g G^T   (weight transform, once per forward on the host, in float64 then rounded to FP32)
    M = sum over input channels of U * V          (16 independent GEMMs, one per patch position p)
    y = A^T M A   (output transform: adds and subtracts of the 16 M values)

a tile costs 16 multiply-adds per (Cin, Cout) instead of 36: the tensor work of the direct 3x3 conv times 4/9. On
the tensor core the 16 GEMMs are [tiles x Cin] x [Cin x Cout] each, K = Cin = 64 for conv2d, so an output's sum
crosses 8 k8 steps a pass instead of 72.

What the numbers here are for: the FP32 bound (rel-L2 2e-6) is tight for the implicit-GEMM 3xTF32 kernel (1.86e-6
measured), and its error comes from the tensor core's truncating FP32 accumulation (notes/kernel_log.md, the 04
3xtf32 accuracy fix). `accumulate="rz"` models that: each MMA adds its 8 exact products to the accumulator and
rounds the sum toward zero to FP32. It is a simplification (the hardware aligns to a finite window first), so it is
calibrated here against a kernel that was measured: the old single-accumulator 04 3xtf32 (`direct_chain`).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from . import traffic
from .splits import round_tf32, split_tf32

BT = torch.tensor([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], dtype=torch.float64)
G = torch.tensor([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=torch.float64)
AT = torch.tensor([[1, 1, 1, 0], [0, 1, -1, -1]], dtype=torch.float64)

# multiplies per output and (Cin, Cout) pair: direct 3x3 = 9, F(2x2, 3x3) = 16 per 4 outputs
TENSOR_WORK_RATIO = traffic.ALGORITHM_WORK["winograd_f2x2_3x3"]


def tile_grid(h: int, w: int) -> tuple[int, int]:
    """Tiles down and across for an input plane of h x w (output (h-2) x (w-2), the last tile partly outside)."""
    if h < 3 or w < 3:
        raise ValueError(f"a 3x3 conv needs an input of at least 3x3, got {h}x{w}")
    return math.ceil((h - 2) / 2), math.ceil((w - 2) / 2)


def patches(x: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) -> (N, C, TH, TW, 4, 4): every tile's 4x4 input patch, zeros past the input's right and bottom
    edges (they only reach outputs that are discarded)."""
    n, c, h, w = x.shape
    th, tw = tile_grid(h, w)
    xp = F.pad(x, (0, 2 * tw + 2 - w, 0, 2 * th + 2 - h))
    return xp.unfold(2, 4, 2).unfold(3, 4, 2)


def input_transform(d: torch.Tensor) -> torch.Tensor:
    """B^T d B on the last two dims, in d's dtype: rows first, then columns (each entry a +-sum of two terms, so
    FP32 rounds exactly twice, as a kernel doing the same adds would)."""
    bt = BT.to(d.dtype)
    return bt @ d @ bt.T


def weight_transform(w: torch.Tensor) -> torch.Tensor:
    """(Cout, Cin, 3, 3) -> (Cout, Cin, 4, 4): G g G^T in float64, rounded once to w's dtype (a host pre-pass)."""
    return (G @ w.double() @ G.T).to(w.dtype)


def output_transform(m: torch.Tensor) -> torch.Tensor:
    """A^T m A on the last two dims, in m's dtype."""
    at = AT.to(m.dtype)
    return at @ m @ at.T


def _untile(y: torch.Tensor, ho: int, wo: int) -> torch.Tensor:
    """(N, Cout, TH, TW, 2, 2) -> (N, Cout, Ho, Wo), dropping outputs past the plane."""
    n, co, th, tw = y.shape[:4]
    return y.permute(0, 1, 2, 4, 3, 5).reshape(n, co, 2 * th, 2 * tw)[:, :, :ho, :wo]


def _round_toward_zero(s: torch.Tensor) -> torch.Tensor:
    """float64 -> the FP32 value next to it toward zero (as float64)."""
    r = s.float()
    over = r.double().abs() > s.abs()
    r = torch.where(over, torch.nextafter(r, torch.zeros_like(r)), r)
    return r.double()


def mma_chain(a_parts, b_parts, accumulate: str = "rz", k_step: int = 8) -> torch.Tensor:
    """sum over passes of A_i @ B_i (A_i: rows x K, B_i: K x cols, parts exact in TF32) as one accumulator would
    take them: per k_step slice of K, every pass in order, each MMA's sum rounded to FP32 — toward zero ("rz", the
    tensor core) or to nearest ("rn"); "exact" sums in float64 and rounds once. Returns float64."""
    if accumulate not in ("rz", "rn", "exact"):
        raise ValueError(f"unknown accumulation {accumulate!r}; use 'rz', 'rn' or 'exact'")
    a_parts = [a.double() for a in a_parts]
    b_parts = [b.double() for b in b_parts]
    if accumulate == "exact":
        return sum(a @ b for a, b in zip(a_parts, b_parts)).float().double()
    k = a_parts[0].shape[-1]
    acc = torch.zeros(*a_parts[0].shape[:-1], b_parts[0].shape[-1], dtype=torch.float64)
    for k0 in range(0, k, k_step):
        for a, b in zip(a_parts, b_parts):
            s = acc + a[..., k0:k0 + k_step] @ b[..., k0:k0 + k_step, :]
            acc = _round_toward_zero(s) if accumulate == "rz" else s.float().double()
    return acc


def _truncate_tf32(t: torch.Tensor) -> torch.Tensor:
    """The top 19 bits of an FP32 value: what the tensor core reads of an operand it is handed unrounded."""
    return (t.float().contiguous().view(torch.int32) & ~0x1FFF).view(torch.float32)


def _three_passes(a: torch.Tensor, b: torch.Tensor, a_split: str = "rna"):
    """The kernels' three passes: small x big, big x small, big x big (the large product last). The weights are split
    with both parts rounded (split_rounded); the input either so ("rna") or as the register-A kernels split it
    ("mask": big = the top 19 bits, small = the rest, which the tensor core truncates)."""
    if a_split == "mask":
        ab = _truncate_tf32(a)
        as_ = _truncate_tf32(a.float() - ab)
    else:
        ab, as_ = split_tf32(a)
    bb, bs = split_tf32(b)
    return [as_, ab, ab], [bb, bs, bb]


@torch.no_grad()
def winograd_conv2d(x: torch.Tensor, w: torch.Tensor, scheme: str = "3xtf32", accumulate: str = "rz",
                    k_split: int = 1, a_split: str = "mask") -> torch.Tensor:
    """The 3x3 conv (no bias) of x (N, Cin, H, W) and w (Cout, Cin, 3, 3) by F(2x2, 3x3).

    scheme "float64": everything in float64 (checks the algebra); "tf32": one product of TF32-rounded U and V (round
    to nearest, ties away: cvt.rna; the kernel's cvt.rn differs on exact ties only), else as "3xtf32"; "3xtf32": FP32
    transforms, TF32 split operands,
    the 16 GEMMs accumulated per `accumulate`, K cut into `k_split` pieces each with its own accumulator (FP32
    round-to-nearest sums of the pieces, as a kernel that streams the input channels would add them in its
    output transform); U split as `a_split` says (_three_passes; "mask" is conv2d 04e's); the output transform in
    FP32. Returns (N, Cout, H-2, W-2) in float64."""
    n, cin, h, wd = x.shape
    cout = w.shape[0]
    if w.shape[1:] != (cin, 3, 3):
        raise ValueError(f"weights {tuple(w.shape)} do not fit an input of {cin} channels and a 3x3 kernel")
    ho, wo = h - 2, wd - 2
    if scheme == "float64":
        u = input_transform(patches(x.double()))
        v = weight_transform(w.double())
        m = torch.einsum("ncijpq,ocpq->noijpq", u, v)
        return _untile(output_transform(m), ho, wo)
    if scheme not in ("3xtf32", "tf32"):
        raise ValueError(f"unknown scheme {scheme!r}; use '3xtf32', 'tf32' or 'float64'")
    if cin % k_split:
        raise ValueError(f"k_split {k_split} does not divide Cin = {cin}")
    u = input_transform(patches(x.float()))                       # (N, Cin, TH, TW, 4, 4) FP32
    v = weight_transform(w.float())                                # (Cout, Cin, 4, 4) FP32
    th, tw = u.shape[2:4]
    a = u.permute(4, 5, 0, 2, 3, 1).reshape(16, n * th * tw, cin)  # per position p: tiles x Cin
    b = v.permute(2, 3, 1, 0).reshape(16, cin, cout)               # per position p: Cin x Cout
    piece = cin // k_split
    m = None
    for k0 in range(0, cin, piece):
        if scheme == "tf32":      # one product: U and V rounded to TF32 (04e TF32: cvt.rn and the weights' big part)
            ap, bp = [round_tf32(a[..., k0:k0 + piece])], [split_tf32(b[:, k0:k0 + piece])[0]]
        else:
            ap, bp = _three_passes(a[..., k0:k0 + piece], b[:, k0:k0 + piece], a_split)
        part = mma_chain(ap, bp, accumulate).float()
        m = part if m is None else m + part
    m = m.reshape(4, 4, n, th, tw, cout).permute(2, 5, 3, 4, 0, 1)  # (N, Cout, TH, TW, 4, 4)
    return _untile(output_transform(m), ho, wo).double()


@torch.no_grad()
def direct_chain(x: torch.Tensor, w: torch.Tensor, accumulate: str = "rz") -> torch.Tensor:
    """The implicit-GEMM 3xTF32 conv with ONE accumulator over all of K = Cin x 9, in the order of the first 04
    3xtf32 kernel (8-channel chunks, then taps, then the chunk's channels): measured at rel-L2 4.8-5.3e-6 on the
    H200 before its two-level fix (notes/kernel_log.md). The calibration point of the truncation model."""
    n, cin, h, wd = x.shape
    cout = w.shape[0]
    ho, wo = h - 2, wd - 2
    cols = F.unfold(x.float(), 3)                                  # (N, Cin*9, Ho*Wo), K ordered (ci, tap)
    a = cols.reshape(n, cin // 8, 8, 9, ho * wo).permute(0, 4, 1, 3, 2).reshape(n * ho * wo, cin * 9)
    b = w.float().reshape(cout, cin // 8, 8, 9).permute(1, 3, 2, 0).reshape(cin * 9, cout)
    ap, bp = _three_passes(a, b, "mask")           # its input split (kernel log: mask + raw small, weights rna/rna)
    y = mma_chain(ap, bp, accumulate)
    return y.reshape(n, ho, wo, cout).permute(0, 3, 1, 2)


@torch.no_grad()
def model_errors(shape=None, seed: int = 0, dist: str = "rand") -> dict:
    """conv2d's whole output (conv, bias, epilogue) against the float64 ground truth, the conv modelled as:
    'direct_one_acc_rz' (the measured 4.8-5.3e-6 kernel: the calibration), 'winograd_rz' (one accumulator a GEMM
    over K = 64), 'winograd_rz_k4' (K in four 16-channel pieces), 'winograd_rn' (round-to-nearest MMAs: the
    transforms' and splits' own error); 'winograd_tf32_rz_k4' (one TF32 product, as 04e's TF32 build accumulates).
    {name: {rel_l2, max_abs}}."""
    from . import problems as P
    from .splits import output_from_conv
    from .verify import compare

    prob = P.get("conv2d")
    model = prob.make_model(seed=seed)
    x = prob.make_input(shape or prob.model_slice, seed=seed, dist=dist)
    ref = P.ground_truth(model, x)
    w = model.conv.weight.detach()
    convs = {"direct_one_acc_rz": lambda: direct_chain(x, w, "rz"),
             "winograd_rz": lambda: winograd_conv2d(x, w, accumulate="rz"),
             "winograd_rz_k4": lambda: winograd_conv2d(x, w, accumulate="rz", k_split=4),
             "winograd_rn": lambda: winograd_conv2d(x, w, accumulate="rn"),
             "winograd_tf32_rz_k4": lambda: winograd_conv2d(x, w, "tf32", accumulate="rz", k_split=4)}
    out = {}
    for name, conv in convs.items():
        m = compare(output_from_conv(prob, model, x, conv()), ref)
        out[name] = {"rel_l2": m["rel_l2"], "max_abs": m["max_abs"]}
    return out


# --- conv2d 04e (kernels/conv2d/04e_winograd_wgmma.cu) on the CPU: its layouts and index arithmetic -------------------
# The kernel was written and emulated before a GPU ran it. This emulation follows its expressions one by
# one — the pre-pass's index f, the box a stage holds, a thread's fragment loads, the descriptor geometry of the weight
# operands (wgmma_layouts.operand), the accumulator fragment, the output transform's coefficients, the epilogue's output
# addresses — with exact (float64) products and sums, so that a wrong table or offset shows up as a wrong output
# against the plain convolution (tests/test_winograd.py). It checks the design's arithmetic, not the CUDA: a
# difference between this text and the kernel's is not caught, so a change to one is made in the other.
K04E = dict(PIECE=16, PIECES=4, PAIRS=8, BOX_W=132, BOX_H=6, W_OP=512, W_STAGE=4096, COUT=64, CIN=64)
K04E["CHP"] = K04E["BOX_H"] * K04E["BOX_W"]


def bt_a(r: int) -> int:
    return 0 if r == 0 else 2 if r == 2 else 1


def bt_b(r: int) -> int:
    return 2 if r == 0 else 1 if r == 2 else 2 if r == 1 else 3


def bt_plus(r: int) -> bool:
    return r == 1


def at_coef(i: int, r: int) -> int:
    return (1 if r < 3 else 0) if i == 0 else (0 if r == 0 else 1 if r == 1 else -1)


def k04e_weights(w: torch.Tensor) -> torch.Tensor:
    """The pre-pass buffer (conv2d_wino_weights): 131,072 FP32 values, f decoded as the kernel does."""
    c = K04E
    f = torch.arange(32 * c["W_STAGE"])
    e, co, khalf = f & 3, (f >> 2) & 63, (f >> 8) & 1
    part = (f >> 9) & 1
    kk, q, s = (f >> 10) & 1, (f >> 11) & 1, f >> 12
    piece, pair = s >> 3, s & 7
    ci = c["PIECE"] * piece + 8 * kk + 4 * khalf + e
    p = 2 * pair + q
    r, col = p >> 2, p & 3
    v = weight_transform(w.double())                          # (Cout, Cin, 4, 4) float64
    val = v[co, ci, r, col].float()                           # rounded once to FP32, then split_rounded
    big, small = split_tf32(val)
    return torch.where(part.bool(), small, big)


def _box(x: torch.Tensor, n: int, oy0: int, ox0: int, piece: int) -> torch.Tensor:
    """A stage: 16 channels x 6 rows x 132 columns at the block tile's corner, zero outside the image, flat."""
    c = K04E
    n_, cin, h, wd = x.shape
    box = torch.zeros(c["PIECE"], c["BOX_H"], c["BOX_W"], dtype=x.dtype)
    ys, xs = slice(oy0, min(oy0 + c["BOX_H"], h)), slice(ox0, min(ox0 + c["BOX_W"], wd))
    part = x[n, c["PIECE"] * piece:c["PIECE"] * (piece + 1), ys, xs]
    box[:, :part.shape[1], :part.shape[2]] = part
    return box.reshape(-1)


def _split_mask(u: torch.Tensor):
    """pair_fragments' split: big = the top 19 bits, small = u - big (FP32), as float64."""
    big = _truncate_tf32(u)
    return big.double(), (u.float() - big).double()


@torch.no_grad()
def k04e_block(x: torch.Tensor, w: torch.Tensor, wt: torch.Tensor, n: int, oy0: int, ox0: int) -> torch.Tensor:
    """One block tile of conv2d 04e as the kernel computes it: y sums (no bias) for outputs oy0..+3, ox0..+127 of
    image n, all 64 Cout, [Cout, 4, 128]; exact products and sums. x: FP32 (N, 64, H, W); wt: k04e_weights(w)."""
    import numpy as np

    from .wgmma_layouts import operand

    c = K04E
    wbytes = wt.float().numpy().view(np.uint8)
    out = torch.zeros(c["COUT"], 4, 128, dtype=torch.float64)
    warp, lane = torch.arange(4)[:, None], torch.arange(32)[None, :]
    gid, tq = lane >> 2, lane & 3                              # (1, 32)
    for wg in range(2):
        col = 64 * wg + 16 * warp + 2 * gid                    # (4, 32): the thread's tile's first box column
        y = torch.zeros(4, 4, 32, 32, dtype=torch.float64)     # y[2 i + j][warp][lane][m]
        for piece in range(c["PIECES"]):
            stage = _box(x.float(), n, oy0, ox0, piece)
            fb = tq * c["CHP"] + col                           # the stage at channel tq, this thread's column
            for pair in range(c["PAIRS"]):
                R, CP = pair // 2, pair % 2
                s = piece * 8 + pair
                acc = torch.zeros(2, 64, 64, dtype=torch.float64)      # D[q][M row][Cout]
                for kk in range(2):
                    frag_big = torch.zeros(2, 4, 4, 32, dtype=torch.float64)   # [q][reg][warp][lane]
                    frag_small = torch.zeros_like(frag_big)
                    for cc in range(2):
                        for h in range(2):
                            t = _row_combination(stage, fb + (8 * kk + 4 * cc) * c["CHP"] + 2 * h * c["BOX_W"], R)
                            for q in range(2):
                                cq = 2 * CP + q
                                u = t[bt_a(cq)] + t[bt_b(cq)] if bt_plus(cq) else t[bt_a(cq)] - t[bt_b(cq)]
                                frag_big[q, h + 2 * cc], frag_small[q, h + 2 * cc] = _split_mask(u)
                    # A (64 x 8) from the fragments: a0 (row g, col t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
                    def assemble(frag):
                        a = torch.zeros(2, 64, 8, dtype=torch.float64)
                        for reg in range(4):
                            rows = 16 * warp + gid + 8 * (reg & 1)          # (4, 32)
                            cols = (tq + 4 * (reg >> 1)).expand(4, 32)
                            for q in range(2):
                                a[q, rows, cols] = frag[q, reg]
                        return a
                    abig, asmall = assemble(frag_big), assemble(frag_small)
                    for q in range(2):
                        def b_op(part):
                            start = (s * c["W_STAGE"] + ((q * 2 + kk) * 2 + part) * c["W_OP"]) * 4
                            return torch.from_numpy(operand(wbytes, start, c["COUT"] * 16, 64, 8, 4)).T   # (8, 64)
                        acc[q] += asmall[q] @ b_op(0) + abig[q] @ b_op(1) + abig[q] @ b_op(0)
                # accumulator fragment: d[4 jj + 2 h + e] = D[16 warp + gid + 8 h][8 jj + 2 tq + e]
                m = torch.arange(32)
                jj, hh, e = m >> 2, (m >> 1) & 1, m & 1
                rows = (16 * warp + gid)[..., None] + 8 * hh                 # (4, 32, 32)
                cols = (8 * jj + 2 * tq[..., None] + e).expand(4, 32, 32)
                for q in range(2):
                    d = acc[q][rows, cols]
                    for i in range(2):
                        for j in range(2):
                            coef = at_coef(i, R) * at_coef(j, 2 * CP + q)
                            y[2 * i + j] += coef * d
        # the epilogue's outputs: y[2 i + j][4 jj + 2 h + e] -> row 2 h + i, column col + j, Cout 8 jj + 2 tq + e
        m = torch.arange(32)
        jj, hh, e = m >> 2, (m >> 1) & 1, m & 1
        for i in range(2):
            for j in range(2):
                co = (8 * jj + 2 * tq[..., None] + e).expand(4, 32, 32)
                row = (2 * hh + i).expand(4, 32, 32)
                cl = (col[..., None] + j).expand(4, 32, 32)
                out[co, row, cl] = y[2 * i + j]
    return out


def _row_combination(stage: torch.Tensor, fc, R: int) -> torch.Tensor:
    """The kernel's row_combination: B^T's row R of the patches whose corner is at box offset `fc` (a tensor of the
    threads' offsets), t[k] = d[A][k] +- d[B][k] for the four columns, in FP32."""
    da = torch.stack([stage[fc + bt_a(R) * K04E["BOX_W"] + j] for j in range(4)])
    db = torch.stack([stage[fc + bt_b(R) * K04E["BOX_W"] + j] for j in range(4)])
    return da + db if bt_plus(R) else da - db


MODEL_LABELS = {
    "direct_one_acc_rz": "direct conv, one accumulator over K = 576 (the first 04 3xtf32: measured 4.8-5.3e-6)",
    "winograd_rz": "Winograd, one accumulator per GEMM over K = 64",
    "winograd_rz_k4": "Winograd as conv2d 04e accumulates (16-channel pieces, then FP32 adds)",
    "winograd_rn": "Winograd with round-to-nearest MMAs (the transforms' and splits' own error)",
    "winograd_tf32_rz_k4": "Winograd in TF32 (one product), accumulated as conv2d 04e does",
}


def accuracy_table(shape=None, dists=("rand", "randn")):
    """model_errors as a table (rows MODEL_LABELS, columns rel-L2 and max-abs per input distribution)."""
    import pandas as pd

    cols = {}
    for d in dists:
        err = model_errors(shape, dist=d)
        cols[f"rel-L2 ({d})"] = {MODEL_LABELS[k]: v["rel_l2"] for k, v in err.items()}
        cols[f"max-abs ({d})"] = {MODEL_LABELS[k]: v["max_abs"] for k, v in err.items()}
    return pd.DataFrame(cols)


def k04e_tiles(tiles: int, grid: int) -> list[list[int]]:
    """conv2d 04e's tile dealing, as its `tile_of` and `ntiles` compute it: each block's tiles in order."""
    return [list(range(b, tiles, grid)) for b in range(grid)]
