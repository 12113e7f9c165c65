"""cuDNN's fused graph as a reference row: skipped with one line without the frontend; verified where it runs."""
import sys

import pytest
import torch

from convfuse import bench, cudnn_fused, verify
from convfuse import problems as P
from convfuse import registry as R


def test_without_the_frontend_the_rows_say_how_to_add_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "cudnn", None)      # import cudnn -> ImportError
    with pytest.raises(cudnn_fused.Unavailable, match="pip install nvidia-cudnn-frontend"):
        cudnn_fused.Runner(P.CONV2D, nchw=False)
    with pytest.raises(cudnn_fused.Unavailable):
        R.reference_runner(R.get("conv3d", "cudnn_fused_nchw"), None)


def test_the_benchmark_leaves_the_rows_out_with_the_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "cudnn", None)
    notes, lines = {}, []
    assert bench._cudnn_runners(P.CONV3D, None, log=lines.append, notes=notes) == {}
    assert notes["conv3d"]["status"] == "skipped" and "nvidia-cudnn-frontend" in notes["conv3d"]["message"]
    assert len(lines) == 1 and "skipped" in lines[0]


def test_a_refusal_is_recorded_as_one(monkeypatch):
    class Refusing:
        def __init__(self, problem, nchw, graphs=None):
            raise cudnn_fused.Unavailable("cuDNN refused the conv2d graph: cudnnGraphNotSupportedError: no engine")

    monkeypatch.setattr(cudnn_fused, "Runner", Refusing)
    notes = {}
    assert bench._cudnn_runners(P.CONV2D, None, log=lambda m: None, notes=notes) == {}
    assert notes["conv2d"] == {"status": "refused",
                               "message": "cuDNN refused the conv2d graph: cudnnGraphNotSupportedError: no engine"}


def test_the_rows_are_tf32_references_with_their_own_traffic():
    for pk in P.PROBLEMS:
        cl, nchw = R.get(pk, "cudnn_fused"), R.get(pk, "cudnn_fused_nchw")
        assert cl.kind == nchw.kind == "reference" and cl.precision == nchw.precision == "tf32"
        assert cl.layouts == "channels_last"


@pytest.mark.gpu
@pytest.mark.parametrize("pk", list(P.PROBLEMS))
def test_the_graph_computes_the_model_at_odd_shapes(pk):
    pytest.importorskip("cudnn")
    prob = P.get(pk)
    model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
    try:
        rows = {k: R.reference_runner(R.get(pk, k), model) for k in ("cudnn_fused", "cudnn_fused_nchw")}
        rows["cudnn_fused"].graph(prob.odd_shapes[0])
    except cudnn_fused.Unavailable as e:
        pytest.skip(str(e))
    checks = verify.run_checks(prob, model, rows, {k: "tf32" for k in rows}, shapes=prob.odd_shapes)
    bad = [c for c in checks if not c.passed]
    assert not bad, bad[:3]
    x = prob.make_input(prob.odd_shapes[0], device="cuda")
    w, b, p = P.conv_params(model)
    fmt = torch.channels_last if prob.dims == 2 else torch.channels_last_3d
    assert rows["cudnn_fused"](x, w, b, p).is_contiguous(memory_format=fmt)
    assert rows["cudnn_fused_nchw"](x, w, b, p).is_contiguous()


@pytest.mark.parametrize("pk", list(P.PROBLEMS))
def test_a_channels_last_call_copies_nothing(pk):
    """The row times the graph alone: with x channels_last and the weight converted once, preparing a call allocates
    the output and copies no tensor (an empty(...).contiguous(channels_last) output cost an output-sized copy a call)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Ops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(str(func))
            return func(*args, **(kwargs or {}))

    prob = P.get(pk)
    run = object.__new__(cudnn_fused.Runner)            # no frontend needed to prepare the arguments
    run.problem, run.nchw, run._w = prob, False, (None, None)
    shape = prob.odd_shapes[0]
    x = cudnn_fused.to_channels_last(torch.randn(shape))
    w = torch.randn((prob.out_channels, prob.in_channels) + (prob.kernel_size,) * prob.dims)
    b, p = torch.randn(prob.out_channels), torch.randn(prob.out_channels)
    run.args(x, w, b, p)                                  # the first call converts the weight
    with Ops() as ops:
        xa, wa, _, _, y = run.args(x, w, b, p)
    assert xa is x and y.is_contiguous(memory_format=cudnn_fused._fmt(prob.dims))
    assert not [op for op in ops.seen if "copy" in op or "clone" in op], ops.seen
