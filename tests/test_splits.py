"""The CPU models of the tensor-core precisions (convfuse/splits.py): the roundings are the hardware's,
and the schemes land on the right side of the FP32 bound (rel-L2 2e-6, max-abs 1e-4)."""
import pytest
import torch
import torch.nn.functional as F

from convfuse import problems as P
from convfuse import registry as R
from convfuse import splits as S
from convfuse import verify as V


def test_round_tf32_is_cvt_rna():
    one = 1.0
    cases = {one + 2.0 ** -11: one + 2.0 ** -10,      # a tie rounds away from zero
             -(one + 2.0 ** -11): -(one + 2.0 ** -10),
             one + 2.0 ** -12: one,                   # below half an ulp rounds down
             one + 3 * 2.0 ** -12: one + 2.0 ** -10,
             3.0: 3.0}
    x = torch.tensor(list(cases), dtype=torch.float32)
    assert S.round_tf32(x).tolist() == list(cases.values())
    r = S.round_tf32(torch.randn(10_000))
    assert (r.view(torch.int32) & 0x1FFF).eq(0).all()


def test_split_tf32_recovers_fp32():
    x = torch.randn(10_000) * torch.logspace(-20, 20, 10_000)
    big, small = S.split_tf32(x)
    assert ((big - S.round_tf32(big)) == 0).all() and ((small - S.round_tf32(small)) == 0).all()
    rel = ((big.double() + small.double() - x.double()).abs() / x.double().abs()).max().item()
    assert rel <= 2.0 ** -21
    assert (small.abs() <= x.abs() * 2.0 ** -11).all()


def test_round_bf16_keeps_8_significant_bits():
    r = S.round_bf16(torch.randn(10_000))
    assert (r.view(torch.int32) & 0xFFFF).eq(0).all()


@pytest.mark.parametrize("problem,shape", [("conv2d", (1, 64, 40, 40)), ("conv3d", (1, 8, 8, 24, 24))])
def test_schemes_against_the_fp32_bound(problem, shape):
    err = S.model_errors(problem, shape)
    assert err["tf32"]["rel_l2"] > 2e-5                 # TF32 alone: far outside the FP32 bound
    for scheme in ("3xtf32", "tf32+bf16", "3xfp16"):
        assert err[scheme]["rel_l2"] <= 2e-6 and err[scheme]["max_abs"] <= 1e-4, (scheme, err[scheme])
    assert err["3xtf32"]["rel_l2"] < err["tf32+bf16"]["rel_l2"] < err["tf32"]["rel_l2"] / 100
    # FP16 operands have TF32's 11 significant bits: TF32's error, not FP32's
    assert err["tf32"]["rel_l2"] / 1.5 < err["fp16"]["rel_l2"] < 1.5 * err["tf32"]["rel_l2"], (err["fp16"], err["tf32"])


def test_fp16_split_keeps_22_bits_and_the_weight_scale_is_a_power_of_two():
    t = torch.rand(10_000) * 100
    hi, lo = S.split_fp16(t)
    assert ((hi + lo - t).abs() <= t.abs() * 2.0 ** -21).all()
    w = (torch.rand(64, 64, 3, 3) - 0.5) / 12
    s = S.weight_scale(w)
    assert s == 2.0 ** round(torch.log2(torch.tensor(s)).item()) and 2 ** 13 <= w.abs().max() * s < 2 ** 14
    assert S.weight_scale(torch.zeros(3)) == 1.0 and S.weight_scale(torch.tensor([float("inf")])) == 1.0
    assert S.weight_scale(torch.tensor([float("inf"), 0.5])) == 2.0 ** 14   # finite weights set it, as in the kernel


def test_unknown_scheme_is_refused():
    with pytest.raises(ValueError, match="unknown scheme"):
        S.model_errors("conv2d", (1, 64, 8, 8), schemes=("fp8",))


# --- input scale (issue 66): each class over the input's whole range, with the model's bias and with bias zeroed -------
ISSUE_SCALES = (1, 1e-2, 1e-3, 1e-4, 1e-5)


def _cells(problem, bias, scales=V.SCALES):
    return {(r["scale"], r["scheme"]): r for r in S.scale_table(problem, scales=scales, bias=bias)}


def test_issue_66_table_is_reproduced():
    """conv2d, bias zeroed, randn x scale: the issue's numbers within 25 % (3xTF32: the CPU's FP32 floor, ~2.3e-7 here
    where the issue's machine gave ~4.5e-7: flat either way)."""
    c = _cells("conv2d", "zero", ISSUE_SCALES)
    issue = {"fp16": (3.1e-4, 3.0e-4, 3.0e-4, 3.2e-4, 1.7e-3), "3xfp16": (None, 1.8e-6, 1.7e-5, 1.7e-4, 1.7e-3)}
    for scheme, want in issue.items():
        for sc, w in zip(ISSUE_SCALES, want):
            if w is not None:
                assert w / 1.25 < c[(sc, scheme)]["rel_l2"] < w * 1.25, (scheme, sc, c[(sc, scheme)]["rel_l2"])
    flat = [c[(sc, "3xtf32")]["rel_l2"] for sc in ISSUE_SCALES]
    assert max(flat) < 1.5 * min(flat) and max(flat) < 5e-7
    assert c[(1, "3xfp16")]["rel_l2"] < 5e-7


