"""Numbers the pages once stated by hand, now computed from the model or the record: each computation checked here,
and the hand-written forms that were wrong kept out of the pages."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from convfuse import registry as R
from convfuse import report, study

ROOT = R.ROOT
WRONG = ("eight times longer", "once more than the floor", "one more per-channel", "a quarter of the registers",
         "BF16 is enough", "any batch and spatial size")


def _page_text(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text()
    return "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])


@pytest.mark.parametrize("path", [ROOT / "README.md"] + report.notebook_paths(), ids=lambda p: p.name)
def test_the_wrong_statements_are_gone(path):
    text = _page_text(path)
    assert not [w for w in WRONG if w in text]


def test_conv2d_k_is_not_eight_times_conv3d_k():
    assert (study.gemm_k("conv2d"), study.gemm_k("conv3d")) == (576, 216)
    assert "2.67× longer" in study.k_ratio_line()


def test_both_epilogues_read_two_per_channel_tensors():
    assert study.per_channel_tensors("conv2d") == ["conv.bias", "multiplier"]
    assert study.per_channel_tensors("conv3d") == ["conv.bias", "sum_tensor"]


def test_steps_01_02_move_more_than_one_extra_pass_on_conv2d():
    """conv2d's cuDNN path converts NCHW <-> NHWC too: its 01-02 bytes are about four floors, conv3d's under three."""
    b2, b3 = study.bytes_over_floor("conv2d"), study.bytes_over_floor("conv3d")
    assert b2["02_epilogue_vec3d"]["model"] == pytest.approx(4.0, abs=0.05)
    assert 2.5 < b3["02_epilogue_vec3d"]["model"] < 3.0
    assert b2["04_mma_tf32"]["model"] == pytest.approx(1.0, abs=0.01)


def test_the_passes_share_of_time_is_not_their_share_of_bytes_on_conv3d():
    h100 = study.run_for_gpu("h100-sxm")
    if h100 is None:
        pytest.skip("no H100 record")
    sh = study.pass_shares(h100, "conv3d")
    assert sh["bytes_share"] == pytest.approx(90, abs=1) and sh["time_share"] < 60
    assert any("90 %" in line and "57 %" in line for line in study.pass_share_lines([h100]))


def test_wgmma_keeps_the_accumulators_and_drops_the_operand_registers():
    f = study.mma_fragment_registers()
    assert f == {"A": 4, "B": 2, "C": 4}
    assert study.accumulators_per_thread(64, 64, 128) == 4 * 8 * f["C"] // 4     # four warps, eight m16n8 tiles each
    assert "the same 32" in study.wgmma_register_line(64)


def test_tf32_bf16_products_carry_about_19_bits():
    line = study.bf16_split_line("conv2d")
    assert "about 19 good bits, not FP32's 24" in line
    tf32bf16, x3 = (float(v) for v in re.findall(r"rel-L2 ([0-9.e+-]+) against 3xTF32's ([0-9.e+-]+)", line)[0])
    assert tf32bf16 > x3                       # fewer good bits: a larger error than 3xTF32's, as the line says


def test_readme_states_every_grid_limit_the_kernels_check():
    """Each kernel refusal that names a size limit (65535, 2^28) has its step in README's table of limits."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Use it in a model"):readme.index("## Working on a kernel")]
    for f in sorted((ROOT / "kernels").glob("conv*/*.cu")):
        text = f.read_text()
        step = f.name.split("_")[0]
        if re.search(r'return "[^"]*65535', text):
            assert "65,535" in section and re.search(rf"\| {step}\b", section), f
        if re.search(r'return "[^"]*2\^28', text):
            assert "2²⁸" in section and re.search(rf"\| {step} ", section), f


def test_every_exercise_is_observed_or_a_prediction():
    for path in report.notebook_paths():
        text = _page_text(path)
        if "## Try it yourself" not in text:
            continue
        tail = text[text.index("## Try it yourself"):]
        items = re.split(r"\n\d+\. ", tail)[1:]
        assert items, path
        for item in items:
            assert re.search(r"Prediction|[Oo]bserved", item), (path.name, item[:80])
            assert "Expect" not in item, (path.name, item[:80])
