"""Write results/predictions/scales-<date>.json: the CPU model's rel-L2 and max-abs (convfuse/splits.py) of each
FP16-operand kernel's scheme, and its scaled twin, at every scale of verify.SCALES with the model's bias and bias zeroed,
committed before the GPU run of tests/test_gpu_hardening.py::test_class_holds_at_every_input_scale that checks it (issue 66).
With --fixed, results/predictions/fixed-shift-<date>.json instead: the fixed-power-of-two twins of those kernels
(splits.FIXED_SCHEMES), committed before the kernels that would implement them are written.
    python scripts/predict_scales.py [--fixed]
"""
import datetime as dt
import json
import subprocess
from pathlib import Path

from convfuse import registry as R
from convfuse import splits as S
from convfuse import verify as V

ROOT = Path(__file__).resolve().parent.parent


# each FP16-operand kernel's scheme -> its fixed-shift twins (splits.FIXED_SCHEMES)
FIXED_TWINS = {"fp16": ("fp16f",), "3xfp16": ("3xfp16c", "3xfp16f")}


def fixed(now, commit):
    out = {"made": now.isoformat(timespec="seconds"), "commit": commit, "issue": 66,
           "model": "splits.fixed_conv in splits.scale_table: one image at TABLE_SHAPE, randn input x scale, seed 0; FP16 "
                    f"parts at fixed powers of two (lo parts x 2^{S.CORRECTION_SHIFT}, fp16f/3xfp16f's input x "
                    f"2^{S.INPUT_SHIFT}), the FP32 path where an input overflows FP16, against float64",
           "shape": S.TABLE_SHAPE, "scales": list(V.SCALES), "predictions": {}}
    for v in R.kernel_variants():
        for twin in FIXED_TWINS.get(v.precision, ()):
            e = {"scheme": twin, "class": S.scheme_class(twin), "model_held_range": S.held_range(v.problem, twin),
                 "kernel_model_held_range": S.held_range(v.problem, v.precision)}
            for bias in V.BIAS_MODES:
                rows = [r for r in S.scale_table(v.problem, V.SCALES, bias) if r["scheme"] == twin]
                e.setdefault("rel_l2", {})[bias] = {f"{r['scale']:g}": float(f"{r['rel_l2']:.2e}") for r in rows}
                e.setdefault("fp32_path_share", {})[bias] = {f"{r['scale']:g}": round(r["fallback_share"], 3)
                                                             for r in rows}
            out["predictions"].setdefault(v.problem, {}).setdefault(v.key, {})[twin] = e
    return out


def main():
    import sys

    now = dt.datetime.now(dt.timezone.utc)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if "--fixed" in sys.argv[1:]:
        path = ROOT / "results" / "predictions" / f"fixed-shift-{now.date().isoformat()}.json"
        path.write_text(json.dumps(fixed(now, commit), indent=1) + "\n")
        print(path)
        return
    out = {"made": now.isoformat(timespec="seconds"), "commit": commit, "issue": 66,
           "model": "splits.scale_table: one image at TABLE_SHAPE, randn input x scale, seed 0; the conv as the scheme "
                    "computes it (FP16 parts, products exact, FP32 sums), bias and epilogue in FP32, against float64",
           "shape": S.TABLE_SHAPE, "scales": list(V.SCALES),
           "checked_by": "pytest -m gpu tests/test_gpu_hardening.py -k test_class_holds_at_every_input_scale",
           "predictions": {}}
    out["marginal"] = []    # checked cells the model puts within 2x of the bound: the GPU's own error (its FP32 sums, the
    # tensor core's truncating adds: 04c_ws_3xfp16 measured 1.0e-6 at unit scale where the model gives 2.4e-7) may tip them
    for v in R.kernel_variants():
        # the FP16-operand kernels, and any other whose registry range the model narrowed (04b_wgmma_tf32bf16)
        if v.precision not in ("fp16", "3xfp16") and v.input_scales is None:
            continue
        twin = v.precision + "s" if v.precision in ("fp16", "3xfp16") else None
        checked = V.held_scales(v.problem, v.precision, v.input_scales)
        entry = {"precision": v.precision, "scheme": v.precision, "checked_scales": list(checked),
                 "model_held_range": S.held_range(v.problem, v.precision),
                 "scaled_twin": twin, "scaled_twin_held_range": twin and S.held_range(v.problem, twin)}
        for bias in V.BIAS_MODES:
            rows = S.scale_table(v.problem, V.SCALES, bias)
            for r in rows:
                if r["scheme"] == v.precision and r["scale"] in checked and r["rel_l2"] > r["bound_rel_l2"] / 2:
                    out["marginal"].append({"problem": v.problem, "variant": v.key, "bias": bias, "scale": r["scale"],
                                            "rel_l2": float(f"{r['rel_l2']:.2e}"), "bound": r["bound_rel_l2"]})
            for scheme, key in ((v.precision, "rel_l2"), (twin, "scaled_twin_rel_l2"), ("fp32", "eager_fp32_rel_l2")):
                if scheme is None:
                    continue
                entry.setdefault(key, {})[bias] = {f"{r['scale']:g}": float(f"{r['rel_l2']:.2e}") for r in rows
                                                   if r["scheme"] == scheme}
            entry.setdefault("max_abs", {})[bias] = {f"{r['scale']:g}": float(f"{r['max_abs']:.2e}") for r in rows
                                                     if r["scheme"] == v.precision}
            entry.setdefault("holds", {})[bias] = {f"{r['scale']:g}": r["holds"] for r in rows if r["scheme"] == v.precision}
        out["predictions"].setdefault(v.problem, {})[v.key] = entry
    path = ROOT / "results" / "predictions" / f"scales-{now.date().isoformat()}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(path)


if __name__ == "__main__":
    main()
