"""study's tables and verdicts: notebook 04's (goals, steps, split schemes) on a synthetic run, and the tables for
every recorded GPU (notebooks 00 and 05: reference rows, KernelBench's verdicts, the H100's prediction against its
measurement) on the real H200 record beside a SYNTHETIC second record made here (never written to results/)."""
import copy
import json
import shutil

import pytest

from convfuse import results, study
from test_plots import synthetic_prediction, synthetic_run


def test_goal_verdict_needs_the_ms_figure_and_every_stated_ratio():
    rec = {"median_ms": 1.20006, "speedup_vs_eager": 4.138, "speedup_vs_compile": 1.916}
    v = study.goal_verdict(rec, 1.2, (4.3, 2.0))
    assert v.startswith("missed") and "1.200 ms > 1.2 ms" in v and "4.14× eager < 4.3×" in v and "torch.compile" in v
    assert study.goal_verdict({"median_ms": 1.1, "speedup_vs_eager": 4.5, "speedup_vs_compile": 2.1}, 1.2, (4.3, 2.0)) == "met"
    # a ratio the goal does not state is not checked
    assert study.goal_verdict({"median_ms": 1.9, "speedup_vs_eager": 5.2, "speedup_vs_compile": 3.0}, 2.0, (5.0, None)) == "met"


def test_goals_table_picks_the_fastest_verified_kernel_of_each_class_and_judges_it():
    run = synthetic_run()
    t = study.goals_table(run)
    assert set(t.index.get_level_values("problem")) == set(study.PROBLEMS)
    assert set(t.index.get_level_values("GPU")) == {"NVIDIA H200"}        # a run without a file stands alone
    t = t.droplevel("GPU")
    for (pk, goal), row in t.iterrows():
        cls = next(c for c in study.GOAL_CLASSES if c[1] == goal)
        mine = [r for r in run["records"] if r["problem"] == pk and r["step"].startswith("04")
                and r["precision"] in cls[2] and r.get("verified")]
        assert row["kernel"] == min(mine, key=lambda r: r["median_ms"])["variant"]
        rec = study.record(run, pk, row["kernel"])
        assert row["verdict"] == study.goal_verdict(rec, cls[3][pk], cls[4][pk])
        assert row["faster than torch.compile"] == ("yes" if rec["speedup_vs_compile"] > 1 else "**no**")
    # a kernel slower than torch.compile is called so; one that fails verification is not picked
    lit = t.loc[("conv2d", "04 3xtf32"), "kernel"]
    slow = [r for r in run["records"] if not (r["problem"] == "conv2d" and r["variant"] == lit)]
    slow.append(study.record(run, "conv2d", lit) | {"speedup_vs_compile": 0.83, "median_ms": 2.8})
    t2 = study.goals_table(run | {"records": slow})
    assert t2.loc[("conv2d", "04 3xtf32", "NVIDIA H200"), "faster than torch.compile"] == "**no**"
    bad = [r | {"verified": False} if r["problem"] == "conv3d" and r["precision"] == "tf32" else r for r in run["records"]]
    assert study.goals_table(run | {"records": bad}).loc[("conv3d", "04 tf32", "NVIDIA H200"), "kernel"] == \
        study.NOT_RECORDED
    assert (study.goals_table(study.empty_run())["kernel"] == study.NOT_RECORDED).all()


def test_steps_keys_and_substeps_table_come_from_the_registry():
    from convfuse import registry as R
    keys = study.steps_keys("04")
    assert len(keys) == len(set(keys)) and "03b_register_tiled" not in keys
    assert set(keys) == {v.key for v in R.kernel_variants() if v.step.startswith("04")}
    assert study.steps_keys("04", ["conv3d"]) == [v.key for v in R.kernel_variants("conv3d") if v.step.startswith("04")]
    t = study.substeps_table("04")
    for v in R.kernel_variants():
        if v.step.startswith("04"):
            row = t.loc[(v.step, v.problem)]
            assert f"kernels/{v.problem}/{v.source}.cu" in row["kernel file"].split(", ") and f"{v.key} ({v.precision})" in row["variants"]


