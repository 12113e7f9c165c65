"""The library face on a GPU: torch.library.opcheck for one op per step and problem; torch.compile(fullgraph=True) of
fuse(model) against the float64 truth within its class; the fused-module timing beside eager and torch.compile.
Run: `python -m pytest -m gpu tests/test_gpu_ops.py` (make gpu-test runs it with the rest)."""
import pytest
import torch

from convfuse import bench
from convfuse import ops as O
from convfuse import problems as P
from convfuse import registry as R
from convfuse import verify

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """Each test compiles its own FusedConv instances; Dynamo guards on the module, so one process compiling more than
    its recompile limit (8) of them fails under fullgraph=True. A user compiling one model never meets it."""
    torch._dynamo.reset()
    yield


def _one_per_step():
    cc = torch.cuda.get_device_capability() if torch.cuda.is_available() else (9, 0)
    out, seen = [], set()
    for v in R.kernel_variants():
        if (v.problem, v.step) not in seen and v.runs_on(cc):
            seen.add((v.problem, v.step))
            out.append(v)
    return out


@pytest.mark.parametrize("v", _one_per_step(), ids=lambda v: f"{v.problem}/{v.key}")
def test_opcheck_passes(v):
    prob = P.get(v.problem)
    model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
    w, b, p = P.conv_params(model)
    for shape in prob.odd_shapes[:2]:
        x = prob.make_input(shape, seed=1, dist="randn", device="cuda")
        torch.library.opcheck(O.op(v.problem, v.key), (x, w, b, p))


@pytest.mark.parametrize("pk", list(P.PROBLEMS))
@pytest.mark.parametrize("precision", O.CLASSES)
def test_compiled_fuse_matches_the_truth_within_its_class(pk, precision):
    prob = P.get(pk)
    model = prob.make_model(seed=0, device="cuda")
    fused = O.fuse(model, precision)
    want, _ = O.choose(pk, precision, torch.cuda.get_device_name(), torch.cuda.get_device_capability())
    assert fused.variant == want
    compiled = torch.compile(fused, fullgraph=True)
    for shape in (prob.odd_shapes[0], prob.odd_shapes[-1]):
        x = prob.make_input(shape, seed=2, dist="randn", device="cuda")
        with torch.no_grad():
            y = compiled(x)
            err = verify.compare(y, P.ground_truth(model, x))
        assert verify.within_bounds(err, precision), err
    with pytest.raises(RuntimeError, match="inference-only"):      # the model's parameters require grad
        fused(x)


@pytest.mark.parametrize("pk", list(P.PROBLEMS))
def test_fused_is_timed_beside_eager_and_compile_in_one_run(pk):
    out = bench.time_fused(P.get(pk), "tf32", n_timed=5, log=lambda m: None)
    assert set(out["rows"]) == {"eager", "compile", "fused", "fused_compiled"}
    for name, row in out["rows"].items():
        assert row["within_bound"], (name, row)
        assert row["median_ms"] > 0


def _family_keys():
    from convfuse.family import models as FM
    return [k for k in FM.FAMILY if k not in P.PROBLEMS]       # the study's two take the hand-tuned path above


@pytest.mark.parametrize("key", _family_keys())
@pytest.mark.parametrize("precision", O.CLASSES)
def test_fuse_runs_every_other_family_model_within_its_class_compiled(key, precision):
    """convfuse.fuse on the family's other seven: the generated kernel of the class's design on this GPU, as one graph
    node under
    torch.compile(fullgraph=True), against the float64 model on two odd shapes."""
    from convfuse.family import models as FM
    from convfuse.family import template as FT

    prob = FM.get(key)
    model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
    fused = O.fuse(model, precision)
    chosen = O.family_design(precision, prob.dims, torch.cuda.get_device_name(), torch.cuda.get_device_capability())
    assert isinstance(fused, FT.FusedFamily) and (fused.design, fused.why) == chosen
    compiled = torch.compile(fused, fullgraph=True)
    for shape in (prob.odd_shapes[0], prob.odd_shapes[-1]):
        x = prob.make_input(shape, seed=2, dist="randn", device="cuda")
        with torch.no_grad():
            err = verify.compare(compiled(x), P.ground_truth(model, x))
        assert verify.within_bounds(err, precision), (shape, err)
