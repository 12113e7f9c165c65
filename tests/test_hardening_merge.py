"""The hardening results on the records, keyed by machine code: `same_machine_code`'s rule, `python -m convfuse.results
merge-hardening` (strict), the bench's carry-over (lenient), the GPU suites' counts, and the recorded files."""
import copy
import json
import subprocess
import sys

import pytest

from convfuse import registry as R
from convfuse import results as RS

KEYS = ("03a_seed_fused", "04_mma_3xtf32")     # kernels of both problems
HAS_NVCC = RS.toolkit()["nvcc_version"] is not None
needs_nvcc = pytest.mark.skipif(not HAS_NVCC, reason="nvcc not found: no machine code to compute")


def code(tag="a", sass="s", nvcc="13.0.88", cuobjdump="13.2.51"):
    return {"sass": sass, "cubins": {"sm_80": f"{tag}80", "sm_90": f"{tag}90"}, "nvcc": nvcc, "cuobjdump": cuobjdump}


@pytest.mark.parametrize("recorded,now,want", [
    (code(), code(), True),                                        # the same bytes
    (code("a", "s"), code("b", "s"), True),                        # other bytes, the same instructions
    (code("a", "s"), code("b", "t"), False),                       # other instructions
    (code("a", "s"), code("b", "s", cuobjdump="13.0.85"), True),   # the same encodings, whichever disassembler
    (code("a", "s"), code("b", "t", cuobjdump="13.0.85"), None),   # other text from another disassembler: undecided
    (code("a", "s"), code("b", None), None),                       # no cuobjdump here
    (code(nvcc="12.8.93"), code(), None),                          # another compiler
    (None, code(), False),                                         # nothing recorded
    (code(), None, None),
])
def test_same_machine_code_rule(recorded, now, want):
    assert RS.same_machine_code(recorded, now)[0] is want


def test_other_targets_are_other_code():
    other = code()
    other["cubins"] = {"sm_90a": "x"}
    assert RS.same_machine_code(code(), other) == (False, "built for ['sm_90a'], recorded for ['sm_80', 'sm_90']")


def test_normalized_sass_keeps_the_instructions_and_drops_the_names():
    text = ("\n\tcode for sm_90a\n\t.target\tsm_90a\n\n\t\tFunction : _ZN4cf0411conv2d_kernelEv\n"
            "\t.headerflags\t@\"EF_CUDA_SM90\"\n        /*0000*/   LDC R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */\n")
    renamed = text.replace("_ZN4cf0411conv2d_kernelEv", "_ZN4cf0411other_kernelEv")
    assert RS.normalized_sass(text) == RS.normalized_sass(renamed)
    assert "LDC R1" in RS.normalized_sass(text) and "Function" not in RS.normalized_sass(text)
    assert RS.normalized_sass(text) != RS.normalized_sass(text.replace("LDC R1", "LDC R2"))


@needs_nvcc
def test_machine_code_tells_the_two_builds_of_one_file_apart_and_is_cached():
    a, b = (RS.machine_code(R.get("conv2d", k)) for k in ("04_mma_tf32", "04_mma_3xtf32"))
    assert a["cubins"].keys() == {"sm_80", "sm_90"} and a["cubins"] != b["cubins"]
    assert a == RS.machine_code(R.get("conv2d", "04_mma_tf32"))
    assert a["nvcc"] == RS.toolkit()["nvcc_version"] and len(a["cubins"]["sm_80"]) == 16


def test_pytest_summary():
    assert RS.pytest_summary("....\n50 passed, 13 skipped in 83.83s (0:01:23)\n") == \
        {"passed": 50, "failed": 0, "skipped": 13, "errors": 0}
    assert RS.pytest_summary("==== 2 failed, 198 passed, 1 error in 14.0s ====") == \
        {"passed": 198, "failed": 2, "skipped": 0, "errors": 1}
    assert RS.pytest_summary("Traceback: boom") is None


def _results() -> dict:
    recs = [{"problem": p, "variant": "eager", "kind": "reference", "median_ms": 1.0} for p in ("conv2d", "conv3d")]
    recs += [{"problem": p, "variant": k, "kind": "fused", "median_ms": 1.0} for p in ("conv2d", "conv3d") for k in KEYS]
    return {"env": {"gpu": "NVIDIA H200", "slug": "nvidia-h200", "date": "2026-12-01T00:00:00+00:00"},
            "records": recs, "profiles": {}}


