"""scripts/family_gpu.py's CPU parts: its arguments, the dry run that generates all nine sources and the plan, the
table it prints last, and FusedFamily's checks at its door (those a CPU tensor reaches)."""
import importlib.util
import json
from pathlib import Path

import pytest
import torch

from convfuse.family import models as M
from convfuse.family import run as F
from convfuse.family import template as TP

_spec = importlib.util.spec_from_file_location("family_gpu", Path(__file__).resolve().parent.parent / "scripts" / "family_gpu.py")
family_gpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(family_gpu)


def test_arguments(tmp_path):
    a = family_gpu.parse_args(["--out", str(tmp_path)])
    assert a.keys == list(M.FAMILY) and a.n_timed == 25 and not a.dry_run and a.design_list == list(TP.DESIGNS)
    # the FP32 class on tensor cores runs by default, and both mma.sync templates (timed in one process)
    assert a.design_list == ["fp32", "tf32", "3xtf32", "tf32w", "3xtf32w", "tf32h"]
    assert family_gpu.parse_args(["--out", str(tmp_path), "--designs", "tf32h"]).design_list == ["tf32h"]
    assert family_gpu.parse_args(["--out", str(tmp_path), "--designs", "tf32"]).design_list == ["tf32"]
    assert family_gpu.parse_args(["--out", str(tmp_path), "--designs", "tf32w,3xtf32w"]).design_list == \
        ["tf32w", "3xtf32w"]
    with pytest.raises(SystemExit):
        family_gpu.parse_args(["--out", str(tmp_path), "--designs", "fp16"])
    a = family_gpu.parse_args(["--out", str(tmp_path), "--problems", "1, kb32,54,conv3d"])
    assert a.keys == ["kb1", "kb32", "conv2d", "conv3d"]
    with pytest.raises(SystemExit):
        family_gpu.parse_args(["--out", str(tmp_path), "--problems", "99"])
    with pytest.raises(SystemExit):
        family_gpu.parse_args(["--out", str(tmp_path), "--n-timed", "5"])
    with pytest.raises(SystemExit):
        family_gpu.parse_args([])                      # --out is required


def test_dry_run_generates_all_nine(tmp_path):
    assert family_gpu.main(["--out", str(tmp_path), "--dry-run"]) == 0
    sources = sorted(p.stem for p in (tmp_path / "sources").glob("*.cu"))
    # every design but tf32h (2-D only) for every problem
    assert sources == sorted(f"{k}_{d}" for k, p in M.FAMILY.items() for d in TP.DESIGNS if d != "tf32h" or p.dims == 2)
    assert {"kb1_tf32h", "conv2d_tf32h"} <= set(sources) and not {"conv3d_tf32h", "kb48_tf32h"} & set(sources)
    assert {"kb1_3xtf32", "conv3d_3xtf32"} <= set(sources)
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["kb1_3xtf32"]["design"] == "3xtf32" and TP.precision("3xtf32") == "3xtf32"
    assert plan["kb32_tf32"]["reduction"] == "min" and plan["kb48_fp32"]["params"] == ["scaling_factor", "bias"]
    assert len({p["build_name"] for p in plan.values()}) == len(sources)   # no two share a build cache
    for name, p in plan.items():
        assert "struct FamilyEpilogue" in (tmp_path / "sources" / f"{name}.cu").read_text()
        assert p["build_name"].startswith("convfuse_family_") and name == f"{p['key']}_{p['design']}"


def test_the_table_has_a_row_per_problem_with_its_ratios():
    ms = {"ours_tf32": 0.5, "ours_fp32": 2.0, "eager": 1.0, "eager_fp32": 3.0, "compile": 1.5}
    recs = {"kb1": {"summary": "Conv2d(64->128) -> relu -> add",
                    "designs": {"tf32": {"verified": True}, "fp32": {"verified": False}},
                    "timings": {n: {"median_ms": v} for n, v in ms.items()},
                    "speedups": {"tf32_vs_compile": 3.0, "fp32_vs_eager_fp32": 1.5}},
            "kb4": {"summary": "Conv2d(64->128) -> mish -> mish", "designs": {"tf32": {"error": "build failed"}}}}
    lines = F.table(recs).splitlines()
    assert len(lines) == 4
    row = lines[2].split()
    assert row[:2] == ["kb1", "Conv2d(64->128)"] and "0.500" in row and "3.00" in row and "1.50" in row
    assert "tf32:True" in lines[2] and "fp32:False" in lines[2]
    assert "tf32:build failed" in lines[3]


class _NoExt:
    def forward(self, *a):
        raise AssertionError("the checks at the door should have refused the call")


