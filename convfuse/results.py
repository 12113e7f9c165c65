"""results/<gpu-slug>.json: read, write, and the recorded-vs-live mode switch.

A results file is only ever written by a real run (`python -m convfuse bench` on a GPU), and updated by
real runs of the hardening checks: `merge-hardening` below copies compute-sanitizer counts
(convfuse/sanitize.py) and the >2^31-element outcome (tests/test_gpu_hardening.py) onto its kernel
records. The bench re-applies them itself from results/device-logs/ (see bench.run), so they survive a
new benchmark run, but only where the kernel source is still the one that was checked.

    python -m convfuse.results merge-hardening --sanitize S.json --large-tensor L.json results/<gpu>.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path

from .registry import ROOT

RESULTS_DIR = ROOT / "results"
DEVICE_LOGS = RESULTS_DIR / "device-logs"
MODES = ("auto", "recorded", "live")
# per kernel record, from the hardening logs: {log name: (file name, fields copied)}
HARDENING_LOGS = {"sanitize": ("sanitize.json", ("memcheck_errors", "racecheck_hazards", "synccheck_errors")),
                  "large_tensor": ("large_tensor.json", ("large_tensor",))}
HARDENING_FIELDS = tuple(f for _, fields in HARDENING_LOGS.values() for f in fields)
LARGE_TENSOR_OUTCOMES = ("ok", "refused")


def mode() -> str:
    """CONVFUSE_MODE: auto (live when a GPU is there), recorded, or live."""
    m = os.environ.get("CONVFUSE_MODE", "auto").strip().lower()
    if m not in MODES:
        raise ValueError(f"CONVFUSE_MODE={m!r}; use one of {', '.join(MODES)}")
    if m == "auto":
        import torch

        return "live" if torch.cuda.is_available() else "recorded"
    if m == "live":
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("CONVFUSE_MODE=live needs a CUDA GPU; this machine has none. "
                               "Use CONVFUSE_MODE=recorded to render from results/*.json.")
    return m


def slug(gpu_name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-")


def path_for(gpu_slug: str) -> Path:
    return RESULTS_DIR / f"{gpu_slug}.json"


def load(path) -> dict:
    with open(path) as f:
        data = json.load(f)
    for k in ("env", "records"):
        if k not in data:
            raise ValueError(f"{path}: not a convfuse results file (no {k!r})")
    return data


def save(data: dict, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    tmp.replace(path)
    return path


def merge(old: dict, new: dict) -> dict:
    """`new`'s records replace `old`'s of the same (problem, variant); `new`'s environment wins."""
    keys = {(r["problem"], r["variant"]) for r in new["records"]}
    kept = [r for r in old["records"] if (r["problem"], r["variant"]) not in keys]
    profiles = {**old.get("profiles", {}), **new.get("profiles", {})}
    return {"env": new["env"], "records": kept + new["records"], "profiles": profiles,
            **{k: v for k, v in old.items() if k not in ("env", "records", "profiles")}}


def all_recorded(directory=None) -> list[dict]:
    """Every recorded results file, newest run first."""
    directory = Path(directory or RESULTS_DIR)
    runs = [load(p) | {"path": str(p)} for p in sorted(directory.glob("*.json"))]
    return sorted(runs, key=lambda r: r["env"].get("date", ""), reverse=True)


def latest(directory=None) -> dict:
    runs = all_recorded(directory)
    if not runs:
        raise FileNotFoundError(f"no results/*.json in {directory or RESULTS_DIR}: run `python -m convfuse bench` on a GPU")
    return runs[0]


def records(run: dict, problem: str | None = None) -> list[dict]:
    return [r for r in run["records"] if problem is None or r["problem"] == problem]


def record(run: dict, problem: str, variant: str) -> dict | None:
    for r in run["records"]:
        if r["problem"] == problem and r["variant"] == variant:
            return r
    return None


def frame(run: dict, problem: str | None = None, columns=None):
    """The records as a pandas DataFrame, in registry order."""
    import pandas as pd

    from .registry import VARIANTS

    order = {(v.problem, v.key): i for i, v in enumerate(VARIANTS)}
    rows = sorted(records(run, problem), key=lambda r: order.get((r["problem"], r["variant"]), 1e9))
    df = pd.DataFrame(rows)
    if columns:
        df = df[[c for c in columns if c in df.columns]]
    return df


# --- hardening logs onto kernel records ------------------------------------------------------------
def source_sha(variant) -> str:
    """A short hash of the exact text nvcc compiles for a variant (build.kernel_source): the hardening
    logs carry it per entry, so a result is never attached to a kernel other than the one checked."""
    from . import build

    return hashlib.sha256(build.kernel_source(variant).encode()).hexdigest()[:16]


