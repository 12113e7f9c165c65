"""Step 04's notebook helpers: kernel excerpts read from the files, and the lab record's tables."""
from __future__ import annotations

import pytest

from convfuse import registry as R
from convfuse import study


@pytest.mark.parametrize("relpath,name", [
    ("kernels/conv2d/04_implicit_gemm_mma.cu", "compute_chunk"),
    ("kernels/conv2d/04_implicit_gemm_mma.cu", "mma_tf32_zc"),
    ("kernels/wgmma.cuh", "wgmma_desc"),
    ("kernels/conv2d/04b_implicit_gemm_wgmma.cu", "mma_chunk"),
    ("kernels/conv3d/04b_implicit_gemm_wgmma.cu", "mma_issue"),
    ("kernels/conv2d/04e_winograd_wgmma.cu", "pair_mmas"),
])
def test_kernel_lines_finds_a_definition_whole(relpath, name):
    a, b, text = study.kernel_lines(relpath, name=name)
    lines = (R.ROOT / relpath).read_text().splitlines()
    assert text == "\n".join(lines[a - 1:b])
    assert f"{name}(" in text and text.rstrip().endswith("}")
    code = "\n".join(ln.split("//")[0] for ln in text.splitlines())
    assert code.count("{") == code.count("}") > 0


def test_kernel_lines_refuses_what_is_not_there():
    with pytest.raises(LookupError):
        study.kernel_lines("kernels/wgmma.cuh", name="no_such_function")
    with pytest.raises(LookupError):
        study.kernel_lines("kernels/wgmma.cuh", start="no such marker")


def test_kernel_lines_range_between_markers():
    a, b, text = study.kernel_lines("kernels/conv2d/04c_warp_specialized_wgmma.cu",
                                    start="// ---- producer", end="// ---- consumer")
    assert text.lstrip().startswith("// ---- producer") and "// ---- consumer" not in text and b > a


def test_select_branches_is_the_preprocessor():
    src = "\n".join(["a", "#ifdef X", "x", "#elif defined(Y) || defined(Z)", "yz", "#else", "none",
                     "#if !defined(Y)", "noty", "#endif", "#endif", "b"])
    assert study.select_branches(src, ["X"]).split() == ["a", "x", "b"]
    assert study.select_branches(src, ["-DZ"]).split() == ["a", "yz", "b"]
    assert study.select_branches(src, []).split() == ["a", "none", "noty", "b"]
    assert study.select_branches(src, ["Y"]).split() == ["a", "yz", "b"]
    with pytest.raises(ValueError):
        study.select_branches("#if X\nfoo", [])


def test_the_tf32_excerpt_has_no_3xtf32_lines():
    a, b, text = study.kernel_lines("kernels/conv2d/04_implicit_gemm_mma.cu", name="compute_chunk")
    tf32 = study.select_branches(text, R.get("conv2d", "04_mma_tf32").defines)
    x3 = study.select_branches(text, R.get("conv2d", "04_mma_3xtf32").defines)
    assert "split_tf32" not in tf32 and "split_tf32" in x3 and "#" not in tf32.replace("#pragma", "")


def test_lab_tables_parse_every_row():
    text = study.LAB_RECORD.read_text()
    tables = study.lab_tables()
    rows = [ln for ln in text.splitlines() if ln.startswith("|") and not ln.startswith("|Prec.")
            and not ln.startswith("|---")]
    assert sum(len(t) for t in tables.values()) == len(rows)
    assert all(list(t.columns) == ["Prec.", "Idea", "Predicted", "Measured", "Verdict", "Date", "Code"]
               for t in tables.values())
    s = study.tried_summary()
    assert s.loc["all", "ideas"] == len(rows)
    assert (s.drop(columns="ideas").sum(axis=1) == s["ideas"]).all()


def test_tried_table_leaves_out_switch_names():
    t = study.tried_table("Step 04e")
    assert len(t) > 0
    text = " ".join(t.index) + " ".join(t["Measured"]) + " ".join(t["Verdict"])
    assert "CF_" not in text
    assert study.without_switches("WG 1 a pair behind (`CF_WINO_SKEW`); with 6") == "WG 1 a pair behind; with 6"
