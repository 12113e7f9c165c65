"""KernelBench's own verdict on a variant, beside our stricter protocol (verify.py, bench.py).

KernelBench (src/kernelbench/eval.py, run_and_check_correctness and the cuda_event timer) judges a
kernel by 5 trials of ``torch.allclose(out, eager_out, atol=1e-4, rtol=1e-4)`` and by the mean of 100
CUDA-event timings, and flags a speed-up over eager above 10x as suspect. Where its rules differ from ours:

- truth: ours is the model in float64; theirs is eager PyTorch in FP32 on the same GPU, with PyTorch's
  defaults: cuDNN may use TF32 (``torch.backends.cudnn.allow_tf32`` is True), as it does for conv2d. So an
  FP32-exact kernel can miss their 1e-4 by eager's own TF32 error, and a TF32 kernel that rounds as cuDNN
  does can pass theirs while failing our bound.
- bounds: ours per precision class (max-abs and rel-L2 against float64); theirs one allclose for all.
- trials: ours draw fresh parameters and inputs (rand and randn) each trial, on odd shapes too; theirs keep
  one model, initialised from seed 42, and draw only the input anew each trial: ``torch.rand`` of the
  full shape on the CPU, seeded with the trial's seed (5 seeds drawn after ``torch.manual_seed(42)``).
- timing: ours median, p20 and p80 of interleaved rounds; theirs the mean of 100 calls of one model at a
  time, L2 flushed before each, the host synchronised after each (so launch latency counts).
NaN-poisoned output buffers are ours, kept here: an element nothing wrote fails, as in verify.py.
"""
from __future__ import annotations

import statistics

import torch

from . import problems as P
from . import verify
from .timing import L2Flush, time_each

TRIALS = 5
N_TIMED = 100
N_WARMUP = 3
TOL = verify.KERNELBENCH_TOL
SUSPECT_SPEEDUP = 10.0
INIT_SEED = 42      # KernelBench's seed_num: the models' parameters, and the source of the trial seeds


def trial_seeds(n: int = TRIALS, seed: int = INIT_SEED) -> list[int]:
    """The trial seeds KernelBench draws: manual_seed(seed), then randint(0, 2**32 - 1) n times.
    Drawn from a generator of its own, so the global RNG is left as it was."""
    gen = torch.Generator().manual_seed(seed)
    return [int(torch.randint(0, 2**32 - 1, (1,), generator=gen).item()) for _ in range(n)]


@torch.no_grad()
def check(problem: P.Problem, runners: dict, device="cuda", trials: int = TRIALS, shape=None,
          model: torch.nn.Module | None = None) -> dict:
    """KernelBench's correctness trials: {key: {"pass", "trials", "passed", "max_abs_vs_eager", "nonfinite"}}.

    runners: {key: callable(x, weight, bias, param, out=None) -> y}, as verify.run_checks takes them; each
    gets a NaN-poisoned `out`. One model serves every trial, as in KernelBench: its parameters are those of
    ``problem.make_model(seed=42)``. If `model` is given (reference runners built over it, such as
    registry.reference_runner's), those parameters are copied into it in place, so that every runner
    computes from them; without it, a fresh model is made, and the runners must compute from (x, weight,
    bias, param) alone. Each trial draws x with its seed as KernelBench's get_inputs() does (torch.rand of
    `shape`, default the problem's, on the CPU), moves it to `device`, and compares every runner with
    eager_out = model(x) under the current backend flags (PyTorch's defaults unless the caller changed them).
    "nonfinite" counts the trials whose output has a NaN or Inf where eager's is finite; "max_abs_vs_eager" is
    the worst |y - eager_out| over the elements where both are finite (inf for a wrong output shape).
    """
    shape = tuple(shape or problem.input_shape)
    ref = problem.make_model(seed=INIT_SEED, device=device).requires_grad_(False)
    if model is None:
        model = ref
    else:
        for dst, src in zip(model.parameters(), ref.parameters()):
            dst.copy_(src)
    w, b, p = P.conv_params(model)
    res = {k: {"pass": True, "trials": 0, "passed": 0, "max_abs_vs_eager": 0.0, "nonfinite": 0} for k in runners}
    for seed in trial_seeds(trials):
        x = problem.make_input(shape, seed=seed, dist="rand", device="cpu").to(device)
        eager_out = model(x)
        for key, run in runners.items():
            out = verify.poisoned(problem.output_shape(shape), device)
            y = run(x, w, b, p, out=out)
            y = out if y is None else y
            r = res[key]
            r["trials"] += 1
            if tuple(y.shape) != tuple(eager_out.shape):
                r["pass"], r["max_abs_vs_eager"] = False, float("inf")
                continue
            ok = bool(torch.allclose(y, eager_out, atol=TOL, rtol=TOL))
            fin = torch.isfinite(eager_out)
            both = fin & torch.isfinite(y)
            r["nonfinite"] += int(bool((fin & ~both).any()))
            diff = torch.where(both, (y - eager_out).abs(), 0.0)     # FP32: exact enough, half the memory
            r["max_abs_vs_eager"] = max(r["max_abs_vs_eager"], float(diff.max()) if diff.numel() else 0.0)
            r["passed"] += ok
            r["pass"] = r["pass"] and ok
            del y, out, diff
        del x, eager_out
    return res


