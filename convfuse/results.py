"""results/<gpu-slug>.json: read, write, the recorded-vs-live mode switch, and what ties a record to machine code.

A results file is only ever written by real runs on the GPU it names: `python -m convfuse bench` (timings,
verification), `make profile` (Nsight Compute's bytes per kernel), `make sanitize` and the GPU hardening tests. Besides
the DESIGN.md fields, a file holds:

- per kernel record, `machine_code`: what the bench timed (see below); `evidence`: the profiler and ablation figures
  the study cites for that kernel, each with what was measured, its value and unit, the GPU, the date, the build
  (``"as registered"`` or what differs), whether that build's SASS is the registered build's (`same_machine_code`),
  the commit it was built from and where its raw log can be read in git history (`evidence()` reads them);
- per kernel record, the hardening fields `memcheck_errors`, `racecheck_hazards`, `synccheck_errors` (`make
  sanitize`), `large_tensor` (tests/test_gpu_hardening.py), and `hardening_machine_code`, the machine code they were
  checked on;
- `hardening`: the summaries of those runs (dates, tool versions, shapes, the GPU test suites' counts), each suite
  with the machine code of every variant it ran; `env.build_times` likewise;
- `microbenchmarks`: runs of the study's microbenchmarks on this GPU (`microbenchmark()` reads them).

Machine code, not source text. A hardening result describes the instructions it exercised, so it is keyed by them: an
edited comment keeps it, changed code voids it. `machine_code(variant)` compiles `build.kernel_source(variant)` for each
of the variant's targets with `nvcc -cubin` and `build.NVCC_FLAGS` (as scripts/same_machine_code.py does: the device
code of the load_inline extension, without torch's host glue) and records

    {"sass": <16 hex>, "cubins": {"sm_90a": <16 hex>, ...}, "nvcc": "13.0.88", "cuobjdump": "13.2.51"}

`cubins` are SHA-256 prefixes of the cubin files; `sass` is one over `cuobjdump -sass` of each cubin, normalised as the
study's SASS comparisons do (headers, file and function names dropped: the instructions and their encodings stay).
Both are kept because neither alone is exact and robust: a cubin also carries things that are not machine code (the
ptxas options in `.note.nv.tkinfo`, symbol names), so a refactor that leaves every instruction in place can change its
bytes; and the SASS text depends on the disassembler's version as well as on the code. `same_machine_code` therefore
decides, for one nvcc version: equal cubins are the same code; different cubins are the same code exactly when their
normalised SASS is. That text keeps every instruction's encoding, so equal text is equal code whichever cuobjdump wrote
it, while unequal text proves other code only where one cuobjdump version wrote both; otherwise it cannot say (None),
and a result is not carried over on a guess. Cubins are cached under build/machine-code/ by the hash of the
text nvcc compiles, the target, the flags and the nvcc version.

    python -m convfuse.results merge-hardening results/<gpu>.json [--sanitize S.json] [--large-tensor L.json]
                                               [--gpu-tests LOG] [--gpu-hardening-tests LOG]
    python -m convfuse.results machine-code [results/<gpu>.json]     # does the working tree build the record's code?
"""
from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from . import build
from .registry import KERNELS, PACKAGE, ROOT, SOURCE_CHECKOUT

# an installed package carries the records (fuse() chooses its kernel by them) inside itself (pyproject.toml)
RESULTS_DIR = ROOT / "results" if SOURCE_CHECKOUT else PACKAGE / "_results"
# the library face's timings (`python -m convfuse fuse`): fuse(model) beside eager and torch.compile, per GPU
FUSE_DIR = RESULTS_DIR / "fuse"
MODES = ("auto", "recorded", "live")
# per kernel record: the hardening fields, by the run that measures them
HARDENING_LOGS = {"sanitize": ("sanitize.json", ("memcheck_errors", "racecheck_hazards", "synccheck_errors")),
                  "large_tensor": ("large_tensor.json", ("large_tensor",))}
HARDENING_FIELDS = tuple(f for _, fields in HARDENING_LOGS.values() for f in fields)
# the GPU test suites whose counts a record keeps: {name: (pytest output file the device session writes, suite)}
TEST_SUITES = {"gpu_tests": ("gpu_tests.log", "tests/test_gpu_kernels.py"),
               "gpu_hardening_tests": ("gpu_hardening.log", "tests/test_gpu_hardening.py")}
