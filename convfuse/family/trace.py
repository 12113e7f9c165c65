"""The tracer: from a model's own forward (torch.fx), the conv and the dataflow graph of elementwise ops after it.

A model of the family computes `y = f(conv(x))`: one nn.Conv2d / nn.Conv3d (k=3, stride 1, no padding, dilation 1,
groups 1) as the first op on the model's one input, then ops that act elementwise on its output, with Python scalars
and per-channel tensors of the model (shape (C,1,1) / (C,1,1,1), or one element), and at most one reduction over the
channel axis (min/max/sum/mean, keepdim or not), after which only elementwise ops on scalars follow.

Each op is read in every form a model may write it -- a module (`nn.ReLU()`), a function (`F.relu`, `torch.relu`),
a tensor method (`x.relu()`), an operator (`x * 2`, `2 - x`) -- and normalised to one of the op names of the
generator's table (epilogue.OPS), with its constants bound by PyTorch's own signature (defaults included). A hand-
written form (`x * torch.sigmoid(x)`, `x * F.relu6(x + 3) / 6`) is just its ops: the graph is a DAG, not a chain.
Anything else raises UnsupportedModel naming the op and, where fx recorded it, the line of the model's source.
"""
from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass, field

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F


class UnsupportedModel(ValueError):
    """The model is outside the family: the message names why (the op, the argument, the line)."""


# --- the IR -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    index: int          # 0: the conv's output (bias added); i: the value of Traced.nodes[i - 1]


@dataclass(frozen=True)
class Const:
    value: float        # a Python scalar of the model, as a double (the generator rounds it to FP32)


@dataclass(frozen=True)
class Param:
    name: str           # attribute path in the model (a parameter, buffer or tensor attribute)
    kind: str           # "channel": one value per output channel; "scalar": one value
    slot: int           # its index in the kernel's parameter pointers


@dataclass(frozen=True)
class Op:
    op: str             # a key of epilogue.OPS
    args: tuple         # Ref | Const | Param
    attrs: tuple = ()   # (name, value) pairs: the op's constant arguments
    where: str = ""


@dataclass(frozen=True)
class Reduction:
    kind: str           # "min" | "max" | "sum" | "mean" over the channel axis
    keepdim: bool
    arg: Ref
    where: str = ""


@dataclass(frozen=True)
class ConvSpec:
    path: str           # the module's attribute path
    dims: int
    in_channels: int
    out_channels: int
    has_bias: bool


@dataclass
class Traced:
    model_name: str
    conv: ConvSpec
    nodes: list = field(default_factory=list)     # Op | Reduction, in dataflow order; the last is the result
    params: list = field(default_factory=list)    # Param, by slot

    @property
    def reduction(self) -> Reduction | None:
        return next((n for n in self.nodes if isinstance(n, Reduction)), None)

    def summary(self) -> str:
        parts = [f"Conv{self.conv.dims}d({self.conv.in_channels}->{self.conv.out_channels})"]
        for n in self.nodes:
            if isinstance(n, Reduction):
                parts.append(f"{n.kind}(dim=1{', keepdim' if n.keepdim else ''})")
            else:
                parts.append(n.op + (f"({', '.join(f'{k}={v}' for k, v in n.attrs)})" if n.attrs else ""))
        return " -> ".join(parts)


# --- the forms of each op ---------------------------------------------------------------------------------------
# A canonical signature per op family: parameter names with defaults, as PyTorch's functions declare them. Every form
# (function, method, operator) binds its call against one of these, so keyword and positional spellings agree.
_REQ = inspect.Parameter.empty


def _sig(*params) -> inspect.Signature:
    out = []
    for p in params:
        name, default = (p, _REQ) if isinstance(p, str) else p
        out.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    return inspect.Signature(out)


