"""The epilogue generator: each traced op (convfuse/family/trace.py) as a CUDA expression with PyTorch's FP32 semantics.

Every op's formula is written once, below (OPS), in a small expression language (`Ex`) that renders to CUDA source and
evaluates on torch CPU float32 tensors op for op: the same `expf`, `log1pf`, `tanhf`, `erff`, the same order of
operations, the same selects. The CUDA the kernels compile and the CPU evaluation the tests compare against torch are
so two readings of one formula (tests/test_family_epilogue.py): a semantic slip in a row fails on the CPU.

The formulas are PyTorch's CUDA kernels' (ATen/native/cuda, 2.x), not its CPU ones, where the two differ:
- a tensor divided by a Python scalar is a multiply by the FP32 reciprocal (BinaryDivTrueKernel.cu: "compute
  a * reciprocal(b)"); a scalar divided by a tensor is `reciprocal(x) * c` (Tensor.__rtruediv__);
- hardswish multiplies by FP32 1/6 (ActivationHardswishKernel.cu), where the CPU kernel divides by 6;
- min/max/clamp/relu propagate NaN (clamp's `_isnan(v) ? v : ...`, maximum's `a != a ? a : ...`), where fminf/fmaxf
  alone would drop it.
Scalars are FP32 (PyTorch's opmath for float tensors), rounded from the Python double once, here.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import torch

from ..registry import KERNELS
from . import trace as T

# tensors an epilogue may read: the kernels' Params block holds this many pointers (kernels/family/family_args.h)
MAX_PARAMS = int(re.search(r"kMaxParams = (\d+);", (KERNELS / "family" / "family_args.h").read_text()).group(1))


# --- the expression language --------------------------------------------------------------------------------
def f32(x: float) -> float:
    """`x` rounded to FP32, as PyTorch's CUDA kernels take a Python scalar (opmath_t = float)."""
    return float(np.float32(x))


@dataclass(frozen=True)
class Ex:
    kind: str          # var | const | bin | neg | call | cmp | sel | isnan | or
    args: tuple = ()
    name: str = ""     # var name, binary/compare operator, or function name

    def __add__(self, o): return Ex("bin", (self, _ex(o)), "+")
    def __radd__(self, o): return Ex("bin", (_ex(o), self), "+")
    def __sub__(self, o): return Ex("bin", (self, _ex(o)), "-")
    def __rsub__(self, o): return Ex("bin", (_ex(o), self), "-")
    def __mul__(self, o): return Ex("bin", (self, _ex(o)), "*")
    def __rmul__(self, o): return Ex("bin", (_ex(o), self), "*")
    def __truediv__(self, o): return Ex("bin", (self, _ex(o)), "/")
    def __rtruediv__(self, o): return Ex("bin", (_ex(o), self), "/")
    def __neg__(self): return Ex("neg", (self,))
    def gt(self, o): return Ex("cmp", (self, _ex(o)), ">")
    def lt(self, o): return Ex("cmp", (self, _ex(o)), "<")
    def __or__(self, o): return Ex("or", (self, o))


def const(v: float) -> Ex:
    return Ex("const", (f32(v),))


def var(name: str) -> Ex:
    return Ex("var", (), name)


def _ex(o) -> Ex:
    return o if isinstance(o, Ex) else const(o)


def call(fn: str, *args) -> Ex:
    assert fn in LIBM, fn
    return Ex("call", tuple(map(_ex, args)), fn)


def sel(cond: Ex, a, b) -> Ex:
    return Ex("sel", (cond, _ex(a), _ex(b)))


def isnan(a: Ex) -> Ex:
    return Ex("isnan", (a,))


# CUDA's FP32 math library, and the torch CPU function each is evaluated with (both IEEE FP32; the libm ones agree to
# a few ulp, which is what the tests allow them).
LIBM = {"expf": torch.exp, "log1pf": torch.log1p, "tanhf": torch.tanh, "erff": torch.erf, "fabsf": torch.abs,
        "fmaxf": torch.fmax, "fminf": torch.fmin}


def cuda_float(v: float) -> str:
    """An FP32 literal that nvcc reads back to the same float."""
    if math.isnan(v):
        return "__int_as_float(0x7fffffff)"
    if math.isinf(v):
        return "__int_as_float(0x7f800000)" if v > 0 else "__int_as_float(0xff800000)"
    return f"{v:.9g}f" if ("e" in f"{v:.9g}" or "." in f"{v:.9g}") else f"{v:.9g}.0f"


