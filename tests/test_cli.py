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
