"""The generated epilogue's semantics, op by op, on the CPU: every supported form of every op is traced from a model,
evaluated as the generated CUDA computes it (epilogue.evaluate_traced: the same expressions, statement for statement,
on torch CPU float32) and compared with the model itself in eager PyTorch, on edge values: zeros of both signs,
tiny and subnormal numbers, the softplus thresholds, |x| of 30-100 (exp overflows past 88.7), +-inf and NaN.
Then nvcc compiles every case's generated source."""
import math
import subprocess

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from convfuse import build as B
from convfuse.family import epilogue as E
from convfuse.family import trace as T

C = 3   # channels of the test convs

EDGES = [0.0, -0.0, 1e-30, -1e-30, 1e-40, -1e-40, 1e-7, -1e-7, 0.5, -0.5, 1.0, -1.0, 2.9999, 3.0, -3.0, -3.0001,
         5.99, 6.0, 6.01, 4.9, 5.0, 5.1, 2.55, 2.6, 10.0, -10.0, 19.99, 20.0, 20.01, -20.0, 30.0, -30.0, 88.0, 89.0,
         -88.0, -89.0, 100.0, -100.0, 1e30, -1e30, math.inf, -math.inf, math.nan]


def _values(seed=0) -> torch.Tensor:
    """A conv output (N=2, C, 7, 9) holding every edge value in every channel, the rest randn at three scales."""
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(2, C, 7, 9, generator=g) * torch.tensor([1.0, 10.0, 60.0]).view(1, C, 1, 1)
    flat = v.view(2, C, -1)
    for c in range(C):
        flat[0, c, :len(EDGES)] = torch.tensor(EDGES)
        flat[1, c, :len(EDGES)] = torch.tensor(EDGES).roll(c + 1)   # reductions see edges meet across channels
    return v


class _Fixed(nn.Module):
    """Stands in for the conv in the eager reference: the test's values, whatever the input."""
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, x):
        return self.value.clone()


class Case(nn.Module):
    """conv (traced) -> fn(x, self): fn is one form of the op(s) under test; self.p is per-channel, self.s one value,
    self.act / self.act2 the case's modules."""
    def __init__(self, fn, act=None, act2=None, dims=2):
        super().__init__()
        self.act, self.act2 = act, act2     # module forms: submodules, as a model holds them
        self.conv = (nn.Conv2d if dims == 2 else nn.Conv3d)(C, C, 3)
        self.p = nn.Parameter(torch.tensor([-1.5, 0.0, 2.25]).view((C,) + (1,) * dims))
        self.s = nn.Parameter(torch.tensor([0.75]))
        self.register_buffer("buf", torch.tensor([0.5, -2.0, 3.0]).view((C,) + (1,) * dims))
        self.fn = fn

    def forward(self, x):
        return self.fn(self.conv(x), self)


def _slope(x, m):
    return F.leaky_relu(x, 0.2)


