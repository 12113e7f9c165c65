"""The traffic model's counts against numbers worked out by hand."""
import pytest

from convfuse import problems as P
from convfuse import registry as R
from convfuse import traffic as T


def test_conv_flops_by_hand():
    # conv2d: 2 * N*Cout*Ho*Wo * Cin*k*k = 2 * 64*64*254*254 * 64*9
    assert T.conv_flops(P.CONV2D) == 2 * 264_257_536 * 576 == 304_424_681_472
    # conv3d: 2 * 128*64*14*62*62 * 8*27
    assert T.conv_flops(P.CONV3D) == 2 * 440_860_672 * 216 == 190_451_810_304


def test_floor_bytes_by_hand():
    assert T.floor_bytes(P.CONV2D) == 4 * (268_435_456 + 264_257_536) == 2_130_771_968
    assert T.floor_bytes(P.CONV3D) == 4 * (67_108_864 + 440_860_672) == 2_031_878_144


def test_eager_bytes_by_hand():
    x2, y2, w2 = 4 * 268_435_456, 4 * 264_257_536, 4 * (64 * 64 * 9 + 128)
    # cuDNN's TF32 path: x to NHWC (read+write), conv (x in, y out), y back to NCHW (read+write),
    # then bias, multiply, leaky, gelu: each reads and writes y
    assert T.model_bytes(P.CONV2D, "eager") == 2 * x2 + x2 + w2 + y2 + 2 * y2 + 4 * 2 * y2
    assert T.model_bytes(P.CONV2D, "eager_fp32") == x2 + w2 + y2 + 4 * 2 * y2
    x3, y3, w3 = 4 * 67_108_864, 4 * 440_860_672, 4 * (64 * 8 * 27 + 128)
    assert T.model_bytes(P.CONV3D, "eager") == x3 + w3 + y3 + 5 * 2 * y3
    # step 01: conv without bias (with cuDNN's transposes), then one epilogue pass
    assert T.model_bytes(P.CONV2D, "01_epilogue_fused") == 2 * x2 + x2 + w2 + y2 + 2 * y2 + 2 * y2
    assert T.model_bytes(P.CONV3D, "01_epilogue_fused") == x3 + w3 + y3 + 2 * y3
    assert T.model_bytes(P.CONV3D, "compile") == x3 + w3 + y3 + 2 * y3
    # fused kernels: input and weights once, output once
    assert T.model_bytes(P.CONV3D, "04_mma_tf32") == x3 + w3 + y3


def test_prediction_is_the_larger_term():
    h200 = T.datasheet("h200")
    p = T.predict_ms(P.CONV2D, "03b_register_tiled", "fp32", h200)
    assert p["bound"] == "compute" and p["ms"] == pytest.approx(T.flops(P.CONV2D) / 67e12 * 1e3)
    p = T.predict_ms(P.CONV3D, "eager", "tf32", h200)
    assert p["bound"] == "memory" and p["ms"] == pytest.approx(T.model_bytes(P.CONV3D, "eager") / 4.8e12 * 1e3)
    assert h200.tflops["3xtf32"] == pytest.approx(h200.tf32_tflops / 3)
    # cuDNN runs conv3d in FP32 even where TF32 is allowed: its compute floor is the FP32 one
    p = T.predict_ms(P.CONV3D, "compile", "tf32", h200)
    assert p["math_ms"] == pytest.approx(T.flops(P.CONV3D) / 67e12 * 1e3)


def test_every_gpu_has_a_source_and_sane_ceilings():
    for g in T.DATASHEET_GPUS:
        assert g.source and 1000 < g.dram_gbps < 6000 and g.fp32_tflops < g.tf32_tflops
    with pytest.raises(ValueError):
        T.datasheet("v100")


def test_every_registry_variant_has_a_traffic_model():
    from convfuse.registry import VARIANTS

    for v in VARIANTS:
        assert T.model_bytes(P.get(v.problem), v.key) >= T.floor_bytes(P.get(v.problem))


