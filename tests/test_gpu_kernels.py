"""GPU suite (`make gpu-test` on a GPU box): every kernel variant x every odd shape passes the
verification protocol; bad calls are refused on the GPU too; batch 0 gives an empty result."""
import pytest
import torch

from convfuse import problems as P
from convfuse import registry as R
from convfuse import verify as V

pytestmark = pytest.mark.gpu
KERNELS = R.kernel_variants()


@pytest.fixture(scope="session")
def mods():
    from convfuse import build

    return build.build_all(KERNELS)


@pytest.fixture(scope="session")
def models():
    return {k: p.make_model(seed=0, device="cuda").requires_grad_(False) for k, p in P.PROBLEMS.items()}


def _skip_unless_it_runs_here(v):
    if not v.runs_on(torch.cuda.get_device_capability()):    # sm_90a-only code (step 04b) elsewhere
        pytest.skip(f"{v.problem}/{v.key} does not run on {torch.cuda.get_device_name()}")


@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
def test_odd_shapes_pass_the_protocol(v, mods, models):
    _skip_unless_it_runs_here(v)
    prob = P.get(v.problem)
    run = R.kernel_runner(v, mods[(v.problem, v.key)])
    checks = V.run_checks(prob, models[v.problem], {v.key: run}, {v.key: v.precision}, shapes=prob.odd_shapes)
    bad = [c for c in checks if not c.passed]
    assert not bad, bad[:3]


@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
def test_batch_zero_and_refusals_on_gpu(v, mods, models, bad_input_cases):
    """Batch 0 gives an empty result; each bad input of issue 6 is refused clearly, on CUDA tensors."""
    _skip_unless_it_runs_here(v)
    prob = P.get(v.problem)
    run = R.kernel_runner(v, mods[(v.problem, v.key)])
    w, b, p = P.conv_params(models[v.problem])
    empty = torch.empty((0,) + tuple(prob.odd_shapes[0][1:]), device="cuda")
    y = run(empty, w, b, p)
    assert y.shape == prob.output_shape(empty.shape) and y.numel() == 0
    ok = dict(x=prob.make_input(prob.odd_shapes[0], device="cuda"), weight=w, bias=b, param=p)
    # a clear error, raised before any launch
    for exc, pattern, over in bad_input_cases(prob, ok) + [(ValueError, "CUDA tensor", dict(x=ok["x"].cpu()))]:
        a = dict(ok, **over)
        with pytest.raises(exc, match=pattern):
            run(a["x"], a["weight"], a["bias"], a["param"])
    torch.cuda.synchronize()   # and nothing was left broken on the device


@pytest.mark.parametrize("v", [v for v in KERNELS if v.needs_cc is not None], ids=lambda v: f"{v.problem}/{v.key}")
def test_refused_on_a_gpu_it_cannot_run_on(v, mods, models):
    """On any other GPU an arch-specific variant (sm_90a: step 04b) refuses the call with a clear error."""
    if v.runs_on(torch.cuda.get_device_capability()):
        pytest.skip(f"{v.problem}/{v.key} runs on {torch.cuda.get_device_name()}")
    prob = P.get(v.problem)
    run = R.kernel_runner(v, mods[(v.problem, v.key)])
    x = prob.make_input(prob.odd_shapes[0], device="cuda")
    with pytest.raises(RuntimeError, match="compute capability"):
        run(x, *P.conv_params(models[v.problem]))