def _codes(tag="a") -> dict:
    return {(p, k): code(f"{tag}-{p}-{k}", f"s{tag}-{p}-{k}") for p in ("conv2d", "conv3d") for k in KEYS}


def _logs(codes, memcheck=0, large="ok", drop=None, stale=None) -> tuple[dict, dict]:
    san = {"env": {"gpu": "NVIDIA H200", "date": "d"}}
    lt = {"env": {"gpu": "NVIDIA H200", "date": "d"}}
    for (p, k), mc in codes.items():
        if (p, k) == drop:
            continue
        mc = code("old", "changed") if (p, k) == stale else mc
        san.setdefault(p, {})[k] = {"memcheck_errors": memcheck, "racecheck_hazards": 0, "racecheck_errors": 0,
                                    "racecheck_warnings": 0, "synccheck_errors": 0, "command": "...",
                                    "shapes": {"memcheck": [[1, 2]]}, "machine_code": mc}
        lt.setdefault(p, {})[k] = {"large_tensor": large, "batch": 513, "machine_code": mc}
    return san, lt


def test_apply_copies_the_fields_and_the_machine_code_onto_kernel_records_only():
    data, codes = _results(), _codes()
    san, lt = _logs(codes)
    assert RS.apply_hardening(data, {"sanitize": san, "large_tensor": lt}, strict=True, codes=codes,
                              log=lambda m: None) == []
    for rec in data["records"]:
        if rec["kind"] == "reference":
            assert not set(RS.HARDENING_FIELDS) & set(rec) and "hardening_machine_code" not in rec
        else:
            assert {f: rec[f] for f in RS.HARDENING_FIELDS} == {"memcheck_errors": 0, "racecheck_hazards": 0,
                                                                "synccheck_errors": 0, "large_tensor": "ok"}
            assert rec["hardening_machine_code"] == codes[(rec["problem"], rec["variant"])]
    assert data["hardening"]["sanitize"]["shapes"]["conv2d"] == {"memcheck": [[1, 2]]}
    assert data["hardening"]["large_tensor"]["batch"] == {"conv2d": 513, "conv3d": 513}


@pytest.mark.parametrize("kind", ["missing", "stale"])
def test_strict_apply_refuses_a_missing_variant_or_other_machine_code(kind):
    codes = _codes()
    logs = _logs(codes, drop=("conv3d", "04_mma_3xtf32")) if kind == "missing" else _logs(codes, stale=("conv2d", "03a_seed_fused"))
    data = _results()
    before = copy.deepcopy(data)
    with pytest.raises(ValueError, match="no entry" if kind == "missing" else "did not check the machine code"):
        RS.apply_hardening(data, dict(zip(("sanitize", "large_tensor"), logs)), strict=True, codes=codes)
    assert data == before


def test_lenient_apply_skips_stale_entries_and_new_code_drops_the_old_fields():
    data, codes = _results(), _codes()
    san, lt = _logs(codes, stale=("conv2d", "03a_seed_fused"))
    msgs = []
    problems = RS.apply_hardening(data, {"sanitize": san, "large_tensor": lt}, codes=codes, log=msgs.append)
    assert len(problems) == 2 and all("conv2d/03a_seed_fused" in p for p in problems)
    stale = RS.record(data, "conv2d", "03a_seed_fused")
    assert "memcheck_errors" not in stale and "large_tensor" not in stale
    # the code changes: a new sanitizer run on it replaces the counts and drops large_tensor, which checked the old code
    rec = RS.record(data, "conv3d", "03a_seed_fused")
    assert rec["large_tensor"] == "ok"
    new = _codes("b")
    RS.apply_hardening(data, {"sanitize": _logs(new)[0]}, codes=new, log=msgs.append)
    assert "large_tensor" not in rec and rec["hardening_machine_code"] == new[("conv3d", "03a_seed_fused")]


