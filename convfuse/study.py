"""The thin layer the notebooks call: which run to show, and tables and sentences made from it.

    from convfuse import study
    run = study.run_for(["conv2d", "conv3d"], ["02_epilogue_vec3d"])
    study.header(run)

Recorded mode (``CONVFUSE_MODE=recorded``, or ``auto`` without a GPU) reads the newest results file;
live mode measures the asked-for variants with ``bench.run`` (reference rows always come along), merges
them into ``results/<gpu>.json`` and shows that. ``CONVFUSE_RESULTS_DIR`` points both at another
directory (the tests use a synthetic one). Everything below works from the run dict alone, and every
helper says "not recorded yet" instead of failing when a variant has no record.
"""
from __future__ import annotations

import json
import math
import os
import re
import string
from pathlib import Path

import pandas as pd

from . import problems as P
from . import registry as R
from . import power, results, tables, traffic, verify

tables.install()        # every DataFrame a notebook shows, as tables.frame_html draws it
accuracy_class = verify.accuracy_class
PROBLEMS = tuple(P.PROBLEMS)
REFERENCES = tuple(v.key for v in R.all_variants(PROBLEMS[0], kind="reference"))
NOT_RECORDED = "not recorded yet"
# reference rows that need the optional nvidia-cudnn-frontend package: a record may lack them (env["cudnn_fused"] says why)
OPTIONAL_REFERENCES = ("cudnn_fused", "cudnn_fused_nchw")
EPILOGUE_GOAL = 0.9     # step 02: the epilogue alone at >= 90 % of the copy bandwidth of the same bytes
# the tensor-core goals on the H200 (issue 5 of the study: TF32 and FP32-class 3xTF32 kernels)
TF32_GOAL_MS = {"conv2d": 1.2, "conv3d": 0.8}
XTF32_GOAL_MS = {"conv2d": 3.0, "conv3d": 2.0}
# ... and the same-run ratios the issue states beside them: (x eager, x torch.compile), None where it states none
TF32_GOAL_RATIOS = {"conv2d": (4.3, 2.0), "conv3d": (12.8, 7.0)}
XTF32_GOAL_RATIOS = {"conv2d": (1.7, None), "conv3d": (5.0, None)}


def goal_verdict(rec: dict, goal_ms: float, ratios: tuple) -> str:
    """'met', or what is missed: the ms figure and each same-run ratio (x eager, x torch.compile) of the goal."""
    missed = []
    if rec["median_ms"] > goal_ms:
        missed.append(f"{rec['median_ms']:.3f} ms > {goal_ms} ms")
    for field, target, name in zip(("speedup_vs_eager", "speedup_vs_compile"), ratios, ("eager", "torch.compile")):
        if target is not None and rec.get(field) is not None and rec[field] < target:
            missed.append(f"{rec[field]:.2f}× {name} < {target}×")
    return "met" if not missed else "missed (" + "; ".join(missed) + ")"


# the precisions that count for each goal class: the issue's goals name TF32 and 3xTF32 literally; the FP16-operand
# kernels are in TF32's class (11 significant bits) and 3xFP16 / TF32+BF16 in FP32's (verify.BOUNDS), shown beside them
GOAL_CLASSES = (("tf32", "04 tf32", ("tf32",), TF32_GOAL_MS, TF32_GOAL_RATIOS),
                ("tf32", "TF32 class, any operands", ("tf32", "fp16"), TF32_GOAL_MS, TF32_GOAL_RATIOS),
                ("3xtf32", "04 3xtf32", ("3xtf32",), XTF32_GOAL_MS, XTF32_GOAL_RATIOS),
                ("3xtf32", "FP32 class, any split", ("3xtf32", "3xfp16", "tf32+bf16"), XTF32_GOAL_MS,
                 XTF32_GOAL_RATIOS))


def goals_table(run: dict, runs=None) -> pd.DataFrame:
    """Step 04's goals (issue 5) against every recorded GPU (`runs`; default every_run(run)): per problem, goal class
    and GPU, the fastest verified step-04 kernel of the class, its time and same-run ratios, the goal's verdict, and
    whether it beat torch.compile in that run (the issue's first Done-when condition, asked of the literal TF32 and
    3xTF32 kernels). The goals were set on the H200; the ratios are same-run, so they hold any GPU to the same bar."""
    runs = list(runs) if runs is not None else (every_run(run) or [run])
    rows = []
    for pk in PROBLEMS:
        step04 = {v.key for v in R.kernel_variants(pk) if v.step.startswith("04")}
        for _, goal, precisions, goal_ms, ratios in GOAL_CLASSES:
            for rn in runs:
                cands = [r for r in results.records(rn, pk) if r["variant"] in step04 and r.get("verified")
                         and r.get("median_ms") and r.get("precision") in precisions]
                row = {"problem": pk, "goal": goal, "GPU": gpu_label(rn),
                       "goal ms / × eager / × compile": " / ".join(
                           ["≤ %g" % goal_ms[pk]] + ["—" if g is None else "≥ %g" % g for g in ratios[pk]])}
                if not cands:
                    rows.append(row | {"kernel": NOT_RECORDED})
                    continue
                r = min(cands, key=lambda c: c["median_ms"])
                vs_c = r.get("speedup_vs_compile")
                rows.append(row | {"kernel": r["variant"], "precision": r["precision"], "median ms": r["median_ms"],
                                   "× eager": r.get("speedup_vs_eager"), "× compile": vs_c,
                                   "verdict": goal_verdict(r, goal_ms[pk], ratios[pk]),
                                   "faster than torch.compile": None if vs_c is None
                                   else ("yes" if vs_c > 1 else "**no**")})
    cols = ["problem", "goal", "GPU", "kernel", "precision", "median ms", "× eager", "× compile",
            "goal ms / × eager / × compile", "verdict", "faster than torch.compile"]
    return pd.DataFrame(rows, columns=cols).set_index(["problem", "goal", "GPU"])


# --- which run ------------------------------------------------------------------------------------
def results_dir() -> Path:
    return Path(os.environ.get("CONVFUSE_RESULTS_DIR") or results.RESULTS_DIR)


def runs() -> list[dict]:
    """Every recorded run (one per GPU), newest first."""
    return results.all_recorded(results_dir())


def every_run(run: dict) -> list[dict]:
    """`run` first, then every other GPU's recorded run (newest first) when `run` is a results file: what a table "for
    every recorded GPU" shows. A run without a file (synthetic) stands alone; an empty run gives []."""
    if not run.get("env"):
        return []
    if not run.get("path"):
        return [run]
    here = Path(run["path"]).resolve()
    return [run] + [r for r in runs() if Path(r["path"]).resolve() != here]


def gpu_label(run: dict) -> str:
    """The run's GPU as its record names it ("NVIDIA H100 80GB HBM3"), or a dash."""
    return (run.get("env") or {}).get("gpu") or "—"


def short_gpu(run: dict) -> str:
    """A column-width name for the run's GPU: "H100", "H200", "A100" (the model after "NVIDIA")."""
    name = gpu_label(run).removeprefix("NVIDIA ").strip()
    return re.split(r"[\s-]", name)[0] if name else "—"


def empty_run() -> dict:
    return {"env": {}, "records": [], "profiles": {}, "path": None}


def run_for(problem_keys=None, variants=None) -> dict:
    """The run a notebook shows. Recorded: the newest results file (an empty run when there is none
    yet, so the notebook still renders). Live: measure `variants` of `problem_keys` now (None: all;
    an empty list: the reference rows only) and return the merged results file."""
    m = results.mode()
    if m == "recorded":
        try:
            run = results.latest(results_dir())
        except FileNotFoundError:
            run = empty_run()
        run["mode"] = "recorded"
        return run
    from . import bench
    import torch

    if variants is not None and not list(variants):
        variants = list(REFERENCES)   # bench.run always adds them; a non-empty list keeps the merge on
    slug = results.slug(torch.cuda.get_device_name(0))
    out = results_dir() / f"{slug}.json"
    bench.run(problem_keys=list(problem_keys) if problem_keys else None,
              keys=list(variants) if variants is not None else None, out_path=out)
    run = results.load(out) | {"path": str(out), "mode": "live"}
    return run


def step_keys(problem: str, step: str) -> list[str]:
    """The registry's kernel variants of one step for one problem, in registry order (empty where the
    step does not exist for that problem yet, e.g. 04b for conv2d in the recorded run)."""
    return [v.key for v in R.kernel_variants(problem) if v.step == step]


def steps_keys(prefix: str, problems=PROBLEMS) -> list[str]:
    """The registered kernel variants of every step whose number starts with `prefix` ("04": 04, 04b, 04c, 04d …) in
    `problems`, in registry order, each key once: what a notebook measures in live mode."""
    return list(dict.fromkeys(v.key for pk in problems for v in R.kernel_variants(pk) if v.step.startswith(prefix)))


def substeps_table(prefix: str = "04") -> pd.DataFrame:
    """One row per (step, problem) whose number starts with `prefix`: its kernel files (a step's precisions may take
    more than one, conv3d 04b's) and variants (precision in brackets), from the registry."""
    rows = {}
    for v in R.kernel_variants():
        if not v.step.startswith(prefix):
            continue
        row = rows.setdefault((v.step, v.problem), {"step": v.step, "problem": v.problem, "files": {}, "variants": []})
        row["files"][f"kernels/{v.problem}/{v.source}.cu"] = None
        row["variants"].append(f"{v.key} ({v.precision})")
    out = [{"step": r["step"], "problem": r["problem"], "kernel file": ", ".join(r["files"]),
            "variants": ", ".join(r["variants"])} for _, r in sorted(rows.items())]
    return pd.DataFrame(out, columns=["step", "problem", "kernel file", "variants"]).set_index(["step", "problem"])


def record(run: dict, problem: str, variant: str) -> dict | None:
    return results.record(run, problem, variant)


def measured_gpu(run: dict) -> traffic.GPU | None:
    env = run.get("env", {})
    if not all(env.get(k) for k in ("copy_gbps", "fp32_tflops", "tf32_tflops")):
        return None
    return traffic.measured_gpu(env)


# --- Markdown -------------------------------------------------------------------------------------
def md(text) -> "Markdown":
    """Markdown for display; a list of lines becomes a bulleted list (a line already starting "- " keeps its one
    bullet, so it does not render as a list nested in an empty item)."""
    from IPython.display import Markdown

    if not isinstance(text, str):
        text = "\n".join(t if t.startswith("- ") else f"- {t}" for t in text)
    return Markdown(text)


def cudnn_version(v) -> str:
    if not isinstance(v, int):
        return str(v)
    if v >= 90000:      # cuDNN 9: major*10000 + minor*100 + patch
        return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
    return f"{v // 1000}.{v % 1000 // 100}.{v % 100}"


def header(run: dict):
    """One Markdown line: where the numbers on this page come from."""
    env = run.get("env", {})
    mode = run.get("mode") or results.mode()
    if not env:
        return md(f"**Numbers on this page:** {mode} mode — no run recorded yet in `{results_dir()}`; "
                  f"every table below says *{NOT_RECORDED}*. Run `python -m convfuse bench` on a GPU.")
    src = Path(run["path"]).name if run.get("path") else "this run"
    others = [r["env"].get("gpu") for r in runs() if r.get("path") != run.get("path")] if mode == "recorded" else []
    parts = [f"{mode} mode", f"{env.get('gpu', '?')} ({env.get('sm_count', '?')} SMs, {env.get('l2_mb', '?')} MB L2)",
             str(env.get("date", "?")), f"torch {env.get('torch', '?')}", f"CUDA {env.get('cuda', '?')}",
             f"cuDNN {cudnn_version(env.get('cudnn'))}", f"driver {env.get('driver') or '?'}",
             f"cuDNN TF32 {'allowed' if env.get('cudnn_allow_tf32') else 'off'}", f"source `{src}`"]
    line = "**Numbers on this page:** " + " · ".join(parts)
    board = {k: power.describe(w) for k, w in (env.get("board_during_timing") or {}).items()}
    if any(board.values()):       # the clocks are left alone, so say where they were
        line += "  \nDuring the timing (nvidia-smi): " + "; ".join(f"{k}: {d}" for k, d in board.items() if d) + "."
    if others:
        line += f"  \nAlso recorded: {', '.join(others)} (notebooks 00 and 05 show every recorded GPU)."
    return md(line)


# --- facts and sentences --------------------------------------------------------------------------
def _peak(gpu: traffic.GPU, precision: str) -> float:
    return gpu.tflops.get(precision, gpu.fp32_tflops)


