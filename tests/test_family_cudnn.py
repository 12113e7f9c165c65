"""cuDNN's fused graph for the family (convfuse/family/cudnn_graph.py), on the CPU: which of the nine problems get a graph
and which are refused and why; the nodes each graph is declared with, against a fake `cudnn` module that records the
calls and holds them to the argument names of the frontend's Python bindings; and what the nodes compute, by running
them on the CPU with each cuDNN pointwise mode's documented formula against the model itself. What cuDNN itself does
with the graph (plans, TF32, its modes' rounding) is tests/test_family_gpu.py's."""
from __future__ import annotations

import math
import re
import sys
from types import SimpleNamespace

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from convfuse import cudnn_fused as CF
from convfuse.family import cudnn_graph as CG
from convfuse.family import epilogue as E
from convfuse.family import models as M
from convfuse.family import run as R
from convfuse.family import trace as T

# The keyword arguments of each pygraph method the builder calls, as nvidia-cudnn-frontend's bindings declare them
# (python/pygraph/pygraph.cpp, python/pygraph/pointwise.cpp; compute_data_type and name on every node).
BINDINGS = {
    "conv_fprop": {"image", "weight", "padding", "stride", "dilation"},
    "bias": {"input", "bias"},
    "add": {"a", "b"}, "sub": {"a", "b"}, "mul": {"a", "b"}, "div": {"a", "b"},
    "min": {"input0", "input1"}, "max": {"input0", "input1"},
    "relu": {"input", "negative_slope", "lower_clip", "upper_clip"}, "leaky_relu": {"input", "negative_slope"},
    "swish": {"input", "swish_beta"},
    "cmp_gt": {"input", "comparison"}, "binary_select": {"input0", "input1", "mask"},
    **{m: {"input"} for m in ("neg", "abs", "exp", "reciprocal", "sigmoid", "tanh", "gelu", "gelu_approx_tanh",
                              "softplus")},
}
REFUSED = {"kb32": "min over channels (dim=1) is a reduction"}


class FakeTensor:
    def __init__(self, name, **kw):
        self.name, self.kw = name, kw
        self.output, self.data_type, self.dim, self.stride = False, kw.get("data_type"), kw.get("dim"), kw.get("stride")

    def set_output(self, v):
        self.output = v
        return self

    def set_data_type(self, v):
        self.data_type = v
        return self

    def set_dim(self, v):
        self.dim = v
        return self

    def set_stride(self, v):
        self.stride = v
        return self

    def __repr__(self):
        return self.name


class FakeGraph:
    """Records every node the builder makes: (method, keyword arguments, output)."""

    def __init__(self, **kw):
        self.kw, self.calls, self.tensors = kw, [], {}

    def tensor(self, name, dim, stride, data_type, is_pass_by_value=False):
        self.tensors[name] = FakeTensor(name, dim=dim, stride=stride, data_type=data_type, by_value=is_pass_by_value)
        return self.tensors[name]

    def __getattr__(self, method):
        if method not in BINDINGS:
            raise AttributeError(f"pygraph has no method {method!r} here")

        def node(**kw):
            unknown = set(kw) - BINDINGS[method] - {"compute_data_type", "name"}
            assert not unknown, f"{method} takes no {unknown}"
            out = FakeTensor(f"{kw['name']}::OUT_0")
            self.calls.append((method, kw, out))
            return out
        return node


FAKE = SimpleNamespace(data_type=SimpleNamespace(FLOAT="FLOAT", BOOLEAN="BOOLEAN"), pygraph=FakeGraph)


def _traced(key):
    prob = M.get(key)
    model = prob.make_model(seed=0)
    return prob, model, T.trace(model)


def _declared(key, shape=None):
    prob, model, traced = _traced(key)
    shape = tuple(shape or prob.odd_shapes[0])
    return prob, model, traced, CG.declare(FAKE, traced, CG.lower(traced), shape, handle="handle")


def test_every_op_of_the_generator_has_a_cudnn_lowering():
    assert CG.lowered_ops() == set(E.OPS)


