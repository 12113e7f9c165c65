"""The report as a reader sees it: `make report` in recorded mode from the shipped results/, every page read.

The other notebook tests run on synthetic records; this one renders the real ones, because what a reader meets is
what the records hold: an evidence cell that says "not recorded yet" (without saying why), raw markdown in a table
cell, a cell cut off with "…", a count printed as a decimal, or a column whose decimals vary from row to row.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from convfuse import report, study

PLACEHOLDER = re.compile(re.escape(study.NOT_RECORDED) + r"(?!:)", re.I)     # "not recorded yet: <why>" says why
RAW_MARKDOWN = re.compile(r"\*\*|`|(?<![\w*])\*[^\s*][^*]*\*(?![\w*])")
NUMBER = re.compile(r"^-?\d+(?:\.(\d+))?$")


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, BeautifulSoup]:
    """Every page of the report rendered from results/ (recorded mode), parsed; figures go to a temporary folder."""
    if not study.runs():
        pytest.skip("no results recorded")
    tmp = tmp_path_factory.mktemp("report")
    mp = pytest.MonkeyPatch()
    mp.setenv("CONVFUSE_MODE", "recorded")
    mp.delenv("CONVFUSE_RESULTS_DIR", raising=False)
    mp.setenv("CONVFUSE_FIGURES_DIR", str(tmp / "figures"))
    try:
        rendered = report.render(out_dir=tmp / "report", log=lambda m: None)
    finally:
        mp.undo()
    assert [p["error"] for p in rendered] == [None] * len(rendered)
    return {p["stem"]: BeautifulSoup((tmp / "report" / p["file"]).read_text(), "html.parser") for p in rendered}


def outputs(page: BeautifulSoup):
    """The page's output areas: what the notebook computed, as opposed to the prose and the code."""
    return page.select(".jp-OutputArea-output")


def grid(rows) -> list[list[str]]:
    """An HTML table's rows as a grid of cell texts, row and column spans filled out (pandas spans its index)."""
    out, spans = [], {}                                        # spans: column -> (rows left, text)
    for tr in rows:
        row, cells = [], list(tr.select("th, td"))
        while cells or any(c >= len(row) for c in spans):
            col = len(row)
            if col in spans:
                left, text = spans.pop(col)
                row.append(text)
                if left > 1:
                    spans[col] = (left - 1, text)
                continue
            if not cells:
                break
            c = cells.pop(0)
            text = c.get_text(" ", strip=True)
            for k in range(int(c.get("colspan", 1))):
                if int(c.get("rowspan", 1)) > 1:
                    spans[col + k] = (int(c["rowspan"]) - 1, text)
                row.append(text)
        out.append(row)
    return out


def tables(page: BeautifulSoup):
    """Each output table as (column headers, body rows): a header joins the texts of its column's header rows."""
    for area in outputs(page):
        for t in area.select("table"):
            heads = grid(t.select("thead tr"))
            width = max((len(r) for r in heads), default=0)
            head = [" ".join(r[j] for r in heads if j < len(r) and r[j]) for j in range(width)]
            yield head, grid(t.select("tbody tr"))


def test_every_page_rendered(pages):
    assert set(pages) == {p.stem for p in report.notebook_paths()}


def test_no_output_holds_a_placeholder_without_its_reason(pages):
    bad = {stem: [m.group(0) for a in outputs(p) for m in PLACEHOLDER.finditer(a.get_text(" ", strip=True))]
           for stem, p in pages.items()}
    assert not {k: v for k, v in bad.items() if v}


def test_table_cells_hold_text_not_markdown_or_cut_text(pages):
    bad = []
    for stem, p in pages.items():
        for head, rows in tables(p):
            for cell in [c for r in rows for c in r] + head:
                if RAW_MARKDOWN.search(cell) or "…" in cell or cell.endswith("..."):
                    bad.append((stem, cell[:80]))
    assert not bad


def test_counts_print_as_counts_and_columns_keep_their_decimals(pages):
    """A column of numbers shows one number of decimals (a count none); a column mixing 1.0 and 0.75 is one a
    reader must align by eye."""
    bad = []
    for stem, p in pages.items():
        for head, rows in tables(p):
            for j in range(max((len(r) for r in rows), default=0)):
                if j < len(head) and head[j] == "value" and "unit" in head:
                    continue                                   # one quantity a row, with its unit beside it
                cells = [r[j] for r in rows if j < len(r)]
                places = {len(m.group(1) or "") for c in cells if (m := NUMBER.match(c))}
                if len(places) > 1:
                    bad.append((stem, head[j] if j < len(head) else j, sorted(places)))
                nums = [c for c in cells if NUMBER.match(c)]
                if nums and all(re.fullmatch(r"-?\d+\.0+", c) for c in nums):       # a count printed as a decimal
                    bad.append((stem, head[j] if j < len(head) else j, nums[:3]))
    assert not bad


def test_the_evidence_cells_name_their_gpu(pages):
    """Every step-04 page shows the evidence its prose reads, from the record that holds it, labelled with its GPU."""
    for stem in ("04_tensor_core_mma", "04b_wgmma", "04c_warp_specialized", "04d_register_a", "04e_winograd"):
        heads = [h for h, rows in tables(pages[stem]) if "what" in h and rows]
        assert heads and all("GPU" in h for h in heads), stem
