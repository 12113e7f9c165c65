"""The timing protocol (DESIGN.md) and the run that writes results/<gpu-slug>.json.

CUDA events around each call; warm-up first (builds, cuDNN heuristics, torch.compile stay out); L2
flushed before every timed call; >= 20 timed calls; median, p20, p80. Variants are timed in
interleaved rounds (one call of each per round), so a clock or neighbour drift hits every variant
alike, and every ratio is taken inside one process. Ceilings are measured in the same run.
"""
from __future__ import annotations

import datetime as _dt
import platform
import subprocess
import time

import torch

from . import problems as P
from . import registry as R
from . import cudnn_fused, kernelbench, power, results, traffic, verify
from .timing import N_TIMED, L2Flush, time_interleaved



def _log(msg):
    print(msg, flush=True)


@torch.no_grad()
def measure_ceilings(log=_log) -> dict:
    """Copy bandwidth (bytes read + written) and FP32 / TF32 matmul rates on this GPU."""
    n = 2**29                                    # 2 GiB each way: 4 GiB moved per copy
    src = torch.rand(n, device="cuda")
    dst = torch.empty_like(src)
    copy = time_interleaved({"copy": lambda: dst.copy_(src)}, n_timed=20, n_warmup=3, log=lambda m: None)
    copy_gbps = 2 * n * 4 / (copy["copy"]["median_ms"] * 1e-3) / 1e9
    del src, dst
    m = 8192
    a, b = torch.randn(m, m, device="cuda"), torch.randn(m, m, device="cuda")
    rates = {}
    old = torch.backends.cuda.matmul.allow_tf32
    try:
        for name, tf32 in (("fp32", False), ("tf32", True)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            t = time_interleaved({name: lambda: a @ b}, n_timed=10, n_warmup=2, log=lambda m: None)
            rates[name] = 2 * m**3 / (t[name]["median_ms"] * 1e-3) / 1e12
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    out = {"copy_gbps": round(copy_gbps, 1), "fp32_tflops": round(rates["fp32"], 2),
           "tf32_tflops": round(rates["tf32"], 1)}
    log(f"[bench] ceilings: copy {out['copy_gbps']} GB/s, FP32 {out['fp32_tflops']} TFLOP/s, "
        f"TF32 {out['tf32_tflops']} TFLOP/s")
    return out


def environment() -> dict:
    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:
        driver = None
    return {
        "gpu": props.name, "slug": results.slug(props.name), "sm_count": props.multi_processor_count,
        "l2_mb": round(props.L2_cache_size / 2**20), "memory_gb": round(props.total_memory / 1e9, 1),
        "capability": f"{props.major}.{props.minor}",
        "torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
        "driver": driver, "python": platform.python_version(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
    }


def _resource_fields(v: R.Variant) -> dict:
    from . import build

    try:
        # the Hopper target this run's GPU executes: sm_90a for wgmma variants, else sm_90
        arch = next((a for a in v.archs if a.startswith("90")), v.archs[-1])
        usage = build.main_kernel_usage(build.resource_usage(v, arch=arch))
        return {"registers": usage.get("registers"), "smem_bytes": usage.get("smem_bytes"),
                "spill_bytes": usage.get("spill_stores", 0) + usage.get("spill_loads", 0), "ptxas_arch": arch}
    except Exception as e:   # a missing nvcc must not lose a run's timings
        return {"registers": None, "smem_bytes": None, "resource_error": str(e)[:200]}


def _cudnn_runners(problem: P.Problem, model, log=_log, notes: dict | None = None) -> dict:
    """{"cudnn_fused": runner, "cudnn_fused_nchw": runner} with every plan cuDNN offers for the KernelBench shape timed
    and the fastest kept; {} with a one-line note where the frontend is missing or cuDNN refuses the graph."""
    try:
        cl = cudnn_fused.Runner(problem, nchw=False)
        nchw = cudnn_fused.Runner(problem, nchw=True, graphs=cl.graphs)
        x = problem.make_input(seed=0, device="cuda")
        g = cl.graph(x.shape)
        plans = g.tune(cl.args(x, *P.conv_params(model)), flush=L2Flush())
    except Exception as e:   # Unavailable says why; anything else from the frontend must not lose the run
        status, why = cudnn_fused.status(e)
        log(f"[bench] {problem.key}: cuDNN's fused graph {status}: {why}")
        if notes is not None:
            notes[problem.key] = {"status": status, "message": why}
        return {}
    best = min(plans, key=plans.get)
    log(f"[bench] {problem.key}: cuDNN's fused graph: {len(g.names)} plans offered, {len(g.built)} built, fastest "
        f"{best} {plans[best]:.3f} ms" + (f"; declined: {'; '.join(g.declined)}" if g.declined else ""))
    if notes is not None:
        notes[problem.key] = {"status": "ok", "message": f"{len(g.built)} of {len(g.names)} plans built; kept {best}"}
    return {"cudnn_fused": cl, "cudnn_fused_nchw": nchw}


@torch.no_grad()
def bench_problem(problem: P.Problem, keys=None, mods=None, verify_odd=True, n_timed=N_TIMED, log=_log,
                  board: dict | None = None, cudnn_notes: dict | None = None) -> list[dict]:
    """Verify (full problem + odd shapes) and time every variant of one problem; records out. `board`, where given,
    gets board[problem.key]: the SM clock, power and power-cap share nvidia-smi sampled over the interleaved timing
    (convfuse.power; None without nvidia-smi), since the clocks are left alone and the board's power limit sets them."""
    # reference rows always run: every ratio is taken against them in this same process
    cc = torch.cuda.get_device_capability()
    variants = [v for v in R.all_variants(problem.key) if v.kind == "reference"
                or ((keys is None or v.key in keys) and v.runs_on(cc))]
    model = problem.make_model(seed=0, device="cuda")
    model.requires_grad_(False)
    cudnn_rows = _cudnn_runners(problem, model, log=log, notes=cudnn_notes)
    variants = [v for v in variants if not v.key.startswith("cudnn_fused") or v.key in cudnn_rows]
    runners, precisions = {}, {}
    for v in variants:
        if v.key in cudnn_rows:
            runners[v.key] = cudnn_rows[v.key]
        else:
            runners[v.key] = R.kernel_runner(v, mods[(v.problem, v.key)]) if v.is_kernel else R.reference_runner(v, model)
        precisions[v.key] = v.precision
    checked = {k: r for k, r in runners.items() if k != "cudnn_conv"}

    log(f"[verify] {problem.key}: full problem {problem.input_shape}, {len(verify.TRIALS)} trials, "
        f"{len(checked)} variants")
    full = verify.run_checks(problem, model, checked, precisions, log=log)
    odd = []
    if verify_odd:
        kernel_runners = {k: r for k, r in checked.items() if k not in ("compile",)}
        odd = verify.run_checks(problem, model, kernel_runners, precisions, shapes=problem.odd_shapes, log=None)
        # the input-scale sweep (issue 66) on two odd shapes, each variant at the scales its class states
        held = {v.key: verify.held_scales(problem.key, v.precision, v.input_scales) for v in variants}
        odd += verify.run_checks(problem, model, kernel_runners, precisions, shapes=problem.odd_shapes[:2],
                                 trials=verify.sweep_trials(), log=None, scales=held)
        bad = [c for c in odd if not c.passed]
        log(f"[verify] {problem.key}: odd shapes {list(problem.odd_shapes)} (and inputs x {verify.SCALES[0]:g} .. "
            f"{verify.SCALES[-1]:g}, bias kept and zeroed): {len(odd)} checks, {len(bad)} failed")
        for c in bad[:20]:
            log(f"[verify]   FAIL {c.variant} {c.shape} seed={c.seed} {c.dist} x{c.scale:g} bias={c.bias}: "
                f"max_abs={c.max_abs:.2e} rel_l2={c.rel_l2:.2e} nonfinite={c.nonfinite_mismatch}")
    s_full, s_odd = verify.summarize(full), verify.summarize(odd)

    # timing: the KernelBench input, fixed parameters
    verify.reseed(model, problem, 0)
    x = problem.make_input(seed=0, device="cuda")
    w, b, p = P.conv_params(model)
    # cudnn_fused's caller holds x channels_last already; every other row gets the NCHW tensor
    x_cl = cudnn_fused.to_channels_last(x) if "cudnn_fused" in runners else None
    inputs = {k: (x_cl if k == "cudnn_fused" else x) for k in runners}
    fns = {k: (lambda r=r, xi=inputs[k]: r(xi, w, b, p)) for k, r in runners.items()}
    # the epilogue kernels alone, on a precomputed conv output: the step-02 bandwidth goal
    conv_out = P.eager_conv(problem, x, w, None)
    y_buf = torch.empty_like(conv_out)
    for v in variants:
        if v.kind == "epilogue":
            e = R.epilogue_only_runner(v, mods[(v.problem, v.key)])
            fns[f"{v.key}:epilogue_alone"] = lambda e=e: e(conv_out, b, p, y_buf)
    fns["copy_of_conv_output"] = lambda: y_buf.copy_(conv_out)
    log(f"[bench] {problem.key}: timing {len(fns)} callables x {n_timed} interleaved rounds")
    with power.sampling() as smi:
        times = time_interleaved(fns, n_timed=n_timed, log=log)
    if board is not None:
        board[problem.key] = smi.summary()
        if board[problem.key]:
            log(f"[bench] {problem.key} during its timing: {power.describe(board[problem.key])}")
    del conv_out, y_buf
    # KernelBench's own verdict, beside ours: its 5 trials against eager, its mean of 100 one variant at a time
    log(f"[kernelbench] {problem.key}: {kernelbench.TRIALS} trials against eager, then {kernelbench.N_TIMED} timed "
        f"calls of each of {len(checked)} variants")
    kb_ok = kernelbench.check(problem, checked, model=model)
    kb_ms = kernelbench.time_mean({k: fns[k] for k in checked})
    kb = kernelbench.verdicts(kb_ok, kb_ms)
    del x, x_cl

    eager_ms = times["eager"]["median_ms"] if "eager" in times else None
    compile_ms = times["compile"]["median_ms"] if "compile" in times else None
    out_bytes = traffic.FLOAT_BYTES * traffic._numel(problem.output_shape())
    copy_ms = times["copy_of_conv_output"]["median_ms"]
    recs = []
    for v in variants:
        t = times[v.key]
        f = traffic.flops(problem)
        mb = traffic.model_bytes(problem, v.key)
        rec = {"problem": problem.key, "variant": v.key, "step": v.step, "precision": v.precision,
               "kind": v.kind, "title": v.title, **{k: round(val, 5) for k, val in t.items() if k != "n"},
               "n_timed": t["n"],
               "speedup_vs_eager": round(eager_ms / t["median_ms"], 3) if eager_ms else None,
               "speedup_vs_compile": round(compile_ms / t["median_ms"], 3) if compile_ms else None,
               "model_bytes": mb, "flops": f,
               "achieved_gbps": round(mb / (t["median_ms"] * 1e-3) / 1e9, 1),
               "achieved_tflops": round(f / (t["median_ms"] * 1e-3) / 1e12, 2),
               "dram_bytes_measured": None}
        sf, so = s_full.get(v.key), s_odd.get(v.key)
        if sf:
            rec.update(verified=bool(sf["verified"] and (so is None or so["verified"])),
                       verified_full=sf["verified"], verified_odd=None if so is None else so["verified"],
                       max_abs_err_fp64=sf["max_abs_err_fp64"], rel_l2_err_fp64=sf["rel_l2_err_fp64"],
                       kernelbench_pass=sf["kernelbench_pass"], allclose_fp64=sf["allclose_fp64"],
                       verify_checks=sf["checks"] + (so["checks"] if so else 0),
                       max_abs_err_fp64_odd=None if so is None else so["max_abs_err_fp64"],
                       rel_l2_err_fp64_odd=None if so is None else so["rel_l2_err_fp64"])
        else:
            rec.update(verified=None, max_abs_err_fp64=None, rel_l2_err_fp64=None, kernelbench_pass=None)
        if v.key in kb:
            rec["kernelbench"] = kb[v.key]
        if v.key in cudnn_rows:
            rec["cudnn_plan"] = cudnn_rows[v.key].info()
            errors = cudnn_rows[v.key].errors
            if errors:
                rec["cudnn_errors"] = {"x".join(map(str, s)): m for s, m in errors.items()}
        if v.kind == "epilogue":
            ea = times[f"{v.key}:epilogue_alone"]
            rec.update(epilogue_alone_ms=round(ea["median_ms"], 5),
                       epilogue_alone_gbps=round(2 * out_bytes / (ea["median_ms"] * 1e-3) / 1e9, 1),
                       copy_same_bytes_ms=round(copy_ms, 5),
                       epilogue_alone_vs_copy=round(copy_ms / ea["median_ms"], 3))
        if v.is_kernel:
            rec.update(_resource_fields(v))
        recs.append(rec)
    return recs


@torch.no_grad()
def profile_references(problem: P.Problem, keys=("eager", "eager_fp32", "channels_last", "compile", "cudnn_conv"), log=_log) -> dict:
    """torch.profiler over one call of each reference path: which kernels it launches and their times.

    {variant: [{"kernel": name, "calls": n, "cuda_ms": t}]} in launch order (the L2 is not flushed
    inside the profiled call, so per-kernel times are a little under the bench's)."""
    from torch.profiler import ProfilerActivity, profile

    model = problem.make_model(seed=0, device="cuda")
    model.requires_grad_(False)
    x = problem.make_input(seed=0, device="cuda")
    out = {}
    for key in keys:
        fn = R.reference_runner(R.get(problem.key, key), model)
        for _ in range(3):
            fn(x)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn(x)
            torch.cuda.synchronize()
        kernels = []
        for ev in prof.events():
            if ev.device_type == torch.autograd.DeviceType.CUDA:
                dur = getattr(ev, "device_time", None) or getattr(ev, "cuda_time", 0.0)
                kernels.append({"kernel": ev.name, "cuda_ms": round(dur / 1e3, 5), "start_us": ev.time_range.start})
        kernels.sort(key=lambda k: k.pop("start_us"))
        out[key] = kernels
        log(f"[profile] {problem.key}/{key}: {len(kernels)} kernels, "
            f"{sum(k['cuda_ms'] for k in kernels):.3f} ms")
    return out


@torch.no_grad()
def time_fused(problem: P.Problem, precision: str = "tf32", n_timed: int = N_TIMED, log=_log) -> dict:
    """The library face timed as a user meets it, in one run: eager, torch.compile(model), and fuse(model) in eager and
    under torch.compile(fullgraph=True), each checked against the float64 truth within its class's bound first.

    {"variant", "why", "rows": {name: {median_ms, p20_ms, p80_ms, n, rel_l2_err_fp64, max_abs_err_fp64, within_bound,
    x_eager, x_compile}}}."""
    from . import ops

    model = problem.make_model(seed=0, device="cuda").requires_grad_(False)
    x = problem.make_input(seed=0, device="cuda")
    fused = ops.fuse(model, precision)
    log(f"[fuse] {problem.key} {precision}: {fused.variant.key} ({fused.why})")
    fns = {"eager": model, "compile": torch.compile(model), "fused": fused,
           "fused_compiled": torch.compile(fused, fullgraph=True)}
    truth = P.ground_truth(model, x)
    bounds = {"eager": "tf32", "compile": "tf32", "fused": precision, "fused_compiled": precision}
    rows = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        err = verify.compare(fn(x), truth)
        ok = verify.within_bounds(err, bounds[name])
        rows[name] = {"rel_l2_err_fp64": err["rel_l2"], "max_abs_err_fp64": err["max_abs"], "within_bound": ok}
        log(f"[fuse] {name}: first call {time.perf_counter() - t0:.1f} s, rel-L2 {err['rel_l2']:.2e} "
            f"({'within' if ok else 'OUTSIDE'} {bounds[name]}'s bound)")
    del truth
    times = time_interleaved({k: (lambda fn=fn: fn(x)) for k, fn in fns.items()}, n_timed=n_timed, log=log)
    for name, t in times.items():
        rows[name].update(t, x_eager=times["eager"]["median_ms"] / t["median_ms"],
                          x_compile=times["compile"]["median_ms"] / t["median_ms"])
        log(f"[fuse] {problem.key} {name:15s} {t['median_ms']:.3f} ms  x eager {rows[name]['x_eager']:.2f}  "
            f"x compile {rows[name]['x_compile']:.2f}")
    return {"problem": problem.key, "precision": precision, "variant": fused.variant.key, "why": fused.why,
            "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}


def run(problem_keys=None, keys=None, out_path=None, verify_odd=True, n_timed=N_TIMED, build_times=None,
        hardening_dirs=None, log=_log) -> dict:
    """The whole benchmark: environment, ceilings, every variant of every problem; writes the JSON.

    Each kernel record carries the machine code it timed (results.machine_code). The hardening fields
    (memcheck_errors, racecheck_hazards, synccheck_errors, large_tensor) are not measured here: they stay from the
    file this run replaces wherever they checked the machine code timed now (results.carry_hardening), and newer ones
    come from a device session's outputs in `hardening_dirs` (sanitize.json, large_tensor.json, and the GPU suites'
    pytest outputs gpu_tests.log, gpu_hardening.log), applied where their machine code is the one timed now. The
    records' evidence and the file's microbenchmarks stay (results.carry_evidence); Nsight Compute's fields come back
    with the next `make profile`."""
    from . import build

    build.require_toolchain()
    env = environment()
    log(f"[bench] {env['gpu']}, torch {env['torch']}, CUDA {env['cuda']}, cuDNN {env['cudnn']}")
    t0 = time.perf_counter()
    kvars = [v for v in R.kernel_variants() if (problem_keys is None or v.problem in problem_keys)
             and (keys is None or v.key in keys)]
    cc = torch.cuda.get_device_capability()
    for v in kvars:
        if not v.runs_on(cc):    # sm_90a-only code (step 04b) on another GPU: its launch would refuse
            log(f"[bench] skipping {v.problem}/{v.key}: built for sm_{'/'.join(v.archs)} only, "
                f"this GPU is compute capability {cc[0]}.{cc[1]}")
    kvars = [v for v in kvars if v.runs_on(cc)]
    mods = build.build_all(kvars, log=log)
    env["build_all_cold_or_warm_s"] = round(getattr(build.build_all, "last_wall_s", float("nan")), 1)
    env.update(measure_ceilings(log=log))
    out_path = out_path or results.path_for(env["slug"])
    previous = results.load(out_path) if results.Path(out_path).exists() else None
    # a partial run updates its own rows only: merged onto the file as it was before this run (the saves after
    # each problem would otherwise replace it, and every notebook's live run would drop the one before's rows)
    before = previous if (problem_keys or keys is not None) else None
    data = {"env": env, "records": [], "profiles": {}}
    env["board_during_timing"] = {}
    env["cudnn_fused"] = {}
    for pk in (problem_keys or list(P.PROBLEMS)):
        data["records"] += bench_problem(P.get(pk), keys=keys, mods=mods, verify_odd=verify_odd,
                                         n_timed=n_timed, log=log, board=env["board_during_timing"],
                                         cudnn_notes=env["cudnn_fused"])
        data["profiles"][pk] = profile_references(P.get(pk), log=log)
        results.save(results.merge(before, data) if before else data, out_path)
        torch.cuda.empty_cache()
    env["bench_wall_s"] = round(time.perf_counter() - t0, 1)
    timed = [R.get(r["problem"], r["variant"]) for r in data["records"] if r.get("kind") in ("epilogue", "fused")]
    codes = _machine_codes(timed, log)
    for rec in data["records"]:
        if (rec["problem"], rec["variant"]) in codes:
            rec["machine_code"] = codes[(rec["problem"], rec["variant"])]
    if build_times:
        env["build_times"] = {**build_times, "machine_code": {f"{p}/{k}": c for (p, k), c in sorted(codes.items())}}
    if previous:
        kept = results.carry_hardening(previous, data, codes, log=log)
        log(f"[bench] hardening kept from {out_path} on {kept} kernel records (unchanged machine code)")
        results.carry_evidence(previous, data, codes)
        if results.carry_build_times(previous, data, codes):       # a run that built keeps its own
            log(f"[bench] build times kept from {out_path} (measured {env['build_times']['measured'][:10]}, same machine code)")
    if before:
        data = results.merge(before, data)
    logs = results.load_hardening_logs(hardening_dirs)
    logs.update(results.suites_from_logs(logs, codes, gpu=env["gpu"]))
    if any(logs.get(n) is not None for n in (*results.HARDENING_LOGS, *results.TEST_SUITES)):
        log(f"[bench] hardening outputs: {logs.get('paths')}")
        results.apply_hardening(data, logs, codes=codes, log=log)
    results.save(data, out_path)
    log(f"[bench] wrote {out_path}")
    print_table(data, log=log)
    return data


def _machine_codes(variants, log=_log) -> dict:
    """results.machine_codes, or {} where it cannot compile (a missing nvcc must not lose a run's timings)."""
    if not variants:
        return {}
    try:
        return results.machine_codes(variants)
    except (OSError, RuntimeError) as e:
        log(f"[bench] machine code not recorded: {e}")
        return {}


def print_table(data: dict, log=_log) -> None:
    cols = ("problem", "variant", "precision", "median_ms", "speedup_vs_eager", "speedup_vs_compile",
            "verified", "max_abs_err_fp64", "rel_l2_err_fp64", "kernelbench_pass", "achieved_gbps")
    log(" | ".join(cols))
    for r in data["records"]:
        vals = []
        for c in cols:
            v = r.get(c)
            vals.append(f"{v:.3g}" if isinstance(v, float) else str(v))
        log(" | ".join(vals))