def test_carry_keeps_hardening_on_unchanged_code_and_voids_the_rest():
    old, codes = _results(), _codes()
    san, lt = _logs(codes)
    suite = RS.suite_summary("tests/test_gpu_hardening.py", "200 passed in 13.67s", codes, gpu="NVIDIA H200")
    RS.apply_hardening(old, {"sanitize": san, "large_tensor": lt, "gpu_hardening_tests": suite}, codes=codes,
                       log=lambda m: None)
    new = _results()
    now = dict(codes)
    now[("conv2d", "04_mma_3xtf32")] = code("changed", "changed")
    msgs = []
    assert RS.carry_hardening(old, new, now, log=msgs.append) == len(codes) - 1
    assert "large_tensor" not in RS.record(new, "conv2d", "04_mma_3xtf32")
    assert RS.record(new, "conv3d", "04_mma_3xtf32")["large_tensor"] == "ok"
    assert "gpu_hardening_tests" not in new["hardening"] and "sanitize" in new["hardening"]
    assert any("void" in m for m in msgs)
    same = _results()
    RS.carry_hardening(old, same, codes, log=lambda m: None)
    assert same["hardening"]["gpu_hardening_tests"]["passed"] == 200


def test_unclean_names_dirty_records_and_failing_suites():
    data, codes = _results(), _codes()
    san, lt = _logs(codes, memcheck=3, large="wrong")
    suite = RS.suite_summary("tests/test_gpu_kernels.py", "1 failed, 62 passed in 80.1s", codes)
    RS.apply_hardening(data, {"sanitize": san, "large_tensor": lt, "gpu_tests": suite}, codes=codes, log=lambda m: None)
    bad = RS.unclean(data)
    assert "conv2d/03a_seed_fused: memcheck_errors = 3" in bad and "conv2d/03a_seed_fused: large_tensor = 'wrong'" in bad
    assert "tests/test_gpu_kernels.py: 1 failed, 0 errors" in bad


def test_load_hardening_logs_looks_in_the_given_dirs(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "sanitize.json").write_text(json.dumps({"env": {}}))
    (tmp_path / "a" / "gpu_tests.log").write_text("50 passed, 13 skipped in 83.83s\n")
    logs = RS.load_hardening_logs([tmp_path / "a", tmp_path / "b"])
    assert logs["sanitize"] == {"env": {}} and logs["large_tensor"] is None
    assert logs["paths"]["gpu_tests"] == str(tmp_path / "a" / "gpu_tests.log")
    suites = RS.suites_from_logs(logs, _codes(), gpu="G")
    assert suites["gpu_tests"]["skipped"] == 13 and len(suites["gpu_tests"]["machine_code"]) == 4
    assert "gpu_hardening_tests" not in suites


def _merge(*args):
    return subprocess.run([sys.executable, "-m", "convfuse.results", "merge-hardening", *map(str, args)],
                          capture_output=True, text=True, cwd=RS.ROOT, timeout=600)


@needs_nvcc
def test_merge_cli_checks_the_code_the_tree_builds(tmp_path):
    codes = RS.machine_codes([R.get(p, k) for p in ("conv2d", "conv3d") for k in KEYS])
    san, lt = _logs(codes)
    paths = tmp_path / "nvidia-h200.json", tmp_path / "sanitize.json", tmp_path / "large_tensor.json"
    for path, obj in zip(paths, (_results(), san, lt)):
        path.write_text(json.dumps(obj))
    (tmp_path / "gpu.log").write_text("50 passed, 13 skipped in 83.83s\n")
    p = _merge(paths[0], "--sanitize", paths[1], "--large-tensor", paths[2], "--gpu-tests", tmp_path / "gpu.log")
    assert p.returncode == 0, p.stderr
    data = RS.load(paths[0])
    assert RS.record(data, "conv3d", "04_mma_3xtf32")["hardening_machine_code"] == codes[("conv3d", "04_mma_3xtf32")]
    assert data["hardening"]["gpu_tests"]["passed"] == 50 and "NOT CLEAN" not in p.stdout
    # an entry that checked other code is refused, and the file is left as it was
    paths[1].write_text(json.dumps(_logs(codes, stale=("conv2d", "03a_seed_fused"))[0]))
    before = paths[0].read_text()
    p = _merge(paths[0], "--sanitize", paths[1])
    assert p.returncode == 2 and "did not check the machine code" in p.stderr and paths[0].read_text() == before