def render(e: Ex) -> str:
    k = e.kind
    if k == "var":
        return e.name
    if k == "const":
        return cuda_float(e.args[0])
    if k in ("bin", "cmp"):
        return f"({render(e.args[0])} {e.name} {render(e.args[1])})"
    if k == "neg":
        return f"(-{render(e.args[0])})"
    if k == "call":
        return f"{e.name}({', '.join(map(render, e.args))})"
    if k == "sel":
        return f"({render(e.args[0])} ? {render(e.args[1])} : {render(e.args[2])})"
    if k == "isnan":
        return f"isnan({render(e.args[0])})"
    if k == "or":
        return f"({render(e.args[0])} || {render(e.args[1])})"
    raise AssertionError(k)


def evaluate(e: Ex, env: dict) -> torch.Tensor:
    """The expression on torch CPU float32 tensors, operation for operation as the CUDA text computes it."""
    k = e.kind
    if k == "var":
        return env[e.name]
    if k == "const":
        return torch.tensor(e.args[0], dtype=torch.float32)
    a = [evaluate(x, env) for x in e.args]
    if k == "bin":
        return {"+": torch.add, "-": torch.sub, "*": torch.mul, "/": torch.div}[e.name](a[0], a[1])
    if k == "cmp":
        return a[0] > a[1] if e.name == ">" else a[0] < a[1]
    if k == "neg":
        return -a[0]
    if k == "call":
        return LIBM[e.name](*a)
    if k == "sel":
        return torch.where(a[0], a[1], a[2])
    if k == "isnan":
        return torch.isnan(a[0])
    if k == "or":
        return a[0] | a[1]
    raise AssertionError(k)


# --- the table: op -> FP32 expression, PyTorch's CUDA formula -----------------------------------------------
def _std_max(a, b):   # std::max(a, b) = (a < b) ? b : a: a NaN first operand survives (hardswish, hardsigmoid)
    return sel(a.lt(b), b, a)


def _std_min(a, b):   # std::min(a, b) = (b < a) ? b : a
    return sel(_ex(b).lt(a), b, a)


def _nan_max(a, b):   # at::maximum / clamp: NaN in either operand gives NaN
    return sel(isnan(a), a, sel(isnan(b), b, call("fmaxf", a, b)))


def _nan_min(a, b):
    return sel(isnan(a), a, sel(isnan(b), b, call("fminf", a, b)))


def _clamp(x, min=None, max=None):   # clamp_kernel_cuda: _isnan(v) ? v : min(max(v, lo), hi)
    lo, hi, y = min, max, x
    if lo is not None:
        y = call("fmaxf", y, lo)
    if hi is not None:
        y = call("fminf", y, hi)
    return sel(isnan(x), x, y)


def reciprocal(c: float) -> float:
    """The FP32 1 / c a tensor divided by the Python scalar c is multiplied by (BinaryDivTrueKernel.cu); for c = 0,
    the infinity of c's sign."""
    return f32(f32(1.0) / f32(c)) if c != 0 else math.copysign(math.inf, c)


def _div(a, b):
    # tensor / CPU scalar: a * (1 / b) in FP32 (BinaryDivTrueKernel.cu); scalar / tensor: reciprocal(b) * a
    # (Tensor.__rtruediv__); tensor / tensor: a / b
    if b.kind == "const":
        return a * const(reciprocal(b.args[0]))
    if a.kind == "const":
        return (const(1.0) / b) * a
    return a / b


_SQRT1_2 = 0.70710678118654752440
_GELU_TANH_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5    # M_SQRT2 * M_2_SQRTPI * 0.5


def _gelu(x, approximate="none"):
    if approximate == "tanh":   # ActivationGeluKernel.cu: 0.5 x (1 + tanh(beta (x + kappa x^3)))
        inner = const(_GELU_TANH_BETA) * (x + const(0.044715) * (x * x * x))
        return (const(0.5) * x) * (const(1.0) + call("tanhf", inner))
    return (x * const(0.5)) * (const(1.0) + call("erff", x * const(_SQRT1_2)))


def _softplus(x, beta=1.0, threshold=20.0):   # (x beta) > threshold ? x : log1p(exp(x beta)) / beta
    xb = x * const(beta)
    return sel(xb.gt(const(threshold)), x, call("log1pf", call("expf", xb)) / const(beta))


