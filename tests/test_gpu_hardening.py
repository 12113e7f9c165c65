"""GPU hardening suite (issue 6), `pytest -m gpu`: special values, repeatability, huge tensors.

Its first run (H200, 2026-11-29) found both 3xtf32 kernels turning an input +-Inf into NaN (the split's small part
was Inf - Inf; fixed in dfa104b). The >2^31-element test writes each variant's outcome, "ok" (ran, and the last images
match eager) or "refused" (a clear error), with the machine code it ran (results.machine_code), to
$CONVFUSE_LARGE_TENSOR_JSON, else to build/large_tensor.json and into this GPU's record (results/<gpu-slug>.json), as
the `large_tensor` field of each kernel record. The suite's counts reach the record from its pytest output
(`python -m convfuse.results merge-hardening --gpu-hardening-tests LOG`, or `make bench` with the device session's
outputs): the record's `hardening.gpu_hardening_tests`.
"""
import datetime as _dt
import json
import os
from pathlib import Path

import pytest
import torch

from convfuse import problems as P
from convfuse import registry as R
from convfuse import results as RS
from convfuse import verify as V

pytestmark = pytest.mark.gpu
# CONVFUSE_HARDEN_VARIANTS="conv2d:04e_wino_3xtf32,...": only these (a prepared kernel's first device call, which
# should not build every registered one), and the large-tensor outcomes to $CONVFUSE_LARGE_TENSOR_JSON, not the record's
_ONLY = [s.split(":") for s in os.environ.get("CONVFUSE_HARDEN_VARIANTS", "").split(",") if s]
KERNELS = [R.get(p, k) for p, k in _ONLY] if _ONLY else R.kernel_variants()
LARGE_TENSOR_JSON = Path(os.environ.get("CONVFUSE_LARGE_TENSOR_JSON") or RS.ROOT / "build" / "large_tensor.json")
# a plain run records the outcomes on this GPU's record; a redirected or candidate run only writes its JSON
TO_RECORD = not (os.environ.get("CONVFUSE_LARGE_TENSOR_JSON") or _ONLY)


@pytest.fixture(scope="module")
def mods():
    from convfuse import build

    return build.build_all(KERNELS)


def prob_shape(v):
    return P.get(v.problem).odd_shapes[1]


def _skip_unless_it_runs_here(v):
    runs_on = getattr(v, "runs_on", None)       # sm_90a-only variants name the GPU they need
    if runs_on is not None and not runs_on(torch.cuda.get_device_capability()):
        pytest.skip(f"{v.problem}/{v.key} does not run on {torch.cuda.get_device_name()}")


def _setup(v, shape=None, seed=0):
    prob = P.get(v.problem)
    model = prob.make_model(seed=seed, device="cuda").requires_grad_(False)
    x = prob.make_input(shape or prob.odd_shapes[0], seed=seed, device="cuda")
    return prob, model, x


def _classes(t: torch.Tensor) -> torch.Tensor:
    """0 finite, 1 NaN, 2 +Inf, 3 -Inf: what 'propagates as eager does' compares."""
    c = torch.zeros_like(t, dtype=torch.int8)
    c[torch.isnan(t)] = 1
    c[t == float("inf")] = 2
    c[t == float("-inf")] = 3
    return c