# (id, fn): each op in each of its forms (module, function, method, operator, in-place, hand-written composition)
CASES = [
    ("add_scalar", lambda x, m: x + 3), ("radd_scalar", lambda x, m: 3.5 + x), ("add_param", lambda x, m: x + m.p),
    ("add_alpha", lambda x, m: torch.add(x, m.p, alpha=2.5)), ("sub_param", lambda x, m: x - m.p),
    ("rsub_scalar", lambda x, m: 2 - x), ("rsub_param", lambda x, m: m.p - x), ("sub_method", lambda x, m: x.sub(0.1)),
    ("mul_scalar", lambda x, m: x * 2.5), ("mul_param", lambda x, m: x * m.p), ("mul_buffer", lambda x, m: m.buf * x),
    ("mul_scalar_param", lambda x, m: x * m.s), ("div_scalar", lambda x, m: x / 3), ("div_param", lambda x, m: x / m.p),
    ("rdiv_scalar", lambda x, m: 2 / x), ("div_fn", lambda x, m: torch.div(x, 7.0)), ("neg", lambda x, m: -x),
    ("abs", lambda x, m: torch.abs(x)), ("exp", lambda x, m: x.exp()),
    ("relu_fn", lambda x, m: torch.relu(x)), ("relu_F", lambda x, m: F.relu(x)), ("relu_method", lambda x, m: x.relu()),
    ("relu_module", lambda x, m: m.act(x), nn.ReLU()), ("relu_inplace", lambda x, m: F.relu(x, inplace=True)),
    ("leaky_default", lambda x, m: F.leaky_relu(x)), ("leaky_kw", lambda x, m: F.leaky_relu(x, negative_slope=0.2)),
    ("leaky_pos", _slope), ("leaky_module", lambda x, m: m.act(x), nn.LeakyReLU(0.3)),
    ("gelu_erf", lambda x, m: F.gelu(x)), ("gelu_tanh", lambda x, m: F.gelu(x, approximate="tanh")),
    ("gelu_module", lambda x, m: m.act(x), nn.GELU("tanh")),
    ("sigmoid", lambda x, m: torch.sigmoid(x)), ("sigmoid_method", lambda x, m: x.sigmoid()),
    ("tanh", lambda x, m: torch.tanh(x)), ("tanh_module", lambda x, m: m.act(x), nn.Tanh()),
    ("silu", lambda x, m: F.silu(x)), ("silu_by_hand", lambda x, m: x * torch.sigmoid(x)),
    ("softplus", lambda x, m: F.softplus(x)), ("softplus_beta_threshold", lambda x, m: F.softplus(x, beta=2, threshold=5)),
    ("softplus_module", lambda x, m: m.act(x), nn.Softplus(beta=0.5, threshold=10)),
    ("mish", lambda x, m: F.mish(x)), ("mish_by_hand", lambda x, m: x * torch.tanh(F.softplus(x))),
    ("hardswish", lambda x, m: F.hardswish(x)), ("hardswish_module", lambda x, m: m.act(x), nn.Hardswish()),
    ("hardswish_by_hand", lambda x, m: x * F.relu6(x + 3) / 6),
    ("hardswish_57", lambda x, m: x * torch.clamp((x + 3) / 6, 0, 1)),
    ("hardsigmoid", lambda x, m: F.hardsigmoid(x)),
    ("clamp", lambda x, m: torch.clamp(x, min=-1.0, max=1.0)), ("clamp_method", lambda x, m: x.clamp(0, 6)),
    ("clamp_min_only", lambda x, m: x.clamp(min=0.5)), ("clamp_max_only", lambda x, m: torch.clamp(x, max=-0.5)),
    ("clamp_min_fn", lambda x, m: torch.clamp_min(x, 0.25)), ("clip", lambda x, m: x.clip(-2, 2)),
    ("hardtanh", lambda x, m: F.hardtanh(x)), ("hardtanh_module", lambda x, m: m.act(x), nn.Hardtanh(-2.0, 0.5)),
    ("relu6", lambda x, m: F.relu6(x)), ("relu6_module", lambda x, m: m.act(x), nn.ReLU6()),
    ("minimum_param", lambda x, m: torch.minimum(x, m.p)), ("maximum_param", lambda x, m: torch.max(x, m.buf)),
    ("minimum_self", lambda x, m: torch.minimum(x, x * 0.5)),
    ("chain_54", lambda x, m: F.gelu(F.leaky_relu(x * m.p))),
    ("chain_90", lambda x, m: F.gelu(torch.clamp(F.leaky_relu(x, negative_slope=0.2) + m.p, min=-1.0, max=1.0))),
    ("dag", lambda x, m: torch.tanh(x) * x + torch.sigmoid(x) / (x + m.s)),
    ("inplace_chain", lambda x, m: m.act(x).mul_(2.0).add_(m.p), nn.ReLU(inplace=True)),
    ("identity_dropout", lambda x, m: m.act(m.act2(x)) * 2, nn.Dropout(0.5).eval(), nn.Identity()),
    # reductions over channels, and the ops after them
    ("min_keepdim", lambda x, m: torch.min(x * 2.0, dim=1, keepdim=True)[0]),
    ("min_values", lambda x, m: x.min(dim=1).values), ("max_positional", lambda x, m: torch.max(x, 1, True)[0]),
    ("amax", lambda x, m: torch.amax(x, dim=1)), ("amin_neg_dim", lambda x, m: x.amin(-3, keepdim=True)),
    ("sum", lambda x, m: torch.sum(x * m.p, dim=1)), ("sum_keepdim", lambda x, m: x.sum(1, keepdim=True)),
    ("mean", lambda x, m: torch.mean(torch.relu(x), dim=1, keepdim=True)),
    ("min_then_tanh", lambda x, m: torch.tanh(torch.min(x, dim=1, keepdim=True)[0]) * 2 + m.s),
    ("mean_tuple_dim", lambda x, m: x.mean(dim=(1,))),
]