def test_a_winograd_record_is_placed_by_the_work_it_does():
    """A Winograd kernel's rate and compute floor count the 16 of 36 multiplies it does, so it sits under its
    precision's roof; its speed stays quoted against the problem's FLOPs (effective_tflops); the split-scheme table's
    floors are the direct conv's, and so are the kernels it names."""
    from convfuse import plots
    from convfuse import problems as P
    from convfuse import registry as R
    from convfuse import traffic as T
    v = R.get("conv2d", "04e_wino_3xtf32")
    run = synthetic_run()
    direct = study.record(run, "conv2d", "04d_rs_3xtf32")
    run["records"] = [r for r in run["records"] if not (r["problem"] == "conv2d" and r["variant"] == v.key)]
    run["records"].append(direct | {"variant": v.key, "step": v.step, "median_ms": 1.3,
                                    "model_bytes": T.model_bytes(P.CONV2D, v.key)})
    f, d = study.facts(run, "conv2d", v.key), study.facts(run, "conv2d", "04d_rs_3xtf32")
    share = T.work_share(P.CONV2D, v.key)
    assert f["tflops"] == pytest.approx(f["effective_tflops"] * share) and d["tflops"] == d["effective_tflops"]
    assert f["compute_floor_ms"] == pytest.approx(d["compute_floor_ms"] * 16 / 36)
    assert f["pct_peak"] < 100 < 100 * f["effective_tflops"] / f["peak_tflops"]      # under its roof, "over" it if quoted
    pt = next(p for p in plots.measured_points(run, ["conv2d"]) if p["variant"] == v.key)
    assert pt["tflops"] == pytest.approx(f["tflops"])
    t = study.split_schemes_table(run, "conv2d").set_index("scheme")
    assert t.loc["3xtf32", "fastest kernel"] == "04d_rs_3xtf32"


def test_the_evidence_tables_read_the_record_and_say_why_when_none_has_it():
    run = synthetic_run()
    for t, col in ((study.bounds_evidence(run), "what"), (study.microbenchmark_table(run), "mode")):
        (cell,) = t[col].tolist()
        assert cell.startswith(study.NOT_RECORDED + ": no recorded GPU")        # the placeholder says why
    assert study.evidence_value(run, "conv2d", "04d_rs_tf32", "tensor pipe active (ncu), % of peak") is None
    e = {"what": "tensor pipe active (ncu), % of peak", "value": 60.6, "unit": "%", "build": "as registered",
         "date": "2026-12-03"}
    for r in run["records"]:
        if (r["problem"], r["variant"]) == ("conv2d", "04d_rs_tf32"):
            r["evidence"] = [e, e | {"value": 61.0, "build": "a candidate"}]
    t = study.bounds_evidence(run)
    assert list(t.index) == [("conv2d 04d_rs_tf32", study.short_gpu(run))] * 2 and t["value"].tolist() == [60.6, 61.0]
    assert study.evidence_value(run, "conv2d", "04d_rs_tf32", e["what"]) == 60.6
    assert study.evidence_value(run, "conv2d", "04d_rs_tf32", e["what"], "a candidate") == 61.0
    case = {"mode": "RS + GELU warpgroup", "n": 64.0, "group": 9, "flop_per_cycle": 2000.4, "of_tf32_rate": 0.97654}
    run["microbenchmarks"] = {"wgmma_rate": [
        {"date": "2026-12-04T21:03", "cases": [case | {"case": "a"}]},
        {"date": "2026-12-04T21:12", "cases": [case | {"case": "a"}, case | {"case": "b", "mode": "RS"}]}]}
    m = study.microbenchmark_table(run)                      # the newest run, the cases beside a warpgroup
    assert list(m.index) == [(study.short_gpu(run), "a")] and m["× the dense TF32 rate"].tolist() == [0.977]
    assert m["n"].tolist() == [64] and m["FLOP a cycle an SM"].tolist() == [2000]      # counts print as counts


