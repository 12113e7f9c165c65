"""The library face (DESIGN.md): every kernel variant of the registry as a PyTorch operator, and `fuse()`.

Each kernel variant is the custom op ``torch.ops.convfuse.<problem>_<key>(x, weight, bias, param) -> y``
(`op_name`), with a fake kernel, so that ``torch.compile(fullgraph=True)`` keeps a model that calls it in one graph.
The fake kernel runs the registry's input checks (``registry.check_inputs``): a call the kernel cannot take fails
while tracing, with the same message as in eager mode, and a real call fails before any CUDA is touched. An op builds
its extension (``build.build``) on its first real call; tracing builds nothing.

The ops are inference-only: with grad mode on and an input that requires grad, `call` and `FusedConv` refuse before
the kernel runs, and the op itself (``torch.ops.convfuse.*`` called directly, or traced by AOTAutograd) refuses in its
autograd step, so no output ever comes back silently without a ``grad_fn``.

``fuse(model, precision)`` takes the KernelBench model of either problem and returns a `FusedConv` holding the
model's own parameters, which runs the fastest verified kernel of that precision class on this GPU, chosen from the
recorded results (`choose`). Any other model of the family (a conv, k=3, stride 1, no padding, then elementwise ops and
at most one reduction over channels: convfuse/family) gets its epilogue generated from its own forward and one
kernel of the family's template for that class (`family_design`: the best design of the class on this GPU's family
record, else `FAMILY_DESIGNS`), as ``torch.ops.convfuse.family``.
"""
from __future__ import annotations

import warnings

import torch
from torch import nn

from . import problems as P
from . import registry as R
from . import results as RS
from .verify import BOUNDS

NAMESPACE = "convfuse"
# What a caller may ask of `fuse`: the bound (verify.BOUNDS) the chosen kernel must meet on every input it takes.
CLASSES = ("tf32", "fp32")
# The family's template design per class where this GPU has no family record (`family_design`): portable (sm_80 and
# later, 2-D and 3-D); FP32 CUDA cores for the FP32 class, faster than the split-TF32 design on all nine problems in
# the H100's one family run (2026-12-07).
FAMILY_DESIGNS = {"tf32": "tf32", "fp32": "fp32"}
FAMILY_DIR = RS.RESULTS_DIR / "family"    # scripts/family_gpu.py's records, one a GPU


class Unsupported(ValueError):
    """A model, an input or a GPU that no registered kernel can take."""


def op_name(variant: R.Variant) -> str:
    """The op's name in the ``convfuse`` namespace: ``conv2d_04_mma_tf32``."""
    return f"{variant.problem}_{variant.key}"


def _inference_only(name: str) -> str:
    return (f"convfuse::{name} is inference-only (it has no backward): an input requires grad while grad mode is on. "
            f"Call it under torch.no_grad() or torch.inference_mode(), or detach the inputs "
            f"(fuse(model, fallback=True) runs eager PyTorch instead when grad is wanted).")


def _needs_grad(*tensors) -> bool:
    return torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors)


_RUNNERS: dict = {}


def _runner(variant: R.Variant):
    """The variant's runner (registry.kernel_runner) over its extension, built (or loaded from the cache) on the first
    real call of its op."""
    run = _RUNNERS.get(variant)
    if run is None:
        from . import build

        run = _RUNNERS[variant] = R.kernel_runner(variant, build.build(variant))
    return run


def _define(variant: R.Variant):
    prob = P.get(variant.problem)
    name = op_name(variant)

    # device_types left open: a CPU tensor reaches check_inputs and its message, not the dispatcher's "no kernel"
    @torch.library.custom_op(f"{NAMESPACE}::{name}", mutates_args=())
    def op(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, param: torch.Tensor) -> torch.Tensor:
        R.check_inputs(variant, x, weight, bias, param)      # before a build: a bad call costs no nvcc run
        return _runner(variant)(x, weight, bias, param)

    @op.register_fake
    def _(x, weight, bias, param):
        R.check_inputs(variant, x, weight, bias, param)
        return x.new_empty(prob.output_shape(tuple(x.shape)))

    def refuse(ctx, inputs, output):
        raise RuntimeError(_inference_only(name))

    def no_backward(ctx, grad):
        raise RuntimeError(_inference_only(name))

    # setup_context runs in the forward whenever autograd would record the call: the refusal comes at the call
    op.register_autograd(no_backward, setup_context=refuse)
    return op


# every kernel variant of the registry, registered once per process at import
OPS: dict = {(v.problem, v.key): _define(v) for v in R.kernel_variants()}