def _edge_finite(x):
    """Finite edge values only: where sums over channels meet +inf and -inf the result is NaN in any order, and
    the reduction cases with infinities are compared separately (min/max), so sums see the finite edges."""
    return torch.nan_to_num(x, nan=0.0, posinf=1e30, neginf=-1e30)


def _compare(model: nn.Module, values: torch.Tensor, cancels: bool = False):
    traced = T.trace(model)
    ours = E.evaluate_traced(traced, values, dict(model.named_parameters()) | dict(model.named_buffers()))
    model.conv = _Fixed(values)
    with torch.no_grad():
        ref = model(torch.zeros(1))
    assert ours.shape == ref.shape
    assert torch.equal(torch.isnan(ours), torch.isnan(ref)), "NaN where torch has none, or none where it has"
    fin = torch.isfinite(ref)
    assert torch.equal(ours[~fin & ~torch.isnan(ref)], ref[~fin & ~torch.isnan(ref)]), "infinities differ"
    # a few ulp: PyTorch's CUDA divides by a scalar as a multiply by its FP32 reciprocal, hardswish multiplies by
    # FP32 1/6, and the channel sums add in the template's order; any formula slip is far larger. Where a formula
    # cancels (GELU's 1 + erf(x) for x << 0) an ulp of erf is an ulp of 1 times |x|: bounded as such.
    bound = 2e-6 * ref.abs()
    bound = bound + (2.4e-7 * (1 + values.abs()) if cancels else 1e-37)
    bad = (ours - ref).abs() > bound
    assert not bad[fin].any(), f"{int(bad[fin].sum())} values differ: ours {ours[fin & bad][:5]}, torch {ref[fin & bad][:5]}"


def _case_values(name, values):
    if name.startswith(("sum", "mean")):
        return _edge_finite(values)
    if "gelu" in name or name == "chain_54":
        # torch's CPU GELU gives NaN at +inf where its CUDA kernel's formula (ours) gives +inf: compared on
        # finite values here (an infinity before a GELU may become +inf), at +inf in test_gelu_at_infinity_...
        return torch.nan_to_num(values, nan=math.nan, posinf=1e30, neginf=-1e30)
    return values


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_generated_op_matches_torch_on_edge_values(case):
    name, fn, *mods = case
    _compare(Case(fn, *mods), _case_values(name, _values()), cancels="gelu" in name or name == "chain_54")


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in ("chain_90", "mul_param", "sum", "mish", "leaky_module")],
                         ids=lambda c: c[0])
def test_3d_convs_take_the_same_epilogues(case):
    name, fn, *mods = case
    _compare(Case(fn, *mods, dims=3), _case_values(name, _values().unsqueeze(2).repeat(1, 1, 2, 1, 1)),
             cancels=name == "chain_90")


