"""Each conv template design with each family problem's generated epilogue compiles with nvcc for its targets (sm_80 and
sm_90; tf32h sm_90a, 2-D problems only), alone and without torch, with no register spill and no stack frame (-Xptxas -v, the rule of test_kernels_compile.py); other
channel counts instantiate too; the torch glue compiles against torch's headers; kernels/family/ holds only what the
family's kernels paste in. The builds run in parallel, one nvcc per core, when the first compile test asks (its
fixture is not named `ptxas`: conftest.py starts test_kernels_compile's builds for that name)."""
import re
import os
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch.nn as nn
import torch.utils.cpp_extension as cpp_ext

from convfuse import build as B
from convfuse.family import models as M
from convfuse.family import template as TP
from convfuse.family import trace as T
from test_kernels_compile import _check_usage   # one rule for "compiles clean" (tests/ is on sys.path under pytest)

needs_nvcc = pytest.mark.skipif(B.find_nvcc() is None, reason="nvcc not found (CUDA_HOME or PATH): the compile "
                                "checks need it; CI has it")


class Odd(nn.Module):
    """Channel counts the nine do not have: Cout no multiple of the template's channel pass, Cout 1, Cin 1."""
    def __init__(self, cin, cout, dims):
        super().__init__()
        self.conv = (nn.Conv2d if dims == 2 else nn.Conv3d)(cin, cout, 3, bias=False)

    def forward(self, x):
        return nn.functional.silu(self.conv(x)).amax(dim=1)


ODD = {"cin3_cout20_2d": (3, 20, 2), "cin1_cout1_3d": (1, 1, 3), "cin17_cout130_2d": (17, 130, 2)}

# traced in this thread: torch.fx's tracer is not thread-safe, the compiles are
_TRACED = {p.key: T.trace(p.make_model(seed=0)) for p in M.FAMILY.values()} | {k: T.trace(Odd(*v)) for k, v in ODD.items()}
SOURCES = {f"{k}_{d}": TP.source(t, design=d) for k, t in _TRACED.items() for d in TP.DESIGNS
           if TP.takes(d, t.conv.dims)}
# the odd shapes at one target: sm_80, or the design's own where it is arch-specific
BUILDS = [(f"{k}_{d}", a) for k in M.FAMILY for d in TP.DESIGNS for a in TP.DESIGNS[d].archs if f"{k}_{d}" in SOURCES] + \
    [(f"{k}_{d}", TP.DESIGNS[d].archs[0] if TP.arch_specific(d) else "80") for k in ODD for d in TP.DESIGNS
     if f"{k}_{d}" in SOURCES]
SPLIT = {"": 0, "cf_family::k3xTF32": 1, "cf_family::kTF32H": 2}   # a design's Split in the mangled kernel names
_FUTURES = {}


def _one(key, arch):
    try:
        return TP.compile_usage(SOURCES[key], arch, stem=f"family_{key}_sm{arch}")
    except B.BuildError as e:
        return e


@pytest.fixture(scope="module")
def family_ptxas():
    if not _FUTURES:
        pool = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 2))
        _FUTURES.update({b: pool.submit(_one, *b) for b in BUILDS})
        pool.shutdown(wait=False)
    return {b: f.result() for b, f in _FUTURES.items()}


@needs_nvcc
@pytest.mark.parametrize("key,arch", BUILDS, ids=[f"{k}-sm_{a}" for k, a in BUILDS])
def test_generated_kernel_compiles_without_spills(key, arch, family_ptxas):
    usage = family_ptxas[(key, arch)]
    if isinstance(usage, Exception):
        raise usage
    _check_usage(usage, arch)
    assert not any("wgmma_serialized" in u for u in usage.values()), usage   # ptxas waits after each wgmma otherwise
    design = key.rsplit("_", 1)[1]
    launch, split = TP.DESIGNS[design].launch, SPLIT[TP.DESIGNS[design].args]
    if launch == "launch_window":   # the weight pre-pass and the kernel, each with the design's Split argument
        prep, main = sorted(usage)
        assert prep.startswith("_ZN9cf_family24conv_window_wprep_kernel") and prep.endswith(f"SplitE{split}EEEvPKfPf")
        assert main.startswith("_ZN9cf_family27conv_epilogue_window_kernel"), usage
        assert main.endswith(f"LNS_5SplitE{split}EEEvNS_10FamilyArgsEPKfNS_8WinTilesE"), usage
        return
    mma = launch == "launch_mma"
    kernel = "_ZN9cf_family24conv_epilogue_mma_kernel" if mma else "_ZN9cf_family20conv_epilogue_kernel"
    assert len(usage) == 1 and next(iter(usage)).startswith(kernel), usage
    if mma:   # the design's Split argument is in the kernel's mangled name: 0 for tf32, 1 for 3xtf32
        assert next(iter(usage)).endswith(f"LNS_5SplitE{split}EEEvNS_10FamilyArgsE"), usage


