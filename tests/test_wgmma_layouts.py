"""convfuse/wgmma_layouts.py: the Hopper kernels' shared-memory images and descriptors give the convolution; the TMA box
conv2d 04c copies; the bank conflicts of conv3d 04b's staging and output boxes."""
import numpy as np
import pytest
import torch

from convfuse import wgmma_layouts as M


def _direct(x, w, n, oh, ox0):
    H, W = x.shape[2:]
    out = np.zeros((M.COUT, M.TH, M.XW))
    for t in range(M.TH):
        for col in range(M.XW):
            if oh + t <= H - 3 and ox0 + col <= W - 3:
                patch = x[n, :, oh + t:oh + t + 3, ox0 + col:ox0 + col + 3].astype(np.float64)
                out[:, t, col] = np.einsum("oikl,ikl->o", w.astype(np.float64), patch)
    return out


C2_CASES = [((1, 64, 6, 9), 1, 0), ((2, 64, 5, 100), 2, 86)]


def _c2_case(shape, oh, ox0, seed):
    """Random x and w, the last image, and which (row, column) of the tile are outputs of the conv."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.uniform(-1, 1, (64, 64, 3, 3)) / 24).astype(np.float32)
    valid = np.zeros((M.TH, M.XW), bool)
    for t in range(M.TH):
        valid[t] = [(oh + t <= shape[2] - 3) and (ox0 + c <= shape[3] - 3) and c < M.XW - 2 for c in range(M.XW)]
    assert valid.any()
    return x, w, shape[0] - 1, valid


@pytest.mark.parametrize("shape,oh,ox0", C2_CASES)
def test_the_14_wgmmas_per_chunk_compute_the_conv(shape, oh, ox0):
    x, w, n, valid = _c2_case(shape, oh, ox0, seed=0)
    got = M.tile_3xfp16(x, w, n, oh, ox0).reshape(M.COUT, M.TH, M.XW)
    want = _direct(x, w, n, oh, ox0)
    err = np.abs(got - want)[:, valid]
    # the FP16 split keeps 22 bits: the modelled sum is exact, so only the split's own error remains
    assert np.linalg.norm(err) / np.linalg.norm(want[:, valid]) < 2e-7


def test_the_pairing_offsets_stay_inside_shared_memory():
    # tap 8 pairs the zero block with w_hi(8): lbo up to the last chunk's, within a descriptor's 18 bits
    assert M.NCHUNK * M.CHUNK_W < (1 << 18)
    assert [M.tap_offset(t + 1) - M.tap_offset(t) for t in (0, 2, 4, 6)] == [16, (M.XW - 2) * 16, 16, 16]


C3_CASES = [((1, 8, 4, 5, 9), 1, 2, 0), ((2, 8, 3, 4, 130), 0, 1, 62)]


def _c3_case(shape, od, oh, ox0, seed):
    """Random x and w, the last image, and the tile's columns that are outputs of the conv."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.uniform(-1, 1, (64, 8, 3, 3, 3)) / 15).astype(np.float32)
    D, H, W = shape[2:]
    cols = [c for c in range(M.C3_XW - 2) if ox0 + c <= W - 3]
    assert cols and od <= D - 3 and oh <= H - 3
    return x, w, shape[0] - 1, cols


def _c3_direct(x, w, n, od, oh, ox0, cols):
    x, w = x.astype(np.float64), w.astype(np.float64)
    return np.stack([np.einsum("oidkl,idkl->o", w, x[n, :, od:od + 3, oh:oh + 3, ox0 + c:ox0 + c + 3]) for c in cols], 1)


@pytest.mark.parametrize("shape,od,oh,ox0", C3_CASES)
def test_conv3d_41_wgmmas_per_tile_compute_the_conv(shape, od, oh, ox0):
    x, w, n, cols = _c3_case(shape, od, oh, ox0, seed=1)
    got = M.c3_tile_3xfp16(x, w, n, od, oh, ox0)
    want = _c3_direct(x, w, n, od, oh, ox0, cols)
    err = np.linalg.norm(got[:, cols] - want) / np.linalg.norm(want)
    assert err < 2e-7


def test_conv3d_model_fails_when_a_window_is_one_pixel_off(monkeypatch):
    # odd taps read one pixel too far (their corrections and their pair's lbo): the model must notice
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 8, 3, 3, 70)).astype(np.float32)
    w = (rng.uniform(-1, 1, (64, 8, 3, 3, 3)) / 15).astype(np.float32)
    good = M.c3_tile_3xfp16(x, w, 0, 0, 0, 0)
    real = M.c3_boff
    monkeypatch.setattr(M, "c3_boff", lambda t: real(t) + (16 if t % 2 == 1 else 0))
    bad = M.c3_tile_3xfp16(x, w, 0, 0, 0, 0)
    assert np.linalg.norm(bad - good) / np.linalg.norm(good) > 1e-2


def _fp16_rounded(x, w):
    """x and w as the fp16 kernels multiply them: FP16(x), FP16(w * 2^e) / 2^e (float64, exact)."""
    s = M.weight_scale(torch.from_numpy(w))
    return (torch.from_numpy(x).half().double().numpy(),
            (torch.from_numpy(w).double() * s).half().double().numpy() / s)


