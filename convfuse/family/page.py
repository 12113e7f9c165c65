"""Notebook 06 ("The family"): the tables and sentences it shows, from the package and the family's record.

The record is what scripts/family_gpu.py writes as ``family_<gpu-slug>.json``, kept as
``results/family/<gpu-slug>.json`` (under CONVFUSE_RESULTS_DIR where that is set): its own folder, because
results/*.json are the study's per-GPU records (results.all_recorded reads every one of them as such) and a family
record is another format -- ``{"env", "build_wall_s", "records": {key: {"kernelbench_id", "summary", "designs":
{design: {"verified", "max_abs_err_fp64", ...} | {"error"}}, "timings": {name: {"median_ms", ...}}, "speedups"}}}``
(convfuse/family/run.py), and per problem "cudnn_fused": cuDNN's fused graph of the model ({"status": "ok", "plan",
"verified", ...} or {"status": "refused" | "skipped" | "failed", "message"}; its time is timings["cudnn_fused"]).
Live mode runs the script for this GPU and files its record there.

Everything here works without a GPU and without a record: where there is none, a table or line says
"not recorded yet:" and why.
"""
from __future__ import annotations

import importlib.util
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd
import torch
import torch.nn as nn

from .. import results, study
from .. import verify as V
from ..registry import ROOT
from . import cudnn_graph as CG
from . import epilogue as E
from . import models as M
from . import run as F
from . import template as TP
from . import trace as T

FAMILY_SCRIPT = ROOT / "scripts" / "family_gpu.py"
NO_RECORD = (f"{study.NOT_RECORDED}: scripts/family_gpu.py's one GPU run (H100, 2026-12-07, the first template's "
             "designs) printed its table but its record did not come back from the device; the next run writes it")
# the sections after the page's first line, which says NO_RECORD once: what they will show, and when
AWAITING = "appears once a GPU's record of scripts/family_gpu.py is in results/family/ (see the page's first line)"
# the hand-tuned kernels each generated design is held against: the same machinery (mma.sync TF32; FP32 CUDA cores,
# register-tiled), so the difference is what the hand-tuning bought
HAND_TUNED = {"tf32": "04_mma_tf32", "fp32": "03b_register_tiled", "3xtf32": "04_mma_3xtf32",
              "tf32w": "04_mma_tf32", "3xtf32w": "04_mma_3xtf32", "tf32h": "04d_rs_tf32"}
# what each design computes on, and the bound it is held to (convfuse/verify.py's classes)
UNITS = {"fp32": "FP32 CUDA cores", "tf32": "tensor cores (mma.sync, TF32)",
         "3xtf32": "tensor cores (mma.sync, 3 TF32 MMAs a product)",
         "tf32w": "tensor cores (mma.sync, TF32; 04's input window)",
         "3xtf32w": "tensor cores (mma.sync, 3 TF32 MMAs a product; 04's input window)",
         "tf32h": "tensor cores (wgmma, TF32, sm_90a; 04d's register A on 04's input window)"}
WINDOW = "conv_epilogue_window.cuh"   # the template of the w designs: its geometry is not the first mma template's


def class_name(precision: str) -> str:
    """The precision class as the page names it: the FP32 class (FP32 itself and the split schemes on tensor cores,
    verify.FP32_ACCURATE) or the TF32 class."""
    return "FP32" if precision in V.FP32_ACCURATE else "TF32"


def design_label(design: str) -> str:
    """A design's name in the page's column heads: FP32, TF32, 3xTF32, TF32w, 3xTF32w, TF32h."""
    label = design.upper().replace("X", "x")
    return label[:-1] + design[-1] if design[-1] in "wh" else label
# issue 68's goals on the H100 (same-run ratios): every TF32-class kernel faster than torch.compile, their geometric
# mean at least GEOMEAN_GOAL times it; every FP32-class kernel faster than eager with TF32 off
GEOMEAN_GOAL = 2.0


# --- the record -------------------------------------------------------------------------------------------------
def family_dir() -> Path:
    return study.results_dir() / "family"


def load(path) -> dict:
    data = json.loads(Path(path).read_text())
    if not isinstance(data.get("env"), dict) or not isinstance(data.get("records"), dict):
        raise ValueError(f"{path}: not a family record (scripts/family_gpu.py writes env and records by problem)")
    return data | {"path": str(path)}


def family_runs(directory=None) -> list[dict]:
    """Every GPU's family record, newest first; [] where none is recorded."""
    d = Path(directory) if directory is not None else family_dir()
    runs = [load(p) for p in sorted(d.glob("*.json"))] if d.is_dir() else []
    return sorted(runs, key=lambda r: str(r["env"].get("date", "")), reverse=True)


