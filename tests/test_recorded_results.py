"""The committed results files: written by real runs, complete for what the study claims, holding the evidence the
study cites and the hardening summaries, each tied to the machine code it measured."""
import json
import re

import pytest

from convfuse import registry as R
from convfuse import results as RS

RUNS = RS.all_recorded()
OPTIONAL_REFERENCES = ("cudnn_fused", "cudnn_fused_nchw")      # need nvidia-cudnn-frontend
PREDICTIONS = sorted(p for p in (RS.RESULTS_DIR / "predictions").glob("*.json")
                     if not p.name.startswith(("scales-", "fixed-shift-")))
# the fixed-power-of-two twins of the FP16 kernels (splits.FIXED_SCHEMES), made before their kernels are written
FIXED_PREDICTIONS = sorted((RS.RESULTS_DIR / "predictions").glob("fixed-shift-*.json"))
# the CPU model's error per input scale (issue 66, scripts/predict_scales.py), made before the GPU run that checks it
SCALE_PREDICTIONS = sorted((RS.RESULTS_DIR / "predictions").glob("scales-*.json"))
KB_FIELDS = ("pass", "trials", "max_abs_vs_eager", "mean_ms", "n_timed", "speedup_vs_eager", "suspect")
REQUIRED = ("problem", "variant", "step", "precision", "median_ms", "p20_ms", "p80_ms", "speedup_vs_eager",
            "verified", "max_abs_err_fp64", "rel_l2_err_fp64", "kernelbench_pass", "model_bytes", "flops",
            "dram_bytes_measured", "registers")


@pytest.mark.skipif(not RUNS, reason="no results recorded yet")
@pytest.mark.parametrize("run", RUNS, ids=[r["path"].rsplit("/", 1)[-1] for r in RUNS])
def test_recorded_run_is_complete(run):
    env = run["env"]
    for k in ("gpu", "slug", "torch", "cuda", "cudnn", "date", "copy_gbps", "fp32_tflops", "tf32_tflops"):
        assert env.get(k) is not None, k
    assert run["path"].endswith(f"{env['slug']}.json")
    for prob in ("conv2d", "conv3d"):
        for v in R.all_variants(prob, kind="reference"):
            rec = RS.record(run, prob, v.key)
            if rec is None and v.key in OPTIONAL_REFERENCES:
                # the optional package was absent, cuDNN refused the graph, or the rows were withdrawn as mismeasured
                # (the record says which and why), or the record predates the rows
                why = (env.get("cudnn_fused") or {}).get(prob)
                assert why is None or (why["status"] in ("skipped", "refused", "withdrawn") and why.get("message")), why
                continue
            assert rec is not None, f"{prob}/{v.key} missing"
            assert rec["median_ms"] > 0 and rec["p20_ms"] <= rec["median_ms"] <= rec["p80_ms"]
            if v.key in OPTIONAL_REFERENCES:
                plan = rec.get("cudnn_plan") or {}
                assert plan.get("name") and plan.get("plans", 0) >= 1 and plan["name"] in plan.get("plans_ms", {}), plan
        eager = RS.record(run, prob, "eager")
        assert eager["max_abs_err_fp64"] is not None and eager["rel_l2_err_fp64"] is not None
    known = {(v.problem, v.key) for v in R.VARIANTS}
    for rec in run["records"]:
        assert (rec["problem"], rec["variant"]) in known, f"unknown variant {rec['variant']}"
        if rec["kind"] == "reference" and rec["variant"] == "cudnn_conv":
            continue
        for k in REQUIRED:
            if k != "registers" or rec["kind"] != "reference":
                assert k in rec, f"{rec['problem']}/{rec['variant']} lacks {k}"
        if rec["kind"] != "reference":
            assert rec["model_bytes"] > 0 and rec["dram_bytes_measured"], \
                f"{rec['problem']}/{rec['variant']}: no Nsight Compute bytes (make profile)"


