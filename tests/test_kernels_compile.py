"""Every kernel compiles with nvcc for its targets (sm_80 and sm_90; sm_90a for wgmma), alone, without torch, with
no register spills and no stack frame (-Xptxas -v)."""
import pytest

from convfuse import build as B
from convfuse import registry as R

pytestmark = pytest.mark.skipif(B.find_nvcc() is None, reason="nvcc not found")


@pytest.mark.parametrize("v,arch", [(v, a) for v in R.kernel_variants() for a in v.archs],
                         ids=lambda p: f"{p.problem}/{p.key}" if isinstance(p, R.Variant) else f"sm_{p}")
def test_compiles_without_spills(v, arch):
    _check_usage(v, arch)


@pytest.mark.parametrize("problem,key,defines", R.CANDIDATES, ids=lambda p: ",".join(p) if isinstance(p, tuple) else p)
def test_candidate_builds_compile_without_spills(problem, key, defines):
    """The candidates waiting for a device call (registry.CANDIDATES) stay buildable and spill-free."""
    v = R.with_defines(R.get(problem, key), defines)
    for arch in v.archs:
        _check_usage(v, arch)


def _check_usage(v, arch):
    usage = B.resource_usage(v, arch=arch)
    assert usage, "ptxas reported no kernel entry"
    for name, u in usage.items():
        assert u["arch"] == f"sm_{arch}"
        assert u["spill_stores"] == 0 and u["spill_loads"] == 0, f"{name} spills: {u}"
        assert u["stack_bytes"] == 0, f"{name} has a stack frame: {u}"
        assert 0 < u["registers"] <= 255


def test_ptxas_parser():
    text = """ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'
ptxas info    : Function properties for _Z3fooPf
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 34816 bytes smem, 412 bytes cmem[0]"""
    u = B.parse_ptxas(text)["_Z3fooPf"]
    assert u == {"arch": "sm_90", "stack_bytes": 8, "spill_stores": 4, "spill_loads": 4, "registers": 40,
                 "smem_bytes": 34816}
