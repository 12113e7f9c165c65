"""profile.parse on Nsight Compute's CSV as a device run wrote it (tests/data/ncu_h200_excerpt.csv: `make profile` on
the H200, 2026-12-05, the rows of conv2d's eager and 03b_register_tiled with the marker before each, five of the
metrics), and on a synthetic one."""
import json
from pathlib import Path

from convfuse import profile, results

CSV = Path(__file__).parent / "data" / "ncu_h200_excerpt.csv"


def test_parse_splits_kernels_by_marker_and_reads_units():
    per = profile.parse(CSV.read_text(), [["conv2d", "eager"], ["conv2d", "03b_register_tiled"]])
    assert set(per) == {("conv2d", "eager"), ("conv2d", "03b_register_tiled")}
    # cuDNN's TF32 conv2d path: transpose in, conv, transpose out, then the elementwise passes
    eager = per[("conv2d", "eager")]
    assert any("nchwToNhwc" in k["kernel"] for k in eager) and any("nhwcToNchw" in k["kernel"] for k in eager)
    assert len(eager) == 8 and all(k["ms"] > 0 for k in eager)
    fused = per[("conv2d", "03b_register_tiled")]
    assert len(fused) == 1
    k = fused[0]
    assert 2.0e9 < k["dram_read"] + k["dram_write"] < 2.3e9      # input once + output once: 2.13 GB
    assert 5 < k["ms"] < 10 and k["threads_per_block"] == 256 and k["registers"] > 0
    # the record's figures are this CSV's
    rec = results.record(results.load(results.path_for("nvidia-h200")), "conv2d", "03b_register_tiled")
    assert [{f: x[f] for f in ("kernel", "dram_read", "dram_write", "ms")} for x in rec["ncu_kernels"]] == \
        [{f: x[f] for f in ("kernel", "dram_read", "dram_write", "ms")} for x in fused]


def test_parse_synthetic_csv():
    head = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",' \
           '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'

    def row(i, name, metric, unit, value):
        return f'"{i}","1","p","h","{name}","1","7","(1,1,1)","(1,1,1)","0","9.0","s","{metric}","{unit}","{value}"\n'

    text = "==PROF== noise\n" + head
    text += row(0, "spin_kernel(long)", "gpu__time_duration.sum", "nsecond", "1000")
    text += row(1, "my_kernel", "dram__bytes_read.sum", "byte", "1,024")
    text += row(1, "my_kernel", "dram__bytes_write.sum", "Kbyte", "2")
    text += row(1, "my_kernel", "gpu__time_duration.sum", "usecond", "1500")
    text += row(2, "spin_kernel(long)", "gpu__time_duration.sum", "nsecond", "1000")
    text += row(3, "other", "dram__bytes_read.sum", "byte", "8")
    per = profile.parse(text, [["conv2d", "a"], ["conv2d", "b"]])
    assert per[("conv2d", "a")] == [{"kernel": "my_kernel", "dram_read": 1024.0, "dram_write": 2000.0, "ms": 1.5}]
    assert per[("conv2d", "b")] == [{"kernel": "other", "dram_read": 8.0}]
    json.dumps(per[("conv2d", "a")])
