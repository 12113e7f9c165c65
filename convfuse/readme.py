"""Rewrite README.md's generated parts (between their markers) from the newest recorded run: the results table, step
04's goals table and the build times."""
from __future__ import annotations

import re

from . import results as RS
from .registry import ROOT

START, END = "<!-- results:start -->", "<!-- results:end -->"
BUILD_START, BUILD_END = "<!-- build:start -->", "<!-- build:end -->"
GOALS_START, GOALS_END = "<!-- goals:start -->", "<!-- goals:end -->"


def table(run: dict) -> str:
    env = run["env"]
    lines = [f"Recorded on {env['gpu']} ({env['date'][:10]}, torch {env['torch']}, CUDA {env['cuda']}, "
             f"cuDNN {env['cudnn']}); measured ceilings: copy {env['copy_gbps']:.0f} GB/s, "
             f"FP32 {env['fp32_tflops']:.1f} TFLOP/s, TF32 {env['tf32_tflops']:.0f} TFLOP/s. "
             "Median of interleaved, L2-flushed calls; speed-ups are ratios within that one run.", "",
             "| problem | variant | precision | median ms | × eager | × compile | verified | max abs err | rel L2 err |",
             "|---|---|---|---:|---:|---:|---|---:|---:|"]
    for prob in ("conv2d", "conv3d"):
        for _, r in RS.frame(run, prob).iterrows():
            def f(k, fmt):
                v = r.get(k)
                return "—" if v is None or v != v else format(v, fmt)
            ver = {True: "yes", False: "**no**"}.get(r.get("verified"), "—")
            lines.append(f"| {prob} | `{r['variant']}` | {r['precision']} | {f('median_ms', '.3f')} | "
                         f"{f('speedup_vs_eager', '.2f')} | {f('speedup_vs_compile', '.2f')} | {ver} | "
                         f"{f('max_abs_err_fp64', '.1e')} | {f('rel_l2_err_fp64', '.1e')} |")
    return "\n".join(lines)


def goals(run: dict) -> str:
    """study.goals_table as Markdown: step 04's goals, the fastest verified kernel of each class, the verdict."""
    from . import study

    t = study.goals_table(run).reset_index()
    env = run.get("env", {})
    lines = [f"Recorded on {env.get('gpu', '?')} ({str(env.get('date', '?'))[:16].replace('T', ' ')} UTC); the "
             "literal rows are the goals as set, the class rows the fastest kernel of each accuracy class "
             "(`study.goals_table`):", "",
             "| problem | goal | kernel | ms | × eager | × `torch.compile` | goal: ms / × eager / × compile | verdict "
             "| faster than `torch.compile` |",
             "|---|---|---|---:|---:|---:|---|---|---|"]
    for _, r in t.iterrows():
        if r["kernel"] == study.NOT_RECORDED:
            lines.append(f"| {r['problem']} | {r['goal']} | {study.NOT_RECORDED} | — | — | — | "
                         f"{r['goal ms / × eager / × compile']} | — | — |")
            continue
        lines.append(f"| {r['problem']} | {r['goal']} | `{r['kernel']}` | {r['median ms']:.3f} | {r['× eager']:.2f} | "
                     f"{r['× compile']:.2f} | {r['goal ms / × eager / × compile']} | {r['verdict']} | "
                     f"{r['faster than torch.compile']} |")
    return "\n".join(lines)


def build_times(run: dict) -> str:
    bt = run["env"].get("build_times")
    if not bt:
        return "(not measured yet)"
    return (f"On the {run['env']['gpu']} machine ({bt['cpu_count']} cores, {run['env']['date'][:10]}): a cold build "
            f"of one extension ({bt['cold_one_variant']}) takes {bt['cold_one_s']:.0f} s; all "
            f"{bt['n_extensions']} cold, built in parallel, {bt['cold_all_s']:.0f} s; loading all of them warm "
            f"in a fresh process {bt['warm_load_all_s']:.1f} s"
            + (f", of which importing torch takes {bt['warm_torch_import_s']:.1f} s and the "
               f"{bt['n_extensions']} loads {bt['warm_load_all_after_torch_s']:.2f} s." if "warm_torch_import_s" in bt else
               " (torch's own import included; once torch is imported, the bench log shows the loads take "
               "well under a second)."))


def _between(text, start, end, body):
    return re.sub(re.escape(start) + ".*?" + re.escape(end), lambda m: f"{start}\n{body}\n{end}", text, flags=re.S)


def update(path=None) -> bool:
    path = path or ROOT / "README.md"
    text = path.read_text()
    try:
        run = RS.latest()
    except FileNotFoundError:
        return False
    new = _between(text, START, END, table(run))
    new = _between(new, BUILD_START, BUILD_END, build_times(run))
    new = _between(new, GOALS_START, GOALS_END, goals(run))
    if new != text:
        path.write_text(new)
    return True


if __name__ == "__main__":
    print("README results table", "updated" if update() else "unchanged (no results)")