def test_the_evidence_comes_from_whichever_record_holds_it(tmp_path, monkeypatch):
    """The newest record (here an H100 without evidence) leaves each kernel's evidence to the record that has it
    (an H200), labelled with that GPU; where both hold it, both show."""
    import json
    e = {"what": "kernel time (ncu), ms", "value": 1.5, "unit": "ms", "build": "as registered", "date": "2026-12-05"}
    h100 = synthetic_run(gpu="NVIDIA H100 80GB HBM3", date="2026-12-07T00:00:00+00:00")
    h200 = synthetic_run(gpu="NVIDIA H200", date="2026-12-05T00:00:00+00:00")
    for r in h200["records"]:
        if (r["problem"], r["variant"]) in (("conv2d", "04d_rs_tf32"), ("conv2d", "04c_ws_3xfp16")):
            r["evidence"] = [e]
    for r in h100["records"]:
        if (r["problem"], r["variant"]) == ("conv2d", "04c_ws_3xfp16"):
            r["evidence"] = [e | {"value": 1.25}]
    for run in (h100, h200):
        (tmp_path / f"{run['env']['slug']}.json").write_text(json.dumps(run))
    monkeypatch.setenv("CONVFUSE_RESULTS_DIR", str(tmp_path))
    newest = study.runs()[0] | {"path": str(tmp_path / f"{h100['env']['slug']}.json")}
    assert study.short_gpu(newest) == "H100"
    t = study.evidence_table(newest, [("conv2d", "04d_rs_tf32"), ("conv2d", "04c_ws_3xfp16")])
    assert list(t.index) == [("conv2d 04d_rs_tf32", "H200"), ("conv2d 04c_ws_3xfp16", "H100"),
                             ("conv2d 04c_ws_3xfp16", "H200")]
    assert study.evidence_value(newest, "conv2d", "04d_rs_tf32", e["what"]) == 1.5
    assert study.evidence_gpu(newest, "conv2d", "04d_rs_tf32") == "H200"
    assert study.evidence_value(newest, "conv2d", "04c_ws_3xfp16", e["what"]) == 1.25    # the newest first
    assert study.evidence_gpu(newest, "conv2d", "04b_wgmma_tf32") == "—"


def test_the_hardening_summary_reads_the_record():
    run = synthetic_run()
    assert study.NOT_RECORDED in study.hardening_summary(run).data
    run["hardening"] = {"gpu_tests": {"suite": "tests/test_gpu_kernels.py", "gpu": "NVIDIA H200", "date": "2026-12-05",
                                      "passed": 50, "failed": 0, "skipped": 13}}
    assert study.hardening_summary(run).data == ("- `tests/test_gpu_kernels.py` on the NVIDIA H200 (2026-12-05): "
                                                 "50 passed, 0 failed, 13 skipped")



# --- every recorded GPU: the real H200 record beside a synthetic H100 record -------------------------------------
H200 = results.path_for("nvidia-h200")
H100_NAME = "NVIDIA H100 80GB HBM3"


