"""The committed results files: written by real runs, complete for what the study claims."""
import pytest

from convfuse import registry as R
from convfuse import results as RS

RUNS = RS.all_recorded()
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
            assert rec is not None, f"{prob}/{v.key} missing"
            assert rec["median_ms"] > 0 and rec["p20_ms"] <= rec["median_ms"] <= rec["p80_ms"]
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
