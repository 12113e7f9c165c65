"""A CPU model of how the FP16 kernels' `wgmma`s read their operands from shared memory: the byte images
the kernels write (weights, one staged chunk or tile) and the matrix-descriptor arithmetic that reads them
back, so that the layouts and every descriptor offset of kernels/conv2d/04c_warp_specialized_wgmma.cu and
of kernels/conv3d/04b_implicit_gemm_wgmma.cu (-DCF_3XF16, and -DCF_1XF16: FP16 operands alone) can be
checked against a plain convolution without a GPU.

Descriptor model (PTX ISA, wgmma, no-swizzle K-major): an operand of R rows x K is made of core matrices
of 8 rows x 16 bytes; element (r, k) lies at start + (r // 8) * sbo + (k // per16) * lbo + (r % 8) * 16 +
(k % per16) * esize, where per16 = 16 / esize elements fit in 16 bytes (8 FP16, 4 TF32). The kernel uses
sbo = 128 everywhere; `lbo` is free, which is what lets one k16 FP16 `wgmma` take two taps (lbo = the
distance between their shifted input windows) or pair a 1 KB zero block with tap 8.

The constants below are the kernel's (its header has the layouts); tests/test_wgmma_model.py checks the
model, so a layout change in the kernel has to be made here too to be checked.
"""
from __future__ import annotations

import numpy as np
import torch

from .splits import split_fp16, weight_scale

CIN = COUT = 64
KS, TAPS, CHUNK, NCHUNK = 3, 9, 8, 8
XW, TH = 88, 2                      # staged pixels per row (MMA columns per output row), output rows per tile
XH = TH + KS - 1
XPART = XH * XW * 16                # bytes per part of a stage (16 bytes per pixel)
STAGE = 2 * XPART + 64              # + 64 bytes read only by discarded columns
CHUNK_W = 18432                     # 3xFP16 weights per chunk: [w_lo(tap 0..8)][w_hi(tap 0..8)], 1 KB each
ZERO = 1024                         # the zero block, first in shared memory


