"""Roofline, time, traffic and speed-up figures — drawn from results dicts and the traffic model only.

Nothing here touches a GPU: every number comes from a results run (``results.load`` / ``study.run_for``)
or from ``traffic`` (bytes, FLOPs, ceilings). Each function returns a matplotlib Figure; ``save`` writes
it to ``figures/<name>.png`` (or ``$CONVFUSE_FIGURES_DIR``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib

# A headless machine (CI, `make report`'s parent process) has no display; inside a Jupyter kernel the
# inline backend is already chosen, and an explicit MPLBACKEND wins.
if not os.environ.get("MPLBACKEND") and not os.environ.get("DISPLAY") and "ipykernel" not in sys.modules:
    matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter  # noqa: E402

from . import problems as P  # noqa: E402
from . import registry as R  # noqa: E402
from . import traffic as T  # noqa: E402
from .registry import ROOT  # noqa: E402

FIGURES_DIR = ROOT / "figures"
DPI = 110

PRECISION_COLOR = {"fp32": "tab:blue", "tf32": "tab:orange", "fp16": "tab:brown", "3xtf32": "tab:green",
                   "tf32+bf16": "tab:purple", "3xfp16": "tab:red"}
PROBLEM_MARKER = {"conv2d": "o", "conv3d": "s"}
CEILING_STYLE = {"fp32": "-", "tf32": "--", "fp16": (0, (5, 1)), "3xtf32": ":", "tf32+bf16": "-.",
                 "3xfp16": (0, (3, 1, 1, 1, 1, 1))}
CEILING_LABEL = {"fp32": "FP32", "tf32": "TF32", "fp16": "FP16 (2x TF32)", "3xtf32": "3xTF32 (TF32/3)",
                 "tf32+bf16": "TF32+BF16 (TF32/2)", "3xfp16": "3xFP16 (FP16/3)"}


def figures_dir() -> Path:
    return Path(os.environ.get("CONVFUSE_FIGURES_DIR") or FIGURES_DIR)


def save(fig, name: str, directory=None) -> Path:
    """Write figures/<name>.png (dpi 110: small files, readable in the HTML report and on GitHub)."""
    d = Path(directory) if directory else figures_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name}.png"
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def _variants(problem: str, variants=None) -> list[R.Variant]:
    """Registry order; `variants` (keys) filters, and keys the registry lacks are ignored."""
    vs = R.all_variants(problem)
    if variants is None:
        return vs
    keep = set(variants)
    return [v for v in vs if v.key in keep]


def _record(run, problem, key):
    for r in (run or {}).get("records", []):
        if r["problem"] == problem and r["variant"] == key:
            return r
    return None


def _problems(problem) -> list[str]:
    if problem is None:
        return list(P.PROBLEMS)
    if isinstance(problem, str):
        return [problem]
    if isinstance(problem, P.Problem):
        return [problem.key]
    return [p.key if isinstance(p, P.Problem) else p for p in problem]


# --- roofline -------------------------------------------------------------------------------------
def measured_points(run: dict, problems=None, variants=None) -> list[dict]:
    """One point per recorded (problem, variant): x = FLOPs / modeled DRAM bytes, y = achieved TFLOP/s, both of the
    arithmetic the variant does (traffic.work_share: a Winograd kernel sits under its own roof, not above it)."""
    pts = []
    for pk in _problems(problems):
        for v in _variants(pk, variants):
            r = _record(run, pk, v.key)
            if not r or not r.get("median_ms") or not r.get("model_bytes"):
                continue
            flops = (r.get("flops") or T.flops(P.get(pk))) * T.work_share(P.get(pk), v.key)   # the work it does
            pts.append({"problem": pk, "variant": v.key, "precision": r.get("precision", v.precision),
                        "intensity": flops / r["model_bytes"],
                        "tflops": flops / (r["median_ms"] * 1e-3) / 1e12, "measured": True})
    return pts


def predicted_points(gpu: T.GPU, problems=None, variants=None) -> list[dict]:
    """The traffic model's prediction for every variant on `gpu`: the larger of bytes/bandwidth and
    FLOPs/peak of the variant's precision, plotted at the rate it implies."""
    pts = []
    for pk in _problems(problems):
        prob = P.get(pk)
        for v in _variants(pk, variants):
            f = T.flops(prob) * T.work_share(prob, v.key)
            pr = T.predict_ms(prob, v.key, v.precision, gpu)
            pts.append({"problem": pk, "variant": v.key, "precision": v.precision,
                        "intensity": f / T.model_bytes(prob, v.key),
                        "tflops": f / (pr["ms"] * 1e-3) / 1e12, "measured": False})
    return pts


