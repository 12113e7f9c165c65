"""The tracer on the nine family models and on models outside the family: what it reads, and what it refuses and why."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from convfuse import problems as P
from convfuse.family import models as M
from convfuse.family import template as TP
from convfuse.family import trace as T

# The ops each of the nine reads as, by KernelBench number: the family's forms, normalised.
EXPECTED = {
    "kb1": ("Conv2d(64->128)", ["relu", "add"], {"bias": "channel"}),
    "kb4": ("Conv2d(64->128)", ["mish", "mish"], {}),
    "kb7": ("Conv3d(8->32)", ["relu", "leaky_relu", "gelu", "sigmoid", "add"], {"bias": "channel"}),
    "kb32": ("Conv2d(64->128)", ["mul", "min(dim=1, keepdim)"], {}),
    "kb48": ("Conv3d(3->16)", ["mul", "tanh", "mul", "sigmoid"], {"scaling_factor": "channel", "bias": "channel"}),
    "conv2d": ("Conv2d(64->64)", ["mul", "leaky_relu", "gelu"], {"multiplier": "channel"}),
    "kb57": ("Conv2d(8->64)", ["relu", "add", "div", "clamp", "mul"], {}),
    "kb71": ("Conv2d(8->64)", ["div", "leaky_relu"], {}),
    "conv3d": ("Conv3d(8->64)", ["leaky_relu", "add", "clamp", "gelu"], {"sum_tensor": "channel"}),
}


def test_the_family_is_the_nine_kernelbench_problems():
    assert sorted(M.kernelbench_number(p) for p in M.FAMILY.values()) == [1, 4, 7, 32, 48, 54, 57, 71, 90]
    assert M.get("54") is P.CONV2D and M.get("90") is P.CONV3D    # the study's own, not copies
    assert set(EXPECTED) == set(M.FAMILY)


@pytest.mark.parametrize("key", list(M.FAMILY))
def test_each_family_model_traces_to_its_ops(key):
    prob = M.FAMILY[key]
    model = prob.make_model(seed=0)
    t = T.trace(model)
    conv, ops, params = EXPECTED[key]
    head, *rest = t.summary().split(" -> ")
    assert head == conv
    assert [r.split("(")[0] if not r.startswith("min(") else r for r in rest] == ops
    assert {p.name: p.kind for p in t.params} == params
    assert (t.conv.in_channels, t.conv.out_channels, t.conv.dims) == (prob.in_channels, prob.out_channels, prob.dims)
    # the output shape the kernel allocates is the model's
    x = prob.make_input(prob.odd_shapes[0])
    assert TP.output_shape(t, x.shape) == tuple(model(x).shape)


def test_constants_are_read_from_the_model_and_pytorchs_defaults():
    t = T.trace(M.get("90").make_model(0))
    attrs = {n.op: dict(n.attrs) for n in t.nodes}
    assert attrs["leaky_relu"] == {"negative_slope": 0.2} and attrs["clamp"] == {"min": -1.0, "max": 1.0}
    assert attrs["gelu"] == {"approximate": "none"}
    t = T.trace(M.get("54").make_model(0))      # nn.LeakyReLU() with its default slope
    assert dict(t.nodes[1].attrs) == {"negative_slope": 0.01}
    t = T.trace(M.get("71").make_model(0))      # self.divisor = 2, a Python int the model holds
    assert t.nodes[0].args[1] == T.Const(2.0)


# --- models outside the family ---------------------------------------------------------------------------------
class Net(nn.Module):
    def __init__(self, fn, conv=None, **mods):
        super().__init__()
        self.conv = conv if conv is not None else nn.Conv2d(4, 8, 3)
        self.w = nn.Parameter(torch.randn(8, 1, 1))
        for k, v in mods.items():
            setattr(self, k, v)
        self.fn = fn

    def forward(self, x):
        return self.fn(self, x)


REFUSED = [
    ("kernel 5", lambda m, x: m.conv(x).relu(), dict(conv=nn.Conv2d(4, 8, 5)), r"kernel_size=\(5, 5\)"),
    ("stride 2", lambda m, x: m.conv(x).relu(), dict(conv=nn.Conv2d(4, 8, 3, stride=2)), r"stride=\(2, 2\)"),
    ("padding 1", lambda m, x: m.conv(x).relu(), dict(conv=nn.Conv2d(4, 8, 3, padding=1)), r"padding=\(1, 1\)"),
    ("dilation", lambda m, x: m.conv(x).relu(), dict(conv=nn.Conv2d(4, 8, 3, dilation=2)), r"dilation=\(2, 2\)"),
    ("groups", lambda m, x: m.conv(x).relu(), dict(conv=nn.Conv2d(4, 8, 3, groups=2)), r"groups=2"),
    ("transposed", lambda m, x: m.conv(x).relu(), dict(conv=nn.ConvTranspose2d(4, 8, 3)),
     r"first op on the input is module 'conv' \(ConvTranspose2d\), not an nn.Conv2d"),
    ("conv1d", lambda m, x: m.conv(x).relu(), dict(conv=nn.Conv1d(4, 8, 3)), r"\(Conv1d\), not an nn.Conv2d"),
    ("op before conv", lambda m, x: m.conv(x * 2), {}, r"first op on the input is function operator.mul"),
    ("residual", lambda m, x: m.conv(x) + x[:, :1, 1:-1, 1:-1], {}, r"input is used 2 times"),
    ("pool", lambda m, x: F.max_pool2d(m.conv(x), 2), {}, r"unsupported function .*max_pool2d"),
    ("softmax", lambda m, x: torch.softmax(m.conv(x), dim=1), {}, r"unsupported function .*softmax"),
    ("groupnorm", lambda m, x: m.norm(m.conv(x)), dict(norm=nn.GroupNorm(2, 8)), r"unsupported module 'norm' \(GroupNorm\)"),
    ("view", lambda m, x: m.conv(x).view(-1), {}, r"unsupported tensor method .view\(\)"),
    ("elu", lambda m, x: F.elu(m.conv(x)), {}, r"unsupported function .*elu"),
    ("dropout training", lambda m, x: m.drop(m.conv(x)), dict(drop=nn.Dropout(0.1)), r"Dropout\) in training mode"),
    ("param across H", lambda m, x: m.conv(x) * m.bad, dict(bad=nn.Parameter(torch.randn(8, 1))),
     r"tensor 'bad' of shape \(8, 1\) is neither per-channel"),
    ("param of wrong C", lambda m, x: m.conv(x) + m.bad, dict(bad=nn.Parameter(torch.randn(7, 1, 1))),
     r"shape \(7, 1, 1\) is neither per-channel \(C, 1, 1\) with C = 8"),
    ("reduce over H", lambda m, x: m.conv(x).sum(dim=2), {}, r"sum over dim=2; the family reduces over the channel axis"),
    ("reduce all", lambda m, x: m.conv(x).mean(), {}, r"mean over dim=None"),
    ("two reductions", lambda m, x: m.conv(x).amax(1, keepdim=True).amin(1), {}, r"a second reduction"),
    ("argmin", lambda m, x: torch.min(m.conv(x), dim=1)[1], {}, r"indices"),
    ("pair", lambda m, x: torch.min(m.conv(x), dim=1), {}, r"must return one tensor"),
    ("mix across the reduction", lambda m, x: m.conv(x).amax(1, keepdim=True) + m.conv2(x), dict(conv2=nn.Identity()),
     r"input is used 2 times"),
    ("value and its reduction", lambda m, x: (lambda y: y - y.amax(1, keepdim=True))(m.conv(x)), {},
     r"combines a value from before the reduction"),
    ("channel param after reduction", lambda m, x: m.conv(x).amax(1, keepdim=True) * m.w, {},
     r"per-channel tensor after the reduction"),
    ("rounding div", lambda m, x: torch.div(m.conv(x), 2, rounding_mode="floor"), {}, r"rounding_mode='floor'"),
    ("in-place on a reused value", lambda m, x: (lambda y: y.relu_() + y)(m.conv(x)), {}, r"in-place tensor method .relu_\(\)"),
    ("positional in-place on a reused value", lambda m, x: (lambda y: F.leaky_relu(y, 0.2, True) * y)(m.conv(x)), {},
     r"in-place function .*leaky_relu"),
    ("tuple output", lambda m, x: (m.conv(x).relu(), m.conv(x)), {}, r"input is used 2 times|must return one tensor"),
    ("no epilogue", lambda m, x: m.conv(x), {}, r"no op follows the conv"),
    ("tensor made in forward", lambda m, x: m.conv(x) * torch.ones(8, 1, 1), {}, r"shape \(8, 1, 1\) made in forward"),
    ("gelu other", lambda m, x: F.gelu(m.conv(x), approximate="sigmoid"), {}, r"gelu approximate='sigmoid'"),
    ("data-dependent branch", lambda m, x: m.conv(x).relu() if m.conv(x).sum() > 0 else m.conv(x), {},
     r"torch.fx cannot trace forward"),
]


@pytest.mark.parametrize("name,fn,mods,pattern", REFUSED, ids=[r[0] for r in REFUSED])
def test_models_outside_the_family_are_refused_with_the_reason(name, fn, mods, pattern):
    with pytest.raises(T.UnsupportedModel, match=pattern):
        T.trace(Net(fn, **mods))


def test_the_error_names_the_models_line():
    def fn(m, x):
        return torch.cumsum(m.conv(x), dim=1)
    with pytest.raises(T.UnsupportedModel, match=r"cumsum.*\(at test_family_trace.py:\d+: return torch.cumsum"):
        T.trace(Net(fn))


def test_two_inputs_are_refused():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(4, 8, 3)

        def forward(self, x, y):
            return self.conv(x) + y
    with pytest.raises(T.UnsupportedModel, match="takes 2 inputs"):
        T.trace(Two())


def test_hand_written_forms_are_their_ops_and_dead_code_is_dropped():
    def fn(m, x):
        y = m.conv(x)
        unused = torch.exp(y) * 3      # computed by the model but not returned: no part of the epilogue
        return y * torch.sigmoid(y)
    t = T.trace(Net(fn))
    assert [n.op for n in t.nodes] == ["sigmoid", "mul"]
    assert t.nodes[1].args == (T.Ref(0), T.Ref(1))       # x * sigmoid(x): a DAG on the conv value


def test_conv_in_a_sequential_and_scalar_parameters():
    class Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv3d(3, 5, 3, bias=False), nn.SiLU())
            self.scale = nn.Parameter(torch.tensor(0.5))
            self.register_buffer("shift", torch.ones(1, 5, 1, 1, 1))

        def forward(self, x):
            return self.body(x) * self.scale + self.shift
    t = T.trace(Seq())
    assert t.conv.path == "body.0" and t.conv.dims == 3 and not t.conv.has_bias
    assert [(p.name, p.kind) for p in t.params] == [("scale", "scalar"), ("shift", "channel")]
    assert [n.op for n in t.nodes] == ["silu", "mul", "add"]


def test_a_one_element_tensor_made_in_forward_is_a_constant_and_the_model_is_left_as_it_was():
    net = Net(lambda m, x: m.conv(x) * torch.tensor(2.5))
    names = set(vars(net))
    t = T.trace(net)
    assert t.nodes[0].args == (T.Ref(0), T.Const(2.5)) and not t.params
    assert set(vars(net)) == names