def test_gelu_at_infinity_is_the_cuda_kernels():
    """ActivationGeluKernel.cu computes x * 0.5 * (1 + erf(x / sqrt 2)): +inf at +inf, NaN at -inf (inf * 0); torch's
    CPU kernel gives NaN at both, so the edge-value cases leave +inf out and this pins the CUDA value."""
    m = Case(lambda x, m: F.gelu(x))
    v = torch.tensor([math.inf, -math.inf]).view(1, 1, 1, 2).repeat(1, C, 1, 1)
    out = E.evaluate_traced(T.trace(m), v, dict(m.named_parameters()))
    assert out[0, 0, 0, 0] == math.inf and math.isnan(out[0, 0, 0, 1])


def test_the_comparison_fails_on_a_formula_slip(monkeypatch):
    """The checks above can fail: a softplus that ignores its threshold, a GELU with the wrong approximation, a relu
    that drops NaN (fmaxf alone) and a scalar division that rounds the divisor differently are each caught."""
    slips = {
        "softplus": (1, lambda a, beta=1.0, threshold=20.0: E.call("log1pf", E.call("expf", a * E.const(beta))) /
                     E.const(beta)),
        "gelu": (1, lambda a, approximate="none": E._gelu(a, "tanh" if approximate == "none" else "none")),
        "relu": (1, lambda a: E.call("fmaxf", a, 0.0)),
        "div": (2, lambda a, b: a * E.const(1.0 / 3.1) if b.kind == "const" else a / b),
    }
    cases = {"softplus": lambda x, m: F.softplus(x, beta=2, threshold=5), "gelu": lambda x, m: F.gelu(x),
             "relu": lambda x, m: torch.relu(x), "div": lambda x, m: x / 3}
    for op, slip in slips.items():
        with monkeypatch.context() as mp:
            mp.setitem(E.OPS, op, slip)
            with pytest.raises(AssertionError):
                _compare(Case(cases[op]), _values())


def test_scalars_are_fp32_literals_that_read_back_exactly():
    for v in (0.01, 0.2, 1 / 6, 0.044715, 1e-30, 3.4e38, 1e-45, -2.5, 6.0, 100.0):
        text = E.cuda_float(E.f32(v))
        assert text.endswith("f")
        assert E.f32(float(text[:-1])) == E.f32(v), (v, text)
    assert E.cuda_float(math.inf) == "__int_as_float(0x7f800000)"


# --- the generated sources compile ---------------------------------------------------------------------------
def _harness(cases) -> str:
    """Every case's generated struct in its own namespace, each called from a kernel so nvcc instantiates it."""
    parts = [(B.KERNELS / "family" / "family_args.h").read_text().replace("#pragma once\n", "")]
    for i, (name, fn, *mods) in enumerate(cases):
        gen = E.generate(T.trace(Case(fn, *mods)))
        parts += [f"namespace case{i} {{  // {name}", gen.source,
                  "__global__ void k(const float* x, float* y, cf_family::Params p, int n) {",
                  "    const int i = blockIdx.x * blockDim.x + threadIdx.x;",
                  "    if (i >= n) return;",
                  "    float v = FamilyEpilogue::apply(x[i], i % 3, p);",
                  "    if (FamilyEpilogue::kReduces)",
                  "        v = FamilyEpilogue::post(FamilyEpilogue::finish(FamilyEpilogue::combine("
                  "FamilyEpilogue::init(), v)), p);",
                  "    y[i] = v;", "}", "}"]
    parts.append("const char* family_launch(const cf_family::FamilyArgs&, cudaStream_t) { return nullptr; }")
    parts.append("int family_out_channels() { return 1; }")
    return "\n".join(parts)


@pytest.mark.skipif(B.find_nvcc() is None, reason="nvcc not found (CUDA_HOME or PATH): the compile check needs it")
def test_every_generated_epilogue_compiles_with_nvcc(tmp_path):
    src = tmp_path / "epilogues.cu"
    src.write_text(_harness(CASES))
    proc = subprocess.run([B.find_nvcc(), *B.NVCC_FLAGS, "-arch=sm_80", "-c", str(src), "-o", str(tmp_path / "e.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
