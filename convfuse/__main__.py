"""python -m convfuse <command>: the one command line of the study and the library (`<command> --help` for each).

Study: bench, verify, build, profile, sanitize, results, specs, predict, readme, report. Library: ops (the operators and
the kernel fuse() picks per recorded GPU), fuse (fuse(model) timed beside eager and torch.compile on this GPU).
"""
from __future__ import annotations

import argparse
import importlib
import sys

# commands that are a module's own command line, handed the rest of the arguments (its --help too)
PASSTHROUGH = {
    "profile": ("convfuse.profile", "Nsight Compute: DRAM bytes and time per kernel, into this GPU's record"),
    "sanitize": ("convfuse.sanitize", "compute-sanitizer memcheck, racecheck, synccheck on every kernel variant"),
    "results": ("convfuse.results", "the record's machine-code keys and hardening summaries (see its --help)"),
}


def _problem(key: str) -> str:
    from . import problems as P

    if key not in P.PROBLEMS:
        raise argparse.ArgumentTypeError(f"unknown problem {key!r}; known: {', '.join(P.PROBLEMS)}")
    return key


def _variant(key: str) -> str:
    """A key of the registry (any problem's): a typo names the valid ones."""
    from . import registry as R

    known = list(dict.fromkeys(v.key for v in R.VARIANTS))
    if key not in known:
        import difflib

        near = difflib.get_close_matches(key, known, n=3)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        raise argparse.ArgumentTypeError(f"unknown variant {key!r}{hint}; known: {', '.join(known)}")
    return key


def _check_passthrough(args: list[str]) -> None:
    """--problem and --variant of a passed-through command, checked against the registry before its module runs."""
    for flag, check in (("--problem", _problem), ("--variant", _variant)):
        for i, a in enumerate(args):
            if a == flag and i + 1 < len(args):
                check(args[i + 1])
            elif a.startswith(flag + "="):
                check(a.split("=", 1)[1])


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m convfuse", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="command")
    b = sub.add_parser("bench", help="build, verify and time every variant; write results/<gpu>.json")
    b.add_argument("--problem", action="append", type=_problem, help="conv2d or conv3d (default: both)")
    b.add_argument("--variant", action="append", type=_variant, help="variant keys (default: all)")
    b.add_argument("--out", help="results path (default: results/<gpu-slug>.json)")
    b.add_argument("--rounds", type=int, default=None, help="timed calls per variant (default 25)")
    b.add_argument("--no-odd", action="store_true", help="skip the odd-shape verification")
    b.add_argument("--build-times", help="a JSON from `python -m convfuse.build --timing` to keep in env")
    b.add_argument("--hardening-dir", action="append", help="where to look for sanitize.json and "
                   "large_tensor.json (their fields are copied onto the records)")
    v = sub.add_parser("verify", help="run the verification protocol on the GPU and print a table")
    v.add_argument("--problem", action="append", type=_problem)
    v.add_argument("--variant", action="append", type=_variant)
    v.add_argument("--scales", action="store_true",
                   help="the scale sweep instead (issue 66): inputs 1e-6 to 1e3, bias kept and zeroed, on two odd shapes, "
                        "each kernel beside eager and eager FP32 on the same input; marks the scales its class states")
    bl = sub.add_parser("build", help="build the kernel extensions (in parallel) and report times")
    bl.add_argument("--problem", action="append", type=_problem)
    bl.add_argument("--variant", action="append", type=_variant)
    for name, (_, what) in PASSTHROUGH.items():
        sub.add_parser(name, help=what, add_help=False)
    s = sub.add_parser("specs", help="FLOPs, bytes, floors and predictions for every GPU (no GPU needed)")
    s.add_argument("--problem", action="append", type=_problem)
    pr = sub.add_parser("predict", help="write the traffic model's prediction of every variant on a datasheet GPU "
                        "(results/predictions/<gpu>.json): commit it before that GPU's first record")
    pr.add_argument("--gpu", required=True, help="a datasheet key of convfuse.traffic (h100-sxm, a100-80gb, ...)")
    pr.add_argument("--out", help="default: results/predictions/<gpu>.json")
    sub.add_parser("readme", help="rewrite README.md's progress table and figure from every recorded run")
    r = sub.add_parser("report", help="execute the notebooks and render report/ (recorded mode off-GPU)")
    r.add_argument("--notebook", action="append", help="only these notebooks (stems)")
    o = sub.add_parser("ops", help="list the torch.ops.convfuse operators and the kernel fuse() picks on each "
                       "recorded GPU (no GPU needed)")
    o.add_argument("--problem", action="append", type=_problem)
    f = sub.add_parser("fuse", help="time fuse(model), eager and compiled, beside eager and torch.compile(model) "
                       "in one run on this GPU")
    f.add_argument("--problem", action="append", type=_problem)
    f.add_argument("--precision", action="append", choices=("tf32", "fp32"), help="default: both")
    f.add_argument("--rounds", type=int, default=25, help="timed calls of each (default 25)")
    f.add_argument("--out", help="the JSON record (default results/fuse/<gpu-slug>.json)")
    return ap


