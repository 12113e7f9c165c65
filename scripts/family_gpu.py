"""The family on a GPU, in one run: generate every problem's kernel, build all in parallel, verify each against
float64, time it beside eager, eager with TF32 off, torch.compile and cuDNN's fused graph of the same model, write
JSON, print a table last.

    python scripts/family_gpu.py --out OUT_DIR [--problems 1,32,kb48,conv3d] [--designs tf32,tf32w,3xtf32w] [--jobs N]
                                 [--n-timed 25] [--no-full-shape] [--no-time] [--dry-run]

Each problem is built in each template design (convfuse/family/template.py, DESIGNS: tf32 on mma.sync, fp32 on CUDA
cores, 3xtf32 on mma.sync with split operands: the FP32 class on tensor cores; tf32w and 3xtf32w the same two classes
in the second mma.sync template, the study's step 04 made generic; tf32h that template's pipeline on wgmma, sm_90a only
(an H100 or H200) and 2-D problems only: the 3-D ones are not planned in it) and verified in that design's precision
class. OUT_DIR gets sources/<key>_<design>.cu and plan.json (what is built: also with --dry-run, which needs no GPU and stops there),
then family_<gpu-slug>.json: the environment and, per problem, per design the build seconds, the verification's
checks and worst errors, cuDNN's fused graph (convfuse/family/cudnn_graph.py: the plan kept, its verification in the
TF32 class, or why there is none: refused with the op, skipped without nvidia-cudnn-frontend), and one interleaved
timing of every design beside the references (median, p20, p80) with the ratios. A problem that fails to build or
verify keeps its row, with the reason; exit status 1 when any did (cuDNN's graph is a reference: its refusal is not). Verification and timing: convfuse/family/run.py.
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # run from anywhere

from convfuse.family import models as M  # noqa: E402
from convfuse.family import run as F  # noqa: E402


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="directory for the sources, plan.json and the results")
    ap.add_argument("--problems", default="", help="comma-separated keys or KernelBench numbers (default: all nine)")
    ap.add_argument("--designs", default=",".join(F.TP.DESIGNS), help="template designs (default: all)")
    ap.add_argument("--jobs", type=int, default=None, help="parallel builds (default: one per core, at most nine)")
    ap.add_argument("--n-timed", type=int, default=25, help="timed calls per kernel (>= 20: the timing protocol)")
    ap.add_argument("--no-full-shape", action="store_true", help="verify on the odd shapes only")
    ap.add_argument("--no-time", action="store_true", help="build and verify, do not time")
    ap.add_argument("--dry-run", action="store_true", help="generate and write the sources only (no GPU needed)")
    ap.add_argument("--into", type=Path, default=None,
                    help="a family record of this GPU to add these problems to (a call cut short: the rest in a "
                         "second call); its other problems are kept, each under the run that measured it")
    a = ap.parse_args(argv)
    try:
        a.keys = [M.get(k.strip()).key for k in a.problems.split(",") if k.strip()] or list(M.FAMILY)
    except ValueError as e:
        ap.error(str(e))
    a.design_list = [d.strip() for d in a.designs.split(",") if d.strip()]
    unknown = [d for d in a.design_list if d not in F.TP.DESIGNS]
    if unknown or not a.design_list:
        ap.error(f"--designs: unknown {unknown}; known: {', '.join(F.TP.DESIGNS)}")
    if a.n_timed < 20 and not a.no_time:
        ap.error("--n-timed: the timing protocol takes at least 20 timed calls")
    return a


def merge_base(into: Path | None, env: dict) -> tuple[dict, list]:
    """(records, runs) to start from: empty, or the problems and runs of `into`, a family record of the same GPU (its
    slug); ValueError for another GPU's or a file that is no family record."""
    if into is None:
        return {}, []
    prev = json.loads(into.read_text())
    if not isinstance(prev.get("env"), dict) or not isinstance(prev.get("records"), dict):
        raise ValueError(f"{into} is not a family record (env and records by problem)")
    if prev["env"].get("slug") != env["slug"]:
        raise ValueError(f"{into} is the record of {prev['env'].get('gpu')}, this GPU is {env['gpu']}: a record "
                         "holds one GPU's runs")
    runs = prev.get("runs") or [{"date": prev["env"].get("date"), "driver": prev["env"].get("driver"),
                                 "problems": list(prev["records"])}]
    return dict(prev["records"]), [dict(r) for r in runs]