def _label(key: str) -> str:
    """Short point labels: the step number for kernels, the reference name otherwise."""
    if key[:2].isdigit():
        return key.split("_")[0] + {"3xtf32": "·3x", "tf32bf16": "·t+b", "3xfp16": "·3xh", "fp16": "·h", "tf32": "·tf32"}.get(key.rsplit("_", 1)[-1], "")
    return key


def _segments(ax) -> "np.ndarray":
    """The ceiling lines of a roofline axes as display-space segments, rows (x0, y0, x1, y1)."""
    import numpy as np

    segs = [np.zeros((0, 4))]
    for ln in ax.get_lines():
        xy = ax.transData.transform(np.column_stack(ln.get_data()))
        segs.append(np.column_stack([xy[:-1], xy[1:]]))
    return np.vstack(segs)


def _crosses(segs, box) -> "np.ndarray":
    """Which segments (rows x0, y0, x1, y1) pass through `box` (x0, y0, x1, y1): Liang-Barsky clipping."""
    import numpy as np

    x0, y0, x1, y1 = segs.T
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = np.zeros(len(segs)), np.ones(len(segs))
    ok = np.ones(len(segs), bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x0 - box[0]), (dx, box[2] - x0), (-dy, y0 - box[1]), (dy, box[3] - y0)):
            ok &= ~((p == 0) & (q < 0))
            r = q / p
            t0 = np.where(p < 0, np.maximum(t0, r), t0)
            t1 = np.where(p > 0, np.minimum(t1, r), t1)
    return ok & (t0 <= t1)


