"""The CPU models of the tensor-core precisions (convfuse/splits.py): the roundings are the hardware's,
and the schemes land on the right side of the FP32 bound (rel-L2 2e-6, max-abs 1e-4)."""
import pytest
import torch

from convfuse import splits as S


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
