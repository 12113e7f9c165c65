"""convfuse/wgmma_model.py: the 3xFP16 kernels' shared-memory images and descriptors give the convolution."""
import numpy as np
import pytest

from convfuse import wgmma_model as M


def _direct(x, w, n, oh, ox0):
    H, W = x.shape[2:]
    out = np.zeros((M.COUT, M.TH, M.XW))
    for t in range(M.TH):
        for col in range(M.XW):
            if oh + t <= H - 3 and ox0 + col <= W - 3:
                patch = x[n, :, oh + t:oh + t + 3, ox0 + col:ox0 + col + 3].astype(np.float64)
                out[:, t, col] = np.einsum("oikl,ikl->o", w.astype(np.float64), patch)
    return out


@pytest.mark.parametrize("shape,oh,ox0", [((1, 64, 6, 9), 1, 0), ((2, 64, 5, 100), 2, 86)])
def test_the_14_wgmmas_per_chunk_compute_the_conv(shape, oh, ox0):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.uniform(-1, 1, (64, 64, 3, 3)) / 24).astype(np.float32)
    n = shape[0] - 1
    got = M.tile_3xfp16(x, w, n, oh, ox0).reshape(M.COUT, M.TH, M.XW)
    want = _direct(x, w, n, oh, ox0)
    valid = np.zeros((M.TH, M.XW), bool)
    for t in range(M.TH):
        valid[t] = [(oh + t <= shape[2] - 3) and (ox0 + c <= shape[3] - 3) and c < M.XW - 2 for c in range(M.XW)]
    assert valid.any()
    err = np.abs(got - want)[:, valid]
    # the FP16 split keeps 22 bits: the modelled sum is exact, so only the split's own error remains
    assert np.linalg.norm(err) / np.linalg.norm(want[:, valid]) < 2e-7


def test_the_pairing_offsets_stay_inside_shared_memory():
    # tap 8 pairs the zero block with w_hi(8): lbo up to the last chunk's, within a descriptor's 18 bits
    assert M.NCHUNK * M.CHUNK_W < (1 << 18)
    assert [M.tap_offset(t + 1) - M.tap_offset(t) for t in (0, 2, 4, 6)] == [16, (M.XW - 2) * 16, 16, 16]


@pytest.mark.parametrize("shape,od,oh,ox0", [((1, 8, 4, 5, 9), 1, 2, 0), ((2, 8, 3, 4, 130), 0, 1, 62)])
def test_conv3d_41_wgmmas_per_tile_compute_the_conv(shape, od, oh, ox0):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.uniform(-1, 1, (64, 8, 3, 3, 3)) / 15).astype(np.float32)
    n = shape[0] - 1
    got = M.c3_tile_3xfp16(x, w, n, od, oh, ox0)
    D, H, W = shape[2:]
    cols = [c for c in range(M.C3_XW - 2) if ox0 + c <= W - 3]
    assert cols and od <= D - 3 and oh <= H - 3
    want = np.stack([np.einsum("oidkl,idkl->o", w.astype(np.float64),
                               x[n, :, od:od + 3, oh:oh + 3, ox0 + c:ox0 + c + 3].astype(np.float64)) for c in cols], 1)
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
