"""The wgmma rate microbenchmark: its source compiles for sm_90a without spills and without ptxas serializing its
wgmmas (a serialized case would measure ptxas, not the tensor pipe); its FLOP count; a recorded run's table."""
import json
import subprocess

import pytest

from convfuse import build as B
from convfuse import micro


def test_flop_per_group_counts_each_wgmma():
    assert micro.flop_per_group(0, 32, 9) == 9 * 2 * 64 * 32 * 8
    assert micro.flop_per_group(2, 64, 6) == micro.flop_per_group(8, 64, 6) == 6 * (2 * 64 * 64 * 8 + 2 * 64 * 32 * 8)


@pytest.mark.skipif(B.find_nvcc() is None, reason="nvcc not found")
def test_the_microbenchmark_compiles_unserialized_without_spills(tmp_path):
    src = tmp_path / "wgmma_rate.cu"
    src.write_text(micro.source_text())
    p = subprocess.run([B.find_nvcc(), *B.NVCC_FLAGS, "-c", str(src), "-o", str(tmp_path / "w.o"),
                        "-gencode=arch=compute_90a,code=sm_90a", "-Xptxas", "-v"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    usage = B.parse_ptxas(p.stderr)
    assert len(usage) == 34                                      # one kernel a case
    for name, u in usage.items():
        assert u["spill_stores"] == u["spill_loads"] == 0 and "wgmma_serialized" not in u, (name, u)


def test_table_reads_a_recorded_run(tmp_path):
    case = {"case": "RS m64n32k8", "mode": "RS", "n": 32, "warpgroups": 2, "group": 9, "accumulators": 3,
            "iters": 10, "cycles": 2880, "flop_per_cycle": 2048.0, "of_tf32_rate": 1.0}
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"env": {}, "cases": [case]}))
    t = micro.table(f)
    assert t.loc["RS m64n32k8", "× the dense TF32 rate"] == 1.0 and list(t.columns)[:2] == ["mode", "n"]
