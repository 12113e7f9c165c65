import os
import subprocess
import sys

import pytest
import torch

from convfuse import build as B
from convfuse import results as RS


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_no_cuda_gives_a_clear_error_not_a_traceback():
    with pytest.raises(B.BuildError, match="needs a CUDA GPU"):
        B.require_toolchain()
    p = subprocess.run([sys.executable, "-m", "convfuse", "bench"], capture_output=True, text=True,
                       cwd=B.ROOT, timeout=120)
    assert p.returncode == 2
    assert "needs a CUDA GPU" in p.stderr and "Traceback" not in p.stderr


def test_specs_runs_without_gpu():
    p = subprocess.run([sys.executable, "-m", "convfuse", "specs"], capture_output=True, text=True,
                       cwd=B.ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "304.4 G" in p.stdout and "190.5 G" in p.stdout


def test_mode_switch(monkeypatch):
    monkeypatch.setenv("CONVFUSE_MODE", "recorded")
    assert RS.mode() == "recorded"
    monkeypatch.setenv("CONVFUSE_MODE", "fast")
    with pytest.raises(ValueError, match="CONVFUSE_MODE"):
        RS.mode()
    if not torch.cuda.is_available():
        monkeypatch.setenv("CONVFUSE_MODE", "live")
        with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
            RS.mode()
        monkeypatch.setenv("CONVFUSE_MODE", "auto")
        assert RS.mode() == "recorded"


def test_merge_replaces_only_rerun_rows():
    old = {"env": {"date": "1"}, "records": [{"problem": "conv2d", "variant": "eager", "median_ms": 5},
                                             {"problem": "conv2d", "variant": "03a_seed_fused", "median_ms": 50}]}
    new = {"env": {"date": "2"}, "records": [{"problem": "conv2d", "variant": "eager", "median_ms": 4}]}
    m = RS.merge(old, new)
    assert m["env"]["date"] == "2"
    assert sorted((r["variant"], r["median_ms"]) for r in m["records"]) == [("03a_seed_fused", 50), ("eager", 4)]
    assert RS.slug("NVIDIA H200") == "nvidia-h200"


def test_a_partial_bench_run_keeps_the_rows_of_the_run_before(tmp_path, monkeypatch):
    """Each notebook's live run is a partial bench run into the same file: the rows it does not measure stay
    (before the fix, the save after each problem replaced the file, and the merge then read that back)."""
    from convfuse import bench, build

    out = tmp_path / "gpu.json"
    RS.save({"env": {"date": "1"}, "records": [{"problem": "conv2d", "variant": "04c_ws_tf32", "median_ms": 1.5},
                                               {"problem": "conv2d", "variant": "eager", "median_ms": 5.0}],
             "profiles": {}}, out)
    monkeypatch.setattr(build, "require_toolchain", lambda: None)
    monkeypatch.setattr(build, "build_all", lambda vs, log=None: {})
    monkeypatch.setattr(bench, "environment", lambda: {"gpu": "G", "torch": "t", "cuda": "c", "cudnn": 1, "date": "2"})
    monkeypatch.setattr(bench.torch.cuda, "get_device_capability", lambda: (9, 0))
    monkeypatch.setattr(bench, "measure_ceilings", lambda log=None: {})
    monkeypatch.setattr(bench, "profile_references", lambda prob, log=None: {})
    monkeypatch.setattr(bench, "bench_problem", lambda prob, **kw: [{"problem": prob.key, "variant": "eager",
                                                                     "median_ms": 4.0}])
    monkeypatch.setattr(RS, "load_hardening_logs", lambda dirs: {"sanitize": None, "large_tensor": None})
    bench.run(problem_keys=["conv2d"], keys=["eager"], out_path=out, log=lambda m: None)
    got = {r["variant"]: r["median_ms"] for r in RS.load(out)["records"]}
    assert got == {"04c_ws_tf32": 1.5, "eager": 4.0}


def test_predict_writes_a_dated_prediction_file(tmp_path):
    out = tmp_path / "p.json"
    p = subprocess.run([sys.executable, "-m", "convfuse", "predict", "--gpu", "a100-80gb", "--out", str(out)],
                       capture_output=True, text=True, cwd=B.ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    import json

    pred = json.loads(out.read_text())
    assert pred["made"].startswith("20") and pred["gpu"]["key"] == "a100-80gb"
    assert "04_mma_tf32" in pred["predictions"]["conv3d"]


def test_device_session_stops_before_any_stage_on_another_gpu(tmp_path):
    """REQUIRE_GPU: a record call that lands on a GPU it was not meant for runs nothing and says which GPU it found."""
    env = {**os.environ, "REQUIRE_GPU": "no GPU has this name", "OUT": str(tmp_path / "out"), "PY": sys.executable}
    p = subprocess.run(["bash", "scripts/device_session.sh", "env", "build"], capture_output=True, text=True,
                       cwd=B.ROOT, env=env, timeout=60)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "not no GPU has this name (REQUIRE_GPU): nothing run" in p.stdout
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
