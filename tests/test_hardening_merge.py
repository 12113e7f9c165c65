"""The hardening fields on the results records: `python -m convfuse.results merge-hardening` (strict),
the bench's re-application (lenient, source hash checked), and the recorded files' consistency."""
import copy
import json
import subprocess
import sys

import pytest

from convfuse import registry as R
from convfuse import results as RS

KEYS = ("03a_seed_fused", "04_mma_3xtf32")     # kernels of both problems whose sources are committed


def _results() -> dict:
    recs = [{"problem": p, "variant": "eager", "kind": "reference", "median_ms": 1.0} for p in ("conv2d", "conv3d")]
    recs += [{"problem": p, "variant": k, "kind": "fused", "median_ms": 1.0} for p in ("conv2d", "conv3d") for k in KEYS]
    return {"env": {"gpu": "NVIDIA H200", "slug": "nvidia-h200", "date": "2026-12-01T00:00:00+00:00"},
            "records": recs, "profiles": {}}


def _logs(memcheck=0, large="ok", drop=None, stale=None) -> tuple[dict, dict]:
    san, lt = {"env": {"gpu": "NVIDIA H200"}}, {"env": {"gpu": "NVIDIA H200"}}
    for p in ("conv2d", "conv3d"):
        for k in KEYS:
            if (p, k) == drop:
                continue
            sha = RS.source_sha(R.get(p, k)) if (p, k) != stale else "0123456789abcdef"
            san.setdefault(p, {})[k] = {"memcheck_errors": memcheck, "racecheck_hazards": 0, "racecheck_errors": 0,
                                        "racecheck_warnings": 0, "synccheck_errors": 0, "command": "...",
                                        "source_sha": sha}
            lt.setdefault(p, {})[k] = {"large_tensor": large, "batch": 513, "source_sha": sha}
    return san, lt


def _write(tmp_path, data, san, lt):
    paths = tmp_path / "nvidia-h200.json", tmp_path / "sanitize.json", tmp_path / "large_tensor.json"
    for path, obj in zip(paths, (data, san, lt)):
        path.write_text(json.dumps(obj))
    return paths


def _merge(*args):
    return subprocess.run([sys.executable, "-m", "convfuse.results", "merge-hardening", *map(str, args)],
                          capture_output=True, text=True, cwd=RS.ROOT, timeout=120)


def test_source_sha_tells_the_two_builds_of_one_file_apart():
    a, b = (RS.source_sha(R.get("conv2d", k)) for k in ("04_mma_tf32", "04_mma_3xtf32"))
    assert a != b and len(a) == 16 and a == RS.source_sha(R.get("conv2d", "04_mma_tf32"))


def test_merge_copies_the_four_fields_onto_kernel_records_only(tmp_path):
    res, san, lt = _write(tmp_path, _results(), *_logs())
    p = _merge(res, "--sanitize", san, "--large-tensor", lt)
    assert p.returncode == 0, p.stderr
    data = RS.load(res)
    for rec in data["records"]:
        if rec["kind"] == "reference":
            assert not set(RS.HARDENING_FIELDS) & set(rec)
        else:
            assert {f: rec[f] for f in RS.HARDENING_FIELDS} == {"memcheck_errors": 0, "racecheck_hazards": 0,
                                                                "synccheck_errors": 0, "large_tensor": "ok"}
            assert rec["hardening_source_sha"] == RS.source_sha(R.get(rec["problem"], rec["variant"]))
    assert "NOT CLEAN" not in p.stdout


@pytest.mark.parametrize("kind", ["missing", "stale"])
def test_merge_refuses_when_a_variant_is_missing_or_was_checked_on_other_source(tmp_path, kind):
    logs = _logs(drop=("conv3d", "04_mma_3xtf32")) if kind == "missing" else _logs(stale=("conv2d", "03a_seed_fused"))
    res, san, lt = _write(tmp_path, _results(), *logs)
    before = res.read_text()
    p = _merge(res, "--sanitize", san, "--large-tensor", lt)
    assert p.returncode == 2
    assert ("conv3d/04_mma_3xtf32: no entry" if kind == "missing" else "another version of its source") in p.stderr
    assert res.read_text() == before


def test_merge_says_what_is_not_clean(tmp_path):
    res, san, lt = _write(tmp_path, _results(), *_logs(memcheck=3, large="wrong"))
    p = _merge(res, "--sanitize", san, "--large-tensor", lt)
    assert p.returncode == 0
    assert "NOT CLEAN: conv2d/03a_seed_fused: memcheck_errors = 3" in p.stdout
    assert "large_tensor = 'wrong'" in p.stdout


def test_merge_needs_a_log(tmp_path):
    res, *_ = _write(tmp_path, _results(), *_logs())
    assert _merge(res).returncode == 2
    assert "no such file" in _merge(res, "--sanitize", tmp_path / "nope.json").stderr


def test_bench_reapplication_is_lenient_and_looks_in_the_given_dirs_first(tmp_path):
    (tmp_path / "out").mkdir()
    san, lt = _logs(stale=("conv2d", "03a_seed_fused"))
    (tmp_path / "out" / "sanitize.json").write_text(json.dumps(san))
    logs = RS.load_hardening_logs([tmp_path / "out"], large_tensor=None)
    assert logs["paths"]["sanitize"] == str(tmp_path / "out" / "sanitize.json")
    data = _results()
    msgs = []
    problems = RS.apply_hardening(data, {"sanitize": logs["sanitize"], "large_tensor": lt}, log=msgs.append)
    assert problems == [p for p in problems if "conv2d/03a_seed_fused" in p] and len(problems) == 2
    stale = RS.record(data, "conv2d", "03a_seed_fused")
    assert "memcheck_errors" not in stale and "large_tensor" not in stale
    assert RS.record(data, "conv3d", "03a_seed_fused")["memcheck_errors"] == 0
    with pytest.raises(ValueError, match="another version"):
        RS.apply_hardening(copy.deepcopy(_results()), {"sanitize": san}, strict=True, log=msgs.append)


RUNS = RS.all_recorded()


@pytest.mark.skipif(not RUNS, reason="no results recorded yet")
@pytest.mark.parametrize("run", RUNS, ids=[r["path"].rsplit("/", 1)[-1] for r in RUNS])
def test_recorded_hardening_fields_are_all_or_nothing(run):
    """Once a recorded run carries hardening fields, every kernel record has all four, of the right type."""
    kernels = [r for r in run["records"] if r.get("kind") in ("epilogue", "fused")]
    if not any(f in r for r in kernels for f in RS.HARDENING_FIELDS):
        pytest.skip("no hardening fields recorded yet")
    for rec in kernels:
        name = f"{rec['problem']}/{rec['variant']}"
        for f in ("memcheck_errors", "racecheck_hazards", "synccheck_errors"):
            assert f in rec and (rec[f] is None or isinstance(rec[f], int)), f"{name}: {f}"
        assert isinstance(rec.get("large_tensor"), str), name
