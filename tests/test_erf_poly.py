"""The range-limited GELU in kernels/common.cuh (used after conv3d's clamp) against the exact erf GELU,
evaluated in FP32 exactly as the device evaluates it (Horner with fused multiply-adds)."""
import math
import re

import numpy as np
import pytest

from convfuse.registry import KERNELS


def _coefficients(name: str = "gelu_clamped"):
    body = re.search(rf"float {name}\(float v\) \{{(.*?)\n\}}", (KERNELS / "common.cuh").read_text(), re.S).group(1)
    return [float(c) for c in re.findall(r"(-?\d+\.\d+(?:e-?\d+)?)f", body)]   # highest degree first, then 0.5


def _fma(a, b, c):   # fmaf: one rounding, as float64 then round
    return (a.astype(np.float64) * b + np.float64(c)).astype(np.float32)


def _clamped_gelu_error(coeffs):
    """gelu(v) = v (0.5 + v Q(v^2)) on [-1, 1] with Q's coefficients (highest degree first, then 0.5), in FP32 Horner
    as the device evaluates it: (values, results, float64 reference)."""
    assert coeffs[-1] == 0.5
    v = np.linspace(-1.0, 1.0, 200_001, dtype=np.float32)
    t = (v * v).astype(np.float32)
    q = np.full_like(v, np.float32(coeffs[0]))
    for c in coeffs[1:-1]:
        q = _fma(q, t, np.float32(c))
    y = (v * _fma(v, q, np.float32(0.5))).astype(np.float32)
    ref = np.array([0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in v.astype(np.float64)])
    return v, y, ref


def test_gelu_clamped_is_accurate_over_the_clamped_range():
    coeffs = _coefficients()
    assert len(coeffs) == 6
    v, y, ref = _clamped_gelu_error(coeffs)
    assert np.abs(y - ref).max() < 1.5e-7, np.abs(y - ref).max()   # far under the 1e-4 bound, ~1 ulp of 1
    # relative to the value away from 0 (gelu(v) ~ v/2 near 0, so relative error stays bounded too)
    rel = np.abs(y - ref) / np.maximum(np.abs(ref), 1e-30)
    assert rel.max() < 5e-7, rel.max()



def test_gelu_clamped_q3_is_accurate_over_the_clamped_range():
    """CF_GELU_Q3's degree-3 polynomial (conv3d TF32 candidate): one FFMA fewer per output for 2.6e-7."""
    coeffs = _coefficients("gelu_clamped_q3")
    assert len(coeffs) == 5
    _, y, ref = _clamped_gelu_error(coeffs)
    err = np.abs(y - ref).max()
    assert 1.5e-7 < err < 3e-7, err      # worse than the degree-4 polynomial's, far under any bound


def _clamped_gelu_half_error(coeffs):
    """CF_GELU_HALF's form: gelu(2u) = fma(s, R(s), u) for u = v/2 on [-1/2, 1/2], s = u^2, R's coefficient of degree k
    Q's times 4^(k+1), in FP32 Horner as the device evaluates it: (v, results, float64 reference)."""
    assert coeffs[-1] == 0.5
    q_coeffs = coeffs[:-1]
    degree = len(q_coeffs) - 1
    v = np.linspace(-1.0, 1.0, 200_001, dtype=np.float32)
    u = (v * np.float32(0.5)).astype(np.float32)
    s = (u * u).astype(np.float32)
    r = np.full_like(u, np.float32(q_coeffs[0]) * np.float32(4.0 ** (degree + 1)))
    for k, c in zip(range(degree - 1, -1, -1), q_coeffs[1:]):
        r = _fma(r, s, np.float32(c) * np.float32(4.0 ** (k + 1)))
    y = _fma(s, r, u)
    ref = np.array([0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in v.astype(np.float64)])
    return v, y, ref


def test_gelu_half_form_scales_every_horner_step_exactly():
    """CF_GELU_HALF's Horner steps are Q's times powers of two, so its
    error is the last rounding's: within an ulp of 1 of the v (0.5 + v Q) form, for both polynomials."""
    for name, bound in (("gelu_clamped", 1.5e-7), ("gelu_clamped_q3", 3e-7)):
        coeffs = _coefficients(name)
        _, y_half, ref = _clamped_gelu_half_error(coeffs)
        _, y, _ = _clamped_gelu_error(coeffs)
        assert np.abs(y_half - ref).max() < bound, (name, np.abs(y_half - ref).max())
        assert 0 < np.abs(y_half - y).max() <= 2 ** -23, (name, np.abs(y_half - y).max())   # not the same, an ulp apart


def _body(name: str) -> str:
    return re.search(rf"float {name}\(float \w+\) \{{(.*?)\n\}}", (KERNELS / "common.cuh").read_text(), re.S).group(1)


