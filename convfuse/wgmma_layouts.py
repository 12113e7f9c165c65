"""How the Hopper kernels' `wgmma`s read their operands from shared memory, modelled on the CPU: the byte images the
kernels write (weights, one staged chunk or tile), the matrix-descriptor arithmetic that reads them back, the TMA box
conv2d 04c copies, and the shared-memory bank conflicts of conv3d 04b's staging and output boxes. So the layouts and
every descriptor offset of kernels/conv2d/04c_warp_specialized_wgmma.cu and kernels/conv3d/04b_implicit_gemm_wgmma.cu
(3xFP16, FP16 and TF32 builds) can be checked against a plain convolution without a GPU.

Descriptor model (PTX ISA, wgmma, no-swizzle K-major): an operand of R rows x K is made of core matrices
of 8 rows x 16 bytes; element (r, k) lies at start + (r // 8) * sbo + (k // per16) * lbo + (r % 8) * 16 +
(k % per16) * esize, where per16 = 16 / esize elements fit in 16 bytes (8 FP16, 4 TF32). The kernels use
sbo = 128 everywhere; `lbo` is free, which is what lets one k16 FP16 `wgmma` take two taps (lbo = the
distance between their shifted input windows) or pair a 1 KB zero block with tap 8.

The constants below are the kernels' (their headers have the layouts); tests/test_wgmma_layouts.py checks the
model, so a layout change in a kernel has to be made here too to be checked.
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


# --- conv3d 04b, 3xFP16: one tile = 64 Cout x 64 columns of one output row (TH 1) -------------------
C3_CIN, C3_TAPS = 8, 27
C3_XW, C3_XD, C3_XH = 64, 3, 3      # staged pixels per row, staged depth slices and rows
C3_HALF = C3_XD * C3_XH * C3_XW * 16                # bytes per k-half of the staged tile (x_hi, then x_lo)
C3_WTAP = 2 * COUT * 16                             # bytes per tap of weights: [w_lo | w_hi], 1 KB each


def c3_boff(t: int, pitch: int = C3_XW) -> int:
    """Byte offset of tap t = (kd, kh, kw)'s window in a k-half: staged row (kd, kh), shifted by kw pixels; rows
    `pitch` pixels apart."""
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


# --- FP16 operands alone (precision fp16): 3xFP16's main products, x_hi . w_hi --------------------
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


# --- conv2d 04c's TMA copies: box -> raw buffer -> the producer's reads -----------------
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
    """The producer's view of one chunk: the box at the multiple of 4 at or below the tile and its
    reads with the shift; returns ([row][pixel][8 channels] as staged, the expect_tx count in bytes)."""
    shift = ox0 % TMA_ALIGN
    raw = tma_box(x, n, CHUNK * chunk, oh, ox0 - shift).reshape(CHUNK, -1)
    p = np.arange(XH * XW)
    v = raw[:, raw_index(p) + shift]                          # [channel][staged pixel]
    return v.T.reshape(XH, XW, CHUNK), raw.nbytes


# conv3d 04b's TF32 staging (kernels/conv3d/04b_implicit_gemm_wgmma.cu, store_input): per
# warpgroup tile, items (k-half, depth, row, 4-pixel quad), item it on thread it % 128, quad fastest; a thread writes
# its item's 4 pixels as 4 STS.128 into rows of 16 bytes (a pixel's 4 channels; a TF32 k-half has C3_HALF bytes, as
# an FP16 one above).
C3_ITEMS = 2 * C3_XD * C3_XH * (C3_XW // 4)


def c3_staging_wavefronts(rotated: bool = False, fp16: bool = False) -> int:
    """Shared-memory wavefronts of one warpgroup tile's staging stores. A store of w bytes per lane serves 128 / w lanes
    per wavefront (a quarter-warp for TF32's 16-byte stores, a half-warp for FP16's 8-byte ones) when they hit
    different w-byte bank groups; lanes in the same group take one wavefront each. TF32 writes k-half h at h x (a
    k-half's bytes), FP16 (`fp16`) at byte 8 h of the same 16-byte pixel row. `rotated`: the kernel's order (lanes
    2i and 2i + 1 start at pixel i of their quad); without it, every lane starts at pixel 0."""
    width = 8 if fp16 else 16
    per_wavefront = 128 // width
    quads = C3_XW // 4
    items = ((it, it % quads, (it // quads) % (C3_XD * C3_XH), it // quads // (C3_XD * C3_XH)) for it in range(C3_ITEMS))
    stores: dict = {}                                   # (warp instruction, lane group) -> [bank group per lane]
    for slot, q, staged_row, half in items:
        tid, k, lane = slot % 128, slot // 128, slot % 32
        rot = (lane >> 1) & 3 if rotated else 0
        for p in range(4):
            pixel = staged_row * C3_XW + 4 * q + ((p + rot) & 3)
            addr = pixel * 16 + 8 * half if fp16 else (half * C3_XD * C3_XH * C3_XW + pixel) * 16
            stores.setdefault((k, tid // 32, p, lane // per_wavefront), []).append((addr // width) % per_wavefront)
    return sum(max(groups.count(g) for g in set(groups)) for groups in stores.values())


def c3_mma_operand_bytes(taps: int = C3_TAPS) -> int:
    """Shared-memory bytes one warpgroup tile's TF32 wgmmas read: per tap, A (Cout x 8 channels) and B (64 pixels x
    8 channels), 4 bytes each."""
    return taps * (COUT + C3_XW) * C3_CIN * 4


def c3_box_store_wavefronts(pitch: int, rowmap: bool = False, phase: int = 16) -> int:
    """Shared-memory wavefronts of one of store_tile_group's st.shared.v2 (a warp's 8 channel rows gid 0-7 at box row
    pitch `pitch` floats, lanes tq 0-3 two floats each), if 8-byte stores run in phases of `phase` lanes (16: two
    half-warps) and a phase takes as many wavefronts as its most-used bank has distinct 4-byte words. With `rowmap`
    (the kernel's order) channel gid sits in box row 2 (gid % 4) + gid / 4."""
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
