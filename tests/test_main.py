"""python -m convfuse: one command line; --help acts on nothing; --problem and --variant are checked against the
registry before anything runs (a typo names the valid keys)."""
import os
import subprocess
import sys

import pytest

from convfuse import __main__ as M
from convfuse import ops as O
from convfuse import registry as R

COMMANDS = sorted(M.parser()._subparsers._group_actions[0].choices)


def _run(args, tmp_path):
    env = {**os.environ, "CONVFUSE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(R.ROOT)}
    return subprocess.run([sys.executable, "-m", "convfuse", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)


def _tree_state():
    return subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=R.ROOT, capture_output=True,
                          text=True).stdout


def test_every_command_of_the_design_is_there():
    assert {"bench", "build", "profile", "sanitize", "readme", "report", "verify", "ops", "fuse"} <= set(COMMANDS)


@pytest.mark.parametrize("cmd", [None, *COMMANDS])
def test_help_acts_on_nothing(cmd, tmp_path):
    before = _tree_state()
    p = _run([cmd, "--help"] if cmd else ["--help"], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "usage:" in p.stdout
    assert not (tmp_path / "cache").exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == []
    assert _tree_state() == before


@pytest.mark.parametrize("args", [["bench", "--variant", "04_mma_tf3"], ["verify", "--variant", "04_mma_tf3"],
                                  ["sanitize", "--variant", "04_mma_tf3"], ["build", "--variant=04_mma_tf3"],
                                  ["profile", "--problem", "conv4d"]])
def test_a_typo_names_the_valid_keys_and_runs_nothing(args, tmp_path):
    p = _run(args, tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    if "--problem" in args:
        assert "unknown problem 'conv4d'; known: conv2d, conv3d" in p.stderr
    else:
        assert "unknown variant '04_mma_tf3' (did you mean 04_mma_tf32" in p.stderr
        assert all(v.key in p.stderr for v in R.VARIANTS)
    assert not (tmp_path / "cache").exists()


def test_ops_lists_every_operator_and_what_fuse_picks_without_a_gpu(tmp_path):
    p = _run(["ops"], tmp_path)
    assert p.returncode == 0, p.stderr
    for v in R.kernel_variants():
        assert f"torch.ops.convfuse.{O.op_name(v)} " in p.stdout
    assert p.stdout.count("fuse(model, 'tf32') on the NVIDIA H200") == 2
