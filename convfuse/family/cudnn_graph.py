"""cuDNN's fused graph for a family problem, from the traced epilogue: what a user of the cudnn-frontend would build by
hand for the model -- conv_fprop (x and w channels_last, FP32 in, out and compute), the conv's bias, then each traced
op (convfuse/family/trace.py) as cuDNN pointwise nodes -- so notebook 06 can set ours beside cuDNN's own runtime
fusion on every problem, as notebook 00 does for the study's two (convfuse/cudnn_fused.py, whose plan building,
tuning and record this module shares).

`lower` writes the graph as data (Steps), on the CPU, before cuDNN is touched; an op it cannot write as PyTorch computes
it raises Refused naming the op. Each op follows PyTorch's CUDA formula, as epilogue.OPS does:
- a tensor divided by a Python scalar is a multiply by the FP32 reciprocal (epilogue.reciprocal); a scalar divided
  by a tensor, reciprocal(x) * c;
- clamp is MAX with the lower bound, then MIN with the upper (fmaxf then fminf, PyTorch's order);
- mish has no cuDNN mode: x * tanh(softplus(x)), PyTorch's own formula (no threshold in it); hardswish and
  hardsigmoid are their formulas in ADD, MAX, MIN and MUL nodes, the 1/6 a multiply by FP32 1/6 as PyTorch's kernel;
- softplus(beta, threshold): cuDNN's SOFTPLUS_FWD is log(1 + exp(x)) without PyTorch's threshold, so the threshold is
  a CMP_GT and a BINARY_SELECT, and beta a multiply before and a divide after;
- the conv-shaped operand is always a pointwise node's first input (cuDNN infers the output from the inputs'
  broadcast, and its fusion engines are written around a full-size first input): add, mul, min and max swap their
  operands, c - x is neg(x) + c (both exact), and p / x for a per-channel p is reciprocal(x) * p (two roundings where
  PyTorch has one, far inside the TF32 bound the graph is held to).
A reduction over the channels (problem 32's min) is refused: it is no pointwise op.

Where the semantics still differ: PyTorch's relu, clamp, minimum and maximum propagate NaN; cuDNN documents no NaN
rule for RELU, MIN and MAX. The verification (run.verify) draws finite inputs, where the two agree; a NaN or an
infinity in the input is outside what this graph is held to.

cuDNN may run the conv on TF32 tensor cores: the graph is held to TF32's bound (Runner.precision), as the study's
cudnn_fused rows. Runner is the callable the family's run verifies and times: x NCHW or channels_last in (converted to
channels_last here; the timing hands it channels_last, as a channels_last caller would), y channels_last out, or
copied into `out`.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import cudnn_fused as CF
from . import epilogue as E
from . import template as TP
from . import trace as T


class Refused(CF.Unavailable):
    """An op of the traced epilogue that cuDNN's pointwise nodes cannot compute as PyTorch does: the op and why, in one
    line. Raised by `lower`, before the GPU or the frontend is touched."""


@dataclass(frozen=True)
class Value:
    index: int          # 0: the conv's output with its bias added; i: the output of step i (1-based)


@dataclass(frozen=True)
class Scalar:
    value: float        # an FP32 constant, a pass-by-value tensor of the graph


@dataclass(frozen=True)
class Step:
    call: str           # the pygraph method: "mul", "relu", "cmp_gt", ...
    args: tuple         # (keyword, Value | Scalar | trace.Param) pairs, in the method's order
    attrs: tuple = ()   # (keyword, number) pairs: the node's own constants (negative_slope)
    of: str = ""        # the traced op it computes (part of)


class _Lowering:
    def __init__(self):
        self.steps: list[Step] = []
        self.full = {0}     # Values of the conv's output shape; the others are per-channel or scalar

    def emit(self, call, *args, of, **attrs) -> Value:
        self.steps.append(Step(call, tuple(args), tuple(attrs.items()), of))
        v = Value(len(self.steps))
        if any(isinstance(a, Value) and a.index in self.full for _, a in args):
            self.full.add(v.index)
        return v

    def _rank(self, a) -> int:   # which operand a node takes first: conv-shaped, then a tensor, then a constant
        if isinstance(a, Value) and a.index in self.full:
            return 0
        return 2 if isinstance(a, Scalar) else 1

    def ordered(self, a, b):
        return (b, a) if self._rank(b) < self._rank(a) else (a, b)

    # one method per op of epilogue.OPS: (operands, attrs) -> Value
    def add(self, a, b):
        a, b = self.ordered(a, b)
        return self.emit("add", ("a", a), ("b", b), of="add")

    def mul(self, a, b):
        a, b = self.ordered(a, b)
        return self.emit("mul", ("a", a), ("b", b), of="mul")

    def sub(self, a, b):
        if self._rank(b) < self._rank(a):   # c - x = (-x) + c, exactly
            return self.emit("add", ("a", self.emit("neg", ("input", b), of="sub")), ("b", a), of="sub")
        return self.emit("sub", ("a", a), ("b", b), of="sub")

    def div(self, a, b):
        if isinstance(b, Scalar):
            return self.emit("mul", ("a", a), ("b", Scalar(E.reciprocal(b.value))), of="div")
        if self._rank(b) < self._rank(a):   # c / x and p / x: reciprocal(x) * c (Tensor.__rtruediv__'s own form)
            return self.emit("mul", ("a", self.emit("reciprocal", ("input", b), of="div")), ("b", a), of="div")
        return self.emit("div", ("a", a), ("b", b), of="div")

    def minimum(self, a, b):
        a, b = self.ordered(a, b)
        return self.emit("min", ("input0", a), ("input1", b), of="minimum")

    def maximum(self, a, b):
        a, b = self.ordered(a, b)
        return self.emit("max", ("input0", a), ("input1", b), of="maximum")

    def clamp(self, x, min=None, max=None, of="clamp"):
        if min is not None:
            x = self.emit("max", ("input0", x), ("input1", Scalar(E.f32(min))), of=of)
        if max is not None:
            x = self.emit("min", ("input0", x), ("input1", Scalar(E.f32(max))), of=of)
        return x

    def relu(self, x):
        return self.emit("relu", ("input", x), of="relu")

    def leaky_relu(self, x, negative_slope=0.01):
        # cuDNN's RELU_FWD with a lower-clip slope: x >= 0 ? x : slope * x; PyTorch's x > 0 ? x : x * slope
        return self.emit("leaky_relu", ("input", x), of="leaky_relu", negative_slope=E.f32(negative_slope))

    def gelu(self, x, approximate="none"):
        return self.emit("gelu" if approximate == "none" else "gelu_approx_tanh", ("input", x), of="gelu")

    def silu(self, x):   # SWISH_FWD: x * sigmoid(beta x), beta 1 by default
        return self.emit("swish", ("input", x), of="silu")

    def softplus(self, x, beta=1.0, threshold=20.0, of="softplus"):
        # PyTorch: (x beta) > threshold ? x : log1p(exp(x beta)) / beta
        xb = x if beta == 1.0 else self.emit("mul", ("a", x), ("b", Scalar(E.f32(beta))), of=of)
        sp = self.emit("softplus", ("input", xb), of=of)
        if beta != 1.0:
            sp = self.emit("div", ("a", sp), ("b", Scalar(E.f32(beta))), of=of)
        mask = self.emit("cmp_gt", ("input", xb), ("comparison", Scalar(E.f32(threshold))), of=of)
        return self.emit("binary_select", ("input0", x), ("input1", sp), ("mask", mask), of=of)

    def mish(self, x):   # x * tanh(log1p(exp(x))): PyTorch's mish has no threshold, cuDNN's softplus neither
        sp = self.emit("softplus", ("input", x), of="mish")
        return self.emit("mul", ("a", x), ("b", self.emit("tanh", ("input", sp), of="mish")), of="mish")

    def _relu6(self, x, of):   # min(max(x + 3, 0), 6)
        return self.clamp(self.emit("add", ("a", x), ("b", Scalar(3.0)), of=of), 0.0, 6.0, of=of)

    def hardsigmoid(self, x):   # min(max(x + 3, 0), 6) * (1/6)
        return self.emit("mul", ("a", self._relu6(x, "hardsigmoid")), ("b", Scalar(E.reciprocal(6.0))),
                         of="hardsigmoid")

    def hardswish(self, x):   # x * min(max(x + 3, 0), 6) * (1/6), in that order
        t = self.emit("mul", ("a", x), ("b", self._relu6(x, "hardswish")), of="hardswish")
        return self.emit("mul", ("a", t), ("b", Scalar(E.reciprocal(6.0))), of="hardswish")


for _op in ("neg", "abs", "exp", "sigmoid", "tanh"):   # one cuDNN mode each, of the op's own name
    setattr(_Lowering, _op, lambda self, x, _op=_op: self.emit(_op, ("input", x), of=_op))


def lower(traced: T.Traced) -> tuple[Step, ...]:
    """The traced epilogue as cuDNN pointwise nodes, after conv_fprop and the conv's bias; Refused naming the op where
    there is none that computes it as PyTorch does."""
    red = traced.reduction
    if red is not None:
        raise Refused(f"{red.kind} over channels (dim=1) is a reduction across the conv's output channels, not a "
                      "pointwise node")
    lo = _Lowering()
    value = {0: Value(0)}     # trace.Ref index -> the Value that holds it
    for i, node in enumerate(traced.nodes, 1):
        operands = [value[a.index] if isinstance(a, T.Ref) else Scalar(E.f32(a.value)) if isinstance(a, T.Const)
                    else a for a in node.args]
        if node.op not in lowered_ops():
            raise Refused(f"cuDNN's graph has no lowering for {node.op}")
        value[i] = getattr(lo, node.op)(*operands, **dict(node.attrs))
    return tuple(lo.steps)


def lowered_ops() -> set:
    """The ops of epilogue.OPS that `lower` writes as cuDNN nodes (the tests hold it to all of them)."""
    return {op for op in E.OPS if hasattr(_Lowering, op)}


def words(steps) -> str:
    """The nodes after conv_fprop and bias, one line: `#i` is step i's output, `v` the conv's with its bias added (as
    the generated code names it)."""
    def arg(a):
        if isinstance(a, Value):
            return "v" if a.index == 0 else f"#{a.index}"
        if isinstance(a, Scalar):
            return f"{a.value:g}"
        return f"{a.name}[c]" if a.kind == "channel" else a.name
    return " → ".join(f"#{i} {s.call}(" + ", ".join([arg(a) for _, a in s.args] + [f"{k}={v:g}" for k, v in s.attrs])
                      + ")" for i, s in enumerate(steps, 1))


def param_tensor(p: T.Param) -> str:
    """The graph tensor a model tensor is bound to (prefixed: the model's own `bias` is not the conv's)."""
    return f"param:{p.name}"


@dataclass
class Declared:
    graph: object           # the cudnn pygraph, not yet validated
    tensors: dict           # graph tensor name -> its cudnn tensor: x, w, conv_bias, param:<path>, const<i>, y
    constants: dict         # const<i> -> its value, a CPU float32 tensor (pass-by-value)


def declare(cudnn, traced: T.Traced, steps, x_shape, handle) -> Declared:
    """The pygraph for one input shape: conv_fprop, bias, then `steps`; the output channels_last. No GPU memory."""
    d, cout = traced.conv.dims, traced.conv.out_channels
    fmt, fp32 = CF._fmt(d), cudnn.data_type.FLOAT
    chan, one = (1, cout) + (1,) * d, [1] * (d + 2)
    g = cudnn.pygraph(io_data_type=fp32, intermediate_data_type=fp32, compute_data_type=fp32, handle=handle)
    tensors, constants = {}, {}

    def tensor(name, shape, memory_format=torch.contiguous_format):   # strides as torch lays the tensor out
        if name not in tensors:
            like = torch.empty(shape, device="meta", memory_format=memory_format)
            tensors[name] = g.tensor(name=name, dim=list(like.shape), stride=list(like.stride()), data_type=fp32)
        return tensors[name]

    def operand(a, values):
        if isinstance(a, Value):
            return values[a.index]
        if isinstance(a, Scalar):   # a pass-by-value scalar, broadcast over the other operand
            name = f"const{len(constants)}"
            tensors[name] = g.tensor(name=name, dim=one, stride=one, data_type=fp32, is_pass_by_value=True)
            constants[name] = torch.full(one, a.value, dtype=torch.float32)
            return tensors[name]
        return tensor(param_tensor(a), chan if a.kind == "channel" else tuple(one))

    w_shape = (cout, traced.conv.in_channels) + (3,) * d
    t = g.conv_fprop(image=tensor("x", x_shape, fmt), weight=tensor("w", w_shape, fmt), padding=[0] * d,
                     stride=[1] * d, dilation=[1] * d, compute_data_type=fp32, name="conv")
    if traced.conv.has_bias:
        t = g.bias(input=t, bias=tensor("conv_bias", chan), name="bias")
    values = [t]
    for i, s in enumerate(steps, 1):
        out = getattr(g, s.call)(**{k: operand(a, values) for k, a in s.args}, **dict(s.attrs),
                                 name=f"{i}_{s.of}_{s.call}")
        if s.call.startswith("cmp_"):   # BINARY_SELECT reads its mask as a boolean
            out.set_data_type(cudnn.data_type.BOOLEAN)
        values.append(out)
    y = torch.empty(TP.output_shape(traced, x_shape), device="meta", memory_format=fmt)
    values[-1].set_output(True).set_data_type(fp32).set_dim(list(y.shape)).set_stride(list(y.stride()))
    tensors["y"] = values[-1]
    return Declared(g, tensors, constants)


# Plans built and timed at a problem's KernelBench shape: the first PLANS that build, in the order cuDNN's heuristics
# rank them (a runtime-fusion plan is an NVRTC compile at build; the study's graphs were offered 15 and 14, nine family
# graphs would be some 120 compiles in one GPU call). On the H100 record (2026-12-07) the fastest of all 15 and 14 was
# the heuristics' first in both study graphs.
PLANS = 4


class FamilyGraph(CF.Plans):
    """One family model's cuDNN graph for one input shape, its plans built (cudnn_fused.Plans): the first PLANS, or
    with every_plan=False the first that builds."""

    def __init__(self, traced: T.Traced, steps, x_shape, device="cuda", every_plan=True):
        cudnn = self.cudnn = CF.frontend()
        self.handle = cudnn.create_handle()
        cudnn.set_stream(self.handle, torch.cuda.current_stream(device).cuda_stream)
        dec = declare(cudnn, traced, steps, tuple(x_shape), self.handle)
        self.graph, self.tensors, self.constants = dec.graph, dec.tensors, dec.constants
        self._build_plans(f"the {traced.model_name} graph", every_plan, device, max_plans=PLANS)

    def __call__(self, operands: dict, plan=None) -> torch.Tensor:
        """`operands`: graph tensor name -> CUDA tensor (Runner.operands); the output is operands["y"]."""
        pack = {self.tensors[k]: v for k, v in operands.items()}
        pack.update({self.tensors[k]: v for k, v in self.constants.items()})
        self.graph.execute_plan_at_index(pack, self.workspace, self.plan if plan is None else plan, self.handle)
        return operands["y"]


class Runner:
    """`model` as cuDNN's fused graph: (x, out=None) -> y, reading the model's parameters at every call (so fresh ones
    copied in count), one graph per input shape; the first PLANS plans built and tuned for the problem's KernelBench
    shape, the first that builds for the others. Refused (before the frontend is imported) where `lower` refuses, Unavailable
    without the frontend."""

    precision = "tf32"   # cuDNN may run the conv on TF32 tensor cores

    def __init__(self, problem, model: torch.nn.Module, traced: T.Traced | None = None):
        self.problem, self.model = problem, model
        self.traced = traced or T.trace(model)
        self.steps = lower(self.traced)
        CF.frontend()
        self.graphs: dict[tuple, FamilyGraph] = {}
        self.errors: dict[tuple, str] = {}
        self._w = (None, None)

    def graph(self, x_shape) -> FamilyGraph:
        key = tuple(x_shape)
        if key not in self.graphs:
            self.graphs[key] = FamilyGraph(self.traced, self.steps, key,
                                           every_plan=key == tuple(self.problem.input_shape))
        return self.graphs[key]

    def _weight(self, w):   # converted once per parameter version, as a channels_last model holds it
        tag = (w.data_ptr(), w._version)
        if self._w[0] != tag:
            self._w = (tag, CF.to_channels_last(w.detach()))
        return self._w[1]

    def operands(self, x) -> dict:
        """Every tensor the graph reads and writes, by graph tensor name: x channels_last, the weight, the conv's
        bias and the model's tensors, y (allocated channels_last)."""
        conv = self.model.get_submodule(self.traced.conv.path)
        d = self.traced.conv.dims
        chan, one = (1, self.traced.conv.out_channels) + (1,) * d, (1,) * (d + 2)
        ops = {"x": CF.to_channels_last(x), "w": self._weight(conv.weight),
               "y": torch.empty(TP.output_shape(self.traced, x.shape), device=x.device, memory_format=CF._fmt(d))}
        if conv.bias is not None:
            ops["conv_bias"] = conv.bias.detach().reshape(chan)
        for p in self.traced.params:
            t = T._getattr_path(self.model, p.name).detach()
            ops[param_tensor(p)] = t.reshape(chan if p.kind == "channel" else one).contiguous()
        return ops

    def __call__(self, x, out=None):
        try:
            y = self.graph(x.shape)(self.operands(x))
        except Exception as e:   # e.g. a shape cuDNN plans no kernel for: `out` stays poisoned, the check fails
            self.errors[tuple(x.shape)] = str(e) if isinstance(e, CF.Unavailable) else CF.one_line(e)
            if out is None:
                raise
            return out
        return y if out is None else out.copy_(y)

    def info(self) -> dict:
        g = self.graphs.get(tuple(self.problem.input_shape))
        return {} if g is None else g.info()