_INPLACE = ("inplace", False)
SIGNATURES = {
    "add": _sig("input", "other", ("alpha", 1)),
    "sub": _sig("input", "other", ("alpha", 1)),
    "rsub": _sig("input", "other", ("alpha", 1)),     # other - alpha * input
    "mul": _sig("input", "other"),
    "div": _sig("input", "other", ("rounding_mode", None)),
    "rdiv": _sig("input", "other"),                    # other / input: Tensor.__rtruediv__, reciprocal(input) * other
    "neg": _sig("input"), "abs": _sig("input"), "exp": _sig("input"),
    "sigmoid": _sig("input"), "tanh": _sig("input"),
    "relu": _sig("input", _INPLACE), "silu": _sig("input", _INPLACE), "mish": _sig("input", _INPLACE),
    "hardswish": _sig("input", _INPLACE), "hardsigmoid": _sig("input", _INPLACE),
    "relu6": _sig("input", _INPLACE),
    "leaky_relu": _sig("input", ("negative_slope", 0.01), _INPLACE),
    "gelu": _sig("input", ("approximate", "none")),
    "softplus": _sig("input", ("beta", 1.0), ("threshold", 20.0)),
    "hardtanh": _sig("input", ("min_val", -1.0), ("max_val", 1.0), _INPLACE),
    "clamp": _sig("input", ("min", None), ("max", None)),
    "clamp_min": _sig("input", "min"), "clamp_max": _sig("input", "max"),
    "minimum": _sig("input", "other"), "maximum": _sig("input", "other"),
    # torch.min/max: (input) a full reduction, (input, other) elementwise, (input, dim, keepdim) over a dim
    "min": _sig("input", ("dim", None), ("keepdim", False), ("other", None)),
    "max": _sig("input", ("dim", None), ("keepdim", False), ("other", None)),
    "amin": _sig("input", ("dim", ()), ("keepdim", False)),
    "amax": _sig("input", ("dim", ()), ("keepdim", False)),
    "sum": _sig("input", ("dim", None), ("keepdim", False), ("dtype", None)),
    "mean": _sig("input", ("dim", None), ("keepdim", False), ("dtype", None)),
}

_FUNCTIONS = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "div", operator.neg: "neg",
    operator.iadd: "add", operator.isub: "sub", operator.imul: "mul", operator.itruediv: "div",
    torch.add: "add", torch.sub: "sub", torch.subtract: "sub", torch.mul: "mul", torch.multiply: "mul",
    torch.div: "div", torch.divide: "div", torch.true_divide: "div", torch.rsub: "rsub",
    torch.neg: "neg", torch.negative: "neg", torch.abs: "abs", torch.exp: "exp",
    torch.sigmoid: "sigmoid", F.sigmoid: "sigmoid", torch.special.expit: "sigmoid",
    torch.tanh: "tanh", F.tanh: "tanh",
    torch.relu: "relu", F.relu: "relu", torch.relu_: "relu", F.relu_: "relu",
    F.silu: "silu", F.mish: "mish", F.hardswish: "hardswish", F.hardsigmoid: "hardsigmoid", F.relu6: "relu6",
    F.leaky_relu: "leaky_relu", F.leaky_relu_: "leaky_relu", F.gelu: "gelu", F.softplus: "softplus",
    F.hardtanh: "hardtanh", F.hardtanh_: "hardtanh",
    torch.clamp: "clamp", torch.clip: "clamp", torch.clamp_min: "clamp_min", torch.clamp_max: "clamp_max",
    torch.minimum: "minimum", torch.maximum: "maximum", torch.min: "min", torch.max: "max",
    torch.amin: "amin", torch.amax: "amax", torch.sum: "sum", torch.mean: "mean",
}
# the functions whose `inplace` flag may come positionally (the only bool argument of each)
_INPLACE_FLAGGED = {n for n, sig in SIGNATURES.items() if "inplace" in sig.parameters}
_METHODS = {m: m for m in ("add", "sub", "mul", "div", "neg", "abs", "exp", "sigmoid", "tanh", "relu", "clamp",
                           "clamp_min", "clamp_max", "minimum", "maximum", "min", "max", "amin", "amax", "sum",
                           "mean")}