LARGE_TENSOR_OUTCOMES = ("ok", "refused")
MACHINE_CODE_CACHE = build.BUILD_DIR / "machine-code"
EVIDENCE_FIELDS = ("what", "value", "unit", "build", "same_machine_code", "gpu", "date", "commit", "log")


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


def device_path() -> Path:
    """This machine's GPU's record: results/<slug of torch.cuda.get_device_name(0)>.json."""
    import torch

    return path_for(slug(torch.cuda.get_device_name(0)))


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
    """`new`'s records replace `old`'s of the same (problem, variant); `new`'s environment and other top-level
    sections win, `old`'s stay where `new` has none."""
    keys = {(r["problem"], r["variant"]) for r in new["records"]}
    kept = [r for r in old["records"] if (r["problem"], r["variant"]) not in keys]
    profiles = {**old.get("profiles", {}), **new.get("profiles", {})}
    rest = {**{k: v for k, v in old.items() if k not in ("env", "records", "profiles")},
            **{k: v for k, v in new.items() if k not in ("env", "records", "profiles")}}
    return {"env": new["env"], "records": kept + new["records"], "profiles": profiles, **rest}


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


# --- evidence and microbenchmarks ------------------------------------------------------------------
def evidence(run: dict, problem: str | None = None, variant: str | None = None):
    """The evidence entries of a run's kernel records (of one problem, one variant) as a DataFrame, one row each:
    problem, variant, what, value, unit, build, same_machine_code, note, metric, gpu, date, run, commit, log. Rows
    keep the record's order; an empty frame (with these columns) where nothing is recorded."""
    import pandas as pd

    cols = ["problem", "variant", "what", "value", "unit", "build", "same_machine_code", "note", "metric", "gpu",
            "date", "run", "commit", "log"]
    rows = [{"problem": r["problem"], "variant": r["variant"], **e}
            for r in records(run, problem) if variant is None or r["variant"] == variant
            for e in r.get("evidence") or []]
    return pd.DataFrame(rows, columns=cols)


def microbenchmark(run: dict, name: str = "wgmma_rate"):
    """A microbenchmark's recorded runs as one table: one row per case and run, indexed by (date, case)."""
    import pandas as pd

    runs = (run.get("microbenchmarks") or {}).get(name) or []
    rows = [{"date": r["date"], **c} for r in runs for c in r["cases"]]
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).set_index(["date", "case"])


# --- machine code ------------------------------------------------------------------------------------
_NOT_CODE = ("code for", "Fatbin", "arch =", "code version", "host =", "compile_size", "producer", "identifier")


def normalized_sass(text: str) -> str:
    """`cuobjdump -sass` output without what names the file or the function: the instructions and their encodings."""
    return "\n".join(ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("Function")
                     and not any(s in ln for s in _NOT_CODE))


def cuda_tool(name: str) -> str | None:
    """nvcc, or a CUDA tool beside it, else on PATH, else from NVIDIA's wheel of it (requirements.txt brings
    cuobjdump's and nvdisasm's, so a machine without the whole toolkit, CI's, can still compare SASS)."""
    nvcc = build.find_nvcc()
    if name == "nvcc":
        return nvcc
    beside = Path(nvcc).parent / name if nvcc else None
    if beside and beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found:
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for exe in sorted(Path(root).glob(f"cu*/bin/{name}"), reverse=True):     # the newest CUDA major first
            return str(exe)
    return None


@lru_cache(maxsize=None)
def _nvdisasm_path() -> str | None:
    """cuobjdump runs nvdisasm, which it looks for on PATH or in NVDISASM_PATH only, not beside itself: where that
    would miss it (NVIDIA's wheels of the two, a toolkit found through CUDA_HOME), the folder cuda_tool finds it in."""
    nvdisasm = cuda_tool("nvdisasm")
    if nvdisasm and not shutil.which("nvdisasm") and "NVDISASM_PATH" not in os.environ:
        return str(Path(nvdisasm).parent)
    return None


def cuobjdump_sass(cuobjdump: str, cubin) -> subprocess.CompletedProcess:
    """`cuobjdump -sass cubin`, with nvdisasm where cuobjdump can find it."""
    folder = _nvdisasm_path()
    env = {**os.environ, "NVDISASM_PATH": folder} if folder else None
    return subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True, env=env)