@pytest.mark.parametrize("shape,oh,ox0", C2_CASES)
def test_conv2d_fp16_5_wgmmas_per_chunk_compute_the_conv_of_the_fp16_operands(shape, oh, ox0):
    x, w, n, valid = _c2_case(shape, oh, ox0, seed=3)
    got = M.tile_fp16(x, w, n, oh, ox0).reshape(M.COUT, M.TH, M.XW)
    want = _direct(*_fp16_rounded(x, w), n, oh, ox0)
    # the same products, summed exactly either way: only float64 rounding remains
    assert np.linalg.norm((got - want)[:, valid]) / np.linalg.norm(want[:, valid]) < 1e-12
    # and against the float32 operands, TF32's error class (11 significant bits per operand)
    exact = _direct(x, w, n, oh, ox0)
    rel = np.linalg.norm((got - exact)[:, valid]) / np.linalg.norm(exact[:, valid])
    assert 1e-5 < rel < 1e-3


def test_conv2d_fp16_stage_reads_fit_the_stage_and_the_sanitizer_pad():
    real, span = M.fp16_stage_reads()
    assert real <= M.XPART + 64                        # the MMA reads stay inside a stage
    assert span > M.XPART + 64                         # compute-sanitizer's span does not: hence the pad
    assert span <= M.XPART + 64 + 16 + M.SANITIZER_PAD     # the pad (after the 16-byte slot) covers the last stage


@pytest.mark.parametrize("shape,od,oh,ox0", C3_CASES)
def test_conv3d_fp16_14_wgmmas_per_tile_compute_the_conv_of_the_fp16_operands(shape, od, oh, ox0):
    x, w, n, cols = _c3_case(shape, od, oh, ox0, seed=4)
    got = M.c3_tile_fp16(x, w, n, od, oh, ox0)
    want = _c3_direct(*_fp16_rounded(x, w), n, od, oh, ox0, cols)
    assert np.linalg.norm(got[:, cols] - want) / np.linalg.norm(want) < 1e-12



def test_conv2d_fp16_model_fails_when_a_pair_reads_the_wrong_window(monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 64, 5, 20)).astype(np.float32)
    w = (rng.uniform(-1, 1, (64, 64, 3, 3)) / 24).astype(np.float32)
    good = M.tile_fp16(x, w, 0, 0, 0)
    real = M.tap_offset
    monkeypatch.setattr(M, "tap_offset", lambda t: real(t) + (16 if t == 3 else 0))
    bad = M.tile_fp16(x, w, 0, 0, 0)
    assert np.linalg.norm(bad - good) / np.linalg.norm(good) > 1e-2


@pytest.mark.parametrize("shape", [(1, 64, 21, 92), (1, 64, 12, 256)])
def test_conv2d_tma_box_and_shifted_reads_stage_what_the_copies_stage(shape):
    """Every tile of a row (starts 0, 86, 172: shifts 0 and 2) and the bottom rows: the 92-pixel box at the multiple
    of 4 at or below the tile, read with the shift, stages the same pixels as direct copies; the box's bytes are the
    raw buffer's, which expect_tx counts (a box of 88 against 92-pixel rows hung the H200 for 600 s)."""
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    H, W = shape[2:]
    for oh in (0, H - M.XH + 1):
        for ox0 in range(0, W - 2, M.TW):
            for chunk in (0, M.NCHUNK - 1):
                got, nbytes = M.staged_from_tma(x, 0, oh, ox0, chunk)
                np.testing.assert_array_equal(got, M.staged_pixels(x, 0, oh, ox0, chunk))
                assert nbytes == M.CHUNK * M.XH * M.RAW_PITCH * 4


def test_conv2d_tma_model_refuses_unaligned_boxes_and_fails_without_the_shift(monkeypatch):
    x = np.random.default_rng(6).standard_normal((1, 64, 21, 92)).astype(np.float32)
    with pytest.raises(ValueError, match="16-byte"):
        M.tma_box(x, 0, 0, 0, M.TW)                           # the tile's own start, 86: refused on the H200
    monkeypatch.setattr(M, "TMA_ALIGN", 1)                    # box at the tile, read with shift 0 ...
    got, _ = M.staged_from_tma(x, 0, 0, M.TW, 0)
    np.testing.assert_array_equal(got, M.staged_pixels(x, 0, 0, M.TW, 0))
    monkeypatch.undo()
    raw = M.tma_box(x, 0, 0, 0, M.TW - 2).reshape(M.CHUNK, -1)   # ... but the aligned box read without the shift
    p = np.arange(M.XH * M.XW)
    unshifted = raw[:, M.raw_index(p)].T.reshape(M.XH, M.XW, M.CHUNK)
    assert not np.array_equal(unshifted, M.staged_pixels(x, 0, 0, M.TW, 0))


def test_conv3d_tf32_staging_stores_meet_four_way_bank_conflicts_and_the_rotation_removes_them():
    from convfuse import wgmma_layouts as M
    plain, rotated = M.c3_staging_wavefronts(), M.c3_staging_wavefronts(rotated=True)
    assert plain == 576                       # 36 warp instructions x 4 quarter-warps x 4 wavefronts
    assert rotated == 144                     # the minimum: 4 x 16-byte x 8 lanes per wavefront
    assert M.c3_mma_operand_bytes() // 128 == 864   # the MMAs' operand reads at 128 bytes per cycle


def test_conv3d_fp16_staging_stores_meet_eight_way_conflicts_per_half_warp_and_the_rotation_leaves_two():
    from convfuse import wgmma_layouts as M
    plain, rotated = M.c3_staging_wavefronts(fp16=True), M.c3_staging_wavefronts(rotated=True, fp16=True)
    assert plain == 576                       # 36 warp instructions x 2 half-warps x 8 wavefronts
    assert rotated == 144                     # 2 lanes per 8-byte bank pair: 2 wavefronts per half-warp, not 1