def measure(out_dir=None, extra_args=(), runner=subprocess.run) -> Path:
    """Live mode: run scripts/family_gpu.py on this GPU (every problem, every design) and file its
    family_<slug>.json as results/family/<slug>.json. Returns that path."""
    if not FAMILY_SCRIPT.exists():
        raise FileNotFoundError(f"{FAMILY_SCRIPT} is not here: the family's GPU run needs the source checkout")
    tmp = Path(out_dir or tempfile.mkdtemp(prefix="convfuse-family-"))
    proc = runner([sys.executable, str(FAMILY_SCRIPT), "--out", str(tmp), *extra_args], cwd=str(ROOT))
    made = sorted(tmp.glob("family_*.json"))
    if not made:      # the script writes its record even when a problem fails; none means it stopped early
        raise RuntimeError(f"scripts/family_gpu.py wrote no record (exit status {getattr(proc, 'returncode', '?')})")
    dest = family_dir() / f"{made[0].stem.removeprefix('family_')}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(made[0], dest)
    return dest


def family_run_for() -> list[dict]:
    """What the page shows: recorded, every family record; live, this GPU's measured now (then the others)."""
    if results.mode() == "live":
        here = measure()
        return [load(here)] + [r for r in family_runs() if Path(r["path"]).resolve() != here.resolve()]
    return family_runs()


def header(fam_runs) -> "Markdown":
    """Where the family's numbers come from: each record's GPU, date and software, or why there are none."""
    if not fam_runs:
        return study.md(f"**The family's numbers:** {NO_RECORD} (it writes `results/family/<gpu>.json`).")
    lines = []
    for r in fam_runs:
        env = r["env"]
        runs = [x for x in r.get("runs") or [] if x.get("problems")]
        split = ("" if len(runs) < 2 else " · its problems from " + str(len(runs)) + " runs (each problem's ratios "
                 "from one): " + "; ".join(f"{x.get('date', '?')}: {', '.join(x['problems'])}" for x in runs))
        lines.append(f"**{env.get('gpu', '?')}**: {env.get('date', '?')} · torch {env.get('torch', '?')} · "
                     f"CUDA {env.get('cuda', '?')} · cuDNN {study.cudnn_version(env.get('cudnn'))} · "
                     f"source `results/family/{Path(r['path']).name}`{split}")
    return study.md(["The family's numbers:"] + lines if len(lines) > 1 else "**The family's numbers:** " + lines[0])


# --- the problems and their traced epilogues ------------------------------------------------------------------
def _num(v: float) -> str:
    return f"{v:g}"


def _operand(a, i: int, nodes) -> str:
    """An operand in words: a constant, a model tensor, the conv's output or an earlier op's value."""
    if isinstance(a, T.Const):
        return _num(a.value)
    if isinstance(a, T.Param):
        return f"{a.name} (per channel)" if a.kind == "channel" else a.name
    if a.index == 0:
        return "the conv's output"
    prev = nodes[a.index - 1]
    return f"the {prev.op if isinstance(prev, T.Op) else prev.kind}'s output"


_SYMBOL = {"add": "+", "sub": "−", "mul": "×", "div": "÷"}


def op_words(node, i: int, nodes) -> str:
    """One traced node in words; an operand that is the previous value is left implicit ("× 2", "relu")."""
    if isinstance(node, T.Reduction):
        return f"{node.kind} over channels" + (" (keepdim)" if node.keepdim else "")
    args = list(node.args)
    implicit = T.Ref(i - 1)
    attrs = dict(node.attrs)
    if node.op in _SYMBOL and len(args) == 2:
        a, b = args
        if a == implicit:
            return f"{_SYMBOL[node.op]} {_operand(b, i, nodes)}"
        if b == implicit and node.op in ("add", "mul"):
            return f"{_SYMBOL[node.op]} {_operand(a, i, nodes)}"
        return f"{_operand(a, i, nodes)} {_SYMBOL[node.op]} {_operand(b, i, nodes)}"
    if node.op == "clamp":
        lo, hi = attrs.get("min"), attrs.get("max")
        what = f"clamp to [{_num(lo) if lo is not None else '−∞'}, {_num(hi) if hi is not None else '∞'}]"
    elif node.op == "gelu":
        what = "GELU (" + ("erf" if attrs.get("approximate", "none") == "none" else "tanh") + ")"
    elif attrs:
        what = f"{node.op}(" + ", ".join(f"{k}={_num(v) if isinstance(v, float) else v}"
                                         for k, v in attrs.items()) + ")"
    else:
        what = node.op
    rest = [a for a in args if a != implicit]
    return what + (f" of {', '.join(_operand(a, i, nodes) for a in rest)}" if rest else "")


def epilogue_words(traced: T.Traced) -> str:
    """The traced epilogue, op after op."""
    return " → ".join(op_words(n, i, traced.nodes) for i, n in enumerate(traced.nodes, 1))


def _traced(key: str) -> T.Traced:
    return T.trace(M.get(key).make_model(seed=0))


def _shape(shape) -> str:
    return " × ".join(str(s) for s in shape)


def problems_table() -> pd.DataFrame:
    """The family (models.FAMILY): per problem its KernelBench number and model, input shape, channels, dims and the
    epilogue the tracer reads from the model's forward."""
    rows = []
    for key, prob in M.FAMILY.items():
        tr = _traced(key)
        rows.append({"KernelBench": M.kernelbench_number(prob),
                     "model": prob.kernelbench_id.split("/")[1].split("_", 1)[1], "key": key,
                     "input": _shape(prob.input_shape),
                     "Cin → Cout": f"{tr.conv.in_channels} → {tr.conv.out_channels}", "dims": f"{tr.conv.dims}-D",
                     "epilogue (traced)": epilogue_words(tr)})
    return pd.DataFrame(rows).set_index("KernelBench")


def traced_table(key: str) -> pd.DataFrame:
    """One problem's traced nodes: the value each defines in the generated code, the op in words, its CUDA
    expression (epilogue.lower: what `apply` computes, statement for statement)."""
    tr = _traced(key)
    low = E.lower(tr)
    stmts = list(low.apply) + list(low.post)
    rows, k = [], 0
    for i, node in enumerate(tr.nodes, 1):
        if isinstance(node, T.Reduction):
            rows.append({"value": "r", "op": op_words(node, i, tr.nodes),
                         "CUDA": f"acc = {E.render(low.combine)} per channel, then r = {E.render(low.finish)}"})
            continue
        name, ex = stmts[k]
        k += 1
        rows.append({"value": name, "op": op_words(node, i, tr.nodes), "CUDA": E.render(ex)})
    return pd.DataFrame(rows).set_index("value")


def generated_source(key: str) -> "Markdown":
    """The generated `FamilyEpilogue` of one problem, as the generator writes it now."""
    prob = M.get(key)
    gen = E.generate(_traced(key))
    return study.md(f"**The generated epilogue of {prob.kernelbench_id}** (`convfuse.family.epilogue.generate`):\n\n"
                    f"```cuda\n{gen.source.rstrip()}\n```")


_EXAMPLE_ATTRS = {"clamp": {"min": E.var("lo"), "max": E.var("hi")}}
_VARIANTS = {"gelu": (("gelu (erf)", {"approximate": "none"}), ("gelu (tanh)", {"approximate": "tanh"})),
             "leaky_relu": (("leaky_relu (slope s)", {"negative_slope": 0.01}),),
             "softplus": (("softplus (beta 1, threshold 20)", {}),)}


def _with_slope(text: str) -> str:
    return text.replace(E.cuda_float(E.f32(0.01)), "s")


def ops_table() -> pd.DataFrame:
    """The generator's table (epilogue.OPS), one row per op: its CUDA expression over operands a (and b), rendered
    from the same formula the CPU tests evaluate; clamp's bounds lo and hi, leaky_relu's slope s."""
    rows = []
    for op, (arity, _) in E.OPS.items():
        operands = [E.var("a"), E.var("b")][:arity]
        for label, attrs in _VARIANTS.get(op, ((op, _EXAMPLE_ATTRS.get(op, {})),)):
            text = E.render(E.op_expr(op, operands, attrs))
            rows.append({"op": label, "CUDA (FP32)": _with_slope(text) if op == "leaky_relu" else text})
    for kind, (combine, init) in E.REDUCTIONS.items():
        step = E.render(combine(E.var("acc"), E.var("v")))
        rows.append({"op": f"{kind} over channels",
                     "CUDA (FP32)": f"acc = {step}, from {E.cuda_float(E.f32(init))}"
                                    + (", then acc × (1 / C)" if kind == "mean" else "")})
    return pd.DataFrame(rows).set_index("op")


# --- the template -----------------------------------------------------------------------------------------------
def template_constants(design: str) -> dict:
    """The `constexpr int` constants of a design's template file (and of the file it builds on), read from the files."""
    d = TP.DESIGNS[design]
    text = "".join((TP.FAMILY_KERNELS / f).read_text() for f in (d.base, d.file) if f)
    return {k: int(v) for k, v in re.findall(r"constexpr int (k\w+) = (\d+);", text)}


def blocks(design: str, shape) -> int:
    """The grid a design's launch function computes for an input shape (its launch<...> in the .cuh)."""
    c = template_constants(design)
    n, _, *spatial = shape
    out = [s - 2 for s in spatial]
    do, ho, wo = ([1] + out)[-3:] if len(out) == 2 else out
    if design == "fp32":
        items = n * do * ho * math.ceil(wo / c["kTP"])
        return math.ceil(items / c["kThreads"])
    if WINDOW in (TP.DESIGNS[design].file, TP.DESIGNS[design].base):   # tiles: the persistent grid is min(tiles,
        # SMs x blocks an SM)
        td = 2 if len(out) == 3 else 1
        return n * math.ceil(do / td) * math.ceil(ho / (c["kWinWarps"] // td)) * math.ceil(wo / c["kTW"])
    return math.ceil(n * do * ho * wo / c["kBM"])


def cout_slice(design: str, cout: int) -> int:
    """Output channels a block computes at once (a pass, a slice)."""
    c = template_constants(design)
    if design == "fp32":
        return c["kTC"]
    if TP.DESIGNS[design].base == WINDOW:   # tf32h: wgmma's N, Cout padded to it
        return c["kCoutSlice"]
    if TP.DESIGNS[design].file == WINDOW:
        return min(-(-cout // 16) * 16, c["kCoutSlice3x" if TP.DESIGNS[design].args else "kCoutSlice"])
    return c["kBN"]


def template_table() -> pd.DataFrame:
    """Each template design: file, launch function, precision class, template parameters, and its geometry in the
    file's own constants."""
    rows = []
    for design, (file, launch, prec, args, *_) in TP.DESIGNS.items():
        c = template_constants(design)
        if design == "fp32":
            threads = c["kThreads"]
            geometry = (f"a thread: {c['kTP']} pixels of one output row × every channel, {c['kTC']} channels a pass; "
                        "the fold over channels in registers")
            grid = f"⌈N·Do·Ho·⌈Wo / {c['kTP']}⌉ / {threads}⌉ blocks"
        elif file == WINDOW:
            threads = c["kWinThreads"]
            geometry = (f"a block: a tile of {c['kWinWarps']} output rows (3-D: 2 depths × 2 rows) × {c['kTW']} "
                        f"columns, a warp a row; every channel in slices of up to {c['kCoutSlice']} (3xtf32w "
                        f"{c['kCoutSlice3x']}); an input window of {c['kCK']} channels staged by cp.async per K chunk, "
                        "weights in fragment order by a pre-pass; the fold over channels in registers")
            if args:
                per = "tap" if c["kFlushTaps"] == 1 else f"{c['kFlushTaps']} taps"
                geometry += (f"; inputs split at fragment load, weights by the pre-pass, three MMAs a product into a "
                             f"partial sum per {per}, added to the total in FP32")
            grid = "min(tiles, SMs × blocks an SM), persistent"
        elif TP.DESIGNS[design].base == WINDOW:
            threads = c["kWinThreads"]
            geometry = (f"tf32w's tiles, window, pipeline and drain (2-D only, sm_90a); a block is one warpgroup, an "
                        f"m64n64 wgmma accumulator per output row (M = {c['kTW']} pixels, N = Cout in slices of "
                        f"{c['kCoutSlice']}, padded); A from registers loaded from the window (04d), weights K-major "
                        "for wgmma's descriptor by a pre-pass")
            grid = "min(tiles, SMs × blocks an SM), persistent"
        else:
            threads = c["kMmaThreads"]
            geometry = (f"a block: {c['kBM']} pixels × every channel, {c['kBN']} channels a pass, K in steps of "
                        f"{c['kBK']}; {threads // 32} warps of m16n8k8 tiles; the fold over channels through shared "
                        "memory")
            if args:   # 3xtf32: the split, and its partial sums
                geometry += (f"; operands split into big + small TF32 (staged once, two planes), three MMAs a product "
                             f"into a partial sum per {c['kFlushK']} of K, added to the total in FP32")
            grid = f"⌈N·Do·Ho·Wo / {c['kBM']}⌉ blocks"
        bound_abs, bound_rel = V.BOUNDS[prec]
        bound = (f"max-abs ≤ {bound_abs:g}, " if bound_abs is not None else "") + f"rel-L2 ≤ {bound_rel:g}"
        targs = "CIN, COUT, DIMS, Epi" + (f", {args.split('::')[-1]}" if args else "")
        rows.append({"design": design, "file": f"kernels/family/{file}", "launch": f"{launch}<{targs}>",
                     "precision class": f"{prec}: the {class_name(prec)} class ({bound})", "units": UNITS[design],
                     "threads a block": threads, "geometry": geometry, "grid": grid})
    return pd.DataFrame(rows).set_index("design")


def grid_table() -> pd.DataFrame:
    """Per problem, at KernelBench's shape: each design's blocks and its passes over the output channels."""
    rows = []
    for key, prob in M.FAMILY.items():
        cout = _traced(key).conv.out_channels
        row = {"KernelBench": M.kernelbench_number(prob), "Cout": cout}
        for design in TP.DESIGNS:
            takes = TP.takes(design, prob.dims)   # tf32h: 2-D only
            row[f"{design} blocks"] = blocks(design, prob.input_shape) if takes else None
            row[f"{design} passes over Cout"] = math.ceil(cout / cout_slice(design, cout)) if takes else None
        rows.append(row)
    return pd.DataFrame(rows).set_index("KernelBench")


# --- what the CPU establishes ---------------------------------------------------------------------------------------
def _test_module(name: str):
    """A module of tests/ loaded from its file (the source checkout has them; an installed package does not)."""
    path = ROOT / "tests" / f"{name}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"_cf_page_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception:       # pytest missing, say: the page states the checks without their counts
        return None
    return mod


def cpu_checks() -> dict | None:
    """The CPU tests' own data: the op forms the semantic tests trace and compare with torch, the ops of the
    generator's table they reach, the kernels the emulation runs against float64, the refusals. None without tests/."""
    sem, emu, tr = (_test_module(n) for n in ("test_family_epilogue", "test_family_emulated", "test_family_trace"))
    if sem is None or emu is None or tr is None:
        return None
    ops, reductions = set(), set()
    for name, fn, *mods in sem.CASES:
        for node in T.trace(sem.Case(fn, *mods)).nodes:
            (reductions.add(node.kind) if isinstance(node, T.Reduction) else ops.add(node.op))
    return {"forms": len(sem.CASES), "ops": len(ops & set(E.OPS)), "ops_total": len(E.OPS),
            "reductions": len(reductions), "reductions_total": len(E.REDUCTIONS), "edge_values": len(sem.EDGES),
            "kernels": len(emu.CASES),
            "family_kernels": sum(TP.takes(d, p.dims) for p in M.FAMILY.values() for d in TP.DESIGNS),
            "designs": len(TP.DESIGNS),
            "refusals": len(tr.REFUSED)}


def cpu_check_lines() -> list[str]:
    c = cpu_checks()
    if c is None:
        return ["The op-by-op tests and the emulated kernels are in tests/ of the source checkout (not here): "
                "each op's every form against torch on CPU tensors, and every generated kernel against float64."]
    return [f"**Semantics, op by op** (tests/test_family_epilogue.py): {c['forms']} forms of writing an op (modules, "
            f"functions, methods, operators, in place, by hand), reaching {c['ops']} of the table's {c['ops_total']} "
            f"ops and {c['reductions']} of its {c['reductions_total']} reductions, each traced, evaluated as the "
            f"generated CUDA computes it and compared with eager PyTorch on {c['edge_values']} edge values "
            "(signed zeros, subnormals, the thresholds, overflow, infinities, NaN); then nvcc compiles each one.",
            f"**The kernels, emulated** (tests/test_family_emulated.py): {c['kernels']} generated kernels "
            f"({c['family_kernels']} of them the family's nine in each of the {c['designs']} designs that takes "
            "its dimensions) compiled as "
            "C++, one host thread a CUDA thread, the tensor core's fragments exchanged as the PTX ISA lays them out "
            "and its truncating additions modelled (pessimistically), held to their class's "
            "bound against the float64 model on NaN-poisoned outputs and odd shapes.",
            f"**Refusals** (tests/test_family_trace.py): {c['refusals']} models outside the family, each refused "
            "with the reason."]


# --- refusals ---------------------------------------------------------------------------------------------------
class ConvBatchNormReLU(nn.Module):
    """A conv, a BatchNorm, a ReLU: the tracer takes no normalisation module (in eval mode a BatchNorm is a per-channel
    affine map that a caller can fold into the conv's weights and bias first)."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3)
        self.bn = nn.BatchNorm2d(32)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class PaddedConvGELU(nn.Module):
    """A conv with padding=1 and a GELU: the template takes no padding."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3, padding=1)

    def forward(self, x):
        return nn.functional.gelu(self.conv(x))


class ConvSoftmax(nn.Module):
    """A conv and a softmax over the channels: every output reads every channel's value (a reduction, then each
    channel divided by it), where the family's one reduction ends the channel axis."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3)

    def forward(self, x):
        return torch.softmax(self.conv(x), dim=1)


REFUSED = (ConvBatchNormReLU, PaddedConvGELU, ConvSoftmax)


def refusal(model: nn.Module) -> str:
    """What `trace` says about `model`: the error's text, or that it traced (then it is in the family)."""
    try:
        T.trace(model)
    except T.UnsupportedModel as e:
        return str(e)
    return "traced: in the family"


def refusals_table(models=REFUSED) -> pd.DataFrame:
    rows = [{"model": cls.__name__, "what it is": " ".join(cls.__doc__.split()), "trace says": refusal(cls())}
            for cls in models]
    return pd.DataFrame(rows).set_index("model")


def cudnn_graph_table() -> pd.DataFrame:
    """Per problem, the cuDNN graph the family's run builds for it (cudnn_graph.lower, on the CPU): the pointwise nodes
    after conv_fprop and the conv's bias, or the op it refuses and why."""
    rows = []
    for key, prob in M.FAMILY.items():
        try:
            nodes = "conv_fprop → bias → " + CG.words(CG.lower(_traced(key)))
        except CG.Refused as e:
            nodes = f"refused: {e}"
        rows.append({"KernelBench": M.kernelbench_number(prob), "problem": key, "cuDNN graph": nodes})
    return pd.DataFrame(rows).set_index("KernelBench")


# --- the measurement ---------------------------------------------------------------------------------------------
def _ms(rec: dict, name: str):
    return ((rec.get("timings") or {}).get(name) or {}).get("median_ms")


def _verified(rec: dict, design: str):
    d = (rec.get("designs") or {}).get(design)
    if d is None:
        return "not built"
    if "error" in d:
        return d["error"]
    return bool(d.get("verified"))


def _speedup(rec: dict, design: str, ref: str):
    sp = (rec.get("speedups") or {}).get(f"{design}_vs_{ref}")
    if sp is not None:
        return sp
    a, b = _ms(rec, ref), _ms(rec, f"ours_{design}")
    return a / b if a and b else None


def measurement_table(fam_run: dict) -> pd.DataFrame:
    """One GPU's family record: per problem the medians of one interleaved run (eager, eager with TF32 off,
    torch.compile, cuDNN's fused graph where it built -- else why not: refused naming the op, skipped without the
    frontend --, ours in each design), whether each design and cuDNN's graph verified, and the same-run ratios the
    goals are about."""
    rows = []
    for key, prob in M.FAMILY.items():
        rec = fam_run["records"].get(key)
        row = {"KernelBench": M.kernelbench_number(prob), "problem": key}
        if rec is None:
            rows.append(row | {"eager ms": "not in this record"})
            continue
        cudnn = _ms(rec, "cudnn_fused")
        row |= {"eager ms": _ms(rec, "eager"), "eager FP32 ms": _ms(rec, "eager_fp32"),
                "compile ms": _ms(rec, "compile"),
                "cuDNN fused ms": cudnn if cudnn is not None else F.cudnn_cell(rec),
                "cuDNN verified": F.cudnn_cell(rec) if cudnn is not None else None,
                "TF32 × eager": _speedup(rec, "tf32", "eager")}
        for d in TP.DESIGNS:
            lb = design_label(d)
            row |= {f"ours {lb} ms": _ms(rec, f"ours_{d}"), f"{lb} verified": _verified(rec, d)}
            if class_name(TP.precision(d)) == "FP32":   # the FP32 class's goal: faster than eager with TF32 off
                row[f"{lb} × eager FP32"] = _speedup(rec, d, "eager_fp32")
            else:                                       # the TF32 class's: faster than torch.compile (and cuDNN)
                row |= {f"{lb} × compile": _speedup(rec, d, "compile"),
                        f"{lb} × cuDNN": _speedup(rec, d, "cudnn_fused")}
        if "error" in rec:
            row["error"] = rec["error"]
        rows.append(row)
    labels = [design_label(d) for d in TP.DESIGNS]
    cols = ["KernelBench", "problem", "eager ms", "eager FP32 ms", "compile ms", "cuDNN fused ms", "cuDNN verified"] + \
        [c for lb in labels for c in (f"ours {lb} ms", f"{lb} verified")] + \
        [c for d in TP.DESIGNS if class_name(TP.precision(d)) == "TF32"
         for c in (f"{design_label(d)} × compile", f"{design_label(d)} × cuDNN")] + ["TF32 × eager"] + \
        [f"{design_label(d)} × eager FP32" for d in TP.DESIGNS if class_name(TP.precision(d)) == "FP32"]
    if any("error" in r for r in rows):
        cols.append("error")
    return pd.DataFrame(rows, columns=cols).set_index("KernelBench")


def measurement_tables(fam_runs):
    """(GPU label, its table) per record, newest first; where there is none, the one line that says so."""
    if not fam_runs:
        return [(None, f"The measurement table {AWAITING}.")]
    return [(study.gpu_label(r), measurement_table(r)) for r in fam_runs]


def cudnn_lines(fam_runs) -> list[str]:
    """Per record, ours in the TF32 class (the fastest verified design of the class per problem, as goal_lines) against
    cuDNN's fused graph of the same model, where the graph verified and was timed in the same run; how many problems
    have none, and why in a word."""
    out = []
    for r in fam_runs:
        recs = r["records"].values()
        if not any("cudnn_fused" in x for x in recs):
            out.append(f"cuDNN's fused graph ({study.gpu_label(r)}): not measured in this record (scripts/family_gpu.py "
                       "had no cuDNN column when it ran).")
            continue
        ok = [x for x in recs if (x.get("cudnn_fused") or {}).get("verified") and _ms(x, "cudnn_fused") is not None]
        tf = [d for d in TP.DESIGNS if class_name(TP.precision(d)) == "TF32"]
        sp = [v for v in (max((_speedup(x, d, "cudnn_fused") or 0 for d in tf if _verified(x, d) is True), default=0)
                          for x in ok) if v]
        why = Counter("not verified" if c.get("status") == "ok" else c.get("status", "not measured")
                      for c in ((x.get("cudnn_fused") or {}) for x in recs if x not in ok))
        g = _geomean(sp)
        out.append(f"cuDNN's fused graph ({study.gpu_label(r)}): verified and timed on {len(ok)} of {len(recs)} "
                   f"problems; ours (TF32, verified) faster than it on {sum(v > 1 for v in sp)} of {len(sp)}"
                   + (f", geometric mean {g:.2f}×" if g else "")
                   + ("; the others " + ", ".join(f"{st} ({n})" for st, n in sorted(why.items())) if why else "")
                   + ".")
    return out


def measurement_display(fam_runs) -> list:
    """What the measurement cell displays: per GPU its name and table, or the one line that says none is recorded."""
    out = []
    for gpu, table in measurement_tables(fam_runs):
        out += [study.md(f"**{gpu}**"), table] if gpu else [study.md(table)]
    return out


def shown(x):
    """A table as it is; a sentence (a string) as Markdown."""
    return study.md(x) if isinstance(x, str) else x


def _geomean(xs) -> float | None:
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _ratios(recs: dict, design: str, ref: str) -> dict:
    """{problem: the design's verified kernel's speed-up over `ref`, or None} over the problems the design takes."""
    return {k: _speedup(x, design, ref) if _verified(x, design) is True else None
            for k, x in recs.items() if TP.takes(design, M.FAMILY[k].dims)}


def goal_lines(fam_runs) -> list[str]:
    """Issue 68's performance goals against each record, per precision class: the fastest verified design of the class
    per problem (what the family offers on that GPU) and each design on its own. TF32 class against torch.compile (each
    faster, geometric mean at least GEOMEAN_GOAL times), FP32 class against eager with TF32 off (each faster)."""
    if not fam_runs:
        return [f"The goals' verdict {AWAITING}."]
    out = []
    n = len(M.FAMILY)
    for r in fam_runs:
        recs = {k: r["records"].get(k) or {} for k in M.FAMILY}
        parts = []
        for cls, ref, words in (("TF32", "compile", "torch.compile"), ("FP32", "eager_fp32", "eager with TF32 off")):
            per = {d: _ratios(recs, d, ref) for d in TP.DESIGNS if class_name(TP.precision(d)) == cls}
            best = [max((v[k] for v in per.values() if v.get(k)), default=None) for k in recs]
            faster = sum(1 for x in best if x and x > 1)
            text = f"{cls} class against {words}, the fastest verified design per problem: {faster} of {n} faster"
            if cls == "TF32":
                g = _geomean(best) if all(best) else None
                text += (f", geometric mean {g:.2f}× ({'meets' if g >= GEOMEAN_GOAL else 'misses'} the goal of "
                         f"{GEOMEAN_GOAL:g}×)" if g else
                         " (no geometric mean: not every problem has a verified, timed kernel of the class)")

            def one(d, v):
                g = _geomean(list(v.values())) if v and all(v.values()) else None
                return (f"{d} {sum(1 for x in v.values() if x and x > 1)} of {len(v)}"
                        + (f" ({g:.2f}×)" if g and cls == "TF32" else f" ({UNITS[d].split(' (')[0]})" if cls == "FP32"
                           else ""))
            parts.append(text + "; by design: " + ", ".join(one(d, v) for d, v in per.items()))
        out.append(f"**{study.gpu_label(r)}**: " + ". ".join(parts) + ".")
    return out


def _fastest_of_class(run: dict, problem: str, precision: str) -> str | None:
    """The fastest verified fused kernel of the study whose precision is held to `precision`'s bound (the TF32 class:
    tf32, fp16 operands; the FP32 class: fp32 and the split schemes)."""
    same = [p for p, b in V.BOUNDS.items() if b == V.BOUNDS[precision]]
    cands = [r for r in results.records(run, problem) if r.get("kind") == "fused" and r.get("verified")
             and r.get("median_ms") and r.get("precision") in same]
    return min(cands, key=lambda r: r["median_ms"])["variant"] if cands else None


PREDICTED_GPU = "H100"   # the GPU the template headers' PREDICTION blocks are written for
_PREDICTION = re.compile(r"^//\s+PREDICTION \(")
_PREDICTED_ROW = re.compile(r"^//\s+(kb\d+|\d+)\s+(.*)$")
_PREDICTED_MS = re.compile(r"\b(\w+) ([\d.]+) ms\b")


def predictions() -> list[dict]:
    """The times the template headers predict, read from their PREDICTION blocks (one place: the kernel file): a line
    `//   <problem> <design> <ms> ms (why), <design> <ms> ms (why)` per problem, the problem as KernelBench numbers it."""
    out = []
    for name in dict.fromkeys(d.file for d in TP.DESIGNS.values()):
        path = TP.FAMILY_KERNELS / name
        inside = False
        for line in path.read_text().splitlines():
            if _PREDICTION.match(line):
                inside = True
                continue
            if inside and not line.startswith("//   "):
                break
            m = _PREDICTED_ROW.match(line) if inside else None
            if m:
                for design, ms in _PREDICTED_MS.findall(m.group(2)):
                    if design in TP.DESIGNS:
                        out.append({"problem": M.get(m.group(1)).key, "design": design, "ms": float(ms),
                                    "file": f"kernels/family/{name}"})
    return out


def prediction_table(fam_runs) -> pd.DataFrame:
    """Each header's predicted time beside the time the GPU it was written for measured (the newest family record of
    an PREDICTED_GPU), verified or not: measured / predicted above 1 is slower than predicted."""
    rec_run = next((r for r in fam_runs if PREDICTED_GPU in study.gpu_label(r)), None)
    rows = []
    for p in predictions():
        rec = (rec_run or {}).get("records", {}).get(p["problem"]) or {}
        ms, ok = _ms(rec, f"ours_{p['design']}"), _verified(rec, p["design"]) if rec else None
        rows.append({"KernelBench": M.kernelbench_number(M.FAMILY[p["problem"]]), "design": p["design"],
                     f"predicted {PREDICTED_GPU} ms": p["ms"],
                     "measured ms": ms if ms else ("not yet measured" if rec_run is None else "not in this record"),
                     "verified": ok if rec else "—",
                     "measured / predicted": ms / p["ms"] if ms else None, "header": p["file"]})
    return pd.DataFrame(rows).sort_values(["KernelBench", "design"]).set_index(["KernelBench", "design"])


def hand_tuned_table(fam_runs, runs) -> pd.DataFrame | str:
    """The generated kernels of 54 and 90 beside the study's hand-tuned ones of the same machinery (HAND_TUNED) and
    the fastest verified hand-tuned kernel of the precision class (_fastest_of_class), per GPU with both records.
    Each × eager is from its own run (the two records are two processes), so the last column compares ratios, not
    times across runs."""
    rows = []
    for fr in fam_runs:
        main = next((r for r in runs if r.get("env", {}).get("slug") == fr["env"].get("slug")), None)
        if main is None:
            continue
        for pk in study.PROBLEMS:
            rec = fr["records"].get(pk) or {}
            for design, hand in HAND_TUNED.items():
                if not TP.takes(design, M.FAMILY[pk].dims):
                    continue
                best = _fastest_of_class(main, pk, TP.precision(design))
                for kernel in dict.fromkeys(k for k in (hand, best) if k):
                    h = study.record(main, pk, kernel) or {}
                    gen = _speedup(rec, design, "eager") if _verified(rec, design) is True else None
                    rows.append({"GPU": study.short_gpu(fr), "problem": pk, "design": design,
                                 "generated × eager": gen, "hand-tuned": kernel,
                                 "hand-tuned × eager": h.get("speedup_vs_eager") if h.get("verified") else None,
                                 "hand-tuned / generated": (h["speedup_vs_eager"] / gen)
                                 if gen and h.get("verified") and h.get("speedup_vs_eager") else None})
    if not rows:
        return (f"{study.NOT_RECORDED}: no GPU has both a family record and the study's record"
                if fam_runs else f"The comparison with the hand-tuned kernels {AWAITING}.")
    return pd.DataFrame(rows).set_index(["GPU", "problem", "design"])