def _floats(name: str) -> list:
    return [np.float32(float(c)) for c in re.findall(r"(-?\d+\.\d+(?:e[-+]?\d+)?)f", _body(name))]


def _rcp_alu(d):
    """rcp_alu as the device evaluates it: the bit-trick estimate, three Newton steps in fmaf."""
    magic = int(re.search(r"0x([0-9A-F]{8}) - __float_as_int", _body("rcp_alu")).group(1), 16)
    r = (np.uint32(magic) - d.view(np.uint32)).view(np.float32)
    for _ in range(_body("rcp_alu").count("fmaf(-d, r, 1.0f)")):
        r = _fma(r, _fma(-d, r, np.float32(1)), r)
    return r


def _ex2_alu(y):
    shift, _, *poly = _floats("ex2_alu")              # 1.5 x 2^23 twice, then the polynomial, highest degree first
    j = (y + shift).astype(np.float32)
    f = (y - (j - shift).astype(np.float32)).astype(np.float32)
    p = np.full_like(y, poly[0])
    for c in poly[1:]:
        p = _fma(p, f, c)
    n = j.view(np.uint32) - np.uint32(0x4B400000)
    return (p.view(np.uint32) + (n << np.uint32(23))).view(np.float32)


def test_rcp_and_ex2_without_mufu_are_accurate_over_their_ranges():
    d = np.linspace(1.0, 2.97, 400_001, dtype=np.float32)
    assert (np.abs(_rcp_alu(d).astype(np.float64) * d - 1) < 1.2e-7).all()
    y = np.linspace(-52.0, 0.0, 400_001, dtype=np.float32)
    rel = np.abs(_ex2_alu(y).astype(np.float64) / np.exp2(y.astype(np.float64)) - 1)
    assert rel.max() < 2.5e-7, rel.max()              # ex2.approx.ftz's own bound is 2^-22 = 2.4e-7


def _gelu_erf_as(v, alu: bool):
    """gelu_erf_as<ALU> (gelu_erf_alu with ALU, gelu_erf_fast without) as the device evaluates it in FP32: its constants
    read from the source; without ALU the approximate reciprocal and exp2 are modelled as correctly rounded (the
    hardware's are within 1-2 ulp), with ALU as rcp_alu and ex2_alu compute them."""
    c = _floats("gelu_erf_as")      # 6, p, 1, a5 .. a1, -log2(e), 1, 0.5, 0.5 in source order
    assert len(c) == 12 and c[0] == 6 and c[2] == c[9] == 1 and c[10] == c[11] == 0.5
    xmax, p_, (a5, a4, a3, a2, a1), mlog2e = c[0], c[1], c[3:8], c[8]
    f32 = np.float32
    x = (np.abs(v) * f32(0.70710678118654752440)).astype(f32)
    if alu:
        x = np.minimum(x, xmax)
    d = _fma(np.full_like(x, p_), x, f32(1))
    t = _rcp_alu(d) if alu else (f32(1) / d).astype(f32)
    p = np.full_like(x, a5)
    for a in (a4, a3, a2, a1):
        p = _fma(p, t, a)
    with np.errstate(over="ignore"):                    # x*x = inf past 1.8e19: exp2(-inf) = 0, as on the device
        y = ((x * x).astype(f32) * mlog2e).astype(f32)
    e = _ex2_alu(y) if alu else np.exp2(y).astype(f32)
    erf = np.copysign(_fma(-(p * t).astype(f32), e, f32(1)), v)
    with np.errstate(over="ignore"):
        return (v * _fma(erf, f32(0.5), f32(0.5))).astype(np.float64)


@pytest.mark.parametrize("alu", [False, True], ids=["gelu_erf_fast", "gelu_erf_alu"])
def test_gelu_erf_fast_and_alu_are_accurate_for_every_float(alu):
    """gelu_erf_fast (conv2d's epilogue) and gelu_erf_alu (CF_GELU_ALU: the same without MUFU) against the exact GELU."""
    v = np.concatenate([np.linspace(-12, 12, 400_001), np.geomspace(1e-30, 1e30, 2_001),
                        -np.geomspace(1e-30, 1e30, 2_001)]).astype(np.float32)
    y = _gelu_erf_as(v, alu)
    vd = v.astype(np.float64)
    ref = np.array([0.5 * a * (1 + math.erf(a / math.sqrt(2))) for a in vd])
    err = np.abs(y - ref)
    # against the FP32 bounds (max-abs 1e-4): a few 1e-7 of |v| where erf is not yet +-1, exact beyond
    assert (err <= 4e-7 * np.maximum(1.0, np.abs(vd))).all(), err.max()
    assert err.max() < 2e-6
