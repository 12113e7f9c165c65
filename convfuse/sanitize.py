"""compute-sanitizer over every kernel variant: `make sanitize` on a GPU box.

Every kernel variant of both problems (registry.kernel_variants(), so new variants are covered without a
change here) runs under `compute-sanitizer --tool memcheck`, `racecheck` and `synccheck`: a child
process loads the cached extensions and calls each variant on the small odd shapes of problems.py (and
its sanitize_shapes, for paths the odd shapes miss), and the parent reads the tool's summary line
("ERROR SUMMARY: N errors", "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"). The cost
of a job is process start, torch import and the sanitizer's setup, not the kernels (microseconds at
these shapes), so by default one child per tool and problem calls all of that problem's variants, and
the jobs run in parallel (one GPU, many cores). A job that is not clean — a nonzero count, a failed
call, a timeout — cannot say which variant it was, so each of its variants is re-run alone (`--group
variant` does that from the start). The result, a JSON file:

    {"env": {...}, "conv2d": {"04_mma_tf32": {"memcheck_errors": 0, "racecheck_hazards": 0,
                                             "synccheck_errors": 0, "command": "...", ...}, ...}, ...}

What a child launches: only our kernels. Inputs, parameters and the NaN-poisoned output are made on the
CPU and copied over; the epilogue variants (01, 02) get their conv output computed on the CPU too, so no
cuDNN or PyTorch kernel runs under the tool and every reported error is ours. Each tensor is its own
cudaMalloc (PYTORCH_NO_CUDA_MEMORY_CACHING=1): inside the caching allocator's big segments an
out-of-bounds access would land in valid memory and memcheck could not see it. memcheck and synccheck
run every odd shape (the boundary cases are what memcheck is for); racecheck, the slow one, the one with
the fewest outputs; all three the problem's sanitize_shapes. The child also compares each output with
eager PyTorch on the CPU, so a count of 0 is known to come from kernels that ran and computed the right
thing. A variant this GPU cannot run (registry: needs_cc, e.g. sm_90a-only code elsewhere than on an
H100/H200) is recorded as skipped.

Each variant's entry carries the machine code it checked (results.machine_code: the cubins' and their SASS's hashes),
and the counts land on this GPU's record (results/<gpu-slug>.json: results.apply_hardening) where that is the code the
record's kernels are built to, so a later edit that changes the code voids them and one that does not keeps them.
Without a record for this GPU yet, only the JSON is written (`--out`; `make bench` then takes it up with
`--hardening-dir`).

    python -m convfuse.sanitize [--record results/<gpu>.json] [--out DIR/sanitize.json] [--jobs N] [--logs DIR]
"""
from __future__ import annotations

import argparse
import datetime as _dt
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from . import problems as P
from . import registry as R

TOOLS = ("memcheck", "racecheck", "synccheck")
OK_MARK = "CF_SANITIZE_OK"
SKIP_MARK = "CF_SANITIZE_SKIP"
FAIL_MARK = "CF_SANITIZE_FAIL"
CHILD_ENV = {
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "1",   # one cudaMalloc per tensor: memcheck sees its exact bounds
    "CUDA_MODULE_LOADING": "LAZY",           # load (and instrument) only the modules that are used
    "OMP_NUM_THREADS": "1",                  # the CPU reference is tiny; many children share the cores
}

_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")


# --- parsing ---------------------------------------------------------------------------------------
def parse_summary(text: str, tool: str) -> dict:
    """The counts from a compute-sanitizer run's output; None where the summary line is missing.

    memcheck, synccheck (and initcheck): {"errors": N} from "ERROR SUMMARY: N errors".
    racecheck: {"hazards": N, "errors": E, "warnings": W} from
    "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"; without that line (a tool version
    that only prints ERROR SUMMARY), hazards = errors = that count.
    """
    m = _ERROR_SUMMARY.search(text)
    errors = int(m.group(1)) if m else None
    if tool != "racecheck":
        return {"errors": errors}
    r = _RACE_SUMMARY.search(text)
    if r:
        return {"hazards": int(r.group(1)), "errors": int(r.group(2)), "warnings": int(r.group(3))}
    return {"hazards": errors, "errors": errors, "warnings": None}


