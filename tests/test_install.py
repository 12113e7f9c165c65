"""`pip install .` and `pip install -e .` from a fresh copy of the repository into a new venv; then, from another
directory, the installed package finds every kernel file and the records, builds into a cache outside the source
tree, and a model calling its ops traces with fake CUDA tensors.

The new venv sees this interpreter's packages (torch, setuptools) through a .pth file and installs with --no-deps
--no-build-isolation, so the test needs no network; what pip resolves from PyPI is pyproject.toml's business, which
the `pip download` check in README.md's Dependencies covers."""
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

PROBE = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    import torch
    import convfuse
    from convfuse import build as B, registry as R, results as RS, problems as P
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode, unset_fake_temporarily

    out = {"file": convfuse.__file__, "kernels": str(R.KERNELS), "build_dir": str(B.BUILD_DIR),
           "checkout": R.SOURCE_CHECKOUT, "cwd": os.getcwd(),
           "sources": [str(v.source_path) for v in R.kernel_variants()],
           "missing": [str(v.source_path) for v in R.kernel_variants() if not v.source_path.is_file()],
           "records": sorted(r["env"]["gpu"] for r in RS.all_recorded())}
    for v in R.kernel_variants():
        B.kernel_source(v)                      # every header it pastes in is there too
    mode = FakeTensorMode()
    traced = []
    with mode:
        for prob in P.PROBLEMS.values():
            with unset_fake_temporarily():
                model = prob.make_model(seed=0).requires_grad_(False)
                for m in model.modules():
                    for n, p in list(m._parameters.items()):
                        m._parameters[n] = torch.nn.Parameter(
                            FakeTensor(mode, p.to("meta"), torch.device("cuda", 0)), requires_grad=False)
            v, why = convfuse.ops.choose(prob.key, "tf32", "NVIDIA H200", (9, 0))
            x = torch.empty(prob.odd_shapes[0], device="cuda")
            seen = []
            def backend(gm, _):
                seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
                return gm
            torch._dynamo.reset()
            y = torch.compile(convfuse.FusedConv(model, v), fullgraph=True, backend=backend)(x)
            traced.append({"problem": prob.key, "variant": v.key, "shape": list(y.shape), "graph": seen})
    out["traced"] = traced
    from convfuse.family import template as FT, trace as FTR
    from convfuse.family.models import Conv2d_ReLU_HardSwish
    fam = FTR.trace(Conv2d_ReLU_HardSwish(3, 16, 3))
    out["family"] = {d: len(FT.source(fam, design=d)) for d in FT.DESIGNS}    # the templates travel in the wheel
    print("PROBE" + json.dumps(out))
""")


def _copy_of_the_repository(dest: Path) -> Path:
    """What a clone holds, with the working tree's edits: the tracked files as they are on disk."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, files.split("\0")):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    py = path / "bin" / "python"
    purelib = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    # this interpreter's packages (torch, setuptools, pytest) after the venv's own, which hold only convfuse
    ours = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    (purelib / "_outer.pth").write_text("\n".join(sorted(ours)) + "\n")
    return py


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CONVFUSE_CACHE", "TORCH_EXTENSIONS_DIR")}
    env["XDG_CACHE_HOME"] = str(tmp / "cache")
    env["PIP_NO_INDEX"] = "1"
    return env


def _install_and_probe(tmp_path, editable: bool) -> tuple[dict, Path, Path]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    clone = _copy_of_the_repository(tmp_path / "clone")
    py = _venv(tmp_path / "venv")
    env = _env(tmp_path)
    cmd = [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-build-isolation",
           *(["-e"] if editable else []), str(clone)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run([str(py), "-c", PROBE], capture_output=True, text=True, env=env, cwd=elsewhere, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE"))
    return json.loads(line[len("PROBE"):]), clone, tmp_path / "venv"


def _check_common(out):
    from convfuse import registry as R

    assert not out["missing"]
    assert len(out["sources"]) == len(R.kernel_variants())
    assert len(out["records"]) >= 1
    for t in out["traced"]:
        assert t["graph"] == [f"convfuse.{t['problem']}_{t['variant']}.default"], t
    assert {t["problem"] for t in out["traced"]} == {"conv2d", "conv3d"}
    assert out["family"] and all(n > 1000 for n in out["family"].values())


def test_pip_install_from_a_clone_finds_its_kernels_and_traces_from_another_directory(tmp_path):
    out, clone, venv = _install_and_probe(tmp_path, editable=False)
    _check_common(out)
    assert Path(out["file"]).is_relative_to(venv), out["file"]          # the installed copy, not the clone
    assert Path(out["kernels"]).is_relative_to(venv) and Path(out["kernels"]).name == "_kernels"
    assert not out["checkout"]
    # builds go to the user's cache, not into the installed package nor the clone
    assert Path(out["build_dir"]) == tmp_path / "cache" / "convfuse"


def test_editable_install_uses_the_clones_kernels_and_build_dir(tmp_path):
    out, clone, venv = _install_and_probe(tmp_path, editable=True)
    _check_common(out)
    assert Path(out["file"]).is_relative_to(clone)
    assert Path(out["kernels"]) == clone / "kernels" and out["checkout"]
    assert Path(out["build_dir"]) == clone / "build"
