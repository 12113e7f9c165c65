"""Verify and time a candidate beside the kernel it would replace, in one process, on a GPU.

    python scripts/check_variant.py conv3d:04b_wgmma_tf32=scratch/04b_idea.cu [--bitwise] [more specs ...]

A spec names a registered variant, `problem:key`; `problem:key=FILE` builds FILE (a scratch copy of the variant's
kernel file, not shipped: README, "Working on a kernel") in its place, with the variant's defines, targets and runner
and the headers under kernels/ as they are. Every scratch build runs beside its registered variant.

For each build: the output against float64 on the problem's odd shapes and the full shape (randn inputs, a
NaN-poisoned output), with the verification bound of the variant's precision, and a map of where the wrong outputs are
when there are any (by channel group, column and row: the usual fingerprints of a bad tile, fragment or descriptor
mapping). With --bitwise, each scratch build's outputs must also equal its registered variant's bit for bit on the odd
shapes, the problem's `bitwise_shapes` and the full shape, written whole at a 16-byte-aligned address, 4 and 8 bytes
past it: the check for a change that keeps the arithmetic (addressing, order of work, synchronisation). Then, per
problem, one interleaved timing of every build with eager and torch.compile at full size (same process, same rounds:
the ratios are comparable); an epilogue variant (steps 01, 02) is also timed alone on a precomputed conv output, beside
a device copy of the same bytes, as `make bench` times it (the whole call is mostly cuDNN's conv). A launch that does not finish within --deadline seconds (default 60) ends the process with
status 124 (convfuse.deadline); exit status 1 when a build fails its bound or its bitwise comparison.
"""
import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # run from anywhere

import torch  # noqa: E402

from convfuse import bench, build as B, problems as P, registry as R, verify as V  # noqa: E402
from convfuse.deadline import finish_within  # noqa: E402


def parse_spec(spec: str) -> list:
    """problem:key[=FILE] -> [the registered variant] or [it, the scratch build of FILE in its place]."""
    name, _, scratch = spec.partition("=")
    v = R.get(*name.replace("/", ":").split(":"))
    if not scratch:
        return [v]
    path = Path(scratch).resolve()
    if not path.is_file():
        raise SystemExit(f"check_variant: {scratch}: no such file")
    return [v, dataclasses.replace(v, key=f"{v.key}__{path.stem}", scratch=path)]


def verify_build(v, run, model, deadline: float) -> bool:
    prob = P.get(v.problem)
    ok = True
    for shape in list(prob.odd_shapes) + [prob.input_shape]:
        x = prob.make_input(shape, device="cuda", dist="randn")
        with torch.no_grad():
            y = run(x, *P.conv_params(model), out=V.poisoned(prob.output_shape(shape), "cuda"))
            finish_within(deadline, f"{v.problem}/{v.key} {tuple(shape)}")
            ref = P.ground_truth(model, x)
        m = V.compare(y, ref)
        passed = V.within_bounds(m, v.precision)
        ok &= passed
        print(f"{v.problem}/{v.key} {tuple(shape)}: max_abs {m['max_abs']:.3e} rel_l2 {m['rel_l2']:.3e} "
              f"non-finite mismatches {m['nonfinite_mismatch']} -> {'ok' if passed else 'FAILS its ' + v.precision + ' bound'}",
              flush=True)
        bad = ~((y.double() - ref.to(y.device)).abs() <= 1e-2)
        if not passed and bad.any():
            red = tuple(range(2, y.dim()))
            ch = bad.float().mean(dim=(0,) + red)
            print("  wrong by channel group of 16:", [round(ch[i:i + 16].mean().item(), 3) for i in range(0, ch.numel(), 16)])
            col = bad.float().mean(dim=tuple(range(y.dim() - 1)))
            print("  wrong by column:", [round(c, 2) for c in col.tolist()[:70]])
            row = bad.float().mean(dim=tuple(i for i in range(y.dim()) if i != y.dim() - 2))
            print("  wrong by row:", [round(c, 2) for c in row.tolist()[:70]])
    return ok