def child_reports(text: str) -> dict:
    """{variant: report} from the child's marker lines: OK (with its check), SKIP or FAIL."""
    out = {}
    for line in text.splitlines():
        for mark, kind in ((OK_MARK, "ok"), (SKIP_MARK, "skipped"), (FAIL_MARK, "failed")):
            if line.startswith(mark + " "):
                try:
                    rep = json.loads(line[len(mark) + 1:])
                except json.JSONDecodeError:
                    continue
                if "variant" in rep:
                    out[rep["variant"]] = {"kind": kind, **rep}
    return out


# --- what runs ---------------------------------------------------------------------------------------
def _out_numel(prob: P.Problem, shape) -> int:
    n = 1
    for s in prob.output_shape(shape):
        n *= s
    return n


def smallest_odd_shape(prob: P.Problem) -> tuple:
    """The odd shape with the fewest output elements: the cheapest one for racecheck."""
    return min(prob.odd_shapes, key=lambda s: _out_numel(prob, s))


def shapes_for(prob: P.Problem, tool: str) -> list[tuple]:
    odd = [smallest_odd_shape(prob)] if tool == "racecheck" else [tuple(s) for s in prob.odd_shapes]
    return odd + [tuple(s) for s in prob.sanitize_shapes]


def find_sanitizer() -> str | None:
    if os.environ.get("COMPUTE_SANITIZER"):
        return os.environ["COMPUTE_SANITIZER"]
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    from . import build

    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = build.find_nvcc()
    if nvcc:
        homes.append(str(Path(nvcc).resolve().parent.parent))
    for h in filter(None, homes):
        for p in (Path(h) / "bin" / "compute-sanitizer", Path(h) / "compute-sanitizer" / "compute-sanitizer"):
            if p.exists():
                return str(p)
    found = sorted(glob.glob("/usr/local/cuda*/bin/compute-sanitizer") +
                   glob.glob("/usr/local/cuda*/compute-sanitizer/compute-sanitizer"))
    return found[-1] if found else None


def tool_flags(tool: str, help_text: str = "") -> list[str]:
    """Options per tool. memcheck: --padding puts a guard zone after every allocation, so a read just
    past a tensor cannot land in the next one unseen; added only where `--help` lists it."""
    if tool == "memcheck" and "--padding" in help_text:
        return ["--padding", "256"]
    return []


def child_cmd(problem: str, keys, shapes) -> list[str]:
    keys = [keys] if isinstance(keys, str) else list(keys)
    cmd = [sys.executable, "-m", "convfuse.sanitize", "--child", problem, ",".join(keys)]
    for s in shapes:
        cmd += ["--shape", ",".join(map(str, s))]
    return cmd


def job_cmd(sanitizer: str, tool: str, problem: str, keys, help_text: str = "") -> list[str]:
    shapes = shapes_for(P.get(problem), tool)
    return [sanitizer, "--tool", tool, *tool_flags(tool, help_text), *child_cmd(problem, keys, shapes)]


def command_text(cmd: list[str]) -> str:
    env = " ".join(f"{k}={v}" for k, v in CHILD_ENV.items())
    return f"{env} {shlex.join(cmd)}"


