"""Plots and study tables from a small synthetic run (CPU only; nothing here is a measurement).

`synthetic_run()` builds a results dict with the schema `bench.run` writes — every field of a record,
both problems, every registry variant, reference profiles — from invented numbers. It is for tests
and development only and never goes into results/.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from convfuse import plots, study  # noqa: E402
from convfuse import problems as P  # noqa: E402
from convfuse import registry as R  # noqa: E402
from convfuse import traffic as T  # noqa: E402

# Invented times (ms), shaped like an H200 run so that the plots have something plausible to draw.
_MS = {
    "conv2d": {"eager": 5.1, "eager_fp32": 9.9, "channels_last": 3.9, "compile": 2.4, "cudnn_conv": 3.3,
               "cudnn_fused": 1.9, "cudnn_fused_nchw": 3.2,
               "01_epilogue_fused": 4.0, "02_epilogue_vec3d": 3.7, "03a_seed_fused": 51.0,
               "03b_register_tiled": 7.4, "04_mma_tf32": 1.6, "04_mma_3xtf32": 3.4,
               "04b_wgmma_tf32": 1.3, "04c_ws_tf32": 1.4, "04c_ws_3xfp16": 1.7, "04c_ws_fp16": 1.2,
               "04d_rs_tf32": 1.15, "04d_rs_3xtf32": 3.1,
               "04e_wino_3xtf32": 1.5},
    "conv3d": {"eager": 10.2, "eager_fp32": 10.2, "channels_last": 9.1, "compile": 5.9, "cudnn_conv": 6.4,
               "cudnn_fused": 2.6, "cudnn_fused_nchw": 3.9,
               "01_epilogue_fused": 7.1, "02_epilogue_vec3d": 6.6, "03a_seed_fused": 41.7,
               "03b_register_tiled": 5.0, "04_mma_tf32": 1.5, "04_mma_3xtf32": 2.6,
               "04b_wgmma_tf32": 1.2, "04b_wgmma_3xtf32": 2.4, "04b_wgmma_tf32bf16": 2.2,
               "04b_wgmma_3xfp16": 1.7, "04b_wgmma_fp16": 1.0, "04d_rs_tf32": 1.8},
}
_ALONE = {"01_epilogue_fused": 1.55, "02_epilogue_vec3d": 1.05}   # x the copy time
_ERR = {"fp32": (2.8e-6, 5.1e-7), "3xtf32": (3.1e-6, 5.4e-7), "tf32+bf16": (5.5e-6, 6.4e-7), "3xfp16": (1.0e-5, 1.0e-6),
        "tf32": (1.0e-3, 2.9e-4), "fp16": (1.0e-3, 2.9e-4)}
_REGS = {"01_epilogue_fused": (16, 0), "02_epilogue_vec3d": (30, 0), "03a_seed_fused": (40, 34816),
         "03b_register_tiled": (128, 0), "04_mma_tf32": (168, 0), "04_mma_3xtf32": (200, 0),
         "04b_wgmma_tf32": (128, 0), "04b_wgmma_3xtf32": (168, 0), "04b_wgmma_tf32bf16": (152, 0), "04b_wgmma_3xfp16": (128, 0),
         "04c_ws_tf32": (168, 0), "04c_ws_3xfp16": (168, 0), "04b_wgmma_fp16": (128, 0), "04c_ws_fp16": (168, 0),
         "04d_rs_tf32": (168, 0), "04d_rs_3xtf32": (234, 0), "04e_wino_3xtf32": (254, 0)}
_PROFILE_CONV = {"conv2d": "sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nchwkcrs_nchw_tilesize128x128x32",
                 "conv3d": "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>(...)"}
_EW = {"bias add": "CUDAFunctor_add", "x * multiplier": "MulFunctor", "LeakyReLU": "leaky_relu_kernel",
       "leaky_relu": "leaky_relu_kernel", "+ sum_tensor": "CUDAFunctor_add", "clamp": "clamp_kernel_cuda",
       "GELU": "GeluCUDAKernelImpl"}


def _ew(op: str) -> str:
    return (f"void at::native::vectorized_elementwise_kernel<4, at::native::{_EW[op]}<float>, "
            f"std::array<char*, 2ul> >(int, at::native::{_EW[op]}<float>, std::array<char*, 2ul>)")


CUDNN_FUSED = ("cudnn_fused", "cudnn_fused_nchw")


def synthetic_run(gpu="NVIDIA H200", drop=(), extra_fields=False, date="2026-11-29T12:00:00+00:00", cudnn="ok",
                  kernelbench=False, scale=1.0, hopper=True) -> dict:
    """`cudnn`: "ok" (the cuDNN fused rows recorded), "absent" (a record from before them), "skipped" or "refused"
    (env["cudnn_fused"] says why); `kernelbench`: add KernelBench's verdicts to every verified record; `scale`
    multiplies every time (another GPU); `hopper` False leaves the sm_90a kernels out (an A100)."""
    if cudnn != "ok":
        drop = (*drop, *CUDNN_FUSED)
    if not hopper:
        drop = (*drop, *(v.key for v in R.kernel_variants() if v.needs_cc))
    env = {"gpu": gpu, "slug": gpu.lower().replace(" ", "-"), "sm_count": 132, "l2_mb": 60, "memory_gb": 150.0,
           "capability": "9.0", "torch": "2.11.0+cu130", "cuda": "13.0", "cudnn": 91900, "driver": "580.00",
           "python": "3.12.3", "date": date, "cudnn_allow_tf32": True, "matmul_allow_tf32": False,
           "build_all_cold_or_warm_s": 1.0, "copy_gbps": 4184.0, "fp32_tflops": 50.5, "tf32_tflops": 398.0,
           "bench_wall_s": 100.0, "synthetic": True}
    if cudnn in ("ok", "skipped", "refused"):
        msg = {"ok": "", "skipped": "nvidia-cudnn-frontend is not installed (pip install nvidia-cudnn-frontend)",
               "refused": "CUDNN_STATUS_NOT_SUPPORTED: no engine for the graph"}[cudnn]
        env["cudnn_fused"] = {pk: {"status": cudnn, "message": msg} for pk in _MS}
    records, profiles = [], {}
    for pk, times in _MS.items():
        prob = P.get(pk)
        out_bytes = T.FLOAT_BYTES * T._numel(prob.output_shape())
        copy_ms = 2 * out_bytes / (env["copy_gbps"] * 1e9) * 1e3
        eager, compiled = times["eager"] * scale, times["compile"] * scale
        for v in R.all_variants(pk):
            if v.key in drop:
                continue
            ms = times[v.key] * scale
            f, mb = T.flops(prob), T.model_bytes(prob, v.key)
            rec = {"problem": pk, "variant": v.key, "step": v.step, "precision": v.precision, "kind": v.kind,
                   "title": v.title, "median_ms": ms, "p20_ms": round(ms * 0.98, 5), "p80_ms": round(ms * 1.03, 5),
                   "n_timed": 25, "speedup_vs_eager": round(eager / ms, 3),
                   "speedup_vs_compile": round(compiled / ms, 3), "model_bytes": mb, "flops": f,
                   "achieved_gbps": round(mb / (ms * 1e-3) / 1e9, 1),
                   "achieved_tflops": round(f / (ms * 1e-3) / 1e12, 2), "dram_bytes_measured": None}
            if v.key == "cudnn_conv":
                rec.update(verified=None, max_abs_err_fp64=None, rel_l2_err_fp64=None, kernelbench_pass=None)
            else:
                # conv3d's cuDNN picks no TF32 algorithm: its tf32-class rows are FP32 class
                prec = "fp32" if (pk == "conv3d" and v.precision == "tf32" and not v.key.startswith("04")
                                  and v.key not in CUDNN_FUSED) else v.precision
                ma, rl = _ERR[prec]
                kb = (prec == "tf32") == (pk == "conv2d") or pk == "conv3d" and prec not in ("tf32", "fp16")
                rec.update(verified=True, verified_full=True, verified_odd=None if v.key == "compile" else True,
                           max_abs_err_fp64=ma, rel_l2_err_fp64=rl, kernelbench_pass=bool(kb),
                           allclose_fp64=prec not in ("tf32", "fp16"), verify_checks=12,
                           max_abs_err_fp64_odd=None if v.key == "compile" else ma,
                           rel_l2_err_fp64_odd=None if v.key == "compile" else rl)
            if v.key in CUDNN_FUSED:
                rec["cudnn_plan"] = {"name": "eng4_k2=3_k3=0", "index": 2, "plans": 6,
                                     "plans_ms": {"eng4_k2=3_k3=0": ms, "eng9_k2=1": ms * 1.4}, "frontend": "1.32.0",
                                     "backend": 91900}
            if kernelbench and rec.get("verified"):
                mean = ms * 1.02
                rec["kernelbench"] = {"pass": rec["kernelbench_pass"], "trials": 5,
                                      "max_abs_vs_eager": 4e-5 if rec["kernelbench_pass"] else 2.6e-3,
                                      "mean_ms": round(mean, 5), "n_timed": 100,
                                      "speedup_vs_eager": round(eager * 1.02 / mean, 3),
                                      "suspect": eager * 1.02 / mean > 10}
            if v.kind == "epilogue":
                ea = copy_ms * _ALONE[v.key]
                rec.update(epilogue_alone_ms=round(ea, 5),
                           epilogue_alone_gbps=round(2 * out_bytes / (ea * 1e-3) / 1e9, 1),
                           copy_same_bytes_ms=round(copy_ms, 5), epilogue_alone_vs_copy=round(copy_ms / ea, 3))
            if v.is_kernel:
                regs, smem = _REGS[v.key]
                rec.update(registers=regs, smem_bytes_static=smem, spill_bytes=0)
                if extra_fields:
                    rec.update(threads_per_block=256,
                               smem_bytes_dynamic=65536 if v.key == "03b_register_tiled" else 0)
            if extra_fields:   # what `make profile` (Nsight Compute) adds
                rec["dram_bytes_measured"] = int(mb * 1.04)
                rec["ncu_kernels"] = [{"kernel": name, "dram_read": rd, "dram_write": wr, "ms": ms / 2}
                                      for name, rd, wr in T.kernels(prob, v.key)]
            records.append(rec)
        ew_ms = copy_ms * 1.02
        conv_ms = eager - len(T.ELEMENTWISE_OPS[pk]) * ew_ms
        eager_prof = [{"kernel": _PROFILE_CONV[pk], "cuda_ms": round(conv_ms, 5)}]
        eager_prof += [{"kernel": _ew(op), "cuda_ms": round(ew_ms, 5)} for op in T.ELEMENTWISE_OPS[pk]]
        profiles[pk] = {
            "eager": eager_prof,
            "compile": [{"kernel": "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>(...)",
                         "cuda_ms": 0.3},
                        {"kernel": "sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc", "cuda_ms": 1.2},
                        {"kernel": f"triton_poi_fused_convolution_gelu_{pk}_0", "cuda_ms": round(ew_ms, 5)}],
            "cudnn_conv": eager_prof[:2],
        }
    return {"env": env, "records": records, "profiles": profiles}


def synthetic_prediction(key: str = "h100-sxm", made: str = "2026-12-06T07:30:00+00:00") -> dict:
    """A prediction file as results/predictions/<key>.json holds one: the traffic model at that datasheet GPU's
    ceilings for every registry variant (made here, for tests only)."""
    g = T.datasheet(key)
    preds = {pk: {v.key: T.predict_ms(P.get(pk), v.key, v.precision, g) | {"precision": v.precision}
                  for v in R.all_variants(pk)} for pk in P.PROBLEMS}
    return {"gpu": {"key": g.key, "name": g.name, "dram_gbps": g.dram_gbps, "fp32_tflops": g.fp32_tflops,
                    "tf32_tflops": g.tf32_tflops, "source": g.source}, "made": made, "commit": "abc1234",
            "model": "traffic.predict_ms: synthetic, for tests", "predictions": preds}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_roofline_draws_ceilings_and_both_marker_kinds():
    run = synthetic_run()
    gpu = T.datasheet("h200")
    pts = plots.predicted_points(gpu) + plots.measured_points(run)
    ax = plots.roofline(None, gpu, pts)
    labels = [line.get_label() for line in ax.get_lines()]
    assert any(lbl.startswith("DRAM") for lbl in labels)
    assert sum(lbl.startswith(("FP32", "TF32", "3xTF32")) for lbl in labels) == 4   # FP32, TF32, 3xTF32, TF32+BF16
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    n_variants = len(R.VARIANTS)
    assert len(pts) == 2 * n_variants and len(ax.collections) == 2 * n_variants
    filled = [c for c in ax.collections if c.get_facecolors().size and c.get_facecolors()[0][3] > 0]
    assert len(filled) == n_variants       # measured: filled; predicted: hollow


def test_measured_point_is_achieved_rate_at_model_intensity():
    run = synthetic_run()
    p = [q for q in plots.measured_points(run, "conv2d") if q["variant"] == "eager"][0]
    rec = study.record(run, "conv2d", "eager")
    assert p["intensity"] == pytest.approx(rec["flops"] / rec["model_bytes"])
    assert p["tflops"] == pytest.approx(rec["flops"] / (rec["median_ms"] * 1e-3) / 1e12)


def test_figures_from_run_and_save(tmp_path):
    run = synthetic_run(drop=("04_mma_3xtf32",))    # a variant not recorded yet must not break a plot
    figs = {"roofline_run": plots.roofline_for_run(run),
            "roofline_a100": plots.roofline_for_run(run, T.datasheet("a100-80gb")),
            "time": plots.time_bars(run, "conv2d"),
            "traffic": plots.traffic_bars(),
            "traffic_one": plots.traffic_bars("conv3d", run),
            "speedup": plots.speedup_bars(run)}
    for name, fig in figs.items():
        path = plots.save(fig, name, tmp_path)
        assert path.exists() and 2_000 < path.stat().st_size < 400_000, name


def test_roofline_for_run_marks_measured_only_on_own_gpu():
    run = synthetic_run()
    own = plots.roofline_for_run(run, T.datasheet("h200"))
    other = plots.roofline_for_run(run, T.datasheet("h100-sxm"))
    n_own = sum(len(ax.collections) for ax in own.axes)
    n_other = sum(len(ax.collections) for ax in other.axes)
    assert n_own == 2 * n_other


def test_study_tables_say_not_recorded(monkeypatch):
    monkeypatch.setenv("CONVFUSE_MODE", "recorded")
    run = synthetic_run(drop=("04_mma_tf32",))
    t = study.table(run, "conv2d")
    assert t.loc["04_mma_tf32", "status"] == study.NOT_RECORDED
    assert t.loc["eager", "median ms"] == pytest.approx(5.1)
    v = study.verification_table(run, "conv2d")
    assert v.loc["cudnn_conv", "status"].startswith("timed only")
    assert "not recorded" in study.say(run, "conv2d", "04_mma_tf32", "{median_ms}")
    assert "not recorded" in study.say(run, "conv2d", "eager", "{no_such_field}")
    s = study.say(run, "conv2d", "02_epilogue_vec3d", "{epilogue_pct_copy:.0f}")
    assert s == f"{100 * study.record(run, 'conv2d', '02_epilogue_vec3d')['epilogue_alone_vs_copy']:.0f}"
    assert study.time_split(run, "conv2d")["epilogue_kernels"] == len(T.ELEMENTWISE_OPS["conv2d"])
    assert len(study.floors_table("conv3d", run)) == len(T.DATASHEET_GPUS) + 1
    assert study.ptxas_usage("conv2d", "03a_seed_fused", run).loc["03a_seed_fused", "registers"] == 40
    assert "status" in study.resources_table(run, "conv2d", ["04_mma_tf32"]).columns


def test_gemm_mapping_draws_each_problem_with_its_gemm_dims():
    fig = plots.gemm_mapping()
    assert len(fig.axes) == 2
    for ax, key in zip(fig.axes, ("conv2d", "conv3d")):
        M, N, K = T.gemm_dims(P.get(key))
        text = " ".join(t.get_text() for t in ax.texts)
        assert f"{N:,}" in text and f"= {K}" in text and f"Cout = {M}" in text
        assert f"{K // 8} k8 steps" in text


# --- issue 64, item 7: the figures as a reader sees them ------------------------------------------------------------
def _recorded_runs():
    from convfuse import results

    try:
        return results.all_recorded(plots.ROOT / "results")
    except FileNotFoundError:
        return []


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _roofline_figures():
    run = synthetic_run()
    figs = [("synthetic", plots.roofline_for_run(run)), ("synthetic a100", plots.roofline_for_run(run, T.datasheet("a100-80gb")))]
    for rec in _recorded_runs():
        figs.append((rec["env"]["gpu"], plots.roofline_for_run(rec)))
        figs.append((rec["env"]["gpu"] + " refs", plots.roofline_for_run(rec, variants=study.REFERENCES)))
    return figs


def test_roofline_labels_overlap_neither_each_other_nor_ceilings():
    from matplotlib.path import Path as MPath
    from matplotlib.text import Text

    for name, fig in _roofline_figures():
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            # the text's own box (an Annotation's window extent adds its leader line)
            boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]
            assert boxes, name
            frame = ax.get_window_extent(renderer)
            for i, b in enumerate(boxes):
                assert frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1, \
                    (name, ax.texts[i].get_text())
                for j in range(i):
                    assert not _overlap(b, boxes[j]), (name, ax.texts[i].get_text(), ax.texts[j].get_text())
                for line in ax.get_lines():     # the DRAM roof and every ceiling
                    path = MPath(ax.transData.transform(line.get_xydata()))
                    assert not path.intersects_bbox(b, filled=False), (name, ax.texts[i].get_text(), line.get_label())


def test_roofline_legend_names_every_problems_marker():
    fig = plots.roofline_for_run(synthetic_run())
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert len(legends) == 1
    handles = {h.get_label(): h for h in legends[0].legend_handles}
    for pk, marker in plots.PROBLEM_MARKER.items():
        assert pk in handles and handles[pk].get_marker() == marker, pk


def test_traffic_labels_measured_bytes_beside_the_measured_marker():
    from matplotlib.text import Text

    run = synthetic_run(extra_fields=True)
    odd = study.record(run, "conv3d", "03a_seed_fused")
    odd["dram_bytes_measured"] = int(odd["model_bytes"] * 1.95)     # measured far from the model (the H100's 03a)
    runs = [("synthetic", run)] + [(r["env"]["gpu"], r) for r in _recorded_runs()]
    for name, rn in runs:
        fig = plots.traffic_bars(None, rn)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax, pk in zip(fig.axes, P.PROBLEMS):
            keys = [t.get_text() for t in ax.get_yticklabels()]
            meas = {round(t.xy[1]): t for t in ax.texts if t.get_gid() == "measured"}
            model = {round(t.get_position()[1]): t for t in ax.texts if t.get_gid() == "model"}
            n_meas = 0
            for i, key in enumerate(keys):
                rec = study.record(rn, pk, key)
                mb = sum(rd + wr for _, rd, wr in T.kernels(P.get(pk), key))
                assert model[i].get_text() == f"{mb / 1e9:.2f}", (name, pk, key)
                if rec and rec.get("dram_bytes_measured"):
                    n_meas += 1
                    assert meas[i].get_text() == f"{rec['dram_bytes_measured'] / 1e9:.2f}", (name, pk, key)
                    # next to the measured marker: its anchor is the marker or the bar's end, whichever is further right
                    assert meas[i].xy[0] == pytest.approx(max(mb, rec["dram_bytes_measured"]) / 1e9), (name, pk, key)
                else:
                    assert i not in meas
            assert n_meas == len(meas)
            frame = ax.get_window_extent(renderer)
            boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]
            for i, b in enumerate(boxes):
                assert b.x1 <= frame.x1, (name, ax.texts[i].get_text())   # not cut off at the right
                for j in range(i):
                    assert not _overlap(b, boxes[j]), (name, ax.texts[i].get_text(), ax.texts[j].get_text())
            legend = ax.get_legend().get_window_extent(renderer)
            assert legend.x0 >= frame.x1           # the legend covers no bar
    assert study.record(run, "conv3d", "03a_seed_fused")["dram_bytes_measured"] / 1e9 > 3.9


def test_time_bars_name_the_arithmetic_the_conv_ran_and_keep_their_labels_whole(tmp_path):
    """conv3d's eager conv is FP32 (cuDNN picks no TF32 algorithm): the bar says so, as the tables do; a value label
    sits on a white ground (the eager and compile lines cross some), and the x label stays inside the figure."""
    run = synthetic_run()
    fig = plots.time_bars(run, "conv3d", ["eager", "compile", "04_mma_tf32"])
    ax = fig.axes[0]
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert names[0] == "eager [fp32]" and names[2] == "04_mma_tf32 [tf32]"
    values = [t for t in ax.texts if t.get_text().strip().endswith("ms")]
    assert values and all(t.get_bbox_patch() is not None for t in values)
    fig.canvas.draw()
    box = ax.xaxis.label.get_window_extent()
    assert box.x0 >= 0 and box.x1 <= fig.bbox.x1