@pytest.mark.parametrize("key", list(M.FAMILY))
def test_each_problem_is_lowered_or_refused_naming_the_op(key):
    prob, model, traced = _traced(key)
    if key in REFUSED:
        with pytest.raises(CG.Refused, match=re.escape(REFUSED[key])):
            CG.lower(traced)
        return
    dec = CG.declare(FAKE, traced, CG.lower(traced), prob.odd_shapes[0], handle="handle")
    g = dec.graph
    assert g.kw == {"io_data_type": "FLOAT", "intermediate_data_type": "FLOAT", "compute_data_type": "FLOAT",
                    "handle": "handle"}
    (conv, ckw, cout), (bias, bkw, _) = g.calls[:2]
    assert conv == "conv_fprop" and ckw["image"] is dec.tensors["x"] and ckw["weight"] is dec.tensors["w"]
    assert ckw["padding"] == [0] * traced.conv.dims and ckw["compute_data_type"] == "FLOAT"
    assert bias == "bias" and bkw["input"] is cout and bkw["bias"] is dec.tensors["conv_bias"]
    # x, w and y channels_last, as the study's graphs; y the model's output shape
    fmt = CF._fmt(traced.conv.dims)
    y_ref = model(torch.rand(prob.odd_shapes[0]))
    y = dec.tensors["y"]
    assert y is g.calls[-1][2] and y.output and y.data_type == "FLOAT" and y.dim == list(y_ref.shape)
    assert y.stride == list(y_ref.contiguous(memory_format=fmt).stride())
    x = torch.empty(prob.odd_shapes[0]).contiguous(memory_format=fmt)
    assert dec.tensors["x"].stride == list(x.stride())
    assert len({kw["name"] for _, kw, _ in g.calls}) == len(g.calls)          # every node named once


def _node_list(dec):
    """The calls after conv and bias as (method, {keyword: tensor name or value}), outputs as '#i' (i from 1)."""
    out_names = {id(o): f"#{i}" for i, (_, _, o) in enumerate(dec.graph.calls[2:], 1)}
    out_names[id(dec.graph.calls[1][2])] = "conv"

    def name(v):
        if isinstance(v, FakeTensor):
            if id(v) in out_names:
                return out_names[id(v)]
            return float(dec.constants[v.name].item()) if v.name in dec.constants else v.name
        return v
    return [(m, {k: name(v) for k, v in kw.items() if k not in ("name", "compute_data_type")})
            for m, kw, _ in dec.graph.calls[2:]]


def test_kb1_relu_then_the_models_bias_per_channel():
    _, model, _, dec = _declared("kb1")
    assert _node_list(dec) == [("relu", {"input": "conv"}), ("add", {"a": "#1", "b": "param:bias"})]
    assert dec.tensors["param:bias"].dim == [1, 128, 1, 1]
    assert dec.tensors["conv_bias"] is not dec.tensors["param:bias"]      # the model's bias is not the conv's


def test_kb71_divide_is_a_multiply_by_the_fp32_reciprocal_then_leaky_relu():
    _, _, _, dec = _declared("kb71")
    assert _node_list(dec) == [("mul", {"a": "conv", "b": 0.5}),
                               ("leaky_relu", {"input": "#1", "negative_slope": E.f32(0.01)})]
    const = next(t for t in dec.tensors.values() if t.kw.get("by_value"))
    assert const.dim == [1, 1, 1, 1] and dec.constants[const.name].dtype == torch.float32


def test_kb48_scale_tanh_multiply_sigmoid_with_each_parameter_in_its_place():
    _, _, _, dec = _declared("kb48")
    assert _node_list(dec) == [("mul", {"a": "conv", "b": "param:scaling_factor"}), ("tanh", {"input": "#1"}),
                               ("mul", {"a": "#2", "b": "param:bias"}), ("sigmoid", {"input": "#3"})]
    assert dec.tensors["param:scaling_factor"].dim == [1, 16, 1, 1, 1]


def test_kb4_mish_is_composed_from_softplus_tanh_and_mul():
    _, _, _, dec = _declared("kb4")
    assert _node_list(dec)[:3] == [("softplus", {"input": "conv"}), ("tanh", {"input": "#1"}),
                                   ("mul", {"a": "conv", "b": "#2"})]


def test_the_study_problems_get_the_nodes_of_the_studys_own_graph():
    # convfuse/cudnn_fused.Graph builds these by hand for notebook 00; the family's builder reaches the same nodes
    _, _, _, dec = _declared("conv2d")
    assert [m for m, _ in _node_list(dec)] == ["mul", "leaky_relu", "gelu"]
    _, _, _, dec = _declared("conv3d")
    assert _node_list(dec) == [("leaky_relu", {"input": "conv", "negative_slope": E.f32(0.2)}),
                               ("add", {"a": "#1", "b": "param:sum_tensor"}),
                               ("max", {"input0": "#2", "input1": -1.0}), ("min", {"input0": "#3", "input1": 1.0}),
                               ("gelu", {"input": "#4"})]