def main(argv=None) -> int:
    a = parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    planned = F.plan(a.keys, a.design_list)
    F.write_sources(planned, a.out)
    print(f"[family] {len(planned)} sources under {a.out / 'sources'}", flush=True)
    if a.dry_run:
        return 0
    import torch

    from convfuse import bench, results

    cc = "".join(map(str, torch.cuda.get_device_capability()))
    other = [d for d in a.design_list if F.TP.arch_specific(d) and f"{cc}a" not in F.TP.DESIGNS[d].archs]
    if other:   # an sm_90a design on an A100 (or a later GPU): its machine code would not load there
        print(f"[family] not on this GPU (sm_{cc}): {', '.join(other)} (built for "
              f"{', '.join('sm_' + x for d in other for x in F.TP.DESIGNS[d].archs)} only)", flush=True)
        planned = {k: p for k, p in planned.items() if p.design not in other}
        a.design_list = [d for d in a.design_list if d not in other]
    env = bench.environment()
    path = a.out / f"family_{env['slug']}.json"
    try:
        records, run_log = merge_base(a.into, env)
    except ValueError as e:
        print(f"[family] --into: {e}", flush=True)
        return 2
    this_run = {"date": env["date"], "driver": env.get("driver"), "problems": []}
    run_log.append(this_run)

    t0 = time.perf_counter()
    build_s = F.build_all([(p.key, p.design) for p in planned.values()], jobs=a.jobs)
    wall = time.perf_counter() - t0

    def write():   # after every problem: a call cut short still brings back the problems it finished
        tmp = path.with_suffix(".tmp")   # then renamed: a kill mid-write leaves the last whole record
        tmp.write_text(json.dumps({"env": env, "build_wall_s": round(wall, 1), "records": records, "runs": run_log},
                                  indent=1, default=str))
        tmp.replace(path)

    print(f"[family] built {len(build_s)} of {len(planned)} in {wall:.1f} s", flush=True)
    for key in a.keys:
        t_prob = time.perf_counter()
        prob = M.get(key)
        first = next(p for p in planned.values() if p.key == key)
        rec = records[key] = {"kernelbench_id": first.kernelbench_id, "summary": first.summary, "designs": {},
                              "measured": env["date"]}
        for r in run_log:   # this run measures the problem now: an earlier run's entry for it goes
            r["problems"] = [k for k in r["problems"] if k != key]
        this_run["problems"].append(key)
        try:
            model = prob.make_model(seed=0, device="cuda")
            runs, truths = {}, {}   # truths: each check's input and float64 truth, made once for all designs
            for d in a.design_list:
                name = F.name(key, d)
                if name not in planned:
                    continue   # a design that does not take the problem's dims (tf32h: 2-D only), not planned
                drec = rec["designs"][d] = {"precision": F.TP.precision(d), "build_s": build_s.get(name)}
                if name not in build_s:
                    drec["error"] = "build failed"
                    continue
                runs[d] = F.fused(model, d)
                drec.update(F.verify(prob, model, runs[d], full_shape=not a.no_full_shape, truths=truths))
            cudnn, rec["cudnn_fused"] = F.cudnn_fused(prob, model, full_shape=not a.no_full_shape, truths=truths)
            del truths
            if runs and not a.no_time:   # cuDNN's graph is timed once it verified, as ours are
                rec.update(F.time_problem(prob, model, runs, a.n_timed,
                                          cudnn=cudnn if rec["cudnn_fused"].get("verified") else None))
            del cudnn   # its graphs' workspaces go before the next problem's
        except Exception as e:   # one problem's failure keeps the others' measurements
            rec["error"] = f"{type(e).__name__}: {str(e)[-2000:]}"
        torch.cuda.empty_cache()
        write()
        print(f"[family] {key}: {time.perf_counter() - t_prob:.1f} s", flush=True)
    print(f"[family] wrote {path}\n")
    print(F.table(records))
    ok = all("error" not in r and r["designs"] and all(d.get("verified") for d in r["designs"].values())
             for r in (records[k] for k in a.keys))   # this run's problems (--into's others were judged in theirs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