# --- the child: one or more variants of one problem, one tool (it does not know which wraps it) ------
def _check_one(v, prob, shapes, mod) -> dict:
    import torch

    report = {"variant": v.key, "shapes": [], "max_abs_vs_eager_cpu": 0.0}
    model = prob.make_model(seed=0)                   # CPU: parameters are copied, not computed, on the GPU
    w, b, p = P.conv_params(model)
    wd, bd, pd = (t.detach().contiguous().cuda() for t in (w, b, p))
    for i, shape in enumerate(shapes):
        x = prob.make_input(shape, seed=1 + i, dist="randn")
        want = model(x)
        out = torch.full(prob.output_shape(shape), float("nan")).cuda()   # poisoned: unwritten shows
        if v.kind == "epilogue":                      # the conv from the CPU: no cuDNN under the tool
            conv = P.eager_conv(prob, x, w, None).contiguous().cuda()
            R.epilogue_only_runner(v, mod)(conv, bd, pd, out)
        else:
            R.kernel_runner(v, mod)(x.cuda(), wd, bd, pd, out=out)
        torch.cuda.synchronize()
        got = out.cpu()
        err = (got - want).abs().max().item() if got.numel() else 0.0
        if not torch.isfinite(got).all():
            err = float("inf")
        report["shapes"].append(list(shape))
        report["max_abs_vs_eager_cpu"] = max(report["max_abs_vs_eager_cpu"], err)
    return report


def child(problem: str, keys, shapes) -> int:
    """Call each variant once per shape; one marker line per variant: OK (with the check against eager
    on the CPU), SKIP (this GPU cannot run it) or FAIL (the call raised)."""
    import torch

    from . import build

    prob = P.get(problem)
    cc = torch.cuda.get_device_capability()
    for key in keys:
        v = R.get(problem, key)
        runs_on = getattr(v, "runs_on", None)
        if runs_on is not None and not runs_on(cc):
            print(f"{SKIP_MARK} " + json.dumps({"variant": key, "reason": f"{problem}/{key} cannot run on compute "
                                                f"capability {cc[0]}.{cc[1]} ({torch.cuda.get_device_name()})"}),
                  flush=True)
            continue
        try:
            mod = build.build(v, log=lambda m: None)      # the parent built it: a cache hit, no compiler
            with torch.no_grad():
                report = _check_one(v, prob, shapes, mod)
        except Exception as e:                             # the next variant still gets its turn
            print(f"{FAIL_MARK} " + json.dumps({"variant": key, "error": f"{type(e).__name__}: {e}"[-1500:]}),
                  flush=True)
            continue
        print(f"{OK_MARK} " + json.dumps(report), flush=True)
    return 0


# --- the parent ----------------------------------------------------------------------------------------
def run_job(cmd: list[str], timeout: float) -> tuple[int | None, str, float]:
    """(returncode or None on timeout, combined output, seconds). The child gets its own process group so
    a timeout kills the sanitizer and its target together."""
    env = {**os.environ, **CHILD_ENV}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=R.ROOT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        rc = None
    return rc, out or "", time.perf_counter() - t0


def _count(tool: str, counts: dict):
    return counts["hazards"] if tool == "racecheck" else counts["errors"]


def job_results(tool: str, keys, rc: int | None, text: str, seconds: float) -> tuple[dict, bool]:
    """Per variant of one job: {key: {"status", "counts", "seconds", ...}}, and whether the job is
    conclusive for every variant in it. A job over several variants is conclusive only when it is clean
    (count 0, every variant reported): a nonzero count cannot be told apart between them, so the caller
    re-runs each variant alone."""
    counts = parse_summary(text, tool)
    reports = child_reports(text)
    total = _count(tool, counts)
    out = {}
    for key in keys:
        rep = reports.get(key)
        res = {"seconds": round(seconds, 1), "returncode": rc, "variants_in_job": len(keys)}
        if rc is None:
            res["status"] = "timeout"
        elif rep is None:
            res["status"] = "child did not finish (see log_tail)"
        elif rep["kind"] == "skipped":
            res["status"] = "skipped: " + rep.get("reason", "")
        elif rep["kind"] == "failed":
            res["status"] = "kernel call failed: " + rep.get("error", "")
        elif total is None:
            res["status"] = "no sanitizer summary (see log_tail)"
        else:
            res["status"] = "ok"
        if res["status"] == "ok":
            res["counts"] = counts
            res["max_abs_vs_eager_cpu"] = rep.get("max_abs_vs_eager_cpu")
            res["shapes"] = rep.get("shapes")
        else:
            res["counts"] = {k: None for k in counts}
        clean = res["status"] == "ok" and not total
        if not clean and not res["status"].startswith("skipped"):
            res["log_tail"] = text[-4000:]
        out[key] = res
    conclusive = len(keys) == 1 or (rc is not None and total == 0 and
                                    all(r["status"] == "ok" or r["status"].startswith("skipped")
                                        for r in out.values()))
    return out, conclusive