def place_labels(ax, fontsize=7):
    """Label the points `roofline` chose (ax._convfuse_labels: (x, y, text) in data coordinates) where each label's
    box overlaps no other label, no marker and no ceiling line, inside the axes: the free spot nearest its point, with
    a leader line when that spot is not next to the point. Call it again after the layout changes (tight_layout):
    it removes the labels it placed before."""
    import numpy as np

    for a in getattr(ax, "_convfuse_label_artists", []):
        a.remove()
    ax._convfuse_label_artists = []
    items = getattr(ax, "_convfuse_labels", [])
    if not items:
        return []
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72                                            # pixels per point
    frame = ax.get_window_extent(renderer)
    segs = _segments(ax)
    r = 4.5 * px                                                 # a marker's half-width (s=42, edge 1.3)
    marks = np.vstack([c.get_offsets() for c in ax.collections if len(c.get_offsets())] or [np.zeros((0, 2))])
    taken = [(mx - r, my - r, mx + r, my + r) for mx, my in ax.transData.transform(marks)]
    leaders = []                                                 # segments already drawn, (x0, y0, x1, y1)
    gap, pad = 2.0 * px, 1.0 * px
    # crowded points first (many neighbours within a few label heights), then top to bottom
    disp = [ax.transData.transform((x, y)) for x, y, _ in items]
    crowd = [sum(np.hypot(*(d - e)) < 40 * px for e in disp) for d in disp]
    order = sorted(range(len(items)), key=lambda i: (-crowd[i], -disp[i][1]))
    placed = []
    for i in order:
        x, y, text = items[i]
        pxy = disp[i]
        probe = ax.text(0, 0, text, fontsize=fontsize)
        bb = probe.get_window_extent(renderer)
        probe.remove()
        w, h = bb.width + 2 * pad, bb.height + 2 * pad
        # candidate boxes: lower-left corners on a grid over the axes, nearest the point first
        gx = np.arange(frame.x0 + 1, frame.x1 - w - 1, max(h / 3, 1.0))
        gy = np.arange(frame.y0 + 1, frame.y1 - h - 1, max(h / 3, 1.0))
        cx, cy = [a.ravel() for a in np.meshgrid(gx, gy)]
        ddx = np.maximum(np.maximum(cx - pxy[0], pxy[0] - (cx + w)), 0)
        ddy = np.maximum(np.maximum(cy - pxy[1], pxy[1] - (cy + h)), 0)
        dist = np.hypot(ddx, ddy) + 0.25 * (cx + w < pxy[0]) * w  # right of the point reads first
        ok = dist >= r + gap
        best, far = None, False
        for k in np.argsort(np.where(ok, dist, np.inf)):
            if not ok[k]:
                break
            box = (cx[k], cy[k], cx[k] + w, cy[k] + h)
            if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken):
                continue
            if len(segs) and _crosses(segs, box).any():
                continue
            if leaders and _crosses(np.array(leaders), box).any():
                continue
            mid = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            lead = np.array([[pxy[0], pxy[1], mid[0], mid[1]]])
            if any(_crosses(lead, b)[0] for b in placed):
                continue
            # a leader line unless the label sits right beside its point, at its height
            best, far = box, not (box[1] <= pxy[1] <= box[3] and dist[k] <= r + 3 * gap)
            break
        if best is None:                                         # nowhere free: beside the point, as before
            best = (pxy[0] + r + gap, pxy[1] - h / 2, pxy[0] + r + gap + w, pxy[1] + h / 2)
        mid = ((best[0] + best[2]) / 2, (best[1] + best[3]) / 2)
        taken.append(best)
        placed.append(best)
        if far:
            leaders.append((pxy[0], pxy[1], mid[0], mid[1]))
        off = ((mid[0] - pxy[0]) / px, (mid[1] - pxy[1]) / px)
        ann = ax.annotate(text, (x, y), xytext=off, textcoords="offset points", fontsize=fontsize, color="0.2",
                          ha="center", va="center",
                          arrowprops=dict(arrowstyle="-", color="0.35", lw=0.7, shrinkA=1, shrinkB=3) if far else None)
        ax._convfuse_label_artists.append(ann)
    return ax._convfuse_label_artists


