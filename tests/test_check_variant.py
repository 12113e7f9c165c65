"""scripts/check_variant.py's specs on the CPU: a scratch file is built in place of a registered variant's kernel file,
with its defines and targets, and beside it (README, "Working on a kernel")."""
import importlib.util
from pathlib import Path

import pytest

from convfuse import build as B
from convfuse import registry as R

_SPEC = importlib.util.spec_from_file_location("check_variant", Path(__file__).resolve().parent.parent / "scripts" / "check_variant.py")
check_variant = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(check_variant)


def test_a_registered_spec_is_the_variant():
    assert check_variant.parse_spec("conv2d:04_mma_3xtf32") == [R.get("conv2d", "04_mma_3xtf32")]
    assert check_variant.parse_spec("conv2d/04_mma_3xtf32") == [R.get("conv2d", "04_mma_3xtf32")]
    with pytest.raises(ValueError, match="unknown variant"):
        check_variant.parse_spec("conv2d:04_mma_5xtf32")


def test_a_scratch_spec_builds_the_file_in_the_variants_place_and_beside_it(tmp_path):
    v = R.get("conv2d", "04_mma_3xtf32")
    idea = tmp_path / "04_idea.cu"
    idea.write_text(v.source_path.read_text().replace("// ", "// idea: ", 1))
    base, cand = check_variant.parse_spec(f"conv2d:04_mma_3xtf32={idea}")
    assert base is v and cand.scratch == idea and cand.key == "04_mma_3xtf32__04_idea"
    assert (cand.defines, cand.archs, cand.precision, cand.kind) == (v.defines, v.archs, v.precision, v.kind)
    assert cand.build_name != v.build_name                      # its own extension, cached apart
    src = B.kernel_source(cand)
    assert "// idea: " in src and str(idea) in src and "#define CF_3XTF32" in src
    assert src.replace("// idea: ", "// ", 1).replace(str(idea), str(v.source_path.relative_to(R.ROOT))) == \
        B.kernel_source(v)
    with pytest.raises(SystemExit, match="no such file"):
        check_variant.parse_spec(f"conv2d:04_mma_3xtf32={tmp_path / 'missing.cu'}")


@pytest.mark.skipif(B.find_nvcc() is None, reason="nvcc not found")
def test_a_scratch_build_compiles_like_its_variant(tmp_path):
    v = R.get("conv3d", "02_epilogue_vec3d")
    idea = tmp_path / "02_idea.cu"
    idea.write_text(v.source_path.read_text())
    _, cand = check_variant.parse_spec(f"conv3d:02_epilogue_vec3d={idea}")
    assert B.resource_usage(cand, arch="90") == B.resource_usage(v, arch="90")