def test_published_anchors_name_modeled_gpus_and_reference_rows():
    from convfuse.registry import all_variants

    refs = {v.key for v in all_variants("conv2d", kind="reference")}
    for gpu, entry in T.KERNELBENCH_PUBLISHED_MS.items():
        T.datasheet(gpu)
        assert entry["source"]
        for prob in ("conv2d", "conv3d"):
            assert set(entry[prob]) <= refs
            # a published time can never beat the model's floor for that GPU
            for key, ms in entry[prob].items():
                assert ms >= T.predict_ms(P.get(prob), key, "tf32", T.datasheet(gpu))["ms"]


def test_every_algorithm_is_modelled_and_the_direct_conv_does_the_problems_work():
    from convfuse import registry as R
    for v in R.VARIANTS:
        prob = P.get(v.problem)
        assert T.algorithm(prob, v.key) == v.algorithm in T.ALGORITHM_WORK
        if v.algorithm == "direct":
            assert T.work_share(prob, v.key) == 1.0 and T.conv_work_flops(prob, v.key) == T.conv_flops(prob)
        for name, _, _ in T.kernels(prob, v.key):       # every kernel has a category the traffic chart can colour
            from convfuse import plots
            assert T.kernel_category(name) in plots.CATEGORY_COLOR, name


def test_winograd_does_16_of_36_multiplies_and_streams_its_transformed_weights():
    from convfuse import registry as R
    prob = P.CONV2D
    for v in R.VARIANTS:
        if v.algorithm != "winograd_f2x2_3x3":
            continue
        conv, f = T.conv_flops(prob), T.flops(prob)
        assert T.conv_work_flops(prob, v.key) == pytest.approx(conv * 16 / 36)
        assert T.work_share(prob, v.key) == pytest.approx((conv * 16 / 36 + f - conv) / f)
        # the pre-pass: V for 16 positions x 64 x 64, two parts in 3xTF32; the conv reads x and V once from DRAM
        (pre, pre_r, pre_w), (conv_k, rd, wr) = T.kernels(prob, v.key)
        parts = 2 if v.precision == "3xtf32" else 1
        assert pre_w == 4 * 16 * 64 * 64 * parts and pre_r == T.weight_bytes(prob)
        assert rd == 4 * 64 * 64 * 256 * 256 + pre_w + 4 * 2 * 64 and wr == 4 * 64 * 64 * 254 * 254
        assert T.kernel_category(pre) == "weight pre-pass" and T.kernel_category(conv_k).startswith("fused conv")
        gpu = T.datasheet("h200")
        direct = T.predict_ms(prob, "04d_rs_3xtf32" if v.precision == "3xtf32" else "04d_rs_tf32", v.precision, gpu)
        wino = T.predict_ms(prob, v.key, v.precision, gpu)
        assert wino["math_ms"] == pytest.approx(direct["math_ms"] * T.work_share(prob, v.key))


def test_the_cudnn_graph_rows_move_the_floor_and_the_nchw_caller_pays_two_conversions():
    for pk, prob in P.PROBLEMS.items():
        assert T.model_bytes(prob, "cudnn_fused") == T.floor_bytes(prob) + T.weight_bytes(prob)
        x, y = T.shapes(prob)
        extra = 2 * T.FLOAT_BYTES * (T._numel(x) + T._numel(y))
        assert T.model_bytes(prob, "cudnn_fused_nchw") == T.model_bytes(prob, "cudnn_fused") + extra
        assert T.kernel_category(T.kernels(prob, "cudnn_fused")[0][0]) == "fused conv+epilogue (one kernel)"


def test_a_prediction_covers_every_variant_on_the_datasheet_it_names():
    pred = T.prediction("h100-sxm")
    assert pred["gpu"]["key"] == "h100-sxm" and pred["gpu"]["dram_gbps"] == 3350
    for pk, prob in P.PROBLEMS.items():
        assert set(pred["predictions"][pk]) == {v.key for v in R.all_variants(pk)}
        p = pred["predictions"][pk]["04b_wgmma_tf32"]
        assert p["ms"] == max(p["memory_ms"], p["math_ms"]) and p["bound"] in ("memory", "compute")
        assert abs(p["ms"] - T.predict_ms(prob, "04b_wgmma_tf32", "tf32", T.datasheet("h100-sxm"))["ms"]) < 1e-3
    with pytest.raises(ValueError, match="unknown GPU"):
        T.prediction("h300")
