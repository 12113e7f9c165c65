"""cuDNN's own fused graph, the library a user would pick instead of our kernels: the conv, its bias and the
problem's whole epilogue as nodes of one cudnn-frontend graph, which cuDNN's runtime fusion compiles into one
kernel. FP32 in and out; cuDNN may run the conv on TF32 tensor cores, so the rows are held to TF32's bound.

cuDNN plans such graphs for channels_last tensors (NHWC / NDHWC) only. `cudnn_fused` is the graph alone, its input
already channels_last (a caller whose network is channels_last throughout); `cudnn_fused_nchw` is what an NCHW
caller pays: x converted in, y converted back, both timed. Every execution plan cuDNN offers for the KernelBench
shape is built and timed (`Plans.tune`) and the fastest is kept; other shapes (the verification's odd ones) build and
run the first plan that builds. The weight is converted to channels_last once per parameter version, as a channels_last
model would hold it.

Optional: needs the `nvidia-cudnn-frontend` package (its Python module is `cudnn`). Without it, or when cuDNN
refuses the graph, `Unavailable` says why and the benchmark leaves the rows out with that one line.
"""
from __future__ import annotations


import torch

from . import problems as P
from .timing import L2Flush, time_interleaved

INSTALL = "pip install nvidia-cudnn-frontend"


class Unavailable(RuntimeError):
    """The frontend is not installed, or cuDNN offers no plan for the graph: the reason, in one line."""


def frontend():
    try:
        import cudnn
    except Exception as e:   # ImportError, or the wheel's loader failing to find libcudnn
        raise Unavailable(f"cuDNN's fused graph needs the nvidia-cudnn-frontend package ({INSTALL}): "
                          f"{type(e).__name__}: {e}") from None
    return cudnn


def _fmt(dims: int):
    return torch.channels_last if dims == 2 else torch.channels_last_3d


