"""The notebooks: committed clean, and every one executes in recorded mode (CPU, no GPU needed).

They run against synthetic results written to a temporary directory (CONVFUSE_RESULTS_DIR), never
against results/, so these tests do not depend on what has been measured; figures go to a temporary
directory too (CONVFUSE_FIGURES_DIR).
"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest

from convfuse import registry as R
from convfuse import report

NOTEBOOKS = report.notebook_paths()
IDS = [p.stem for p in NOTEBOOKS]
# the early study: reference rows and step 01 only
LATER_STEPS = tuple(v.key for v in R.kernel_variants("conv2d") if v.key != "01_epilogue_fused")


def _synthetic():
    spec = importlib.util.spec_from_file_location("_cf_test_plots", Path(__file__).with_name("test_plots.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _synthetic_run(**kw) -> dict:
    return _synthetic().synthetic_run(**kw)


def _family():
    path = Path(__file__).with_name("test_family_page.py")
    spec = importlib.util.spec_from_file_location("_cf_test_family_page", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _results_dir(root: Path, name: str, runs, predictions=()) -> Path:
    d = root / name
    d.mkdir()
    for run in runs:
        (d / f"{run['env']['slug']}.json").write_text(json.dumps(run))
    for key in predictions:
        (d / "predictions").mkdir(exist_ok=True)
        (d / "predictions" / f"{key}.json").write_text(json.dumps(_synthetic().synthetic_prediction(key)))
    return d


NEWEST = "NVIDIA H100 80GB HBM3"


@pytest.fixture(scope="module")
def results_dirs(tmp_path_factory):
    """full: an H100 with the cuDNN fused rows and KernelBench's verdicts (the newest) and its prediction and family
    record, an H200 from before both, an A100 without the sm_90a kernels; early: one GPU, the first steps only; none:
    nothing."""
    root = tmp_path_factory.mktemp("results")
    full = _results_dir(root, "full", [
        _synthetic_run(gpu=NEWEST, date="2026-12-06T09:00:00+00:00", kernelbench=True, scale=1.3),
        _synthetic_run(cudnn="absent"),
        _synthetic_run(gpu="NVIDIA A100-SXM4-80GB", date="2026-10-01T00:00:00+00:00", hopper=False,
                       cudnn="skipped")], predictions=("h100-sxm",))
    _family().write_family(full, _family().synthetic_family_run(gpu=NEWEST))
    return {
        "full": full,
        "early": _results_dir(root, "early", [_synthetic_run(drop=LATER_STEPS, cudnn="absent")]),
        "none": _results_dir(root, "none", []),
    }


def _env(monkeypatch, tmp_path, results_dir):
    monkeypatch.setenv("CONVFUSE_MODE", "recorded")
    monkeypatch.setenv("CONVFUSE_RESULTS_DIR", str(results_dir))
    monkeypatch.setenv("CONVFUSE_FIGURES_DIR", str(tmp_path / "figures"))


def _outputs_text(nb) -> str:
    parts = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            if o.output_type == "stream":
                parts.append(o.text)
            elif o.output_type == "error":
                parts.append(f"ERROR {o.ename}: {o.evalue}")
            else:
                parts += [o.get("data", {}).get(k, "") for k in ("text/markdown", "text/plain")]
    return "\n".join(parts)


def test_the_notebooks_are_in_ladder_order():
    """00 to 03, step 04's designs (04, 04b, 04c, ... one notebook each), 05, then 06 (the family): file-name order is
    reading order."""
    import re
    stems = [p.stem for p in NOTEBOOKS]
    assert [s[:3] for s in stems[:4]] == ["00_", "01_", "02_", "03_"]
    assert [s[:3] for s in stems[-2:]] == ["05_", "06_"] and stems[-1] == "06_family"
    assert stems[4].startswith("04_") and all(re.match(r"04[a-z]?_", s) for s in stems[4:-2])
    assert [t for s, t in report.reading_order()][-1] == "06 — The family"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_speaks_of_the_study_not_the_lab(path):
    """No lab logs, lab notebook, device calls or sessions: the lab record is notes/kernel_log.md."""
    import re
    text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
    for pattern in (r"device-logs", r"appendix", r"explore", r"\bsession", r"\bcall [A-Z]\b", r"\bcalls? \d"):
        assert not re.search(pattern, text, re.I), (path.name, pattern, re.search(pattern, text, re.I).group(0))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_is_committed_clean(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    code = [c for c in nb.cells if c.cell_type == "code"]
    for c in code:
        assert c.get("outputs") == [], f"{path.name}: a cell has outputs; strip them before committing"
        assert c.get("execution_count") is None, f"{path.name}: a cell has an execution count"
    first = code[0].source
    assert "from convfuse import study" in first and "study.run_for(" in first and "study.header(run)" in first
    text = "\n".join(c.source for c in nb.cells)
    assert "conv2d" in text or "study.PROBLEMS" in text
    assert "## What you will learn" in text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_executes_recorded(path, results_dirs, monkeypatch, tmp_path):
    _env(monkeypatch, tmp_path, results_dirs["full"])
    nb, err, _ = report.execute(path, "recorded", 120, tmp_path)
    assert err is None, err
    out = _outputs_text(nb)
    assert "Traceback" not in out
    # an exception in a display formatter (a Styler's format string, say) leaves an error output, not a failed cell
    assert "\nERROR " not in "\n" + out, [line for line in out.splitlines() if line.startswith("ERROR ")]
    assert "recorded mode" in out and f"recorded mode · {NEWEST}" in out          # the header of the newest run
    if path.stem.startswith("00"):
        for gpu in (NEWEST, "NVIDIA H200", "NVIDIA A100-SXM4-80GB"):               # every GPU in the tables
            assert f"{gpu}" in out
        assert "eng4_k2=3_k3=0 (fastest of 6 plans)" in out                        # the cuDNN plan kept
        assert "**NVIDIA H200**: no `cudnn_fused` rows" in out and "skipped: nvidia-cudnn-frontend" in out
        assert "KernelBench's check" in out and f"**conv3d on the {NEWEST}**" in out
        assert "KernelBench's own check and timing were not run on this record" in out
        assert "largest × eager the floors allow" in out
    if path.stem.startswith("06"):                                                 # the family's record
        assert f"**{NEWEST}**" in out and "TF32 class against torch.compile, the fastest verified design per problem" in out
        assert "predicted H100 ms" in out                                          # the headers beside the record
        assert "04_mma_tf32" in out and "ConvBatchNormReLU" in out
    if path.stem.startswith("05"):
        names = {p.name for p in (tmp_path / "figures").glob("*.png")}
        assert {"speedup.png", "traffic.png", "roofline_a100-80gb.png", "roofline_h200_measured.png",
                "roofline_h100-sxm_measured.png", "roofline_a100-80gb_measured.png"} <= names
        assert not {"roofline_h100-sxm.png", "roofline_h100-pcie.png", "roofline_a100-40gb.png"} & names   # one A100
        assert "`h100-sxm.json`: made 2026-12-06 07:30 UTC on commit `abc1234`" in out
        assert "measured / predicted" in out and "ran slower than predicted" in out
        assert "fastest (portable)" in out


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem[:2] in ("03", "04", "05")],
                         ids=[p.stem for p in NOTEBOOKS if p.stem[:2] in ("03", "04", "05")])
def test_notebook_says_not_recorded_for_missing_steps(path, results_dirs, monkeypatch, tmp_path):
    _env(monkeypatch, tmp_path, results_dirs["early"])
    nb, err, _ = report.execute(path, "recorded", 120, tmp_path)
    assert err is None, err
    if not path.stem.startswith("05"):
        assert "not recorded yet" in _outputs_text(nb)


def test_notebook_renders_without_any_results(results_dirs, monkeypatch, tmp_path):
    _env(monkeypatch, tmp_path, results_dirs["none"])
    nb, err, _ = report.execute(NOTEBOOKS[0], "recorded", 120, tmp_path)
    assert err is None, err
    assert "no run recorded yet" in _outputs_text(nb)


def test_report_render_writes_pages_and_index(results_dirs, monkeypatch, tmp_path):
    _env(monkeypatch, tmp_path, results_dirs["full"])
    out = tmp_path / "report"
    pages = report.render([NOTEBOOKS[0].stem], out_dir=out, log=lambda m: None)
    assert [p["stem"] for p in pages] == [NOTEBOOKS[0].stem]
    page = (out / f"{NOTEBOOKS[0].stem}.html").read_text()
    assert "data:image/png;base64" in page                       # figures are inline in the page
    index = (out / "index.html").read_text()
    assert f'href="{NOTEBOOKS[0].stem}.html"' in index
    assert "NVIDIA H200" in index and "<table" in index and "04_mma_tf32" in index
    assert 'href="index.html"' in page and f'href="{NOTEBOOKS[1].stem}.html" rel="next"' in page   # the nav bar


def test_markdown_lists_have_one_bullet_per_item():
    # notebooks pass lines that already start "- " as well as bare ones; neither may render as a nested empty item
    from convfuse import study
    assert study.md(["- **a**: 1", "b"]).data == "- **a**: 1\n- b"
    assert study.md("- as is").data == "- as is"


def test_report_pages_link_each_other_and_the_index_embeds_its_figures(monkeypatch, tmp_path):
    """The HTML side of the report without executing anything: fake pages, a fake figure, the nav bar and the index."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = tmp_path / "figures"
    figs.mkdir()
    fig, ax = plt.subplots(figsize=(2, 1))
    fig.savefig(figs / "speedup.png")
    monkeypatch.setenv("CONVFUSE_FIGURES_DIR", str(figs))
    out = tmp_path / "report"
    out.mkdir()
    order = report.reading_order()
    assert [s for s, _ in order] == IDS and all(t for _, t in order)
    pages = []
    for stem, title in order:
        (out / f"{stem}.html").write_text(f"<html><head></head><body><h1>{title}</h1></body></html>")
        pages.append({"stem": stem, "file": f"{stem}.html", "title": title, "summary": "s", "seconds": 1.0,
                      "error": None, "mode": "recorded"})
    for p in pages:
        f = out / p["file"]
        f.write_text(report.add_nav(f.read_text(), report.nav_html(p["stem"], order)))
        f.write_text(report.add_nav(f.read_text(), report.nav_html(p["stem"], order)))   # twice: one bar, not two
    (out / "index.html").write_text(report.add_nav(report._index_html(pages, None, out), report.nav_html(None, order)))
    assert report.check_links(out) == []
    first, last = (out / f"{IDS[0]}.html").read_text(), (out / f"{IDS[-1]}.html").read_text()
    assert first.count('class="cf-nav"') == 2 and f'href="{IDS[1]}.html" rel="next"' in first and 'rel="prev"' not in first
    assert f'href="{IDS[-2]}.html" rel="prev"' in last and 'rel="next"' not in last
    index = (out / "index.html").read_text()
    assert all(f'href="{s}.html"' in index for s in IDS) and "data:image/png;base64," in index
    (out / "broken.html").write_text('<body><a href="nowhere.html">x</a><img src="figures/x.png"></body>')
    assert len(report.check_links(out)) == 3


def test_table_cells_show_a_dash_or_a_word_not_none_or_nan():
    import pandas as pd
    page = pd.DataFrame({"a": [1.0, None], "b": [True, False], "c": [None, "x"]}).to_html()
    page = report.tidy_cells(page + "<pre>x = None if nan else True</pre>")
    assert "<td>—</td>" in page and "<td>yes</td>" in page and "<td>no</td>" in page
    assert not re.search(r"<td>\s*(None|NaN|nan|True|False)\s*</td>", page)
    assert "<pre>x = None if nan else True</pre>" in page