def test_fused_module_refuses_bad_calls_before_the_kernel():
    model = M.get("1").make_model(seed=0)
    fused = TP.FusedFamily(model, ext=_NoExt())
    x = torch.rand(1, 64, 5, 5)
    with pytest.raises(TypeError, match="torch.Tensor"):
        fused(x.numpy())
    with pytest.raises(ValueError, match="4-D for a 2-D conv"):
        fused(x[0])
    with pytest.raises(TypeError, match="float32"):
        fused(x.double())
    with pytest.raises(ValueError, match="CUDA tensor"):
        fused(x)
    assert fused.generated.params == ("bias",) and "launch<64, 128, 2, FamilyEpilogue>" in fused.source
    assert fused.precision == "fp32" and TP.FusedFamily(model, design="tf32", ext=_NoExt()).precision == "tf32"


def test_fuse_refuses_or_falls_back_to_eager_as_asked():
    class Pool(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)

        def forward(self, x):
            return torch.nn.functional.avg_pool2d(self.conv(x), 2)
    model = Pool()
    with pytest.raises(TP.T.UnsupportedModel, match="avg_pool2d"):
        TP.fuse(model)
    with pytest.warns(UserWarning, match="eager PyTorch: .*avg_pool2d"):
        assert TP.fuse(model, fallback=True) is model


def test_each_truth_is_made_once_for_every_design_of_a_problem(monkeypatch):
    """run.verify with one `truths` dict across designs (as the script keeps one per problem): each check's float64
    truth is computed by the first design only, and every design still runs on the check's own parameters (the model
    is reseeded on a cache hit too). The stand-in kernel is the model in float64 with whatever parameters it holds
    when called: were a cached check's reseeding skipped, it would compute with the last check's (bias zeroed, another
    seed) and miss the bound."""
    from convfuse.family import trace as T

    prob = M.get("kb71")
    model = prob.make_model(seed=0)
    real = F.P.ground_truth
    made = []
    monkeypatch.setattr(F.P, "ground_truth", lambda m, x: made.append(tuple(x.shape)) or real(m, x))

    class Float64Model:
        traced, precision = T.trace(model), "fp32"

        def __call__(self, x, out):
            return out.copy_(real(model, x))

    truths = {}
    first = F.verify(prob, model, Float64Model(), full_shape=False, truths=truths, device="cpu", log=lambda *_: None)
    n = len(made)
    second = F.verify(prob, model, Float64Model(), full_shape=False, truths=truths, device="cpu", log=lambda *_: None)
    assert first["verified"] and second["verified"]
    assert n == len(first["checks"]) == len(truths) and len(made) == n     # none made again for the second design
    assert [c["rel_l2"] for c in first["checks"]] == [c["rel_l2"] for c in second["checks"]]


def test_a_second_call_adds_its_problems_to_the_first_calls_record(tmp_path):
    """--into: a call cut short is finished by a second with the remaining problems; the record keeps the first call's
    problems under its run, and refuses another GPU's record or a file that is none."""
    h100 = {"gpu": "NVIDIA H100 80GB HBM3", "slug": "nvidia-h100-80gb-hbm3", "date": "2026-12-09T10:00:00+00:00",
            "driver": "580"}
    assert family_gpu.merge_base(None, h100) == ({}, [])
    first = {"env": h100 | {"date": "2026-12-09T09:00:00+00:00"}, "records": {"kb1": {"designs": {}},
                                                                            "kb4": {"designs": {}}}}
    path = tmp_path / "family_nvidia-h100-80gb-hbm3.json"
    path.write_text(json.dumps(first))
    records, runs = family_gpu.merge_base(path, h100)
    assert set(records) == {"kb1", "kb4"}
    assert runs == [{"date": "2026-12-09T09:00:00+00:00", "driver": "580", "problems": ["kb1", "kb4"]}]
    first["runs"] = runs                                  # a record that already names its runs keeps them as they are
    path.write_text(json.dumps(first))
    assert family_gpu.merge_base(path, h100)[1] == runs
    with pytest.raises(ValueError, match="this GPU is NVIDIA H200"):
        family_gpu.merge_base(path, {"gpu": "NVIDIA H200", "slug": "nvidia-h200"})
    path.write_text(json.dumps({"env": {}, "records": []}))
    with pytest.raises(ValueError, match="not a family record"):
        family_gpu.merge_base(path, h100)
    a = family_gpu.parse_args(["--out", str(tmp_path), "--into", str(path), "--problems", "54,90"])
    assert a.into == path and a.keys == ["conv2d", "conv3d"]


def test_an_sm90a_design_is_refused_where_it_cannot_load():
    assert TP.runs_on("tf32h", (9, 0)) is None and TP.runs_on("tf32w", (8, 0)) is None
    assert "sm_90a only" in TP.runs_on("tf32h", (8, 0)) and "take tf32w" in TP.runs_on("tf32h", (10, 0))
    assert "sm_80 and later" in TP.runs_on("tf32w", (7, 5))