def test_kernels_family_holds_only_what_the_template_pastes():
    """kernels/ holds only what is compiled (README, "Working on a kernel"): for kernels/family/, the files
    template.py pastes into the generated sources (the argument block into every one, the tensor-core primitives into
    the mma.sync designs', each design's template into its own), as test_registry holds kernels/<problem>/ to the registry."""
    on_disk = {p.name for p in TP.FAMILY_KERNELS.iterdir()}
    assert on_disk == set(TP.TEMPLATE_FILES)
    for name, src in SOURCES.items():
        d = TP.DESIGNS[name.rsplit("_", 1)[1]]
        pasted = {f for f in TP.TEMPLATE_FILES if f'#line 1 "kernels/family/{f}"' in src}
        files = {f for f in (d.base, d.file) if f}
        shared = {TP.MMA_PRIMITIVES} if files & set(TP.MMA_TEMPLATES) else set()
        assert pasted == {"family_args.h"} | files | shared, (name, pasted)
        # an sm_90a design: kernels/wgmma.cuh's register-A core (and the fixed-width integers it uses), nothing more
        wgmma = any(a.endswith("a") for a in d.archs)
        assert ('"kernels/wgmma.cuh"' in src) == wgmma and ("CUtensorMap" in src) is False
        assert "#include" not in src.replace("#include <cuda_runtime.h>", "").replace("#include <stdint.h>" if wgmma
                                                                                      else "#", ""), \
            "the source includes only CUDA's runtime (and stdint.h)"


def test_each_source_instantiates_its_channels_and_dims():
    for p in M.FAMILY.values():
        for d in (d for d in TP.DESIGNS if TP.takes(d, p.dims)):
            launch = TP.DESIGNS[d].launch
            split = f", {TP.DESIGNS[d].args}" if TP.DESIGNS[d].args else ""
            assert f"{launch}<{p.in_channels}, {p.out_channels}, {p.dims}, FamilyEpilogue{split}>(a, stream)" \
                in SOURCES[f"{p.key}_{d}"]
    assert "return FamilyEpilogue::kReduces ? 1 : 128;" in SOURCES["kb32_tf32"]
    with pytest.raises(ValueError, match="unknown template design 'fp16'"):
        TP.source(_TRACED["kb1"], design="fp16")


def test_tf32h_is_2d_only_and_sm90a_only():
    """tf32h refuses a 3-D conv at source() (3-D problems stay on tf32w), and builds for sm_90a alone."""
    assert [k for k in M.FAMILY if f"{k}_tf32h" in SOURCES] == [k for k, p in M.FAMILY.items() if p.dims == 2]
    for key in ("conv3d", "cin1_cout1_3d"):
        with pytest.raises(ValueError, match="design 'tf32h' takes 2-D convs; .* is 3-D"):
            TP.source(_TRACED[key], design="tf32h")
    assert TP.DESIGNS["tf32h"].archs == ("90a",) and all(TP.DESIGNS[d].archs == B.ARCHS for d in TP.DESIGNS
                                                         if d != "tf32h")


def _torch_glue_flags(tmp_path: Path):
    """Include paths for compiling the glue as load_inline does, on a machine whose torch may be CPU-only: a CPU
    wheel ships c10/cuda's headers but not the CMake-generated cuda_cmake_macros.h, which only sets the export
    macro; an empty stand-in is enough for a syntax check."""
    stub = tmp_path / "stub" / "c10" / "cuda" / "impl"
    stub.mkdir(parents=True)
    (stub / "cuda_cmake_macros.h").write_text("#define C10_CUDA_BUILD_SHARED_LIBS\n")
    cuda = Path(cpp_ext.CUDA_HOME or Path(os.path.realpath(B.find_nvcc())).parent.parent) / "include"
    if not (cuda / "cuda_runtime.h").exists():   # nvcc may be a wrapper script: ask it where it lives
        out = subprocess.run([B.find_nvcc(), "--dryrun", "-x", "cu", "-E", "/dev/null"], capture_output=True, text=True)
        inc = re.findall(r'-I"?([^"\s]+)', out.stderr)
        cuda = Path(next((i for i in inc if (Path(i) / "cuda_runtime.h").exists()), cuda))
    return ["-I" + str(tmp_path / "stub"), *("-I" + p for p in cpp_ext.include_paths()),
            "-I" + sysconfig.get_paths()["include"], "-I" + str(cuda)]


@needs_nvcc
def test_the_torch_glue_compiles(tmp_path):
    src = tmp_path / "glue.cpp"
    src.write_text(TP.glue())
    proc = subprocess.run(["g++", "-std=c++20", "-fsyntax-only", *_torch_glue_flags(tmp_path), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_output_shapes_follow_the_reduction():
    t = T.trace(Odd(3, 20, 2))
    assert TP.output_shape(t, (2, 3, 9, 11)) == (2, 7, 9)
    t = T.trace(M.get("32").make_model(0))
    assert TP.output_shape(t, (2, 64, 9, 11)) == (2, 1, 7, 9)
    t = T.trace(M.get("90").make_model(0))
    assert TP.output_shape(t, (2, 8, 5, 9, 11)) == (2, 64, 3, 7, 9)