def assemble(results: dict, commands: dict, codes: dict) -> dict:
    """{(problem, key): {tool: result}} -> {problem: {key: record}} in the results-file field names."""
    out: dict = {}
    for (problem, key), per_tool in results.items():
        rec: dict = {}
        for t, r in per_tool.items():
            c = {"errors": None, "hazards": None, "warnings": None, **r.get("counts", {})}
            if t == "racecheck":
                rec.update(racecheck_hazards=c["hazards"], racecheck_errors=c["errors"],
                           racecheck_warnings=c["warnings"])
            else:
                rec[f"{t}_errors"] = c["errors"]
        cmds = commands[(problem, key)]
        rec["command"] = " ; ".join(cmds[t] for t in per_tool)
        rec["commands"] = {t: cmds[t] for t in per_tool}
        rec["status"] = {t: r["status"] for t, r in per_tool.items()}
        rec["seconds"] = {t: r["seconds"] for t, r in per_tool.items()}
        rec["shapes"] = {t: r.get("shapes") for t, r in per_tool.items()}
        errs = [r["max_abs_vs_eager_cpu"] for r in per_tool.values() if r.get("max_abs_vs_eager_cpu") is not None]
        rec["max_abs_vs_eager_cpu"] = max(errs) if errs else None
        skipped = [r["status"] for r in per_tool.values() if r["status"].startswith("skipped")]
        if skipped:
            rec["skipped"] = skipped[0][len("skipped: "):]
        tails = {t: r["log_tail"] for t, r in per_tool.items() if "log_tail" in r}
        if tails:
            rec["log_tail"] = tails
        rec["machine_code"] = codes[(problem, key)]
        out.setdefault(problem, {})[key] = rec
    return out


