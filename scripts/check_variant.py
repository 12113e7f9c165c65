"""Quick correctness check of a few variants on the GPU, with a map of where the errors are.

    python scripts/check_variant.py conv3d:04b_wgmma_tf32 [conv3d:04b_wgmma_tf32@CF_TH=4,CF_WGS=3 ...]

For each variant: build, run on the odd shapes and the full shape against float64, and when the output
is wrong print the fraction of wrong outputs per channel group of 16, per output column and per output
row — the usual fingerprints of a bad tile, fragment or descriptor mapping. Then, per problem, one
interleaved timing of every variant given with eager and torch.compile at full size (same process, same
rounds: the ratios are comparable). Ablation builds (a define starting with CF_ABL_: parts of the kernel
switched off to see what they cost) compute wrong outputs on purpose and are timed only. A launch that does not
finish within 60 s while being verified ends the process (status 124, convfuse.deadline); ablation builds, never
verified, have no such deadline.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # run from anywhere, like ncu_sections.py

import torch  # noqa: E402

from convfuse import bench, build as B, problems as P, registry as R  # noqa: E402
from convfuse.deadline import finish_within  # noqa: E402


def parse_spec(spec):
    """problem:key[@NAME=VALUE,NAME=VALUE] -> the registry variant, with extra -D for a tuning build."""
    name, _, extra = spec.partition("@")
    return R.with_defines(R.get(*name.replace("/", ":").split(":")), tuple(extra.split(",")) if extra else ())


def is_ablation(v):
    return any(d.startswith("CF_ABL_") for d in v.defines)


def verify_variant(v, run, model):
    prob = P.get(v.problem)
    for shape in list(prob.odd_shapes) + [prob.input_shape]:
        x = prob.make_input(shape, device="cuda", dist="randn")
        out = torch.full(prob.output_shape(shape), float("nan"), device="cuda")
        with torch.no_grad():
            y = run(x, *P.conv_params(model), out=out)
            finish_within(60, f"{v.problem}/{v.key} {tuple(shape)}")   # a hang here would hold the device call
            ref = P.ground_truth(model, x).float()
        err = (y - ref).abs()
        rel = (torch.linalg.vector_norm((y - ref).double()) / torch.linalg.vector_norm(ref.double())).item()
        bad = ~(err <= 1e-2)
        print(f"{v.problem}/{v.key} {tuple(shape)}: max_abs {err.nan_to_num(float('inf')).max().item():.3e} "
              f"rel_l2 {rel:.3e} wrong {bad.float().mean().item():.4f} nan {torch.isnan(y).float().mean().item():.4f}", flush=True)
        if bad.any():
            red = tuple(range(2, y.dim()))
            ch = bad.float().mean(dim=(0,) + red)
            print("  by channel group of 16:", [round(ch[i:i + 16].mean().item(), 3) for i in range(0, ch.numel(), 16)])
            print("  by channel mod 16:", [round(c, 2) for c in ch.view(-1, 16).mean(0).tolist()])
            col = bad.float().mean(dim=tuple(range(y.dim() - 1)))
            print("  by column:", [round(c, 2) for c in col.tolist()[:70]])
            row = bad.float().mean(dim=tuple(i for i in range(y.dim()) if i != y.dim() - 2))
            print("  by row:", [round(c, 2) for c in row.tolist()[:70]])


def main():
    variants = [parse_spec(spec) for spec in sys.argv[1:]]
    mods = B.build_all(variants)
    torch.backends.cudnn.allow_tf32 = True
    for problem in dict.fromkeys(v.problem for v in variants):
        prob = P.get(problem)
        model = prob.make_model(seed=0, device="cuda")
        runs = {}
        for v in (v for v in variants if v.problem == problem):
            runs[v.key] = R.kernel_runner(v, mods[(v.problem, v.key)])
            if not is_ablation(v):
                verify_variant(v, runs[v.key], model)
        x = prob.make_input(device="cuda")
        params = P.conv_params(model)
        cmodel = torch.compile(model)
        with torch.no_grad():
            for _ in range(3):
                cmodel(x)
        fns = {"eager": lambda: model(x), "compile": lambda: cmodel(x)}
        fns.update({key: (lambda run=run: run(x, *params)) for key, run in runs.items()})
        with torch.no_grad():
            t = bench.time_interleaved(fns, n_timed=15, n_warmup=3, log=lambda m: None)
        print(f"{problem} timing, median ms (p20-p80), one interleaved run:")
        for k, q in t.items():
            print(f"  {k:44s} {q['median_ms']:7.3f}  ({q['p20_ms']:.3f}-{q['p80_ms']:.3f})", flush=True)


if __name__ == "__main__":
    main()
