"""convfuse.readme: README.md's progress section (the table of the fastest kernel of each step and accuracy class per
recorded GPU, and its figure), and what the README must and must not say."""
import re

from convfuse import readme, results
from convfuse import registry as R
from test_plots import synthetic_run


def test_progress_rows_are_the_fastest_verified_kernel_of_each_step_and_class():
    run = synthetic_run()
    rows = readme.progress(run)
    assert rows and {r["class"] for r in rows} <= {"TF32 class", "FP32-accurate"}
    for r in rows:
        rec = results.record(run, r["problem"], r["kernel"])
        assert rec["verified"] and rec["median_ms"] == r["ms"]
        same = [q for q in results.records(run, r["problem"]) if q.get("verified") and q.get("median_ms")
                and R.get(r["problem"], q["variant"]).step == r["step"]
                and readme.accuracy_class(q) == r["class"]]
        assert r["ms"] == min(q["median_ms"] for q in same)
        assert r["floor_ms"] >= r["bytes_floor_ms"] > 0 and r["ms"] >= r["floor_ms"]
    md = readme.progress_table(run)
    lines = [ln for ln in md.splitlines() if ln.startswith("| conv")]
    assert len(lines) == len(rows)
    for r, line in zip(rows, lines):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[3] == f"`{r['kernel']}`" and float(cells[4]) == round(r["ms"], 3)
    assert "nan" not in md and "None" not in md


def test_update_rewrites_only_between_the_markers(tmp_path, monkeypatch):
    run = synthetic_run()
    page = tmp_path / "README.md"
    page.write_text(f"intro\n{readme.PROGRESS_START}\nold\n{readme.PROGRESS_END}\nend\n")
    assert readme.update(page, figure=False, runs=[run])
    text = page.read_text()
    assert "old" not in text and text.startswith("intro\n") and text.endswith("end\n")
    assert readme.progress_table(run) in text
    assert not readme.update(page, figure=False, runs=[])


def test_the_progress_figure_draws_every_run(tmp_path):
    from convfuse import plots

    runs = [synthetic_run(), synthetic_run(gpu="NVIDIA A100-SXM4-80GB", date="2026-10-01T00:00:00+00:00")]
    fig = plots.progress_figure(runs, [readme.progress(r) for r in runs])
    assert len(fig.axes) == 4
    fig.savefig(tmp_path / "p.png")


def test_the_committed_readme_matches_the_record(tmp_path):
    """`make readme` was run after the last record: regenerating changes nothing."""
    page = tmp_path / "README.md"
    page.write_text((readme.ROOT / "README.md").read_text())
    before = page.read_text()
    readme.update(page, figure=False)
    assert page.read_text() == before, "README.md is stale: run `make readme`"


def test_the_readme_is_short_and_speaks_of_the_study():
    text = (readme.ROOT / "README.md").read_text()
    assert len(text.split()) <= 1500
    assert "9cb67db" in text and "notes/kernel_log.md" in text and f"figures/{readme.PROGRESS_FIGURE}" in text
    assert (readme.ROOT / "figures" / readme.PROGRESS_FIGURE).exists()
    for pattern in (r"\bCF_[A-Z]", r"\bcall [A-Z]\b", r"\bsessions?\b", r"device-logs", r"\buncapped\b", r"\bnan\b"):
        assert not re.search(pattern, text), pattern
