"""The library face on the CPU: every kernel variant an op, traced by torch.compile(fullgraph=True) with fake CUDA
tensors; the checks at its door; the inference-only refusal; fuse()'s choice from the records; the build's targets."""
import os
import subprocess

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode, unset_fake_temporarily

from convfuse import build as B
from convfuse import ops as O
from convfuse import problems as P
from convfuse import registry as R
from convfuse import results as RS
from convfuse.verify import BOUNDS

KERNELS = R.kernel_variants()


def fake_cuda_model(prob, mode):
    """The problem's model with fake CUDA parameters (a CPU build of torch cannot make real or random CUDA ones)."""
    with unset_fake_temporarily():
        model = prob.make_model(seed=0)
        for m in model.modules():
            for n, p in list(m._parameters.items()):
                fake = FakeTensor(mode, p.detach().to("meta"), torch.device("cuda", 0))
                m._parameters[n] = torch.nn.Parameter(fake, requires_grad=p.requires_grad)
    return model


def compiled_graph_ops(module, x):
    """torch.compile(fullgraph=True) of module(x), no grad; the ops its one graph calls."""
    seen = []

    def backend(gm, example_inputs):
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm

    torch._dynamo.reset()
    with torch.no_grad():
        y = torch.compile(module, fullgraph=True, backend=backend)(x)
    return y, seen


def test_every_kernel_variant_is_an_op_and_nothing_else_is():
    names = {O.op_name(v) for v in KERNELS}
    assert len(names) == len(KERNELS)
    for v in KERNELS:
        assert hasattr(torch.ops.convfuse, O.op_name(v))
        assert O.op(v.problem, v.key) is O.OPS[(v.problem, v.key)]
    assert set(O.OPS) == {(v.problem, v.key) for v in KERNELS}
    with pytest.raises(ValueError, match="04_mma_tf32"):         # a typo names the valid keys
        O.op("conv2d", "04_mma_tf3")
    with pytest.raises(ValueError, match="reference row"):
        O.op("conv2d", "eager")


@pytest.mark.parametrize("pk", list(P.PROBLEMS))
def test_a_model_calling_each_op_compiles_into_one_graph_with_fake_tensors(pk):
    prob = P.get(pk)
    mode = FakeTensorMode()
    with mode:
        model = fake_cuda_model(prob, mode)
        for shape in (prob.input_shape, prob.odd_shapes[0]):
            x = torch.empty(shape, device="cuda")
            for v in R.kernel_variants(pk):
                y, seen = compiled_graph_ops(O.FusedConv(model, v), x)
                assert tuple(y.shape) == prob.output_shape(shape) and y.device.type == "cuda"
                assert y.dtype == torch.float32 and y.is_contiguous()
                assert seen == [f"convfuse.{O.op_name(v)}.default"], seen


@pytest.mark.parametrize("pk", list(P.PROBLEMS))
def test_the_fake_kernel_refuses_what_the_kernel_refuses_with_the_registrys_message(pk, bad_input_cases):
    prob = P.get(pk)
    v = R.kernel_variants(pk)[-1]
    mode = FakeTensorMode()
    model = prob.make_model(seed=0)
    good = {n: mode.from_tensor(t.detach()) for n, t in zip(("weight", "bias", "param"), P.conv_params(model))}
    good["x"] = mode.from_tensor(prob.make_input(prob.odd_shapes[0]))
    with mode:
        for exc, pattern, bad in bad_input_cases(prob, good):
            args = {**good, **bad}
            with pytest.raises(exc, match=pattern):
                O.OPS[(pk, v.key)](args["x"], args["weight"], args["bias"], args["param"])
        with pytest.raises(ValueError, match="must be a CUDA tensor"):      # the good call, but on the CPU
            O.OPS[(pk, v.key)](good["x"], good["weight"], good["bias"], good["param"])


def test_compiling_a_call_the_kernel_cannot_take_fails_naming_why():
    prob = P.get("conv2d")
    mode = FakeTensorMode()
    with mode:
        model = fake_cuda_model(prob, mode)
        n, c, h, w = prob.odd_shapes[0]
        x_cl = torch.empty(n, h, w, c, device="cuda").movedim(-1, 1)        # channels_last
        with pytest.raises(Exception, match="channels_last tensor; call x.contiguous"):
            compiled_graph_ops(O.FusedConv(model, R.kernel_variants("conv2d")[0]), x_cl)
        # with the fallback, the same call is eager PyTorch in the graph, no convfuse op
        y, seen = compiled_graph_ops(O.FusedConv(model, R.kernel_variants("conv2d")[0], fallback=True), x_cl)
        assert tuple(y.shape) == prob.output_shape((n, c, h, w))
        assert not any("convfuse" in s for s in seen) and any("conv2d" in s for s in seen), seen