def bitwise(base, cand, runs, model, deadline: float) -> int:
    """Cases where `cand`'s output differs from `base`'s in any bit."""
    prob = P.get(base.problem)
    params = P.conv_params(model)
    differ = 0
    with torch.no_grad():
        for i, shape in enumerate(list(prob.odd_shapes) + list(prob.bitwise_shapes) + [prob.input_shape]):
            x = prob.make_input(shape, seed=i, device="cuda", dist="randn")
            want = runs[base.key](x, *params)
            finish_within(deadline, f"{base.key} {tuple(shape)}")
            for off in (0, 1, 2):
                buf = torch.full((want.numel() + 2,), float("nan"), device="cuda")
                got = runs[cand.key](x, *params, out=buf[off:off + want.numel()].view(want.shape))
                finish_within(deadline, f"{cand.key} {tuple(shape)} out+{4 * off} B")
                same = torch.equal(got, want)
                differ += not same
                if not same:
                    print(f"{cand.key} {tuple(shape)} out+{4 * off} B: DIFFERENT from {base.key}", flush=True)
    print(f"[bitwise] {cand.problem}/{cand.key}: {differ} case(s) differ from {base.key}", flush=True)
    return differ


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+", help="problem:key or problem:key=FILE")
    ap.add_argument("--bitwise", action="store_true", help="each scratch build bit for bit against its variant")
    ap.add_argument("--deadline", type=float, default=60.0, help="seconds a launch may take before it counts as hung")
    a = ap.parse_args(argv)
    builds = list(dict.fromkeys(v for spec in a.specs for v in parse_spec(spec)))
    mods = B.build_all(builds)
    torch.backends.cudnn.allow_tf32 = True
    failed = 0
    for problem in dict.fromkeys(v.problem for v in builds):
        prob = P.get(problem)
        model = prob.make_model(seed=0, device="cuda")
        mine = [v for v in builds if v.problem == problem]
        runs = {v.key: R.kernel_runner(v, mods[(v.problem, v.key)]) for v in mine}
        for v in mine:
            failed += not verify_build(v, runs[v.key], model, a.deadline)
        if a.bitwise:
            for v in mine:
                if v.scratch is not None:
                    failed += bitwise(R.get(problem, v.key.split("__")[0]), v, runs, model, a.deadline) > 0
        x = prob.make_input(device="cuda")
        params = P.conv_params(model)
        cmodel = torch.compile(model)
        with torch.no_grad():
            for _ in range(3):
                cmodel(x)
        fns = {"eager": lambda: model(x), "compile": lambda: cmodel(x)}
        fns.update({key: (lambda run=run: run(x, *params)) for key, run in runs.items()})
        epilogues = [v for v in mine if v.kind == "epilogue"]
        if epilogues:
            conv_out = P.eager_conv(prob, x, params[0], None)
            y_buf = torch.empty_like(conv_out)
            for v in epilogues:
                e = R.epilogue_only_runner(v, mods[(v.problem, v.key)])
                fns[f"{v.key}:epilogue_alone"] = lambda e=e: e(conv_out, params[1], params[2], y_buf)
            fns["copy_of_conv_output"] = lambda: y_buf.copy_(conv_out)
        with torch.no_grad():
            t = bench.time_interleaved(fns, n_timed=15, n_warmup=3, log=lambda m: None)
        print(f"{problem} timing, median ms (p20-p80), one interleaved run:")
        for k, q in t.items():
            print(f"  {k:44s} {q['median_ms']:7.3f}  ({q['p20_ms']:.3f}-{q['p80_ms']:.3f})", flush=True)
        if epilogues:
            copy_ms = t["copy_of_conv_output"]["median_ms"]
            for v in epilogues:
                ea = t[f"{v.key}:epilogue_alone"]["median_ms"]
                print(f"  {v.key}: the epilogue alone at {100 * copy_ms / ea:.1f} % of the copy's bandwidth", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
