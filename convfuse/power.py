"""The board's clock and power while kernels run: nvidia-smi sampled in the background, read back per time window.

The study leaves the clocks alone (METHOD.md), so a kernel runs at whatever clock the board's power and thermal
limits allow. A kernel that keeps the tensor cores busy on random operands can hold the board at its power limit,
where the SM clock falls; the same kernel on zeros draws less and keeps its clock. `Sampler` records the clock, the
power and the limiter flags every few tens of milliseconds; `window` summarises the samples between two host times,
so a script can say, for each stretch of launches it timed, at what clock and power they ran.
"""
from __future__ import annotations

import datetime as _dt
import statistics
import subprocess
import tempfile
from pathlib import Path

# The first query names the limiter flags (nvidia-smi 535 and later); older tools fall back to the second.
FIELDS = ("timestamp", "clocks.sm", "power.draw.instant", "power.limit", "clocks_event_reasons.sw_power_cap",
          "clocks_event_reasons.hw_slowdown", "temperature.gpu")
FIELDS_OLD = ("timestamp", "clocks.sm", "power.draw", "power.limit", "temperature.gpu")


def _number(s: str):
    s = s.strip().split(" ")[0]
    try:
        return float(s)
    except ValueError:
        return None


def parse_rows(text: str, fields=FIELDS) -> list[dict]:
    """nvidia-smi --format=csv,noheader lines -> [{t (datetime), clock_mhz, power_w, limit_w, power_capped,
    hw_slowdown, temp_c}]; flags None where the query did not have them, lines that do not parse skipped."""
    rows = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != len(fields):
            continue
        d = dict(zip(fields, parts))
        try:
            t = _dt.datetime.strptime(d["timestamp"], "%Y/%m/%d %H:%M:%S.%f")
        except ValueError:
            continue
        power = d.get("power.draw.instant", d.get("power.draw", ""))
        rows.append({
            "t": t, "clock_mhz": _number(d["clocks.sm"]), "power_w": _number(power),
            "limit_w": _number(d["power.limit"]),
            "power_capped": (d["clocks_event_reasons.sw_power_cap"] == "Active") if "clocks_event_reasons.sw_power_cap" in d else None,
            "hw_slowdown": (d["clocks_event_reasons.hw_slowdown"] == "Active") if "clocks_event_reasons.hw_slowdown" in d else None,
            "temp_c": _number(d["temperature.gpu"]),
        })
    return rows


def window(rows: list[dict], t0: _dt.datetime, t1: _dt.datetime) -> dict:
    """The samples with t0 <= t <= t1, summarised: n, mean and min SM clock (MHz), mean and max power (W), the power
    limit, and the share of samples with the software power cap active (None where not queried). Empty window: n 0."""
    w = [r for r in rows if t0 <= r["t"] <= t1]
    if not w:
        return {"n": 0}

    def vals(k):
        return [r[k] for r in w if r[k] is not None]

    caps = [r["power_capped"] for r in w if r["power_capped"] is not None]
    clocks, power = vals("clock_mhz"), vals("power_w")
    return {
        "n": len(w),
        "clock_mhz": statistics.fmean(clocks) if clocks else None, "clock_min_mhz": min(clocks) if clocks else None,
        "power_w": statistics.fmean(power) if power else None, "power_max_w": max(power) if power else None,
        "limit_w": w[0]["limit_w"],
        "power_capped": sum(caps) / len(caps) if caps else None,
    }


class Sampler:
    """`with Sampler(period_ms=20) as s: ...` samples nvidia-smi until the block ends; then `s.rows` holds the
    parsed samples. Host times to compare against them: `now()` (the same local clock nvidia-smi stamps)."""

    def __init__(self, period_ms: int = 20):
        self.period_ms, self.rows, self.fields = period_ms, [], FIELDS

    def _start(self, fields):
        self._file = tempfile.NamedTemporaryFile("w+", suffix=".csv", delete=False)
        return subprocess.Popen(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits",
                                 "-lms", str(self.period_ms)], stdout=self._file, stderr=subprocess.PIPE, text=True)

    def __enter__(self):
        self._proc = self._start(FIELDS)
        try:                                    # an unknown field ends nvidia-smi at once with a message
            self._proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return self                         # still sampling: the fields were known
        err = self._proc.stderr.read()
        self._file.close()
        Path(self._file.name).unlink(missing_ok=True)
        if "field" not in err.lower():
            raise RuntimeError(f"nvidia-smi ended at once: {err.strip()}")
        self.fields = FIELDS_OLD
        self._proc = self._start(FIELDS_OLD)
        return self

    def __exit__(self, *exc):
        self._proc.terminate()
        self._proc.wait(timeout=5)
        self._file.flush()
        self.text = Path(self._file.name).read_text()
        self.rows = parse_rows(self.text, self.fields)
        Path(self._file.name).unlink(missing_ok=True)
        return False


def now() -> _dt.datetime:
    return _dt.datetime.now()


def describe(w: dict | None) -> str:
    """A window (power.window) in words: "SM clock 1,980 MHz on average (lowest 1,980), 478 W, power-capped in 0 % of
    74 samples"; "" for no samples."""
    if not w or not w.get("n") or w.get("clock_mhz") is None:
        return ""
    out = f"SM clock {w['clock_mhz']:,.0f} MHz on average (lowest {w['clock_min_mhz']:,.0f})"
    if w.get("power_w") is not None:
        out += f", {w['power_w']:.0f} W"
    if w.get("power_capped") is not None:
        out += f", power-capped in {w['power_capped']:.0%} of {w['n']} samples"
    return out


class sampling:
    """`with sampling() as s:` a running Sampler, or None where nvidia-smi is missing or will not sample (a machine
    without the NVIDIA tools, a GPU it does not report): the caller's measurement goes on without the board's figures.
    After the block, `summary()` is the window over the whole block (power.window), or None."""

    def __init__(self, period_ms: int = 20):
        self.period_ms, self.sampler, self.t0, self.t1 = period_ms, None, None, None

    def __enter__(self):
        try:
            self.sampler = Sampler(self.period_ms).__enter__()
        except (OSError, RuntimeError):
            self.sampler = None
        self.t0 = now()
        return self

    def __exit__(self, *exc):
        self.t1 = now()
        if self.sampler is not None:
            self.sampler.__exit__(*exc)
        return False

    def summary(self) -> dict | None:
        if self.sampler is None:
            return None
        w = window(self.sampler.rows, self.t0, self.t1)
        return w if w.get("n") else None