def test_merge_needs_a_log(tmp_path):
    res = tmp_path / "r.json"
    res.write_text(json.dumps(_results()))
    assert _merge(res).returncode == 2
    assert "no such file" in _merge(res, "--sanitize", tmp_path / "nope.json").stderr


RUNS = RS.all_recorded()


@pytest.mark.skipif(not RUNS, reason="no results recorded yet")
@pytest.mark.parametrize("run", RUNS, ids=[r["path"].rsplit("/", 1)[-1] for r in RUNS])
def test_recorded_hardening_fields_are_all_or_nothing(run):
    """Once a recorded run carries hardening fields, every kernel record has all four, of the right type, and the
    machine code they checked; no record is keyed by its source text any more."""
    kernels = [r for r in run["records"] if r.get("kind") in ("epilogue", "fused")]
    assert not any("hardening_source_sha" in r for r in run["records"])
    if not any(f in r for r in kernels for f in RS.HARDENING_FIELDS):
        pytest.skip("no hardening fields recorded yet")
    for rec in kernels:
        name = f"{rec['problem']}/{rec['variant']}"
        for f in ("memcheck_errors", "racecheck_hazards", "synccheck_errors"):
            assert f in rec and (rec[f] is None or isinstance(rec[f], int)), f"{name}: {f}"
        assert isinstance(rec.get("large_tensor"), str), name
        mc = rec.get("hardening_machine_code")
        assert mc and mc["nvcc"] and set(mc["cubins"]) == {f"sm_{a}" for a in R.get(rec["problem"], rec["variant"]).archs}, name
    assert not RS.unclean(run)


def test_carry_evidence_keeps_it_and_says_when_the_registered_build_changed():
    old, codes = _results(), _codes()
    for rec in old["records"]:
        if rec["kind"] == "fused":
            rec["machine_code"] = codes[(rec["problem"], rec["variant"])]
            rec["evidence"] = [{"what": "tensor pipe", "value": 50.0, "build": "as registered", "same_machine_code": True},
                               {"what": "floor", "value": 1.0, "build": "x + CF_ABL", "same_machine_code": False,
                                "note": "ablation"}]
    old["microbenchmarks"] = {"wgmma_rate": [{"date": "d", "cases": []}]}
    now = dict(codes)
    now[("conv2d", "04_mma_3xtf32")] = code("changed", "changed")
    new = _results()
    assert RS.carry_evidence(old, new, now) == len(codes)
    changed = RS.record(new, "conv2d", "04_mma_3xtf32")["evidence"]
    assert changed[0]["same_machine_code"] is False and "registered until" in changed[0]["note"]
    assert changed[1] == RS.record(old, "conv2d", "04_mma_3xtf32")["evidence"][1]
    assert RS.record(new, "conv3d", "04_mma_3xtf32")["evidence"][0]["same_machine_code"] is True
    assert RS.record(old, "conv2d", "04_mma_3xtf32")["evidence"][0]["same_machine_code"] is True    # old untouched
    assert new["microbenchmarks"] == old["microbenchmarks"]


def test_build_times_are_carried_only_for_the_very_machine_code_they_built():
    codes = _codes()
    old = _results()
    old["env"]["build_times"] = {"cold_all_s": 41.2, "machine_code": {f"{p}/{k}": c for (p, k), c in codes.items()}}
    new = _results()
    new["env"]["date"] = "2026-12-07T00:00:00+00:00"
    assert RS.carry_build_times(old, new, codes)
    assert new["env"]["build_times"]["cold_all_s"] == 41.2
    assert new["env"]["build_times"]["measured"] == "2026-12-01T00:00:00+00:00"    # the run that built, not this one
    changed = dict(codes)
    changed[("conv3d", KEYS[0])] = code("changed", "changed")
    fewer = {pk: c for pk, c in codes.items() if pk != ("conv2d", KEYS[1])}
    for now in (changed, fewer):
        new = _results()
        assert not RS.carry_build_times(old, new, now) and "build_times" not in new["env"]
    new = _results()
    new["env"]["build_times"] = {"cold_all_s": 50.0}                                # this run built: its own times
    assert not RS.carry_build_times(old, new, codes) and new["env"]["build_times"]["cold_all_s"] == 50.0