def roofline(ax, gpu: T.GPU, points, title=None, annotate=True, legend=True, problems=None):
    """Ceilings of `gpu` (DRAM, FP32, TF32, 3xTF32 = TF32/3) on log-log axes, and `points` on them.

    points: dicts with intensity (FLOP/byte), tflops, precision, problem, variant and measured (True:
    filled marker; False: hollow, a prediction). `ax` None makes a new figure. `problems`: those whose
    marker the legend names (default: those among `points`; a figure with one legend for several
    panels passes all of its problems). Returns the axes.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    points = list(points)
    xs = [p["intensity"] for p in points] or [10.0]
    ys = [p["tflops"] for p in points] or [1.0]
    ridge = gpu.tf32_tflops * 1e12 / (gpu.dram_gbps * 1e9)
    x_lo = min(min(xs), gpu.fp32_tflops * 1e3 / gpu.dram_gbps) / 2.5
    x_hi = max(max(xs) * 3, ridge * 3)
    import numpy as np

    x = np.logspace(np.log10(x_lo), np.log10(x_hi), 200)
    mem = gpu.dram_gbps * x / 1e3                              # GB/s * FLOP/B -> TFLOP/s
    ax.plot(x, mem, color="0.35", lw=1.2, label=f"DRAM {gpu.dram_gbps:,.0f} GB/s")
    for prec, peak in gpu.tflops.items():
        ax.plot(x, np.minimum(mem, peak), color=PRECISION_COLOR[prec], ls=CEILING_STYLE[prec], lw=1.4,
                label=f"{CEILING_LABEL[prec]} {peak:,.1f} TFLOP/s")
    labels = {}
    for p in points:
        c = PRECISION_COLOR.get(p["precision"], "k")
        ax.scatter([p["intensity"]], [p["tflops"]], marker=PROBLEM_MARKER.get(p["problem"], "o"), s=42,
                   facecolors=c if p["measured"] else "none", edgecolors=c, linewidths=1.3, zorder=3)
        # variants at the same spot (same bytes, same bound) share one label
        spot = (round(p["intensity"], 3), round(p["tflops"], 3), p["measured"])
        labels.setdefault(spot, []).append(_label(p["variant"]))
    any_measured = any(p["measured"] for p in points)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    y_lo = min(min(ys) / 3, gpu.dram_gbps * x_lo / 1e3)
    ax.set_ylim(y_lo, gpu.tf32_tflops * 2.5)
    ax.set_xlabel("arithmetic intensity: FLOPs / modeled DRAM bytes")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title or gpu.name, fontsize=10)
    # with measurements on the plot, label those (hollow twins sit on the roof)
    ax._convfuse_labels = [(xi, yi, "/".join(names)) for (xi, yi, meas), names in labels.items()
                           if meas or not any_measured]
    if annotate:
        place_labels(ax)
    ax.grid(True, which="major", alpha=0.3)
    if legend:
        handles = ax.get_legend_handles_labels()[0]
        shown = set(_problems(problems)) if problems is not None else {p["problem"] for p in points}
        extra = [Line2D([], [], ls="", marker=PROBLEM_MARKER[k], color="0.3", label=k) for k in PROBLEM_MARKER
                 if k in shown]
        kinds = {p["measured"] for p in points}
        if True in kinds:
            extra.append(Line2D([], [], ls="", marker="o", color="0.3", label="measured (filled)"))
        if False in kinds:
            extra.append(Line2D([], [], ls="", marker="o", markerfacecolor="none", color="0.3",
                                label="predicted (hollow)"))
        # below the axes: inside, it would cover the reference rows' points and labels
        ax.legend(handles + extra, [h.get_label() for h in handles + extra], fontsize=7, loc="upper left",
                  bbox_to_anchor=(0.0, -0.16), ncol=2, frameon=False)
    return ax


def datasheet_for(env: dict) -> T.GPU | None:
    """The datasheet entry of the run's GPU, when the study has one (H200, H100 SXM/PCIe, A100 40/80)."""
    name = (env.get("gpu") or "").lower()
    if "h200" in name:
        return T.datasheet("h200")
    if "h100" in name:
        return T.datasheet("h100-pcie" if "pcie" in name else "h100-sxm")
    if "a100" in name:
        return T.datasheet("a100-80gb" if "80" in name else "a100-40gb")
    return None


def roofline_for_run(run: dict, gpu: T.GPU | None = None, variants=None, problems=None, predicted=True):
    """One panel per problem on `gpu`'s roofline (default: the ceilings the run measured).

    Measured points (filled) are drawn when `gpu` is the run's own GPU, measured or its datasheet;
    predicted points (hollow) are the traffic model on `gpu`'s ceilings.
    """
    env = run.get("env") or {}
    has_ceilings = all(env.get(k) for k in ("copy_gbps", "fp32_tflops", "tf32_tflops"))
    measured_gpu = T.measured_gpu(env) if has_ceilings else None
    # no run recorded yet: the model on the H200 datasheet, so the page still shows the roofs
    gpu = gpu or measured_gpu or T.datasheet("h200")
    own = measured_gpu is not None and (gpu.key == measured_gpu.key
                                        or (datasheet_for(env) or measured_gpu).key == gpu.key)
    pks = _problems(problems)
    fig, axes = plt.subplots(1, len(pks), figsize=(6.0 * len(pks), 5.0), squeeze=False)
    for ax, pk in zip(axes[0], pks):
        pts = predicted_points(gpu, pk, variants) if predicted else []
        if own:
            pts += measured_points(run, pk, variants)
        where = f"run of {env.get('date', '?')[:10]}" if own else "traffic model only"
        roofline(ax, gpu, pts, title=f"{pk} — {gpu.name}, {where}", legend=ax is axes[0][0], problems=pks,
                 annotate=False)
    fig.tight_layout()
    for ax in axes[0]:                  # labels once the layout is final: their free spots are found in pixels
        place_labels(ax)
    return fig