def facts(run: dict, problem: str, variant: str) -> dict | None:
    """The record of (problem, variant) plus what the notebooks derive from it, all from the run:
    percentages of the measured ceilings, distance to the floors, the model's prediction, ratios to
    the reference rows of the same run. None when the variant has no record."""
    r = record(run, problem, variant)
    if r is None:
        return None
    prob = P.get(problem)
    v = R.get(problem, variant)
    f = dict(r)
    f.update(problem=problem, variant=variant, title=v.title, precision=r.get("precision", v.precision),
             gpu=run["env"].get("gpu"), model_gb=r["model_bytes"] / 1e9 if r.get("model_bytes") else None,
             gflops=(r.get("flops") or traffic.flops(prob)) / 1e9)
    mb, fb = verify.BOUNDS[f["precision"]]
    f.update(max_abs_bound=mb, rel_l2_bound=fb)
    if r.get("max_abs_err_fp64") is not None:
        f["max_abs_vs_fp32_bound"] = r["max_abs_err_fp64"] / verify.BOUNDS["fp32"][0]
    if r.get("epilogue_alone_vs_copy") is not None:
        f["epilogue_pct_copy"] = 100 * r["epilogue_alone_vs_copy"]
        f["epilogue_goal"] = "met" if r["epilogue_alone_vs_copy"] >= EPILOGUE_GOAL else "**missed**"
    gpu = measured_gpu(run)
    ms = r.get("median_ms")
    if gpu and ms:
        fl = traffic.floors_ms(prob, gpu)
        # the arithmetic the conv really runs in (cuDNN may not use the TF32 it is allowed)
        f["compute_precision"] = traffic.compute_precision(prob, variant, f["precision"])
        peak = _peak(gpu, f["compute_precision"])
        pred = traffic.predict_ms(prob, variant, f["precision"], gpu)
        # the rate of the arithmetic the kernel does (its algorithm's FLOPs); effective: the direct conv's FLOPs a second
        effective = (r.get("flops") or traffic.flops(prob)) / (ms * 1e-3) / 1e12
        tflops = effective * traffic.work_share(prob, variant)
        gbps = r["model_bytes"] / (ms * 1e-3) / 1e9 if r.get("model_bytes") else None
        f.update(copy_gbps=gpu.dram_gbps, fp32_tflops=gpu.fp32_tflops, tf32_tflops=gpu.tf32_tflops,
                 peak_tflops=peak, tflops=tflops, effective_tflops=effective, gbps=gbps,
                 pct_peak=100 * tflops / peak, pct_fp32_peak=100 * tflops / gpu.fp32_tflops,
                 pct_tf32_peak=100 * tflops / gpu.tf32_tflops,
                 pct_copy_bw=100 * gbps / gpu.dram_gbps if gbps else None,
                 floor_bytes_ms=fl["bytes"], floor_fp32_ms=fl["fp32"], floor_tf32_ms=fl["tf32"],
                 floor_3xtf32_ms=traffic.tensor_floor_ms(prob, gpu, "3xtf32"),
                 floor_ms=max(fl["bytes"], traffic.conv_work_flops(prob, variant) / (peak * 1e12) * 1e3),
                 predicted_ms=pred["ms"], predicted_bound=pred["bound"], x_predicted=ms / pred["ms"])
        compute_ms = traffic.conv_work_flops(prob, variant) / (peak * 1e12) * 1e3
        f.update(x_floor=ms / f["floor_ms"], x_bytes_floor=ms / fl["bytes"], fp32_floor_over_ms=fl["fp32"] / ms,
                 compute_floor_ms=compute_ms, x_compute_floor=ms / compute_ms)
    out_bytes = traffic.FLOAT_BYTES * traffic._numel(prob.output_shape())
    f.update(out_gb=out_bytes / 1e9, in_gb=traffic.FLOAT_BYTES * traffic._numel(prob.input_shape) / 1e9,
             floor_gb=traffic.floor_bytes(prob) / 1e9, n_elementwise_ops=len(traffic.ELEMENTWISE_OPS[problem]),
             l2_reread_factor=traffic.l2_reread_factor(prob, variant))
    if gpu:
        # one elementwise pass reads and writes the conv output: its time at the measured copy bandwidth
        f.update(one_pass_ms=2 * out_bytes / (gpu.dram_gbps * 1e9) * 1e3,
                 fp32_floor_vs_bytes=f.get("floor_fp32_ms", 0) / f["floor_bytes_ms"] if "floor_bytes_ms" in f else None,
                 tf32_floor_vs_bytes=f.get("floor_tf32_ms", 0) / f["floor_bytes_ms"] if "floor_bytes_ms" in f else None,
                 tf32_over_fp32=gpu.tf32_tflops / gpu.fp32_tflops)
    if r.get("epilogue_alone_ms") and ms:
        f["epilogue_share_of_call"] = 100 * r["epilogue_alone_ms"] / ms
        f["conv_part_ms"] = ms - r["epilogue_alone_ms"]
    split = time_split(run, problem, variant)
    if split:
        f.update(profiled_conv_ms=split["conv_ms"], profiled_epilogue_ms=split["epilogue_ms"],
                 profiled_epilogue_kernels=split["epilogue_kernels"], profiled_epilogue_share=split["epilogue_share"],
                 profiled_total_ms=split["total_ms"])
    for ref in ("eager", "eager_fp32", "compile", "cudnn_conv", "channels_last", *OPTIONAL_REFERENCES):
        rr = record(run, problem, ref)
        if rr and rr.get("median_ms") and ms:
            f[f"{ref}_ms"] = rr["median_ms"]
            f[f"vs_{ref}"] = rr["median_ms"] / ms
    return f


class _Strict(string.Formatter):
    def get_value(self, key, args, kwargs):
        val = super().get_value(key, args, kwargs)
        if val is None:
            raise KeyError(key)
        return val

    def get_field(self, field_name, args, kwargs):
        obj, used = super().get_field(field_name, args, kwargs)
        if obj is None:
            raise KeyError(field_name)
        return obj, used


def say(run: dict, problem: str, variant: str, template: str, **extra) -> str:
    """`template` filled with facts(run, problem, variant) and `extra`; when the record, or a field the
    sentence needs, is missing: "<problem> / <variant>: not recorded yet"."""
    f = facts(run, problem, variant)
    if f is None:
        return f"**{problem} / {variant}**: {NOT_RECORDED}."
    try:
        return _Strict().vformat(template, (), {**f, **extra})
    except (KeyError, IndexError, TypeError, ValueError) as e:
        missing = e.args[0] if isinstance(e, KeyError) and e.args else "a field"
        return f"**{problem} / {variant}**: `{missing}` {NOT_RECORDED}."


def ratio(run: dict, problem: str, a: str, b: str, field: str = "median_ms") -> float | None:
    """record(a)[field] / record(b)[field], or None when either is missing."""
    ra, rb = record(run, problem, a), record(run, problem, b)
    if not ra or not rb or not ra.get(field) or not rb.get(field):
        return None
    return ra[field] / rb[field]


def against_bound(run: dict, problem: str, variant: str, precision: str = "fp32") -> str:
    """Where the variant's recorded error falls against the bound of `precision` (verify.BOUNDS)."""
    r = record(run, problem, variant)
    if r is None or r.get("rel_l2_err_fp64") is None:
        return f"**{problem} / {variant}**: {NOT_RECORDED}."
    mb, rb = verify.BOUNDS[precision]
    ma, rl = r["max_abs_err_fp64"], r["rel_l2_err_fp64"]
    ok = (mb is None or ma <= mb) and rl <= rb
    parts = []
    if mb is not None:
        parts.append(f"max abs {ma:.1e} {'≤' if ma <= mb else '>'} {mb:.0e}")
    parts.append(f"rel L2 {rl:.1e} {'≤' if rl <= rb else '>'} {rb:.0e}")
    kb = r.get("kernelbench_pass")
    kb_s = "" if kb is None else f"; {OUR_ALLCLOSE}: {'pass' if kb else 'fail'}"
    e = eager_fp32_error(run, problem)
    e_s = f"; eager FP32's own rel L2 {e:.1e}" if e and variant != "eager_fp32" else ""
    return (f"**{problem} / {variant}** ({r.get('precision')}): {'within' if ok else '**outside**'} the "
            f"{precision} bound ({', '.join(parts)}{e_s}){kb_s}.")


def best(run: dict, problem: str, kinds=("epilogue", "fused"), precision: str | None = None) -> str | None:
    """The fastest verified variant of ours (kind in `kinds`, of `precision` if given), or None."""
    cands = [r for r in results.records(run, problem)
             if r.get("kind") in kinds and r.get("verified") and r.get("median_ms")
             and (precision is None or r.get("precision") == precision)]
    return min(cands, key=lambda r: r["median_ms"])["variant"] if cands else None


def vector_path_table() -> pd.DataFrame:
    """Step 02's float4 condition on every shape the study runs: a channel plane starts 16-byte
    aligned only when its size is a multiple of 4 floats."""
    rows = []
    for p in P.PROBLEMS.values():
        for shape in (p.input_shape, *p.odd_shapes):
            y = p.output_shape(shape)
            plane = traffic._numel(y[2:])
            rows.append({"problem": p.key, "input": str(tuple(shape)), "output plane": " × ".join(map(str, y[2:])),
                         "plane floats": plane, "plane % 4": plane % 4,
                         "path": "float4" if plane % 4 == 0 else "scalar",
                         "shape": "full problem" if tuple(shape) == tuple(p.input_shape) else "odd (verification)"})
    return pd.DataFrame(rows).set_index(["problem", "input"])


def source_file(relpath: str):
    """Any file under the repository (e.g. kernels/common.cuh) as a Markdown code block."""
    path = R.ROOT / relpath
    if not path.exists():
        return md(f"`{relpath}`: not written yet.")
    lang = "cuda" if path.suffix in (".cu", ".cuh", ".h") else ""
    return md(f"**`{relpath}`**\n\n```{lang}\n{path.read_text().rstrip()}\n```")


# --- tables ---------------------------------------------------------------------------------------
# Two checks against eager PyTorch share KernelBench's tolerance (allclose, atol = rtol = 1e-4) and differ in their
# trials, so they can disagree on one kernel; each has one name on every page.
KERNELBENCH_CHECK = "KernelBench's check"
OUR_ALLCLOSE = "allclose to eager (our trials)"
CHECK_DEFINITIONS = (
    f"**{KERNELBENCH_CHECK}**: KernelBench's own protocol (convfuse/kernelbench.py): one model initialised from "
    "seed 42, five `torch.rand` inputs of the full shape, each output `allclose(atol=rtol=1e-4)` to eager PyTorch's "
    "on the same GPU.",
    f"**{OUR_ALLCLOSE}**: the same tolerance over this study's verification trials (verify.py): fresh parameters "
    "and inputs every trial, `torch.rand` and `torch.randn`, three seeds, the odd shapes too. Harder to pass: a "
    "kernel can pass KernelBench's check and fail this one.")
COLUMNS = {   # record field -> readable name
    "variant": "variant", "precision": "precision", "median_ms": "median ms", "p20_ms": "p20 ms",
    "p80_ms": "p80 ms", "speedup_vs_eager": "× eager", "speedup_vs_compile": "× compile",
    "achieved_gbps": "GB/s (modeled bytes)", "achieved_tflops": "TFLOP/s", "model_bytes": "modeled GB",
    "verified": "verified", "kernelbench_pass": OUR_ALLCLOSE, "max_abs_err_fp64": "max abs err",
    "rel_l2_err_fp64": "rel L2 err", "registers": "registers", "smem_bytes_static": "static smem B",
    "dram_bytes_measured": "DRAM GB (ncu)",
}
DEFAULT_COLUMNS = ("variant", "precision", "median_ms", "p20_ms", "p80_ms", "speedup_vs_eager",
                   "speedup_vs_compile", "achieved_gbps", "achieved_tflops", "verified")


def _keys(problem, variants):
    return [v.key for v in R.all_variants(problem)] if variants is None else list(variants)


def _readable(field: str) -> str:
    return COLUMNS.get(field, field.replace("_", " "))


def table(run: dict, problem: str, variants=None, columns=DEFAULT_COLUMNS) -> pd.DataFrame:
    """One row per variant (registry order unless `variants` gives one), readable column names;
    a variant without a record gets a row that says so."""
    rows = []
    for key in _keys(problem, variants):
        r = record(run, problem, key)
        if r is None:
            rows.append({"variant": key, "status": missing_status(run, problem, key)})
            continue
        row = {}
        for c in columns:
            val = r.get(c)
            if c in ("model_bytes", "dram_bytes_measured") and val is not None:
                val = round(val / 1e9, 3)
            row[c] = val
        row.setdefault("variant", key)
        rows.append(row)
    df = pd.DataFrame(rows, columns=list(dict.fromkeys(["variant", *columns, "status"])))
    if df["status"].isna().all():
        df = df.drop(columns="status")
    return df.rename(columns=_readable).set_index("variant")


def bounds_table() -> pd.DataFrame:
    """The verification bounds against float64 per precision class (verify.BOUNDS)."""
    rows = [{"precision": p, "max abs err ≤": b[0] if b[0] is not None else "—", "rel L2 err ≤": b[1],
             "arithmetic": {"fp32": "IEEE FP32 FMAs (CUDA cores)",
                            "tf32": "TF32 operands (10-bit mantissa), FP32 accumulate (tensor cores)",
                            "fp16": "FP16 operands (TF32's 10-bit mantissa at twice its MMA rate; weights scaled by "
                                    "a power of two per call), FP32 accumulate; inputs with |x| >= 65520 take an "
                                    "FP32 path",
                            "3xtf32": "split-TF32: 3 TF32 MMAs per product, FP32-level accuracy",
                            "tf32+bf16": "TF32 main product + one BF16 pass for both corrections "
                                         "(2 tensor passes), FP32-level accuracy",
                            "3xfp16": "FP16 hi + lo operands, 3 products (1.5 TF32 passes of tensor time), "
                                      "FP32 accumulate (main and corrections apart in conv2d 04c, one set in "
                                      "conv3d 04b); inputs with |x| >= 65520 take an FP32 path"}.get(p, "")}
            for p, b in verify.BOUNDS.items()]
    rows.append({"precision": "KernelBench", "max abs err ≤": f"atol {verify.KERNELBENCH_TOL:g} + rtol "
                 f"{verify.KERNELBENCH_TOL:g}·|eager|", "rel L2 err ≤": "—",
                 "arithmetic": "allclose against eager PyTorch (not float64)"})
    return pd.DataFrame(rows).set_index("precision")


def eager_fp32_error(run: dict, problem: str) -> float | None:
    """Eager PyTorch's own rel-L2 against float64 with TF32 off, in the same run: what FP32 itself achieves."""
    return (record(run, problem, "eager_fp32") or {}).get("rel_l2_err_fp64")


def _over_eager_fp32(run: dict, problem: str, r: dict) -> float | None:
    e, mine = eager_fp32_error(run, problem), r.get("rel_l2_err_fp64")
    return round(mine / e, 1) if e and mine is not None else None