def test_results_holds_records_only():
    """results/ is each GPU's record, in predictions/ the predictions made before a GPU's first record, and in family/
    each GPU's family record; nothing else (no logs), at most 2 MB."""
    entries = sorted(p for p in RS.RESULTS_DIR.iterdir() if not p.name.endswith(".json.tmp"))
    assert entries, "no results recorded"
    for p in entries:
        if p.name == "predictions" and p.is_dir():
            assert all(q.is_file() and q.suffix == ".json" for q in p.iterdir()), "predictions/ holds predictions only"
            continue
        if p.name == "fuse" and p.is_dir():         # `python -m convfuse fuse`: fuse(model) timed, one per GPU (notebook 05)
            for q in p.iterdir():
                rec = json.loads(q.read_text())
                assert q.suffix == ".json" and rec["env"]["gpu"] and rec["env"]["date"] and rec["runs"], q.name
                assert all(set(r["rows"]) == {"eager", "compile", "fused", "fused_compiled"} for r in rec["runs"])
            continue
        if p.name == "family" and p.is_dir():       # scripts/family_gpu.py's records, one per GPU (notebook 06)
            from convfuse.family import page
            for q in p.iterdir():
                assert q.is_file() and q.suffix == ".json", "family/ holds the family's records only"
                page.load(q)
            continue
        assert p.is_file() and p.suffix == ".json", f"{p.name}: results/ holds only the GPUs' records"
        RS.load(p)
    size = sum(p.stat().st_size for p in entries if p.is_file()) + sum(q.stat().st_size for q in PREDICTIONS) + \
        sum(q.stat().st_size for d in ("family", "fuse") for q in (RS.RESULTS_DIR / d).glob("*.json"))
    assert size <= 2 * 2**20


@pytest.mark.parametrize("path", PREDICTIONS, ids=[p.name for p in PREDICTIONS])
def test_a_prediction_was_made_before_its_gpu_was_measured(path):
    """results/predictions/<datasheet key>.json: the traffic model at a datasheet GPU's ceilings for every variant,
    with the date and commit it was made on — before the first record of that GPU."""
    import json

    from convfuse import plots
    from convfuse import traffic as T

    pred = json.loads(path.read_text())
    assert pred["gpu"]["key"] == path.stem and T.datasheet(path.stem).dram_gbps == pred["gpu"]["dram_gbps"]
    assert re.fullmatch(r"[0-9a-f]{7,40}", pred["commit"]) and pred["made"] and pred["model"]
    for prob in ("conv2d", "conv3d"):
        assert {v.key for v in R.kernel_variants(prob)} <= set(pred["predictions"][prob]), prob
        for key, p in pred["predictions"][prob].items():
            assert p["ms"] == max(p["memory_ms"], p["math_ms"]) > 0 and p["bound"] in ("memory", "compute"), key
    for run in RUNS:
        ds = plots.datasheet_for(run["env"])
        if ds and ds.key == path.stem:
            assert pred["made"] < run["env"]["date"], f"{path.name} was made after the record it predicts"


@pytest.mark.skipif(not RUNS, reason="no results recorded yet")
@pytest.mark.parametrize("run", RUNS, ids=[r["path"].rsplit("/", 1)[-1] for r in RUNS])
def test_kernelbench_verdicts_are_whole_where_recorded(run):
    """A record that carries KernelBench's verdicts carries them on every verified row, each whole and consistent
    with KernelBench's rules (5 trials, 100 timed calls, suspect above 10x); older records carry none."""
    verified = [r for r in run["records"] if r.get("verified")]
    have = [r for r in verified if r.get("kernelbench")]
    if not have:
        pytest.skip("a record from before KernelBench's verdicts")
    assert len(have) == len(verified), [f"{r['problem']}/{r['variant']}" for r in verified if not r.get("kernelbench")]
    for r in have:
        kb = r["kernelbench"]
        assert all(f in kb for f in KB_FIELDS), (r["variant"], kb)
        assert kb["trials"] == 5 and kb["n_timed"] == 100 and kb["mean_ms"] > 0
        assert kb["suspect"] == (kb["speedup_vs_eager"] > 10), r["variant"]


KERNEL_KINDS = ("epilogue", "fused")


@pytest.mark.skipif(not RUNS, reason="no results recorded yet")
@pytest.mark.parametrize("run", RUNS, ids=[r["path"].rsplit("/", 1)[-1] for r in RUNS])
def test_evidence_says_what_where_when_and_on_which_build(run):
    gpu = run["env"]["gpu"]
    for rec in run["records"]:
        name = f"{rec['problem']}/{rec['variant']}"
        if rec.get("kind") in KERNEL_KINDS:
            assert rec.get("machine_code", {}).get("cubins"), f"{name}: no machine code for what the bench timed"
        for e in rec.get("evidence", []):
            assert rec.get("kind") in KERNEL_KINDS, name
            assert all(f in e for f in RS.EVIDENCE_FIELDS), f"{name}: {e}"
            assert isinstance(e["value"], (int, float)) and e["gpu"] == gpu, f"{name}: {e['what']}"
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2} UTC)?", e["date"]), e["date"]
            assert re.fullmatch(r"[0-9a-f]{7,40}", e["commit"]) and re.fullmatch(r"[0-9a-f]{7,40}:\S+", e["log"])
            assert e["same_machine_code"] in (True, False, None)
            if e["build"] == "as registered":
                assert e["same_machine_code"] is True, f"{name}: {e['what']}"
            if e["same_machine_code"] is False:
                assert e.get("note"), f"{name}: {e['what']} ({e['build']}) says how its build differs"