def _h100_from(h200: dict) -> dict:
    """A SYNTHETIC second record for the tests: the real H200's, renamed an H100, its ceilings lowered and its times
    scaled, with invented cuDNN fused rows and KernelBench verdicts (the schema of results/*.json, not a measurement)."""
    h = copy.deepcopy(h200)
    h["env"].update(gpu=H100_NAME, slug="nvidia-h100-80gb-hbm3", copy_gbps=2950.0, fp32_tflops=47.0,
                    tf32_tflops=370.0, date="2026-12-06T09:00:00+00:00", synthetic=True,
                    cudnn_fused={pk: {"status": "ok", "message": ""} for pk in study.PROBLEMS})
    for r in h["records"]:
        for k in ("median_ms", "p20_ms", "p80_ms"):
            r[k] = r[k] * 1.3
    for pk in study.PROBLEMS:
        comp = next(r for r in h["records"] if r["problem"] == pk and r["variant"] == "compile")
        for key, ms in (("cudnn_fused", 1.1 * comp["median_ms"] / 2), ("cudnn_fused_nchw", comp["median_ms"])):
            h["records"].append(copy.deepcopy(comp) | {
                "variant": key, "median_ms": ms, "p20_ms": ms, "p80_ms": ms, "max_abs_err_fp64": 2e-3,
                "rel_l2_err_fp64": 3e-4, "kernelbench_pass": False,
                "cudnn_plan": {"name": "eng4_k2=3", "index": 1, "plans": 5, "plans_ms": {"eng4_k2=3": ms},
                               "frontend": "1.32.0", "backend": 91900}})
        recs = [r for r in h["records"] if r["problem"] == pk]
        e = next(r for r in recs if r["variant"] == "eager")["median_ms"]
        c = next(r for r in recs if r["variant"] == "compile")["median_ms"]
        for r in recs:
            r["speedup_vs_eager"], r["speedup_vs_compile"] = e / r["median_ms"], c / r["median_ms"]
            if r.get("verified"):
                r["kernelbench"] = {"pass": bool(r["kernelbench_pass"]), "trials": 5,
                                    "max_abs_vs_eager": 3e-5 if r["kernelbench_pass"] else 2e-3,
                                    "mean_ms": r["median_ms"] * 1.01, "n_timed": 100,
                                    "speedup_vs_eager": e / r["median_ms"], "suspect": e / r["median_ms"] > 10}
    return h


@pytest.fixture
def two_gpus(tmp_path, monkeypatch):
    if not H200.exists():
        pytest.skip("no H200 record")
    d = tmp_path / "results"
    (d / "predictions").mkdir(parents=True)
    shutil.copy(H200, d / H200.name)
    (d / "nvidia-h100-80gb-hbm3.json").write_text(json.dumps(_h100_from(results.load(H200))))
    (d / "predictions" / "h100-sxm.json").write_text(json.dumps(synthetic_prediction()))
    monkeypatch.setenv("CONVFUSE_RESULTS_DIR", str(d))
    monkeypatch.setenv("CONVFUSE_MODE", "recorded")
    return d


def test_every_run_is_the_run_first_then_every_other_gpu(two_gpus):
    run = study.run_for()
    runs = study.every_run(run)
    assert [study.gpu_label(r) for r in runs] == [H100_NAME, "NVIDIA H200"] and runs[0] is run
    h200 = results.load(two_gpus / "nvidia-h200.json") | {"path": str(two_gpus / "nvidia-h200.json")}
    assert [study.gpu_label(r) for r in study.every_run(h200)] == ["NVIDIA H200", H100_NAME]
    assert [study.short_gpu(r) for r in runs] == ["H100", "H200"]
    assert study.every_run(study.empty_run()) == [] and study.every_run(synthetic_run()) != []
    assert "NVIDIA H200" in study.header(run).data          # the other GPU, named in the header


def test_goals_table_judges_every_recorded_gpu(two_gpus):
    run = study.run_for()
    t = study.goals_table(run)
    assert set(t.index.get_level_values("GPU")) == {H100_NAME, "NVIDIA H200"}
    for rn in study.every_run(run):
        one = study.goals_table(rn, runs=[rn]).droplevel("GPU")
        both = t.xs(study.gpu_label(rn), level="GPU")
        assert both["kernel"].tolist() == one["kernel"].tolist() and both["verdict"].tolist() == one["verdict"].tolist()


