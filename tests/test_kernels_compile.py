"""Every registered build compiles with nvcc for its targets (sm_80 and sm_90; sm_90a for wgmma), alone, without
torch, with no register spills, no stack frame (-Xptxas -v) and no wgmma that ptxas serializes. The builds start in
the background as soon as collection is done (conftest.py) and these tests run last."""
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from convfuse import build as B
from convfuse import registry as R

pytestmark = pytest.mark.skipif(B.find_nvcc() is None, reason="nvcc not found")

BUILDS = [(v, a) for v in R.kernel_variants() for a in v.archs]


_BUILDS = {}


def _one(build):
    try:
        return B.resource_usage(build[0], arch=build[1])
    except B.BuildError as e:
        return e


def start_builds():
    """Compile every registered build in the background, one nvcc per core but one (the other tests run meanwhile;
    conftest starts this once collection is done and runs these tests last)."""
    if _BUILDS or B.find_nvcc() is None:
        return
    pool = ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) - 1))
    _BUILDS.update({(v.problem, v.key, a): pool.submit(_one, (v, a)) for v, a in BUILDS})
    pool.shutdown(wait=False)


@pytest.fixture(scope="module")
def ptxas():
    """ptxas' report of every registered build: {(problem, key, arch): usage or the BuildError}."""
    start_builds()
    return {k: f.result() for k, f in _BUILDS.items()}


@pytest.mark.parametrize("v,arch", BUILDS, ids=lambda p: f"{p.problem}/{p.key}" if isinstance(p, R.Variant) else f"sm_{p}")
def test_compiles_without_spills(v, arch, ptxas):
    usage = ptxas[(v.problem, v.key, arch)]
    if isinstance(usage, Exception):
        raise usage
    _check_usage(usage, arch)
    # a registered build's wgmmas must pipeline: ptxas' serialization note (C751x) cost conv2d 04d 3xTF32 1.5x
    assert not any("wgmma_serialized" in u for u in usage.values()), usage


def _check_usage(usage, arch):
    """ptxas' report for `arch`, checked: every entry compiled for it, no spill, no stack frame."""
    assert usage, "ptxas reported no kernel entry"
    for name, u in usage.items():
        assert u["arch"] == f"sm_{arch}"
        assert u["spill_stores"] == 0 and u["spill_loads"] == 0, f"{name} spills: {u}"
        assert u["stack_bytes"] == 0, f"{name} has a stack frame: {u}"
        assert 0 < u["registers"] <= 255
    return usage


def test_ptxas_parser():
    text = """ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'
ptxas info    : Function properties for _Z3fooPf
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 34816 bytes smem, 412 bytes cmem[0]"""
    u = B.parse_ptxas(text)["_Z3fooPf"]
    assert u == {"arch": "sm_90", "stack_bytes": 8, "spill_stores": 4, "spill_loads": 4, "registers": 40,
                 "smem_bytes": 34816}


def test_ptxas_parser_keeps_the_wgmma_serialization_note():
    name = "_ZN5cf04d16conv2d_rs_kernelE14CUtensorMap_stPKfS2_S2_S2_PfNS_4GeomE"
    text = f"""ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to \
insufficient register resources for the function '{name}'
ptxas info    : Compiling entry function '{name}' for 'sm_90a'
ptxas info    : Function properties for {name}
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 198 registers, used 1 barriers"""
    u = B.parse_ptxas(text)[name]
    assert u["arch"] == "sm_90a" and u["registers"] == 198
    assert u["wgmma_serialized"] == "C7512: serialized due to insufficient register resources"
    assert "wgmma_serialized" not in B.parse_ptxas(text.split("\n", 1)[1])[name]