# name -> (arity, formula(operands..., **attrs)). trace.py produces only these names; one row, one formula.
OPS = {
    "add": (2, lambda a, b: a + b),
    "sub": (2, lambda a, b: a - b),
    "mul": (2, lambda a, b: a * b),
    "div": (2, _div),
    "neg": (1, lambda a: -a),
    "abs": (1, lambda a: call("fabsf", a)),
    "exp": (1, lambda a: call("expf", a)),
    "minimum": (2, _nan_min),
    "maximum": (2, _nan_max),
    "clamp": (1, _clamp),
    "relu": (1, lambda a: _clamp(a, min=0.0)),                       # at::relu is clamp_min(x, 0)
    "leaky_relu": (1, lambda a, negative_slope=0.01: sel(a.gt(0.0), a, a * const(negative_slope))),
    "gelu": (1, _gelu),
    "sigmoid": (1, lambda a: const(1.0) / (const(1.0) + call("expf", -a))),
    "tanh": (1, lambda a: call("tanhf", a)),
    "silu": (1, lambda a: a / (const(1.0) + call("expf", -a))),
    "softplus": (1, _softplus),
    "mish": (1, lambda a: a * call("tanhf", call("log1pf", call("expf", a)))),
    "hardswish": (1, lambda a: a * _std_min(_std_max(a + const(3.0), 0.0), 6.0) * const(f32(1.0) / f32(6.0))),
    "hardsigmoid": (1, lambda a: _std_min(_std_max(a + const(3.0), 0.0), 6.0) * const(f32(1.0) / f32(6.0))),
}

# Reductions over the channel axis: the combine step (acc first), the start value and the closing step. min/max are
# ATen's MinNanFunctor / MaxNanFunctor (NaN wins); mean is sum * (1/C), as ReduceMomentKernel.cu's MeanOps.
REDUCTIONS = {
    "min": (lambda acc, v: sel(isnan(acc) | acc.lt(v), acc, v), math.inf),
    "max": (lambda acc, v: sel(isnan(acc) | acc.gt(v), acc, v), -math.inf),
    "sum": (lambda acc, v: acc + v, 0.0),
    "mean": (lambda acc, v: acc + v, 0.0),
}


def op_expr(op: str, operands: list, attrs: dict) -> Ex:
    arity, formula = OPS[op]
    assert len(operands) == arity, (op, operands)
    return formula(*operands, **attrs)


def finish_expr(red: T.Reduction, acc: Ex, channels: int) -> Ex:
    return acc * const(f32(1.0) / f32(channels)) if red.kind == "mean" else acc


# --- the generator -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lowered:
    """The epilogue as straight-line code: one (name, expression) per traced node, expressions over earlier names.
    `apply` maps the conv value `v` of channel `c` to `apply_out`; with a reduction, `combine(acc, v)`, its start
    value `init`, `finish(acc)`, then `post` maps the reduced value `r` to `post_out`."""
    apply: tuple
    apply_out: str
    reduction: T.Reduction | None = None
    combine: Ex | None = None
    init: float = 0.0
    finish: Ex | None = None
    post: tuple = ()
    post_out: str = "r"


def _operand(v, names: dict) -> Ex:
    if isinstance(v, T.Ref):
        return var(names[v.index])
    if isinstance(v, T.Const):
        return const(v.value)
    if isinstance(v, T.Param):
        return var(f"p{v.slot}_c" if v.kind == "channel" else f"p{v.slot}_s")
    raise AssertionError(v)


def lower(traced: T.Traced) -> Lowered:
    names = {0: "v"}
    stages = [[], []]     # before and after the reduction
    stage, red, apply_out = 0, None, None
    for i, node in enumerate(traced.nodes, 1):
        if isinstance(node, T.Reduction):
            red, apply_out, stage = node, names[node.arg.index], 1
            names[i] = "r"
            continue
        names[i] = f"{'t' if stage == 0 else 's'}{len(stages[stage])}"
        stages[stage].append((names[i], op_expr(node.op, [_operand(a, names) for a in node.args], dict(node.attrs))))
    last = names[len(traced.nodes)]
    if red is None:
        return Lowered(tuple(stages[0]), last)
    combine, init = REDUCTIONS[red.kind]
    return Lowered(tuple(stages[0]), apply_out, red, combine(var("acc"), var("v")), init,
                   finish_expr(red, var("acc"), traced.conv.out_channels), tuple(stages[1]), last)


@dataclass(frozen=True)
class Generated:
    source: str                 # the `FamilyEpilogue` struct, CUDA text
    params: tuple               # attribute paths of the model's tensors the kernel reads, in slot order
    param_kinds: tuple          # "channel" | "scalar" per slot
    reduction: str | None       # None or "min" | "max" | "sum" | "mean" over the channels
    keepdim: bool


