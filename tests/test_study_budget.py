"""study.warpgroup_budget: the per-warpgroup time arithmetic of notebook 04, on a synthetic run."""
import pytest

from convfuse import study
from test_plots import synthetic_run


def test_warpgroup_budget_counts_tiles_and_mma_time():
    run = synthetic_run()
    b = study.warpgroup_budget(run, "conv3d", "04b_wgmma_tf32", tile_rows=1, tile_cols=62,
                               warpgroups_per_sm=4, mma_n=64, k_steps=27)
    assert b["tiles"] == 128 * 14 * 62 * 1                      # N x Do x Ho/1 x ceil(62/62)
    assert b["tiles_per_warpgroup"] == pytest.approx(b["tiles"] / (132 * 4))
    assert b["tile_us"] == pytest.approx(b["median_ms"] * 1e3 / b["tiles_per_warpgroup"])
    tf32 = run["env"]["tf32_tflops"]
    assert b["mma_us"] == pytest.approx(2 * 64 * 64 * 8 * 27 / (tf32 * 1e12 / 132) * 1e6)
    assert 0 < b["tensor_busy"] < 1
    c = study.warpgroup_budget(run, "conv2d", "04b_wgmma_tf32", tile_rows=2, tile_cols=86,
                               warpgroups_per_sm=3, mma_n=176, k_steps=72)
    assert c["tiles"] == 64 * 127 * 3


def test_warpgroup_budget_without_a_record_is_none():
    assert study.warpgroup_budget(study.empty_run(), "conv3d", "04b_wgmma_tf32", 1, 62, 4, 64, 27) is None


def test_goal_verdict_needs_the_ms_figure_and_every_stated_ratio():
    rec = {"median_ms": 1.20006, "speedup_vs_eager": 4.138, "speedup_vs_compile": 1.916}
    v = study.goal_verdict(rec, 1.2, (4.3, 2.0))
    assert v.startswith("missed") and "1.200 ms > 1.2 ms" in v and "4.14× eager < 4.3×" in v and "torch.compile" in v
    assert study.goal_verdict({"median_ms": 1.1, "speedup_vs_eager": 4.5, "speedup_vs_compile": 2.1}, 1.2, (4.3, 2.0)) == "met"
    # a ratio the goal does not state is not checked
    assert study.goal_verdict({"median_ms": 1.9, "speedup_vs_eager": 5.2, "speedup_vs_compile": 3.0}, 2.0, (5.0, None)) == "met"
