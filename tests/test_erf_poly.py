"""The range-limited erf in kernels/common.cuh (used after conv3d's clamp) against math.erf, evaluated
in FP32 exactly as the device evaluates it (Horner with fused multiply-adds)."""
import math
import re

import numpy as np

from convfuse.registry import KERNELS


def _coefficients():
    body = re.search(r"float erf_small\(float x\) \{(.*?)\n\}", (KERNELS / "common.cuh").read_text(), re.S).group(1)
    return [float(c) for c in re.findall(r"(-?\d+\.\d+)f", body)]   # highest degree first


def test_erf_small_is_accurate_over_the_clamped_range():
    coeffs = _coefficients()
    assert len(coeffs) == 5
    x = np.linspace(-1.0, 1.0, 100_001, dtype=np.float32) * np.float32(0.70710678)
    t = (x * x).astype(np.float32)
    p = np.full_like(x, np.float32(coeffs[0]))
    for c in coeffs[1:]:   # fmaf: one rounding per step, as float64 then round
        p = (p.astype(np.float64) * t + np.float64(np.float32(c))).astype(np.float32)
    y = (x * p).astype(np.float32)
    ref = np.array([math.erf(float(v)) for v in x])
    rel = np.abs(y - ref) / np.maximum(np.abs(ref), 1e-30)
    assert rel.max() < 2.5e-7, rel.max()
    # the GELU built on it: 0.5*v*(1+erf(v/sqrt2)) for v in [-1, 1], absolute error far under 1e-4
    v = x / np.float32(0.70710678)
    gelu = 0.5 * v.astype(np.float64) * (1 + y)
    gelu_ref = 0.5 * v.astype(np.float64) * (1 + ref)
    assert np.abs(gelu - gelu_ref).max() < 1e-7
