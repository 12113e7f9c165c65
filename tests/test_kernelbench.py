"""KernelBench's verdict (convfuse/kernelbench.py): its seeds, its trials on the CPU with small odd shapes,
the record field's arithmetic, and the timer on a GPU."""
import math

import pytest
import torch
import torch.nn.functional as F

from convfuse import kernelbench as KB
from convfuse import problems as P


def _functional(x, w, b, p, out=None):
    """The model computed from (x, weight, bias, param) alone, as a kernel variant is called."""
    if x.dim() == 4:
        y = F.gelu(F.leaky_relu(F.conv2d(x, w, b) * p, 0.01))
    else:
        y = F.gelu(torch.clamp(F.leaky_relu(F.conv3d(x, w, b), 0.2) + p, -1, 1))
    out.copy_(y)
    return out


def test_trial_seeds_are_kernelbenchs():
    with torch.random.fork_rng():
        torch.manual_seed(42)
        want = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(5)]
        before = torch.get_rng_state()
        assert KB.trial_seeds() == want
        assert torch.equal(torch.get_rng_state(), before)      # the global RNG is left alone
    assert KB.trial_seeds() == KB.trial_seeds() and len(set(want)) == 5
    assert KB.trial_seeds(3, seed=7) != KB.trial_seeds(3)


@pytest.mark.parametrize("prob", [P.CONV2D, P.CONV3D], ids=lambda p: p.key)
def test_check_passes_the_model_and_fails_offsets_and_nans(prob):
    shape = prob.odd_shapes[1]
    model = prob.make_model(seed=0).requires_grad_(False)    # not seed 42: check() loads KernelBench's parameters
    seen = []

    def itself(x, w, b, p, out=None):
        seen.append(x.clone())
        return model(x)

    runners = {
        "itself": itself,
        "functional": _functional,
        "plus_1e-3": lambda x, w, b, p, out=None: _functional(x, w, b, p, out).add_(1e-3),
        "nan": lambda x, w, b, p, out=None: out,                  # writes nothing: the poison stays
    }
    res = KB.check(prob, runners, device="cpu", shape=shape, model=model)
    assert res["itself"] == {"pass": True, "trials": 5, "passed": 5, "max_abs_vs_eager": 0.0, "nonfinite": 0}
    assert res["functional"]["pass"] and res["functional"]["max_abs_vs_eager"] < 1e-5
    assert not res["plus_1e-3"]["pass"] and res["plus_1e-3"]["passed"] == 0
    assert res["plus_1e-3"]["max_abs_vs_eager"] == pytest.approx(1e-3, rel=1e-2)
    assert not res["nan"]["pass"] and res["nan"]["nonfinite"] == 5
    # KernelBench's parameters (seed 42) and inputs (CPU torch.rand after manual_seed(trial seed))
    ref = prob.make_model(seed=42)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), ref.parameters()))
    with torch.random.fork_rng():
        for x, seed in zip(seen, KB.trial_seeds()):
            torch.manual_seed(seed)
            assert torch.equal(x, torch.rand(shape))


def test_check_without_model_and_wrong_shape():
    shape = P.CONV2D.odd_shapes[1]
    res = KB.check(P.CONV2D, {"f": _functional, "short": lambda x, w, b, p, out=None: out[:, :, :-1]},
                   device="cpu", trials=2, shape=shape)
    assert res["f"]["pass"] and res["f"]["trials"] == 2
    assert not res["short"]["pass"] and math.isinf(res["short"]["max_abs_vs_eager"])


def test_verdicts_speedup_flag_and_missing_keys():
    chk = {"eager": {"pass": True, "trials": 5, "passed": 5, "max_abs_vs_eager": 0.0, "nonfinite": 0},
           "k": {"pass": True, "trials": 5, "passed": 5, "max_abs_vs_eager": 2e-5, "nonfinite": 0},
           "fast": {"pass": False, "trials": 5, "passed": 0, "max_abs_vs_eager": 0.3, "nonfinite": 5},
           "untimed": {"pass": True, "trials": 5, "passed": 5, "max_abs_vs_eager": 1e-6, "nonfinite": 0}}
    ms = {"eager": 6.0, "k": 1.0, "fast": 0.5, "unchecked": 12.0}
    v = KB.verdicts(chk, ms)
    assert v["eager"]["speedup_vs_eager"] == 1.0 and not v["eager"]["suspect"]
    assert v["k"] == {"pass": True, "trials": 5, "max_abs_vs_eager": 2e-5, "mean_ms": 1.0, "n_timed": 100,
                      "speedup_vs_eager": 6.0, "suspect": False}
    assert v["fast"]["speedup_vs_eager"] == 12.0 and v["fast"]["suspect"] and not v["fast"]["pass"]
    assert v["untimed"] == {"pass": True, "trials": 5, "max_abs_vs_eager": 1e-6}
    assert v["unchecked"] == {"mean_ms": 12.0, "n_timed": 100, "speedup_vs_eager": 0.5, "suspect": False}
    assert KB.verdicts(chk, {"k": 1.0})["k"] == {**{f: chk["k"][f] for f in ("pass", "trials", "max_abs_vs_eager")},
                                                 "mean_ms": 1.0, "n_timed": 100}    # no eager timed: no ratio
    assert KB.verdicts(chk, {"eager": 10.0, "k": 1.0})["k"]["suspect"] is False     # exactly 10x: not above
    line = KB.describe(v["fast"])
    assert "FAIL" in line and "12.00x eager" in line and "flagged suspect" in line
    assert KB.describe(v["k"]) == "KernelBench: pass (5/5 allclose 1e-4 vs eager), 1 ms mean of 100, 6.00x eager"
    assert KB.describe(v["untimed"]).startswith("KernelBench: pass (5/5") and KB.describe({}) == "KernelBench: not run"


def test_constants_are_kernelbenchs():
    assert KB.TOL == 1e-4 and KB.TRIALS == 5 and KB.N_TIMED == 100 and KB.SUSPECT_SPEEDUP == 10.0


@pytest.mark.gpu
def test_time_mean_flushes_before_every_call():
    calls = []
    a = torch.rand(2**20, device="cuda")
    ms = KB.time_mean({"x": lambda: calls.append("x") or a.mul_(1.0), "y": lambda: calls.append("y") or a.add_(0)},
                      n_timed=10, n_warmup=2, flush=lambda: calls.append("f"))
    assert set(ms) == {"x", "y"} and all(m > 0 for m in ms.values())
    assert calls == ["x"] * 2 + ["f", "x"] * 10 + ["y"] * 2 + ["f", "y"] * 10    # one at a time, flushed each call