def test_reference_table_shows_every_gpu_and_the_cudnn_rows_where_recorded(two_gpus):
    runs = study.runs()
    t = study.reference_table(runs, "conv2d")
    h100, h200 = runs
    for key in study.REFERENCES:
        rec = study.record(h100, "conv2d", key)
        assert t.loc[("conv2d", key, H100_NAME), "median ms"] == round(rec["median_ms"], 3)
    assert ("conv2d", "cudnn_fused", "NVIDIA H200") not in t.index          # a record from before the rows
    assert t.loc[("conv2d", "eager", "NVIDIA H200"), "median ms"] == round(study.record(h200, "conv2d", "eager")["median_ms"], 3)
    assert t.loc[("conv2d", "cudnn_fused", H100_NAME), "cuDNN plan"] == "eng4_k2=3 (fastest of 5 plans)"
    assert t.loc[("conv2d", "cudnn_conv", H100_NAME), "verified"] == "timed only"
    notes = study.cudnn_fused_notes(runs)
    assert len(notes) == 1 and "NVIDIA H200" in notes[0] and "predates" in notes[0]
    lines = study.cudnn_fused_lines(runs)
    assert len(lines) == 2 and all(H100_NAME in ln and "torch.compile" in ln for ln in lines)
    assert study.cudnn_fused_lines([h200]) == [] and "cudnn_fused" not in study.reference_table([h200]).index.get_level_values(1)
    # where ncu measured the graph's bytes, the line places it on its floors: bytes and the conv's TF32 compute
    h100 = copy.deepcopy(h100)
    cf = study.record(h100, "conv2d", "cudnn_fused")
    gpu, prob = study.measured_gpu(h100), study.P.get("conv2d")
    cf["dram_bytes_measured"] = 2.25e9
    line = study.cudnn_fused_lines([h100])[0]
    fl = study.traffic.floors_ms(prob, gpu)
    assert "it moves 2.25 GB (ncu" in line and f"{cf['median_ms'] / fl['bytes']:.1f}× its bytes floor" in line
    assert f"{cf['median_ms'] / fl['tf32']:.1f}× the conv's TF32 compute floor" in line
    cf.pop("dram_bytes_measured")
    assert "bytes floor" not in study.cudnn_fused_lines([h100])[0]


def test_a_record_says_why_it_has_no_cudnn_rows():
    for status, words in (("skipped", "skipped: nvidia-cudnn-frontend"), ("refused", "cuDNN refused the graph: ")):
        run = synthetic_run(cudnn=status)
        assert study.cudnn_fused_status(run, "conv3d").startswith(words)
        assert len(study.cudnn_fused_notes([run])) == 1
    assert study.cudnn_fused_status(synthetic_run(), "conv2d") is None and study.cudnn_fused_notes([synthetic_run()]) == []
    assert "predates" in study.cudnn_fused_status(synthetic_run(cudnn="absent"), "conv2d")


def test_kernelbench_table_gives_its_verdicts_where_recorded_and_says_where_not(two_gpus):
    runs = study.runs()
    h100, h200 = runs
    t = study.kernelbench_table(runs)
    assert set(t.index.get_level_values("GPU")) == {H100_NAME}
    for (pk, key, _), row in t.iterrows():
        kb = study.record(h100, pk, key)["kernelbench"]
        assert row[study.KERNELBENCH_CHECK] == ("pass" if kb["pass"] else "**fail**")
        assert row["over 10× (suspect)"] == ("**yes**" if kb["suspect"] else "no")
        assert row["mean ms (100 calls)"] == kb["mean_ms"]
    notes = study.kernelbench_notes(runs)
    assert len(notes) == 1 and notes[0].startswith("**NVIDIA H200**")
    mine = [r for r in h200["records"] if r["problem"] == "conv2d" and r.get("kind") in ("epilogue", "fused")]
    assert f"conv2d {sum(r['kernelbench_pass'] for r in mine)} of {len(mine)}" in notes[0]
    lines = study.kernelbench_lines(runs)
    assert len(lines) == 2 and all(H100_NAME in ln for ln in lines)
    assert "FP32 class" in lines[0] and "TF32 class" in lines[0]
    assert study.kernelbench_table([h200])["status"].tolist() == [study.NOT_RECORDED] and study.kernelbench_lines([h200]) == []