def main(argv=None) -> int:
    ap = parser()
    a, rest = ap.parse_known_args(argv)
    if a.cmd not in PASSTHROUGH and rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")

    from . import build as B

    try:
        if a.cmd in PASSTHROUGH:
            _check_passthrough(rest)
            return importlib.import_module(PASSTHROUGH[a.cmd][0]).main(rest) or 0
        if a.cmd == "bench":
            from . import bench

            kw = {} if a.rounds is None else {"n_timed": a.rounds}
            if a.build_times:
                import json

                kw["build_times"] = json.loads(open(a.build_times).read())
            bench.run(problem_keys=a.problem, keys=a.variant, out_path=a.out, verify_odd=not a.no_odd,
                      hardening_dirs=a.hardening_dir, **kw)
        elif a.cmd == "verify":
            (_verify_scales if a.scales else _verify)(a.problem, a.variant)
        elif a.cmd == "build":
            from .registry import kernel_variants

            B.build_all([v for v in kernel_variants() if (a.problem is None or v.problem in a.problem)
                         and (a.variant is None or v.key in a.variant)])
        elif a.cmd == "specs":
            _specs(a.problem)
        elif a.cmd == "predict":
            _predict(a.gpu, a.out)
        elif a.cmd == "readme":
            from . import readme

            print("README progress table and figure", "updated" if readme.update() else "unchanged (no results)")
        elif a.cmd == "report":
            from . import report

            report.render(a.notebook)
        elif a.cmd == "ops":
            _ops(a.problem)
        elif a.cmd == "fuse":
            _fuse(a.problem, a.precision, a.rounds, a.out)
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    except (B.BuildError, ValueError, RuntimeError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def _ops(problem_keys):
    from . import ops as O
    from . import problems as P
    from . import registry as R
    from . import results as RS

    runs = RS.all_recorded()
    for pk in problem_keys or list(P.PROBLEMS):
        print(f"{pk}:")
        for v in R.kernel_variants(pk):
            targets = "/".join(f"sm_{a}" for a in v.archs)
            print(f"  torch.ops.convfuse.{O.op_name(v):28s} {v.precision:9s} {targets}")
        for run in runs:
            env = run["env"]
            cc = tuple(int(c) for c in env.get("capability", "9.0").split("."))
            for precision in O.CLASSES:
                v, why = O.choose(pk, precision, env["gpu"], cc, runs)
                print(f"  fuse(model, {precision!r}) on the {env['gpu']}: {v.key} ({why})")


def _fuse(problem_keys, precisions, rounds, out):
    import json

    from . import bench
    from . import build as B
    from . import problems as P

    from . import results

    B.require_toolchain()
    env = bench.environment()
    rows = []
    for pk in problem_keys or list(P.PROBLEMS):
        for precision in precisions or ["tf32", "fp32"]:
            rows.append(bench.time_fused(P.get(pk), precision, n_timed=rounds))
    out = out or results.FUSE_DIR / f"{env['slug']}.json"
    with open(out, "w") as f:
        json.dump({"env": env, "runs": rows}, f, indent=1)
    print(f"[fuse] wrote {out}")


def _built(problem_keys, keys):
    """Per problem: (problem, its model on the GPU, {key: runner}, {key: precision}) of the registered kernels asked
    for that run on this GPU, built in parallel."""
    import torch

    from . import build as B
    from . import problems as P
    from . import registry as R

    B.require_toolchain()
    for pk in problem_keys or list(P.PROBLEMS):
        prob = P.get(pk)
        cc = torch.cuda.get_device_capability()
        vs = [v for v in R.kernel_variants(pk) if (keys is None or v.key in keys) and v.runs_on(cc)]
        mods = B.build_all(vs)
        model = prob.make_model(seed=0, device="cuda")
        yield prob, model, {v.key: R.kernel_runner(v, mods[(pk, v.key)]) for v in vs}, {v.key: v.precision for v in vs}


def _verify(problem_keys, keys):
    import torch

    from . import verify

    with torch.no_grad():
        for prob, model, runners, precisions in _built(problem_keys, keys):
            checks = verify.run_checks(prob, model, runners, precisions,
                                       shapes=[prob.input_shape, *prob.odd_shapes], log=print)
            for k, s in verify.summarize(checks).items():
                print(f"{prob.key}/{k}: verified={s['verified']} max_abs={s['max_abs_err_fp64']:.2e} "
                      f"rel_l2={s['rel_l2_err_fp64']:.2e} kernelbench={s['kernelbench_pass']}")


def _verify_scales(problem_keys, keys):
    """Per kernel, bias mode and scale: the worst rel-L2 and max-abs over two odd shapes, beside eager's and eager FP32's
    on the same inputs (the class's own arithmetic), and whether the class bound holds; '*' marks the scales the class
    states (verify.held_scales), where tests/test_gpu_hardening.py asserts it."""
    import torch

    from . import registry as R
    from . import verify

    with torch.no_grad():
        for prob, model, runners, precisions in _built(problem_keys, keys):
            pk = prob.key
            for ref in ("eager", "eager_fp32"):
                runners[ref] = R.reference_runner(R.get(pk, ref), model)
                precisions[ref] = "tf32" if ref == "eager" else "fp32"
            checks = verify.run_checks(prob, model, runners, precisions, shapes=prob.odd_shapes[:2],
                                       trials=verify.sweep_trials())
            worst = {}
            for c in checks:
                w = worst.setdefault((c.variant, c.bias, c.scale), [0.0, 0.0, True])
                w[0], w[1], w[2] = max(w[0], c.rel_l2), max(w[1], c.max_abs), w[2] and c.passed
            for key in runners:
                held = verify.held_scales(pk, precisions[key], getattr(R.get(pk, key), "input_scales", None))
                for bias in verify.BIAS_MODES:
                    cells = [f"{sc:g}{'*' if sc in held else ''}: {worst[(key, bias, sc)][0]:.1e}"
                             f"{'' if worst[(key, bias, sc)][2] else ' FAIL'}" for sc in verify.SCALES]
                    print(f"[scales] {pk}/{key} ({precisions[key]}) bias={bias}: " + ", ".join(cells))


def _predict(gpu_key, out):
    import datetime as dt
    import json
    import subprocess
    from pathlib import Path

    from . import traffic as T
    from .registry import ROOT

    pred = T.prediction(gpu_key)
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    pred = {"made": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "commit": rev.stdout.strip() or None, **pred}
    path = Path(out) if out else ROOT / "results" / "predictions" / f"{gpu_key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(pred, indent=1) + "\n")
    n = sum(len(v) for v in pred["predictions"].values())
    print(f"{path}: {n} variants predicted on the {pred['gpu']['name']} datasheet (tree {pred['commit']})")


def _specs(problem_keys):
    from . import problems as P
    from . import registry as R
    from . import traffic as T

    for pk in problem_keys or list(P.PROBLEMS):
        prob = P.get(pk)
        print(f"{pk}: {prob.description}; input {prob.input_shape} -> output {prob.output_shape()}")
        print(f"  conv FLOPs {T.conv_flops(prob) / 1e9:.1f} G; fewest DRAM bytes {T.floor_bytes(prob) / 1e9:.2f} GB")
        for g in T.DATASHEET_GPUS:
            fl = T.floors_ms(prob, g)
            print(f"  {g.name:16s} floors: bytes {fl['bytes']:.2f} ms, FP32 {fl['fp32']:.2f} ms, TF32 {fl['tf32']:.2f} ms")
        for v in R.all_variants(pk):
            pr = T.predict_ms(prob, v.key, v.precision, T.datasheet("h200"))
            print(f"  {v.key:20s} {T.model_bytes(prob, v.key) / 1e9:6.2f} GB  H200 prediction {pr['ms']:.2f} ms "
                  f"({pr['bound']})")


if __name__ == "__main__":
    sys.exit(main())
