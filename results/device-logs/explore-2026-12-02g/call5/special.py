"""Session helper (untracked): the special-value hardening tests of conv2d 04c on its new sanitize shape."""
import sys
sys.path.insert(0, "tests"); sys.path.insert(0, ".")
from convfuse import build as B, registry as R
import test_gpu_hardening as H


if __name__ == "__main__":
    vs = [R.get("conv2d", k) for k in ("04c_ws_fp16", "04c_ws_tf32", "04c_ws_3xfp16")]
    mods = B.build_all(vs, jobs=3)
    bad = 0
    for v in vs:
        print(v.key, "shapes", H._store_path_shapes(v), flush=True)
        for name, fn, args in [("in_bounds", H.test_special_values_leave_every_output_written_and_in_bounds, ("nan", "inf")),
                               ("propagate", H.test_special_values_propagate_like_eager, ("nan", "inf", "-inf"))]:
            for sp in args:
                try:
                    fn(v, sp, mods); r = "ok"
                except AssertionError as e:
                    r = f"FAIL {e}"; bad += 1
                print(f"[harden] {v.key} {name} {sp}: {r}", flush=True)
    sys.exit(1 if bad else 0)
