"""python -m convfuse bench|verify|build|specs|predict|report"""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m convfuse", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench", help="build, verify and time every variant; write results/<gpu>.json")
    b.add_argument("--problem", action="append", help="conv2d or conv3d (default: both)")
    b.add_argument("--variant", action="append", help="variant keys (default: all)")
    b.add_argument("--out", help="results path (default: results/<gpu-slug>.json)")
    b.add_argument("--rounds", type=int, default=None, help="timed calls per variant (default 25)")
    b.add_argument("--no-odd", action="store_true", help="skip the odd-shape verification")
    b.add_argument("--build-times", help="a JSON from `python -m convfuse.build --timing` to keep in env")
    b.add_argument("--hardening-dir", action="append", help="where to look for sanitize.json and "
                   "large_tensor.json (their fields are copied onto the records)")
    v = sub.add_parser("verify", help="run the verification protocol on the GPU and print a table")
    v.add_argument("--problem", action="append")
    v.add_argument("--variant", action="append")
    sub.add_parser("build", help="build every kernel extension (in parallel) and report times")
    s = sub.add_parser("specs", help="FLOPs, bytes, floors and predictions for every GPU (no GPU needed)")
    s.add_argument("--problem", action="append")
    pr = sub.add_parser("predict", help="write the traffic model's prediction of every variant on a datasheet GPU "
                        "(results/predictions/<gpu>.json): commit it before that GPU's first record")
    pr.add_argument("--gpu", required=True, help="a datasheet key of convfuse.traffic (h100-sxm, a100-80gb, ...)")
    pr.add_argument("--out", help="default: results/predictions/<gpu>.json")
    r = sub.add_parser("report", help="execute the notebooks and render report/ (recorded mode off-GPU)")
    r.add_argument("--notebook", action="append", help="only these notebooks (stems)")
    a = ap.parse_args(argv)

    from . import build as B

    try:
        if a.cmd == "bench":
            from . import bench

            kw = {} if a.rounds is None else {"n_timed": a.rounds}
            if a.build_times:
                import json

                kw["build_times"] = json.loads(open(a.build_times).read())
            bench.run(problem_keys=a.problem, keys=a.variant, out_path=a.out, verify_odd=not a.no_odd,
                      hardening_dirs=a.hardening_dir, **kw)
        elif a.cmd == "verify":
            _verify(a.problem, a.variant)
        elif a.cmd == "build":
            from .registry import kernel_variants

            B.build_all(kernel_variants())
        elif a.cmd == "specs":
            _specs(a.problem)
        elif a.cmd == "predict":
            _predict(a.gpu, a.out)
        elif a.cmd == "report":
            from . import report

            report.render(a.notebook)
    except (B.BuildError, ValueError, RuntimeError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def _verify(problem_keys, keys):
    import torch

    from . import build as B
    from . import problems as P
    from . import registry as R
    from . import verify

    B.require_toolchain()
    with torch.no_grad():
        for pk in problem_keys or list(P.PROBLEMS):
            prob = P.get(pk)
            cc = torch.cuda.get_device_capability()
            vs = [v for v in R.kernel_variants(pk) if (keys is None or v.key in keys) and v.runs_on(cc)]
            mods = B.build_all(vs)
            model = prob.make_model(seed=0, device="cuda")
            runners = {v.key: R.kernel_runner(v, mods[(pk, v.key)]) for v in vs}
            checks = verify.run_checks(prob, model, runners, {v.key: v.precision for v in vs},
                                       shapes=[prob.input_shape, *prob.odd_shapes], log=print)
            for k, s in verify.summarize(checks).items():
                print(f"{pk}/{k}: verified={s['verified']} max_abs={s['max_abs_err_fp64']:.2e} "
                      f"rel_l2={s['rel_l2_err_fp64']:.2e} kernelbench={s['kernelbench_pass']}")


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