@pytest.mark.parametrize("special", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_special_values_propagate_like_eager(v, special, mods):
    _skip_unless_it_runs_here(v)
    prob, model, x = _setup(v)
    flat = x.view(-1)
    idx = torch.randperm(flat.numel(), device="cuda", generator=torch.Generator("cuda").manual_seed(1))[:5]
    flat[idx] = float(special)
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        want = model(x)
    got = R.kernel_runner(v, mods[(v.problem, v.key)])(x, *P.conv_params(model))
    mism = (_classes(got) != _classes(want)).sum().item()
    assert mism == 0, f"{mism} outputs differ from eager in NaN/Inf class"


def _store_path_shapes(v):
    """An odd shape (stores from registers) and the sanitizer's shapes, whose tiles take the copy-engine stores."""
    prob = P.get(v.problem)
    return [prob.odd_shapes[0], *prob.sanitize_shapes]


@pytest.mark.parametrize("special", ["nan", "inf"])
@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_special_values_leave_every_output_written_and_in_bounds(v, special, mods):
    """A few Inf or NaN inputs send the FP16-operand kernels' tiles down their FP32 path: every output must still be
    written (the buffer is poisoned with NaN), NaN where float64 is, and within the precision's bound elsewhere, on
    every store path, the copy engine's included (a warp-collective store, which one thread leaving alone breaks)."""
    _skip_unless_it_runs_here(v)
    run = R.kernel_runner(v, mods[(v.problem, v.key)])
    for shape in _store_path_shapes(v):
        prob, model, x = _setup(v, shape=shape)
        flat = x.view(-1)
        idx = torch.randperm(flat.numel(), device="cuda", generator=torch.Generator("cuda").manual_seed(2))[:5]
        flat[idx] = float(special)
        out = V.poisoned(prob.output_shape(shape), "cuda")
        got = run(x, *P.conv_params(model), out=out)
        m = V.compare(got, P.ground_truth(model, x))
        assert V.within_bounds(m, v.precision), f"{shape}: {m}"


@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_large_magnitudes_do_not_overflow_where_eager_does_not(v, mods):
    _skip_unless_it_runs_here(v)
    prob, model, x = _setup(v)
    x = x * 1e30                                   # products ~1e29, sums far from FP32's 3.4e38
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        want = model(x)
    got = R.kernel_runner(v, mods[(v.problem, v.key)])(x, *P.conv_params(model))
    bad = torch.isfinite(want) & ~torch.isfinite(got)
    assert not bad.any(), f"{bad.sum().item()} outputs overflow where eager's are finite"


@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_bit_identical_over_ten_runs(v, mods):
    _skip_unless_it_runs_here(v)
    prob, model, x = _setup(v, shape=prob_shape(v))
    run = R.kernel_runner(v, mods[(v.problem, v.key)])
    first = run(x, *P.conv_params(model))
    for _ in range(9):
        again = run(x, *P.conv_params(model))
        assert torch.equal(first, again), "output changed between runs on the same input"


# Beyond 2^31 elements: conv2d's input from batch 513, conv3d's output from batch 624 (~9 GB each).
LARGE_BATCH = {"conv2d": 513, "conv3d": 624}
REFUSAL_WORDS = ("2^31", "grid", "too many", "exceeds")


@pytest.fixture(scope="module")
def large_tensor_log():
    """Collects each variant's outcome; written at the end of the module, merged into the file's entries
    for the other variants (a -k run updates its own)."""
    entries = {}
    yield entries
    if not entries:
        return
    data = json.loads(LARGE_TENSOR_JSON.read_text()) if LARGE_TENSOR_JSON.exists() else {}
    for (problem, key), e in entries.items():
        data.setdefault(problem, {})[key] = e
    data["env"] = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
                   "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                   "test": "tests/test_gpu_hardening.py::test_tensors_beyond_2_31_elements_run_or_are_refused"}
    LARGE_TENSOR_JSON.parent.mkdir(parents=True, exist_ok=True)
    LARGE_TENSOR_JSON.write_text(json.dumps(data, indent=1) + "\n")
    if TO_RECORD and RS.device_path().exists():
        rec = RS.load(RS.device_path())
        RS.apply_hardening(rec, {"large_tensor": data})
        RS.save(rec, RS.device_path())


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_tensors_beyond_2_31_elements_run_or_are_refused(v, mods, large_tensor_log):
    _skip_unless_it_runs_here(v)
    prob = P.get(v.problem)
    shape = (LARGE_BATCH[prob.key],) + tuple(prob.input_shape[1:])
    entry = {"large_tensor": "error", "batch": shape[0], "input_elements": _numel(shape),
             "output_elements": _numel(prob.output_shape(shape)), "machine_code": RS.machine_code(v),
             "gpu": torch.cuda.get_device_name(),
             "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    large_tensor_log[(v.problem, v.key)] = entry       # "error" stands unless the call says otherwise
    model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
    x = torch.rand(shape, device="cuda")
    run = R.kernel_runner(v, mods[(v.problem, v.key)])
    try:
        y = run(x, *P.conv_params(model))
    except (ValueError, RuntimeError) as e:        # a clear refusal is acceptable
        entry["message"] = str(e)[:500]
        clear = any(w in str(e) for w in REFUSAL_WORDS)
        entry["large_tensor"] = "refused" if clear else "error"
        assert clear, str(e)
        return
    # check the last images, where 32-bit offsets would have wrapped
    tail = slice(shape[0] - 2, shape[0])
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        want = model(x[tail])
    tol = 1e-4 if v.precision in V.FP32_ACCURATE else 1e-2     # tf32 and fp16 (TF32's significand): 1e-2
    entry["max_abs_diff_last_images"] = (y[tail] - want).abs().max().item()
    entry["large_tensor"] = "wrong"
    torch.testing.assert_close(y[tail], want, atol=tol, rtol=tol)
    entry["large_tensor"] = "ok"


SCALE_SWEEP_JSON = Path(os.environ.get("CONVFUSE_SCALE_SWEEP_JSON") or RS.ROOT / "build" / "scale_sweep.json")


@pytest.fixture(scope="module")
def scale_sweep_log():
    """Each variant's worst rel-L2 and max-abs per (bias, scale), at every scale (checked or not), written at the end of
    the module beside the machine code it ran: what results/predictions/scales-*.json is read against."""
    entries = {}
    yield entries
    if not entries:
        return
    data = json.loads(SCALE_SWEEP_JSON.read_text()) if SCALE_SWEEP_JSON.exists() else {}
    for (problem, key), e in entries.items():
        data.setdefault(problem, {})[key] = e
    data["env"] = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
                   "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                   "test": "tests/test_gpu_hardening.py::test_class_holds_at_every_input_scale"}
    SCALE_SWEEP_JSON.parent.mkdir(parents=True, exist_ok=True)
    SCALE_SWEEP_JSON.write_text(json.dumps(data, indent=1) + "\n")


@pytest.mark.parametrize("bias", V.BIAS_MODES)
@pytest.mark.parametrize("v", KERNELS, ids=lambda v: f"{v.problem}/{v.key}")
@torch.no_grad()
def test_class_holds_at_every_input_scale(v, bias, mods, scale_sweep_log):
    """Issue 66: inputs at each decade of verify.SCALES (1e-6 to 1e3), with the model's bias and with bias zeroed, on two
    odd shapes: the class bound at every scale the variant's class states (verify.held_scales: CLASS_SCALES and the
    registry's input_scales, the CPU model's held_range). The other scales run too and are logged, not asserted: the
    model's predicted failures (results/predictions/scales-*.json) are read against them."""
    _skip_unless_it_runs_here(v)
    prob = P.get(v.problem)
    held = V.held_scales(v.problem, v.precision, v.input_scales)
    model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
    checks = V.run_checks(prob, model, {v.key: R.kernel_runner(v, mods[(v.problem, v.key)])}, {v.key: v.precision},
                          shapes=prob.odd_shapes[:2], trials=V.sweep_trials(bias_modes=(bias,)))
    assert {c.scale for c in checks} == set(V.SCALES)
    if (v.problem, v.key) not in scale_sweep_log:
        scale_sweep_log[(v.problem, v.key)] = {"precision": v.precision, "checked_scales": list(held),
                                               "machine_code": RS.machine_code(v)}
    e = scale_sweep_log[(v.problem, v.key)]
    for c in checks:
        cell = e.setdefault(bias, {}).setdefault(f"{c.scale:g}", {"rel_l2": 0.0, "max_abs": 0.0, "passed": True})
        cell["rel_l2"], cell["max_abs"] = max(cell["rel_l2"], c.rel_l2), max(cell["max_abs"], c.max_abs)
        cell["passed"] = cell["passed"] and c.passed
    bad = [(c.shape, c.scale, f"{c.rel_l2:.1e}", f"{c.max_abs:.1e}") for c in checks if c.scale in held and not c.passed]
    assert not bad, bad
