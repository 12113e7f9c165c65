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


# --- the scale sweep (issue 66): inputs over 1e-6..1e3, with the model's bias and with bias zeroed -------------------
def _fp16_operands(x, w, b, p, out, passes, scale_input):
    """A CPU stand-in for an FP16-operand kernel: FP16 parts of x (unscaled, as the kernels today, or with a power of two
    per call: enough where a trial draws one scale; a batch of mixed scales needs one per staged block, as
    tests/test_splits.py shows) and of w (scaled per call, as the kernels), products in FP32, then bias and epilogue."""
    from convfuse import splits as S

    sx = S.pow2_scale(x.abs().amax()).item() if scale_input else 1.0
    xh, xl = S.split_fp16(x, sx)
    wh, wl = S.split_fp16(w, S.weight_scale(w))
    conv = torch.nn.functional.conv2d if x.dim() == 4 else torch.nn.functional.conv3d
    pairs = [(xh, wh)] if passes == 1 else [(xl, wh), (xh, wl), (xh, wh)]
    z = sum(conv(a, c) for a, c in pairs)
    prob = P.get("conv2d" if x.dim() == 4 else "conv3d")
    out.copy_(_epilogue(prob, z + b.view(1, -1, *([1] * (x.dim() - 2))), p))
    return out


def _epilogue(prob, conv, p):
    F_ = torch.nn.functional
    if prob.dims == 2:
        return F_.gelu(F_.leaky_relu(conv * p, 0.01))
    return F_.gelu(torch.clamp(F_.leaky_relu(conv, 0.2) + p, -1, 1))


def fp16_unscaled(x, w, b, p, out=None):
    return _fp16_operands(x, w, b, p, out, 1, False)


def x3fp16_unscaled(x, w, b, p, out=None):
    return _fp16_operands(x, w, b, p, out, 3, False)


def fp16_scaled(x, w, b, p, out=None):
    return _fp16_operands(x, w, b, p, out, 1, True)


def x3fp16_scaled(x, w, b, p, out=None):
    return _fp16_operands(x, w, b, p, out, 3, True)


def _sweep(runner, precision, scales=V.SCALES, trials=None):
    prob = P.get("conv2d")
    model = prob.make_model(seed=0)
    checks = V.run_checks(prob, model, {"stand_in": runner}, {"stand_in": precision}, shapes=[(1, 64, 9, 13)],
                          trials=trials or V.sweep_trials(scales), device="cpu",
                          scales={"stand_in": V.held_scales("conv2d", precision)})
    return {(c.scale, c.bias): c for c in checks}


def test_sweep_trials_cover_the_decades_with_and_without_bias():
    t = V.sweep_trials()
    assert {sc for _, _, sc, _ in t} == set(V.SCALES) and min(V.SCALES) <= 1e-6 and max(V.SCALES) >= 1e3
    assert all(b / a == pytest.approx(10) for a, b in zip(V.SCALES, V.SCALES[1:]))
    assert {b for *_, b in t} == {"model", "zero"} and len(t) == 2 * len(V.SCALES)
    assert V.TRIALS == ((0, "rand"), (1, "randn"), (2, "rand"))     # the full-shape (bench) trials are unchanged


@pytest.mark.parametrize("runner,precision,first_bad", [(fp16_unscaled, "fp16", 1e-5), (x3fp16_unscaled, "3xfp16", 1e-3)],
                         ids=["fp16", "3xfp16"])
def test_sweep_catches_unscaled_fp16_operands_at_small_scales(runner, precision, first_bad):
    """The old protocol (unit scale, the model's bias) passes the FP16-operand stand-in; the sweep fails it with bias zeroed
    at and below the scale the CPU model names, and nowhere else."""
    prob = P.get("conv2d")
    old = V.run_checks(prob, prob.make_model(seed=0), {"s": runner}, {"s": precision}, shapes=[(1, 64, 9, 13)],
                       trials=V.TRIALS, device="cpu")
    assert all(c.passed for c in old)
    got = _sweep(runner, precision)
    bad = sorted({sc for (sc, b), c in got.items() if not c.passed})
    assert bad and max(bad) == first_bad and all(b == "zero" for (sc, b), c in got.items() if not c.passed), bad


@pytest.mark.parametrize("runner,precision", [(fp16_scaled, "fp16"), (x3fp16_scaled, "3xfp16")], ids=["fp16s", "3xfp16s"])
def test_sweep_passes_fp16_operands_with_a_scaled_input(runner, precision):
    got = _sweep(runner, precision)
    assert len(got) == 2 * len(V.SCALES) and all(c.passed for c in got.values()), \
        [(k, c.rel_l2) for k, c in got.items() if not c.passed]


def test_sweep_checks_a_variant_only_where_its_class_is_stated():
    """A variant with a narrower stated range (registry input_scales) is checked exactly there; the class limit of
    conv3d (verify.CLASS_SCALES) narrows every conv3d variant of the class."""
    assert V.held_scales("conv2d", "3xfp16", (1e-2, 1e3)) == (1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3)
    assert V.held_scales("conv2d", "3xtf32") == V.SCALES
    assert V.held_scales("conv3d", "3xtf32")[-1] == 1e2 and V.held_scales("conv3d", "tf32")[-1] == 1e1
    assert V.held_scales("conv3d", "tf32+bf16", (1e-6, 1e1))[-1] == 1e1
    got = V.run_checks(P.get("conv2d"), P.get("conv2d").make_model(seed=0), {"s": x3fp16_unscaled}, {"s": "3xfp16"},
                       shapes=[(1, 64, 9, 13)], trials=V.sweep_trials(), device="cpu",
                       scales={"s": V.held_scales("conv2d", "3xfp16", (1e-2, 1e3))})
    assert {c.scale for c in got} == {1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3} and all(c.passed for c in got)


def test_zero_bias_trial_leaves_the_callers_bias():
    prob = P.get("conv2d")
    model = prob.make_model(seed=0)
    V.run_checks(prob, model, {"s": correct}, {"s": "fp32"}, shapes=[(1, 64, 9, 13)], trials=((1, "randn", 1e-3, "zero"),),
                 device="cpu")
    assert model.conv.bias.abs().max() > 0


def test_max_abs_bound_grows_with_a_large_input_only():
    assert V.max_abs_bound("fp32", 1e-6) == V.max_abs_bound("fp32") == 1e-4
    assert V.max_abs_bound("3xfp16", 1e3) == pytest.approx(1e-1) and V.max_abs_bound("tf32", 1e3) is None
    assert V.within_bounds({"max_abs": 2e-3, "rel_l2": 2e-7, "nonfinite_mismatch": 0}, "fp32", scale=1e3)
    assert not V.within_bounds({"max_abs": 2e-3, "rel_l2": 2e-7, "nonfinite_mismatch": 0}, "fp32")
