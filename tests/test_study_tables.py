"""study's tables and verdicts that notebook 04 shows (goals, steps, split schemes), on a synthetic run."""
import pytest

from convfuse import study
from test_plots import synthetic_run


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
    assert t2.loc[("conv2d", "04 3xtf32"), "faster than torch.compile"] == "**no**"
    bad = [r | {"verified": False} if r["problem"] == "conv3d" and r["precision"] == "tf32" else r for r in run["records"]]
    assert study.goals_table(run | {"records": bad}).loc[("conv3d", "04 tf32"), "kernel"] == study.NOT_RECORDED
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
            assert row["kernel file"] == f"kernels/{v.problem}/{v.source}.cu" and f"{v.key} ({v.precision})" in row["variants"]


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


def test_the_evidence_tables_read_the_record_and_say_when_it_has_none():
    run = synthetic_run()
    assert study.bounds_evidence(run)["what"].tolist() == [study.NOT_RECORDED]
    assert study.microbenchmark_table(run)["mode"].tolist() == [study.NOT_RECORDED]
    assert study.evidence_value(run, "conv2d", "04d_rs_tf32", "tensor pipe active (ncu), % of peak") is None
    e = {"what": "tensor pipe active (ncu), % of peak", "value": 60.6, "unit": "%", "build": "as registered",
         "date": "2026-12-03"}
    for r in run["records"]:
        if (r["problem"], r["variant"]) == ("conv2d", "04d_rs_tf32"):
            r["evidence"] = [e, e | {"value": 61.0, "build": "a candidate"}]
    t = study.bounds_evidence(run)
    assert list(t.index) == ["conv2d 04d_rs_tf32"] * 2 and t["value"].tolist() == [60.6, 61.0]
    assert study.evidence_value(run, "conv2d", "04d_rs_tf32", e["what"]) == 60.6
    assert study.evidence_value(run, "conv2d", "04d_rs_tf32", e["what"], "a candidate") == 61.0
    case = {"mode": "RS + GELU warpgroup", "n": 64, "group": 9, "flop_per_cycle": 2000.4, "of_tf32_rate": 0.97654}
    run["microbenchmarks"] = {"wgmma_rate": [
        {"date": "2026-12-04T21:03", "cases": [case | {"case": "a"}]},
        {"date": "2026-12-04T21:12", "cases": [case | {"case": "a"}, case | {"case": "b", "mode": "RS"}]}]}
    m = study.microbenchmark_table(run)                      # the newest run, the cases beside a warpgroup
    assert list(m.index) == ["a"] and m["× the dense TF32 rate"].tolist() == [0.977]


def test_the_hardening_summary_reads_the_record():
    run = synthetic_run()
    assert study.NOT_RECORDED in study.hardening_summary(run).data
    run["hardening"] = {"gpu_tests": {"suite": "tests/test_gpu_kernels.py", "gpu": "NVIDIA H200", "date": "2026-12-05",
                                      "passed": 50, "failed": 0, "skipped": 13}}
    assert study.hardening_summary(run).data == ("- `tests/test_gpu_kernels.py` on the NVIDIA H200 (2026-12-05): "
                                                 "50 passed, 0 failed, 13 skipped")