@pytest.mark.parametrize("bias", S.BIAS_MODES)
def test_current_fp16_schemes_fail_their_class_at_small_scales_on_conv2d(bias):
    """The defect, documented: unscaled FP16 input. Bias zeroed, 3xFP16 misses its FP32 bound from 1e-3 down and FP16 its
    TF32 bound from 1e-5 down, by the factors the issue gives; the model's bias hides both (a test that notices if the
    model, or the bias's masking, changes)."""
    c = _cells("conv2d", bias)
    fails = {s: sorted(sc for sc in V.SCALES if not c[(sc, s)]["holds"]) for s in ("fp16", "3xfp16")}
    if bias == "zero":
        assert fails == {"fp16": [1e-6, 1e-5], "3xfp16": [1e-6, 1e-5, 1e-4, 1e-3]}, fails
        assert c[(1e-3, "3xfp16")]["rel_l2"] > 5 * 2e-6 and c[(1e-6, "fp16")]["rel_l2"] > 10 * 1e-3
    else:
        assert fails == {"fp16": [], "3xfp16": []}, fails
        # still well above eager FP32's own error: the bias masks it, it does not remove it
        assert c[(1e-5, "3xfp16")]["rel_l2"] > 5 * c[(1e-5, "fp32")]["rel_l2"]


@pytest.mark.parametrize("problem", ["conv2d", "conv3d"])
@pytest.mark.parametrize("bias", S.BIAS_MODES)
def test_tf32_3xtf32_and_the_scaled_fp16_schemes_hold_at_every_scale(problem, bias):
    """TF32 rounds its input with FP32's exponent, so scale does not move its error; fp16s / 3xfp16s (a power of two per
    staged block) do as well as TF32 / 3xTF32 at every scale. conv3d's clamp is the exception for every arithmetic, eager
    FP32's included, and verify.CLASS_SCALES names it: checked to its range there."""
    c = _cells(problem, bias)
    for scheme in ("tf32", "3xtf32", "fp16s", "3xfp16s"):
        held = V.held_scales(problem, S.scheme_class(scheme))
        bad = [(sc, c[(sc, scheme)]["rel_l2"]) for sc in held if not c[(sc, scheme)]["holds"]]
        assert not bad, (scheme, bad)
    for sc in V.SCALES:      # scaled FP16 tracks its TF32 twin: within 2x of TF32 / 3xTF32 (or eager's floor)
        assert c[(sc, "fp16s")]["rel_l2"] < 2 * c[(sc, "tf32")]["rel_l2"] + 1e-7
        assert c[(sc, "3xfp16s")]["rel_l2"] < 2 * max(c[(sc, "3xtf32")]["rel_l2"], c[(sc, "fp32")]["rel_l2"]) + 1e-7


def test_conv3d_class_limit_is_the_problems_not_a_kernels():
    """verify.CLASS_SCALES: beyond it even the class's own reference arithmetic misses the bound (eager FP32 for the
    FP32 classes, TF32 for the TF32 class), inside it that arithmetic holds."""
    c = _cells("conv3d", "zero")
    for scheme, cls in (("fp32", "3xtf32"), ("tf32", "tf32")):
        lo, hi = V.CLASS_SCALES[("conv3d", cls)]
        assert all(S.class_holds(c[(sc, scheme)], cls, sc) for sc in V.SCALES if lo <= sc <= hi), scheme
        above = [sc for sc in V.SCALES if sc > hi]
        assert above and not any(S.class_holds(c[(sc, scheme)], cls, sc) for sc in above), scheme


@pytest.mark.parametrize("problem", ["conv2d", "conv3d"])
def test_registry_names_the_range_the_model_gives(problem):
    """Each FP16/split kernel's held scales (registry input_scales within verify.CLASS_SCALES) are the model's
    held_range for its scheme, with and without bias: the suite checks exactly what the model says holds."""
    for v in R.kernel_variants(problem):
        if v.precision not in S.SCHEMES or v.precision == "tf32":
            continue
        model = S.held_range(problem, v.precision)
        checked = V.held_scales(problem, v.precision, v.input_scales)
        assert (checked[0], checked[-1]) == model, (v.key, checked, model)


def test_scaled_schemes_hold_over_the_whole_range_on_conv2d():
    for scheme in S.SCALED_SCHEMES:
        assert S.held_range("conv2d", scheme) == (1e-6, 1e3)
    assert S.held_range("conv2d", "fp16") == (1e-4, 1e3) and S.held_range("conv2d", "3xfp16") == (1e-2, 1e3)