def test_a_bench_run_keeps_hardening_evidence_and_microbenchmarks_where_the_code_is_unchanged(tmp_path, monkeypatch):
    """bench.run over a results file: new timings, the machine code timed, the old hardening and evidence carried where
    that code is unchanged, and the device session's outputs applied."""
    from convfuse import bench, build

    codes = _codes()
    old = _results()
    san, lt = _logs(codes)
    RS.apply_hardening(old, {"sanitize": san, "large_tensor": lt}, codes=codes, log=lambda m: None)
    for rec in old["records"]:
        if rec["kind"] == "fused":
            rec["machine_code"] = codes[(rec["problem"], rec["variant"])]
            rec["evidence"] = [{"what": "w", "value": 1.0, "build": "as registered", "same_machine_code": True}]
    old["microbenchmarks"] = {"wgmma_rate": []}
    out = tmp_path / "gpu.json"
    RS.save(old, out)
    (tmp_path / "session").mkdir()
    (tmp_path / "session" / "gpu_tests.log").write_text("63 passed in 90.0s\n")
    now = dict(codes)
    now[("conv2d", "03a_seed_fused")] = code("changed", "changed")
    monkeypatch.setattr(build, "require_toolchain", lambda: None)
    monkeypatch.setattr(build, "build_all", lambda vs, log=None: {})
    monkeypatch.setattr(bench, "environment", lambda: {"gpu": "NVIDIA H200", "slug": "nvidia-h200", "torch": "t",
                                                       "cuda": "c", "cudnn": 1, "date": "2"})
    monkeypatch.setattr(bench.torch.cuda, "get_device_capability", lambda: (9, 0))
    monkeypatch.setattr(bench, "measure_ceilings", lambda log=None: {})
    monkeypatch.setattr(bench, "profile_references", lambda prob, log=None: {})
    monkeypatch.setattr(bench, "bench_problem", lambda prob, **kw: [
        {k: v for k, v in r.items() if k in ("problem", "variant", "kind")} | {"median_ms": 0.5}
        for r in _results()["records"] if r["problem"] == prob.key])
    monkeypatch.setattr(RS, "machine_codes", lambda vs, jobs=None: {(v.problem, v.key): now[(v.problem, v.key)] for v in vs})
    data = bench.run(out_path=out, hardening_dirs=[tmp_path / "session"], log=lambda m: None)
    assert data["records"] == RS.load(out)["records"]
    kept = RS.record(data, "conv3d", "03a_seed_fused")
    assert kept["median_ms"] == 0.5 and kept["memcheck_errors"] == 0 and kept["evidence"][0]["same_machine_code"] is True
    changed = RS.record(data, "conv2d", "03a_seed_fused")
    assert changed["machine_code"] == now[("conv2d", "03a_seed_fused")] and "memcheck_errors" not in changed
    assert changed["evidence"][0]["same_machine_code"] is False
    assert data["hardening"]["gpu_tests"]["passed"] == 63 and data["microbenchmarks"] == {"wgmma_rate": []}


def test_a_variant_that_does_not_compile_gets_no_machine_code(monkeypatch):
    def fake(v, tools=None):
        if v.key == "03a_seed_fused":
            raise RuntimeError("nvcc -cubin failed")
        return code(v.key)
    monkeypatch.setattr(RS, "toolkit", lambda: {"nvcc": "nvcc", "nvcc_version": "13.0.88", "cuobjdump": None,
                                               "cuobjdump_version": None})
    monkeypatch.setattr(RS, "machine_code", fake)
    vs = [R.get("conv2d", k) for k in KEYS]
    codes = RS.machine_codes(vs)
    assert codes[("conv2d", "03a_seed_fused")] is None and codes[("conv2d", "04_mma_3xtf32")] == code("04_mma_3xtf32")
    data = _results()
    RS.record(data, "conv2d", "03a_seed_fused")["machine_code"] = code("x")
    rows = {r["variant"]: r for r in RS.check_machine_code(data, codes)}
    assert rows["conv2d/03a_seed_fused"]["same"] is False and "does not compile" in rows["conv2d/03a_seed_fused"]["why"]
