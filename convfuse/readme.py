"""Rewrite README.md's generated part (between its markers) from the recorded runs: the progress at a glance, one
table per measured GPU of the best kernel of each step and accuracy class, in ms and x torch.compile, against the
bytes and compute floors (traffic's floors at the record's measured ceilings), and the figure drawn from it."""
from __future__ import annotations

import re

from . import results as RS
from .registry import ROOT
from .traffic import compute_floor_ms
from .verify import accuracy_class

START, END = "<!-- results:start -->", "<!-- results:end -->"
PROGRESS_START, PROGRESS_END = "<!-- progress:start -->", "<!-- progress:end -->"
PROGRESS_FIGURE = "progress.png"
STEP_NAMES = {"01": "epilogue fused after cuDNN", "02": "vectorized epilogue", "03a": "fused FP32 conv (seed)",
              "03b": "register-tiled FP32 conv", "04": "mma.sync", "04b": "wgmma from shared memory",
              "04c": "warp-specialised wgmma", "04d": "wgmma, A in registers", "04e": "Winograd + wgmma"}


def progress(run: dict) -> list[dict]:
    """One row per problem, step and accuracy class: the fastest verified kernel, its ms and x torch.compile, and the
    larger of its bytes and compute floors."""
    from . import problems as P
    from . import registry as R
    from . import traffic as T

    gpu = T.measured_gpu(run["env"])
    rows = []
    for pk in P.PROBLEMS:
        bytes_ms = T.floors_ms(P.PROBLEMS[pk], gpu)["bytes"]
        recs = {r["variant"]: r for r in RS.records(run, pk)}
        steps = []
        for v in R.kernel_variants(pk):
            if v.step not in steps:
                steps.append(v.step)
        for step in steps:
            best = {}
            for v in R.kernel_variants(pk):
                r = recs.get(v.key)
                if v.step != step or not r or not r.get("verified") or not r.get("median_ms"):
                    continue
                cls = accuracy_class(r)
                if cls not in best or r["median_ms"] < best[cls]["median_ms"]:
                    best[cls] = r
            for cls in ("TF32 class", "FP32 class"):
                if cls not in best:
                    continue
                r = best[cls]
                c_ms, c_what = compute_floor_ms(P.PROBLEMS[pk], r["variant"], r["precision"], gpu)
                floor, bound = (bytes_ms, "bytes") if bytes_ms >= c_ms else (c_ms, c_what)
                rows.append({"gpu": run["env"]["gpu"], "problem": pk, "step": step, "class": cls,
                             "kernel": r["variant"], "ms": r["median_ms"], "x_compile": r.get("speedup_vs_compile"),
                             "rel_l2": r.get("rel_l2_err_fp64"),
                             "eager_fp32_rel_l2": (recs.get("eager_fp32") or {}).get("rel_l2_err_fp64"),
                             "floor_ms": floor, "bound": bound, "bytes_floor_ms": bytes_ms})
    return rows


def short_name(run: dict) -> str:
    """A column-width name for the run's GPU: "H100", "H200" (the model after "NVIDIA")."""
    name = (run["env"].get("gpu") or "?").removeprefix("NVIDIA ").strip()
    return re.split(r"[\s-]", name)[0] or name


def _names(runs: list[dict]) -> list[str]:
    """Short GPU names, or the full ones where two runs would share a short one."""
    short = [short_name(r) for r in runs]
    return short if len(set(short)) == len(short) else [r["env"].get("gpu", "?") for r in runs]


def progress_header(run: dict, name: str | None = None) -> str:
    """One paragraph on a recorded GPU: its run, the ceilings it measured, torch.compile's and cuDNN's fused graph's
    times (the bars of the table), and how often the board was power-capped during the timing."""
    env = run["env"]
    board = env.get("board_during_timing") or {}

    def times(key, absent="not in this record"):
        recs = [(pk, RS.record(run, pk, key)) for pk in ("conv2d", "conv3d")]
        have = [f"{pk} {r['median_ms']:.3f}" for pk, r in recs if r and r.get("median_ms")]
        return ", ".join(have) + " ms" if have else absent

    def cudnn_fused():
        # where the record left the rows out, the bench said why per problem (skipped, refused, withdrawn)
        why = sorted({st["status"] for st in (env.get("cudnn_fused") or {}).values() if st.get("status") != "ok"})
        return times("cudnn_fused", "not in this record" + (f" ({', '.join(why)}: notebook 00 says why)" if why else ""))

    capped = [f"{pk} {w['power_capped']:.0%}" for pk, w in board.items() if w.get("power_capped") is not None]
    full = env["gpu"].removeprefix("NVIDIA ").strip()
    label = f"**{name or full}**" + (f" ({env['gpu']})" if name and name != full else "")
    return (f"{label}, {env['date'][:10]}, torch {env['torch']}, CUDA {env['cuda']}. Measured ceilings: copy "
            f"{env['copy_gbps']:.0f} GB/s, FP32 {env['fp32_tflops']:.1f}, TF32 {env['tf32_tflops']:.0f} TFLOP/s. "
            f"`torch.compile`: {times('compile')}; cuDNN's fused graph: {cudnn_fused()}."
            + (f" Power-capped samples: {', '.join(capped)}." if capped else ""))