# --- what the nodes compute: each mode's formula as cuDNN's documentation states it, in float64 ----------------------
MODES = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "min": torch.minimum, "max": torch.maximum, "neg": torch.neg, "abs": torch.abs, "exp": torch.exp,
    "reciprocal": torch.reciprocal, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
    "relu": lambda x: torch.clamp_min(x, 0.0),
    "leaky_relu": lambda x, negative_slope: torch.where(x >= 0, x, negative_slope * x),
    "gelu": lambda x: 0.5 * x * (1 + torch.erf(x / math.sqrt(2.0))),
    "gelu_approx_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "swish": lambda x: x * torch.sigmoid(x), "softplus": lambda x: torch.log1p(torch.exp(x)),
    "cmp_gt": lambda x, c: x > c, "binary_select": lambda a, b, mask: torch.where(mask, a, b),
}


def run_steps(traced, steps, model, x):
    """The graph on the CPU in float64: conv + bias, then each step by its mode's formula, the model's tensors bound
    as Runner.operands binds them."""
    conv = model.get_submodule(traced.conv.path).double()
    vals = [conv(x)]
    for s in steps:
        args = []
        for _, a in s.args:
            if isinstance(a, CG.Value):
                args.append(vals[a.index])
            elif isinstance(a, CG.Scalar):
                args.append(torch.tensor(a.value, dtype=torch.float64))
            else:
                args.append(T._getattr_path(model, a.name).detach().double())
        vals.append(MODES[s.call](*args, **dict(s.attrs)))
    return vals[-1]