def op(problem: str, key: str):
    """The custom op of one kernel variant; an unknown problem or key names the valid ones."""
    v = R.get(P.get(problem).key, key)
    if not v.is_kernel:
        keys = ", ".join(k.key for k in R.kernel_variants(problem))
        raise ValueError(f"{problem}/{key} is a reference row of the study, not a kernel; kernels: {keys}")
    return OPS[(v.problem, v.key)]


def call(problem: str, key: str, x, weight, bias, param):
    """Run one kernel variant through its op; the grad refusal and the input checks come before any CUDA."""
    v = R.get(problem, key)
    if _needs_grad(x, weight, bias, param):
        raise RuntimeError(_inference_only(op_name(v)))
    R.check_inputs(v, x, weight, bias, param)
    return op(problem, key)(x, weight, bias, param)


# --- choosing a kernel -----------------------------------------------------------------------------------------
def in_class(variant: R.Variant, precision: str) -> bool:
    """Whether the variant's promise (its precision's bound, verify.BOUNDS) is at least as tight as the class's."""
    if precision not in CLASSES:
        raise ValueError(f"precision {precision!r}: use one of {', '.join(CLASSES)}")
    want, have = BOUNDS[precision], BOUNDS[variant.precision]
    return all(w is None or (h is not None and h <= w) for w, h in zip(want, have))


def problem_of(model: nn.Module) -> P.Problem:
    """The problem whose model this is: an instance of convfuse.problems' class, or another class (KernelBench's own
    `Model`) with the same layers that computes the same on a small input. Its conv must be the kernels' (stride 1,
    no padding, no dilation or groups, a bias)."""
    known = ", ".join(f"{p.model_cls.__name__} ({p.kernelbench_id})" for p in P.PROBLEMS.values())
    for prob in P.PROBLEMS.values():
        conv_cls = nn.Conv2d if prob.dims == 2 else nn.Conv3d
        if not (isinstance(model, prob.model_cls) or (type(getattr(model, "conv", None)) is conv_cls
                                                      and hasattr(model, prob.model_cls.EPILOGUE_PARAM))):
            continue
        c = model.conv
        ones, zeros = (1,) * prob.dims, (0,) * prob.dims
        if (tuple(c.stride), tuple(c.padding), tuple(c.dilation), c.groups, c.padding_mode) != (
                ones, zeros, ones, 1, "zeros") or c.bias is None:
            raise TypeError(f"{type(model).__name__}: the kernels compute a {prob.dims}-D conv with stride 1, no "
                            f"padding, dilation or groups, and a bias; this conv is {c}")
        if not isinstance(model, prob.model_cls) and not _computes_as(model, prob):
            raise TypeError(f"{type(model).__name__} has the layers of {prob.model_cls.__name__} "
                            f"({prob.kernelbench_id}) but computes something else on a small input")
        return prob
    raise TypeError(f"convfuse.fuse takes the KernelBench model of one of its problems: {known}; "
                    f"got {type(model).__name__}")