def test_an_input_that_requires_grad_is_refused_at_the_call():
    prob = P.get("conv3d")
    mode = FakeTensorMode()
    with mode:
        model = fake_cuda_model(prob, mode)          # parameters require grad, as a model's do
        x = torch.empty(prob.odd_shapes[0], device="cuda")
        v = R.kernel_variants("conv3d")[0]
        with pytest.raises(RuntimeError, match="inference-only.*torch.no_grad"):
            O.FusedConv(model, v)(x)
        with pytest.raises(RuntimeError, match="inference-only"):
            O.call("conv3d", v.key, x, *P.conv_params(model))
        with torch.no_grad():
            assert O.FusedConv(model, v)(x).shape == prob.output_shape(x.shape)
        with torch.inference_mode():
            assert O.call("conv3d", v.key, x, *P.conv_params(model)).shape == prob.output_shape(x.shape)
    # with the fallback: eager PyTorch, which has a backward (on the CPU here: a CPU torch has no CUDA autograd)
    model = prob.make_model(seed=0)
    y = O.FusedConv(model, v, fallback=True)(prob.make_input(prob.odd_shapes[1]))
    assert y.grad_fn is not None


def test_the_op_called_directly_refuses_grad_in_its_autograd_step(monkeypatch):
    """Past the Python entry (torch.ops.convfuse.* called directly, or AOTAutograd tracing it) the op's own autograd
    registration refuses; a stand-in runs in place of the kernel so that the forward gets that far on the CPU."""
    prob = P.get("conv2d")
    v = R.kernel_variants("conv2d")[0]
    model = prob.make_model(seed=0)
    monkeypatch.setattr(O.R, "check_inputs", lambda *a: None)
    monkeypatch.setattr(O, "_runner", lambda variant: lambda x, w, b, p: torch.zeros(prob.output_shape(x.shape)))
    x = prob.make_input(prob.odd_shapes[0])
    w, b, p = P.conv_params(model)
    with pytest.raises(RuntimeError, match=f"convfuse::{O.op_name(v)} is inference-only"):
        O.OPS[("conv2d", v.key)](x, w, b, p)
    with torch.no_grad():
        assert O.OPS[("conv2d", v.key)](x, w, b, p).shape == prob.output_shape(x.shape)


def test_fused_module_holds_the_models_own_parameters():
    for prob in P.PROBLEMS.values():
        model = prob.make_model(seed=0)
        f = O.FusedConv(model, R.kernel_variants(prob.key)[0])
        assert list(f.state_dict()) == list(model.state_dict())
        assert all(a is b for a, b in zip(f.parameters(), model.parameters()))
        assert len(list(f.parameters())) == len(list(model.parameters()))
        with pytest.raises(ValueError, match="kernel of"):
            O.FusedConv(model, R.kernel_variants("conv3d" if prob.key == "conv2d" else "conv2d")[0])
    with pytest.raises(O.Unsupported, match="KernelBench model.*nor of the family"):
        O.fuse(torch.nn.Conv2d(64, 64, 3, padding=1))


def test_fuse_refuses_what_no_kernel_can_take_or_falls_back_when_asked():
    prob = P.get("conv2d")
    model = prob.make_model(seed=0)
    with pytest.raises(O.Unsupported, match="on cpu.*CUDA"):
        O.fuse(model)
    with pytest.raises(O.Unsupported, match="float64"):
        O.fuse(prob.make_model(seed=0, dtype=torch.float64))
    with pytest.raises(ValueError, match="precision 'bf16'"):
        O.fuse(model, precision="bf16")
    with pytest.warns(UserWarning, match="eager PyTorch"):
        f = O.fuse(model, fallback=True)
    assert f.variant is None and "cpu" in f.why
    x = prob.make_input(prob.odd_shapes[1])
    with torch.no_grad():
        assert torch.equal(f(x), model(x))


def _fastest_by_hand(run, pk, precision, cc):
    rows = []
    for r in RS.records(run, pk):
        v = next((v for v in R.kernel_variants(pk) if v.key == r["variant"]), None)
        if v is None or not r.get("verified") or not r.get("median_ms") or not v.runs_on(cc):
            continue
        if v.input_scales is not None:              # its class holds over a narrower input range: never chosen
            continue
        if precision == "fp32" and BOUNDS[v.precision] != BOUNDS["fp32"]:
            continue
        rows.append((r["median_ms"], v.key))
    return min(rows)[1]


