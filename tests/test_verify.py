"""The verification protocol must be able to fail: broken stand-ins, each caught."""
import pytest
import torch

from convfuse import problems as P
from convfuse import verify as V

SHAPES = {"conv2d": [(1, 64, 9, 13), (3, 64, 6, 8)], "conv3d": [(1, 8, 5, 7, 9), (3, 8, 4, 6, 5)]}
TRIALS = ((0, "rand"), (1, "randn"))


def correct(x, w, b, p, out=None):
    return _model_fn(x, w, b, p, out)


def _model_fn(x, w, b, p, out):
    conv = P.eager_conv(P.get("conv2d" if x.dim() == 4 else "conv3d"), x, w, b)
    if x.dim() == 4:
        y = torch.nn.functional.gelu(torch.nn.functional.leaky_relu(conv * p, 0.01))
    else:
        y = torch.nn.functional.gelu(torch.clamp(torch.nn.functional.leaky_relu(conv, 0.2) + p, -1, 1))
    out.copy_(y)
    return out


def skipped_row(x, w, b, p, out=None):
    full = _model_fn(x, w, b, p, out.clone())
    full[..., 1, :] = out[..., 1, :]          # row 1 never written: still the poison
    out.copy_(full)


def wrong_channel_param(x, w, b, p, out=None):
    _model_fn(x, w, b, p.roll(1, 0), out)     # channel c uses parameter c-1


def unwritten_tail(x, w, b, p, out=None):
    full = _model_fn(x, w, b, p, out.clone()).flatten()
    out.flatten()[:-3] = full[:-3]


def one_nan(x, w, b, p, out=None):
    _model_fn(x, w, b, p, out)
    out.view(-1)[out.numel() // 2] = float("nan")


def tf32_like_noise(x, w, b, p, out=None):
    _model_fn(x, w, b, p, out)
    out.add_(out.abs() * 3e-4 * torch.randn_like(out))   # ~ TF32 rounding error


def _run(prob_key, runner, precision="fp32"):
    prob = P.get(prob_key)
    model = prob.make_model(seed=0)
    checks = V.run_checks(prob, model, {"stand_in": runner}, {"stand_in": precision},
                          shapes=SHAPES[prob_key], trials=TRIALS, device="cpu")
    assert len(checks) == len(SHAPES[prob_key]) * len(TRIALS)
    return V.summarize(checks)["stand_in"]


@pytest.mark.parametrize("prob", ["conv2d", "conv3d"])
def test_correct_stand_in_passes(prob):
    s = _run(prob, correct)
    assert s["verified"] and s["kernelbench_pass"] and s["max_abs_err_fp64"] < 1e-5


@pytest.mark.parametrize("prob", ["conv2d", "conv3d"])
@pytest.mark.parametrize("broken", [skipped_row, wrong_channel_param, unwritten_tail, one_nan, tf32_like_noise],
                         ids=lambda f: f.__name__)
def test_broken_stand_ins_are_caught(prob, broken):
    s = _run(prob, broken)
    assert not s["verified"], f"{broken.__name__} slipped through: {s}"
    assert s["failures"]


def test_tf32_bound_is_looser_but_not_blind():
    assert _run("conv2d", tf32_like_noise, precision="tf32")["verified"]
    assert not _run("conv2d", wrong_channel_param, precision="tf32")["verified"]


def test_nan_where_truth_has_nan_is_fine_elsewhere_not():
    ref = torch.tensor([1.0, float("nan"), float("inf")], dtype=torch.float64)
    assert V.compare(torch.tensor([1.0, float("nan"), float("inf")]), ref)["nonfinite_mismatch"] == 0
    assert V.compare(torch.tensor([1.0, 0.0, float("inf")]), ref)["nonfinite_mismatch"] == 1
    assert V.compare(torch.tensor([1.0, float("nan"), float("-inf")]), ref)["nonfinite_mismatch"] == 1
    assert V.compare(torch.tensor([float("nan"), float("nan"), float("inf")]), ref)["nonfinite_mismatch"] == 1


def test_bounds_per_precision():
    assert V.within_bounds({"max_abs": 5e-5, "rel_l2": 1e-6, "nonfinite_mismatch": 0}, "fp32")
    assert not V.within_bounds({"max_abs": 2e-4, "rel_l2": 1e-6, "nonfinite_mismatch": 0}, "fp32")
    assert not V.within_bounds({"max_abs": 5e-5, "rel_l2": 3e-6, "nonfinite_mismatch": 0}, "3xtf32")
    assert V.within_bounds({"max_abs": 1e-2, "rel_l2": 5e-4, "nonfinite_mismatch": 0}, "tf32")
    assert not V.within_bounds({"max_abs": 0, "rel_l2": 0, "nonfinite_mismatch": 1}, "tf32")