def tap_offset(t: int) -> int:
    """Byte offset of tap t's window in a stage part: staged row kh, shifted by kw pixels."""
    return ((t // KS) * XW + t % KS) * 16


def operand(mem: np.ndarray, start: int, lbo: int, rows: int, k: int, esize: int, sbo: int = 128) -> np.ndarray:
    """The rows x k operand a descriptor (start, lbo, sbo) reads from the byte image `mem`."""
    per16 = 16 // esize
    r = np.arange(rows)[:, None]
    kk = np.arange(k)[None, :]
    addr = start + (r // 8) * sbo + (kk // per16) * lbo + (r % 8) * 16 + (kk % per16) * esize
    dtype = np.float16 if esize == 2 else np.float32
    idx = addr[..., None] + np.arange(esize)
    return mem[idx].copy().view(dtype).reshape(rows, k).astype(np.float64)


def weight_image(w: np.ndarray) -> tuple[np.ndarray, float]:
    """Zero block + 3xFP16 weights as the kernel stages them (scale 2^e puts max finite |w| under 2^14);
    returns (bytes, 2^-e)."""
    s = weight_scale(torch.from_numpy(w))
    hi, lo = (p.mul(s).half().numpy() for p in split_fp16(torch.from_numpy(w), s))
    img = np.zeros(ZERO + NCHUNK * CHUNK_W, np.uint8)
    h = img[ZERO:].view(np.uint16)
    for c in range(NCHUNK):
        for t in range(TAPS):
            blk = (slice(None), slice(CHUNK * c, CHUNK * (c + 1)), t // KS, t % KS)   # [co][8 channels]
            at = c * (CHUNK_W // 2) + t * 512
            h[at:at + 512] = lo[blk].reshape(-1).view(np.uint16)
            h[at + 4608:at + 4608 + 512] = hi[blk].reshape(-1).view(np.uint16)
    return img, 1.0 / s


def staged_pixels(x: np.ndarray, n: int, oh: int, ox0: int, chunk: int) -> np.ndarray:
    """One chunk's staged pixels in FP32, [row][pixel][8 channels], zero outside the image: what the producer
    converts, whichever way it copied them."""
    H, W = x.shape[2:]
    rows = np.arange(XH)[:, None] + oh
    cols = np.arange(XW)[None, :] + ox0
    ok = (rows < H) & (cols < W)
    v = np.zeros((XH, XW, CHUNK), np.float32)
    sl = x[n, CHUNK * chunk:CHUNK * (chunk + 1)]
    v[ok] = sl[:, np.minimum(rows, H - 1), np.minimum(cols, W - 1)].transpose(1, 2, 0)[ok]
    return v


def stage_image(x: np.ndarray, n: int, oh: int, ox0: int, chunk: int) -> np.ndarray:
    """One staged chunk as the producer writes it: [part x_hi | x_lo][row][pixel][8 channels FP16]."""
    img = np.zeros(STAGE, np.uint8)
    v = staged_pixels(x, n, oh, ox0, chunk)
    hi, lo = (p.half().numpy() for p in split_fp16(torch.from_numpy(v)))
    img[:XPART] = hi.reshape(-1).view(np.uint8)
    img[XPART:2 * XPART] = lo.reshape(-1).view(np.uint8)
    return img


def tile_3xfp16(x: np.ndarray, w: np.ndarray, n: int, oh: int, ox0: int) -> np.ndarray:
    """The accumulators of one 04c 3xFP16 tile (64 Cout x TH*XW columns) after the combine, conv without
    bias, computed the way the kernel's 14 wgmmas per chunk read their operands (exact sums)."""
    wimg, inv = weight_image(w)
    am = np.zeros((COUT, TH * XW))
    ac = np.zeros((COUT, TH * XW))
    N = TH * XW
    for c in range(NCHUNK):
        xs = stage_image(x, n, oh, ox0, c)
        mem = np.concatenate([wimg, xs])
        xa, wc = len(wimg), ZERO + c * CHUNK_W
        for t in range(TAPS):
            a = operand(mem, wc + t * 1024, 9216, COUT, 16, 2)               # [w_lo(t) | w_hi(t)]
            b = operand(mem, xa + tap_offset(t), XPART, N, 16, 2)            # [x_hi(t) | x_lo(t)]
            ac += a @ b.T
            if t % 2 == 1:                                                   # [w_hi(t-1) | w_hi(t)] . [x_hi(t-1) | x_hi(t)]
                a = operand(mem, wc + 9216 + (t - 1) * 1024, 1024, COUT, 16, 2)
                b = operand(mem, xa + tap_offset(t - 1), tap_offset(t) - tap_offset(t - 1), N, 16, 2)
                am += a @ b.T
        a = operand(mem, 0, wc + 9216 + 8 * 1024, COUT, 16, 2)              # [0 | w_hi(8)]
        b = operand(mem, xa, tap_offset(8), N, 16, 2)                        # [x_hi(0) | x_hi(8)]
        am += a @ b.T
    return (am + ac) * inv


# --- conv3d 04b, -DCF_3XF16: one tile = 64 Cout x 64 columns of one output row (TH 1) -------------------
C3_CIN, C3_TAPS = 8, 27
C3_XW, C3_XD, C3_XH = 64, 3, 3      # staged pixels per row, staged depth slices and rows
C3_HALF = C3_XD * C3_XH * C3_XW * 16                # bytes per k-half of the staged tile (x_hi, then x_lo)
C3_WTAP = 2 * COUT * 16                             # bytes per tap of weights: [w_lo | w_hi], 1 KB each


def c3_boff(t: int, pitch: int = C3_XW) -> int:
    """Byte offset of tap t = (kd, kh, kw)'s window in a k-half: staged row (kd, kh), shifted by kw pixels; rows
    `pitch` pixels apart (CF_STAGE_SKEW's rows are C3_XW + 1)."""
    return (((t // 9) * C3_XH + (t // 3) % 3) * pitch + t % 3) * 16


def c3_weight_image(w: np.ndarray) -> tuple[np.ndarray, float]:
    """[tap 0..27][w_lo | w_hi][co][8 channels FP16], tap 27 zero, as conv3d 04b stages them; (bytes, 2^-e)."""
    s = weight_scale(torch.from_numpy(w))
    hi, lo = (p.mul(s).half().numpy() for p in split_fp16(torch.from_numpy(w), s))
    img = np.zeros((C3_TAPS + 1) * C3_WTAP, np.uint8)
    h = img.view(np.uint16)
    for t in range(C3_TAPS):
        blk = (slice(None), slice(None), t // 9, (t // 3) % 3, t % 3)          # [co][8 channels]
        h[t * 1024:t * 1024 + 512] = lo[blk].reshape(-1).view(np.uint16)
        h[t * 1024 + 512:t * 1024 + 1024] = hi[blk].reshape(-1).view(np.uint16)
    return img, 1.0 / s


def c3_stage_image(x: np.ndarray, n: int, od: int, oh: int, ox0: int) -> np.ndarray:
    """One staged tile: [k-half x_hi | x_lo][depth][row][pixel][8 channels FP16], + 64 bytes read only by
    discarded columns; pixels past the input are zeros."""
    D, H, W = x.shape[2:]
    img = np.zeros(2 * C3_HALF + 64, np.uint8)
    d = np.arange(C3_XD)[:, None, None] + od
    r = np.arange(C3_XH)[None, :, None] + oh
    c = np.arange(C3_XW)[None, None, :] + ox0
    ok = (d < D) & (r < H) & (c < W)
    v = np.zeros((C3_XD, C3_XH, C3_XW, C3_CIN), np.float32)
    full = x[n][:, np.minimum(d, D - 1), np.minimum(r, H - 1), np.minimum(c, W - 1)]   # [ci][d][r][c]
    v[ok] = full.transpose(1, 2, 3, 0)[ok]
    hi, lo = (p.half().numpy() for p in split_fp16(torch.from_numpy(v)))
    img[:C3_HALF] = hi.reshape(-1).view(np.uint8)
    img[C3_HALF:2 * C3_HALF] = lo.reshape(-1).view(np.uint8)
    return img


def c3_tile_3xfp16(x: np.ndarray, w: np.ndarray, n: int, od: int, oh: int, ox0: int) -> np.ndarray:
    """The accumulator of one conv3d 04b 3xFP16 tile (64 Cout x 64 columns), conv without bias, computed the
    way the kernel's 41 wgmmas read their operands (exact sums)."""
    wimg, inv = c3_weight_image(w)
    mem = np.concatenate([wimg, c3_stage_image(x, n, od, oh, ox0)])
    xa, acc = len(wimg), np.zeros((COUT, C3_XW))
    for t in range(C3_TAPS):
        a = operand(mem, t * C3_WTAP, 1024, COUT, 16, 2)                       # [w_lo(t) | w_hi(t)]
        b = operand(mem, xa + c3_boff(t), C3_HALF, C3_XW, 16, 2)               # [x_hi(t) | x_lo(t)]
        acc += a @ b.T
        if t % 2 == 1:                                                         # [w_hi(t-1) | w_hi(t)] . [x_hi(t-1) | x_hi(t)]
            a = operand(mem, (t - 1) * C3_WTAP + 1024, C3_WTAP, COUT, 16, 2)
            b = operand(mem, xa + c3_boff(t - 1), c3_boff(t) - c3_boff(t - 1), C3_XW, 16, 2)
            acc += a @ b.T
    a = operand(mem, 26 * C3_WTAP + 1024, C3_WTAP, COUT, 16, 2)                 # [w_hi(26) | 0 (tap 27)]
    b = operand(mem, xa + c3_boff(26), C3_HALF, C3_XW, 16, 2)                  # [x_hi(26) | x_lo(26)]
    acc += a @ b.T
    return acc * inv


# --- FP16 operands alone (-DCF_1XF16, precision fp16): 3xFP16's main products, x_hi . w_hi --------------------
CHUNK_W16 = 9216                    # conv2d fp16 weights per chunk: [w_hi(tap 0..8)], 1 KB each
SANITIZER_PAD = 2752                # bytes after conv2d fp16's last stage (compute-sanitizer's operand span)


def weight_image_fp16(w: np.ndarray) -> tuple[np.ndarray, float]:
    """Zero block + conv2d 04c's fp16 weights, [chunk][tap][co][8 channels] of w_hi alone; (bytes, 2^-e)."""
    s = weight_scale(torch.from_numpy(w))
    hi = split_fp16(torch.from_numpy(w), s)[0].mul(s).half().numpy()
    img = np.zeros(ZERO + NCHUNK * CHUNK_W16, np.uint8)
    h = img[ZERO:].view(np.uint16)
    for c in range(NCHUNK):
        for t in range(TAPS):
            at = c * (CHUNK_W16 // 2) + t * 512
            h[at:at + 512] = hi[:, CHUNK * c:CHUNK * (c + 1), t // KS, t % KS].reshape(-1).view(np.uint16)
    return img, 1.0 / s


def tile_fp16(x: np.ndarray, w: np.ndarray, n: int, oh: int, ox0: int) -> np.ndarray:
    """The accumulators of one 04c fp16 tile (64 Cout x TH*XW columns), conv without bias, read the way the
    kernel's 5 wgmmas per chunk read their operands: a stage is x_hi alone (+ 64 bytes), exact sums."""
    wimg, inv = weight_image_fp16(w)
    acc, N = np.zeros((COUT, TH * XW)), TH * XW
    for c in range(NCHUNK):
        stage = np.concatenate([stage_image(x, n, oh, ox0, c)[:XPART], np.zeros(64, np.uint8)])
        mem = np.concatenate([wimg, stage])
        xa, wc = len(wimg), ZERO + c * CHUNK_W16
        for t in (1, 3, 5, 7):                                               # [w(t-1) | w(t)] . [x(t-1) | x(t)]
            a = operand(mem, wc + (t - 1) * 1024, 1024, COUT, 16, 2)
            b = operand(mem, xa + tap_offset(t - 1), tap_offset(t) - tap_offset(t - 1), N, 16, 2)
            acc += a @ b.T
        a = operand(mem, 0, wc + 8 * 1024, COUT, 16, 2)                     # [0 | w(8)]
        b = operand(mem, xa, tap_offset(8), N, 16, 2)                        # [x(0) | x(8)]
        acc += a @ b.T
    return acc * inv


def fp16_stage_reads() -> tuple[int, int]:
    """(the last byte conv2d fp16's 5 wgmmas per chunk read in a stage + 1, the last byte of the N x K span from
    a descriptor's start that compute-sanitizer takes an operand to read + 1), both from the stage's start."""
    N = TH * XW
    descs = [(tap_offset(t - 1), tap_offset(t) - tap_offset(t - 1)) for t in (1, 3, 5, 7)] + [(0, tap_offset(8))]
    real = max(start + (N // 8 - 1) * 128 + lbo + 8 * 16 for start, lbo in descs)   # the second k-half's last row
    span = max(start + N * 16 * 2 for start, _ in descs)
    return real, span


def c3_tile_fp16(x: np.ndarray, w: np.ndarray, n: int, od: int, oh: int, ox0: int) -> np.ndarray:
    """The accumulator of one conv3d 04b fp16 tile (64 Cout x 64 columns), conv without bias: the 14 wgmmas
    of tap pairs (tap 26 with the zero tap 27) over x_hi in k-half 0; k-half 1 is never written (zeros)."""
    wimg, inv = c3_weight_image(w)
    stage = c3_stage_image(x, n, od, oh, ox0)
    stage[C3_HALF:2 * C3_HALF] = 0
    return _c3_fp16_acc(wimg, stage, c3_boff, C3_HALF) * inv


def _c3_fp16_acc(wimg: np.ndarray, stage: np.ndarray, boff, half_bytes: int) -> np.ndarray:
    """The fp16 tile's 14 wgmmas over a weight image and a staged tile whose tap windows lie at boff(t)."""
    mem = np.concatenate([wimg, stage])
    xa, acc = len(wimg), np.zeros((COUT, C3_XW))
    for t in range(1, C3_TAPS, 2):                                             # [w_hi(t-1) | w_hi(t)] . [x(t-1) | x(t)]
        a = operand(mem, (t - 1) * C3_WTAP + 1024, C3_WTAP, COUT, 16, 2)
        b = operand(mem, xa + boff(t - 1), boff(t) - boff(t - 1), C3_XW, 16, 2)
        acc += a @ b.T
    a = operand(mem, 26 * C3_WTAP + 1024, C3_WTAP, COUT, 16, 2)                 # [w_hi(26) | 0 (tap 27)]
    b = operand(mem, xa + boff(26), half_bytes, C3_XW, 16, 2)                  # [x(26) | k-half 1]
    acc += a @ b.T
    return acc


# --- conv2d 04c's TMA copies (CF_TMA, the default): box -> raw buffer -> the producer's reads -----------------
TW = XW - (KS - 1)                  # output columns per tile: tiles start at multiples of 86
RAW_PITCH = XW + 4                  # pixels per raw row: the box starts up to 2 pixels left of the tile
TMA_ALIGN = 4                       # floats: a box's inner start coordinate must be a multiple of 16 bytes


def tma_box(x: np.ndarray, n: int, c0: int, h0: int, w0: int, box=(RAW_PITCH, XH, CHUNK)) -> np.ndarray:
    """What one cp.async.bulk.tensor.4d copies from NCHW `x`: box = (pixels, rows, channels) starting at
    (w0, h0, c0) of image n, [channel][row][pixel], elements outside the tensor zero. Refuses a start the H200
    refused (an inner coordinate of 1, 2 or 86 floats was an illegal instruction, 2026-12-01)."""
    if w0 % TMA_ALIGN:
        raise ValueError(f"TMA box starting at column {w0}: not 16-byte aligned")
    pw, rows, chans = box
    C, H, W = x.shape[1:]
    out = np.zeros((chans, rows, pw), x.dtype)
    cs, hs, ws = slice(c0, min(c0 + chans, C)), slice(h0, min(h0 + rows, H)), slice(w0, min(w0 + pw, W))
    out[:cs.stop - cs.start, :hs.stop - hs.start, :ws.stop - ws.start] = x[n, cs, hs, ws]
    return out


def raw_index(p: int, pitch: int = RAW_PITCH) -> int:
    """Staged pixel p (row p // XW, column p % XW) in a channel of the raw buffer (the kernel's raw_index)."""
    return p + (pitch - XW) * (p // XW)


def staged_from_tma(x: np.ndarray, n: int, oh: int, ox0: int, chunk: int) -> tuple[np.ndarray, int]:
    """The producer's view of one chunk under CF_TMA: the box at the multiple of 4 at or below the tile and its
    reads with the shift; returns ([row][pixel][8 channels] as staged, the expect_tx count in bytes)."""
    shift = ox0 % TMA_ALIGN
    raw = tma_box(x, n, CHUNK * chunk, oh, ox0 - shift).reshape(CHUNK, -1)
    p = np.arange(XH * XW)
    v = raw[:, raw_index(p) + shift]                          # [channel][staged pixel]
    return v.T.reshape(XH, XW, CHUNK), raw.nbytes


# conv3d 04b's TF32 staging (kernels/conv3d/04b_implicit_gemm_wgmma.cu, store_input without CF_STAGE_PIX): per
# warpgroup tile, items (k-half, depth, row, 4-pixel quad), item it on thread it % 128, quad fastest; a thread writes
# its item's 4 pixels as 4 STS.128 into rows of 16 bytes (a pixel's 4 channels; a TF32 k-half has C3_HALF bytes, as
# an FP16 one above).
C3_ITEMS = 2 * C3_XD * C3_XH * (C3_XW // 4)


C3_SKEW_PITCH = C3_XW + 1             # CF_STAGE_SKEW's staged row pitch in pixels


def c3_skew_row(slot: int, fp16: bool = False) -> int:
    """CF_STAGE_SKEW's row of a slot (the kernel's skew_row): TF32 (k-half, depth, row) as one index, fp16 (depth,
    row); 4 consecutive rows per quarter-warp."""
    return 4 * (slot >> (7 if fp16 else 6)) + ((slot >> 1) & 3)


def c3_skewed_items(fp16: bool = False):
    """The item map of CF_STAGE_SKEW (notes/patches/conv3d_04b_stage_skew.patch, not yet in the kernel): rows padded to
    C3_SKEW_PITCH pixels, and a quarter-warp's 8 lanes on 2 consecutive quads of 4 consecutive rows (FP16: the k-half
    in lane bit 3, as its halves share a pixel row). Yields (slot, q, staged row, k-half) per item; slots of rows past
    the tile's are left out."""
    rows = C3_XD * C3_XH * (1 if fp16 else 2)           # FP16: the 9 pixel rows; TF32: (k-half, row) as one index
    for slot in range(3 * 128):
        q = (slot & 1) + 2 * ((slot >> (4 if fp16 else 3)) & 7)
        r = c3_skew_row(slot, fp16)
        half = (slot >> 3) & 1 if fp16 else r // (C3_XD * C3_XH)
        if r < rows:
            yield slot, q, r % (C3_XD * C3_XH), half


def _c3_item_pixel(x: np.ndarray, n: int, od: int, oh: int, ox0: int, half: int, staged_row: int, px: int) -> np.ndarray:
    """The 4 channels of k-half `half` at a staged pixel (zeros past the input)."""
    D, H, W = x.shape[2:]
    dz, hy = divmod(staged_row, C3_XH)
    d, r, c = od + dz, oh + hy, ox0 + px
    return x[n, 4 * half:4 * half + 4, d, r, c].astype(np.float32) if d < D and r < H and c < W else np.zeros(4, np.float32)


def c3_tile_tf32_skewed(x: np.ndarray, w: np.ndarray, n: int, od: int, oh: int, ox0: int) -> np.ndarray:
    """One conv3d 04b TF32 tile (64 Cout x 64 columns, conv without bias, exact sums) as CF_STAGE_SKEW would compute
    it: the staged tile written item by item at the kernel's store addresses (the row index taken whole: (k-half,
    depth, row) x pitch + 4 q + p), read back by the kernel's descriptors (A for tap t at t x 2 KB, lbo 1 KB; B at
    c3_boff(t, pitch), lbo one k-half)."""
    half_bytes = C3_XD * C3_XH * C3_SKEW_PITCH * 16
    wimg = np.zeros(C3_TAPS * 2 * COUT * 16, np.uint8)
    wf = wimg.view(np.float32)
    for t in range(C3_TAPS):
        kd, kh, kw = t // 9, (t // 3) % 3, t % 3
        for h in range(2):                                              # [tap][k-half][co][4 channels]
            at = (t * 2 + h) * COUT * 4
            wf[at:at + COUT * 4] = w[:, 4 * h:4 * h + 4, kd, kh, kw].reshape(-1)
    ximg = np.zeros(2 * half_bytes + 64, np.uint8)
    xf = ximg.view(np.float32)
    for slot, q, staged_row, half in c3_skewed_items():
        row_whole = c3_skew_row(slot)                                   # the kernel's store index, taken whole ...
        assert row_whole == half * C3_XD * C3_XH + staged_row           # ... is the (k-half, row) the loads used
        for p in range(4):
            at = (row_whole * C3_SKEW_PITCH + 4 * q + p) * 4
            xf[at:at + 4] = _c3_item_pixel(x, n, od, oh, ox0, half, staged_row, 4 * q + p)
    mem = np.concatenate([wimg, ximg])
    xa, acc = len(wimg), np.zeros((COUT, C3_XW))
    for t in range(C3_TAPS):
        a = operand(mem, t * 2 * COUT * 16, COUT * 16, COUT, 8, 4)
        b = operand(mem, xa + c3_boff(t, C3_SKEW_PITCH), half_bytes, C3_XW, 8, 4)
        acc += a @ b.T
    return acc


def c3_tile_fp16_skewed(x: np.ndarray, w: np.ndarray, n: int, od: int, oh: int, ox0: int) -> np.ndarray:
    """c3_tile_fp16 with CF_STAGE_SKEW's staging: x_hi written item by item at the kernel's store addresses (an
    item's k-half at byte 8 of its pixel row), k-half 1 left zero, read back by the same tap-pair descriptors with
    that row pitch."""
    half_bytes = C3_XD * C3_XH * C3_SKEW_PITCH * 16
    wimg, inv = c3_weight_image(w)
    stage = np.zeros(2 * half_bytes + 64, np.uint8)
    for slot, q, row9, half in c3_skewed_items(fp16=True):
        for p in range(4):
            v = _c3_item_pixel(x, n, od, oh, ox0, half, row9, 4 * q + p)
            at = (row9 * C3_SKEW_PITCH + 4 * q + p) * 16 + 8 * half
            stage[at:at + 8] = split_fp16(torch.from_numpy(v))[0].half().numpy().view(np.uint8)
    return _c3_fp16_acc(wimg, stage, lambda t: c3_boff(t, C3_SKEW_PITCH), half_bytes) * inv


def c3_staging_wavefronts(rotated: bool = False, fp16: bool = False, skewed: bool = False) -> int:
    """Shared-memory wavefronts of one warpgroup tile's staging stores. A store of w bytes per lane serves 128 / w lanes
    per wavefront (a quarter-warp for TF32's 16-byte stores, a half-warp for FP16's 8-byte ones) when they hit
    different w-byte bank groups; lanes in the same group take one wavefront each. TF32 writes k-half h at h x (a
    k-half's bytes), FP16 (`fp16`) at byte 8 h of the same 16-byte pixel row. `rotated`: CF_STAGE_ROT's order (lanes
    2i and 2i + 1 start at pixel i of their quad), the TF32 and FP16 default since the record of 2026-12-01 21:12
    UTC. `skewed`: CF_STAGE_SKEW's item map and row pitch (c3_skewed_items)."""
    width = 8 if fp16 else 16
    per_wavefront = 128 // width
    quads = C3_XW // 4
    pitch = C3_SKEW_PITCH if skewed else C3_XW
    items = c3_skewed_items(fp16) if skewed else \
        ((it, it % quads, (it // quads) % (C3_XD * C3_XH), it // quads // (C3_XD * C3_XH)) for it in range(C3_ITEMS))
    stores: dict = {}                                   # (warp instruction, lane group) -> [bank group per lane]
    for slot, q, staged_row, half in items:
        tid, k, lane = slot % 128, slot // 128, slot % 32
        rot = (lane >> 1) & 3 if rotated else 0
        for p in range(4):
            pixel = staged_row * pitch + 4 * q + ((p + rot) & 3)
            addr = pixel * 16 + 8 * half if fp16 else (half * C3_XD * C3_XH * pitch + pixel) * 16
            stores.setdefault((k, tid // 32, p, lane // per_wavefront), []).append((addr // width) % per_wavefront)
    return sum(max(groups.count(g) for g in set(groups)) for groups in stores.values())


def c3_mma_operand_bytes(taps: int = C3_TAPS) -> int:
    """Shared-memory bytes one warpgroup tile's TF32 wgmmas read: per tap, A (Cout x 8 channels) and B (64 pixels x
    8 channels), 4 bytes each."""
    return taps * (COUT + C3_XW) * C3_CIN * 4


# conv3d 04b's output writes (store_tile_tma; CF_GROUP_STORE's store_tile_group): a tile is one output row of 62
# pixels (C3_TW) for all 64 channels; tiles are dealt block-major, tile = (block + k * grid) * WGS + wg, so in round k a
# block's warpgroups hold WGS consecutive tiles. Each channel's output row is one run of y; CF_GROUP_STORE writes the
# rows of GROUP consecutive warpgroups of a block as one run when they are the same planes' consecutive rows.
C3_TW, C3_WGS = C3_XW - 2, 4
C3_KS = 3                            # the kernel's extent in each dimension


def c3_store_runs(shape, group: int = 1, sms: int = 132) -> list:
    """Every run of one channel plane that conv3d 04b's output copies write at the full width (Wo = C3_TW), as
    (first byte within the plane, bytes), for groups of `group` warpgroups (1: a tile's own row; a group that is not
    whole, or crosses an image, falls back to its rows one by one, as the kernel's plain stores)."""
    n, _, do, ho, wo = shape
    assert wo == C3_TW, "whole-row tiles only"
    tiles, rows_per_image = n * do * ho, do * ho
    grid = min(sms, -(-tiles // C3_WGS))
    runs = []
    for block in range(grid):
        for base in range(block * C3_WGS, tiles, grid * C3_WGS):
            for first in range(base, base + C3_WGS, group):
                whole = (first + group <= tiles and first // rows_per_image == (first + group - 1) // rows_per_image
                         and rows_per_image % group == 0)
                members = [first] if whole else range(first, min(first + group, tiles))
                for t in members:
                    runs.append(((t % rows_per_image) * wo * 4, (group if whole else 1) * wo * 4))
    return runs


def _c3_window(tiles, rows_per_image: int, ho: int) -> set:
    """The distinct input rows (image, depth, row) that whole-row output tiles read (tile t: output row t of the
    image-major (n, od, oh) order)."""
    rows = set()
    for t in tiles:
        img, r = divmod(t, rows_per_image)
        od, oh = divmod(r, ho)
        rows |= {(img, od + kd, oh + kh) for kd in range(C3_XD) for kh in range(C3_XH)}
    return rows


def c3_staged_rows(shape, sms: int = 132) -> dict:
    """Input rows (one depth slice, one row, 64 pixels, 8 channels: 2 KB) that conv3d 04b stages per block round at
    the full width (Wo = C3_TW), as registered (each warpgroup its tile's 3 x 3) and with one window per round shared
    by the block's C3_WGS warpgroups (the distinct rows its tiles read). Rounds are the tile dealing of c3_store_runs:
    a block's warpgroups hold consecutive output rows, which cross a plane or an image now and then. Returns the totals,
    the largest window and the share of rounds whose window is larger than one plane's (a group that crosses)."""
    n, _, do, ho, wo = shape
    assert wo == C3_TW, "whole-row tiles only"
    tiles, rows_per_image = n * do * ho, do * ho
    grid = min(sms, -(-tiles // C3_WGS))
    own = shared = widest = crossing = rounds = 0
    for block in range(grid):
        for base in range(block * C3_WGS, tiles, grid * C3_WGS):
            members = range(base, min(base + C3_WGS, tiles))
            rows = _c3_window(members, rows_per_image, ho)
            own += C3_XD * C3_XH * len(members)
            shared += len(rows)
            widest = max(widest, len(rows))
            crossing += len({(img, od) for t in members for img, od in [divmod(t // ho, do)]}) > 1
            rounds += 1
    return {"rounds": rounds, "rows staged per tile": own, "rows staged per shared window": shared,
            "widest window": widest, "rounds crossing a plane": crossing / rounds}


def c3_window_ring_rows(shape, sms: int = 132) -> dict:
    """The step after c3_staged_rows' shared window: each block takes a contiguous range of rounds (C3_WGS consecutive
    output rows each) instead of every grid-th one, and keeps its window from one round to the next, so a round stages
    only the input rows its window has and the previous round's had not. Returns the rows staged that way, the rows
    staged as registered (9 per tile), and the rounds per block (the longest range)."""
    n, _, do, ho, wo = shape
    assert wo == C3_TW, "whole-row tiles only"
    tiles, rows_per_image = n * do * ho, do * ho
    rounds = -(-tiles // C3_WGS)
    grid = min(sms, rounds)
    per_block = -(-rounds // grid)
    staged = 0
    for block in range(grid):
        kept = set()
        for rnd in range(block * per_block, min((block + 1) * per_block, rounds)):
            window = _c3_window(range(rnd * C3_WGS, min(rnd * C3_WGS + C3_WGS, tiles)), rows_per_image, ho)
            staged += len(window - kept)
            kept = window
    return {"rows staged per tile": C3_XD * C3_XH * tiles, "rows staged, window kept across rounds": staged,
            "rounds per block": per_block}


def shared_sectors(runs, sector: int = 32) -> float:
    """The share of run ends (starts and ends) that fall inside a `sector`-byte sector: a sector that another run
    (another tile's, written at another time) completes."""
    return sum((s % sector != 0) + ((s + b) % sector != 0) for s, b in runs) / (2 * len(runs))


def _c3_dw_rounds_of(shape):
    """CF_DWIN's round geometry of an input shape: (Do, Ho, groups of C3_WGS output rows per plane, rounds in all, and
    round q's (n, od, oh0): q = (n groups + grp) Do + od, oh0 = min(C3_WGS grp, Ho - C3_WGS), dw_round's map)."""
    n_img, _, d, h, _ = shape
    do, ho = d - (C3_KS - 1), h - (C3_KS - 1)
    groups = -(-ho // C3_WGS)

    def rnd(q):
        u, od = divmod(q, do)
        n, grp = divmod(u, groups)
        return n, od, min(C3_WGS * grp, ho - C3_WGS)

    return do, ho, groups, n_img * groups * do, rnd


def c3_dwin_rounds(total: int, do: int, grid: int, block: int, waves: bool = False, skip_groups: int = 0,
                   weight: int | None = None) -> list:
    """The rounds q block `block` of `grid` takes with CF_DWIN, in order, with whether each stages three slabs (a
    first: the block's first round, a unit's (od = 0), or one that does not follow the round before it). Contiguous:
    [b R / grid, (b + 1) R / grid). Waves (CF_DWIN_WAVES): whole units (Do rounds, one n and group of rows) dealt
    round-robin, unit b + i grid in the block's i-th wave, so that neighbouring groups of rows (two input rows shared)
    run at once on neighbouring blocks, then the units left over split contiguously by rounds (no range starting at a
    unit's last round). With `weight` (CF_DWIN_WEIGHT, with CF_DWIN_SKIP) and `skip_groups` (the groups per plane,
    where the last repeats rows: Ho no multiple of 4; else 0) the leftover rounds are split by cost, a round of a
    plane's last group costing weight/64: c3_dwin_tail_cut."""
    if not waves:
        qs = list(range(block * total // grid, (block + 1) * total // grid))
    else:
        units = total // do
        full = units // grid
        tail = (units - full * grid) * do
        qs = [(block + i * grid) * do + od for i in range(full) for od in range(do)]
        def cut(b):         # a cut one round before a unit's end moves on one: two firsts in a row would need 9 slots
            if weight is not None and skip_groups:
                return c3_dwin_tail_cut(b, grid, full, tail, do, skip_groups, weight)
            t = b * tail // grid
            return t + 1 if t % do == do - 1 else t
        qs += [full * grid * do + t for t in range(cut(block), max(cut(block), cut(block + 1)))]
    return [(q, r == 0 or q % do == 0 or q != qs[r - 1] + 1) for r, q in enumerate(qs)]


def c3_dwin_tail_cut(b: int, grid: int, full: int, tail: int, do: int, groups: int, weight: int) -> int:
    """CF_DWIN_WEIGHT's cut, as dw_order works it out: where block b's leftover rounds start. A round of a plane's
    last group (unit u with u % groups = groups - 1) costs weight/64 of a round; block b's share of the leftovers is
    the mean cost less the cost of its full waves, the cut the sum of the shares before it, in 64ths, clamped to the
    leftovers and moved past a unit's last round."""
    def skips_before(b):        # units of a last group among blocks < b's full waves
        return sum((b + i * grid % groups) // groups for i in range(full))
    unit, save = 64 * do, (64 - weight) * do
    total = unit * full * grid - save * skips_before(grid) + 64 * tail
    t = (b * total - grid * (unit * full * b - save * skips_before(b))) // (64 * grid)
    t = min(max(t, 0), tail)
    return t + 1 if t % do == do - 1 else t


def c3_dwin_block_costs(shape, grid: int, weight: int | None, skip_cost: float = 0.5) -> list:
    """Each block's rounds with CF_DWIN_WAVES and CF_DWIN_WEIGHT=`weight` (None: the leftovers split evenly by rounds),
    counted in rounds, a round of a plane's last group (where Ho is no multiple of 4) as `skip_cost`: 1/2 with
    CF_DWIN_SKIP if a round's cost were its MMAs and epilogues (its first pair of warpgroups idle), 1 without it."""
    do, ho, groups, total, _ = _c3_dw_rounds_of(shape)
    sg = groups if ho % C3_WGS else 0
    out = []
    for b in range(grid):
        order = c3_dwin_rounds(total, do, grid, b, True, sg, weight)
        out.append(sum(skip_cost if sg and (q // do) % groups == groups - 1 else 1.0 for q, _ in order))
    return out


def c3_depth_sweep(shape, grid: int, slots: int = 8, waves: bool = False, weight: int | None = None) -> dict:
    """conv3d 04b's CF_DWIN bookkeeping, as the kernel does it: block b takes rounds [b R / grid, (b + 1) R / grid) (or
    CF_DWIN_WAVES's order with `waves`: c3_dwin_rounds) of the R = N x groups x Do rounds (q = (n groups + grp) Do + od; a round is C3_WGS output rows oh0.. of plane (n, od),
    oh0 = min(C3_WGS grp, Ho - C3_WGS)). A first round (c3_dwin_rounds) stages the slabs of depths
    od..od + 2, any other round the slab of depth od + 2; slab s goes to slot s % slots; round r's tap kd reads slot
    (e - 3 + kd) % slots, e = slabs staged through round r. Round r + 2's slabs are written at the end of round r, once
    round r - 1's wgmmas are done, so rounds r and r + 1 may still be reading.

    Returns "wrong reads" (a tap that would read a slot holding another slab), "hazards" (a slot written while round
    r or r + 1 reads it), "out of bounds" (a staged row or depth outside the input), the output rows covered, the
    slabs staged and the rounds per block (most)."""
    n_img, _, d, h, w = shape
    do, ho, _, total, rnd = _c3_dw_rounds_of(shape)
    assert w - (C3_KS - 1) == C3_TW and ho >= C3_WGS and do >= 2 and c3_dwin_misaligned_copies(shape) == 0, \
        "the shapes the depth sweep takes"
    wrong, hazards, oob, covered, slabs, most = [], [], [], set(), 0, 0
    sg = -(-ho // C3_WGS) if ho % C3_WGS else 0
    for b in range(grid):
        order = c3_dwin_rounds(total, do, grid, b, waves, sg, weight)
        most = max(most, len(order))
        staged, el = [], 0                                  # per round: [(slot, (n, depth, oh0))]
        for q, f in order:
            n, od, oh0 = rnd(q)
            new = [(n, od + j, oh0) for j in range(3)] if f else [(n, od + 2, oh0)]
            staged.append([((el + j) % slots, c) for j, c in enumerate(new)])
            el += len(new)
            for (_, (nn, dd, r0)) in staged[-1]:
                if not (0 <= r0 and r0 + C3_WGS + C3_KS - 2 < h and dd < d and nn < n_img):
                    oob.append((b, q))
        slabs += el
        content, reads, e = {}, [], 0
        for r in range(min(2, len(staged))):
            content.update(staged[r])
        for r, (q, f) in enumerate(order):
            n, od, oh0 = rnd(q)
            e += 3 if f else 1
            reads.append([(e - 3 + kd) % slots for kd in range(3)])
            for kd, s in enumerate(reads[-1]):
                if content.get(s) != (n, od + kd, oh0):
                    wrong.append((b, q, kd))
            covered.update((n, od, oh0 + i) for i in range(C3_WGS))
            if r + 2 < len(staged):
                for s, c in staged[r + 2]:
                    if s in reads[r] or (r + 1 < len(staged) and s in _c3_sweep_reads(staged, r + 1, slots)):
                        hazards.append((b, q, s))
                    content[s] = c
    return {"wrong reads": wrong, "hazards": hazards, "out of bounds": oob,
            "covered": covered == {(n, od, oh) for n in range(n_img) for od in range(do) for oh in range(ho)},
            "slabs staged": slabs, "rounds per block": most}


def c3_dwin_misaligned_copies(shape) -> int:
    """How many of CF_DWIN's group copies would start off the 16-byte alignment a TMA box needs in y: a round's copy
    starts at pixel (od Ho + oh0) Wo of its plane (Wo = 62), 2 mod 4 floats for an odd row. Any Ho, so that the
    launch's rule (even Ho only) has its reason under test: an odd Ho gives misaligned copies, an even one none."""
    _, ho, _, total, rnd = _c3_dw_rounds_of(shape)
    return sum((od * ho + oh0) * C3_TW % 4 != 0 for _, od, oh0 in map(rnd, range(total)))


def _c3_sweep_reads(staged, r: int, slots: int) -> list:
    """The slots round r of a block reads (its e from the slabs staged through it)."""
    e = sum(len(s) for s in staged[:r + 1])
    return [(e - 3 + kd) % slots for kd in range(3)]


# conv3d 04b CF_DWIN's slab ring, as the kernel lays it out (floats): slot [k-half][row 0..5][pixel 0..63][4 channels]
C3_DW_ROWS, C3_DW_SLOTS = C3_WGS + C3_KS - 1, 8
C3_DW_HALF = C3_DW_ROWS * C3_XW * 4
C3_DW_SLAB = 2 * C3_DW_HALF
C3_DW_ITEMS = 2 * C3_DW_ROWS * (C3_XW // 4)       # (k-half, row, quad) items per slab


def _c3_dw_load_at(wg: int, tid: int, k: int, first: bool, s0: int):
    """dw_load's item of thread (wg, tid), k-th: (j, half, row, quad, its first float in the ring) or None."""
    m = (3 if first else 1) * (C3_DW_ITEMS // C3_WGS)
    li = tid + 128 * k
    if li >= m:
        return None
    gi = wg * m + li
    j, rest = divmod(gi, C3_DW_ITEMS)
    half, rr = divmod(rest, C3_DW_ITEMS // 2)
    row, quad = rr >> 4, rr & 15
    slot = (s0 + j) & (C3_DW_SLOTS - 1)
    return j, half, row, quad, slot * C3_DW_SLAB + half * C3_DW_HALF + (row * C3_XW + 4 * quad) * 4


C3_DW_CQ = 5                                      # CF_DWIN_CHAN: channel quads per thread and round, at most


def _c3_dw_load_chan_at(wg: int, tid: int, k: int, first: bool, s0: int):
    """CF_DWIN_CHAN's dw_load: the k-th channel quad of thread (wg, tid): (j, half, channel, row, quad, its float in
    the ring) or None. Lanes: quad's low 3 bits, then the channel; the warp's index gives (slab, k-half, row, quad's
    high bit)."""
    m = (3 if first else 1) * (4 * C3_DW_ITEMS // C3_WGS)
    li = tid + 128 * k
    if li >= m:
        return None
    wi, lane = divmod(wg * m + li, 32)
    qh, rest = wi & 1, wi >> 1
    jh, row = divmod(rest, C3_DW_ROWS)
    half, j, c, quad = jh & 1, jh >> 1, (lane >> 3) & 3, 8 * qh + (lane & 7)
    slot = (s0 + j) & (C3_DW_SLOTS - 1)
    return j, half, c, row, quad, slot * C3_DW_SLAB + half * C3_DW_HALF + (row * C3_XW + 4 * quad) * 4 + c


def c3_dwin_stage_stores(first: bool, chan: bool) -> dict:
    """One warpgroup's staging stores in one CF_DWIN round, as dw_stage issues them: per warp, its store instructions
    and their shared-memory wavefronts (a wavefront serves lanes in different 4-byte banks; 16-byte stores serve a
    quarter-warp in different 16-byte groups), for the 4-channel items (chan False: CF_DWIN, CF_DWIN_BRANCH) or
    CF_DWIN_CHAN's channel quads. {warp: (instructions, wavefronts)}; a warp without work is left out."""
    out: dict = {}
    width = 4 if chan else 16
    for warp in range(4):
        ins = wf = 0
        for k in range(C3_DW_CQ if chan else 2):
            rows = {}                                     # step p -> {lane: float address}
            for lane in range(32):
                tid = 32 * warp + lane
                rot = (tid >> 1) & 3
                it = (_c3_dw_load_chan_at if chan else _c3_dw_load_at)(0, tid, k, first, 0)
                if it is None:
                    continue
                for p in range(4):
                    rows.setdefault(p, {})[lane] = it[-1] + 4 * ((p + rot) & 3)
            for p, addr in rows.items():
                ins += 1
                per = 128 // width
                for q in range(0, 32, per):
                    groups = [(a * 4 // width) % (128 // width) for ln, a in addr.items() if q <= ln < q + per]
                    wf += max((groups.count(b) for b in set(groups)), default=0)
        if ins:
            out[warp] = (ins, wf)
    return out


def c3_dwin_block_tiles(x: np.ndarray, w: np.ndarray, grid: int, block: int, waves: bool = False, chan: bool = False):
    """The tiles block `block` of `grid` computes with CF_DWIN, emulated: each round's slabs written item by item at
    dw_load / dw_stage's addresses (the rotation's permutation included) into a byte image of the ring, each
    warpgroup's tile read back through dw_mma_issue's descriptors (tap (kd, kh, kw): slot (e - 3 + kd) % 8, row wg +
    kh, kw pixels in; lbo one k-half of a slab). Yields ((n, od, oh), 64 Cout x 62 conv sums without bias)."""
    do, _, _, total, rnd = _c3_dw_rounds_of(x.shape)
    order = c3_dwin_rounds(total, do, grid, block, waves)
    wimg = np.zeros(C3_TAPS * 2 * COUT * 16, np.uint8)
    wf = wimg.view(np.float32)
    for t in range(C3_TAPS):
        kd, kh, kw = t // 9, (t // 3) % 3, t % 3
        for hh in range(2):
            at = (t * 2 + hh) * COUT * 4
            wf[at:at + COUT * 4] = w[:, 4 * hh:4 * hh + 4, kd, kh, kw].reshape(-1)
    ring = np.zeros(C3_DW_SLOTS * C3_DW_SLAB + 16, np.float32)

    def stage(q, f, s0):
        n, od, oh0 = rnd(q)
        d0 = od if f else od + 2
        for wg in range(C3_WGS):
            for tid in range(128):
                rot = (tid >> 1) & 3
                if chan:
                    for k in range(C3_DW_CQ):
                        it = _c3_dw_load_chan_at(wg, tid, k, f, s0)
                        if it is None:
                            continue
                        j, half, c, row, quad, at = it
                        v = np.roll(x[n, 4 * half + c, d0 + j, oh0 + row, 4 * quad:4 * quad + 4], -rot)
                        for p in range(4):
                            ring[at + 4 * ((p + rot) & 3)] = v[p]
                    continue
                for k in range(2):
                    it = _c3_dw_load_at(wg, tid, k, f, s0)
                    if it is None:
                        continue
                    j, half, row, quad, at = it
                    v = x[n, 4 * half:4 * half + 4, d0 + j, oh0 + row, 4 * quad:4 * quad + 4].astype(np.float32)
                    v = np.roll(v, -rot, axis=1)                     # rotate4: component j <- component (j + rot) % 4
                    for p in range(4):
                        ring[at + 4 * ((p + rot) & 3):at + 4 * ((p + rot) & 3) + 4] = v[:, p]
        return 3 if f else 1

    el = 0
    for q, f in order[:2]:
        el += stage(q, f, el % C3_DW_SLOTS)
    e = 0
    for r, (q, f) in enumerate(order):
        n, od, oh0 = rnd(q)
        e += 3 if f else 1
        mem = np.concatenate([wimg, ring.view(np.uint8)])
        for wg in range(C3_WGS):
            acc = np.zeros((COUT, C3_XW))
            for t in range(C3_TAPS):
                kd, kh, kw = t // 9, (t // 3) % 3, t % 3
                b0 = len(wimg) + wg * C3_XW * 16 + ((e - 3 + kd) & (C3_DW_SLOTS - 1)) * C3_DW_SLAB * 4
                a = operand(mem, t * 2 * COUT * 16, COUT * 16, COUT, 8, 4)
                b = operand(mem, b0 + (kh * C3_XW + kw) * 16, C3_DW_HALF * 4, C3_XW, 8, 4)
                acc += a @ b.T
            yield (n, od, oh0 + wg), acc[:, :C3_TW]
        if r + 2 < len(order):
            el += stage(*order[r + 2], el % C3_DW_SLOTS)


def c3_box_store_wavefronts(pitch: int, rowmap: bool = False, phase: int = 16) -> int:
    """Shared-memory wavefronts of one of store_tile_group's st.shared.v2 (a warp's 8 channel rows gid 0-7 at box row
    pitch `pitch` floats, lanes tq 0-3 two floats each), if 8-byte stores run in phases of `phase` lanes (16: two
    half-warps) and a phase takes as many wavefronts as its most-used bank has distinct 4-byte words. With `rowmap`
    (CF_BOX_ROWMAP) channel gid sits in box row 2 (gid % 4) + gid / 4."""
    total = 0
    for p0 in range(0, 32, phase):
        banks = {}
        for lane in range(p0, p0 + phase):
            gid, tq = lane >> 2, lane & 3
            row = 2 * (gid & 3) + (gid >> 2) if rowmap else gid
            for w in (0, 1):
                word = row * pitch + 2 * tq + w
                banks.setdefault(word % 32, set()).add(word)
        total += max(len(v) for v in banks.values())
    return total