def apply_hardening(data: dict, logs: dict, strict: bool = False, log=print) -> list[str]:
    """Copy the hardening fields onto every kernel record of `data`, in place.

    `logs`: {"sanitize": <sanitize.json as loaded>, "large_tensor": <large_tensor.json>} (either may be
    missing). An entry is used only if its source_sha matches the variant's source now. Returns the
    problems found (a kernel record without a current entry, a skipped variant); with strict=True they
    raise a ValueError instead, and nothing is changed."""
    from . import registry as R

    problems, updates = [], []
    for i, rec in enumerate(data["records"]):
        try:
            v = R.get(rec["problem"], rec["variant"])
        except ValueError:
            continue
        if not v.is_kernel:
            continue
        name = f"{rec['problem']}/{rec['variant']}"
        try:
            sha = source_sha(v)
        except OSError as e:
            problems.append(f"{name}: cannot read its kernel source ({e})")
            continue
        for logname, (_, fields) in HARDENING_LOGS.items():
            if logs.get(logname) is None:
                continue
            entry = logs[logname].get(rec["problem"], {}).get(rec["variant"])
            if entry is None:
                problems.append(f"{name}: no entry in the {logname} log")
            elif entry.get("source_sha") != sha:
                problems.append(f"{name}: the {logname} log checked another version of its source "
                                f"({entry.get('source_sha')}, now {sha}): run it again")
            elif entry.get("skipped"):
                problems.append(f"{name}: skipped in the {logname} log: {entry['skipped']}")
            else:
                updates.append((i, {f: entry.get(f) for f in fields}, sha))
    if strict and problems:
        raise ValueError("hardening logs do not cover the results file:\n  " + "\n  ".join(problems))
    for i, fields, sha in updates:
        data["records"][i].update(fields, hardening_source_sha=sha)
    for p in problems:
        log(f"[hardening] {p}")
    log(f"[hardening] {len(updates)} log entries applied to kernel records")
    return problems


def unclean(data: dict) -> list[str]:
    """Kernel records that do not meet issue 6's bar: 0 memcheck errors, 0 racecheck hazards, 0 synccheck
    errors, large_tensor "ok" or "refused" (records without the fields are not judged)."""
    bad = []
    for rec in data["records"]:
        name = f"{rec['problem']}/{rec['variant']}"
        for f in ("memcheck_errors", "racecheck_hazards", "synccheck_errors"):
            if f in rec and rec[f] != 0:
                bad.append(f"{name}: {f} = {rec[f]}")
        if "large_tensor" in rec and rec["large_tensor"] not in LARGE_TENSOR_OUTCOMES:
            bad.append(f"{name}: large_tensor = {rec['large_tensor']!r}")
    return bad


def load_hardening_logs(dirs=None, sanitize=None, large_tensor=None) -> dict:
    """The hardening logs: explicit paths, else the first of `dirs` (then results/device-logs/) that has
    each file. {"sanitize": {...} or None, "large_tensor": {...} or None, "paths": {...}}."""
    explicit = {"sanitize": sanitize, "large_tensor": large_tensor}
    search = [Path(d) for d in (dirs or [])] + [DEVICE_LOGS]
    out, paths = {}, {}
    for logname, (fname, _) in HARDENING_LOGS.items():
        path = Path(explicit[logname]) if explicit[logname] else next(
            (d / fname for d in search if (d / fname).exists()), None)
        out[logname] = json.loads(path.read_text()) if path and path.exists() else None
        paths[logname] = str(path) if out[logname] is not None else None
    out["paths"] = paths
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m convfuse.results")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge-hardening", help="copy memcheck_errors, racecheck_hazards, synccheck_errors and "
                                               "large_tensor from the device logs onto each kernel record")
    m.add_argument("results", help="results/<gpu>.json to update")
    m.add_argument("--sanitize", help="sanitize.json from `make sanitize`")
    m.add_argument("--large-tensor", help="large_tensor.json from tests/test_gpu_hardening.py")
    a = ap.parse_args(argv)
    if not (a.sanitize or a.large_tensor):
        ap.error("give --sanitize and/or --large-tensor")
    try:
        logs = {}
        for logname, path in (("sanitize", a.sanitize), ("large_tensor", a.large_tensor)):
            if path:
                if not Path(path).exists():
                    raise FileNotFoundError(f"{path}: no such file")
                logs[logname] = json.loads(Path(path).read_text())
        data = load(a.results)
        apply_hardening(data, logs, strict=True)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    save(data, a.results)
    print(f"[hardening] wrote {a.results}")
    for b in unclean(data):
        print(f"[hardening] NOT CLEAN: {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