@pytest.mark.parametrize("precision", O.CLASSES)
def test_fuse_chooses_the_fastest_verified_kernel_of_the_class_on_this_gpus_record(precision):
    runs = RS.all_recorded()
    assert runs
    for run in runs:
        for pk in P.PROBLEMS:
            v, why = O.choose(pk, precision, run["env"]["gpu"], (9, 0), runs)
            assert v.key == _fastest_by_hand(run, pk, precision, (9, 0)), why
            assert "record of this GPU" in why
            if precision == "fp32":
                assert BOUNDS[v.precision] == BOUNDS["fp32"]
            assert v.input_scales is None                # its class holds for any input scale
    # the FP16-operand kernels of conv2d 04c are faster on the record, and hold their class only from 1e-4 / 1e-2 up
    h100 = next(r for r in runs if "H100" in r["env"]["gpu"])
    assert O.choose("conv2d", precision, h100["env"]["gpu"], (9, 0), runs)[0].key not in ("04c_ws_fp16", "04c_ws_3xfp16")


def test_a_gpu_without_a_record_gets_a_portable_kernel_and_an_old_one_a_refusal():
    runs = RS.all_recorded()
    for cc in ((8, 0), (9, 0), (10, 0), (12, 0)):       # A100, an unrecorded Hopper, Blackwell: portable code
        for pk in P.PROBLEMS:
            for precision in O.CLASSES:
                v, why = O.choose(pk, precision, "NVIDIA Imaginary GPU", cc, runs)
                assert v.needs_cc is None and v.runs_on(cc) and O.in_class(v, precision), (v, why)
                assert "no verified record" in why
    v, why = O.choose("conv2d", "tf32", "NVIDIA Imaginary GPU", (8, 0), runs=[])
    assert v.needs_cc is None and "no record" in why
    with pytest.raises(O.Unsupported, match="7.0.*need 8.0 or later"):
        O.choose("conv2d", "tf32", "Tesla V100", (7, 0), runs)


def test_precision_classes_follow_the_bounds():
    assert O.in_class(R.get("conv2d", "04_mma_3xtf32"), "fp32") and O.in_class(R.get("conv2d", "04_mma_3xtf32"), "tf32")
    assert not O.in_class(R.get("conv2d", "04_mma_tf32"), "fp32") and O.in_class(R.get("conv2d", "04_mma_tf32"), "tf32")
    assert {v.precision for v in KERNELS if O.in_class(v, "fp32")} == {p for p, b in BOUNDS.items() if b == BOUNDS["fp32"]
                                                                     } & {v.precision for v in KERNELS}


# --- builds for the GPUs that will come ---------------------------------------------------------------------------
def test_each_build_carries_ptx_for_its_newest_portable_target():
    for v in KERNELS:
        archs = B.arch_list(v).split(";")
        if v.needs_cc is None:
            assert archs[-1] == "9.0+PTX" and sum("+PTX" in a for a in archs) == 1, (v.key, archs)
        else:                           # arch-specific PTX runs on that GPU alone, which has the SASS
            assert not any("+PTX" in a for a in archs), (v.key, archs)


@pytest.mark.parametrize("fails", [False, True])
def test_a_build_leaves_torch_cuda_arch_list_as_the_caller_had_it(monkeypatch, tmp_path, fails):
    import torch.utils.cpp_extension as ext

    seen = {}

    def fake_load_inline(**kw):
        seen["archs"] = os.environ.get("TORCH_CUDA_ARCH_LIST")
        if fails:
            raise RuntimeError("nvcc said no")
        return object()

    monkeypatch.setattr(ext, "load_inline", fake_load_inline)
    monkeypatch.setattr(B, "BUILD_DIR", tmp_path)
    v = R.get("conv2d", "04_mma_tf32")
    for before in ("7.5;8.6", None):
        if before is None:
            monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
        else:
            monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", before)
        if fails:
            with pytest.raises(RuntimeError, match="nvcc said no"):
                B._load(v)
        else:
            B._load(v)
        assert seen["archs"] == "8.0;9.0+PTX"
        assert os.environ.get("TORCH_CUDA_ARCH_LIST") == before


