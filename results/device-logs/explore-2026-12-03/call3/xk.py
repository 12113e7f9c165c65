"""Session helper (untracked, deleted after): build / sanitize / protocol-verify candidate builds.
    python3 xk.py build SPECS | python3 xk.py verify SPECS | compute-sanitizer --tool T python3 xk.py san SPECS
"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts"); sys.path.insert(0, "tests"); sys.path.insert(0, ".")
import torch
from check_variant import parse_spec
from convfuse import build as B, problems as P, registry as R, verify as V, sanitize as S


def main(mode, specs):
    vs = [parse_spec(s) for s in specs]
    mods = B.build_all(vs, jobs=8)
    bad = 0
    if mode == "build":
        return 0
    if mode == "repeat":                      # each build 30 times on the full shape, bitwise against its first run
        for v in vs:
            prob = P.get(v.problem)
            model = prob.make_model(seed=0, device="cuda")
            run = R.kernel_runner(v, mods[(v.problem, v.key)])
            x = prob.make_input(device="cuda", dist="randn")
            with torch.no_grad():
                first = run(x, *P.conv_params(model)).clone()
                diffs = sum(not torch.equal(run(x, *P.conv_params(model)), first) for _ in range(30))
            bad += diffs > 0
            print(f"[repeat] {v.problem}/{v.key}: {diffs} of 30 runs differ from the first", flush=True)
        return 1 if bad else 0
    bad = 0
    if mode == "san":
        import os
        for v in vs:
            shapes = S.shapes_for(P.get(v.problem), "memcheck")
            if os.environ.get("XK_SHAPES"):       # "n,c,d,h,w;n,c,d,h,w": only these
                shapes = [tuple(int(a) for a in s.split(",")) for s in os.environ["XK_SHAPES"].split(";")]
            print(S._check_one(v, P.get(v.problem), shapes, mods[(v.problem, v.key)]), flush=True)
        return 0
    if mode == "verify":
        import test_gpu_hardening as H
        for v in vs:
            prob = P.get(v.problem)
            model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
            run = R.kernel_runner(v, mods[(v.problem, v.key)])
            with torch.no_grad():
                checks = V.run_checks(prob, model, {v.key: run}, {v.key: v.precision},
                                      shapes=list(prob.odd_shapes) + [prob.input_shape])
            worst_abs = max(c.max_abs for c in checks); worst_rel = max(c.rel_l2 for c in checks)
            ok = all(c.passed for c in checks)
            bad += not ok
            print(f"[verify] {v.problem}/{v.key} ({v.precision}): {sum(c.passed for c in checks)}/{len(checks)} pass, "
                  f"worst max_abs {worst_abs:.3e} rel_l2 {worst_rel:.3e}", flush=True)
            for name, fn, args in [("propagate", H.test_special_values_propagate_like_eager, ("nan", "inf", "-inf")),
                                   ("in_bounds", H.test_special_values_leave_every_output_written_and_in_bounds, ("nan", "inf"))]:
                for sp in args:
                    try:
                        fn(v, sp, mods); r = "ok"
                    except AssertionError as e:
                        r = f"FAIL {e}"; bad += 1
                    print(f"[harden] {v.key} {name} {sp}: {r}", flush=True)
            for name, fn in [("large_magnitudes", H.test_large_magnitudes_do_not_overflow_where_eager_does_not),
                             ("repeatable", H.test_bit_identical_over_ten_runs)]:
                try:
                    fn(v, mods); r = "ok"
                except AssertionError as e:
                    r = f"FAIL {e}"; bad += 1
                print(f"[harden] {v.key} {name}: {r}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