_METHODS.update(subtract="sub", multiply="mul", divide="div", true_divide="div", negative="neg", clip="clamp")

# Modules: the op, and the constants the module holds (read from the instance, so a model's settings count).
_MODULES = {
    nn.ReLU: ("relu", lambda m: {}),
    nn.ReLU6: ("clamp", lambda m: {"min": 0.0, "max": 6.0}),
    nn.Hardtanh: ("clamp", lambda m: {"min": m.min_val, "max": m.max_val}),
    nn.LeakyReLU: ("leaky_relu", lambda m: {"negative_slope": m.negative_slope}),
    nn.GELU: ("gelu", lambda m: {"approximate": m.approximate}),
    nn.Sigmoid: ("sigmoid", lambda m: {}),
    nn.Tanh: ("tanh", lambda m: {}),
    nn.SiLU: ("silu", lambda m: {}),
    nn.Mish: ("mish", lambda m: {}),
    nn.Softplus: ("softplus", lambda m: {"beta": m.beta, "threshold": m.threshold}),
    nn.Hardswish: ("hardswish", lambda m: {}),
    nn.Hardsigmoid: ("hardsigmoid", lambda m: {}),
    nn.Identity: ("identity", lambda m: {}),
}
_DROPOUTS = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout)


def _where(node: fx.Node) -> str:
    """'forward, line 12: x = torch.foo(x)' from fx's recorded stack, the innermost frame outside torch."""
    trace = node.stack_trace or ""
    lines = trace.strip().splitlines()
    for i in range(len(lines) - 1, -1, -1):
        ln = lines[i].strip()
        if ln.startswith("File ") and "/torch/" not in ln:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            try:
                fname = ln.split('"')[1].rsplit("/", 1)[-1]
                lineno = ln.split("line ", 1)[1].split(",")[0]
            except IndexError:
                return code
            return f"{fname}:{lineno}: {code}"
    return ""


def _fail(node: fx.Node | None, msg: str):
    at = _where(node) if node is not None else ""
    raise UnsupportedModel(msg + (f" (at {at})" if at else ""))


def _describe(node: fx.Node, model: nn.Module) -> str:
    if node.op == "call_module":
        return f"module {node.target!r} ({type(model.get_submodule(node.target)).__name__})"
    if node.op == "call_method":
        return f"tensor method .{node.target}()"
    t = node.target
    return f"function {getattr(t, '__module__', '') or ''}.{getattr(t, '__name__', repr(t))}".replace("_operator.", "operator.")


# --- tracing ----------------------------------------------------------------------------------------------------
def _check_conv(path: str, m: nn.Module, node: fx.Node) -> ConvSpec:
    dims = 2 if type(m) is nn.Conv2d else 3
    bad = []
    if tuple(m.kernel_size) != (3,) * dims:
        bad.append(f"kernel_size={tuple(m.kernel_size)} (the template takes 3)")
    if tuple(m.stride) != (1,) * dims:
        bad.append(f"stride={tuple(m.stride)} (the template takes 1)")
    if m.padding not in ("valid", (0,) * dims):
        bad.append(f"padding={m.padding!r} (the template takes 0)")
    if tuple(m.dilation) != (1,) * dims:
        bad.append(f"dilation={tuple(m.dilation)} (the template takes 1)")
    if m.groups != 1:
        bad.append(f"groups={m.groups} (the template takes 1)")
    if bad:
        _fail(node, f"conv {path!r} ({type(m).__name__}) is outside the family: " + "; ".join(bad))
    return ConvSpec(path, dims, m.in_channels, m.out_channels, m.bias is not None)