@pytest.mark.skipif(B.find_nvcc() is None or RS.cuda_tool("cuobjdump") is None, reason="nvcc or cuobjdump not found")
def test_the_ptx_entry_leaves_the_sass_the_record_keys_as_it_was(tmp_path):
    """The extension's flags (torch's, from arch_list) put compute_90 PTX beside the SASS; the sm_80 and sm_90 SASS in
    that fatbin is the SASS of the cubins results.machine_code compiles for the record's keys."""
    from torch.utils.cpp_extension import _get_cuda_arch_flags

    v = R.get("conv2d", "01_epilogue_fused")
    src = tmp_path / "k.cu"
    src.write_text(B.kernel_source(v))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TORCH_CUDA_ARCH_LIST", B.arch_list(v))
        flags = _get_cuda_arch_flags()
    assert "-gencode=arch=compute_90,code=compute_90" in flags
    obj = tmp_path / "k.o"
    subprocess.run([B.find_nvcc(), *B.NVCC_FLAGS, "-c", str(src), "-o", str(obj), "-I", str(R.KERNELS), *flags],
                   check=True, capture_output=True, text=True)
    cuobjdump = RS.cuda_tool("cuobjdump")
    ptx = subprocess.run([cuobjdump, "-lptx", str(obj)], capture_output=True, text=True)
    assert "sm_90" in ptx.stdout, ptx.stdout + ptx.stderr
    subprocess.run([cuobjdump, "-xelf", "all", str(obj)], cwd=tmp_path, check=True, capture_output=True)
    for arch in ("80", "90"):
        (cubin,) = tmp_path.glob(f"*sm_{arch}.cubin")       # the fatbin's SASS entry for this target
        mine = RS.normalized_sass(RS.cuobjdump_sass(cuobjdump, cubin).stdout)
        alone = RS.normalized_sass(RS.cuobjdump_sass(cuobjdump, RS.compile_cubin(B.kernel_source(v), arch)).stdout)
        assert mine and mine == alone, f"sm_{arch}"


class KernelBenchModel(torch.nn.Module):
    """KernelBench's level2/54 file as it is (its class is called Model there)."""

    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size)
        self.multiplier = torch.nn.Parameter(torch.randn(multiplier_shape))
        self.leaky_relu = torch.nn.LeakyReLU()

    def forward(self, x):
        x = self.conv(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        return torch.nn.functional.gelu(x)


class Lookalike(KernelBenchModel):
    def forward(self, x):
        return torch.nn.functional.gelu(self.conv(x) * self.multiplier)        # no LeakyReLU


def test_kernelbenchs_own_model_class_is_taken_and_a_lookalike_is_not():
    assert O.problem_of(KernelBenchModel(64, 64, 3, (64, 1, 1))).key == "conv2d"
    with pytest.raises(TypeError, match="computes something else"):
        O.problem_of(Lookalike(64, 64, 3, (64, 1, 1)))
    padded = KernelBenchModel(64, 64, 3, (64, 1, 1))
    padded.conv.padding = (1, 1)
    with pytest.raises(O.Unsupported, match="no padding.*nor of the family"):
        O.fuse(padded)
    model = KernelBenchModel(64, 64, 3, (64, 1, 1))
    f = O.FusedConv(model, R.kernel_variants("conv2d")[0])
    assert f.multiplier is model.multiplier and f.conv.weight is model.conv.weight


def test_a_real_call_the_kernel_cannot_take_is_refused_before_any_build(monkeypatch):
    def no_build(variant):
        raise AssertionError("built for a call it refuses")

    monkeypatch.setattr(O, "_runner", no_build)
    prob = P.get("conv3d")
    model = prob.make_model(seed=0).requires_grad_(False)
    x = prob.make_input(prob.odd_shapes[0])
    for v in R.kernel_variants("conv3d"):
        with pytest.raises(ValueError, match="x must be a CUDA tensor"):
            O.OPS[("conv3d", v.key)](x, *P.conv_params(model))
        with pytest.raises(TypeError, match="float32"):
            O.call("conv3d", v.key, x.double(), *P.conv_params(model))


# --- models of the family other than the study's two: the generated kernel, as torch.ops.convfuse.family -----------
def _family_fakes(monkeypatch, key="kb57"):
    """A family model with fake CUDA parameters; no build (the extension is a stand-in), a Hopper's capability."""
    from convfuse.family import models as FM
    from convfuse.family import template as FT

    monkeypatch.setattr(FT, "load", lambda traced, src, verbose=False, archs=None: object())
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "A GPU no record has")
    mode = FakeTensorMode()
    return FM.get(key), mode, FT


