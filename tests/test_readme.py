"""convfuse.readme: README.md's generated parts (results table, step 04's goals table, build times)."""
from convfuse import readme, results
from convfuse import study
from test_plots import synthetic_run


def test_goals_markdown_has_a_row_per_problem_and_goal_with_the_table_verdicts():
    run = synthetic_run()
    md = readme.goals(run)
    t = study.goals_table(run)
    rows = [ln for ln in md.splitlines() if ln.startswith("| conv")]
    assert len(rows) == len(t)
    for ((pk, goal), r), line in zip(t.iterrows(), rows):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[:3] == [pk, goal, f"`{r['kernel']}`"] and cells[7] == r["verdict"]
        assert float(cells[3]) == round(r["median ms"], 3) and cells[8] == r["faster than torch.compile"]
    empty = readme.goals(study.empty_run())
    assert all(study.NOT_RECORDED in ln for ln in empty.splitlines() if ln.startswith("| conv"))


def test_update_rewrites_only_between_the_markers(tmp_path, monkeypatch):
    run = synthetic_run()
    monkeypatch.setattr(results, "latest", lambda *a, **k: run)
    page = tmp_path / "README.md"
    page.write_text(f"intro\n{readme.START}\nold\n{readme.END}\nmiddle\n{readme.GOALS_START}\nold\n{readme.GOALS_END}\n"
                    f"{readme.BUILD_START}\nold\n{readme.BUILD_END}\nend\n")
    assert readme.update(page)
    text = page.read_text()
    assert "old" not in text and text.startswith("intro\n") and "\nmiddle\n" in text and text.endswith("end\n")
    assert readme.goals(run) in text and readme.table(run) in text


def test_the_committed_readme_matches_the_newest_record(tmp_path):
    """`make readme` was run after the last record: regenerating changes nothing."""
    page = tmp_path / "README.md"
    page.write_text((readme.ROOT / "README.md").read_text())
    before = page.read_text()
    readme.update(page)
    assert page.read_text() == before, "README.md is stale: run `make readme`"
