"""Every family problem's generated kernel on the GPU: built, and held to the verification protocol (convfuse/family/
run.py: float64 truth, fresh inputs and parameters, NaN-poisoned outputs, odd shapes, bias zeroed, input scales); and
cuDNN's fused graph of each problem the builder does not refuse (convfuse/family/cudnn_graph.py), held to the same
protocol in the TF32 class. The full shapes and the timings are scripts/family_gpu.py's."""
import pytest
import torch

from convfuse import cudnn_fused as CF
from convfuse.family import cudnn_graph as CG
from convfuse.family import models as M
from convfuse.family import run as F
from convfuse.family import trace as T

pytestmark = pytest.mark.gpu


# tf32h on the 2-D problems only, and only on the GPUs its sm_90a code runs on (H100, H200)
_SM90 = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
PAIRS = [(k, d) for k, p in M.FAMILY.items() for d in F.TP.DESIGNS
         if F.TP.takes(d, p.dims) and (_SM90 or not F.TP.arch_specific(d))]


@pytest.fixture(scope="module")
def built():
    return F.build_all(PAIRS)


@pytest.mark.parametrize("key,design", PAIRS, ids=[F.name(*p) for p in PAIRS])
def test_generated_kernel_verifies(key, design, built):
    assert F.name(key, design) in built, f"{key} in {design} did not build"
    prob = M.get(key)
    model = prob.make_model(seed=0, device="cuda")
    res = F.verify(prob, model, F.fused(model, design), full_shape=False)
    assert res["verified"], [c for c in res["checks"] if not c["passed"]]


def test_the_fused_module_refuses_grad_and_wrong_channels(built):
    prob = M.get("kb71")
    model = prob.make_model(seed=0, device="cuda")
    fused = F.fused(model, "tf32")
    x = prob.make_input(prob.odd_shapes[0], device="cuda")
    with pytest.raises(RuntimeError, match="inference-only"):
        fused(x)                        # the model's parameters require grad
    with torch.no_grad():
        with pytest.raises(ValueError, match="in_channels=8"):
            fused(x[:, :3].contiguous())


def _lowered(key: str) -> bool:
    try:
        CG.lower(T.trace(M.get(key).make_model(seed=0)))
    except CG.Refused:
        return False
    return True


@pytest.mark.parametrize("key", [k for k in M.FAMILY if _lowered(k)])
def test_cudnn_fused_graph_verifies(key):
    pytest.importorskip("cudnn")
    prob = M.get(key)
    model = prob.make_model(seed=0, device="cuda")
    runner = CG.Runner(prob, model)
    try:
        runner.graph(prob.odd_shapes[0])
    except CF.Unavailable as e:       # cuDNN's verdict on the graph (no engine), which the run records as "refused"
        pytest.skip(str(e))
    res = F.verify(prob, model, runner, full_shape=False)
    assert res["verified"], ([c for c in res["checks"] if not c["passed"]], runner.errors)