@pytest.mark.parametrize("precision", O.CLASSES)
def test_fuse_gives_any_other_family_model_its_generated_kernel(monkeypatch, precision):
    prob, mode, FT = _family_fakes(monkeypatch)
    with mode:
        model = fake_cuda_model(prob, mode)
        f = O.fuse(model, precision)
    assert isinstance(f, FT.FusedFamily) and f.design == O.FAMILY_DESIGNS[precision] and f.model is model
    assert "no family record of A GPU no record has" in f.why
    assert V_within(f.precision, precision)


def V_within(have: str, want: str) -> bool:
    """The family design's bound is at least as tight as the class asked for (verify.BOUNDS)."""
    return all(w is None or (h is not None and h <= w) for w, h in zip(BOUNDS[want], BOUNDS[have]))


def test_a_family_model_compiles_into_one_graph_node_with_fake_tensors(monkeypatch):
    prob, mode, FT = _family_fakes(monkeypatch, "kb32")          # the reduction over channels: its output shape
    with mode:
        model = fake_cuda_model(prob, mode)
        f = O.fuse(model, "tf32")
        for shape in (prob.input_shape, prob.odd_shapes[0]):
            x = torch.empty(shape, device="cuda")
            y, seen = compiled_graph_ops(f, x)
            assert seen == ["convfuse.family.default"], seen
            assert tuple(y.shape) == FT.output_shape(f.traced, shape) and y.shape[1] == 1 and y.device.type == "cuda"


def test_a_family_model_on_the_cpu_is_refused_or_falls_back(monkeypatch):
    from convfuse.family import models as FM

    model = FM.get("kb71").make_model(seed=0)
    with pytest.raises(O.Unsupported, match="on cpu.*CUDA"):
        O.fuse(model)
    with pytest.warns(UserWarning, match="eager PyTorch"):
        assert O.fuse(model, fallback=True) is model
    with pytest.warns(UserWarning, match="nor of the family"):
        conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        assert O.fuse(conv, fallback=True) is conv


def _family_record(slug="nvidia-h100-80gb-hbm3"):
    """A family record as scripts/family_gpu.py writes it, reduced to what family_design reads: per problem each design's
    verification and speed-up over eager (tf32h only on the 2-D problems, as the script plans it)."""
    from convfuse.family import models as FM
    from convfuse.family import template as FT

    recs = {}
    for k, p in FM.FAMILY.items():
        ds = [d for d in FT.DESIGNS if FT.takes(d, p.dims)]
        sp = {"fp32": 1.5, "tf32": 0.5, "3xtf32": 0.8, "tf32w": 2.0, "3xtf32w": 1.2, "tf32h": 3.0}
        recs[k] = {"designs": {d: {"verified": True} for d in ds}, "speedups": {f"{d}_vs_eager": sp[d] for d in ds}}
    return {"env": {"slug": slug, "gpu": "NVIDIA H100 80GB HBM3", "date": "2026-12-09T00:00:00+00:00"},
            "records": recs}


def test_the_family_design_is_the_records_best_of_the_class_that_runs_here():
    run = _family_record()
    h100, a100 = "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"
    d, why = O.family_design("tf32", 2, h100, (9, 0), runs=[run])
    assert d == "tf32h" and "3.00x" in why and "6 2-D problems" in why
    assert O.family_design("tf32", 3, h100, (9, 0), runs=[run])[0] == "tf32w"        # tf32h is 2-D only
    assert O.family_design("fp32", 2, h100, (9, 0), runs=[run])[0] == "fp32"         # the FP32 class: fp32, 3xtf32*
    # an sm_90a design is never chosen where its machine code cannot load, even on a record that names it
    assert O.family_design("tf32", 2, h100, (10, 0), runs=[run])[0] == "tf32w"
    # another GPU's record decides nothing here: the portable default, saying why
    d, why = O.family_design("tf32", 2, a100, (8, 0), runs=[run])
    assert d == O.FAMILY_DESIGNS["tf32"] and "no family record of " + a100 in why
    # a design not verified on one problem of the dims is out; with none left of the class, the default
    run["records"]["kb1"]["designs"]["tf32h"]["verified"] = False
    assert O.family_design("tf32", 2, h100, (9, 0), runs=[run])[0] == "tf32w"
    for r in run["records"].values():
        r["speedups"] = {}
    assert O.family_design("tf32", 2, h100, (9, 0), runs=[run])[0] == O.FAMILY_DESIGNS["tf32"]