def test_evidence_frame():
    run = RS.load(RS.path_for("nvidia-h200"))
    df = RS.evidence(run, "conv2d", "04d_rs_tf32")
    assert set(df["variant"]) == {"04d_rs_tf32"} and list(df.columns)[:5] == ["problem", "variant", "what", "value", "unit"]
    assert len(RS.evidence(run)) == sum(len(r.get("evidence", [])) for r in run["records"])
    empty = RS.evidence({"env": {}, "records": [{"problem": "conv2d", "variant": "eager"}]})
    assert empty.empty and "same_machine_code" in empty.columns


def _ev(run, problem, variant, what, build="as registered", date=""):
    df = RS.evidence(run, problem, variant)
    df = df[(df["what"] == what) & (df["build"] == build) & df["date"].str.startswith(date)]
    assert len(df) == 1, (problem, variant, what, build, len(df))
    return df.iloc[0]


def test_the_figures_notebook_04_states_are_in_the_record():
    """What bounds each Hopper kernel, as notebook 04 and the lab record state it, from the record's evidence."""
    run = RS.load(RS.path_for("nvidia-h200"))
    floor = RS.evidence(run, "conv3d", "04b_wgmma_tf32")
    floor = floor[floor["what"].str.startswith("its floor")]
    assert sorted(floor["value"]) == [0.632, 0.636] and not floor["same_machine_code"].any()
    pipe = "tensor pipe active (ncu), % of peak"
    assert round(_ev(run, "conv2d", "04d_rs_tf32", pipe, "as registered that day")["value"]) == 61
    assert _ev(run, "conv3d", "04b_wgmma_tf32", pipe)["same_machine_code"]
    d3 = "04d_rs_3xtf32 + CF_ABL_NOLDS CF_ABL_NOSPLIT CF_ABL_NOEPI"
    assert _ev(run, "conv2d", "04d_rs_3xtf32", "its skeleton's tensor pipe active (ncu), % of peak", d3)["value"] == 86.83
    full = _ev(run, "conv2d", "04d_rs_3xtf32", "the registered build of that day, ms", "04d_rs_3xtf32")["value"]
    for what, build in (("without the epilogue's math, ms", "04d_rs_3xtf32 + CF_ABL_RAWEPI"),
                        ("without the fragment loads, ms", "04d_rs_3xtf32 + CF_ABL_NOLDS")):
        assert 0.10 <= 1 - _ev(run, "conv2d", "04d_rs_3xtf32", what, build)["value"] / full <= 0.13   # "11-13 % each"
    pre = "04e_wino_3xtf32 without CF_WINO_DESC_UNIFORM"
    assert round(_ev(run, "conv2d", "04e_wino_3xtf32", pipe, pre)["value"]) == 38
    assert round(_ev(run, "conv2d", "04e_wino_3xtf32", "issue slots busy (ncu), % of peak", pre)["value"]) == 43
    assert round(_ev(run, "conv2d", "04e_wino_3xtf32", "L2 throughput (ncu), % of peak", pre)["value"]) == 28
    assert round(_ev(run, "conv2d", "04d_rs_3xtf32", pipe, "as registered that day", "2026-12-05")["value"]) == 70
    tf32 = "04e_wino_tf32 (the same file's TF32 build)"
    assert round(_ev(run, "conv2d", "04e_wino_3xtf32", pipe, tf32)["value"]) == 16
    times = "median time in one process beside 04d, eager and torch.compile, ms"
    assert _ev(run, "conv2d", "04e_wino_3xtf32", times)["value"] == 2.256
    assert _ev(run, "conv2d", "04e_wino_3xtf32", times,
               "04e_wino_3xtf32 + CF_WINO_CLUSTER=2 (without CF_WINO_DESC_UNIFORM)")["value"] == 3.752
    cand = _ev(run, "conv2d", "04b_wgmma_tf32", "worst rel-L2 against float64 over the shapes checked",
               "04b_wgmma_tf32 + CF_TF32BF16")
    assert cand["value"] > 2e-6 and not cand["same_machine_code"]          # it fails the FP32 bound
    step04 = _ev(run, "conv2d", "04_mma_tf32", "cycles with no eligible warp (scheduler)")
    assert step04["value"] > 50 and step04["same_machine_code"]          # "more than half the cycles"