def generate(traced: T.Traced) -> Generated:
    """The epilogue of a traced model as a CUDA struct the conv templates (kernels/family/*.cuh) call:
    `apply(v, c, p)` on the conv value (bias added) of channel c, one statement per traced op; with a reduction over
    channels, `init`, `combine`, `finish` and `post` (the ops after it), the generated reduction step."""
    if len(traced.params) > MAX_PARAMS:
        raise T.UnsupportedModel(f"the epilogue reads {len(traced.params)} tensors; the template takes {MAX_PARAMS}")
    low = lower(traced)
    ind = " " * 8

    def stmts(lines):
        return [f"{ind}const float {n} = {render(e)};" for n, e in lines]

    loads = [f"{ind}const float p{p.slot}_c = __ldg(p.p[{p.slot}] + c);   // {p.name}[c]" if p.kind == "channel"
             else f"{ind}const float p{p.slot}_s = __ldg(p.p[{p.slot}]);   // {p.name}" for p in traced.params]
    scalars = [s for p, s in zip(traced.params, loads) if p.kind == "scalar"]
    red = low.reduction
    out = [f"// generated by convfuse.family.epilogue from {traced.model_name}: {traced.summary()}",
           "struct FamilyEpilogue {",
           f"    static constexpr bool kReduces = {'true' if red else 'false'};",
           "    __device__ static __forceinline__ float apply(float v, int c, const cf_family::Params& p) {",
           *loads, *stmts(low.apply), f"{ind}return {low.apply_out};", "    }"]
    if red:
        out += [f"    // the reduction step: {red.kind} over the {traced.conv.out_channels} channels, in order 0..C-1"
                f"{', keepdim' if red.keepdim else ''}",
                f"    __device__ static __forceinline__ float init() {{ return {cuda_float(f32(low.init))}; }}",
                "    __device__ static __forceinline__ float combine(float acc, float v) {",
                f"{ind}return {render(low.combine)};", "    }",
                f"    __device__ static __forceinline__ float finish(float acc) {{ return {render(low.finish)}; }}",
                "    __device__ static __forceinline__ float post(float r, const cf_family::Params& p) {",
                *scalars, *stmts(low.post), f"{ind}return {low.post_out};", "    }"]
    else:   # the template calls these only when kReduces; defined so that every epilogue has one shape
        out += ["    __device__ static __forceinline__ float init() { return 0.0f; }",
                "    __device__ static __forceinline__ float combine(float acc, float) { return acc; }",
                "    __device__ static __forceinline__ float finish(float acc) { return acc; }",
                "    __device__ static __forceinline__ float post(float r, const cf_family::Params&) { return r; }"]
    out.append("};")
    return Generated("\n".join(out) + "\n", tuple(p.name for p in traced.params),
                     tuple(p.kind for p in traced.params), red.kind if red else None, bool(red and red.keepdim))


# --- the CPU mirror of the generated code --------------------------------------------------------------------
def _run(lines, env):
    for n, e in lines:
        env[n] = evaluate(e, env)
    return env


@torch.no_grad()
def evaluate_traced(traced: T.Traced, conv_out: torch.Tensor, tensors: dict) -> torch.Tensor:
    """What the generated code computes from the conv's output (bias added), on CPU float32, statement for statement:
    `tensors` maps each parameter's attribute path to its value. The reduction runs over the channels in the
    template's order, 0 to C-1."""
    low = lower(traced)
    c = conv_out.shape[1]
    env = {"v": conv_out.float()}
    for p in traced.params:
        t = tensors[p.name].detach().float()
        if p.kind == "channel":
            env[f"p{p.slot}_c"] = t.reshape((1, c) + (1,) * (conv_out.dim() - 2))
        else:
            env[f"p{p.slot}_s"] = t.reshape(())
    y = _run(low.apply, dict(env))[low.apply_out]
    if low.reduction is None:
        return y.expand(conv_out.shape)
    y = y.expand(conv_out.shape)
    acc = torch.full_like(y[:, 0], f32(low.init))
    for ch in range(c):
        acc = evaluate(low.combine, {"acc": acc, "v": y[:, ch]})
    acc = evaluate(low.finish, {"acc": acc})
    out = _run(low.post, dict(env, r=acc))[low.post_out]
    out = out.expand(acc.shape)
    return out.unsqueeze(1) if low.reduction.keepdim else out