# --- time, traffic, speed-up ----------------------------------------------------------------------
def time_bars(run: dict, problem: str, variants=None):
    """Median time per variant with p20–p80 whiskers; eager and torch.compile as vertical lines.
    A log axis when the slowest is more than 12x the fastest (so the fast ones stay readable)."""
    vs = _variants(problem, variants)
    recs = {v.key: _record(run, problem, v.key) for v in vs}
    meds = [r["median_ms"] for r in recs.values() if r and r.get("median_ms")]
    log = bool(meds) and max(meds) / min(meds) > 12
    base = min(meds) / 3 if log else 0.0
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(vs) + 1.3))
    labels, xmax = [], 0.0
    prob = P.get(problem)
    for i, v in enumerate(vs):
        r = recs[v.key]
        arith = T.compute_precision(prob, v.key, v.precision)       # what the conv ran in (conv3d's eager: FP32)
        labels.append(f"{v.key} [{arith}]")
        if not r or r.get("median_ms") is None:
            ax.text(base or 0.0, i, "  not in this GPU's record", va="center", fontsize=8, color="0.4")
            continue
        m = r["median_ms"]
        lo, hi = r.get("p20_ms", m), r.get("p80_ms", m)
        ax.barh(i, m - base, left=base, color=PRECISION_COLOR.get(arith, "0.5"), alpha=0.85, zorder=2)
        ax.errorbar([m], [i], xerr=[[m - lo], [hi - m]], fmt="none", ecolor="k", capsize=3, lw=1, zorder=3)
        # on a white ground: the eager and compile lines may cross a value's label, and must not strike it out
        ax.text(hi, i, f"  {m:.3g} ms", va="center", fontsize=8, zorder=4,
                bbox=dict(facecolor="white", edgecolor="none", pad=0.3, alpha=0.9))
        xmax = max(xmax, hi)
    for key, style in (("eager", "-"), ("compile", "--")):
        r = _record(run, problem, key)
        if r and r.get("median_ms"):
            ax.axvline(r["median_ms"], color="0.2", ls=style, lw=1, zorder=1, label=f"{key} {r['median_ms']:.3g} ms")
    ax.set_yticks(range(len(vs)), labels, fontsize=8)
    ax.set_ylim(len(vs) - 0.5, -0.5)      # first variant on top; rows without a bar keep their place
    if log:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(base, xmax * 2.2)
    else:
        ax.set_xlim(0, (xmax or 1.0) * 1.25)
    ax.set_xlabel(f"median time per call, ms{' (log scale)' if log else ''}\n"
                  "whiskers p20–p80; L2 flushed before each call")
    ax.set_title(f"{problem}: {run.get('env', {}).get('gpu', '?')}, {run.get('env', {}).get('date', '?')[:10]}",
                 fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


CATEGORY_COLOR = {"conv (cuDNN)": "0.55", "eager elementwise pass": "tab:red",
                  "fused epilogue (one pass)": "tab:orange", "fused conv+epilogue (one kernel)": "tab:green",
                  "layout conversion": "tab:purple", "weight pre-pass": "tab:olive"}


def traffic_bars(problem=None, run: dict | None = None, variants=None):
    """Modeled DRAM bytes per variant, split by the kernels it launches (traffic.kernels); the floor
    (input read once + output written once) as a line; Nsight-measured bytes as a marker when `run`
    records them. `problem` None draws both problems side by side."""
    pks = _problems(problem)
    heights = [len(_variants(pk, variants)) * 0.3 + 1.0 for pk in pks]
    fig, axes = plt.subplots(len(pks), 1, figsize=(8.5, sum(heights) + 0.4), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    ends = {}                               # the right end of each problem's longest bar or marker, GB
    for pk in pks:
        ends[pk] = T.floor_bytes(P.get(pk)) / 1e9
        for v in _variants(pk, variants):
            meas = ((_record(run, pk, v.key) if run else None) or {}).get("dram_bytes_measured") or 0
            ends[pk] = max(ends[pk], meas / 1e9, sum(rd + wr for _, rd, wr in T.kernels(P.get(pk), v.key)) / 1e9)
    for ax, pk in zip(axes[:, 0], pks):
        prob = P.get(pk)
        vs = _variants(pk, variants)
        seen = set()
        for i, v in enumerate(vs):
            left = 0.0
            for name, rd, wr in T.kernels(prob, v.key):
                gb = (rd + wr) / 1e9
                cat = T.kernel_category(name)
                ax.barh(i, gb, left=left, color=CATEGORY_COLOR[cat], edgecolor="white", lw=0.8,
                        label=None if cat in seen else cat)
                seen.add(cat)
                left += gb
            r = _record(run, pk, v.key) if run else None
            measured_gb = ((r or {}).get("dram_bytes_measured") or 0) / 1e9
            # the model's bytes inside its bar, at the bar's start; the measured bytes beside the measured marker
            ax.text(0.01 * ends[pk], i, f"{left:.2f}", va="center", ha="left", fontsize=7,
                    bbox=dict(boxstyle="square,pad=0.15", fc="white", ec="none", alpha=0.85), gid="model")
            if measured_gb:
                ax.plot([measured_gb], [i], marker="D", color="k", ms=4, ls="none",
                        label=None if "measured" in seen else "measured (Nsight Compute)")
                seen.add("measured")
                ax.annotate(f"{measured_gb:.2f}", (max(left, measured_gb), i), xytext=(5, 0), textcoords="offset points",
                            va="center", fontsize=7, gid="measured")
        ax.axvline(T.floor_bytes(prob) / 1e9, color="k", ls=":", lw=1,
                   label=f"floor {T.floor_bytes(prob) / 1e9:.2f} GB")
        ax.set_yticks(range(len(vs)), [v.key for v in vs], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, ends[pk] * 1.15)    # room for the label right of the longest bar or marker
        ax.set_xlabel("DRAM bytes per call, GB: modeled (bar, each segment one kernel; number inside)"
                      + ("; measured (◆; number beside it)" if "measured" in seen else ""))
        ax.set_title(f"{pk}: {prob.description}", fontsize=9)
        # beside the axes: inside, it would cover bars and their labels
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


CLASS_COLOR = {"TF32 class": "tab:orange", "FP32 class": "tab:blue"}


def speedup_bars(run: dict, variants=None, baseline: str = "eager"):
    """Speed-up over `baseline` (same run) per kernel, log scale, grouped by step (a band each) and, within a step, by
    accuracy class (colour: TF32 class or FP32 class, as measured); conv2d plain, conv3d hatched."""
    from .verify import accuracy_class

    steps = {}                                   # step -> kernel keys, registry order
    for pk in P.PROBLEMS:
        for v in _variants(pk, variants):
            if v.key != baseline and v.key not in steps.setdefault(v.step, []):
                steps[v.step].append(v.key)
    order = sorted(steps, key=lambda st: (st != "00", st))

    def cls_of(key):
        recs = [_record(run, pk, key) for pk in P.PROBLEMS]
        return min((0 if accuracy_class(r) == "TF32 class" else 1) for r in recs if r) if any(recs) else 2

    rows = []                                    # (step, key)
    for st in order:
        rows += [(st, k) for k in sorted(steps[st], key=lambda k: (cls_of(k), steps[st].index(k)))]
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(rows) + 1.6))
    h = 0.4
    vals = []
    for i, (st, key) in enumerate(rows):
        for j, pk in enumerate(P.PROBLEMS):
            y = i + (j - 0.5) * h
            base, r = _record(run, pk, baseline), _record(run, pk, key)
            if key not in {v.key for v in _variants(pk, variants)}:
                continue                         # a step one problem has and the other has not (04c, 04e: conv2d)
            if not (base and r and r.get("median_ms")):
                ax.text(1.0, y, f" {pk}: not recorded yet", va="center", fontsize=7, color="0.4")
                continue
            s = base["median_ms"] / r["median_ms"]
            vals.append(s)
            ax.barh(y, s - 1.0, height=h, left=1.0, color=CLASS_COLOR[accuracy_class(r)], alpha=0.85,
                    hatch="////" if j else None, edgecolor="white" if j else None, lw=0)
            ax.text(s, y, f" {s:.2f}×" if s >= 1 else f"{s:.2f}× ", va="center", ha="left" if s >= 1 else "right",
                    fontsize=7)
    ax.set_xscale("log")
    lo, hi = min(vals + [0.5]), max(vals + [2.0])
    ax.set_xlim(lo / 2.5, hi * 2.5)
    ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50) if lo / 2.5 <= t <= hi * 2.5]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.axvline(1.0, color="k", lw=1)
    # one band per step, its name at the right
    start = 0
    for n, st in enumerate(order):
        end = start + len(steps[st])
        if n % 2:
            ax.axhspan(start - 0.5, end - 0.5, color="0.94", zorder=0)
        ax.text(1.0, (start + end - 1) / 2, f"step {st} ", transform=ax.get_yaxis_transform(), ha="right",
                va="center", fontsize=8, color="0.3", fontweight="bold")
        start = end
    ax.set_yticks(range(len(rows)), [k for _, k in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(f"speed-up over {baseline} (median over median, same run; log scale)")
    ax.set_title(f"{run.get('env', {}).get('gpu', '?')}, {str(run.get('env', {}).get('date', '?'))[:10]}", fontsize=10)
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=c, label=k) for k, c in CLASS_COLOR.items()]
              + [Patch(facecolor="0.6", hatch="////", edgecolor="white", label="conv3d (plain: conv2d)")],
              fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.07), ncol=3, frameon=False)
    fig.tight_layout()
    return fig