@lru_cache(maxsize=None)
def _version(exe: str | None) -> str | None:
    """"13.0.88" from `nvcc --version` / `cuobjdump --version` ("... release 13.0, V13.0.88")."""
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return None
    m = re.search(r"\bV(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else None


def toolkit() -> dict:
    """The nvcc and cuobjdump this machine would hash with: {"nvcc": path, "nvcc_version", "cuobjdump", ...}."""
    nvcc, cuobjdump = cuda_tool("nvcc"), cuda_tool("cuobjdump")
    return {"nvcc": nvcc, "nvcc_version": _version(nvcc), "cuobjdump": cuobjdump,
            "cuobjdump_version": _version(cuobjdump)}


def _sha16(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def compile_cubin(source: str, arch: str, tools: dict | None = None) -> Path:
    """`source` compiled for sm_<arch> to a cubin (nvcc -cubin, build.NVCC_FLAGS), cached under build/machine-code/
    by the text, the target, the flags and the nvcc version."""
    tools = tools or toolkit()
    if not tools["nvcc"]:
        raise FileNotFoundError("nvcc not found (set CUDA_HOME or put nvcc on PATH)")
    key = hashlib.sha256("\0".join([source, arch, repr(build.NVCC_FLAGS), str(tools["nvcc_version"])]).encode())
    out = MACHINE_CODE_CACHE / f"{key.hexdigest()[:32]}_sm{arch}.cubin"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.cu"
        src.write_text(source)
        cub = Path(tmp) / "k.cubin"
        proc = subprocess.run([tools["nvcc"], *build.NVCC_FLAGS, "-cubin", str(src), "-o", str(cub),
                               f"-gencode=arch=compute_{arch},code=sm_{arch}", "-I", str(KERNELS)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"nvcc -cubin for sm_{arch} failed:\n{proc.stderr[-3000:]}")
        shutil.move(str(cub), out)
    return out


def _sass_sha(cubin: Path, tools: dict) -> str | None:
    if not tools["cuobjdump"]:
        return None
    cache = cubin.with_suffix(f".sass1-{tools['cuobjdump_version']}")     # 1: normalized_sass's rule
    if cache.exists():
        return cache.read_text()
    proc = cuobjdump_sass(tools["cuobjdump"], cubin)
    if proc.returncode != 0:
        return None
    sha = _sha16(normalized_sass(proc.stdout).encode())
    cache.write_text(sha)
    return sha


def machine_code_of(source: str, archs, tools: dict | None = None) -> dict:
    """The machine-code key of one build: `source` (the text nvcc compiles) for each target in `archs`."""
    tools = tools or toolkit()
    cubins, sass = {}, []
    for arch in archs:
        cub = compile_cubin(source, arch, tools)
        cubins[f"sm_{arch}"] = _sha16(cub.read_bytes())
        sass.append(f"sm_{arch} {_sass_sha(cub, tools)}")
    whole = None if any(s.endswith(" None") for s in sass) else _sha16("\n".join(sass).encode())
    return {"sass": whole, "cubins": cubins, "nvcc": tools["nvcc_version"], "cuobjdump": tools["cuobjdump_version"]}


def machine_code(variant, tools: dict | None = None) -> dict:
    """The machine-code key of a kernel variant as the working tree builds it (build.kernel_source, v.archs)."""
    return machine_code_of(build.kernel_source(variant), variant.archs, tools)


def machine_codes(variants, jobs: int | None = None) -> dict:
    """{(problem, key): machine_code} for many variants, compiled in parallel (cache hits are free); None for a variant
    nvcc cannot compile (its results then attach to nothing). Without nvcc: FileNotFoundError."""
    variants = list(variants)
    tools = toolkit()
    if not tools["nvcc"]:
        raise FileNotFoundError("nvcc not found (set CUDA_HOME or put nvcc on PATH)")

    def one(v):
        try:
            return machine_code(v, tools)
        except RuntimeError:
            return None

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        codes = list(pool.map(one, variants))
    return {(v.problem, v.key): c for v, c in zip(variants, codes)}


def same_machine_code(recorded: dict | None, now: dict | None) -> tuple[bool | None, str]:
    """Is `now` the machine code `recorded` describes? (True/False, or None where it cannot be told here), and why."""
    if not isinstance(recorded, dict) or not recorded.get("cubins"):
        return False, "no machine code recorded"
    if not isinstance(now, dict) or not now.get("cubins"):
        return None, "no machine code to compare with"
    if recorded.get("nvcc") != now.get("nvcc"):
        return None, f"recorded with nvcc {recorded.get('nvcc')}, compared with nvcc {now.get('nvcc')}"
    if set(recorded["cubins"]) != set(now["cubins"]):
        return False, f"built for {sorted(now['cubins'])}, recorded for {sorted(recorded['cubins'])}"
    if recorded["cubins"] == now["cubins"]:
        return True, "the same cubins"
    if recorded.get("sass") and now.get("sass"):
        # the normalised SASS keeps every instruction's encoding, so equal text is equal code whichever cuobjdump
        # wrote it; unequal text is other code only where one cuobjdump version wrote both
        if recorded["sass"] == now["sass"]:
            return True, "the same SASS (the cubins' bytes differ elsewhere)"
        if recorded.get("cuobjdump") == now.get("cuobjdump"):
            return False, "different SASS"
    return None, ("the cubins differ and their SASS cannot be compared here (cuobjdump "
                  f"{now.get('cuobjdump') or 'missing'}, recorded with {recorded.get('cuobjdump')})")


def check_machine_code(data: dict, codes: dict | None = None) -> list[dict]:
    """Every machine-code key a record carries (kernel records' `machine_code`, `hardening_machine_code` and
    `ncu_machine_code`, each hardening suite's, the build times') against what the working tree compiles now:
    [{"where", "variant", "same", "why"}]."""
    from . import registry as R

    keyed = []       # (where, (problem, key), recorded)
    for rec in data["records"]:
        for field in ("machine_code", "hardening_machine_code", "ncu_machine_code"):
            if rec.get(field):
                keyed.append((field, (rec["problem"], rec["variant"]), rec[field]))
    for name, summary in (data.get("hardening") or {}).items():
        for pk, mc in (summary.get("machine_code") or {}).items():
            keyed.append((f"hardening.{name}", tuple(pk.split("/", 1)), mc))
    for pk, mc in ((data.get("env", {}).get("build_times") or {}).get("machine_code") or {}).items():
        keyed.append(("env.build_times", tuple(pk.split("/", 1)), mc))
    if codes is None:
        variants = []
        for _, (p, k), _ in keyed:
            try:
                v = R.get(p, k)
            except ValueError:
                continue
            if v not in variants:
                variants.append(v)
        codes = machine_codes(variants)
    out = []
    for where, pk, mc in keyed:
        if pk not in codes:
            same, why = False, "no such kernel variant in the registry now"
        elif codes[pk] is None:
            same, why = False, "the working tree does not compile it"
        else:
            same, why = same_machine_code(mc, codes[pk])
        out.append({"where": where, "variant": "/".join(pk), "same": same, "why": why})
    return out


# --- hardening onto kernel records ---------------------------------------------------------------------
def _drop_hardening(rec: dict) -> None:
    for f in (*HARDENING_FIELDS, "hardening_machine_code", "hardening_source_sha"):
        rec.pop(f, None)


def apply_hardening(data: dict, logs: dict, strict: bool = False, log=print, codes: dict | None = None) -> list[str]:
    """Copy the hardening results in `logs` onto `data` (a results file), in place, where they checked the machine
    code the working tree builds now.

    `logs`: {"sanitize": <convfuse.sanitize's JSON>, "large_tensor": <tests/test_gpu_hardening.py's JSON>,
    "gpu_tests": <pytest summary>, "gpu_hardening_tests": <pytest summary>} (any may be missing or None). Per-variant
    entries carry their "machine_code"; an entry is used only where `same_machine_code` says True against `codes`
    ({(problem, key): machine_code}, compiled now if not given). A kernel record takes the fields and the entry's
    machine code as `hardening_machine_code`; hardening fields it had for other machine code are dropped first. The
    suites' summaries (with their per-variant machine code) and the runs' environments go to data["hardening"].
    Returns the problems found (a kernel record without a usable entry, a skipped variant); with strict=True they raise
    a ValueError instead, and nothing is changed."""
    from . import registry as R

    variants = {}
    for rec in data["records"]:
        try:
            v = R.get(rec["problem"], rec["variant"])
        except ValueError:
            continue
        if v.is_kernel:
            variants[(v.problem, v.key)] = v
    if codes is None and any(logs.get(n) is not None for n in HARDENING_LOGS):
        codes = machine_codes(variants.values())
    codes = codes or {}
    problems, updates = [], []
    for i, rec in enumerate(data["records"]):
        pk = (rec["problem"], rec["variant"])
        if pk not in variants:
            continue
        name = "/".join(pk)
        for logname, (_, fields) in HARDENING_LOGS.items():
            if logs.get(logname) is None:
                continue
            entry = logs[logname].get(rec["problem"], {}).get(rec["variant"])
            if entry is None:
                problems.append(f"{name}: no entry in the {logname} log")
                continue
            if entry.get("skipped"):
                problems.append(f"{name}: skipped in the {logname} log: {entry['skipped']}")
                continue
            same, why = same_machine_code(entry.get("machine_code"), codes.get(pk))
            if not same:
                problems.append(f"{name}: the {logname} log did not check the machine code built now ({why}): "
                                "run it again")
                continue
            updates.append((i, logname, {f: entry.get(f) for f in fields}, entry["machine_code"]))
    if strict and problems:
        raise ValueError("hardening logs do not cover the results file:\n  " + "\n  ".join(problems))
    for i, _, fields, mc in updates:
        rec = data["records"][i]
        if same_machine_code(rec.get("hardening_machine_code"), mc)[0] is not True:
            _drop_hardening(rec)
        rec.update(fields, hardening_machine_code=mc)
    summaries = data.setdefault("hardening", {})
    for logname in HARDENING_LOGS:
        n = sum(1 for u in updates if u[1] == logname)
        if n:
            summaries[logname] = {**_run_summary(logs[logname]), "kernel_records": n}
    for suite in TEST_SUITES:
        if logs.get(suite) is not None:
            summaries[suite] = logs[suite]
    if not summaries:
        data.pop("hardening")
    for p in problems:
        log(f"[hardening] {p}")
    log(f"[hardening] {len(updates)} log entries applied to kernel records")
    return problems


def _run_summary(log: dict) -> dict:
    """What a hardening run's JSON says of the whole run: its env (date, GPU, tool versions, ...) and, per problem,
    the shapes the sanitizer ran (per tool) or the batch the large-tensor test used."""
    out = dict(log.get("env", {}))
    for problem, entries in log.items():
        if problem == "env" or not isinstance(entries, dict):
            continue
        for e in entries.values():
            if isinstance(e, dict) and e.get("shapes"):
                out.setdefault("shapes", {}).setdefault(problem, e["shapes"])
            if isinstance(e, dict) and e.get("batch"):
                out.setdefault("batch", {}).setdefault(problem, e["batch"])
    return out


def _carried(old: dict, new: dict, codes: dict, field: str, code_field: str):
    """(record of `new`, its record in `old`, same_machine_code's verdict and reason) for each kernel record whose old
    record holds `field`, its machine code read from the old record's `code_field`."""
    for rec in new["records"]:
        prev = record(old, rec["problem"], rec["variant"])
        if prev and prev.get(field):
            yield (rec, prev, *same_machine_code(prev.get(code_field), codes.get((rec["problem"], rec["variant"]))))


def _changed_since(recorded: dict, codes: dict) -> list[str]:
    """The "problem/key" entries of a recorded {entry: machine_code} map whose code is not the code built now
    (`codes`), or cannot be told to be."""
    return [pk for pk, mc in recorded.items() if same_machine_code(mc, codes.get(tuple(pk.split("/", 1))))[0] is not True]


def carry_hardening(old: dict, new: dict, codes: dict, log=print) -> int:
    """A new bench run over an old results file: each kernel record of `new` keeps `old`'s hardening fields where they
    checked the machine code timed now (`codes`: {(problem, key): machine_code}); `old`'s suite summaries come along
    where every variant they ran is still that code, the runs' summaries where a record still carries their fields.
    Returns how many records kept theirs."""
    kept = 0
    for rec, prev, same, why in _carried(old, new, codes, "hardening_machine_code", "hardening_machine_code"):
        if same:
            rec.update({f: prev[f] for f in (*HARDENING_FIELDS, "hardening_machine_code") if f in prev})
            kept += 1
        else:
            log(f"[hardening] {rec['problem']}/{rec['variant']}: its recorded hardening is void ({why})")
    summaries = {}
    for name, s in (old.get("hardening") or {}).items():
        if name in TEST_SUITES:
            void = _changed_since(s.get("machine_code") or {}, codes)
            if void:
                log(f"[hardening] {s.get('suite', name)}: its recorded counts are void ({len(void)} variants built "
                    f"differently now, e.g. {void[0]})")
                continue
        elif not any(f in r for r in new["records"] for f in HARDENING_LOGS.get(name, ("",))[1]):
            continue
        summaries[name] = s
    if summaries:
        new["hardening"] = {**summaries, **new.get("hardening", {})}
    return kept


def carry_evidence(old: dict, new: dict, codes: dict) -> int:
    """Evidence and microbenchmarks outlive a bench run: each kernel record of `new` keeps `old`'s evidence, and the
    file its microbenchmark runs. Where the code timed now (`codes`) is not what `old` timed, the entries measured on
    the registered build no longer are (same_machine_code False, or None where it cannot be told) and say so.
    Returns how many records kept evidence."""
    import copy

    kept = 0
    for rec, prev, same, why in _carried(old, new, codes, "evidence", "machine_code"):
        entries = copy.deepcopy(prev["evidence"])
        if same is not True:
            for e in entries:
                if e.get("same_machine_code"):
                    e["same_machine_code"] = same
                    e["note"] = (f"measured on the build registered until the run of {old['env'].get('date', '?')[:10]}; "
                                 f"the registered build since: {why}")
        rec["evidence"] = entries
        kept += 1
    if old.get("microbenchmarks") and "microbenchmarks" not in new:
        new["microbenchmarks"] = old["microbenchmarks"]
    return kept


def carry_build_times(old: dict, new: dict, codes: dict) -> bool:
    """A bench run without a build stage keeps `old`'s `env.build_times` where every kernel it timed (`codes`) is the
    machine code those times built, no more and no fewer; the carried entry keeps the date of the run that measured
    it as "measured". Returns whether it was carried."""
    bt = (old.get("env") or {}).get("build_times")
    if not bt or new["env"].get("build_times"):
        return False
    mc = bt.get("machine_code") or {}
    if set(mc) != {f"{p}/{k}" for p, k in codes} or _changed_since(mc, codes):
        return False
    new["env"]["build_times"] = {**bt, "measured": bt.get("measured") or old["env"].get("date")}
    return True


def unclean(data: dict) -> list[str]:
    """Kernel records that do not meet the hardening bar: 0 memcheck errors, 0 racecheck hazards, 0 synccheck
    errors, large_tensor "ok" or "refused" (records without the fields are not judged); suites with failures."""
    bad = []
    for rec in data["records"]:
        name = f"{rec['problem']}/{rec['variant']}"
        for f in ("memcheck_errors", "racecheck_hazards", "synccheck_errors"):
            if f in rec and rec[f] != 0:
                bad.append(f"{name}: {f} = {rec[f]}")
        if "large_tensor" in rec and rec["large_tensor"] not in LARGE_TENSOR_OUTCOMES:
            bad.append(f"{name}: large_tensor = {rec['large_tensor']!r}")
    for suite in TEST_SUITES:
        s = (data.get("hardening") or {}).get(suite)
        if s and (s.get("failed") or s.get("errors")):
            bad.append(f"{s.get('suite', suite)}: {s.get('failed', 0)} failed, {s.get('errors', 0)} errors")
    return bad


_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)\b")


def pytest_summary(text: str) -> dict | None:
    """The counts of pytest's last summary line ("50 passed, 13 skipped in 83.83s"), or None without one."""
    for line in reversed(text.strip().splitlines()):
        if re.search(r"\b(passed|failed|error|errors|skipped)\b.* in [\d.]+s", line):
            counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
            for n, what in _PYTEST_COUNT.findall(line):
                counts["errors" if what.startswith("error") else what] = int(n)
            return counts
    return None


def suite_summary(suite: str, log_text: str, codes: dict, gpu: str | None = None, date: str | None = None) -> dict:
    """A GPU test suite's run as a record keeps it: its counts (from the pytest output), the GPU, the date and the
    machine code of every kernel variant it ran ({"problem/key": machine_code})."""
    counts = pytest_summary(log_text)
    if counts is None:
        raise ValueError(f"no pytest summary line in the {suite} output")
    return {"suite": suite, **counts, "gpu": gpu,
            "date": date or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine_code": {f"{p}/{k}": mc for (p, k), mc in sorted(codes.items())}}


def load_hardening_logs(dirs=None, sanitize=None, large_tensor=None) -> dict:
    """The hardening outputs of a device session: explicit paths, else the first of `dirs` that has each file
    (sanitize.json, large_tensor.json, and the pytest outputs gpu_tests.log, gpu_hardening.log).
    {"sanitize": {...} or None, "large_tensor": {...} or None, "gpu_tests": text or None,
    "gpu_hardening_tests": text or None, "paths": {...}}."""
    explicit = {"sanitize": sanitize, "large_tensor": large_tensor}
    search = [Path(d) for d in (dirs or [])]
    files = {**{k: f for k, (f, _) in HARDENING_LOGS.items()}, **{k: f for k, (f, _) in TEST_SUITES.items()}}
    out, paths = {}, {}
    for name, fname in files.items():
        path = Path(explicit[name]) if explicit.get(name) else next(
            (d / fname for d in search if (d / fname).exists()), None)
        if path and path.exists():
            out[name] = json.loads(path.read_text()) if name in HARDENING_LOGS else path.read_text()
        else:
            out[name] = None
        paths[name] = str(path) if out[name] is not None else None
    out["paths"] = paths
    return out


def suites_from_logs(logs: dict, codes: dict, gpu: str | None = None) -> dict:
    """The pytest outputs among `logs` (load_hardening_logs) as suite summaries, keyed as data["hardening"] keeps them."""
    out = {}
    for name, (_, suite) in TEST_SUITES.items():
        if logs.get(name):
            out[name] = suite_summary(suite, logs[name], codes, gpu=gpu)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m convfuse.results")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge-hardening", help="copy memcheck_errors, racecheck_hazards, synccheck_errors and "
                                               "large_tensor onto each kernel record, and the GPU suites' counts "
                                               "into the file's hardening summaries")
    m.add_argument("results", help="results/<gpu>.json to update")
    m.add_argument("--sanitize", help="the JSON of `python -m convfuse.sanitize --out`")
    m.add_argument("--large-tensor", help="large_tensor.json from tests/test_gpu_hardening.py")
    m.add_argument("--gpu-tests", help="pytest's output of tests/test_gpu_kernels.py (run from this tree)")
    m.add_argument("--gpu-hardening-tests", help="pytest's output of tests/test_gpu_hardening.py (run from this tree)")
    c = sub.add_parser("machine-code", help="compile every kernel variant a results file names and say, per "
                                            "machine-code key it carries, whether the working tree builds that code")
    c.add_argument("results", nargs="?", help="default: every results/*.json")
    a = ap.parse_args(argv)
    if a.cmd == "machine-code":
        bad = 0
        for path in [a.results] if a.results else sorted(RESULTS_DIR.glob("*.json")):
            for row in check_machine_code(load(path)):
                bad += row["same"] is not True
                print(f"{path}: {row['where']:28s} {row['variant']:32s} "
                      f"{ {True: 'same', False: 'DIFFERENT', None: 'unknown'}[row['same']]:9s} {row['why']}")
        return 1 if bad else 0
    if not (a.sanitize or a.large_tensor or a.gpu_tests or a.gpu_hardening_tests):
        ap.error("give --sanitize, --large-tensor, --gpu-tests and/or --gpu-hardening-tests")
    try:
        logs = {}
        for name, path in (("sanitize", a.sanitize), ("large_tensor", a.large_tensor), ("gpu_tests", a.gpu_tests),
                           ("gpu_hardening_tests", a.gpu_hardening_tests)):
            if path:
                if not Path(path).exists():
                    raise FileNotFoundError(f"{path}: no such file")
                logs[name] = Path(path).read_text()
                if name in HARDENING_LOGS:
                    logs[name] = json.loads(logs[name])
        data = load(a.results)
        from . import registry as R

        kernels = [R.get(r["problem"], r["variant"]) for r in data["records"]
                   if any(v.key == r["variant"] and v.problem == r["problem"] for v in R.kernel_variants())]
        codes = machine_codes(kernels)
        logs.update(suites_from_logs(logs, codes, gpu=data["env"].get("gpu")))
        apply_hardening(data, logs, strict=True, codes=codes)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    save(data, a.results)
    print(f"[hardening] wrote {a.results}")
    for b in unclean(data):
        print(f"[hardening] NOT CLEAN: {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
