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
    """gelu_clamped_q3 (conv3d 04b TF32): one FFMA fewer per output for 2.6e-7."""
    coeffs = _coefficients("gelu_clamped_q3")
    assert len(coeffs) == 5
    _, y, ref = _clamped_gelu_error(coeffs)
    err = np.abs(y - ref).max()
    assert 1.5e-7 < err < 3e-7, err      # worse than the degree-4 polynomial's, far under any bound


def _clamped_gelu_half_error(coeffs):
    """gelu_clamped's HALF form: gelu(2u) = fma(s, R(s), u) for u = v/2 on [-1/2, 1/2], s = u^2, R's coefficient of degree k
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
    """The HALF form's Horner steps are Q's times powers of two, so its
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


def _gelu_erf_fast(v):
    """gelu_erf_fast as the device evaluates it in FP32: its constants read from the source, the approximate reciprocal
    and exp2 modelled as correctly rounded (the hardware's are within 1-2 ulp)."""
    c = _floats("gelu_erf_fast")      # p, 1, a5 .. a1, -log2(e), 1, 0.5, 0.5 in source order
    assert len(c) == 11 and c[1] == c[8] == 1 and c[9] == c[10] == 0.5
    p_, (a5, a4, a3, a2, a1), mlog2e = c[0], c[2:7], c[7]
    f32 = np.float32
    x = (np.abs(v) * f32(0.70710678118654752440)).astype(f32)
    d = _fma(np.full_like(x, p_), x, f32(1))
    t = (f32(1) / d).astype(f32)
    p = np.full_like(x, a5)
    for a in (a4, a3, a2, a1):
        p = _fma(p, t, a)
    with np.errstate(over="ignore"):                    # x*x = inf past 1.8e19: exp2(-inf) = 0, as on the device
        y = ((x * x).astype(f32) * mlog2e).astype(f32)
    e = np.exp2(y).astype(f32)
    erf = np.copysign(_fma(-(p * t).astype(f32), e, f32(1)), v)
    with np.errstate(over="ignore"):
        return (v * _fma(erf, f32(0.5), f32(0.5))).astype(np.float64)


def test_gelu_erf_fast_is_accurate_for_every_float():
    """gelu_erf_fast (the epilogue of conv2d's sm_90a kernels) against the exact GELU."""
    v = np.concatenate([np.linspace(-12, 12, 400_001), np.geomspace(1e-30, 1e30, 2_001),
                        -np.geomspace(1e-30, 1e30, 2_001)]).astype(np.float32)
    y = _gelu_erf_fast(v)
    vd = v.astype(np.float64)
    ref = np.array([0.5 * a * (1 + math.erf(a / math.sqrt(2))) for a in vd])
    err = np.abs(y - ref)
    # against the FP32 bounds (max-abs 1e-4): a few 1e-7 of |v| where erf is not yet +-1, exact beyond
    assert (err <= 4e-7 * np.maximum(1.0, np.abs(vd))).all(), err.max()
    assert err.max() < 2e-6