def to_channels_last(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous(memory_format=_fmt(t.dim() - 2))


def one_line(e: Exception) -> str:
    return " ".join(f"{type(e).__name__}: {e}".split())[:400]


def status(e: Exception) -> tuple[str, str]:
    """How a reference row that did not come about is recorded: ("skipped", why) without the frontend, ("refused",
    why) where cuDNN (or, before it, the family's lowering) declined the graph, ("failed", the error) for anything
    else the frontend raised."""
    if isinstance(e, Unavailable):
        return ("skipped" if "nvidia-cudnn-frontend" in str(e) else "refused"), str(e)
    return "failed", one_line(e)


class Plans:
    """What a finalised cuDNN graph shares, the study's and the family's (family/cudnn_graph.py): every execution
    plan cuDNN offers built (or, with every_plan=False, the first that builds; with max_plans, the first that many that
    build, in cuDNN's heuristic order), `tune` keeping the fastest, `info` for the record. A subclass sets cudnn, graph and handle, then calls _build_plans."""

    def _build_plans(self, what: str, every_plan: bool, device, max_plans: int | None = None):
        cudnn, g = self.cudnn, self.graph
        try:
            g.validate()
            g.build_operation_graph()
            g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
            g.check_support()
        except Exception as e:
            raise Unavailable(f"cuDNN refused {what}: {one_line(e)}") from None
        self.names, self.built, self.declined = {}, [], {}
        for i in range(g.get_execution_plan_count()):
            try:
                name = g.get_plan_name_at_index(i)
            except Exception:
                name = f"plan {i}"
            self.names[i] = name
            if self.built and (not every_plan or (max_plans is not None and len(self.built) >= max_plans)):
                continue   # named, not built: the record still counts what cuDNN offered
            try:
                g.build_plan_at_index(i)
                self.built.append(i)
            except Exception as e:
                self.declined[name] = one_line(e)
        if not self.built:
            raise Unavailable(f"cuDNN offered {len(self.names)} plans for {what} and none built: "
                              + "; ".join(f"{n}: {m}" for n, m in list(self.declined.items())[:3]))
        ws = max(g.get_workspace_size_plan_at_index(i) for i in self.built)
        self.workspace = torch.empty(max(ws, 1), dtype=torch.uint8, device=device)
        self.plan = self.built[0]
        self.plans_ms: dict[str, float] = {}

    @torch.no_grad()
    def tune(self, args, flush=None, n_timed=10) -> dict:
        """Time every plan that built on `args` (what __call__ takes before `plan`), the L2 flushed before each call;
        keep the fastest. {plan name: median ms}."""
        fns = {i: (lambda i=i: self(*args, plan=i)) for i in self.built}
        times = time_interleaved(fns, n_timed=n_timed, n_warmup=2, flush=flush or (lambda: None), log=lambda m: None)
        med = {i: t["median_ms"] for i, t in times.items()}
        self.plan = min(med, key=med.get)
        self.plans_ms = {self.names[i]: round(t, 5) for i, t in med.items()}
        return self.plans_ms

    def info(self) -> dict:
        """What a record keeps of the graph: the plan kept, how many cuDNN offered and built, each one's time."""
        return {"name": self.names[self.plan], "index": self.plan, "plans": len(self.names), "built": len(self.built),
                "plans_ms": self.plans_ms, "declined": self.declined,
                "frontend": getattr(self.cudnn, "__version__", None), "backend": self.cudnn.backend_version()}


class Graph(Plans):
    """One cuDNN graph for one input shape: x, w and y channels_last, bias and the epilogue parameter per channel."""

    def __init__(self, problem: P.Problem, x_shape, device="cuda", every_plan=True):
        cudnn = self.cudnn = frontend()
        self.problem, self.x_shape = problem, tuple(x_shape)
        d, cout = problem.dims, problem.out_channels
        fp32 = cudnn.data_type.FLOAT
        self.handle = cudnn.create_handle()
        cudnn.set_stream(self.handle, torch.cuda.current_stream(device).cuda_stream)
        x = torch.empty(self.x_shape, device=device, memory_format=_fmt(d))
        w = torch.empty((cout, problem.in_channels) + (problem.kernel_size,) * d, device=device, memory_format=_fmt(d))
        y = torch.empty(problem.output_shape(self.x_shape), device=device, memory_format=_fmt(d))
        chan = (1, cout) + (1,) * d
        g = self.graph = cudnn.pygraph(io_data_type=fp32, intermediate_data_type=fp32, compute_data_type=fp32,
                                       handle=self.handle)
        T = self.tensors = {}

        def tensor(name, like):
            T[name] = g.tensor(name=name, dim=list(like.shape), stride=list(like.stride()), data_type=fp32)
            return T[name]

        def constant(name, value):   # a pass-by-value scalar, broadcast over the tensor
            T[name] = g.tensor(name=name, dim=[1] * (d + 2), stride=[1] * (d + 2), data_type=fp32,
                               is_pass_by_value=True)
            self.constants[name] = torch.full([1] * (d + 2), value, dtype=torch.float32)
            return T[name]

        self.constants = {}
        per_channel = torch.empty(chan, device=device)
        t = g.conv_fprop(image=tensor("x", x), weight=tensor("w", w), padding=[0] * d, stride=[1] * d,
                         dilation=[1] * d, compute_data_type=fp32, name="conv")
        t = g.bias(input=t, bias=tensor("bias", per_channel), name="bias")
        if problem.key == "conv2d":        # x * multiplier -> LeakyReLU(0.01) -> GELU
            t = g.mul(a=t, b=tensor("param", per_channel), name="multiply")
            t = g.leaky_relu(t, negative_slope=0.01, name="leaky_relu")
        else:                              # LeakyReLU(0.2) -> + sum_tensor -> clamp(-1, 1) -> GELU
            t = g.leaky_relu(t, negative_slope=0.2, name="leaky_relu")
            t = g.add(a=t, b=tensor("param", per_channel), name="add")
            t = g.max(input0=t, input1=constant("lo", -1.0), name="clamp_lo")
            t = g.min(input0=t, input1=constant("hi", 1.0), name="clamp_hi")
        t = g.gelu(input=t, name="gelu")
        t.set_output(True).set_data_type(fp32).set_dim(list(y.shape)).set_stride(list(y.stride()))
        T["y"] = t
        self._build_plans(f"the {problem.key} graph", every_plan, device)

    def __call__(self, x_cl, w_cl, bias_c, param_c, y_cl, plan=None) -> torch.Tensor:
        T = self.tensors
        pack = {T["x"]: x_cl, T["w"]: w_cl, T["bias"]: bias_c, T["param"]: param_c, T["y"]: y_cl}
        pack.update({T[k]: v for k, v in self.constants.items()})
        self.graph.execute_plan_at_index(pack, self.workspace, self.plan if plan is None else plan, self.handle)
        return y_cl


class Runner:
    """A reference row's callable, (x, weight, bias, param, out=None) -> y, as the verification and the benchmark
    call every row. `nchw=False`: x is expected channels_last (converted here if it is not, for the verification's
    NCHW inputs; the benchmark hands it channels_last) and y comes back channels_last. `nchw=True`: x NCHW in, y NCHW
    out, the conversions inside the call."""

    def __init__(self, problem: P.Problem, nchw: bool, graphs: dict | None = None):
        frontend()
        self.problem, self.nchw = problem, nchw
        self.graphs: dict[tuple, Graph] = {} if graphs is None else graphs   # the two rows share one graph per shape
        self.errors: dict[tuple, str] = {}
        self._w = (None, None)

    def graph(self, x_shape) -> Graph:
        key = tuple(x_shape)
        if key not in self.graphs:
            self.graphs[key] = Graph(self.problem, key, device="cuda",
                                     every_plan=key == tuple(self.problem.input_shape))
        return self.graphs[key]

    def _weight(self, w):
        tag = (w.data_ptr(), w._version)
        if self._w[0] != tag:
            self._w = (tag, to_channels_last(w))
        return self._w[1]

    def args(self, x, w, b, p, out=None):
        d, cout = self.problem.dims, self.problem.out_channels
        chan = (1, cout) + (1,) * d
        # allocated channels_last: empty(...).contiguous(channels_last) would copy an output's worth of garbage each call
        y = torch.empty(self.problem.output_shape(x.shape), device=x.device, memory_format=_fmt(d))
        return (to_channels_last(x), self._weight(w), b.reshape(chan).contiguous(), p.reshape(chan).contiguous(), y)

    def __call__(self, x, w, b, p, out=None):
        try:
            y = self.graph(x.shape)(*self.args(x, w, b, p))
        except Exception as e:   # e.g. a shape cuDNN plans no kernel for: the output stays poisoned, the check fails
            self.errors[tuple(x.shape)] = str(e) if isinstance(e, Unavailable) else one_line(e)
            if out is None:
                raise
            return out
        return y.contiguous() if self.nchw else y

    def info(self) -> dict:
        """What the record keeps of the KernelBench-shape graph: the plan kept, how many cuDNN offered, each time."""
        g = self.graphs.get(tuple(self.problem.input_shape))
        return {} if g is None else g.info()


def main() -> int:
    """python -m convfuse.cudnn_fused: the plans cuDNN offers for each problem's graph on this GPU, each timed."""
    import traceback

    for pk, prob in P.PROBLEMS.items():
        try:
            r = Runner(prob, nchw=False)
            model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
            x = prob.make_input(seed=0, device="cuda")
            g = r.graph(x.shape)
            plans = g.tune(r.args(x, *P.conv_params(model)), flush=L2Flush())
        except Unavailable as e:
            print(f"{pk}: {e}")
            continue
        except Exception:
            traceback.print_exc()
            continue
        print(f"{pk}: cuDNN {g.cudnn.backend_version()}, {len(g.names)} plans offered, {len(g.built)} built")
        for name, ms in sorted(plans.items(), key=lambda kv: kv[1]):
            print(f"  {ms:8.3f} ms  {name}" + ("  (kept)" if name == g.names[g.plan] else ""))
        for name, why in g.declined.items():
            print(f"  declined  {name}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