class _Builder:
    def __init__(self, model: nn.Module, graph: fx.Graph, name: str, made_in_forward=frozenset()):
        self.model, self.graph = model, graph
        self.made_in_forward = made_in_forward
        self.traced = None
        self.value = {}      # fx node -> Ref | Const | Param, or ("minmax_pair", Ref) for torch.min(x, dim)'s tuple
        self.name = name

    def run(self) -> Traced:
        nodes = list(self.graph.nodes)
        inputs = [n for n in nodes if n.op == "placeholder"]
        if len(inputs) != 1:
            raise UnsupportedModel(f"{self.name}.forward takes {len(inputs)} inputs; the family takes one tensor")
        x = inputs[0]
        users = list(x.users)
        conv_node = users[0] if len(users) == 1 else None
        if conv_node is None:
            raise UnsupportedModel(f"{self.name}: the input is used {len(users)} times; the family's input feeds "
                                   "only its conv")
        m = self.model.get_submodule(conv_node.target) if conv_node.op == "call_module" else None
        if type(m) not in (nn.Conv2d, nn.Conv3d):
            _fail(conv_node, f"{self.name}: the first op on the input is {_describe(conv_node, self.model)}, "
                             "not an nn.Conv2d or nn.Conv3d module")
        if len(conv_node.args) != 1 or conv_node.kwargs:
            _fail(conv_node, f"{self.name}: the conv takes more than the input")
        self.traced = Traced(self.name, _check_conv(conv_node.target, m, conv_node))
        self.rank = self.traced.conv.dims + 2
        self.value[conv_node] = Ref(0)
        self._check_inplace(nodes)
        live = self._live(nodes)
        out = None
        for n in nodes:
            if n in (x, conv_node) or n not in live:
                continue
            if n.op == "output":
                out = n
                break
            self.value[n] = self._node(n)
        res = out.args[0]
        if not isinstance(res, fx.Node) or not isinstance(self.value.get(res), Ref):
            _fail(out, f"{self.name}: forward must return one tensor computed from the conv, not {res!r}")
        if res is conv_node:
            raise UnsupportedModel(f"{self.name}: no op follows the conv; there is no epilogue to fuse")
        if self.value[res].index != len(self.traced.nodes):   # the result is an earlier value: repeat it as the last
            self._emit(Op("mul", (self.value[res], Const(1.0)), where="(result)"))
        return self.traced

    def _live(self, nodes) -> set:
        """Nodes the output depends on: dead code (an unused op) is no part of the epilogue."""
        live, stack = set(), [nodes[-1]]
        while stack:
            n = stack.pop()
            if n in live:
                continue
            live.add(n)
            stack.extend(n.all_input_nodes)
        return live

    def _check_inplace(self, nodes):
        # An in-place op mutates its input; fx records a new node but code may go on reading the old name. Out-of-place
        # semantics hold only when nothing else reads the mutated input.
        for n in nodes:
            positional = n.op == "call_function" and _FUNCTIONS.get(n.target) in _INPLACE_FLAGGED and \
                any(a is True for a in n.args[1:])      # F.relu(x, True), F.leaky_relu(x, 0.2, True)
            inplace = positional or (n.op == "call_method" and str(n.target).endswith("_")) or \
                n.kwargs.get("inplace") is True or \
                      (n.op == "call_function" and n.target in (torch.relu_, F.relu_, F.leaky_relu_, F.hardtanh_,
                                                                operator.iadd, operator.isub, operator.imul,
                                                                operator.itruediv)) or \
                      (n.op == "call_module" and getattr(self.model.get_submodule(n.target), "inplace", False))
            if inplace and n.args and isinstance(n.args[0], fx.Node) and len(n.args[0].users) > 1:
                _fail(n, f"{self.name}: in-place {_describe(n, self.model)} changes a value that is read elsewhere; "
                         "write it out of place")

    def _emit(self, node) -> Ref:
        self.traced.nodes.append(node)
        return Ref(len(self.traced.nodes))

    def _param(self, node: fx.Node) -> Param | Const:
        try:
            t = self.model.get_parameter(node.target)
        except AttributeError:
            try:
                t = self.model.get_buffer(node.target)
            except AttributeError:
                t = _getattr_path(self.model, node.target)     # a plain tensor attribute
        if not isinstance(t, torch.Tensor):
            _fail(node, f"{self.name}: attribute {node.target!r} is a {type(t).__name__}, not a tensor")
        if node.target in self.made_in_forward:
            # a tensor forward builds (torch.ones(1) * 2): fx keeps its value; one element is a constant, a tensor of
            # several would not follow the model to the GPU (no parameter or buffer)
            if t.numel() == 1:
                return Const(float(t.reshape(())))
            _fail(node, f"{self.name}: a tensor of shape {tuple(t.shape)} made in forward; hold it as a parameter "
                        "or buffer of the model")
        c = self.traced.conv.out_channels
        shape = tuple(t.shape)
        if len(shape) > self.rank:
            _fail(node, f"{self.name}: tensor {node.target!r} of shape {shape} has more dims than the output")
        if t.numel() == 1:
            kind = "scalar"
        else:
            aligned = (1,) * (self.rank - len(shape)) + shape     # broadcasting aligns on the right
            if aligned[1] != c or any(s != 1 for i, s in enumerate(aligned) if i != 1):
                want = "(C, 1, 1)" if self.rank == 4 else "(C, 1, 1, 1)"
                _fail(node, f"{self.name}: tensor {node.target!r} of shape {shape} is neither per-channel {want} with "
                            f"C = {c} nor one value: it broadcasts along another axis of the conv's output")
            kind = "channel"
        for p in self.traced.params:
            if p.name == node.target:
                return p
        p = Param(node.target, kind, len(self.traced.params))
        self.traced.params.append(p)
        return p

    def _operand(self, a, node, op):
        if isinstance(a, fx.Node):
            v = self.value.get(a)
            if v is None:
                _fail(node, f"{self.name}: {op} reads {a.name}, which is not computed from the conv")
            if isinstance(v, tuple):
                _fail(node, f"{self.name}: {op} reads the (values, indices) pair of a min/max; take [0] or .values")
            return v
        if isinstance(a, bool) or not isinstance(a, (int, float)):
            _fail(node, f"{self.name}: {op} takes {a!r} ({type(a).__name__}); the family takes Python numbers, "
                        "per-channel tensors and values computed from the conv")
        return Const(float(a))

    def _bind(self, canon: str, node: fx.Node, args, kwargs) -> dict:
        try:
            b = SIGNATURES[canon].bind(*args, **kwargs)
        except TypeError as e:
            _fail(node, f"{self.name}: {_describe(node, self.model)}: {e}")
        b.apply_defaults()
        return dict(b.arguments)

    def _node(self, n: fx.Node):
        if n.op == "get_attr":
            return self._param(n)
        if n.op == "call_module":
            m = self.model.get_submodule(n.target)
            if isinstance(m, _DROPOUTS):
                if m.training:
                    _fail(n, f"{self.name}: {_describe(n, self.model)} in training mode is random; call .eval() "
                             "first (inference-only: dropout is then the identity)")
                return self._operand(n.args[0], n, "dropout")
            if type(m) not in _MODULES:
                _fail(n, f"{self.name}: unsupported {_describe(n, self.model)}; the family's ops are "
                         f"{', '.join(sorted(set(v[0] for v in _MODULES.values())))} as modules")
            canon, attrs = _MODULES[type(m)]
            if len(n.args) != 1 or n.kwargs:
                _fail(n, f"{self.name}: {_describe(n, self.model)} takes one tensor")
            src = self._operand(n.args[0], n, canon)
            if canon == "identity":
                return src
            return self._lower(canon, n, dict(input=src, **attrs(m)))
        if n.op == "call_method":
            canon = _METHODS.get(n.target.rstrip("_") if n.target.endswith("_") else n.target)
            if canon is None:
                _fail(n, f"{self.name}: unsupported {_describe(n, self.model)}")
            return self._lower_call(canon, n)
        if n.op == "call_function":
            if n.target in (operator.getitem, getattr):
                return self._select(n)
            canon = _FUNCTIONS.get(n.target)
            if canon is None:
                _fail(n, f"{self.name}: unsupported {_describe(n, self.model)}")
            if n.target in (operator.sub, operator.truediv) and not isinstance(n.args[0], fx.Node):
                canon = {"sub": "rsub", "div": "rdiv"}[canon]     # 3 - x, 2 / x: Tensor.__rsub__, __rtruediv__
                return self._lower_call(canon, n, args=(n.args[1], n.args[0]))
            return self._lower_call(canon, n)
        _fail(n, f"{self.name}: unsupported graph node {n.op} {n.target}")

    def _lower_call(self, canon, n, args=None):
        bound = self._bind(canon, n, n.args if args is None else args, n.kwargs)
        for k in ("input", "other"):
            if k in bound and bound[k] is not None:
                bound[k] = self._operand(bound[k], n, canon)
        return self._lower(canon, n, bound)

    def _select(self, n):
        src, key = n.args
        v = self.value.get(src)
        if not isinstance(v, tuple):
            _fail(n, f"{self.name}: indexing or attribute {key!r} of a tensor is not elementwise")
        if key in (0, "values"):
            return v[1]
        _fail(n, f"{self.name}: {key!r} of a min/max over channels is its indices; the family returns values")

    def _scalar(self, n, canon, name, v):
        if v is None or isinstance(v, (int, float)) and not isinstance(v, bool):
            return None if v is None else float(v)
        _fail(n, f"{self.name}: {canon}'s {name}={v!r}: the family takes a Python number here")

    def _lower(self, canon: str, n: fx.Node, b: dict):
        """One canonical call as ops of epilogue.OPS (some forms are two: a - alpha * b)."""
        where = _where(n)
        x = b["input"]
        if not isinstance(x, Ref) and canon not in ("add", "mul", "sub", "rsub", "div", "rdiv", "minimum",
                                                    "maximum"):
            _fail(n, f"{self.name}: {canon} of a constant is not computed from the conv")

        def op(name, *args, **attrs):
            refs = [a for a in args if isinstance(a, Ref)]
            if self.traced.reduction is not None:
                red_at = self.traced.nodes.index(self.traced.reduction) + 1
                if any(r.index < red_at for r in refs):
                    _fail(n, f"{self.name}: {name} combines a value from before the reduction over channels with "
                             "one after it")
                if any(isinstance(a, Param) and a.kind == "channel" for a in args):
                    _fail(n, f"{self.name}: a per-channel tensor after the reduction over channels would "
                             "broadcast the result back over the channels")
            if not refs and not any(isinstance(a, Param) for a in args):   # fx folds Python arithmetic itself
                _fail(n, f"{self.name}: {name} of constants only is not computed from the conv")
            return self._emit(Op(name, tuple(args), tuple(sorted(attrs.items())), where))

        if canon in ("add", "sub", "rsub"):
            # AddFunctor: a + alpha * b, alpha * b rounded first; rsub(x, other, alpha) = other - alpha * x
            alpha = self._scalar(n, canon, "alpha", b["alpha"])
            a, other = (b["other"], x) if canon == "rsub" else (x, b["other"])
            if alpha != 1.0:
                other = Const(f32_product(other.value, alpha)) if isinstance(other, Const) else \
                    op("mul", other, Const(alpha))
            return op("add" if canon == "add" else "sub", a, other)
        if canon in ("mul", "minimum", "maximum"):
            return op(canon, x, b["other"])
        if canon == "div":
            if b["rounding_mode"] is not None:
                _fail(n, f"{self.name}: div with rounding_mode={b['rounding_mode']!r} is not elementwise FP32 "
                         "arithmetic the family takes")
            return op("div", x, b["other"])
        if canon == "rdiv":
            return op("div", b["other"], x)
        if canon in ("neg", "abs", "exp", "sigmoid", "tanh", "relu", "silu", "mish", "hardswish", "hardsigmoid"):
            return op(canon, x)
        if canon == "relu6":
            return op("clamp", x, min=0.0, max=6.0)
        if canon == "leaky_relu":
            return op("leaky_relu", x, negative_slope=self._scalar(n, canon, "negative_slope", b["negative_slope"]))
        if canon == "gelu":
            if b["approximate"] not in ("none", "tanh"):
                _fail(n, f"{self.name}: gelu approximate={b['approximate']!r}")
            return op("gelu", x, approximate=b["approximate"])
        if canon == "softplus":
            return op("softplus", x, beta=self._scalar(n, canon, "beta", b["beta"]),
                      threshold=self._scalar(n, canon, "threshold", b["threshold"]))
        if canon in ("hardtanh", "clamp", "clamp_min", "clamp_max"):
            lo, hi = {"hardtanh": ("min_val", "max_val"), "clamp": ("min", "max"), "clamp_min": ("min", None),
                      "clamp_max": (None, "max")}[canon]
            lo = self._scalar(n, canon, lo, b[lo]) if lo else None
            hi = self._scalar(n, canon, hi, b[hi]) if hi else None
            if lo is None and hi is None:
                _fail(n, f"{self.name}: clamp with neither min nor max")
            attrs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
            return op("clamp", x, **attrs)
        if canon in ("min", "max"):
            if b["other"] is not None or (isinstance(b["dim"], fx.Node)):
                other = self._operand(b["other"] if b["other"] is not None else b["dim"], n, canon)
                return op("minimum" if canon == "min" else "maximum", x, other)
            if b["dim"] is None:
                _fail(n, f"{self.name}: torch.{canon} over all elements is not over the channel axis")
            ref = self._reduce(n, canon, x, b["dim"], b["keepdim"])
            return ("minmax_pair", ref)      # torch.min(x, dim) returns (values, indices)
        if canon in ("amin", "amax", "sum", "mean"):
            if canon in ("sum", "mean") and b["dtype"] not in (None, torch.float32):
                _fail(n, f"{self.name}: {canon} with dtype={b['dtype']}")
            return self._reduce(n, {"amin": "min", "amax": "max"}.get(canon, canon), x, b["dim"], b["keepdim"])
        raise AssertionError(canon)

    def _reduce(self, n, kind, x, dim, keepdim) -> Ref:
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        if len(dims) != 1 or not isinstance(dims[0], int) or dims[0] % self.rank != 1:
            _fail(n, f"{self.name}: {kind} over dim={dim!r}; the family reduces over the channel axis only (dim=1)")
        if self.traced.reduction is not None:
            _fail(n, f"{self.name}: a second reduction over channels; the family takes one")
        if not isinstance(keepdim, bool):
            _fail(n, f"{self.name}: keepdim={keepdim!r}")
        return self._emit(Reduction(kind, keepdim, x, _where(n)))


def f32_product(a: float, b: float) -> float:
    """alpha * b of two scalars as the CUDA kernel forms it: both FP32, the product rounded to FP32."""
    import numpy as np
    return float(np.float32(a) * np.float32(b))


def _getattr_path(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def trace(model: nn.Module) -> Traced:
    """The conv and the epilogue graph of `model`, or UnsupportedModel naming why it is outside the family."""
    name = type(model).__name__
    tracer = fx.Tracer()
    tracer.record_stack_traces = True     # so an error can name the model's line
    before = set(vars(model))
    try:
        graph = tracer.trace(model)
    except Exception as e:   # data-dependent control flow, unsupported Python: fx's own message says which
        raise UnsupportedModel(f"{name}: torch.fx cannot trace forward ({type(e).__name__}: {e})") from e
    # fx stores tensors that forward creates as attributes of the model (_tensor_constant0, ...): read them, then
    # take them off again, so tracing leaves the caller's model as it was
    made = {k: v for k, v in vars(model).items() if k not in before and k.startswith("_tensor_constant")}
    try:
        return _Builder(model, graph, name, frozenset(made)).run()
    finally:
        for k in made:
            delattr(model, k)