@torch.no_grad()
def time_mean(fns: dict, n_timed: int = N_TIMED, n_warmup: int = N_WARMUP, flush=None) -> dict:
    """{key: callable()} -> {key: mean ms}: each callable timed on its own, as KernelBench times one model
    at a time: n_warmup calls, then n_timed calls, each after an L2 flush, between CUDA events, the host
    synchronised after each call."""
    flush = flush or L2Flush()
    return {key: statistics.fmean(time_each(fn, n_timed, n_warmup, flush)) for key, fn in fns.items()}


def verdicts(check_result: dict, mean_ms: dict, eager_key: str = "eager", n_timed: int = N_TIMED) -> dict:
    """The record's `kernelbench` field per key: {"pass", "trials", "max_abs_vs_eager"} from check(),
    {"mean_ms", "n_timed"} from time_mean(), {"speedup_vs_eager", "suspect"} where both the key and eager
    were timed. A key missing from one input gets only the fields the other gives."""
    out = {}
    for key in list(check_result) + [k for k in mean_ms if k not in check_result]:
        v = {}
        if key in check_result:
            c = check_result[key]
            v.update({"pass": bool(c["pass"]), "trials": c["trials"], "max_abs_vs_eager": c["max_abs_vs_eager"]})
        if key in mean_ms:
            v.update({"mean_ms": mean_ms[key], "n_timed": n_timed})
            if eager_key in mean_ms and mean_ms[key] > 0:
                s = mean_ms[eager_key] / mean_ms[key]
                v.update({"speedup_vs_eager": s, "suspect": s > SUSPECT_SPEEDUP})
        out[key] = v
    return out


def describe(v: dict) -> str:
    """One line, e.g. 'KernelBench: pass (5/5 allclose 1e-4 vs eager), 0.97 ms mean, 6.3x eager'."""
    parts, tol = [], f"{TOL:.0e}".replace("e-0", "e-")
    if "pass" in v:
        n = v["trials"]
        parts.append(f"pass ({n}/{n} allclose {tol} vs eager)" if v["pass"] else
                     f"FAIL (not allclose {tol} vs eager in all {n} trials; max |out - eager| "
                     f"{v['max_abs_vs_eager']:.1e})")
    if "mean_ms" in v:
        parts.append(f"{v['mean_ms']:.3g} ms mean of {v['n_timed']}")
    if "speedup_vs_eager" in v:
        flag = f" — over {SUSPECT_SPEEDUP:g}x, flagged suspect" if v["suspect"] else ""
        parts.append(f"{v['speedup_vs_eager']:.2f}x eager{flag}")
    return "KernelBench: " + (", ".join(parts) if parts else "not run")