@pytest.mark.parametrize("key", [k for k in M.FAMILY if k not in REFUSED])
def test_the_nodes_compute_what_the_model_computes(key):
    prob, model, traced = _traced(key)
    x = torch.randn(prob.odd_shapes[0], dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 2
    ref = model.double()(x)
    got = run_steps(traced, CG.lower(traced), model, x)
    torch.testing.assert_close(got, ref, rtol=1e-6, atol=1e-6)


class _EveryOp(nn.Module):
    """The ops no family problem has, in the forms a model writes them."""

    def __init__(self, form):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.p = nn.Parameter(torch.rand(4, 1, 1) + 0.5)
        self.form = form

    def forward(self, x):
        x = self.conv(x)
        return self.form(x, self.p)


FORMS = {
    "rsub": lambda x, p: 2.0 - x, "param_minus": lambda x, p: p - x, "rdiv": lambda x, p: 3.0 / (x.abs() + 1),
    "param_over": lambda x, p: p / (x.abs() + 1), "tensor_over": lambda x, p: x / p, "neg_exp": lambda x, p: (-x).exp(),
    "silu": lambda x, p: F.silu(x), "gelu_tanh": lambda x, p: F.gelu(x, approximate="tanh"),
    "softplus": lambda x, p: F.softplus(x * 8), "softplus_beta": lambda x, p: F.softplus(x * 8, beta=2.0, threshold=3.0),
    "hardswish": lambda x, p: F.hardswish(x * 4), "hardsigmoid": lambda x, p: F.hardsigmoid(x * 4),
    "relu6": lambda x, p: F.relu6(x * 4), "clamp_max": lambda x, p: x.clamp(max=0.1),
    "min_max_param": lambda x, p: torch.maximum(torch.minimum(x, p), p - 2), "mul_param_first": lambda x, p: p * x,
    "x_times_sigmoid_x": lambda x, p: x * torch.sigmoid(x),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_every_op_computes_what_pytorch_computes(form):
    model = _EveryOp(FORMS[form])
    traced = T.trace(model)
    steps = CG.lower(traced)
    x = torch.randn(2, 3, 9, 11, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(run_steps(traced, steps, model, x), model.double()(x), rtol=1e-6, atol=1e-6)
    dec = CG.declare(FAKE, traced, steps, (2, 3, 9, 11), handle=None)
    for m, kw, out in dec.graph.calls[2:]:   # a node that reads a computed value takes one first, not a model tensor
        ins = [v for v in kw.values() if isinstance(v, FakeTensor)]
        first = kw.get("a", kw.get("input0", kw.get("input")))
        if any(not v.name.startswith(("const", "param:")) for v in ins):
            assert not first.name.startswith(("const", "param:")), (form, m)
        assert (out.data_type == "BOOLEAN") == (m == "cmp_gt")     # binary_select's mask, and only it


# --- the runner and the run, without a GPU -------------------------------------------------------------------------
def test_refused_before_the_frontend_and_skipped_without_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "cudnn", None)           # import cudnn -> ImportError
    prob, model, _ = _traced("kb32")
    with pytest.raises(CG.Refused, match="min over channels"):
        CG.Runner(prob, model)
    runner, rec = R.cudnn_fused(prob, model, log=lambda m: None)
    assert runner is None and rec["status"] == "refused" and rec["message"].startswith("min over channels")
    prob, model, _ = _traced("kb1")
    runner, rec = R.cudnn_fused(prob, model, log=lambda m: None)
    assert runner is None and rec["status"] == "skipped" and "nvidia-cudnn-frontend" in rec["message"]


def test_the_runner_binds_the_models_own_tensors(monkeypatch):
    monkeypatch.setattr(CF, "frontend", lambda: FAKE)
    prob, model, _ = _traced("kb48")
    r = CG.Runner(prob, model)
    assert r.precision == "tf32"
    x = torch.rand(prob.odd_shapes[1])
    ops = r.operands(x)
    assert set(ops) == {"x", "w", "y", "conv_bias", "param:scaling_factor", "param:bias"}
    assert ops["x"].is_contiguous(memory_format=torch.channels_last_3d) and torch.equal(ops["x"], x)
    assert ops["w"].is_contiguous(memory_format=torch.channels_last_3d) and torch.equal(ops["w"], model.conv.weight)
    assert torch.equal(ops["conv_bias"].reshape(-1), model.conv.bias)
    assert torch.equal(ops["param:bias"], model.bias.reshape(1, 16, 1, 1, 1))
    assert torch.equal(ops["param:scaling_factor"], model.scaling_factor.reshape(1, 16, 1, 1, 1))
    assert ops["y"].shape == model(x).shape and ops["y"].is_contiguous(memory_format=torch.channels_last_3d)
    with torch.no_grad():
        model.conv.weight.mul_(2)                           # a new parameter version: converted again
    assert torch.equal(r.operands(x)["w"], model.conv.weight)


def test_the_table_shows_cudnn_beside_ours():
    ms = {"ours_tf32": 0.5, "eager": 1.0, "eager_fp32": 3.0, "compile": 1.5, "cudnn_fused": 0.75}
    recs = {"kb1": {"summary": "Conv2d(64->128) -> relu -> add", "designs": {"tf32": {"verified": True}},
                    "timings": {n: {"median_ms": v} for n, v in ms.items()},
                    "speedups": {"tf32_vs_compile": 3.0, "tf32_vs_cudnn_fused": 1.5},
                    "cudnn_fused": {"status": "ok", "verified": True}},
            "kb32": {"summary": "Conv2d(64->128) -> mul -> min(dim=1, keepdim)", "designs": {},
                     "cudnn_fused": {"status": "refused", "message": "min over channels (dim=1) is a reduction"}}}
    lines = R.table(recs).splitlines()
    assert "cudnn_fused" in lines[0] and "tf32/cudnn" in lines[0]
    assert "0.750" in lines[2] and "1.50" in lines[2] and lines[2].endswith("cudnn: verified")
    assert lines[3].endswith("cudnn: refused: min over channels (dim=1) is a reduction")
    assert R.cudnn_cell({}) == "not measured"


def test_a_family_graph_builds_the_first_plans_the_heuristics_rank():
    """Plans._build_plans with max_plans (the family's cudnn_graph.PLANS): the first that many plans that build, in
    cuDNN's order, a declined one skipped and recorded; every offered plan still named; the study's every_plan
    builds all, every_plan=False the first that builds."""
    from convfuse import cudnn_fused as CFU

    class FakeGraph:
        def __init__(self, n, declines):
            self.n, self.declines, self.tried = n, declines, []

        def validate(self): pass
        def build_operation_graph(self): pass
        def create_execution_plans(self, modes): pass
        def check_support(self): pass
        def get_execution_plan_count(self): return self.n
        def get_plan_name_at_index(self, i): return f"eng{i}"
        def get_workspace_size_plan_at_index(self, i): return 64

        def build_plan_at_index(self, i):
            self.tried.append(i)
            if i in self.declines:
                raise RuntimeError("no engine")

    class FakeCudnn:
        class heur_mode:
            A, FALLBACK = "A", "FALLBACK"

    def built(every_plan, max_plans):
        p = CFU.Plans()
        p.cudnn, p.graph = FakeCudnn(), FakeGraph(15, {1})
        p._build_plans("a graph", every_plan, "cpu", max_plans=max_plans)
        return p

    p = built(True, CG.PLANS)
    assert CG.PLANS == 4 and p.built == [0, 2, 3, 4] and p.graph.tried == [0, 1, 2, 3, 4]
    assert len(p.names) == 15 and list(p.declined) == ["eng1"] and p.plan == 0
    assert built(True, None).built == [i for i in range(15) if i != 1]
    assert built(False, CG.PLANS).built == [0]