def test_fixed_shifts_hold_the_fp16_classes_without_a_block_max():
    """Issue 66's cheaper fix, predicted before any kernel: shifting 3xfp16's lo parts by 2^11 alone takes its floor from
    1e-2 to 1e-5; shifting the input by 2^6 as well holds 1e-6 to 1e3 for both FP16 schemes, the top decade only through
    the FP32 path (every output of the table's image takes it at 1e3, none up to 1e2)."""
    assert S.held_range("conv2d", "3xfp16c") == (1e-5, 1e3)
    assert S.held_range("conv2d", "fp16f") == S.held_range("conv2d", "3xfp16f") == (1e-6, 1e3)
    for bias in S.BIAS_MODES:
        for r in S.scale_table("conv2d", bias=bias):
            if r["scheme"] in ("fp16f", "3xfp16f"):
                assert (r["fallback_share"] > 0.5) == (r["scale"] >= 1e3), r
            elif r["scheme"] == "3xfp16c":
                assert r["fallback_share"] == 0.0


def test_fixed_shift_takes_the_fp32_path_exactly_where_fp16_overflows():
    """An output whose window holds an input at or above 65520 / 2^INPUT_SHIFT (or Inf, NaN) is the FP32 conv; the
    others keep the FP16 passes' result."""
    prob = P.get("conv2d")
    w = prob.make_model(seed=0).conv.weight.detach()
    x = prob.make_input((1, 64, 12, 12), seed=0, dist="randn")
    x[0, 5, 3, 4] = S.FP16_MAX / 2.0 ** S.INPUT_SHIFT
    x[0, 9, 10, 10] = float("nan")
    for scheme in ("fp16f", "3xfp16f"):
        z, share = S.fixed_conv(prob, x, w, scheme)
        exact = F.conv2d(x, w)
        hit = torch.zeros(10, 10, dtype=torch.bool)
        hit[1:4, 2:5] = True           # outputs (r, c) with 3..4 in r..r+2 and c..c+2
        hit[8:10, 8:10] = True
        assert share == pytest.approx(hit.float().mean().item())
        torch.testing.assert_close(z[0][:, hit], exact[0][:, hit], rtol=0, atol=0, equal_nan=True)
        assert torch.isfinite(z[0][:, ~hit]).all()


def test_input_exponent_is_per_block_and_undone_exactly():
    """One power of two per (window, chunk of channels): a block of tiny values keeps FP16's 11 bits beside a block of
    large ones; the split recovers 22 bits at any scale."""
    win = torch.randn(2, 16, 4, 88, dtype=torch.float32)
    win[0, :8] *= 1e-6
    win[1, 8:] *= 1e3
    hi, lo = S.split_fp16_blocks(win, 8)
    rel = ((hi.double() + lo.double() - win.double()).abs() / win.double().abs()).max().item()
    assert rel <= 2.0 ** -21
    assert ((hi.double() - win.double()).abs() <= win.double().abs() * 2.0 ** -11).all()
    s = S.pow2_scale(torch.tensor([0.0, 1.0, 3e-7, float("inf")]))
    assert s.tolist() == [1.0, 2.0 ** 13, 2.0 ** 35, 1.0]


def test_tiled_model_equals_the_whole_conv_without_rounding():
    """The tile bookkeeping (windows with zero past the edge, outputs put back) is exact: unrounded windows give the
    plain conv, for both problems and tiles that do not divide the output."""
    for problem, shape in (("conv2d", (2, 16, 13, 97)), ("conv3d", (1, 8, 5, 7, 70))):
        prob = P.get(problem)
        x = torch.randn(shape)
        w = torch.randn(4, shape[1], *([3] * prob.dims))
        tile = tuple(S.INPUT_BLOCK[problem][1:])
        win, counts = S._windows(x, 3, tile)
        conv = F.conv2d if prob.dims == 2 else F.conv3d
        torch.testing.assert_close(S._tiled_conv(win, w, tuple(shape), tile, counts), conv(x, w), rtol=1e-5, atol=1e-5)


def test_bias_mode_is_checked():
    with pytest.raises(ValueError, match="bias mode"):
        S.model_errors("conv2d", (1, 64, 8, 8), bias="none")


@torch.no_grad()
def test_one_exponent_per_call_fails_a_small_image_beside_a_large_one():
    """Why an exponent per staged block and not per call: in a batch of an image at 1 and one at 1e-6 (bias zeroed), a
    per-call exponent is set by the large image and leaves the small one's FP16 parts subnormal; per block, each image
    keeps its class. rel-L2 per image."""
    prob = P.get("conv2d")
    model = prob.make_model(seed=0)
    model.conv.bias.zero_()
    x = prob.make_input((2, 64, 12, 40), seed=3, dist="randn")
    x[1] *= 1e-6
    ref = P.ground_truth(model, x)

    def per_image(scheme, block):
        d = S.modelled_output(prob, model, x, scheme, input_block=block).double() - ref
        return [(torch.linalg.vector_norm(d[i]) / torch.linalg.vector_norm(ref[i])).item() for i in range(2)]

    call, block = per_image("3xfp16s", "call"), per_image("3xfp16s", "block")
    assert max(block) <= 2e-6, block
    assert call[0] <= 2e-6 < call[1], call
    assert per_image("fp16s", "block")[1] <= 1e-3 < per_image("fp16", "block")[1]
