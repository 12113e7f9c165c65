"""results/<gpu-slug>.json: read, write, and the recorded-vs-live mode switch.

A results file is only ever written by a real run (`python -m convfuse bench` on a GPU).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .registry import ROOT

RESULTS_DIR = ROOT / "results"
MODES = ("auto", "recorded", "live")


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