def verification_table(run: dict, problem: str, variants=None) -> pd.DataFrame:
    """Worst case over every shape and trial against float64, the bound of the variant's precision
    class, and OUR_ALLCLOSE (KernelBench's tolerance against eager PyTorch, over our trials)."""
    rows = []
    for key in _keys(problem, variants):
        r = record(run, problem, key)
        v = R.get(problem, key)
        if r is None:
            rows.append({"variant": key, "precision": v.precision, "status": NOT_RECORDED})
            continue
        if r.get("verified") is None:
            rows.append({"variant": key, "precision": r.get("precision", v.precision),
                         "status": "timed only (not the whole model)" if key == "cudnn_conv" else "not verified"})
            continue
        mb, rb = verify.BOUNDS[r.get("precision", v.precision)]
        rows.append({
            "variant": key, "precision": r.get("precision", v.precision),
            "max abs err": r.get("max_abs_err_fp64"), "bound max abs": mb if mb is not None else "—",
            "rel L2 err": r.get("rel_l2_err_fp64"), "bound rel L2": rb,
            "× eager FP32's rel L2": _over_eager_fp32(run, problem, r),
            "within bound (all shapes)": r.get("verified"),
            "odd shapes": r.get("verified_odd"),
            "allclose 1e-4 vs float64": r.get("allclose_fp64"),
            OUR_ALLCLOSE: r.get("kernelbench_pass"),
            "checks": r.get("verify_checks"),
        })
    df = pd.DataFrame(rows).set_index("variant")
    for c in ("max abs err", "rel L2 err"):
        if c in df:
            df[c] = df[c].map(lambda x: f"{x:.2e}" if isinstance(x, float) and x == x else x)
    return df


def kernel_source(problem: str, key: str):
    """The variant's .cu file as a Markdown code block (the file, not a copy: what the build compiles)."""
    v = R.get(problem, key)
    path = v.source_path
    if path is None:
        return md(f"`{key}` is a reference row: PyTorch's own kernels, no source of ours.")
    if not path.exists():
        return md(f"`{path.relative_to(R.ROOT)}`: kernel {NOT_RECORDED} (file not written yet).")
    defines = f" — built with `{' '.join('-D' + d for d in v.defines)}`" if v.defines else ""
    return md(f"**`{path.relative_to(R.ROOT)}`**{defines}\n\n```cuda\n{path.read_text().rstrip()}\n```")


def _ptxas_arch(r: dict) -> str:
    return r.get("ptxas_arch", "90")      # records before 45f8980 carry no arch: the bench used sm_90


def _hopper_target(v: R.Variant) -> str:
    return next((a for a in v.archs if a.startswith("90")), v.archs[-1])


def recorded_registers(run: dict, problem: str, key: str) -> int | None:
    """The record's ptxas register count, or None where it was taken from a build that is not the
    kernel's own Hopper target (an sm_90a kernel built for sm_90 has its body compiled out)."""
    r = record(run, problem, key)
    if r is None:
        return None
    v = R.get(problem, key)
    return r.get("registers") if not v.is_kernel or _ptxas_arch(r) == _hopper_target(v) else None


def ptxas_usage(problem: str, key, run: dict | None = None) -> pd.DataFrame:
    """Registers, shared memory and spills of one variant (or a list of them). Recorded mode: the
    fields the bench stored (ptxas -v for sm_90, the entry with the most registers); live mode:
    ptxas -v now, every kernel entry, for each of its targets (sm_80, sm_90; sm_90a for wgmma)."""
    keys = [key] if isinstance(key, str) else list(key)
    rows = []
    if results.mode() == "live":
        from . import build

        for k in keys:
            v = R.get(problem, k)
            if not v.is_kernel:
                continue
            for arch in v.archs:
                for name, u in build.resource_usage(v, arch=arch).items():
                    rows.append({"variant": k, "arch": f"sm_{arch}", "kernel": name,
                                 **{f: x for f, x in u.items() if f != "arch"}})
        return pd.DataFrame(rows).set_index("variant") if rows else pd.DataFrame()
    run = run if run is not None else run_for()
    for k in keys:
        r = record(run, problem, k)
        if r is None:
            rows.append({"variant": k, "status": NOT_RECORDED})
            continue
        v = R.get(problem, k)
        arch, target = _ptxas_arch(r), _hopper_target(v)
        row = {"variant": k, "arch": f"sm_{arch} (recorded)", "registers": r.get("registers"),
               "static smem B": r.get("smem_bytes_static", r.get("smem_bytes")),
               "dynamic smem B": r.get("smem_bytes_dynamic", "not recorded"),
               "threads/block": r.get("threads_per_block", "not recorded"),
               "spill B": r.get("spill_bytes")}
        if r.get("resource_error"):
            row["note"] = r["resource_error"]
        elif v.is_kernel and arch != target:
            # an sm_90a kernel compiled for plain sm_90 has its body compiled out: not the kernel's figures
            row.update({"registers": None, "static smem B": None, "spill B": None,
                        "note": f"ptxas figures recorded from an sm_{arch} build, where this sm_{target} kernel's "
                                f"body is compiled out (they read {r.get('registers')} registers); "
                                f"run ptxas_usage live, or see the kernel log"})
        rows.append(row)
    return pd.DataFrame(rows).set_index("variant")


# Per-SM limits of sm_80 and sm_90 (CUDA C Programming Guide, "Compute Capabilities" table).
SM_LIMITS = {"registers": 65536, "threads": 2048, "blocks": 32, "smem_bytes": {"8.0": 167936, "9.0": 233472}}


def resources_table(run: dict, problem: str, variants) -> pd.DataFrame:
    """Registers and shared memory per thread block from the records, and the resident blocks per SM
    they allow (when the record carries the block size)."""
    rows = []
    cap = run.get("env", {}).get("capability", "9.0")
    for key in variants:
        r = record(run, problem, key)
        if r is None:
            rows.append({"variant": key, "status": missing_status(run, problem, key)})
            continue
        regs = r.get("registers")
        smem = (r.get("smem_bytes_static") or r.get("smem_bytes") or 0) + (r.get("smem_bytes_dynamic") or 0)
        threads = r.get("threads_per_block")
        row = {"variant": key, "precision": r.get("precision"), "registers/thread": regs,
               "static smem B": r.get("smem_bytes_static", r.get("smem_bytes")),
               "dynamic smem B": r.get("smem_bytes_dynamic", "not recorded"),
               "threads/block": threads or "not recorded", "spill B": r.get("spill_bytes")}
        if regs and threads:
            by_regs = SM_LIMITS["registers"] // (regs * threads)
            by_smem = SM_LIMITS["smem_bytes"].get(cap, 233472) // (smem + 1024) if smem else SM_LIMITS["blocks"]
            by_threads = SM_LIMITS["threads"] // threads
            blocks = min(by_regs, by_smem, by_threads, SM_LIMITS["blocks"])
            row.update({"blocks/SM (regs, smem, threads)": f"{by_regs}, {by_smem}, {by_threads}",
                        "resident warps/SM": blocks * threads // 32,
                        "occupancy": f"{100 * blocks * threads / SM_LIMITS['threads']:.0f} %"})
        rows.append(row)
    return pd.DataFrame(rows).set_index("variant")


def problems_table() -> pd.DataFrame:
    rows = []
    for p in P.PROBLEMS.values():
        rows.append({"problem": p.key, "KernelBench": p.kernelbench_id, "model": p.description,
                     "input": str(p.input_shape), "output": str(p.output_shape()),
                     "conv GFLOP": round(traffic.conv_flops(p) / 1e9, 1),
                     "input GB": round(4 * traffic._numel(p.input_shape) / 1e9, 3),
                     "output GB": round(4 * traffic._numel(p.output_shape()) / 1e9, 3),
                     "fewest DRAM GB (x once + y once)": round(traffic.floor_bytes(p) / 1e9, 3)})
    return pd.DataFrame(rows).set_index("problem")


_ELEMENTWISE = re.compile(r"elementwise|triton|reduce_kernel", re.I)
_LAYOUT = re.compile(r"nchwToNhwc|nhwcToNchw|transpose|convert", re.I)
_FUNCTOR = re.compile(r"at::native::(?:\(anonymous namespace\)::)?(\w*(?:Functor|Impl|kernel_cuda|_kernel)\w*)")


def kernel_category(name: str) -> str:
    """What a profiled CUDA kernel is, from its name. Inductor names its kernels after the ops they
    fuse: one that fuses only `convolution` copies an operand into the conv's layout; the ATen
    `direct_copy_kernel` is the channels_last conversion of x."""
    if re.search(r"memset|memcpy", name, re.I):
        return "memory op"
    if name.startswith("triton"):
        return "fused epilogue (inductor)" if re.search(r"gelu|leaky|clamp|mul|add", name) else "layout transform"
    if _LAYOUT.search(name) or "direct_copy_kernel" in name:
        return "layout transform"
    if _ELEMENTWISE.search(name):
        return "elementwise pass"
    return "conv"


def _without_templates(name: str) -> str:
    """A C++ symbol without its template arguments and parameter list (nested brackets too)."""
    out, depth = [], 0
    for ch in name.split("(", 1)[0]:
        depth += (ch == "<") - (ch == ">")
        if depth == 0 and ch != ">":
            out.append(ch)
    return "".join(out).strip()


def short_kernel_name(name: str) -> str:
    """A profiled kernel's name a reader can take in whole: an elementwise kernel by its functor, any other by its
    symbol without template arguments (cuDNN's and cuBLAS's engine names are kept whole: they say the algorithm)."""
    n = name[5:] if name.startswith("void ") else name
    if "elementwise_kernel" in n:
        fs = [f for f in _FUNCTOR.findall(n) if "elementwise_kernel" not in f]
        kind = n.split("<", 1)[0].split("::")[-1]
        if fs:
            return f"{kind} [{fs[0]}]"
    return _without_templates(n)


def profile_table(run: dict, problem: str, variant: str) -> pd.DataFrame:
    """The CUDA kernels one call of a reference path launched (torch.profiler, recorded by the bench), in launch
    order, with their time and share, on every recorded GPU that profiled it (indexed by GPU and launch); L2 not
    flushed inside that call."""
    frames = []
    for rn in evidence_runs(run):
        ks = rn.get("profiles", {}).get(problem, {}).get(variant)
        if not ks:
            continue
        total = sum(k["cuda_ms"] for k in ks) or 1.0
        frames.append(pd.DataFrame([{"GPU": short_gpu(rn), "#": i + 1, "kernel": short_kernel_name(k["kernel"]),
                                     "category": kernel_category(k["kernel"]), "ms": round(k["cuda_ms"], 4),
                                     "share": f"{100 * k['cuda_ms'] / total:.0f} %"} for i, k in enumerate(ks)]))
    if not frames:
        return pd.DataFrame([{"kernel": f"{NOT_RECORDED}: no recorded GPU profiled {problem} / {variant}"}]
                            ).set_index("kernel")
    return pd.concat(frames).set_index(["GPU", "#"])


def time_split(run: dict, problem: str, variant: str = "eager") -> dict | None:
    """Profiled time of one call split into the conv (with cuDNN's layout transforms) and the passes
    after it; None when no profile is recorded."""
    ks = run.get("profiles", {}).get(problem, {}).get(variant)
    if not ks:
        return None
    conv = sum(k["cuda_ms"] for k in ks if kernel_category(k["kernel"]) in ("conv", "layout transform"))
    ew = sum(k["cuda_ms"] for k in ks if kernel_category(k["kernel"]) in ("elementwise pass",
                                                                           "fused epilogue (inductor)"))
    total = sum(k["cuda_ms"] for k in ks)
    n_ew = sum(kernel_category(k["kernel"]) in ("elementwise pass", "fused epilogue (inductor)") for k in ks)
    return {"problem": problem, "variant": variant, "kernels": len(ks), "conv_ms": conv, "epilogue_ms": ew,
            "epilogue_kernels": n_ew, "other_ms": total - conv - ew, "total_ms": total,
            "epilogue_share": 100 * ew / total if total else 0.0}


def time_split_table(run: dict, variants=("eager", "eager_fp32", "channels_last", "compile", "cudnn_conv")) -> pd.DataFrame:
    """time_split of every reference row, on every recorded GPU that profiled it."""
    rows = []
    for pk in PROBLEMS:
        for key in variants:
            for rn in evidence_runs(run):
                s = time_split(rn, pk, key)
                base = {"problem": pk, "variant": key, "GPU": short_gpu(rn)}
                if s is None:
                    rows.append(base | {"status": f"{NOT_RECORDED}: the {short_gpu(rn)}'s record has no profile"})
                    continue
                rows.append(base | {"kernels": s["kernels"], "conv ms (incl. layout)": round(s["conv_ms"], 3),
                                    "elementwise ms": round(s["epilogue_ms"], 3),
                                    "elementwise kernels": s["epilogue_kernels"],
                                    "elementwise share": f"{s['epilogue_share']:.0f} %",
                                    "profiled total ms": round(s["total_ms"], 3)})
    if not rows:
        return pd.DataFrame([{"variant": "—", "status": NOT_RECORDED}]).set_index("variant")
    df = pd.DataFrame(rows)
    if "status" in df and df["status"].isna().all():
        df = df.drop(columns="status")
    return df.set_index(["problem", "variant", "GPU"])


def kernel_traffic_table(problem: str, variant: str, run: dict | None = None) -> pd.DataFrame:
    """The traffic model's kernels of one call (traffic.kernels): bytes read and written, and the time
    each needs at the measured copy bandwidth (a floor for that kernel)."""
    prob = P.get(problem)
    gpu = measured_gpu(run) if run else None
    rows = []
    for name, rd, wr in traffic.kernels(prob, variant):
        row = {"kernel (model)": name, "read GB": round(rd / 1e9, 3), "written GB": round(wr / 1e9, 3),
               "total GB": round((rd + wr) / 1e9, 3)}
        if gpu:
            row[f"ms at {gpu.dram_gbps:,.0f} GB/s"] = round((rd + wr) / (gpu.dram_gbps * 1e9) * 1e3, 3)
        rows.append(row)
    df = pd.DataFrame(rows)
    total = df.drop(columns="kernel (model)").sum().round(3)
    df.loc[len(df)] = {"kernel (model)": "total", **total.to_dict()}
    return df.set_index("kernel (model)")


