"""Scratch hardening of a candidate build (issue 50): special values, large magnitudes, repeatability; one launch for
compute-sanitizer; full-size launches for ncu.   python scratch/harden.py check|one|full [FILE]"""
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import torch  # noqa: E402

from convfuse import build as B, problems as P, registry as R, verify as V  # noqa: E402

FILE = Path(sys.argv[2] if len(sys.argv) > 2 else "scratch/04d_fp16_bs.cu").resolve()
base = R.get("conv2d", "04d_rs_tf32")
cand = dataclasses.replace(base, key=f"{base.key}__{FILE.stem}", scratch=FILE)
prob = P.get("conv2d")


def classes(t):
    c = torch.zeros_like(t, dtype=torch.int8)
    c[torch.isnan(t)] = 1
    c[t == float("inf")] = 2
    c[t == float("-inf")] = 3
    return c


@torch.no_grad()
def main(mode):
    mod = B.build_all([cand])[(cand.problem, cand.key)]
    run = R.kernel_runner(cand, mod)
    model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
    params = P.conv_params(model)
    if mode == "one":
        for shape in (prob.odd_shapes[0], *prob.sanitize_shapes, prob.odd_shapes[1]):
            x = prob.make_input(shape, seed=0, device="cuda")
            x.view(-1)[7] = float("inf")             # one tile down the FP32 path
            run(x, *params)
        torch.cuda.synchronize()
        return 0
    if mode == "full":
        x = prob.make_input(device="cuda")
        run(x, *params)
        other = R.get("conv2d", "04c_ws_fp16")
        orun = R.kernel_runner(other, B.build_all([other])[(other.problem, other.key)])
        orun(x, *params)
        torch.cuda.synchronize()
        return 0
    bad = 0
    for special in ("nan", "inf", "-inf"):
        for shape in (prob.odd_shapes[0], *prob.sanitize_shapes, prob.odd_shapes[2]):
            x = prob.make_input(shape, seed=0, device="cuda")
            idx = torch.randperm(x.numel(), device="cuda", generator=torch.Generator("cuda").manual_seed(2))[:5]
            x.view(-1)[idx] = float(special)
            with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
                want = model(x)
            got = run(x, *params, out=V.poisoned(prob.output_shape(shape), "cuda"))
            m = V.compare(got, P.ground_truth(model, x))
            mism = (classes(got) != classes(want)).sum().item()
            ok = V.within_bounds(m, "fp16") and mism == 0
            bad += not ok
            print(f"special {special} {shape}: class mismatches {mism}, rel_l2 {m['rel_l2']:.3e} -> {'ok' if ok else 'FAIL'}")
    x = prob.make_input(prob.odd_shapes[0], seed=0, device="cuda") * 1e30
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        want = model(x)
    got = run(x, *params)
    over = (torch.isfinite(want) & ~torch.isfinite(got)).sum().item()
    print(f"x * 1e30: {over} outputs overflow where eager's are finite -> {'ok' if over == 0 else 'FAIL'}")
    bad += over > 0
    x = prob.make_input(prob.odd_shapes[1], seed=0, device="cuda")
    first = run(x, *params)
    same = all(torch.equal(first, run(x, *params)) for _ in range(9))
    print(f"bit-identical over ten runs: {same}")
    bad += not same
    print(f"[harden] {cand.key}: {bad} failing check(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