def gemm_mapping(problems=None):
    """The implicit GEMM of each problem, drawn (schematic, not to scale): A = the weights (Cout x K, K
    cut into k8 steps of 8 input channels at one tap), B = the im2col matrix of x (K x N output pixels,
    never built), C = y (Cout x N). One k8 step is marked in A and B, one output tile in B and C."""
    from matplotlib.patches import Rectangle

    keys = _problems(problems)
    fig, axes = plt.subplots(len(keys), 1, figsize=(9.5, 3.3 * len(keys)), squeeze=False)
    for ax, key in zip(axes[:, 0], keys):
        prob = P.get(key)
        M, N, K = T.gemm_dims(prob)
        steps = K // 8
        kw_, nw, mh, gap = 0.9 + K / 360, 6.0, 1.0, 0.25      # drawing units: K and N squeezed
        bx, by = kw_ + gap, mh + gap
        box = dict(fill=False, lw=1.2)
        ax.add_patch(Rectangle((0, 0), kw_, mh, **box))                       # A
        ax.add_patch(Rectangle((bx, by), nw, kw_, **box))                     # B
        ax.add_patch(Rectangle((bx, 0), nw, mh, **box))                       # C
        for i in range(1, steps):                                             # k8 steps
            x = kw_ * i / steps
            ax.plot([x, x], [0, mh], color="0.85", lw=0.4)
            ax.plot([bx, bx + nw], [by + kw_ - x] * 2, color="0.85", lw=0.4)
        s0 = kw_ * 3 / steps
        step_w = kw_ / steps
        ax.add_patch(Rectangle((s0, 0), step_w, mh, color="tab:orange", alpha=0.8))
        ax.add_patch(Rectangle((bx, by + kw_ - s0 - step_w), nw, step_w, color="tab:orange", alpha=0.8))
        tx, tw = bx + 1.2, 0.35
        ax.add_patch(Rectangle((tx, by), tw, kw_, color="tab:blue", alpha=0.25))
        ax.add_patch(Rectangle((tx, 0), tw, mh, color="tab:blue", alpha=0.6))
        taps = prob.kernel_size ** prob.dims
        ax.text(kw_ / 2, -0.12, f"A = weights\nM = Cout = {M} × K = Cin·k{'²' if prob.dims == 2 else '³'} = {K}\n"
                f"({steps} k8 steps: 8 channels × 1 of {taps} taps)", ha="center", va="top", fontsize=8)
        ax.text(bx + nw + 0.1, by + kw_ / 2, f"B = im2col(x), never built\nK = {K} × N = {N:,} output pixels\n"
                "a k8 step (orange) = 8 channels of the staged\ninput tile, shifted by its tap",
                va="center", fontsize=8)
        ax.text(bx + nw + 0.1, mh / 2, f"C = y: {M} × {N:,}\none tile (blue): bias + epilogue on the\n"
                "accumulators, stored once", va="center", fontsize=8)
        ax.set_title(f"{key}: {prob.description}", fontsize=9, loc="left")
        ax.set_xlim(-0.2, bx + nw + 3.4)
        ax.set_ylim(-0.95, by + kw_ + 0.15)
        ax.set_aspect("equal")
        ax.axis("off")
    fig.tight_layout()
    return fig