def _environment(sanitizer: str) -> dict:
    import torch

    env = {"date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "torch": torch.__version__, "cuda": torch.version.cuda, "sanitizer": sanitizer}
    try:
        v = subprocess.run([sanitizer, "--version"], capture_output=True, text=True, timeout=60).stdout
        env["sanitizer_version"] = " ".join(v.split())[-120:]
    except Exception as e:   # the run itself will say more
        env["sanitizer_version"] = f"unknown ({e})"
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
        env["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
    env["child_env"] = dict(CHILD_ENV)
    return env


def _build(variants, log) -> dict:
    """Build (or find cached) every extension before any child starts; {(problem, key): error} for the
    ones that fail, so one broken variant does not stop the others being checked."""
    from . import build

    try:
        build.build_all(variants, log=log)
        return {}
    except build.BuildError:
        failed = {}
        for v in variants:
            try:
                build.build(v, log=lambda m: None)
            except build.BuildError as e:
                failed[(v.problem, v.key)] = str(e)[-2000:]
        return failed


def plan(variants, tools, group: str) -> list[tuple[str, str, tuple]]:
    """Jobs as (tool, problem, keys), racecheck first (the slowest). group="problem": one job per tool and
    problem, all its variants in one child (one process start, one torch import, one sanitizer setup for
    several variants); group="variant": one job per variant and tool."""
    jobs = []
    for tool in sorted(tools, key=lambda t: t != "racecheck"):
        by_problem: dict = {}
        for v in variants:
            by_problem.setdefault(v.problem, []).append(v.key)
        for problem, keys in by_problem.items():
            if group == "problem":
                jobs.append((tool, problem, tuple(keys)))
            else:
                jobs += [(tool, problem, (k,)) for k in keys]
    return jobs


def select(problems=None, keys=None) -> list:
    """The kernel variants a run checks: every registered one, filtered by problem and key."""
    return [v for v in R.kernel_variants()
            if (problems is None or v.problem in problems) and (keys is None or v.key in keys)]


def run(out_path=None, problems=None, keys=None, tools=TOOLS, jobs=None, timeout=240.0,
        logs_dir=None, sanitizer=None, group="problem", record=None, log=print) -> dict:
    """Sanitize the selected variants; the result (the JSON the module docstring shows) is returned, written to
    `out_path` if given, and merged into `record` (a results file; None: none) where it exists."""
    from . import results as RS

    sanitizer = sanitizer or find_sanitizer()
    if sanitizer is None:
        raise FileNotFoundError("compute-sanitizer not found: put it on PATH, set CUDA_HOME, or set "
                                "COMPUTE_SANITIZER to its path")
    variants = select(problems, keys)
    if not variants:
        raise ValueError("no kernel variant matches the --problem/--variant filters")
    t0 = time.perf_counter()
    env = _environment(sanitizer)
    try:
        help_text = subprocess.run([sanitizer, "--help"], capture_output=True, text=True, timeout=60).stdout
    except Exception:
        help_text = ""
    build_failed = _build(variants, log)
    codes = RS.machine_codes(variants)
    results: dict = {(v.problem, v.key): {} for v in variants}
    commands: dict = {(v.problem, v.key): {} for v in variants}
    for (problem, key), err in build_failed.items():
        for tool in tools:
            results[(problem, key)][tool] = {"status": "build failed", "seconds": 0.0, "counts": {},
                                             "log_tail": err}
            commands[(problem, key)][tool] = "(not run: the build failed)"
    buildable = [v for v in variants if (v.problem, v.key) not in build_failed]
    todo = plan(buildable, tools, group)
    workers = max(1, min(jobs or os.cpu_count() or 4, len(todo) or 1))
    log(f"[sanitize] {sanitizer}; {len(buildable)} variants x {len(tools)} tools in {len(todo)} jobs "
        f"({'one per tool and problem' if group == 'problem' else 'one per variant and tool'}), "
        f"{workers} at a time, timeout {timeout:.0f} s each")
    if logs_dir:
        Path(logs_dir).mkdir(parents=True, exist_ok=True)
    done = 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        def submit(tool, problem, ks):
            cmd = job_cmd(sanitizer, tool, problem, ks, help_text)
            return pool.submit(run_job, cmd, timeout), (tool, problem, ks, cmd)

        pending = dict(submit(*j) for j in todo)
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                tool, problem, ks, cmd = pending.pop(f)
                rc, text, dt = f.result()
                done += 1
                name = f"{problem}/{ks[0]}" if len(ks) == 1 else f"{problem} ({len(ks)} variants)"
                if logs_dir:
                    tag = ks[0] if len(ks) == 1 else "all"
                    (Path(logs_dir) / f"{problem}_{tag}_{tool}.log").write_text(text)
                per_key, conclusive = job_results(tool, ks, rc, text, dt)
                c = parse_summary(text, tool)
                what = (f"{c.get('hazards')} hazards ({c.get('errors')} errors, {c.get('warnings')} warnings)"
                        if tool == "racecheck" else f"{c.get('errors')} errors")
                if not conclusive:
                    log(f"[sanitize {done}] {name} {tool}: {what}, rc={rc} ({dt:.1f} s): not clean, "
                        f"so each variant again alone")
                    pending.update(submit(tool, problem, (k,)) for k in ks)
                    continue
                for k, r in per_key.items():
                    results[(problem, k)][tool] = r
                    commands[(problem, k)][tool] = command_text(cmd)
                status = {r["status"] for r in per_key.values()} - {"ok"}
                log(f"[sanitize {done}] {name} {tool}: {what}"
                    + (f"; {'; '.join(sorted(status))[:300]}" if status else "") + f" ({dt:.1f} s)")
    data = assemble(results, commands, codes)
    env.update(jobs=workers, group=group, timeout_s=timeout, wall_s=round(time.perf_counter() - t0, 1),
               tools=list(tools))
    merged = {"env": env, **data}
    if out_path:
        out_path = Path(out_path)
        old = json.loads(out_path.read_text()) if out_path.exists() else {}
        if problems is None and keys is None:
            old = {}                           # a full run replaces the file; a partial one updates its rows
        merged = {**{k: v for k, v in old.items() if k != "env"}, "env": env}
        for problem, recs in data.items():
            merged[problem] = {**merged.get(problem, {}), **recs}
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(merged, indent=1) + "\n")
        log(f"[sanitize] wrote {out_path} in {env['wall_s']:.0f} s")
    print_table(data, log=log)
    if record is not None:
        record = Path(record)
        if record.exists():
            rec_data = RS.load(record)
            RS.apply_hardening(rec_data, {"sanitize": {"env": env, **data}}, codes=codes,
                               log=lambda m: log(m.replace("[hardening]", "[sanitize]")))
            RS.save(rec_data, record)
            log(f"[sanitize] counts merged into {record}")
        else:
            log(f"[sanitize] no record at {record} yet: the counts are only in the JSON "
                "(`python -m convfuse bench --hardening-dir` takes them up)")
    return merged


def print_table(data: dict, log=print) -> None:
    log("problem | variant | memcheck_errors | racecheck_hazards | synccheck_errors | max_abs_vs_eager_cpu")
    for problem, recs in data.items():
        if problem == "env":
            continue
        for key, r in recs.items():
            log(f"{problem} | {key} | {r.get('memcheck_errors')} | {r.get('racecheck_hazards')} | "
                f"{r.get('synccheck_errors')} | {r.get('max_abs_vs_eager_cpu')}"
                + (f" | skipped: {r['skipped']}" if r.get("skipped") else ""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m convfuse.sanitize", description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", help="the results file to merge the counts into (default: this GPU's, "
                                      "results/<gpu-slug>.json)")
    ap.add_argument("--out", help="also write the whole result as JSON here (per variant, with commands and shapes)")
    ap.add_argument("--problem", action="append", help="conv2d or conv3d (default: both)")
    ap.add_argument("--variant", action="append", help="variant keys (default: every kernel variant)")
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=None, help="parallel child processes (default: cores)")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per job (default: %(default)s)")
    ap.add_argument("--group", choices=("problem", "variant"), default="problem",
                    help="one child per tool and problem (default; a job that is not clean is re-run per "
                         "variant) or one per variant and tool")
    ap.add_argument("--logs", help="keep each job's full sanitizer output in this directory")
    ap.add_argument("--sanitizer", help="path of compute-sanitizer (default: PATH, CUDA_HOME)")
    ap.add_argument("--child", nargs=2, metavar=("PROBLEM", "VARIANT"), help=argparse.SUPPRESS)
    ap.add_argument("--shape", action="append", default=[], help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        shapes = [tuple(int(s) for s in sh.split(",")) for sh in a.shape]
        return child(a.child[0], a.child[1].split(","), shapes or shapes_for(P.get(a.child[0]), "memcheck"))
    import torch

    if not torch.cuda.is_available():
        print("error: `make sanitize` needs a CUDA GPU and compute-sanitizer", file=sys.stderr)
        return 2
    try:
        from . import results as RS

        run(a.out, problems=a.problem, keys=a.variant, tools=tuple(t for t in a.tools.split(",") if t),
            jobs=a.jobs, timeout=a.timeout, logs_dir=a.logs, sanitizer=a.sanitizer, group=a.group,
            record=a.record or RS.device_path())
    except (FileNotFoundError, ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