def floors_table(problem: str, run: dict | None = None) -> pd.DataFrame:
    """Lower bounds on one call for every datasheet GPU and the run's measured ceilings: bytes (x read
    once, y written once) over bandwidth, conv FLOPs over the FP32, TF32 and 3xTF32 rates."""
    prob = P.get(problem)
    gpus = list(traffic.DATASHEET_GPUS)
    g = measured_gpu(run) if run else None
    if g:
        gpus.append(g)
    rows = []
    for gpu in gpus:
        fl = traffic.floors_ms(prob, gpu)
        rows.append({"GPU": gpu.name, "GB/s": gpu.dram_gbps, "FP32 TFLOP/s": gpu.fp32_tflops,
                     "TF32 TFLOP/s": gpu.tf32_tflops, "bytes floor ms": round(fl["bytes"], 3),
                     "FP32 floor ms": round(fl["fp32"], 3), "TF32 floor ms": round(fl["tf32"], 3),
                     "3xTF32 floor ms": round(3 * fl["tf32"], 3)})
    return pd.DataFrame(rows).set_index("GPU")


def floor_distance_table(run: dict, problem: str, variants=None) -> pd.DataFrame:
    """How far each variant is from the floors of the run's own GPU (measured ceilings): time over the
    bytes floor, over the floor of its precision, and over the traffic model's prediction."""
    rows = []
    for key in _keys(problem, variants):
        f = facts(run, problem, key)
        if f is None or "floor_ms" not in f:
            rows.append({"variant": key, "status": missing_status(run, problem, key)})
            continue
        rows.append({"variant": key, "arithmetic": f["compute_precision"], "median ms": f["median_ms"],
                     "× bytes floor": round(f["x_bytes_floor"], 2),
                     "× floor of its precision": round(f["x_floor"], 2),
                     "model prediction ms": round(f["predicted_ms"], 3), "bound (model)": f["predicted_bound"],
                     "× prediction": round(f["x_predicted"], 2),
                     "% of its precision's peak": round(f["pct_peak"], 1)})
    return pd.DataFrame(rows).set_index("variant")


def epilogue_table(run: dict, problem: str, variants=None, goal: float = EPILOGUE_GOAL) -> pd.DataFrame:
    """The epilogue kernels timed alone on a precomputed conv output, against a device copy of the
    same bytes timed in the same rounds (the step-02 goal: >= 90 % of copy bandwidth)."""
    keys = variants or [v.key for v in R.all_variants(problem, kind="epilogue")]
    rows = []
    for key in keys:
        r = record(run, problem, key)
        if r is None or r.get("epilogue_alone_ms") is None:
            rows.append({"variant": key, "status": missing_status(run, problem, key)})
            continue
        rows.append({"variant": key, "epilogue alone ms": r["epilogue_alone_ms"],
                     "GB/s (read + write)": r["epilogue_alone_gbps"],
                     "copy of same bytes ms": r["copy_same_bytes_ms"],
                     "% of copy bandwidth": round(100 * r["epilogue_alone_vs_copy"], 1),
                     f"goal ≥ {100 * goal:.0f} %": "met" if r["epilogue_alone_vs_copy"] >= goal else "missed",
                     "whole call ms": r.get("median_ms")})
    return pd.DataFrame(rows).set_index("variant")


def split_schemes_table(run: dict, problem: str) -> pd.DataFrame:
    """FP32 accuracy on TF32 tensor cores, scheme by scheme: the tensor-time floor on the GPU of the run
    (conv FLOPs x passes at its measured TF32 rate) against the recorded torch.compile, the error a CPU
    model of the scheme gives on one image of the problem (convfuse/splits.py), and the error the
    fastest recorded direct-conv kernel of that precision measured on the GPU."""
    from . import splits

    prob = P.get(problem)
    gpu = measured_gpu(run)
    comp = (record(run, problem, "compile") or {}).get("median_ms")
    modelled = splits.model_errors(problem, prob.model_slice)
    rows = []
    for scheme in splits.SCHEMES:
        kernels = [r for r in run.get("records", []) if r["problem"] == problem and r.get("kind") != "reference"
                   and r.get("precision") == scheme and r.get("median_ms")
                   and traffic.algorithm(prob, r["variant"]) == "direct"]     # the floor is the direct conv's
        fastest = min(kernels, key=lambda r: r["median_ms"], default=None)
        floor = traffic.tensor_floor_ms(prob, gpu, scheme) if gpu else None
        rows.append({
            "scheme": scheme, "tensor passes": traffic.TENSOR_PASSES[scheme],
            "tensor floor ms": floor, "torch.compile ms": comp,
            "floor / compile": floor / comp if floor and comp else None,
            "modelled rel-L2": modelled[scheme]["rel_l2"], "modelled max-abs": modelled[scheme]["max_abs"],
            "fastest kernel": fastest["variant"] if fastest else "none recorded",
            "its ms": fastest["median_ms"] if fastest else None,
            "its rel-L2 (GPU)": fastest.get("rel_l2_err_fp64") if fastest else None,
        })
    return pd.DataFrame(rows)


