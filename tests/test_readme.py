"""convfuse.readme: README.md's progress section (the table of the fastest kernel of each step and accuracy class per
recorded GPU, and its figure), and what the README must and must not say."""
import re

from convfuse import readme, results
from convfuse import registry as R
from test_plots import synthetic_run


def test_progress_rows_are_the_fastest_verified_kernel_of_each_step_and_class():
    run = synthetic_run()
    rows = readme.progress(run)
    assert rows and {r["class"] for r in rows} <= {"TF32 class", "FP32 class"}
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
        assert cells[3] == f"`{r['kernel']}`" and float(cells[5]) == round(r["ms"], 3)
        assert cells[2] + " class" == r["class"]
        # each kernel's error beside eager FP32's own, from the same record
        assert cells[4].startswith(f"{r['rel_l2']:.1e} (") and cells[4].endswith("×)")
    assert "nan" not in md and "None" not in md


def test_two_gpus_share_one_table_each_with_its_ceilings():
    """A second GPU adds a column group (ms, x compile, x floor), not a second table; each GPU's paragraph gives its
    measured ceilings and the cuDNN fused graph's time, or says the record has none; where the GPUs' fastest kernels
    differ, the kernel cell names each."""
    a = synthetic_run(gpu="NVIDIA H100 80GB HBM3", date="2026-12-06T00:00:00+00:00", scale=1.3)
    a["env"].update(copy_gbps=2950.0, tf32_tflops=370.0)
    b = synthetic_run(cudnn="absent")
    slow = next(r for r in a["records"] if r["problem"] == "conv2d" and r["variant"] == "04c_ws_fp16")
    slow["median_ms"] *= 3                                     # another kernel is the fastest of 04c on "H100"
    text = readme.progress_section([a, b])
    assert text.count("| problem | step |") == 1
    assert "| H100 ms | × compile | × floor | H200 ms | × compile | × floor |" in text
    assert "**H100** (NVIDIA H100 80GB HBM3)" in text and "**H200**, " in text
    assert "copy 2950 GB/s" in text and "copy 4184 GB/s" in text
    assert f"cuDNN's fused graph: conv2d {results.record(a, 'conv2d', 'cudnn_fused')['median_ms']:.3f}" in text
    assert "cuDNN's fused graph: not in this record" in text
    rows = {(r["problem"], r["step"], r["class"]): r for r in readme.progress(a)}
    for line in (ln for ln in text.splitlines() if ln.startswith("| conv")):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == 11
        r = rows.get((cells[0], cells[1], cells[2] + " class"))
        if r:
            assert float(cells[5]) == round(r["ms"], 3)
    d = [ln for ln in text.splitlines() if ln.startswith("| conv2d | 04c | TF32 |")]
    assert len(d) == 1 and "`04c_ws_tf32` (H100), `04c_ws_fp16` (H200)" in d[0]
    one = readme.progress_table(b)
    assert one.splitlines()[0].count("× floor") == 1
    # rows the record left out on purpose say so, and where the reason is
    b["env"]["cudnn_fused"] = {pk: {"status": "withdrawn", "message": "mismeasured"} for pk in ("conv2d", "conv3d")}
    assert "cuDNN's fused graph: not in this record (withdrawn: notebook 00 says why)" in readme.progress_header(b)


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
    assert "pip install nvidia-cudnn-frontend" in text and "one-line note" in text      # the optional dependency
    assert "The A100 is not measured" in text                                           # a prediction, said so
    assert (readme.ROOT / "figures" / readme.PROGRESS_FIGURE).exists()
    for pattern in (r"\bCF_[A-Z]", r"\bcall [A-Z]\b", r"\bsessions?\b", r"device-logs", r"\buncapped\b", r"\bnan\b"):
        assert not re.search(pattern, text), pattern
