"""Compare candidate builds of a kernel bitwise with its default build, on the GPU.

    python scripts/check_bitwise.py conv3d:04b_wgmma_tf32 conv3d:04b_wgmma_tf32@CF_LEAN [more specs ...]

The first spec is the reference build; every other spec (same problem) must give the same bits on the problem's odd
shapes, its `bitwise_shapes` and the full shape, with fresh `randn` inputs per shape, into an output written whole
(NaN-poisoned first) at a 16-byte-aligned address, 4 bytes past it and 8 bytes past it (the bulk stores' rows then
start at the other 16-byte phase). For changes that keep the arithmetic
(addressing, order of work, synchronisation), this is a stronger check than the float64 bounds. Exit status 1 when
any case differs. Specs as in scripts/check_variant.py (problem:key[@NAME=VALUE,...]).

    --deadline SECONDS   each launch must finish within this (default 60): a build that hangs ends the process with
                         status 124 and a line naming the build and shape, instead of holding the device call
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from convfuse import build as B, problems as P, registry as R  # noqa: E402
from convfuse.deadline import finish_within  # noqa: E402


def main(args) -> int:
    from check_variant import parse_spec
    deadline = 60.0
    if "--deadline" in args:
        i = args.index("--deadline")
        deadline = float(args[i + 1])
        args = args[:i] + args[i + 2:]
    specs = args
    if len(specs) < 2:
        sys.exit(__doc__)
    variants = [parse_spec(s) for s in specs]
    if len({v.problem for v in variants}) != 1:
        sys.exit("check_bitwise: all specs must be builds for one problem")
    mods = B.build_all(variants)
    base, others = variants[0], variants[1:]
    prob = P.get(base.problem)
    model = prob.make_model(seed=0, device="cuda")
    params = P.conv_params(model)
    runs = {v.key: R.kernel_runner(v, mods[(v.problem, v.key)]) for v in variants}
    differ = 0
    with torch.no_grad():
        for i, shape in enumerate(list(prob.odd_shapes) + list(prob.bitwise_shapes) + [prob.input_shape]):
            x = prob.make_input(shape, seed=i, device="cuda", dist="randn")
            want = runs[base.key](x, *params)
            finish_within(deadline, f"{base.key} {tuple(shape)}")
            for v in others:
                for off in (0, 1, 2):
                    buf = torch.full((want.numel() + 2,), float("nan"), device="cuda")
                    got = runs[v.key](x, *params, out=buf[off:off + want.numel()].view(want.shape))
                    finish_within(deadline, f"{v.key} {tuple(shape)} out+{4 * off} B")
                    same = torch.equal(got, want)
                    differ += not same
                    print(f"{v.key} {tuple(shape)} out+{4 * off} B: {'equal' if same else 'DIFFERENT'}"
                          f" (nan {torch.isnan(got).float().mean().item():.4f})", flush=True)
    print(f"[check_bitwise] {differ} case(s) differ from {base.key}", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
