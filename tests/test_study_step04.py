"""Step 04's notebook helpers: kernel excerpts read from the files, and the lab record's tables."""
from __future__ import annotations

import re

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
                                    start="// The producer:", end="// ---- consumer")
    assert text.lstrip().startswith("// The producer:") and "// ---- consumer" not in text and b > a


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
    # the precisions are two functions (compute_chunk, compute_chunk_split), no preprocessor branches to resolve
    a, b, text = study.kernel_lines("kernels/conv2d/04_implicit_gemm_mma.cu", name="compute_chunk")
    tf32 = study.select_branches(text, R.get("conv2d", "04_mma_tf32").defines)
    _, _, x3 = study.kernel_lines("kernels/conv2d/04_implicit_gemm_mma.cu", name="compute_chunk_split")
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
    assert study._verdict_class("won, 1.5 %: waits on branch `cand/x` for a run that records it") == "waiting for a record"
    assert study._verdict_class("**kept**; rec. 1.283") == "kept" and study._verdict_class("dropped") == "dropped"
    won = [v for t in tables.values() for v in t["Verdict"] if v.lower().startswith("won")]
    assert won and all(study._verdict_class(v) == "waiting for a record" for v in won)   # a win not kept waits


def test_tried_table_leaves_out_switch_names():
    t = study.tried_table("Step 04e")
    assert len(t) > 0
    text = " ".join(t.index) + " ".join(t["Measured"]) + " ".join(t["Verdict"])
    assert "CF_" not in text
    assert study.without_switches("WG 1 a pair behind (`CF_WINO_SKEW`); with 6") == "WG 1 a pair behind; with 6"


STEP04 = sorted((R.ROOT / "notebooks").glob("04*.ipynb"))


def _cells(path):
    import nbformat
    nb = nbformat.read(path, as_version=4)
    return ([c.source for c in nb.cells if c.cell_type == "markdown"],
            [c.source for c in nb.cells if c.cell_type == "code"])


def test_step04_is_five_notebooks_in_reading_order():
    assert [p.stem[:3] for p in STEP04] == ["04_", "04b", "04c", "04d", "04e"]


ALL_NOTEBOOKS = sorted((R.ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=[p.stem for p in ALL_NOTEBOOKS])
def test_prose_leaves_measured_numbers_to_the_record(path):
    """Times, ratios, percentages and measured errors reach every page through code cells reading the results file;
    the prose holds only the designs' own constants (tile sizes, tap counts, FP16's 1.5 TF32 passes), the goals
    (90 % of copy bandwidth, the model's 10 % tolerance) and the verification bounds (1e-4, 2e-6, 1e-3)."""
    import re
    md, _ = _cells(path)
    text = "\n".join(md)
    goals = {"90 %", "10 %"}
    measured = [m.group(0) for m in re.finditer(r"\d+(\.\d+)?\s*(ms\b|%|TFLOP)|\d\.\d+×|\d+×\s*(eager|torch)", text)
                if m.group(0) not in goals]
    assert not measured, measured
    decimals = set(re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", text)) - {"1.5"}
    assert not decimals, decimals
    errors = set(re.findall(r"\d\.?\d*e-\d+", text)) - {"1e-4", "2e-6", "1e-3"}
    assert not errors, f"a measured error in prose: {errors}"
    assert "CF_" not in text.replace("CF_3XTF32", ""), "a build switch in prose"
    assert "explore" not in text.lower()


@pytest.mark.parametrize("path", STEP04, ids=[p.stem for p in STEP04])
def test_step04_notebook_teaches_one_design(path):
    import re
    md, code = _cells(path)
    prose = "\n".join(md)
    words = len(re.findall(r"[A-Za-z0-9][\w'’-]*", re.sub(r"`[^`]*`", "w", prose)))
    assert words <= 1700, words
    src = "\n".join(code)
    assert "diagrams." in src and "kernel_excerpt(" in src           # a drawn design and the shipped source
    assert "## Try it yourself" in md[-1] and "scripts/check_variant.py" in md[-1]
    assert re.search(r"Prediction|[Oo]bserved", md[-1])               # each expectation labelled (test_statements)


def test_step04_closes_with_what_was_tried():
    _, code = _cells(STEP04[-1])
    assert any("study.tried_summary()" in c for c in code) and any("study.tried_table(" in c for c in code)


def test_build_words_leave_no_switch_names():
    assert study.build_words("04e_wino_3xtf32 + CF_WINO_SKEW CF_WINO_W_STAGES=6 (without CF_WINO_DESC_UNIFORM)") == \
        "04e_wino_3xtf32 with warpgroup 1 a pair behind, six weight stages (without descriptors in uniform registers)"
    assert study.build_words("as registered") == "as registered"
    assert "CF_" not in study.build_words("x + CF_SOMETHING_NEW")


def test_kernel_lines_after_picks_the_later_match():
    a1, _, _ = study.kernel_lines("kernels/conv2d/04d_register_a_wgmma.cu",
                                  start="for (int tile = first_tile(k); tile < g.tiles; tile += stride) {")
    a2, _, t = study.kernel_lines("kernels/conv2d/04d_register_a_wgmma.cu", after="// ---- consumer",
                                  start="for (int tile = first_tile(k); tile < g.tiles; tile += stride) {",
                                  end="wgmma_wait<0>();")
    assert a2 > a1 and "mma_rows" in t


def test_tried_table_writes_the_abbreviations_out():
    assert study.in_full("c2d 04d: 2 WGs, rec. 1.153; 1,019 instr.") == \
        "conv2d 04d: 2 warpgroups, recorded 1.153; 1,019 instructions"
    for key in study.lab_tables():
        t = study.tried_table(key)
        text = " ".join(t.index) + " ".join(" ".join(t[c]) for c in ("Predicted", "Measured", "Verdict"))
        assert not re.search(r"\bc[23]d\b|\bWGs?\b|\brec\.", text), key


def test_the_lab_record_reads_in_twenty_minutes():
    """notes/kernel_log.md stays within 6,000 words (as `wc -w` counts them): the rows, then the lessons."""
    from convfuse import study
    assert len(study.LAB_RECORD.read_text().split()) <= 6000


def test_kernel_lines_takes_no_one_line_wrapper_for_the_definition(tmp_path, monkeypatch):
    from convfuse import registry as R
    from convfuse import study
    src = tmp_path / "k.cuh"
    src.write_text("__device__ inline int desc(int a) { return wgmma_desc(a, 1); }\n"
                   "__device__ inline int other(int a) { int b = wgmma_desc(a, 2); return b; }\n"
                   "// the real one\n__device__ inline int wgmma_desc(int a, int b) {\n    return a + b;\n}\n")
    monkeypatch.setattr(R, "ROOT", tmp_path)
    first, last, text = study.kernel_lines("k.cuh", "wgmma_desc")
    assert (first, last) == (3, 6) and text.startswith("// the real one")