def _times(x: float) -> str:
    return f"{x:.1f}×" if x < 10 else f"{x:.0f}×"


def progress_table(runs) -> str:
    """The progress rows of every run in one table: per problem, step and accuracy class, the fastest kernel and, per
    GPU, its ms, x torch.compile and x its floor (with what bounds it). Where GPUs disagree on the fastest kernel,
    the kernel cell names each GPU's."""
    runs = [runs] if isinstance(runs, dict) else list(runs)
    names = _names(runs)
    per = [{(r["problem"], r["step"], r["class"]): r for r in progress(run)} for run in runs]
    keys = []
    for rows in per:
        keys += [k for k in rows if k not in keys]
    order = {pk: i for i, pk in enumerate(("conv2d", "conv3d"))}
    steps = {}
    for rows in per:
        for k in rows:
            steps.setdefault(k[1], len(steps))
    keys.sort(key=lambda k: (order.get(k[0], 9), k[0], steps[k[1]], k[2] != "TF32 class"))
    head = "| problem | step | class | fastest kernel | rel-L2 (× eager FP32's) | " + " | ".join(
        f"{n} ms | × compile | × floor" for n in names) + " |"
    lines = [head, "|---|---|---|---|---|" + "---:|---:|---|" * len(runs)]
    for k in keys:
        got = [rows.get(k) for rows in per]
        kernels = {r["kernel"] for r in got if r}
        if len(kernels) == 1:
            kcell = f"`{kernels.pop()}`"
        else:
            kcell = ", ".join(f"`{r['kernel']}` ({n})" for n, r in zip(names, got) if r)
        cells = []
        for r in got:
            if r is None:
                cells += ["—", "—", "—"]
                continue
            xc = "—" if r["x_compile"] is None else f"{r['x_compile']:.2f}"
            cells += [f"{r['ms']:.3f}", xc, f"{r['ms'] / r['floor_ms']:.1f} ({r['bound']})"]
        first = next(r for r in got if r)
        err = ("—" if first["rel_l2"] is None else f"{first['rel_l2']:.1e}"
               + (f" ({_times(first['rel_l2'] / first['eager_fp32_rel_l2'])})" if first["eager_fp32_rel_l2"] else ""))
        lines.append(f"| {k[0]} | {k[1]} | {k[2].removesuffix(' class')} | {kcell} | {err} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def progress_section(runs: list[dict]) -> str:
    names = _names(runs)
    return (f"![progress at a glance](figures/{PROGRESS_FIGURE})\n\n"
            + "\n\n".join(progress_header(r, n) for r, n in zip(runs, names)) + "\n\n" + progress_table(runs))


BUILD_START, BUILD_END = "<!-- build:start -->", "<!-- build:end -->"
GOALS_START, GOALS_END = "<!-- goals:start -->", "<!-- goals:end -->"


def _between(text, start, end, body):
    return re.sub(re.escape(start) + ".*?" + re.escape(end), lambda m: f"{start}\n{body}\n{end}", text, flags=re.S)


def update(path=None, figure: bool = True, runs=None) -> bool:
    """Rewrite the progress section of README.md from every recorded run (one per GPU) and, with `figure`, draw
    figures/progress.png from them; False when nothing is recorded."""
    path = path or ROOT / "README.md"
    text = path.read_text()
    runs = RS.all_recorded() if runs is None else runs
    if not runs:
        return False
    new = _between(text, PROGRESS_START, PROGRESS_END, progress_section(runs))
    if new != text:
        path.write_text(new)
    if figure:
        from . import plots

        fig = plots.progress_figure(runs, [progress(r) for r in runs])
        fig.savefig(path.parent / "figures" / PROGRESS_FIGURE, dpi=plots.DPI, bbox_inches="tight")
    return True


if __name__ == "__main__":
    print("README progress table and figure", "updated" if update() else "unchanged (no results)")