@torch.no_grad()
def _computes_as(model: nn.Module, prob: P.Problem) -> bool:
    """Whether a model of another class computes what the problem's model does with the same parameters (on CPU
    copies: this runs once, at fuse)."""
    import copy

    name = prob.model_cls.EPILOGUE_PARAM
    try:
        theirs = copy.deepcopy(model).cpu().double()
        c = theirs.conv
        ours = prob.model_cls(c.in_channels, c.out_channels, c.kernel_size, tuple(getattr(theirs, name).shape))
        ours = ours.double()
        ours.conv.load_state_dict(c.state_dict())
        getattr(ours, name).copy_(getattr(theirs, name))
        shape = (2, c.in_channels) + tuple(k + 5 for k in c.kernel_size)
        x = torch.randn(shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 3
        return bool(torch.allclose(theirs(x), ours(x), rtol=1e-9, atol=1e-12))
    except Exception:       # what cannot even run like the problem's model does not compute as it does
        return False


def choose(problem: str, precision: str, gpu_name: str, capability: tuple, runs=None) -> tuple:
    """(variant, why): the kernel of `problem` in the precision class that runs fastest on this GPU.

    The record of this GPU (results/<slug>.json) decides among its verified kernels whose class holds at every input
    scale. A GPU with no record gets a
    portable kernel (no arch-specific code), the fastest verified one on the newest record that has one, as a
    GPU of another generation cannot be assumed to rank the Hopper-only designs as an H100 does.
    """
    # a kernel whose class holds only over a narrower range of input scale (Variant.input_scales: FP16 operands
    # without an input exponent) is never chosen: fuse promises the class for any input the model may see
    cands = [v for v in R.kernel_variants(problem) if in_class(v, precision) and v.runs_on(capability)
             and v.input_scales is None]
    if not cands:
        lowest = min(R.Variant.min_capability(a) for v in R.kernel_variants(problem) for a in v.archs)
        raise Unsupported(f"no {precision}-class kernel of {problem} runs on a GPU of compute capability "
                          f"{capability[0]}.{capability[1]} ({gpu_name}); the portable kernels need "
                          f"{lowest[0]}.{lowest[1]} or later")
    runs = RS.all_recorded() if runs is None else runs

    def fastest(run, among):
        recs = [(RS.record(run, problem, v.key), v) for v in among]
        recs = [(r["median_ms"], v) for r, v in recs if r and r.get("verified") and r.get("median_ms")]
        return min(recs, key=lambda t: t[0], default=None)

    slug = RS.slug(gpu_name)
    for run in runs:
        if run["env"].get("slug", RS.slug(run["env"].get("gpu", ""))) == slug:
            best = fastest(run, cands)
            if best:
                return best[1], (f"the fastest verified {precision}-class kernel of {problem} on the record of this "
                                 f"GPU ({gpu_name}, {run['env'].get('date', '?')[:10]}): {best[0]:.3f} ms")
    portable = [v for v in cands if v.needs_cc is None]
    if not portable:
        raise Unsupported(f"no portable {precision}-class kernel of {problem} for {gpu_name}")
    for run in runs:
        best = fastest(run, portable)
        if best:
            return best[1], (f"no verified record of {gpu_name}: the fastest portable {precision}-class kernel of "
                             f"{problem} on the record of the {run['env'].get('gpu')} ({best[0]:.3f} ms there)")
    return portable[-1], f"no record at all: the last portable {precision}-class step of the registry"


def family_design(precision: str, dims: int, gpu_name: str, capability: tuple, runs=None) -> tuple[str, str]:
    """(design, why): the family template design a model of `dims` gets in the precision class on this GPU.

    This GPU's family record (results/family/<slug>.json) decides, as the study's record does for 54 and 90: among the
    designs of the class that take `dims` and whose machine code loads here (an sm_90a design only on compute
    capability 9.0), the one verified on every recorded problem of those dims, with the highest geometric mean of its
    speed-ups over eager there. The model itself is none of those problems, so the choice is the design that did best
    on its kind, not a measurement of the model. With no such record: FAMILY_DESIGNS, portable."""
    import json
    import math

    from .family import models as FM
    from .family import template as FT

    here = f"{capability[0]}{capability[1]}a"
    cands = [d for d in FT.DESIGNS if BOUNDS[FT.precision(d)] == BOUNDS[precision] and FT.takes(d, dims)
             and (not FT.arch_specific(d) or here in FT.DESIGNS[d].archs)]
    if runs is None:
        runs = [json.loads(p.read_text()) for p in sorted(FAMILY_DIR.glob("*.json"))] if FAMILY_DIR.is_dir() else []
    slug = RS.slug(gpu_name)
    for run in runs:
        if run.get("env", {}).get("slug") != slug:
            continue
        recs = {k: r for k, r in run.get("records", {}).items() if k in FM.FAMILY and FM.FAMILY[k].dims == dims}
        scores = {}
        for d in cands:
            sp = [r.get("speedups", {}).get(f"{d}_vs_eager") if r.get("designs", {}).get(d, {}).get("verified") is True
                  else None for r in recs.values()]
            if sp and all(sp):
                scores[d] = math.exp(sum(map(math.log, sp)) / len(sp))
        if scores:
            best = max(scores, key=scores.get)
            return best, (f"the {precision}-class design with the best geometric mean over eager ({scores[best]:.2f}x) "
                          f"on the {len(recs)} {dims}-D problems of this GPU's family record ({gpu_name}, "
                          f"{run['env'].get('date', '?')[:10]}), verified on each")
    return FAMILY_DESIGNS[precision], (f"no family record of {gpu_name} with a verified {precision}-class design on "
                                       f"every {dims}-D problem: the portable default")


# --- the module a model swaps in ---------------------------------------------------------------------------------
class FusedConv(nn.Module):
    """A KernelBench model's forward as one convfuse op, over the model's own parameters (the same tensors: the
    state dict has the model's keys, and training or loading either updates both).

    `variant` None runs eager PyTorch (what `fuse(..., fallback=True)` returns where no kernel can take the model).
    With `fallback`, a call the kernel cannot take (its input's dtype, layout, device or shape; grad wanted) runs
    the model's eager forward instead of raising.
    """

    def __init__(self, model: nn.Module, variant: R.Variant | None, fallback: bool = False, why: str = ""):
        super().__init__()
        self.problem = problem_of(model)
        if variant is not None and variant.problem != self.problem.key:
            raise ValueError(f"{variant.problem}/{variant.key} is a kernel of {variant.problem}, "
                             f"the model is {self.problem.key}'s")
        self.variant, self.fallback, self.why = variant, fallback, why
        self.conv = model.conv
        for name, p in model.named_parameters(recurse=False):
            self.register_parameter(name, p)
        object.__setattr__(self, "_eager", model)   # not a submodule: its parameters are already ours
        self._param_name = self.problem.model_cls.EPILOGUE_PARAM
        self._op = None if variant is None else OPS[(variant.problem, variant.key)]

    def forward(self, x):
        weight, bias, param = self.conv.weight, self.conv.bias, getattr(self, self._param_name)
        if self._op is None:
            return self._eager(x)
        if self.fallback:
            if _needs_grad(x, weight, bias, param) or R.input_error(self.variant, x, weight, bias, param):
                return self._eager(x)
        elif not torch.compiler.is_compiling() and _needs_grad(x, weight, bias, param):
            # under torch.compile the op's own autograd step refuses (a raise here would end tracing unexplained)
            raise RuntimeError(_inference_only(op_name(self.variant)))
        return self._op(x, weight, bias, param)

    def extra_repr(self) -> str:
        what = f"{self.variant.problem}/{self.variant.key} ({self.variant.precision})" if self.variant else "eager"
        return f"kernel={what}, fallback={self.fallback}"


def fuse(model: nn.Module, precision: str = "tf32", fallback: bool = False) -> nn.Module:
    """The model as a `FusedConv` running the fastest verified `precision`-class kernel on the model's GPU; any other
    model of the family as the family's generated kernel of that class (`_fuse_family`).

    precision: "tf32" (TF32's bound, what PyTorch's own cuDNN convs promise by default) or "fp32" (FP32's bounds:
    IEEE FP32 or a split scheme on tensor cores). Where no kernel can take the model (parameters not float32 or not
    on a CUDA GPU, a GPU older than the kernels' lowest target) this raises `Unsupported` naming why, or, with
    `fallback=True`, returns a module that runs eager PyTorch (and says why in a warning and in `.why`).
    """
    if precision not in CLASSES:
        raise ValueError(f"precision {precision!r}: use one of {', '.join(CLASSES)}")
    try:
        prob = problem_of(model)
    except TypeError as not_ours:
        return _fuse_family(model, precision, fallback, not_ours)
    try:
        weight = model.conv.weight
        bad = {n: p.dtype for n, p in model.named_parameters() if p.dtype != torch.float32}
        if bad:
            raise Unsupported(f"the kernels are FP32 in and out; parameters of another dtype: {bad}")
        if weight.device.type != "cuda":
            raise Unsupported(f"the model's parameters are on {weight.device}: the kernels run on CUDA GPUs "
                              f"(move the model with .cuda() before fuse)")
        cc = torch.cuda.get_device_capability(weight.device)
        variant, why = choose(prob.key, precision, torch.cuda.get_device_name(weight.device), cc)
    except Unsupported as e:
        if not fallback:
            raise
        warnings.warn(f"convfuse.fuse: eager PyTorch for {prob.key}: {e}", stacklevel=2)
        return FusedConv(model, None, fallback=True, why=str(e))
    return FusedConv(model, variant, fallback=fallback, why=why)


def _fuse_family(model: nn.Module, precision: str, fallback: bool, not_ours: TypeError) -> nn.Module:
    """A model other than the study's two: the family's generated kernel (family.template.FusedFamily), or Unsupported
    naming why neither takes it (eager PyTorch with a warning where the caller asked for a fallback)."""
    from .family import template as FT
    from .family import trace as FTR

    try:
        traced = FTR.trace(model)
        bad = {n: p.dtype for n, p in model.named_parameters() if p.dtype != torch.float32}
        if bad:
            raise Unsupported(f"the kernels are FP32 in and out; parameters of another dtype: {bad}")
        device = model.get_submodule(traced.conv.path).weight.device
        if device.type != "cuda":
            raise Unsupported(f"the model's parameters are on {device}: the kernels run on CUDA GPUs "
                              f"(move the model with .cuda() before fuse)")
        cc = torch.cuda.get_device_capability(device)
        if cc < (8, 0):
            raise Unsupported(f"the family's kernels are built for sm_80 and later; this GPU is compute capability "
                              f"{cc[0]}.{cc[1]}")
    except FTR.UnsupportedModel as e:
        why = f"{type(model).__name__} is neither of the study's problems ({not_ours}) nor of the family: {e}"
        if not fallback:
            raise Unsupported(why) from e
        warnings.warn(f"convfuse.fuse: eager PyTorch: {why}", stacklevel=3)
        return model
    except Unsupported as e:
        if not fallback:
            raise
        warnings.warn(f"convfuse.fuse: eager PyTorch for {type(model).__name__}: {e}", stacklevel=3)
        return model
    design, why = family_design(precision, traced.conv.dims, torch.cuda.get_device_name(device), cc)
    fused = FT.FusedFamily(model, traced, design=design)
    fused.why = why
    return fused