def progress_figure(runs: list[dict], rows: list[list[dict]]):
    """The progress at a glance (README): per measured GPU (a row of panels) and problem (a column), the fastest
    kernel of each step in each accuracy class (readme.progress's rows), in ms on a log scale, against
    torch.compile's time and the bytes floor of the same run."""
    from . import results as RS

    fig, axes = plt.subplots(len(runs), 2, figsize=(11, 3.6 * len(runs)), squeeze=False)
    style = {"TF32 class": ("tab:orange", "o"), "FP32 class": ("tab:blue", "s")}
    for i, (run, rs) in enumerate(zip(runs, rows)):
        for j, pk in enumerate(P.PROBLEMS):
            ax = axes[i][j]
            pr = [r for r in rs if r["problem"] == pk]
            steps = list(dict.fromkeys(r["step"] for r in pr))
            x = {s: k for k, s in enumerate(steps)}
            for cls, (color, marker) in style.items():
                pts = [r for r in pr if r["class"] == cls]
                ax.plot([x[r["step"]] for r in pts], [r["ms"] for r in pts], marker=marker, color=color, lw=1.2,
                        label=f"fastest {cls}")
                for r in pts:
                    ax.annotate(f"{r['ms']:.2f}", (x[r["step"]], r["ms"]), textcoords="offset points",
                                xytext=(0, -11 if cls == "TF32 class" else 6), ha="center", fontsize=7, color=color,
                                bbox=dict(fc="white", ec="none", alpha=0.8, pad=0.3))
            comp = RS.record(run, pk, "compile")
            if comp and comp.get("median_ms"):
                ax.axhline(comp["median_ms"], color="k", lw=1, ls="--", label="torch.compile")
            fused = RS.record(run, pk, "cudnn_fused")
            if fused and fused.get("median_ms"):      # optional row: only where the record has it
                ax.axhline(fused["median_ms"], color="tab:green", lw=1, ls="-.", label="cuDNN fused graph")
            if pr:
                ax.axhline(pr[0]["bytes_floor_ms"], color="0.5", lw=1, ls=":", label="bytes floor (input + output once)")
            ax.set_yscale("log")
            lo, hi = ax.get_ylim()
            ax.set_ylim(lo, hi * 1.8)
            ax.set_xticks(range(len(steps)), steps)
            ax.set_xlabel("step")
            ax.set_ylabel("ms (median; log scale)")
            ax.set_title(f"{run['env'].get('gpu', '?')}: {pk}", fontsize=10)
            ax.grid(axis="y", which="both", alpha=0.25)
            if j == 0:
                ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig
