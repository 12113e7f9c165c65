"""Notebook 06's tables and sentences (convfuse/family/page.py), on the CPU: from the package, from a synthetic family
record in the format scripts/family_gpu.py writes, and from none."""
from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from convfuse import study, tables
from convfuse.family import epilogue as E
from convfuse.family import models as M
from convfuse.family import page
from convfuse.family import run as F
from convfuse.family import template as TP

RAW_MARKDOWN = re.compile(r"\*\*|`|(?<![\w*])\*[^\s*][^*]*\*(?![\w*])")


def synthetic_family_run(gpu="NVIDIA H100 80GB HBM3", date="2026-12-08T10:00:00+00:00", fail=("kb4", "fp32"),
                         missing=()) -> dict:
    """A family record as scripts/family_gpu.py writes it: every problem (less `missing`), both designs verified
    except `fail` (a (key, design) that did not build), one interleaved timing with the ratios run.time_problem
    computes."""
    env = {"gpu": gpu, "slug": gpu.lower().replace(" ", "-"), "date": date, "torch": "2.11.0+cu130", "cuda": "13.0",
           "cudnn": 91900, "synthetic": True}
    records = {}
    for i, key in enumerate(k for k in M.FAMILY if k not in missing):
        ms = {"eager": 2.0 + i, "eager_fp32": 4.0 + i, "compile": 1.5 + i, "ours_tf32": 0.5 + 0.25 * i,
              "ours_fp32": 3.0 + i, "ours_3xtf32": 1.0 + 0.75 * i}
        designs = {d: {"precision": TP.precision(d), "build_s": 40.0, "verified": True, "checks": [],
                       "max_abs_err_fp64": 1e-6, "rel_l2_err_fp64": 1e-7, "kernelbench_pass": True}
                   for d in TP.DESIGNS}
        if (key, "fp32") == fail or (key, "tf32") == fail:
            designs[fail[1]] = {"precision": TP.precision(fail[1]), "build_s": None, "error": "build failed"}
            ms.pop(f"ours_{fail[1]}")
        timings = {n: {"median_ms": v, "p20_ms": v * 0.98, "p80_ms": v * 1.02, "n": 25} for n, v in ms.items()}
        speedups = {f"{d}_vs_{ref}": ms[ref] / ms[f"ours_{d}"] for d in TP.DESIGNS if f"ours_{d}" in ms
                    for ref in ("eager", "eager_fp32", "compile")}
        records[key] = {"kernelbench_id": M.FAMILY[key].kernelbench_id, "summary": "…", "designs": designs,
                        "timings": timings, "speedups": speedups}
    return {"env": env, "build_wall_s": 120.0, "records": records}


def write_family(directory: Path, run: dict) -> Path:
    d = Path(directory) / "family"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{run['env']['slug']}.json"
    path.write_text(json.dumps(run))
    return path


def _cells(df) -> list[str]:
    html = tables.frame_html(df)
    return re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", html, re.S)


def _no_raw_markdown(df):
    from bs4 import BeautifulSoup
    for cell in _cells(df):
        text = BeautifulSoup(cell, "html.parser").get_text(" ", strip=True)
        assert not RAW_MARKDOWN.search(text) and "…" not in text, text


# --- from the package -----------------------------------------------------------------------------------------------
def test_the_family_table_has_the_nine_with_their_traced_ops():
    t = page.problems_table()
    assert list(t.index) == [1, 4, 7, 32, 48, 54, 57, 71, 90]
    assert t.loc[57, "epilogue (traced)"] == "relu → + 3 → ÷ 6 → clamp to [0, 1] → × the relu's output"
    assert t.loc[32, "epilogue (traced)"] == "× 2 → min over channels (keepdim)"
    assert t.loc[48, "Cin → Cout"] == "3 → 16" and t.loc[90, "dims"] == "3-D" and t.loc[54, "key"] == "conv2d"
    assert t.loc[1, "input"] == "128 × 64 × 128 × 128"
    _no_raw_markdown(t)


def test_the_traced_table_is_the_generated_code():
    t = page.traced_table("57")
    src = E.generate(page._traced("57")).source
    assert list(t.index) == ["t0", "t1", "t2", "t3", "t4"]
    for name, row in t.iterrows():
        assert f"const float {name} = {row['CUDA']};" in src
    red = page.traced_table("32")
    assert list(red.index) == ["t0", "r"] and "isnan(acc)" in red.loc["r", "CUDA"]
    _no_raw_markdown(t)


def test_the_generated_source_is_the_generators():
    text = page.generated_source("57").data
    assert E.generate(page._traced("57")).source.rstrip() in text and text.count("```") == 2


def test_the_op_table_has_every_op_and_reduction():
    t = page.ops_table()
    names = {i.split(" ")[0] for i in t.index}
    assert set(E.OPS) <= names and {f"{k} over channels" for k in E.REDUCTIONS} <= set(t.index)
    assert t.loc["relu", "CUDA (FP32)"] == "(isnan(a) ? a : fmaxf(a, 0.0f))"
    assert t.loc["leaky_relu (slope s)", "CUDA (FP32)"] == "((a > 0.0f) ? a : (a * s))"
    assert "erff" in t.loc["gelu (erf)", "CUDA (FP32)"] and "tanhf" in t.loc["gelu (tanh)", "CUDA (FP32)"]
    _no_raw_markdown(t)


def test_the_template_geometry_is_read_from_the_files():
    assert page.template_constants("fp32") == {"kThreads": 128, "kTP": 8, "kTC": 8, "kK": 3}
    assert {"kMmaThreads", "kBM", "kBN", "kBK"} <= set(page.template_constants("tf32"))
    assert page.template_constants("3xtf32") == page.template_constants("tf32")   # one file, a template parameter
    t = page.template_table()
    assert list(t.index) == list(TP.DESIGNS) and t.loc["tf32", "launch"].startswith("launch_mma<")
    # 3xtf32: the FP32 class, on tensor cores; the same template and grid as tf32
    assert t.loc["3xtf32", "launch"] == "launch_mma<CIN, COUT, DIMS, Epi, k3xTF32>"
    assert t.loc["3xtf32", "precision class"] == "3xtf32: the FP32 class (max-abs ≤ 0.0001, rel-L2 ≤ 2e-06)"
    assert t.loc["3xtf32", "units"].startswith("tensor cores") and t.loc["fp32", "units"] == "FP32 CUDA cores"
    assert t.loc["tf32", "precision class"].startswith("tf32: the TF32 class")
    assert t.loc["3xtf32", "file"] == t.loc["tf32", "file"] and t.loc["3xtf32", "grid"] == t.loc["tf32", "grid"]
    # the grid as the launch functions compute it: 57 at KernelBench's shape (128 x 8 x 128 x 128 -> 126 x 126)
    assert page.blocks("fp32", (128, 8, 128, 128)) == math.ceil(128 * 126 * math.ceil(126 / 8) / 128)
    assert page.blocks("tf32", (128, 8, 128, 128)) == math.ceil(128 * 126 * 126 / 64)
    assert page.blocks("tf32", (2, 3, 5, 6, 7)) == math.ceil(2 * 3 * 4 * 5 / 64)
    g = page.grid_table()
    assert g.loc[48, "tf32 passes over Cout"] == 1 and g.loc[1, "fp32 passes over Cout"] == 16
    _no_raw_markdown(t)
    _no_raw_markdown(g)


def test_the_cpu_checks_are_counted_from_the_tests():
    c = page.cpu_checks()
    if c is None:
        pytest.skip("tests/ not importable here")
    assert c["ops"] == c["ops_total"] == len(E.OPS) and c["reductions"] == len(E.REDUCTIONS)
    assert c["family_kernels"] == len(TP.DESIGNS) * len(M.FAMILY) - sum(p.dims == 3 for p in M.FAMILY.values()) \
        <= c["kernels"] and c["forms"] > len(E.OPS)   # tf32h takes the 2-D problems only
    lines = page.cpu_check_lines()
    assert len(lines) == 3 and f"{c['forms']} forms" in lines[0]


def test_refusals_name_the_reason():
    t = page.refusals_table()
    says = t["trace says"].to_dict()
    assert "BatchNorm2d" in says["ConvBatchNormReLU"]
    assert "padding=(1, 1)" in says["PaddedConvGELU"]
    assert "softmax" in says["ConvSoftmax"]
    assert all("(at page.py:" in s for s in says.values())           # the line of the model's source
    _no_raw_markdown(t)


def test_the_cudnn_graph_table_shows_each_problems_nodes_or_the_refusal():
    t = page.cudnn_graph_table()
    assert list(t.index) == [1, 4, 7, 32, 48, 54, 57, 71, 90]
    assert t.loc[1, "cuDNN graph"] == "conv_fprop → bias → #1 relu(v) → #2 add(#1, bias[c])"
    assert t.loc[32, "cuDNN graph"].startswith("refused: min over channels (dim=1)")
    assert "#2 tanh(#1)" in t.loc[4, "cuDNN graph"]                  # mish, composed: cuDNN has no mode for it
    _no_raw_markdown(t)


# --- the record ---------------------------------------------------------------------------------------------------
def test_without_a_record_every_part_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVFUSE_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("CONVFUSE_MODE", "recorded")
    assert page.family_runs() == [] and page.family_run_for() == []
    shown = page.measurement_display([])
    # the page's first line says why once; the later sections say what they will show, and when
    assert page.NO_RECORD.startswith(study.NOT_RECORDED + ":")
    assert page.NO_RECORD in page.header([]).data and page.cudnn_lines([]) == []
    later = [shown[0].data, *page.goal_lines([]), page.hand_tuned_table([], [])]
    assert len(shown) == 1 and all(page.AWAITING in t and study.NOT_RECORDED not in t for t in later)


def test_the_record_is_read_from_results_family(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVFUSE_RESULTS_DIR", str(tmp_path))
    old = synthetic_family_run(gpu="NVIDIA H200", date="2026-12-01T00:00:00+00:00")
    write_family(tmp_path, old)
    write_family(tmp_path, synthetic_family_run())
    (tmp_path / "nvidia-h200.json").write_text("{}")            # the study's own records are not read here
    runs = page.family_runs()
    assert [study.gpu_label(r) for r in runs] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert "results/family/nvidia-h100-80gb-hbm3.json" in page.header(runs).data and "runs (" not in page.header(runs).data
    runs[0]["runs"] = [{"date": "2026-12-09T09:00", "problems": ["kb1", "kb4"]}, {"date": "2026-12-09T10:00",
                                                                               "problems": ["conv2d"]}]
    assert "its problems from 2 runs (each problem's ratios from one): 2026-12-09T09:00: kb1, kb4; " \
        "2026-12-09T10:00: conv2d" in page.header(runs).data
    bad = tmp_path / "family" / "x.json"
    bad.write_text(json.dumps({"env": {}, "records": []}))        # a study record's shape, not the family's
    with pytest.raises(ValueError, match="not a family record"):
        page.family_runs()


def test_the_measurement_table_reads_what_the_script_writes():
    run = synthetic_family_run(missing=("kb7",))
    t = page.measurement_table(run)
    assert list(t.index) == [1, 4, 7, 32, 48, 54, 57, 71, 90]
    r1 = t.loc[1]
    assert r1["eager ms"] == 2.0 and r1["ours TF32 ms"] == 0.5 and r1["TF32 verified"] is True
    assert r1["TF32 × compile"] == pytest.approx(3.0) and r1["FP32 × eager FP32"] == pytest.approx(4.0 / 3.0)
    assert r1["cuDNN fused ms"] == "not measured"
    assert r1["ours 3xTF32 ms"] == 1.0 and r1["3xTF32 verified"] is True
    assert r1["3xTF32 × eager FP32"] == pytest.approx(4.0) and "3xTF32 × compile" not in t.columns
    assert {"TF32w × compile", "TF32h × cuDNN"} <= set(t.columns) and pd.isna(r1["TF32h × compile"])  # not timed
    assert t.loc[4, "FP32 verified"] == "build failed" and pd.isna(t.loc[4, "ours FP32 ms"])
    assert t.loc[7, "eager ms"] == "not in this record"
    # the ratios are the record's own; where the record has none, computed from its medians
    rec = run["records"]["kb1"]
    rec.pop("speedups")
    assert page.measurement_table(run).loc[1, "TF32 × eager"] == pytest.approx(4.0)
    _no_raw_markdown(t)
    shown = page.measurement_display([run])
    assert shown[0].data == "**NVIDIA H100 80GB HBM3**" and shown[1] is not None


def test_the_goal_lines_follow_the_issues_goals():
    run = synthetic_family_run(fail=("kb4", "fp32"))
    line = page.goal_lines([run])[0]
    speed = [run["records"][k]["speedups"]["tf32_vs_compile"] for k in M.FAMILY]   # the synthetic run's fastest TF32
    g = math.exp(sum(map(math.log, speed)) / len(speed))
    faster = sum(s > 1 for s in speed)
    fp = sum(1 for k in M.FAMILY if run["records"][k]["speedups"].get("fp32_vs_eager_fp32", 0) > 1)
    fp3 = sum(1 for k in M.FAMILY if run["records"][k]["speedups"]["3xtf32_vs_eager_fp32"] > 1)
    best_fp = sum(1 for k in M.FAMILY if max(run["records"][k]["speedups"].get("fp32_vs_eager_fp32", 0),
                                              run["records"][k]["speedups"]["3xtf32_vs_eager_fp32"]) > 1)
    assert f"TF32 class against torch.compile, the fastest verified design per problem: {faster} of 9 faster, " \
        f"geometric mean {g:.2f}×" in line
    assert ("meets" if g >= page.GEOMEAN_GOAL else "misses") in line
    assert f"by design: tf32 {faster} of 9 ({g:.2f}×), tf32w 0 of 9, tf32h 0 of 6" in line   # no times: no ratios
    assert f"FP32 class against eager with TF32 off, the fastest verified design per problem: {best_fp} of 9 faster" \
        in line
    assert f"fp32 {fp} of 9 (FP32 CUDA cores), 3xtf32 {fp3} of 9 (tensor cores)" in line
    # an unverified kernel counts for nothing: kb1's best TF32 kernel is gone, and with it the geometric mean
    run["records"]["kb1"]["designs"]["tf32"]["verified"] = False
    assert "no geometric mean" in page.goal_lines([run])[0]
    # the fastest of the class per problem: a faster verified tf32h on kb1 raises its ratio, and the mean with it
    run["records"]["kb1"]["speedups"]["tf32h_vs_compile"] = 10.0
    line = page.goal_lines([run])[0]
    assert "tf32h 1 of 6" in line and "no geometric mean" not in line
    assert "not measured" in page.cudnn_lines([run])[0]


def _main_run(gpu):
    spec = importlib.util.spec_from_file_location("_cf_test_plots_fp", Path(__file__).with_name("test_plots.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.synthetic_run(gpu=gpu)


def test_the_hand_tuned_kernels_stand_beside_the_generated():
    fam = synthetic_family_run(gpu="NVIDIA H200")
    main = _main_run("NVIDIA H200")
    t = page.hand_tuned_table([fam], [main])
    assert set(t.index.get_level_values("problem")) == {"conv2d", "conv3d"}
    row = t.loc[("H200", "conv2d", "tf32")]
    row = row.iloc[0] if row.ndim == 2 else row
    assert row["hand-tuned"] == "04_mma_tf32"
    gen = fam["records"]["conv2d"]["speedups"]["tf32_vs_eager"]
    hand = study.record(main, "conv2d", "04_mma_tf32")["speedup_vs_eager"]
    assert row["generated × eager"] == pytest.approx(gen)
    assert row["hand-tuned / generated"] == pytest.approx(hand / gen)
    _no_raw_markdown(t)
    other = synthetic_family_run(gpu="NVIDIA A100-SXM4-80GB")
    assert page.hand_tuned_table([other], [main]).startswith(study.NOT_RECORDED + ": no GPU has both")


def test_live_mode_files_the_scripts_record(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVFUSE_RESULTS_DIR", str(tmp_path / "results"))
    calls = []

    class Done:
        returncode = 1        # a problem failed: the record is written all the same

    def runner(cmd, cwd):
        calls.append(cmd)
        out = Path(cmd[cmd.index("--out") + 1])
        out.mkdir(parents=True, exist_ok=True)       # as the script does
        (out / "family_nvidia-h100-80gb-hbm3.json").write_text(json.dumps(synthetic_family_run()))
        return Done()

    dest = page.measure(out_dir=tmp_path / "out", runner=runner)
    assert calls and calls[0][1].endswith("scripts/family_gpu.py")
    assert dest == tmp_path / "results" / "family" / "nvidia-h100-80gb-hbm3.json"
    assert page.family_runs()[0]["env"]["gpu"] == "NVIDIA H100 80GB HBM3"

    def nothing(cmd, cwd):
        return Done()
    with pytest.raises(RuntimeError, match="wrote no record"):
        page.measure(out_dir=tmp_path / "empty", runner=nothing)


def test_the_script_and_the_reader_agree_on_names():
    """The timing names and ratio keys run.time_problem writes are the ones the page reads."""
    import inspect
    src = inspect.getsource(F.time_problem)
    for name in ("eager", "eager_fp32", "compile", "cudnn_fused"):
        assert f'{name}=' in src or f'"{name}"' in src
    assert 'f"ours_{d}"' in src and '{d}_vs_{ref}' in src
    assert set(page.HAND_TUNED) == set(TP.DESIGNS)


def _with_cudnn(run):
    """The synthetic record as the script writes it now: cuDNN's graph per problem, timed where it verified."""
    for i, (key, rec) in enumerate(run["records"].items()):
        if key == "kb32":
            rec["cudnn_fused"] = {"status": "refused",
                                  "message": "min over channels (dim=1) is a reduction across the conv's output "
                                             "channels, not a pointwise node"}
            continue
        rec["cudnn_fused"] = {"status": "ok", "verified": key != "kb57", "plan": {"name": "p", "built": 3}}
        ms = 0.4 + 0.5 * i
        rec["timings"]["cudnn_fused"] = {"median_ms": ms, "p20_ms": ms, "p80_ms": ms, "n": 25}
        for d in TP.DESIGNS:
            if f"ours_{d}" in rec["timings"]:
                rec["speedups"][f"{d}_vs_cudnn_fused"] = ms / rec["timings"][f"ours_{d}"]["median_ms"]
    return run


def test_the_measurement_table_has_cudnn_beside_ours():
    run = _with_cudnn(synthetic_family_run())
    t = page.measurement_table(run)
    assert t.loc[1, "cuDNN fused ms"] == 0.4 and t.loc[1, "cuDNN verified"] == "verified"
    assert t.loc[1, "TF32 × cuDNN"] == pytest.approx(0.4 / 0.5)
    assert t.loc[32, "cuDNN fused ms"].startswith("refused: min over channels") and pd.isna(t.loc[32, "TF32 × cuDNN"])
    assert t.loc[57, "cuDNN verified"] == "FAILED verification"
    _no_raw_markdown(t)
    line = page.cudnn_lines([run])[0]
    ok = [k for k in M.FAMILY if k not in ("kb32", "kb57")]
    sp = [run["records"][k]["speedups"]["tf32_vs_cudnn_fused"] for k in ok]
    g = math.exp(sum(map(math.log, sp)) / len(sp))
    assert f"verified and timed on {len(ok)} of 9 problems" in line
    assert f"faster than it on {sum(v > 1 for v in sp)} of {len(sp)}, geometric mean {g:.2f}×" in line
    assert line.endswith("the others not verified (1), refused (1).")
    run["records"]["kb4"]["speedups"]["tf32h_vs_cudnn_fused"] = 50.0   # the class's fastest verified design counts
    sp[ok.index("kb4")] = 50.0
    g = math.exp(sum(map(math.log, sp)) / len(sp))
    assert f"geometric mean {g:.2f}×" in page.cudnn_lines([run])[0]
    run["records"]["kb1"]["cudnn_fused"] = {"status": "skipped", "message": "cuDNN's fused graph needs the "
                                            "nvidia-cudnn-frontend package"}
    del run["records"]["kb1"]["timings"]["cudnn_fused"]
    assert page.measurement_table(run).loc[1, "cuDNN fused ms"].startswith("skipped: cuDNN's fused graph needs")


def test_the_predictions_are_the_headers_and_meet_the_h100s_record(tmp_path, monkeypatch):
    """page.predictions reads each template header's PREDICTION lines (the only place the numbers are written); the
    table sets the H100 record's time beside each, and says so where there is no record or no time."""
    preds = page.predictions()
    got = {(p["problem"], p["design"]): p["ms"] for p in preds}
    for p in preds:   # each number is on its problem's line of its header, as written
        text = (TP.FAMILY_KERNELS / Path(p["file"]).name).read_text()
        kb = M.kernelbench_number(M.FAMILY[p["problem"]])
        said = [float(m) for line in re.findall(rf"^//\s+(?:kb)?{kb}\s+.*$", text, re.M)
                for m in re.findall(rf"\b{p['design']} ([\d.]+) ms", line)]
        assert said == [p["ms"]], p
    assert {d for _, d in got} == {"tf32w", "3xtf32w", "tf32h"} and ("conv2d", "tf32h") in got
    assert all(TP.takes(d, M.FAMILY[k].dims) for k, d in got)          # no prediction for a design a problem lacks
    t = page.prediction_table([])
    assert len(t) == len(preds) and set(t["measured ms"]) == {"not yet measured"}
    run = synthetic_family_run()                                       # the H100's record: ours_tf32w etc. absent
    k, d = next(iter(got))
    run["records"][k]["timings"][f"ours_{d}"] = {"median_ms": 2 * got[(k, d)]}
    t = page.prediction_table([synthetic_family_run(gpu="NVIDIA H200"), run])   # the H100's, not the newest's
    row = t.loc[(M.kernelbench_number(M.FAMILY[k]), d)]
    assert row["measured ms"] == 2 * got[(k, d)] and row["measured / predicted"] == pytest.approx(2.0)
    assert row["verified"] == True  # noqa: E712 (a pandas cell: numpy bool)
    assert (t["measured ms"] == "not in this record").sum() == len(preds) - 1
    # a header's line changed is the table changed: the numbers are read, not copied
    monkeypatch.setattr(TP, "FAMILY_KERNELS", tmp_path)
    for f in {Path(p["file"]).name for p in preds} | {dd.file for dd in TP.DESIGNS.values()}:
        src = (Path(page.__file__).resolve().parents[2] / "kernels" / "family" / f).read_text()
        (tmp_path / f).write_text(src.replace("tf32h 1.4 ms", "tf32h 9.9 ms"))
    assert {p["ms"] for p in page.predictions() if p["design"] == "tf32h" and p["problem"] == "conv2d"} == {9.9}
