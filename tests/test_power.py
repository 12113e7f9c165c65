"""convfuse.power on the CPU: nvidia-smi's lines parsed and summarised per window."""
import datetime as dt

from convfuse import power

LINES = """2026/12/02 05:28:55.005, 1980, 93.88, 700.00, Not Active, Not Active, 42
2026/12/02 05:28:56.010, 1805, 695.10, 700.00, Active, Not Active, 47
2026/12/02 05:28:56.030, 1815, 689.00, 700.00, Active, Not Active, 47
not a sample line
2026/12/02 05:28:57.500, 1980, 601.00, 700.00, Not Active, Not Active, 48
"""


def test_rows_parse_with_flags_and_skip_other_lines():
    rows = power.parse_rows(LINES)
    assert len(rows) == 4
    assert rows[1]["clock_mhz"] == 1805 and rows[1]["power_w"] == 695.1 and rows[1]["power_capped"] is True
    assert rows[0]["power_capped"] is False and rows[0]["limit_w"] == 700


def test_window_summarises_only_its_samples():
    rows = power.parse_rows(LINES)
    w = power.window(rows, dt.datetime(2026, 12, 2, 5, 28, 56), dt.datetime(2026, 12, 2, 5, 28, 57))
    assert w["n"] == 2 and w["clock_mhz"] == 1810 and w["clock_min_mhz"] == 1805
    assert w["power_max_w"] == 695.1 and w["power_capped"] == 1.0
    assert power.window(rows, dt.datetime(2026, 1, 1), dt.datetime(2026, 1, 2)) == {"n": 0}


def test_old_fields_have_no_flags():
    text = "2026/12/02 05:28:55.005, 1980 MHz, 88.56 W, 700.00 W, 42\n"
    rows = power.parse_rows(text, power.FIELDS_OLD)
    assert rows[0]["power_w"] == 88.56 and rows[0]["power_capped"] is None
    assert power.window(rows, rows[0]["t"], rows[0]["t"])["power_capped"] is None


def test_describe_says_the_window_in_words_and_nothing_for_no_samples():
    rows = power.parse_rows(LINES)
    w = power.window(rows, rows[0]["t"], rows[-1]["t"])
    text = power.describe(w)
    assert text.startswith("SM clock 1,895 MHz on average (lowest 1,805)") and "power-capped in 50% of 4 samples" in text
    assert power.describe({"n": 0}) == "" and power.describe(None) == ""


def test_sampling_without_nvidia_smi_gives_no_summary_and_lets_the_work_run(monkeypatch):
    def missing(*a, **k):
        raise FileNotFoundError("nvidia-smi")
    monkeypatch.setattr(power.subprocess, "Popen", missing)
    ran = []
    with power.sampling() as s:
        ran.append(1)
    assert ran == [1] and s.summary() is None


def test_the_header_says_the_board_during_timing_where_the_run_has_it():
    from convfuse import study
    w = power.window(power.parse_rows(LINES), dt.datetime(2026, 12, 2, 5, 28, 56), dt.datetime(2026, 12, 2, 5, 28, 57))
    run = {"env": {"gpu": "NVIDIA H200", "date": "2026-12-02", "board_during_timing": {"conv3d": w, "conv2d": None}},
           "records": [], "mode": "recorded"}
    text = study.header(run).data
    assert "During the timing (nvidia-smi): conv3d: SM clock 1,810 MHz" in text and "conv2d:" not in text
    assert "During the timing" not in study.header({"env": {"gpu": "x"}, "records": [], "mode": "recorded"}).data