def test_suspect_speedups_are_set_against_what_the_floors_allow(two_gpus):
    runs = study.runs()
    t = study.suspect_table(runs)
    flagged = {(r["problem"], r["variant"]) for r in runs[0]["records"] if (r.get("kernelbench") or {}).get("suspect")
               and r.get("kind") != "reference"}
    assert flagged and {(pk, v) for pk, v, g in t.index if g == H100_NAME} == flagged
    assert set(t.loc[t.index.get_level_values("GPU") == "NVIDIA H200", "timing"]) <= {"this study (median)"}
    assert (t["largest × eager the floors allow"] > t["× eager"]).all()
    assert study.suspect_lines(runs)[0].startswith("All ")
    big = t.iloc[0]
    f = study.facts(runs[0], *t.index[0][:2])
    assert big["largest × eager the floors allow"] == pytest.approx(big["eager ms"] / f["floor_ms"], rel=1e-2)


def test_speedups_and_the_portable_path_per_gpu(two_gpus):
    from convfuse import registry as R
    runs = study.runs()
    t = study.speedups_table(runs, "conv3d")
    assert ("H100", "× cuDNN fused") in t.columns and ("H200", "× cuDNN fused") not in t.columns
    assert t.loc["compile", ("H200", "× compile")] == 1.0
    p = study.portable_table(runs)
    assert set(p.index.get_level_values("GPU")) == {H100_NAME, "NVIDIA H200"}
    assert all(R.get(pk, k).needs_cc is None for (pk, _, _), k in p["fastest (portable)"].items())
    assert (p["portable ms"] >= p["any ms"]).all()


def test_the_prediction_against_the_measurement(two_gpus):
    pred = study.prediction("h100-sxm")
    h100 = study.run_for_gpu("h100-sxm")
    assert study.gpu_label(h100) == H100_NAME and study.run_for_gpu("a100-80gb") is None
    assert "abc1234" in study.prediction_header(pred) and "3,350 GB/s" in study.prediction_header(pred)
    t = study.prediction_table(h100, pred)
    row = t.loc[("conv3d", "04b_wgmma_tf32")]
    assert row["predicted ms"] == pytest.approx(pred["predictions"]["conv3d"]["04b_wgmma_tf32"]["ms"], abs=1e-3)
    assert row["measured / predicted"] == pytest.approx(row["ceilings: datasheet vs achievable"]
                                                        * row["kernel vs its ceiling"], rel=1e-2)
    assert (t["ceilings: datasheet vs achievable"] >= 1).all()       # measured ceilings below the datasheet's
    assert list(study.prediction_table(h100, pred, "conv2d").index) == [k for pk, k in t.index if pk == "conv2d"]
    f = study.prediction_facts(h100, pred)
    assert f["n"] == len(t) and f["n_slower"] == (t["measured / predicted"] > 1).sum()
    lines = study.prediction_lines(h100, pred)
    assert len(lines) == 4 and "2,950 GB/s" in lines[1] and study.NOT_RECORDED not in " ".join(lines)
    assert study.prediction_table(None, pred)["status"].tolist() == [study.NOT_RECORDED]
    assert study.NOT_RECORDED in study.prediction_lines(h100, None)[0] and study.prediction("a100-80gb") is None
    pub = study.published_table(h100)
    assert pub.loc[("conv2d", "eager"), f"measured ms ({H100_NAME})"] == study.record(h100, "conv2d", "eager")["median_ms"]


def test_one_recorded_gpu_renders_every_table():
    """The real record alone (no cuDNN rows, no KernelBench verdicts, no prediction for its GPU): nothing fails."""
    if not H200.exists():
        pytest.skip("no H200 record")
    run = results.load(H200) | {"path": str(H200)}
    runs = [run]
    assert len(study.reference_table(runs)) == 2 * len([k for k in study.REFERENCES if k not in study.OPTIONAL_REFERENCES])
    assert study.kernelbench_notes(runs) and study.cudnn_fused_notes(runs)
    assert len(study.suspect_table(runs)) >= 1 and study.portable_table(runs).shape[0] == 4
    assert study.speedups_table(runs, "conv2d").columns.get_level_values(0).unique().tolist() == ["H200"]
    assert study.goals_table(run, runs=runs).shape[0] == 8
