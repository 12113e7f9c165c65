"""GPU hardening suite (issue 6), `pytest -m gpu`: special values, repeatability, huge tensors.

First run on the H200, 2026-11-29: 68 of 72 pass. The 4 failures are real: both 3xtf32 kernels turn an
input +-Inf into NaN, because the split's small part is Inf - Inf (kernels/common.cuh, split_tf32);
eager gives +-Inf there. The >2^31-element cases passed for all 12 variants (the test does not record
whether a variant ran or refused; by their launch code none refuses at these batches).
"""
import pytest
import torch

from convfuse import problems as P
from convfuse import registry as R

pytestmark = pytest.mark.gpu
KERNELS = R.kernel_variants()


@pytest.fixture(scope="module")
def mods():
    from convfuse import build

    return build.build_all(KERNELS)


def prob_shape(v):
    return P.get(v.problem).odd_shapes[1]


def _setup(v, shape=None, seed=0):
    prob = P.get(v.problem)
    model = prob.make_model(seed=seed, device="cuda").requires_grad_(False)
    x = prob.make_input(shape or prob.odd_shapes[0], seed=seed, device="cuda")
    return prob, model, x


def _classes(t: torch.Tensor) -> torch.Tensor:
    """0 finite, 1 NaN, 2 +Inf, 3 -Inf: what 'propagates as eager does' compares."""
    c = torch.zeros_like(t, dtype=torch.int8)
    c[torch.isnan(t)] = 1
    c[t == float("inf")] = 2
    c[t == float("-inf")] = 3
    return c


@pytest.mark.parametrize("special", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_special_values_propagate_like_eager(v, special, mods):
    prob, model, x = _setup(v)
    flat = x.view(-1)
    idx = torch.randperm(flat.numel(), device="cuda", generator=torch.Generator("cuda").manual_seed(1))[:5]
    flat[idx] = float(special)
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        want = model(x)
    got = R.kernel_runner(v, mods[(v.problem, v.key)])(x, *P.conv_params(model))
    mism = (_classes(got) != _classes(want)).sum().item()
    assert mism == 0, f"{mism} outputs differ from eager in NaN/Inf class"


@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_large_magnitudes_do_not_overflow_where_eager_does_not(v, mods):
    prob, model, x = _setup(v)
    x = x * 1e30                                   # products ~1e29, sums far from FP32's 3.4e38
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        want = model(x)
    got = R.kernel_runner(v, mods[(v.problem, v.key)])(x, *P.conv_params(model))
    bad = torch.isfinite(want) & ~torch.isfinite(got)
    assert not bad.any(), f"{bad.sum().item()} outputs overflow where eager's are finite"


@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_bit_identical_over_ten_runs(v, mods):
    prob, model, x = _setup(v, shape=prob_shape(v))
    run = R.kernel_runner(v, mods[(v.problem, v.key)])
    first = run(x, *P.conv_params(model))
    for _ in range(9):
        again = run(x, *P.conv_params(model))
        assert torch.equal(first, again), "output changed between runs on the same input"


# Beyond 2^31 elements: conv2d's input from batch 513, conv3d's output from batch 624 (~9 GB each).
LARGE_BATCH = {"conv2d": 513, "conv3d": 624}


@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_tensors_beyond_2_31_elements_run_or_are_refused(v, mods):
    prob = P.get(v.problem)
    shape = (LARGE_BATCH[prob.key],) + tuple(prob.input_shape[1:])
    model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
    x = torch.rand(shape, device="cuda")
    run = R.kernel_runner(v, mods[(v.problem, v.key)])
    try:
        y = run(x, *P.conv_params(model))
    except (ValueError, RuntimeError) as e:        # a clear refusal is acceptable
        assert "2^31" in str(e) or "grid" in str(e) or "too many" in str(e) or "exceeds" in str(e), str(e)
        return
    # check the last images, where 32-bit offsets would have wrapped
    tail = slice(shape[0] - 2, shape[0])
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        want = model(x[tail])
    tol = 1e-2 if v.precision == "tf32" else 1e-4
    torch.testing.assert_close(y[tail], want, atol=tol, rtol=tol)