def gemm_table() -> pd.DataFrame:
    """Implicit GEMM as step 04 maps it: C[M×N] = A[M×K]·B[K×N] with M = Cout, N = output pixels,
    K = Cin·kᵈ (A the weights, B the im2col matrix of x — never built: each k-step reads B from a
    haloed input tile in shared memory). M = Cout puts adjacent pixels of one channel in each thread's
    accumulator pair: the NCHW order of y."""
    rows = []
    for p in P.PROBLEMS.values():
        y = p.output_shape()
        M, N, K = traffic.gemm_dims(p)
        rows.append({"problem": p.key, "M = Cout": M, "N = output pixels": N, "K = Cin·kᵈ": K,
                     "k8 steps": K // 8, "GEMM GFLOP (2MNK)": round(2 * M * N * K / 1e9, 1),
                     "m16n8k8 MMAs": (M // 16) * (N // 8) * (K // 8),
                     "im2col size / x size": round(N * K / traffic._numel(p.input_shape), 1),
                     "output bytes / input bytes": round(traffic._numel(y) / traffic._numel(p.input_shape), 1),
                     "FLOPs per floor byte": round(2 * M * N * K / traffic.floor_bytes(p), 1)})
    return pd.DataFrame(rows).set_index("problem")


def predictions_table(problem: str, run: dict | None = None, variants=None) -> pd.DataFrame:
    """The traffic model's time for every variant on every datasheet GPU (ms), beside what the run
    measured on its own GPU and what the model predicts from the run's measured ceilings."""
    prob = P.get(problem)
    g = measured_gpu(run) if run else None
    rows = []
    for v in R.all_variants(problem):
        if variants is not None and v.key not in variants:
            continue
        row = {"variant": v.key, "precision": v.precision,
               "modeled GB": round(traffic.model_bytes(prob, v.key) / 1e9, 2)}
        for gpu in traffic.DATASHEET_GPUS:
            row[gpu.name] = round(traffic.predict_ms(prob, v.key, v.precision, gpu)["ms"], 3)
        if g:
            row["model on measured ceilings"] = round(traffic.predict_ms(prob, v.key, v.precision, g)["ms"], 3)
            r = record(run, problem, v.key)
            row[f"measured ({run['env'].get('gpu')})"] = r["median_ms"] if r else NOT_RECORDED
        rows.append(row)
    return pd.DataFrame(rows).set_index("variant")


def bytes_check_table(run: dict, problem: str, variants=None) -> pd.DataFrame:
    """The traffic model's DRAM bytes against Nsight Compute's (dram__bytes_read + write, recorded by
    `make profile` as dram_bytes_measured), per variant."""
    rows = []
    for key in _keys(problem, variants):
        r = record(run, problem, key)
        modeled = traffic.model_bytes(P.get(problem), key)
        meas = r.get("dram_bytes_measured") if r else None
        rows.append({"variant": key, "modeled GB": round(modeled / 1e9, 3),
                     "measured GB (ncu)": round(meas / 1e9, 3) if meas else NOT_RECORDED,
                     "measured / modeled": round(meas / modeled, 2) if meas else None,
                     "kernels (ncu)": len(r.get("ncu_kernels") or []) if r and r.get("ncu_kernels") else None})
    return pd.DataFrame(rows).set_index("variant")


# the Hopper kernels notebook 04's "what bounds them" names, in its order
BOUND_KERNELS = (("conv3d", "04b_wgmma_tf32"), ("conv2d", "04d_rs_tf32"), ("conv2d", "04d_rs_3xtf32"),
                 ("conv2d", "04c_ws_3xfp16"))
EVIDENCE_COLUMNS = ["what", "value", "unit", "build", "date"]


def evidence_runs(run: dict) -> list[dict]:
    """The runs whose evidence a page shows: `run` and every other recorded GPU's (every_run), or `run` alone."""
    return every_run(run) or ([run] if run.get("records") else [])


def evidence_table(run: dict, kernels) -> pd.DataFrame:
    """The profiler's and the ablations' figures that any recorded GPU holds for these (problem, variant) kernels
    (results.evidence: what was measured, on which build, when), indexed by kernel and GPU: a record that lacks a
    kernel's evidence leaves it to the record that has it. One row saying why where no record holds any."""
    frames = []
    for pk, key in kernels:
        for rn in evidence_runs(run):
            e = results.evidence(rn, pk, key)
            if len(e):
                frames.append(e.assign(kernel=f"{pk} {key}", GPU=short_gpu(rn))[["kernel", "GPU"] + EVIDENCE_COLUMNS])
    if not frames:
        return pd.DataFrame([{"kernel": "—", "what": f"{NOT_RECORDED}: no recorded GPU holds evidence for "
                              + ", ".join(f"{pk} {key}" for pk, key in kernels)}]).set_index("kernel")
    return pd.concat(frames).set_index(["kernel", "GPU"])


def bounds_evidence(run: dict) -> pd.DataFrame:
    """What bounds the Hopper kernels, as the results files record it (BOUND_KERNELS)."""
    return evidence_table(run, BOUND_KERNELS)


def evidence_run(run: dict, problem: str, variant: str) -> dict | None:
    """The first of evidence_runs(run) that holds evidence for the kernel, else None."""
    return next((rn for rn in evidence_runs(run) if len(results.evidence(rn, problem, variant))), None)


def evidence_value(run: dict, problem: str, variant: str, what: str, build: str | None = None):
    """One recorded figure of a kernel's evidence (the first whose `what`, and `build` if given, match) from the
    record that holds the kernel's evidence (evidence_run), else None. evidence_gpu names that record's GPU."""
    rn = evidence_run(run, problem, variant)
    if rn is None:
        return None
    e = results.evidence(rn, problem, variant)
    e = e[(e["what"] == what) & ((e["build"] == build) if build is not None else True)]
    return None if e.empty else e["value"].iloc[0]


def evidence_gpu(run: dict, problem: str, variant: str) -> str:
    """The short name of the GPU whose record holds the kernel's evidence ("H200"), or a dash."""
    rn = evidence_run(run, problem, variant)
    return short_gpu(rn) if rn else "—"


def microbenchmark_table(run: dict, name: str = "wgmma_rate") -> pd.DataFrame:
    """The wgmma rate microbenchmark's cases with a neighbour warpgroup (the rate the tensor pipe keeps beside other
    work), from the newest run of it in each recorded GPU's file that holds one, indexed by GPU and case."""
    frames = []
    for rn in evidence_runs(run):
        t = results.microbenchmark(rn, name)
        if t.empty:
            continue
        last = t.index.get_level_values("date").max()              # the newest run has every case
        t = t.xs(last, level="date")
        t = t[t["mode"].str.contains("warpgroup")]
        t = t[["mode", "n", "group", "flop_per_cycle", "of_tf32_rate"]].rename(
            columns={"flop_per_cycle": "FLOP a cycle an SM", "of_tf32_rate": "× the dense TF32 rate"})
        frames.append(t.assign(GPU=short_gpu(rn)).reset_index().set_index(["GPU", "case"]))
    if not frames:
        return pd.DataFrame([{"case": "—", "mode": f"{NOT_RECORDED}: no recorded GPU ran the {name} microbenchmark"}]
                            ).set_index("case")
    t = pd.concat(frames)
    t["n"] = t["n"].astype(int)
    t["FLOP a cycle an SM"] = t["FLOP a cycle an SM"].round().astype(int)
    return t.round({"× the dense TF32 rate": 3})


def hardening_summary(run: dict):
    """The recorded run's GPU test suites (the results file's `hardening`): how many passed, on which GPU and when."""
    h = run.get("hardening") or {}
    lines = [f"`{t['suite']}` on the {t.get('gpu', '?')} ({t.get('date', '?')}): {t.get('passed', 0)} passed, "
             f"{t.get('failed', 0)} failed, {t.get('skipped', 0)} skipped"
             for t in (h.get(k) for k in ("gpu_hardening_tests", "gpu_tests")) if t]
    return md(lines or [f"GPU test suites: {NOT_RECORDED}"])


def results_table(run: dict) -> pd.DataFrame:
    """Both problems, every recorded variant: the headline table of the report index."""
    frames = []
    for pk in PROBLEMS:
        df = table(run, pk, columns=("variant", "precision", "median_ms", "speedup_vs_eager",
                                     "speedup_vs_compile", "verified", "rel_l2_err_fp64"))
        if "rel L2 err" in df:
            df["rel L2 err"] = df["rel L2 err"].map(lambda x: f"{x:.1e}" if isinstance(x, float) and x == x else "—")
        df.insert(0, "problem", pk)
        frames.append(df.reset_index())
    return pd.concat(frames).set_index(["problem", "variant"])


def missing_status(run: dict, problem: str, key: str) -> str:
    """What a table says in the row of a variant the run lacks: why, where the record says (cuDNN's fused graph
    skipped, refused or not yet measured on that GPU), else "not recorded yet"."""
    why = cudnn_fused_status(run, problem) if key in OPTIONAL_REFERENCES and run.get("env") else None
    return f"not measured on the {short_gpu(run)}: {why}" if why else NOT_RECORDED


def missing(run: dict, problem: str, variants) -> list[str]:
    return [k for k in variants if record(run, problem, k) is None]


# --- step 04's notebooks: the kernels' own lines, the lab record's tables -------------------------------------------
LAB_RECORD = R.ROOT / "notes" / "kernel_log.md"
_DEF_START = re.compile(r"^\s*(template\s*<|__global__|__device__|static\s|inline\s)")
_SWITCH = re.compile(r"\s*\((?:[^()]*?)`CF_[A-Z0-9_]+[^)]*\)|`CF_[A-Z0-9_=/]+`")


def _code_only(line: str) -> str:
    return line.split("//", 1)[0]


def kernel_lines(relpath: str, name: str | None = None, start: str | None = None, end: str | None = None,
                 comments: bool = True, after: str | None = None) -> tuple[int, int, str]:
    """Lines of a file under the repository, as (first line, last line, text), 1-based and inclusive. With `name`: the
    definition of that function (its template line, qualifiers and, with `comments`, the comment block right above
    it, through the brace that closes its body). With `start` (and `end`): from the first line containing `start`
    (the first after a line containing `after`, if given) through the line before the next one containing `end` (to
    the end of the enclosing block without `end`).
    Raises LookupError when nothing matches, so a notebook cannot silently show the wrong lines."""
    lines = (R.ROOT / relpath).read_text().splitlines()
    if name is not None:
        pat = re.compile(rf"\b{re.escape(name)}\s*\(")
        for i, ln in enumerate(lines):
            m = pat.search(_code_only(ln))
            if not m:
                continue
            pre = _code_only(ln)[:m.start()]
            if re.search(r"[=(,.]\s*$|\breturn\b|\{", pre):
                continue                          # a call (a one-line wrapper's body, an argument), not the name
            j, depth, opened = i, 0, False       # a definition: a '{' comes before any ';' at depth 0
            while j < len(lines):
                code = _code_only(lines[j])
                for ch in code:
                    if ch == "{":
                        depth += 1
                        opened = True
                    elif ch == "}":
                        depth -= 1
                    elif ch == ";" and not opened and depth == 0:
                        break
                else:
                    if opened and depth == 0:
                        break
                    j += 1
                    continue
                break
            if not opened or depth != 0:
                continue
            first = i
            while first > 0 and _DEF_START.match(lines[first - 1]) and "{" not in lines[first - 1] \
                    and ";" not in lines[first - 1]:
                first -= 1
            if not _DEF_START.match(lines[first]) and not _DEF_START.match(lines[i]):
                continue                          # a call inside a body, not a definition
            while comments and first > 0 and lines[first - 1].lstrip().startswith("//"):
                first -= 1
            return first + 1, j + 1, "\n".join(lines[first:j + 1])
        raise LookupError(f"{relpath}: no definition of {name}()")
    if start is None:
        raise ValueError("kernel_lines needs a name or a start marker")
    i0 = 0
    if after is not None:
        i0 = next((k for k, ln in enumerate(lines) if after in ln), None)
        if i0 is None:
            raise LookupError(f"{relpath}: no line containing {after!r}")
    i = next((k for k, ln in enumerate(lines) if k >= i0 and start in ln), None)
    if i is None:
        raise LookupError(f"{relpath}: no line containing {start!r}")
    if end is not None:
        j = next((k for k in range(i + 1, len(lines)) if end in lines[k]), None)
        if j is None:
            raise LookupError(f"{relpath}: no line containing {end!r} after {start!r}")
        j -= 1
    else:                                          # to the end of the block the marker sits in
        depth, j = 0, i
        for k in range(i, len(lines)):
            depth += _code_only(lines[k]).count("{") - _code_only(lines[k]).count("}")
            if depth < 0:
                j = k - 1
                break
            j = k
    while j > i and not lines[j].strip():
        j -= 1
    return i + 1, j + 1, "\n".join(lines[i:j + 1])


_PP = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


def _pp_true(kind: str, cond: str, defines) -> bool:
    cond = cond.split("//", 1)[0].strip()
    if kind == "ifdef":
        return cond in defines
    if kind == "ifndef":
        return cond not in defines
    expr = re.sub(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
                  lambda m: str((m.group(1) or m.group(2)) in defines), cond)
    expr = expr.replace("||", " or ").replace("&&", " and ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    expr = re.sub(r"\b(?!True\b|False\b|and\b|or\b|not\b)[A-Za-z_]\w*\b", lambda m: str(m.group(0) in defines), expr)
    return bool(eval(expr, {"__builtins__": {}}, {}))      # only True/False/and/or/not/() and integers are left


def select_branches(text: str, defines=()) -> str:
    """`text` with its preprocessor conditionals resolved as a build with `defines` (names, "-D" optional) sees them:
    the taken branch's lines stay, the others and the #if/#else/#endif lines go. A conditional on anything but
    defined-ness of names (or a bare name, taken as defined or not) raises ValueError."""
    defs = {d.removeprefix("-D").split("=", 1)[0] for d in defines}
    out, stack = [], []               # stack of (this branch active, some branch of this #if taken, parent active)
    active = True
    for ln in text.splitlines():
        m = _PP.match(ln)
        if not m:
            if active:
                out.append(ln)
            continue
        kind, cond = m.group(1), m.group(2)
        try:
            if kind in ("if", "ifdef", "ifndef"):
                t = _pp_true(kind, cond, defs)
                stack.append((active and t, t, active))
            elif kind == "elif":
                _, taken, parent = stack.pop()
                t = not taken and _pp_true("if", cond, defs)
                stack.append((parent and t, taken or t, parent))
            elif kind == "else":
                _, taken, parent = stack.pop()
                stack.append((parent and not taken, True, parent))
            else:
                stack.pop()
        except (SyntaxError, NameError, TypeError, IndexError) as e:
            raise ValueError(f"cannot resolve {ln.strip()!r}") from e
        active = stack[-1][0] if stack else True
    if stack:
        raise ValueError("unterminated #if")
    return "\n".join(out)


def kernel_excerpt(relpath: str, *names: str, start: str | None = None, end: str | None = None,
                   after: str | None = None, build: tuple[str, str] | None = None, note: str = ""):
    """The lines that matter of a kernel file, read from the file itself (so the page shows what the build compiles):
    each named function's definition, or the range from `start` to `end` (kernel_lines), under a heading with the
    file and line numbers. With `build` = (problem, variant), the preprocessor branches that registered build does
    not compile are left out (select_branches with the registry's defines). A file that does not exist yet says so."""
    path = R.ROOT / relpath
    if not path.exists():
        return md(f"`{relpath}`: not written yet.")
    parts = []
    spans = [kernel_lines(relpath, name=n) for n in names] if names else [kernel_lines(relpath, start=start, end=end, after=after)]
    for a, b, text in spans:
        seen = ""
        if build is not None:
            text = select_branches(text, R.get(*build).defines)
            seen = f", as the registered {build[0]} `{build[1]}` build compiles them"
        parts.append(f"**`{relpath}`**, lines {a}–{b}{seen}{note}\n\n```cuda\n{text}\n```")
    return md("\n\n".join(parts))


def lab_tables(path: Path | str | None = None) -> dict[str, pd.DataFrame]:
    """The lab record's tables (notes/kernel_log.md), one DataFrame per `## ` section that holds one, keyed by the
    section's heading; the columns are the table's header (Prec., Idea, Predicted, Measured, Verdict, Date, Code)."""
    text = Path(path or LAB_RECORD).read_text()
    out, section, rows, header = {}, None, [], None

    def close():
        if section and header and rows:
            out[section] = pd.DataFrame(rows, columns=header)

    for ln in text.splitlines():
        if ln.startswith("## "):
            close()
            section, rows, header = ln[3:].strip(), [], None
            continue
        if not ln.startswith("|"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", ln.strip())[1:-1]]
        if header is None:
            header = cells
        elif all(set(c) <= set("-: ") for c in cells):
            continue
        elif len(cells) == len(header):
            rows.append([c.replace("\\|", "|") for c in cells])
    close()
    return out


def _verdict_class(v: str) -> str:
    v = v.lower()
    if "pending" in v or "waits" in v:
        return "waiting for a record"
    if "kept" in v:
        return "kept"
    if "abl" in v or "diagnostic" in v:
        return "measured to explain"
    if "replaced" in v or "reworked" in v:
        return "replaced or reworked"
    return "dropped"


def without_switches(text: str) -> str:
    """A lab-record cell without its build-switch names (the `CF_…` defines of the laboratory), for the study's
    pages: what the idea was, not the switch it was tried under."""
    return re.sub(r"\s{2,}", " ", _SWITCH.sub("", text)).replace(" ;", ";").strip()


_SHORT = ((r"\bc2d\b", "conv2d"), (r"\bc3d\b", "conv3d"), (r"\bWGs\b", "warpgroups"), (r"\bWG\b", "warpgroup"),
          (r"\brec\.(?=\s)", "recorded"), (r"\binstr\.", "instructions"))


def in_full(text: str) -> str:
    """A lab-record cell with the record's abbreviations (c2d, c3d, WG, rec.) written out."""
    for pat, word in _SHORT:
        text = re.sub(pat, word, text)
    return text


def tried_summary(path: Path | str | None = None) -> pd.DataFrame:
    """What was tried on step 04 (and 03b), per table of the lab record: how many ideas, how many kept, dropped,
    replaced or reworked, measured only to explain (ablations, diagnostics), and waiting for a record (measured as a
    candidate, not yet recorded on every GPU)."""
    classes = ["kept", "dropped", "replaced or reworked", "measured to explain", "waiting for a record"]
    rows = []
    for section, df in lab_tables(path).items():
        counts = df["Verdict"].map(_verdict_class).value_counts()
        rows.append({"kernel family": section, "ideas": len(df), **{c: int(counts.get(c, 0)) for c in classes}})
    out = pd.DataFrame(rows, columns=["kernel family", "ideas", *classes]).set_index("kernel family")
    out.loc["all"] = out.sum()
    return out


def tried_table(section: str, path: Path | str | None = None) -> pd.DataFrame:
    """One table of the lab record (the section whose heading starts with `section`), switch names left out."""
    tables = lab_tables(path)
    key = next((k for k in tables if k.startswith(section)), None)
    if key is None:
        return pd.DataFrame([{"Idea": NOT_RECORDED}]).set_index("Idea")
    df = tables[key].copy()
    for c in ("Idea", "Predicted", "Measured", "Verdict"):
        df[c] = df[c].map(lambda t: in_full(without_switches(t)))
    return df.drop(columns=["Code"], errors="ignore").set_index("Idea")


# what the laboratory's build switches did, in words (the evidence's `build` column names the builds it measured)
SWITCH_WORDS = {
    "CF_ABL_RAWEPI": "no epilogue math", "CF_ABL_NOSTORE": "no stores", "CF_ABL_NOLDS": "no fragment loads",
    "CF_ABL_NOSPLIT": "no operand splits", "CF_ABL_NOEPI": "no epilogue", "CF_BOX_ROWMAP": "output-box rows reordered",
    "CF_WINO_DESC_UNIFORM": "descriptors in uniform registers", "CF_WINO_IN_STAGES=3": "three input stages",
    "CF_WINO_SKEW": "warpgroup 1 a pair behind", "CF_WINO_W_STAGES=6": "six weight stages",
    "CF_WINO_CLUSTER=2": "clusters of two sharing the weight copies", "CF_WINO_ROWS": "row sums in the tensor core",
}


def build_words(build: str) -> str:
    """An evidence row's `build` in words: the laboratory's switch names replaced by what they changed."""
    def words(m):
        name = m.group(0)
        return SWITCH_WORDS.get(name, name.removeprefix("CF_").replace("_", " ").lower())
    out = re.sub(r"CF_[A-Z0-9_]+(?:=\d+)?", words, str(build))
    out = re.sub(r"(?<=[a-z0-9)])(?<!without) (?=(no |output-box|three |six |warpgroup |clusters |row sums|descriptors))", ", ",
                 out)
    return out.replace(" + ", " with ")


def evidence_words(run: dict, kernels) -> pd.DataFrame:
    """evidence_table with each build said in words (build_words)."""
    t = evidence_table(run, kernels)
    if "build" in t:
        t["build"] = t["build"].map(lambda b: b if b is None or b != b else build_words(b))
    return t


# --- every recorded GPU: the reference rows, KernelBench's verdicts, predictions against measurements ---------------
REFERENCE_COLUMNS = ("precision", "median_ms", "speedup_vs_eager", "speedup_vs_compile", "verified",
                     "max_abs_err_fp64", "rel_l2_err_fp64")


def cudnn_fused_status(run: dict, problem: str) -> str | None:
    """None where the run records the cudnn_fused rows of `problem`; else why not, in words (the frontend was not
    installed, cuDNN refused the graph, or the record predates the rows)."""
    if any(record(run, problem, k) for k in OPTIONAL_REFERENCES):
        return None
    st = ((run.get("env") or {}).get("cudnn_fused") or {}).get(problem)
    if not st:
        return "not measured in this record (it predates the cuDNN fused rows)"
    msg = str(st.get("message") or "").strip()
    if st.get("status") == "refused":
        return f"cuDNN refused the graph: {msg}" if msg else "cuDNN refused the graph"
    if st.get("status") == "skipped":
        return f"skipped: {msg}" if msg else "skipped (nvidia-cudnn-frontend not installed)"
    return f"{st.get('status', 'absent')}: {msg}" if msg else str(st.get("status", "absent"))


def cudnn_fused_notes(runs) -> list[str]:
    """One line per recorded GPU whose record lacks the cuDNN fused rows, saying why (one line for both problems
    where the reason is the same)."""
    lines = []
    for rn in runs:
        why = {pk: cudnn_fused_status(rn, pk) for pk in PROBLEMS}
        missing = {pk: w for pk, w in why.items() if w}
        if not missing:
            continue
        if len(set(missing.values())) == 1:
            pks = " and ".join(missing)
            lines.append(f"**{gpu_label(rn)}**: no `cudnn_fused` rows for {pks}: {next(iter(missing.values()))}.")
        else:
            lines += [f"**{gpu_label(rn)}**, {pk}: no `cudnn_fused` rows: {w}." for pk, w in missing.items()]
    return lines


def cudnn_plan(rec: dict | None) -> str | None:
    """The execution plan a cudnn_fused row kept, in words: "<name> (fastest of N plans)"."""
    plan = (rec or {}).get("cudnn_plan")
    if not plan:
        return None
    n = plan.get("plans")
    return f"{plan.get('name', '?')}" + (f" (fastest of {n} plans)" if n else "")


def reference_table(runs, problem: str | None = None, variants=None) -> pd.DataFrame:
    """The step-00 reference rows of every recorded GPU, side by side: per problem, row and GPU its median time,
    same-run ratios to eager and torch.compile, its errors against float64 and, for the cuDNN fused rows, the
    execution plan cuDNN's fastest was. A GPU without the cuDNN fused rows has no line for them
    (cudnn_fused_notes says why); any other row it lacks says "not recorded yet"."""
    rows = []
    keys = list(variants) if variants is not None else list(REFERENCES)
    for pk in ([problem] if problem else PROBLEMS):
        for key in keys:
            for rn in runs:
                r = record(rn, pk, key)
                base = {"problem": pk, "variant": key, "GPU": gpu_label(rn)}
                if r is None:
                    if key not in OPTIONAL_REFERENCES:
                        rows.append(base | {"status": NOT_RECORDED})
                    continue
                row = base | {_readable(c): r.get(c) for c in REFERENCE_COLUMNS}
                row["precision"] = traffic.compute_precision(P.get(pk), key, r.get("precision"))   # what the conv ran in
                for c in ("median ms", "× eager", "× compile"):
                    row[c] = round(row[c], 3) if isinstance(row[c], (int, float)) else row[c]
                for c in ("max abs err", "rel L2 err"):
                    row[c] = f"{row[c]:.1e}" if isinstance(row[c], float) else "—"
                if key == "cudnn_conv":
                    row["verified"] = "timed only"
                row["cuDNN plan"] = cudnn_plan(r)
                rows.append(row)
    cols = ["problem", "variant", "GPU", *(_readable(c) for c in REFERENCE_COLUMNS), "cuDNN plan", "status"]
    df = pd.DataFrame(rows, columns=cols)
    for c in ("status", "cuDNN plan"):
        if df[c].isna().all():
            df = df.drop(columns=c)
    if df.empty:
        return pd.DataFrame([{"variant": "—", "status": NOT_RECORDED}]).set_index("variant")
    return df.set_index(["problem", "variant", "GPU"])


def cudnn_fused_lines(runs) -> list[str]:
    """Per GPU and problem, where the run records them: cuDNN's fused graph against torch.compile and our fastest
    kernel of each accuracy class, in same-run ratios (the sentence the notebooks show beside the table)."""
    lines = []
    for rn in runs:
        for pk in PROBLEMS:
            cf = record(rn, pk, "cudnn_fused")
            if not cf or not cf.get("median_ms"):
                continue
            parts = [f"**{pk} on the {gpu_label(rn)}**: cuDNN's fused graph takes {cf['median_ms']:.3f} ms"]
            comp = ratio(rn, pk, "compile", "cudnn_fused")
            if comp:
                parts.append(f"{comp:.2f}× torch.compile's speed")
            nchw = ratio(rn, pk, "cudnn_fused_nchw", "cudnn_fused")
            if nchw:
                parts.append(f"{nchw:.2f}× that time with an NCHW caller's conversions")
            f = facts(rn, pk, "cudnn_fused")
            if cf.get("dram_bytes_measured") and "x_bytes_floor" in f:
                parts.append(f"it moves {cf['dram_bytes_measured'] / 1e9:.2f} GB (ncu; the floor's {f['floor_gb']:.2f} GB) "
                             f"in {f['x_bytes_floor']:.1f}× its bytes floor and "
                             f"{cf['median_ms'] / f['floor_tf32_ms']:.1f}× the conv's TF32 compute floor")
            mine = [r for r in results.records(rn, pk) if r.get("kind") in ("epilogue", "fused") and r.get("verified")
                    and r.get("median_ms")]
            for cls in ("TF32 class", "FP32 class"):
                best_r = min((r for r in mine if accuracy_class(r) == cls), key=lambda r: r["median_ms"], default=None)
                if best_r:
                    parts.append(f"our fastest {cls} kernel (`{best_r['variant']}`) is "
                                 f"{cf['median_ms'] / best_r['median_ms']:.2f}× its speed")
            lines.append("; ".join(parts) + ".")
    return lines


# KernelBench's protocol (convfuse/kernelbench.py): 5 trials of allclose(atol=rtol=1e-4) against eager, the mean of
# 100 timed calls, and a speed-up over eager above 10x flagged as suspect
KERNELBENCH_FIELDS = ("pass", "max_abs_vs_eager", "mean_ms", "speedup_vs_eager", "suspect")
SUSPECT_SPEEDUP = 10.0


def kernelbench_notes(runs) -> list[str]:
    """One line per recorded GPU whose record has no KernelBench verdicts (records before convfuse/kernelbench.py),
    with what the record has instead: this study's allclose against eager (KernelBench's tolerance, this study's
    trials) and its same-run speed-ups over eager above KernelBench's suspect line."""
    lines = []
    for rn in runs:
        if not rn.get("env") or any(r.get("kernelbench") for r in rn["records"]):
            continue
        ours, over = [], []
        for pk in PROBLEMS:
            mine = [r for r in results.records(rn, pk) if r.get("kind") in ("epilogue", "fused")
                    and r.get("kernelbench_pass") is not None]
            if mine:
                ours.append(f"{pk} {sum(bool(r['kernelbench_pass']) for r in mine)} of {len(mine)}")
            over += [f"{pk} `{r['variant']}` ({r['speedup_vs_eager']:.1f}×)" for r in results.records(rn, pk)
                     if r.get("kind") in ("epilogue", "fused") and (r.get("speedup_vs_eager") or 0) > SUSPECT_SPEEDUP]
        line = (f"**{gpu_label(rn)}** ({str(rn['env'].get('date', '?'))[:10]}): KernelBench's own check and timing "
                "were not run on this record.")
        if ours:
            line += (f" {OUR_ALLCLOSE[0].upper() + OUR_ALLCLOSE[1:]} "
                     f"passes {', '.join(ours)} kernels")
            line += (f"; same-run speed-ups over eager above {SUSPECT_SPEEDUP:g}×: {', '.join(over)}." if over
                     else f"; no same-run speed-up over eager is above {SUSPECT_SPEEDUP:g}×.")
        lines.append(line)
    return lines


def kernelbench_table(runs, problem: str | None = None, variants=None) -> pd.DataFrame:
    """KernelBench's verdict on every recorded variant, per GPU: its correctness check (5 trials of allclose
    atol = rtol = 1e-4 against eager PyTorch on the same GPU), the worst |ours − eager| it saw, its timing (the mean
    of 100 calls, L2 flushed before each), the speed-up over eager it computes from them, and its suspect flag (over
    10×); beside them this study's own verdict against float64 and the accuracy class that gives. Runs without
    KernelBench fields have no rows (kernelbench_notes says so)."""
    rows = []
    for pk in ([problem] if problem else PROBLEMS):
        for key in _keys(pk, variants):
            for rn in runs:
                r = record(rn, pk, key)
                kb = (r or {}).get("kernelbench")
                if not kb:
                    continue
                ours = ("timed only" if r.get("verified") is None else
                        accuracy_class(r) if r.get("verified") else "**fails its bound**")
                rows.append({"problem": pk, "variant": key, "GPU": gpu_label(rn), "precision": r.get("precision"),
                             "ours vs float64": ours,
                             KERNELBENCH_CHECK: "pass" if kb.get("pass") else "**fail**",
                             "max |ours − eager|": (f"{kb['max_abs_vs_eager']:.1e}"
                                                    if isinstance(kb.get("max_abs_vs_eager"), (int, float)) else "—"),
                             "mean ms (100 calls)": kb.get("mean_ms"),
                             "× eager (KernelBench)": kb.get("speedup_vs_eager"),
                             "over 10× (suspect)": "**yes**" if kb.get("suspect") else "no"})
    if not rows:
        return pd.DataFrame([{"variant": "—", "status": NOT_RECORDED}]).set_index("variant")
    return pd.DataFrame(rows).set_index(["problem", "variant", "GPU"])


def kernelbench_lines(runs) -> list[str]:
    """Per GPU and problem, KernelBench's verdict on our kernels in one sentence, from the record: how eager's own
    output compares with float64 (the truth KernelBench's check stands on), which of our kernels its check passes and
    fails, by accuracy class, and which it flags as suspect."""
    lines = []
    for rn in runs:
        for pk in PROBLEMS:
            mine = [r for r in results.records(rn, pk) if r.get("kind") in ("epilogue", "fused") and r.get("kernelbench")]
            if not mine:
                continue
            eager = record(rn, pk, "eager") or {}
            e_cls = accuracy_class(eager) if eager.get("rel_l2_err_fp64") is not None else None
            head = f"**{pk} on the {gpu_label(rn)}**: "
            if e_cls:
                head += (f"eager's own output is {e_cls} against float64 (max abs err "
                         f"{eager['max_abs_err_fp64']:.1e}); ")
            by = {}
            for r in mine:
                by.setdefault((accuracy_class(r) if r.get("verified") else "unverified",
                               bool(r["kernelbench"].get("pass"))), []).append(f"`{r['variant']}`")
            parts = []
            for cls in ("FP32 class", "TF32 class", "unverified"):
                n_pass, n_fail = len(by.get((cls, True), [])), len(by.get((cls, False), []))
                if n_pass + n_fail == 0:
                    continue
                s = f"{cls}: {n_pass} of {n_pass + n_fail} pass"
                if n_fail and n_pass:
                    s += f" (failing: {', '.join(by[(cls, False)])})"
                parts.append(s)
            sus = [f"`{r['variant']}` ({r['kernelbench']['speedup_vs_eager']:.1f}×)" for r in mine
                   if r["kernelbench"].get("suspect")]
            tail = ("; over 10× eager (suspect): " + ", ".join(sus)) if sus else "; none over 10× eager"
            lines.append(head + f"{KERNELBENCH_CHECK} on our kernels — " + "; ".join(parts) + tail + ".")
    return lines


def suspect_table(runs) -> pd.DataFrame:
    """Every kernel over KernelBench's suspect line (10× eager: its flag where the record carries KernelBench's
    verdicts, else this study's same-run median ratio), against the floors of its own GPU: eager's time, the
    arithmetic eager's conv runs in and the traffic model's time for eager at the measured ceilings (its conv and its
    elementwise passes), the kernel's time and its floor (bytes, or its arithmetic at its measured peak). The last
    column is the largest speed-up over eager the floors allow: a speed-up below it is what the hardware permits."""
    rows = []
    for rn in runs:
        for pk in PROBLEMS:
            e = facts(rn, pk, "eager")
            ekb = ((record(rn, pk, "eager") or {}).get("kernelbench") or {})
            for r in results.records(rn, pk):
                if r.get("kind") not in ("epilogue", "fused"):
                    continue
                kb = r.get("kernelbench") or {}
                flagged = kb.get("suspect") if kb else (r.get("speedup_vs_eager") or 0) > SUSPECT_SPEEDUP
                f = facts(rn, pk, r["variant"])
                if not flagged or not f or "floor_ms" not in f or not e or "floor_ms" not in e:
                    continue
                use_kb = bool(kb.get("mean_ms") and ekb.get("mean_ms"))
                eager_ms = ekb["mean_ms"] if use_kb else e["median_ms"]
                kernel_ms = kb["mean_ms"] if use_kb else f["median_ms"]
                rows.append({"problem": pk, "variant": r["variant"], "GPU": gpu_label(rn),
                             "timing": "KernelBench (mean of 100)" if use_kb else "this study (median)",
                             "× eager": round(kb.get("speedup_vs_eager") or eager_ms / kernel_ms, 2),
                             "eager ms": round(eager_ms, 3), "eager's conv arithmetic": e["compute_precision"],
                             "eager, model ms (measured ceilings)": round(e["predicted_ms"], 3),
                             "kernel ms": round(kernel_ms, 3), "kernel precision": f["precision"],
                             "kernel floor ms": round(f["floor_ms"], 3),
                             "largest × eager the floors allow": round(eager_ms / f["floor_ms"], 1)})
    if not rows:
        return pd.DataFrame([{"variant": "—", "status": f"no kernel over {SUSPECT_SPEEDUP:g}× eager recorded"}]
                            ).set_index("variant")
    return pd.DataFrame(rows).set_index(["problem", "variant", "GPU"])


def suspect_lines(runs) -> list[str]:
    """Whether each speed-up over the suspect line is within what the floors allow (suspect_table), in one line."""
    t = suspect_table(runs)
    if "× eager" not in t:
        return [f"No kernel's speed-up over eager is above {SUSPECT_SPEEDUP:g}× in any recorded run."]
    over = t[t["× eager"] > t["largest × eager the floors allow"]]
    n = len(t)
    if over.empty:
        share = t["× eager"] / t["largest × eager the floors allow"]
        (pk, v, g), top = share.idxmax(), t.loc[share.idxmax()]
        return [f"All {n} speed-ups over the line are below the largest the floors allow on their GPU; the closest, "
                f"{pk} `{v}` on the {g}, is {top['× eager']:.1f}× against {top['largest × eager the floors allow']:.1f}× "
                f"({100 * share.max():.0f} % of the room)."]
    return [f"**{len(over)} of {n} speed-ups exceed what the floors allow**, which no correct kernel can: "
            + ", ".join(f"{pk} `{v}` on the {g}" for pk, v, g in over.index) + " — a measurement to distrust."]


# --- speed-ups per GPU, and the portable (sm_80) path -------------------------------------------------------------
def speedups_table(runs, problem: str, variants=None) -> pd.DataFrame:
    """Per variant (rows) and GPU (column groups): median ms and same-run ratios to eager, torch.compile and cuDNN's
    fused graph (a dash where that GPU's record lacks the row)."""
    cols, data = [], {}
    for rn in runs:
        g = short_gpu(rn)
        for key in _keys(problem, variants):
            r = record(rn, problem, key)
            if r is None:
                continue
            d = data.setdefault(key, {})
            d[(g, "ms")] = r.get("median_ms")
            for ref, name in (("eager", "× eager"), ("compile", "× compile"), ("cudnn_fused", "× cuDNN fused")):
                d[(g, name)] = ratio(rn, problem, ref, key)
        cols += [(g, c) for c in ("ms", "× eager", "× compile", "× cuDNN fused")]
    if not data:
        return pd.DataFrame([{"variant": "—", "status": NOT_RECORDED}]).set_index("variant")
    df = pd.DataFrame.from_dict(data, orient="index")
    df = df.reindex(columns=pd.MultiIndex.from_tuples(list(dict.fromkeys(cols))))
    df = df.dropna(axis=1, how="all")
    df.index.name = "variant"
    return df.round(3)


def portable_table(runs) -> pd.DataFrame:
    """The portable path: per problem, accuracy class and GPU, the fastest verified kernel that runs on any sm_80+ GPU
    (steps 01–04, no sm_90a code) beside the fastest of all, each against torch.compile and cuDNN's fused graph of the
    same run. On an H100 the sm_80 kernels stand for what an A100 user can run."""
    rows = []
    for pk in PROBLEMS:
        portable = {v.key for v in R.kernel_variants(pk) if v.needs_cc is None}
        for cls in ("TF32 class", "FP32 class"):
            for rn in runs:
                mine = [r for r in results.records(rn, pk) if r.get("kind") in ("epilogue", "fused")
                        and r.get("verified") and r.get("median_ms") and accuracy_class(r) == cls]
                if not mine:
                    continue
                row = {"problem": pk, "accuracy": cls, "GPU": gpu_label(rn)}
                for what, pool in (("portable", [r for r in mine if r["variant"] in portable]), ("any", mine)):
                    b = min(pool, key=lambda r: r["median_ms"], default=None)
                    row[f"fastest ({what})"] = b["variant"] if b else "none"
                    row[f"{what} ms"] = b["median_ms"] if b else None
                    row[f"{what} × compile"] = ratio(rn, pk, "compile", b["variant"]) if b else None
                    row[f"{what} × cuDNN fused"] = ratio(rn, pk, "cudnn_fused", b["variant"]) if b else None
                rows.append(row)
    if not rows:
        return pd.DataFrame([{"problem": "—", "status": NOT_RECORDED}]).set_index("problem")
    df = pd.DataFrame(rows).set_index(["problem", "accuracy", "GPU"])
    return df.dropna(axis=1, how="all").round(3)


# --- the library face: fuse(model) in a user's model ---------------------------------------------------------------
FUSE_ROWS = (("eager", "eager"), ("compile", "torch.compile(model)"), ("fused", "fuse(model)"),
             ("fused_compiled", "torch.compile(fuse(model), fullgraph=True)"))


def fuse_runs() -> list[dict]:
    """The `python -m convfuse fuse` records (results/fuse/<gpu>.json), one per GPU."""
    d = results_dir() / "fuse"
    return [json.loads(p.read_text()) | {"path": str(p)} for p in sorted(d.glob("*.json"))] if d.is_dir() else []


def fuse_table() -> pd.DataFrame:
    """Per GPU, problem and class: the kernel fuse() chose and each way of running the model, timed in one process
    (median ms, same-run ratios) after its check against float64 in its class."""
    rows = []
    for rec in fuse_runs():
        for run in rec["runs"]:
            for key, label in FUSE_ROWS:
                r = run["rows"][key]
                rows.append({"GPU": gpu_label(rec), "problem": run["problem"], "class": run["precision"].upper(),
                             "kernel": run["variant"], "runs as": label, "ms": r["median_ms"],
                             "× eager": r["x_eager"], "× torch.compile": r["x_compile"],
                             "rel-L2 vs float64": r["rel_l2_err_fp64"],
                             "within its class": "yes" if r["within_bound"] else "**no**"})
    if not rows:
        return pd.DataFrame([{"GPU": "—", "status": f"{NOT_RECORDED}: `python -m convfuse fuse` on a GPU writes "
                                                    "results/fuse/<gpu>.json"}]).set_index("GPU")
    return pd.DataFrame(rows).set_index(["GPU", "problem", "class", "kernel", "runs as"])


def fuse_lines() -> list[str]:
    """Where each record was made, and the speed-up a user gets from fuse() over torch.compile(model)."""
    out = []
    for rec in fuse_runs():
        env = rec["env"]
        for run in rec["runs"]:
            r = run["rows"]["fused_compiled"]
            out.append(f"{env['gpu']} ({env['date'][:10]}, torch {env['torch']}): {run['problem']} in the "
                       f"{run['precision'].upper()} class runs `{run['variant']}`, "
                       f"{r['median_ms']:.3f} ms compiled, {r['x_compile']:.2f}× `torch.compile(model)`")
    return out


# --- a prediction made before a GPU was measured, against the measurement -----------------------------------------
def predictions_dir() -> Path:
    return results_dir() / "predictions"


def prediction(key: str = "h100-sxm") -> dict | None:
    """results/predictions/<datasheet key>.json: the traffic model's times for a GPU, committed before its first
    record (gpu, made, commit, model, predictions: {problem: {variant: {ms, memory_ms, math_ms, bound}}}); None
    where there is none."""
    import json

    path = predictions_dir() / f"{key}.json"
    if not path.exists():
        return None
    return json.loads(path.read_text()) | {"path": str(path)}


def run_for_gpu(key: str, runs_=None) -> dict | None:
    """The newest recorded run on the GPU of datasheet entry `key` ("h100-sxm"), or None."""
    from .plots import datasheet_for

    for rn in (runs() if runs_ is None else runs_):
        ds = datasheet_for(rn.get("env") or {})
        if ds and ds.key == key:
            return rn
    return None


def prediction_header(pred: dict | None) -> str:
    """Where a prediction comes from: its GPU's datasheet ceilings, when and on which commit it was made."""
    if not pred:
        return f"Prediction: {NOT_RECORDED} (results/predictions/)."
    g = pred.get("gpu") or {}
    return (f"**Prediction** `{Path(pred.get('path', '')).name}`: made {str(pred.get('made', '?'))[:16].replace('T', ' ')} "
            f"UTC on commit `{pred.get('commit', '?')}`, before the GPU was measured; the model "
            f"({pred.get('model', 'traffic.predict_ms').split(':')[0]}) at the datasheet ceilings of the "
            f"{g.get('name', '?')}: {g.get('dram_gbps', '?'):,} GB/s, FP32 {g.get('fp32_tflops', '?')} TFLOP/s, "
            f"TF32 {g.get('tf32_tflops', '?')} TFLOP/s (dense).")


def _pred_rows(run: dict, pred: dict) -> list[dict]:
    g = measured_gpu(run)
    rows = []
    for pk, entries in (pred.get("predictions") or {}).items():
        for key, p in entries.items():
            r = record(run, pk, key)
            row = {"problem": pk, "variant": key, "predicted ms": p["ms"], "bound (datasheet)": p.get("bound"),
                   "measured ms": r.get("median_ms") if r else None}
            if r and r.get("median_ms") and g:
                try:
                    m = traffic.predict_ms(P.get(pk), key, r.get("precision", p.get("precision", "fp32")), g)
                except ValueError:
                    m = None
                row["measured / predicted"] = r["median_ms"] / p["ms"]
                if m:
                    row.update({"model at measured ceilings ms": m["ms"], "bound (measured)": m["bound"],
                                "ceilings: datasheet vs achievable": m["ms"] / p["ms"],
                                "kernel vs its ceiling": r["median_ms"] / m["ms"]})
            rows.append(row)
    return rows


def prediction_table(run: dict | None, pred: dict | None, problem: str | None = None) -> pd.DataFrame:
    """A committed prediction against the record of its GPU, per problem and variant: the predicted ms and bound
    (datasheet ceilings), the measured median, and measured / predicted split in two factors that multiply to it —
    the model at the record's measured ceilings over the prediction (datasheet against achievable ceilings), and the
    measurement over that model (the kernel below its own ceiling)."""
    if not pred or not run or not run.get("env"):
        return pd.DataFrame([{"variant": "—", "status": NOT_RECORDED}]).set_index("variant")
    cols = ["problem", "variant", "predicted ms", "bound (datasheet)", "measured ms", "measured / predicted",
            "model at measured ceilings ms", "bound (measured)", "ceilings: datasheet vs achievable",
            "kernel vs its ceiling"]
    rows = [r for r in _pred_rows(run, pred) if problem is None or r["problem"] == problem]
    df = pd.DataFrame(rows, columns=cols).set_index(["problem", "variant"]).round(3)
    df["measured ms"] = df["measured ms"].astype(object).where(df["measured ms"].notna(), NOT_RECORDED)
    return df.droplevel("problem") if problem else df


def prediction_facts(run: dict | None, pred: dict | None) -> dict | None:
    """What the prediction table says, for sentences: the datasheet and measured ceilings and their ratios, how many
    variants ran slower than predicted, the median and extreme misses, and the share of the misses the ceilings
    explain. None without a prediction or a measured run."""
    if not pred or not run or not measured_gpu(run):
        return None
    rows = [r for r in _pred_rows(run, pred) if r.get("measured / predicted") is not None]
    if not rows:
        return None
    g, d = measured_gpu(run), pred.get("gpu") or {}
    x = sorted(rows, key=lambda r: r["measured / predicted"])
    ceil = [r["ceilings: datasheet vs achievable"] for r in rows if r.get("ceilings: datasheet vs achievable")]
    kern = [r["kernel vs its ceiling"] for r in rows if r.get("kernel vs its ceiling")]
    med = lambda v: sorted(v)[len(v) // 2] if v else None       # noqa: E731
    return {"gpu": gpu_label(run), "n": len(rows), "n_slower": sum(r["measured / predicted"] > 1 for r in rows),
            "median_x": med([r["measured / predicted"] for r in rows]), "min": x[0], "max": x[-1], "worst": x[::-1][:3],
            "ds_gbps": d.get("dram_gbps"), "ds_tf32": d.get("tf32_tflops"), "ds_fp32": d.get("fp32_tflops"),
            "copy_gbps": g.dram_gbps, "tf32_tflops": g.tf32_tflops, "fp32_tflops": g.fp32_tflops,
            "copy_share": g.dram_gbps / d["dram_gbps"] if d.get("dram_gbps") else None,
            "tf32_share": g.tf32_tflops / d["tf32_tflops"] if d.get("tf32_tflops") else None,
            "fp32_share": g.fp32_tflops / d["fp32_tflops"] if d.get("fp32_tflops") else None,
            "median_ceiling_x": med(ceil), "median_kernel_x": med(kern),
            "n_kernel_over_1_5": sum(k > 1.5 for k in kern), "n_kernel": len(kern)}


def prediction_lines(run: dict | None, pred: dict | None) -> list[str]:
    """The prediction against the measurement in sentences, every number from the prediction file and the record."""
    f = prediction_facts(run, pred)
    if f is None:
        return [f"Prediction against measurement: {NOT_RECORDED} (needs results/predictions/<gpu>.json and that "
                "GPU's record)."]

    def name(r):
        return f"{r['problem']} `{r['variant']}`"

    lines = [f"On the {f['gpu']}, {f['n_slower']} of {f['n']} recorded rows ran slower than predicted; the median "
             f"row took {f['median_x']:.2f}× its predicted time, from {f['min']['measured / predicted']:.2f}× "
             f"({name(f['min'])}) to {f['max']['measured / predicted']:.2f}× ({name(f['max'])})."]
    if f["copy_share"] and f["tf32_share"]:
        lines.append(f"The ceilings: the record measured {f['copy_gbps']:,.0f} GB/s of copy bandwidth, "
                     f"{100 * f['copy_share']:.0f} % of the datasheet's {f['ds_gbps']:,} GB/s; {f['tf32_tflops']:.0f} "
                     f"TF32 TFLOP/s, {100 * f['tf32_share']:.0f} % of its {f['ds_tf32']} (dense); {f['fp32_tflops']:.1f} "
                     f"FP32 TFLOP/s, {100 * f['fp32_share']:.0f} % of its {f['ds_fp32']}. So a row predicted at the "
                     f"datasheet ceilings is already {f['median_ceiling_x']:.2f}× slower at the achievable ones "
                     "(median over the rows).")
    lines.append(f"The rest is each row below its own ceiling: the median row took {f['median_kernel_x']:.2f}× the "
                 f"model's time at the measured ceilings, and {f['n_kernel_over_1_5']} of {f['n_kernel']} took more "
                 "than 1.5× it.")
    lines.append("Missed by the most: " + "; ".join(
        f"{name(r)} {r['measured / predicted']:.2f}× (ceilings {r['ceilings: datasheet vs achievable']:.2f}×, "
        f"below its ceiling {r['kernel vs its ceiling']:.2f}×)" for r in f["worst"]
        if r.get("kernel vs its ceiling")) + ".")
    return lines


def published_table(run: dict | None, key: str = "h100-sxm") -> pd.DataFrame:
    """KernelBench's published eager and torch.compile times on a GPU (traffic.KERNELBENCH_PUBLISHED_MS) beside this
    study's measurement of the same rows on that GPU's record (another torch, another cuDNN: a comparison, not a
    check)."""
    entry = traffic.KERNELBENCH_PUBLISHED_MS.get(key)
    if not entry:
        return pd.DataFrame([{"variant": "—", "status": NOT_RECORDED}]).set_index("variant")
    rows = []
    for pk in PROBLEMS:
        for ref, ms in entry[pk].items():
            r = record(run, pk, ref) if run else None
            rows.append({"problem": pk, "variant": ref, "KernelBench published ms": ms,
                         f"measured ms ({gpu_label(run) if run else '—'})": r["median_ms"] if r else NOT_RECORDED,
                         "published / measured": round(ms / r["median_ms"], 2) if r else None})
    return pd.DataFrame(rows).set_index(["problem", "variant"])


# --- numbers the prose used to state by hand: each computed from the model or the record -------------------------
FP32_SIGNIFICANT_BITS, TF32_SIGNIFICANT_BITS, BF16_SIGNIFICANT_BITS = 24, 11, 8


def gemm_k(problem: str) -> int:
    """The implicit GEMM's K = Cin·kᵈ: the multiply-adds behind one output, and the length of its sum."""
    return traffic.gemm_dims(P.get(problem))[2]


def k_ratio_line() -> str:
    """conv2d's K against conv3d's, in words."""
    k2, k3 = gemm_k("conv2d"), gemm_k("conv3d")
    return (f"conv2d's `K` (Cin·kᵈ) is {k2}, conv3d's {k3}: {k2 / k3:.2f}× longer, so as many more truncating adds "
            f"land on each accumulator.")


def per_channel_tensors(problem: str) -> list[str]:
    """The per-channel tensors the problem's epilogue reads: the conv's bias and every parameter of one value a
    channel (shape (C, 1, ...)), by name."""
    m = P.get(problem).make_model(seed=0)
    names = []
    for n, t in m.named_parameters():
        if n.endswith("bias") or (t.dim() >= 2 and t.shape[0] > 1 and all(s == 1 for s in t.shape[1:])):
            names.append(n)
    return sorted(names)


def per_channel_line() -> str:
    parts = [f"{pk} {len(per_channel_tensors(pk))} ({', '.join('`' + n + '`' for n in per_channel_tensors(pk))})"
             for pk in PROBLEMS]
    return "Per-channel tensors each epilogue reads: " + "; ".join(parts) + "."


def bytes_over_floor(problem: str, run: dict | None = None) -> dict:
    """Per step, the bytes one call moves over the bytes floor (x read once, y written once): the traffic model's
    count and, where the record has it, ncu's; keyed by a representative variant of each step."""
    prob = P.get(problem)
    floor = traffic.floor_bytes(prob)
    out = {}
    for key in ("eager", "01_epilogue_fused", "02_epilogue_vec3d", "03a_seed_fused", "03b_register_tiled",
                "04_mma_tf32"):
        r = record(run, problem, key) if run else None
        meas = (r or {}).get("dram_bytes_measured")
        out[key] = {"model": traffic.model_bytes(prob, key) / floor, "measured": meas / floor if meas else None}
    return out


def bytes_over_floor_lines(run: dict) -> list[str]:
    """One line per problem: how many times the floor's bytes each step moves, modelled (ncu on the run's GPU)."""
    lines = []
    for pk in PROBLEMS:
        b = bytes_over_floor(pk, run)

        def say_(key):
            m = b[key]["measured"]
            return f"{b[key]['model']:.1f}×" + (f" ({m:.2f}× by ncu)" if m else "")
        lines.append(f"**{pk}**: eager {say_('eager')}, steps 01–02 {say_('02_epilogue_vec3d')}, 03a "
                     f"{say_('03a_seed_fused')}, 03b {say_('03b_register_tiled')}, 04 {say_('04_mma_tf32')} the "
                     f"bytes floor ({traffic.floor_bytes(P.get(pk)) / 1e9:.2f} GB; ncu on the {short_gpu(run)}).")
    return lines


def pass_shares(run: dict, problem: str, variant: str = "eager") -> dict | None:
    """The elementwise passes' share of one call's modelled DRAM bytes, and of its profiled GPU time."""
    s = time_split(run, problem, variant)
    if s is None:
        return None
    ks = traffic.kernels(P.get(problem), variant)
    total = sum(rd + wr for _, rd, wr in ks)
    conv = sum(rd + wr for name, rd, wr in ks if name.startswith("cuDNN"))
    return {"bytes_share": 100 * (total - conv) / total, "time_share": s["epilogue_share"]}


def pass_share_lines(runs_) -> list[str]:
    """Per GPU and problem, the elementwise passes' share of the bytes beside their share of the time."""
    lines = []
    for rn in runs_:
        for pk in PROBLEMS:
            sh = pass_shares(rn, pk)
            if sh:
                lines.append(f"**{pk}** on the {short_gpu(rn)}: the passes move {sh['bytes_share']:.0f} % of eager's "
                             f"bytes and take {sh['time_share']:.0f} % of its profiled time.")
    return lines


def mma_fragment_registers(m: int = 16, n: int = 8, k: int = 8, threads: int = 32) -> dict:
    """32-bit registers a thread holds for one TF32 `mma.sync` m16n8k8 of a warp: A (m×k), B (k×n), C (m×n), each
    tile spread evenly over the warp's threads."""
    return {"A": m * k // threads, "B": k * n // threads, "C": m * n // threads}


def accumulators_per_thread(rows: int, cols: int, threads: int) -> int:
    """FP32 accumulators a thread holds for a rows×cols output tile shared by `threads` threads."""
    return rows * cols // threads


def wgmma_register_line(n: int = 64) -> str:
    """What wgmma changes in the registers for one 64×n tile: not the accumulators, the operands."""
    f = mma_fragment_registers()
    acc = accumulators_per_thread(64, n, 128)
    steps = (64 // 16) * (n // 8)           # m16n8k8 MMAs of a warp group's four warps per k8 step
    return (f"A 64×{n} tile over a warpgroup's 128 threads is {acc} accumulators a thread with `wgmma`, and the same "
            f"{acc} with `mma.sync` (four warps, {steps // 4} m16n8k8 tiles each, {f['C']} accumulators a tile). What "
            f"changes is the operands: `mma.sync` takes A ({f['A']} registers) and B ({f['B']}) from registers, "
            f"loaded there from shared memory by LDS for every MMA; `wgmma` reads both from shared memory through "
            f"descriptors, so those registers and loads are gone.")


def bf16_split_line(problem: str = "conv2d") -> str:
    """What the TF32 + BF16 split gives a product, in bits, and what the CPU model gives the problem."""
    from . import splits

    e = splits.model_errors(problem, shape=(1,) + tuple(P.get(problem).input_shape[1:]), schemes=("3xtf32", "tf32+bf16"))
    bits = TF32_SIGNIFICANT_BITS + BF16_SIGNIFICANT_BITS
    sup = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
    return (f"The correction products are about 2⁻{str(TF32_SIGNIFICANT_BITS).translate(sup)} of the main one; BF16 keeps "
            f"{BF16_SIGNIFICANT_BITS} significant bits of them, so each product comes out with about {bits} good bits, "
            f"not FP32's {FP32_SIGNIFICANT_BITS}. On one image of {problem} the CPU model gives TF32 + BF16 rel-L2 "
            f"{e['tf32+bf16']['rel_l2']:.1e} against 3xTF32's {e['3xtf32']['rel_l2']:.1e} (the FP32 class's bound is "
            f"{verify.BOUNDS['fp32'][1]:.0e}).")


# --- the exercises' expectations, as the records observed them ------------------------------------------------------
def same_run_lines(runs_, problem: str, variants) -> list[str]:
    """Per recorded GPU, the variants' median times from one run, each with its ratio to eager and its accuracy
    class against float64 (what an exercise that times registered variants would see), fastest first."""
    lines = []
    for rn in runs_:
        recs = [r for r in (record(rn, problem, k) for k in variants) if r and r.get("median_ms")]
        if not recs:
            continue
        parts = [f"`{r['variant']}` {r['median_ms']:.3f} ms ({r['speedup_vs_eager']:.2f}× eager"
                 + ("" if r.get("verified") is None else
                    f", {accuracy_class(r) if r.get('verified') else 'fails its bound'}") + ")"
                 for r in sorted(recs, key=lambda r: r["median_ms"])]
        lines.append(f"Observed, **{problem} on the {short_gpu(rn)}** ({str(rn['env'].get('date', '?'))[:10]}, one "
                     f"run): " + ", ".join(parts) + ".")
    return lines or [f"{problem}: {NOT_RECORDED}: no recorded GPU timed {', '.join(variants)}."]


def layout_conversion_lines(runs_) -> list[str]:
    """Per GPU and problem: what cuDNN's NCHW caller pays over the channels_last graph, against the time its two
    conversions' bytes take at the run's measured copy bandwidth."""
    lines = []
    for rn in runs_:
        g = measured_gpu(rn)
        for pk in PROBLEMS:
            a, b = record(rn, pk, "cudnn_fused"), record(rn, pk, "cudnn_fused_nchw")
            if not (a and b and g):
                continue
            prob = P.get(pk)
            conv_gb = (traffic.model_bytes(prob, "cudnn_fused_nchw") - traffic.model_bytes(prob, "cudnn_fused")) / 1e9
            lines.append(f"Observed, **{pk} on the {short_gpu(rn)}**: `cudnn_fused_nchw` takes "
                         f"{b['median_ms'] - a['median_ms']:.2f} ms more than `cudnn_fused`; its conversions move "
                         f"{conv_gb:.2f} GB, {conv_gb / g.dram_gbps * 1e3:.2f} ms at the measured copy bandwidth.")
    return lines or [f"cuDNN's fused graph: {NOT_RECORDED}: no recorded GPU ran it."]


def fp32_class_line(run: dict) -> str:
    """The FP32 class for what it is: its bound against eager FP32's own error in the same run."""
    rb = verify.BOUNDS["fp32"][1]
    parts = [f"{rb / e:.0f}× eager FP32's own on {pk} ({e:.1e})" for pk in PROBLEMS
             if (e := eager_fp32_error(run, pk))]
    if not parts:
        return f"The FP32 class: rel-L2 ≤ {rb:.0e} against float64 (eager FP32's own error: {NOT_RECORDED}: no run)."
    return (f"The FP32 class is a bound, not FP32 itself: rel-L2 ≤ {rb:.0e} against float64 is " + " and ".join(parts)
            + f" on the {short_gpu(run)}. A kernel in it may be a few times less accurate than eager FP32; each "
            "table gives its error beside eager FP32's.")


# --- the input's range: where each precision class holds (the CPU model; the registry's stated ranges) ------------
def scale_frame(problem: str = "conv2d", bias: str = "zero") -> pd.DataFrame:
    """The CPU model's rel-L2 against float64 of every scheme at every input scale (splits.scale_table), one row a
    scale; a cell outside its class's bound in bold."""
    from . import splits

    rows = {}
    for r in splits.scale_table(problem, bias=bias):
        cell = f"{r['rel_l2']:.1e}"
        rows.setdefault(r["scale"], {})[r["scheme"]] = cell if r["holds"] else f"**{cell}**"
    df = pd.DataFrame.from_dict(rows, orient="index").rename(columns={"fp32": "eager FP32"}).sort_index()
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    df.index = [f"10{str(round(math.log10(s))).translate(sup)}" for s in df.index]
    df.index.name = "input ×"
    return df


def fixed_shift_lines(problem: str = "conv2d") -> list[str]:
    """The CPU model's ranges for the fixed-power-of-two fix (splits.FIXED_SCHEMES, not yet kernels) beside each FP16
    scheme's own, with the share of outputs its FP32 path takes where it takes any."""
    from . import splits

    def rng(scheme):
        r = splits.held_range(problem, scheme)
        return f"{r[0]:g} to {r[1]:g}" if r else "nowhere"

    how = {"3xfp16c": f"both lo parts times 2^{splits.CORRECTION_SHIFT} (x_lo 2^{splits.CORRECTION_SHIFT} has x_hi's "
                      f"magnitude, so it stays normal {splits.CORRECTION_SHIFT} binades further down), the corrections' "
                      f"sum times 2^-{splits.CORRECTION_SHIFT}",
           "fp16f": f"the input times 2^{splits.INPUT_SHIFT}; an output whose window holds |x| ≥ "
                    f"{splits.FP16_MAX:g} / 2^{splits.INPUT_SHIFT} from the FP32 path 04c takes for |x| ≥ "
                    f"{splits.FP16_MAX:g}",
           "3xfp16f": "both shifts"}
    lines = []
    for kernel, twins in (("fp16", ("fp16f",)), ("3xfp16", ("3xfp16c", "3xfp16f"))):
        for twin in twins:
            paths = sorted({(r["scale"], r["fallback_share"]) for b in splits.BIAS_MODES
                            for r in splits.scale_table(problem, bias=b) if r["scheme"] == twin and r["fallback_share"]})
            via = "; through the FP32 path at " + ", ".join(f"{sc:g} ({sh:.0%} of outputs)" for sc, sh in paths) \
                if paths else ""
            lines.append(f"`{twin}` (CPU model, not yet a kernel; {how[twin]}): holds {rng(twin)}, where `{kernel}` "
                         f"holds {rng(kernel)}{via}")
    return lines


def held_range_lines() -> list[str]:
    """The ranges of input scale the registry states where a kernel's class holds narrower than the protocol's
    (Variant.input_scales), and the problems' own limits on a class (verify.CLASS_SCALES)."""
    lines = [f"`{v.problem} {v.key}` ({v.precision}): its class holds for inputs of scale {v.input_scales[0]:g} to "
             f"{v.input_scales[1]:g}" for pk in PROBLEMS for v in R.kernel_variants(pk) if v.input_scales]
    lines += [f"{pk}, the {p.upper()} class, eager's own arithmetic included: up to {hi:g} (the clamp saturates all but "
              "a few outputs, which carry the conv's whole error)"
              for (pk, p), (lo, hi) in sorted(verify.CLASS_SCALES.items()) if p in ("tf32", "fp32")]
    return lines
