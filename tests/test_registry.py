import re

import pytest

from convfuse import problems as P
from convfuse import registry as R


def test_registry_and_kernel_files_agree():
    named = {v.source_path for v in R.VARIANTS if v.source}
    on_disk = {p for prob in P.PROBLEMS for p in (R.KERNELS / prob).glob("*.cu")}
    assert named <= on_disk, f"registry names missing files: {sorted(map(str, named - on_disk))}"
    assert on_disk <= named, f"kernel files no variant names: {sorted(map(str, on_disk - named))}"


def test_keys_steps_and_precisions():
    seen = set()
    for v in R.VARIANTS:
        assert (v.problem, v.key) not in seen
        seen.add((v.problem, v.key))
        assert re.fullmatch(r"\d\d[a-z]?", v.step), v.step
        assert v.precision in R.PRECISIONS
        if v.source:
            assert v.source.startswith(v.step + "_"), f"{v.source} should start with its step {v.step}"
    portable = {p: {(v.step, v.key) for v in R.all_variants(p) if v.needs_cc is None} for p in P.PROBLEMS}
    assert portable["conv2d"] == portable["conv3d"], "both problems walk the same ladder"
    for v in R.VARIANTS:   # arch-specific steps (04b-04e, sm_90a) are extra rungs, declared as such
        if v.needs_cc is not None:
            assert v.step > "04" and all(a.endswith("a") for a in v.archs), v
    refs = {v.key for v in R.all_variants("conv2d", kind="reference")}
    assert refs == {"eager", "eager_fp32", "channels_last", "compile", "cudnn_conv", "cudnn_fused", "cudnn_fused_nchw"}


def test_every_kernel_file_opens_with_a_header():
    for v in R.kernel_variants():
        head = v.source_path.read_text().splitlines()[0]
        assert head.startswith(f"// {v.source}"), f"{v.source_path}: header should name the file"


def _args(prob, shape=None, **over):
    m = prob.make_model(seed=0)
    x = prob.make_input(shape or prob.odd_shapes[0])
    a = dict(x=x, weight=m.conv.weight.detach(), bias=m.conv.bias.detach(), param=m.epilogue_param().detach())
    a.update(over)
    return a


@pytest.mark.parametrize("v", R.kernel_variants(), ids=lambda v: f"{v.problem}/{v.key}")
def test_bad_inputs_are_refused_clearly(v, bad_input_cases):
    prob = P.get(v.problem)
    ok = _args(prob)
    cases = bad_input_cases(prob, ok) + [
        (TypeError, "torch.Tensor", dict(x=ok["x"].numpy())),
        (ValueError, "CUDA tensor", {}),   # everything else right, but on the CPU
    ]
    for exc, pattern, over in cases:
        a = dict(ok, **over)
        with pytest.raises(exc, match=pattern):
            R.check_inputs(v, a["x"], a["weight"], a["bias"], a["param"])


def test_unknown_names_are_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="known: .*04d_rs_tf32"):
        R.get("conv2d", "04d_rs_tf33")



def test_a_header_of_a_problems_folder_is_pasted_into_the_files_that_include_it():
    """A .cuh beside the kernel files (conv3d's 04b_common.cuh) is what some registered file #includes, and
    build.kernel_source pastes it in that line's place: nvcc gets one text, which the build's fingerprint covers."""
    from convfuse import build as B
    sources = {v.source_path: B.kernel_source(v) for v in R.kernel_variants()}
    for path, src in sources.items():
        assert not re.search(r'^#include "', src, re.M), f"{path}: an #include left for nvcc to resolve"
    for header in (h for prob in P.PROBLEMS for h in (R.KERNELS / prob).glob("*.cuh")):
        users = [p for p, src in sources.items() if f'#include "{header.name}"' in p.read_text()]
        assert users, f"{header}: no registered kernel file includes it"
        for p in users:
            assert header.read_text().replace("#pragma once\n", "\n") in sources[p]