def test_microbenchmark_table():
    run = RS.load(RS.path_for("nvidia-h200"))
    t = RS.microbenchmark(run, "wgmma_rate")
    dates = list(dict.fromkeys(t.index.get_level_values("date")))
    assert len(dates) == 2 and {"mode", "n", "warpgroups", "group", "flop_per_cycle", "of_tf32_rate"} <= set(t.columns)
    assert (t["of_tf32_rate"] <= 1.01).all() and t["of_tf32_rate"].max() > 0.99
    assert RS.microbenchmark({"env": {}, "records": []}).empty


@pytest.mark.skipif(not RUNS, reason="no results recorded yet")
@pytest.mark.parametrize("run", RUNS, ids=[r["path"].rsplit("/", 1)[-1] for r in RUNS])
def test_hardening_summaries(run):
    hard = run.get("hardening")
    if not hard:
        pytest.skip("no hardening recorded")
    kernels = {f"{r['problem']}/{r['variant']}" for r in run["records"] if r.get("kind") in KERNEL_KINDS}
    for name in RS.TEST_SUITES:
        s = hard.get(name)
        if s:
            assert s["passed"] > 0 and s["failed"] == 0 and s["errors"] == 0, name
            assert set(s["machine_code"]) == kernels, name
    if "sanitize" in hard:
        assert hard["sanitize"]["kernel_records"] == sum("memcheck_errors" in r for r in run["records"])
    bt = run["env"].get("build_times")
    if bt and "machine_code" in bt:
        assert set(bt["machine_code"]) == kernels


def _comparable(run):
    tk = RS.toolkit()
    if tk["nvcc_version"] is None:
        pytest.skip("nvcc not found")
    recorded = {mc["nvcc"] for r in run["records"] for mc in (r.get("machine_code"), r.get("hardening_machine_code")) if mc}
    if recorded != {tk["nvcc_version"]}:
        pytest.skip(f"the record's machine code was compiled by nvcc {sorted(recorded)}, this one is {tk['nvcc_version']}")


@pytest.mark.skipif(not RUNS, reason="no results recorded yet")
@pytest.mark.parametrize("run", RUNS, ids=[r["path"].rsplit("/", 1)[-1] for r in RUNS])
def test_the_working_tree_builds_the_machine_code_the_record_measured(run):
    """Every machine-code key of the record (what the bench timed, what ncu profiled, what the hardening checked, the
    GPU suites, the build times) is what the working tree compiles each kernel variant to: an edit that changed no
    instruction keeps the record standing; one that did needs a device run. Where the cubins differ and the SASS cannot
    be compared here (no cuobjdump, or another version than the record's), it says so."""
    _comparable(run)
    rows = RS.check_machine_code(run)
    different = [f"{r['where']} {r['variant']}: {r['why']}" for r in rows if r["same"] is False]
    assert not different, "\n".join(different)
    unknown = sorted({f"{r['variant']}: {r['why']}" for r in rows if r["same"] is None})
    if unknown:
        pytest.skip("cannot tell here:\n" + "\n".join(unknown))


@pytest.mark.parametrize("path", SCALE_PREDICTIONS, ids=[p.name for p in SCALE_PREDICTIONS])
def test_scale_predictions_name_every_fp16_operand_kernel(path):
    import json

    pred = json.loads(path.read_text())
    assert re.fullmatch(r"[0-9a-f]{7,40}", pred["commit"]) and pred["made"] and pred["model"]
    for v in R.kernel_variants():
        if v.precision in ("fp16", "3xfp16"):
            e = pred["predictions"][v.problem][v.key]
            assert set(e["rel_l2"]) == {"model", "zero"} and len(e["rel_l2"]["zero"]) == len(pred["scales"])


@pytest.mark.parametrize("path", FIXED_PREDICTIONS, ids=[p.name for p in FIXED_PREDICTIONS])
def test_fixed_shift_predictions_name_each_fp16_kernels_twins(path):
    """Every FP16-operand kernel's fixed-shift twins, with the range the model gave when the file was made: the model
    still gives it (a changed model is a new prediction, not an edited one)."""
    from convfuse import splits as S

    pred = json.loads(path.read_text())
    assert re.fullmatch(r"[0-9a-f]{7,40}", pred["commit"]) and pred["made"] and pred["model"]
    for v in R.kernel_variants():
        if v.precision in ("fp16", "3xfp16"):
            twins = pred["predictions"][v.problem][v.key]
            assert set(twins) == {s for s in S.FIXED_SCHEMES if S.scheme_class(s) == v.precision}, v.key
            for twin, e in twins.items():
                assert tuple(e["model_held_range"]) == S.held_range(v.problem, twin), (v.key, twin)
                assert set(e["rel_l2"]) == {"model", "zero"} and len(e["rel_l2"]["zero"]) == len(pred["scales"])
