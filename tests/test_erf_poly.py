"""The range-limited GELU in kernels/common.cuh (used after conv3d's clamp) against the exact erf GELU,
evaluated in FP32 exactly as the device evaluates it (Horner with fused multiply-adds)."""
import math
import re

import numpy as np

from convfuse.registry import KERNELS


def _coefficients():
    body = re.search(r"float gelu_clamped\(float v\) \{(.*?)\n\}", (KERNELS / "common.cuh").read_text(), re.S).group(1)
    return [float(c) for c in re.findall(r"(-?\d+\.\d+(?:e-?\d+)?)f", body)]   # highest degree first, then 0.5


def _fma(a, b, c):   # fmaf: one rounding, as float64 then round
    return (a.astype(np.float64) * b + np.float64(c)).astype(np.float32)


def test_gelu_clamped_is_accurate_over_the_clamped_range():
    coeffs = _coefficients()
    assert len(coeffs) == 6 and coeffs[-1] == 0.5
    v = np.linspace(-1.0, 1.0, 200_001, dtype=np.float32)
    t = (v * v).astype(np.float32)
    q = np.full_like(v, np.float32(coeffs[0]))
    for c in coeffs[1:5]:
        q = _fma(q, t, np.float32(c))
    y = (v * _fma(v, q, np.float32(0.5))).astype(np.float32)
    ref = np.array([0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in v.astype(np.float64)])
    assert np.abs(y - ref).max() < 1.5e-7, np.abs(y - ref).max()   # far under the 1e-4 bound, ~1 ulp of 1
    # relative to the value away from 0 (gelu(v) ~ v/2 near 0, so relative error stays bounded too)
    rel = np.abs(y - ref) / np.maximum(np.abs(ref), 1e-30)
    assert rel.max() < 5e-7, rel.max()

