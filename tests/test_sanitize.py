"""convfuse/sanitize.py on the CPU: the summary parser, the job plan, and the parent's whole loop run
against a stand-in for compute-sanitizer (a Python script that runs the child and prints a summary)."""
import json
import sys
import textwrap

import pytest

from convfuse import problems as P
from convfuse import registry as R
from convfuse import sanitize as S

MEMCHECK_CLEAN = """========= COMPUTE-SANITIZER
CF_SANITIZE_OK {"variant": "03a_seed_fused", "shapes": [[3, 64, 6, 69]], "max_abs_vs_eager_cpu": 1e-06}
========= ERROR SUMMARY: 0 errors
"""
MEMCHECK_DIRTY = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at conv2d_tiled_smem(const float *, const float *, const float *, const float *, float *, int, int, int, int, int)+0x1a0
=========     by thread (3,0,0) in block (0,0,0)
=========     Address 0x7f0000001000 is out of bounds
=========
========= ERROR SUMMARY: 1 error
"""
MEMCHECK_MANY = "========= ERROR SUMMARY: 1010 errors\n========= ERROR SUMMARY: 910 errors were not printed.\n"
RACECHECK_CLEAN = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
RACECHECK_DIRTY = "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
RACECHECK_WARN = "========= RACECHECK SUMMARY: 12 hazards displayed (0 errors, 12 warnings)\n"


@pytest.mark.parametrize("text,tool,want", [
    (MEMCHECK_CLEAN, "memcheck", {"errors": 0}),
    (MEMCHECK_DIRTY, "memcheck", {"errors": 1}),
    (MEMCHECK_MANY, "memcheck", {"errors": 1010}),
    ("========= ERROR SUMMARY: 0 errors\n", "synccheck", {"errors": 0}),
    ("========= ERROR SUMMARY: 2 errors\n", "synccheck", {"errors": 2}),
    (RACECHECK_CLEAN, "racecheck", {"hazards": 0, "errors": 0, "warnings": 0}),
    (RACECHECK_DIRTY, "racecheck", {"hazards": 1, "errors": 1, "warnings": 0}),
    (RACECHECK_WARN, "racecheck", {"hazards": 12, "errors": 0, "warnings": 12}),
    ("========= ERROR SUMMARY: 3 errors\n", "racecheck", {"hazards": 3, "errors": 3, "warnings": None}),
    ("Traceback (most recent call last):\nRuntimeError: CUDA driver error\n", "memcheck", {"errors": None}),
    ("========= Error: Target application terminated before first instrumented API call\n", "racecheck",
     {"hazards": None, "errors": None, "warnings": None}),
])
def test_parse_summary(text, tool, want):
    assert S.parse_summary(text, tool) == want


def test_child_reports_per_variant():
    text = (MEMCHECK_CLEAN + 'CF_SANITIZE_SKIP {"variant": "04b_x", "reason": "needs 9.0"}\n'
            'CF_SANITIZE_FAIL {"variant": "04_mma_tf32", "error": "ValueError: no"}\nCF_SANITIZE_OK {broken json\n')
    reps = S.child_reports(text)
    assert reps["03a_seed_fused"]["kind"] == "ok" and reps["03a_seed_fused"]["max_abs_vs_eager_cpu"] == 1e-6
    assert reps["04b_x"]["kind"] == "skipped" and reps["04_mma_tf32"]["kind"] == "failed"
    assert len(reps) == 3


def test_job_results_group_is_conclusive_only_when_clean():
    ok2 = MEMCHECK_CLEAN + 'CF_SANITIZE_OK {"variant": "04_mma_tf32", "shapes": [], "max_abs_vs_eager_cpu": 0.01}\n'
    res, conclusive = S.job_results("memcheck", ("03a_seed_fused", "04_mma_tf32"), 0, ok2, 9.0)
    assert conclusive and all(r["status"] == "ok" and r["counts"] == {"errors": 0} for r in res.values())
    dirty = ok2.replace("ERROR SUMMARY: 0 errors", "ERROR SUMMARY: 1 error")
    res, conclusive = S.job_results("memcheck", ("03a_seed_fused", "04_mma_tf32"), 0, dirty, 9.0)
    assert not conclusive
    res, conclusive = S.job_results("memcheck", ("03a_seed_fused",), 0, dirty, 9.0)
    assert conclusive and res["03a_seed_fused"]["counts"] == {"errors": 1} and "log_tail" in res["03a_seed_fused"]
    # the summary says 0 but a variant never reported: its kernels did not (all) run
    res, conclusive = S.job_results("memcheck", ("03a_seed_fused", "04_mma_tf32"), 0, MEMCHECK_CLEAN, 9.0)
    assert not conclusive and res["04_mma_tf32"]["counts"] == {"errors": None}
    res, _ = S.job_results("racecheck", ("03a_seed_fused",), None, "", 240.0)
    assert res["03a_seed_fused"]["status"] == "timeout" and res["03a_seed_fused"]["counts"]["hazards"] is None


def test_plan_covers_every_kernel_variant_and_tool_racecheck_first():
    vs = R.kernel_variants()
    jobs = S.plan(vs, S.TOOLS, "problem")
    assert jobs[0][0] == "racecheck"
    assert len(jobs) == len(S.TOOLS) * len(P.PROBLEMS)
    covered = {(tool, problem, k) for tool, problem, ks in jobs for k in ks}
    assert covered == {(t, v.problem, v.key) for t in S.TOOLS for v in vs}
    single = S.plan(vs, S.TOOLS, "variant")
    assert len(single) == len(S.TOOLS) * len(vs) and all(len(ks) == 1 for *_, ks in single)


@pytest.mark.parametrize("prob", P.PROBLEMS.values(), ids=list(P.PROBLEMS))
def test_shapes_racecheck_smallest_others_all_odd_shapes(prob):
    small = S.smallest_odd_shape(prob)
    assert small in prob.odd_shapes
    assert all(S._out_numel(prob, small) <= S._out_numel(prob, s) for s in prob.odd_shapes)
    extra = [tuple(s) for s in prob.sanitize_shapes]
    assert S.shapes_for(prob, "racecheck") == [small] + extra
    assert S.shapes_for(prob, "memcheck") == list(prob.odd_shapes) + extra


def test_conv3d_sanitize_shape_takes_the_04b_store_paths_the_odd_shapes_miss():
    # 04b's bulk and tensor-copy stores need an even output width; the tensor copy a full 62-pixel tile, a plane a
    # multiple of 4 floats, and its box placed by the row's 16-byte phase (x0 mod 4 = 0 or 2): both must occur
    prob, tile = P.get("conv3d"), 62

    def paths(shape):
        _, _, do, ho, wo = prob.output_shape(shape)
        phases = {((od * ho + oh) * wo) % 4 for od in range(do) for oh in range(ho)}
        return wo % 2 == 0 and wo >= tile and (do * ho * wo) % 4 == 0, phases

    assert not any(paths(s)[0] for s in prob.odd_shapes)
    assert any(ok and phases == {0, 2} for ok, phases in map(paths, prob.sanitize_shapes))
    # the group stores (CF_GROUP_STORE): a tile is a whole row (Wo = 62) and Do * Ho a multiple of 4
    assert any(prob.output_shape(s)[4] == tile and prob.output_shape(s)[2] * prob.output_shape(s)[3] % 4 == 0
               for s in prob.sanitize_shapes)


def test_conv2d_sanitize_shapes_take_04c_bulk_stores_at_both_row_phases():
    # 04c's CF_BULK_STORE needs Wo even; rows alternate 16-byte phases where Ho * Wo is no multiple of 4. The first odd
    # shape (odd Wo) keeps the special-value tests on the stores from registers too.
    prob = P.CONV2D
    assert prob.output_shape(prob.odd_shapes[0])[3] % 2 == 1
    assert any(ho * wo % 4 == 2 and wo % 2 == 0 and wo % 86 != 0
               for _, _, ho, wo in map(prob.output_shape, prob.sanitize_shapes))


def test_job_command():
    cmd = S.job_cmd("/cs", "memcheck", "conv2d", ("03a_seed_fused", "04_mma_tf32"), help_text="  --padding <n>")
    assert cmd[:5] == ["/cs", "--tool", "memcheck", "--padding", "256"]
    assert cmd[cmd.index("--child") + 1:cmd.index("--child") + 3] == ["conv2d", "03a_seed_fused,04_mma_tf32"]
    assert cmd.count("--shape") == len(P.CONV2D.odd_shapes) + len(P.CONV2D.sanitize_shapes)
    race = S.job_cmd("/cs", "racecheck", "conv3d", "03b_register_tiled", help_text="--padding")
    assert "--padding" not in race and race.count("--shape") == 1 + len(P.CONV3D.sanitize_shapes)
    assert "PYTORCH_NO_CUDA_MEMORY_CACHING=1" in S.command_text(race)


FAKE_SANITIZER = r'''
import os, subprocess, sys
args = sys.argv[1:]
if args in (["--help"], ["--version"]):
    print("fake-sanitizer: --tool --padding"); sys.exit(0)
tool = args[args.index("--tool") + 1]
p = subprocess.run(args[args.index(sys.executable):], capture_output=True, text=True)
sys.stdout.write(p.stdout)
keys = args[args.index("--child") + 2].split(",")
bad = [k for k in keys if f"{tool}:{k}" in os.environ.get("FAKE_DIRTY", "")]
if tool == "racecheck":
    print(f"========= RACECHECK SUMMARY: {len(bad)} hazards displayed ({len(bad)} errors, 0 warnings)")
else:
    print(f"========= ERROR SUMMARY: {len(bad)} errors")
'''
FAKE_CHILD = ("import json, sys\n"
              "for k in sys.argv[sys.argv.index('--child') + 2].split(','):\n"
              "    print('CF_SANITIZE_OK ' + json.dumps({'variant': k, 'shapes': [], 'max_abs_vs_eager_cpu': 0.0}))\n")


def _fake_code(v):
    return {"sass": "s-" + v.key, "cubins": {f"sm_{a}": f"c-{v.key}" for a in v.archs}, "nvcc": "0.0", "cuobjdump": "0.0"}


def test_run_with_a_stand_in_sanitizer(tmp_path, monkeypatch):
    """The parent loop end to end: one job per tool and problem; the dirty one is re-run per variant and
    only the variant that is dirty alone gets the count; the JSON has every variant and field, each with the
    machine code it checked; the counts land on the results file's kernel records."""
    from convfuse import results as RS

    fake = tmp_path / "fake-sanitizer"
    fake.write_text(f"#!{sys.executable}\n" + textwrap.dedent(FAKE_SANITIZER))
    fake.chmod(0o755)
    monkeypatch.setattr(S, "_build", lambda variants, log: {})
    monkeypatch.setattr(S, "_environment", lambda sanitizer: {"sanitizer": sanitizer, "gpu": "G"})
    monkeypatch.setattr(S, "child_cmd", lambda problem, keys, shapes: [
        sys.executable, "-c", FAKE_CHILD, "--child", problem, ",".join([keys] if isinstance(keys, str) else keys)])
    monkeypatch.setattr(RS, "machine_codes", lambda vs, jobs=None: {(v.problem, v.key): _fake_code(v) for v in vs})
    monkeypatch.setenv("FAKE_DIRTY", "memcheck:03a_seed_fused")
    variants = [v for v in R.kernel_variants() if v.key in ("01_epilogue_fused", "03a_seed_fused", "04_mma_tf32")]
    keys = sorted({v.key for v in variants})
    record = tmp_path / "gpu.json"
    RS.save({"env": {"gpu": "G", "date": "1"}, "records": [
        {"problem": v.problem, "variant": v.key, "kind": v.kind, "median_ms": 1.0} for v in variants]}, record)
    lines = []
    out = tmp_path / "sanitize.json"
    data = S.run(out, keys=keys, sanitizer=str(fake), jobs=4, timeout=60, logs_dir=tmp_path / "logs",
                 record=record, log=lines.append)
    assert json.loads(out.read_text()) == data
    for prob in P.PROBLEMS:
        for k in keys:
            rec = data[prob][k]
            want_mem = 1 if k == "03a_seed_fused" else 0
            assert (rec["memcheck_errors"], rec["racecheck_hazards"], rec["synccheck_errors"]) == (want_mem, 0, 0), rec
            assert rec["status"] == {"memcheck": "ok", "racecheck": "ok", "synccheck": "ok"}
            assert rec["machine_code"] == _fake_code(R.get(prob, k)) and "--tool memcheck" in rec["command"]
            assert ("log_tail" in rec) == (k == "03a_seed_fused")
            merged = RS.record(RS.load(record), prob, k)
            assert merged["memcheck_errors"] == want_mem and merged["hardening_machine_code"] == rec["machine_code"]
            assert "large_tensor" not in merged
    summary = RS.load(record)["hardening"]["sanitize"]
    assert summary["gpu"] == "G" and summary["kernel_records"] == len(variants) and set(summary["shapes"]) == set(P.PROBLEMS)
    assert sum("each variant again alone" in m for m in lines) == len(P.PROBLEMS)
    assert (tmp_path / "logs" / "conv2d_all_racecheck.log").exists()


def test_select_filters_the_registered_kernels():
    everything = S.select()
    assert [(v.problem, v.key) for v in everything] == [(v.problem, v.key) for v in R.kernel_variants()]
    assert {v.problem for v in S.select(problems=["conv3d"])} == {"conv3d"}
    assert [v.key for v in S.select(problems=["conv2d"], keys=["04_mma_tf32"])] == ["04_mma_tf32"]
