import re

import pytest

from convfuse import problems as P
from convfuse import registry as R


def test_registry_and_kernel_files_agree():
    named = {v.source_path for v in R.VARIANTS + R.PREPARED if v.source}
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
    for v in R.VARIANTS:   # arch-specific steps (04b, sm_90a) are extra rungs, declared as such
        if v.needs_cc is not None:
            assert v.problem in R.HOPPER_PROBLEMS and all(a.endswith("a") for a in v.archs), v
    refs = {v.key for v in R.all_variants("conv2d", kind="reference")}
    assert refs == {"eager", "eager_fp32", "channels_last", "compile", "cudnn_conv"}


def test_prepared_kernels_are_found_but_not_registered():
    """registry.PREPARED: written, not registered. `get` finds them (a device call verifies and times them by
    name); the variants the study reports, records and plots do not include them."""
    assert R.PREPARED, "nothing prepared: remove this test with the list"
    registered = {(v.problem, v.key) for v in R.VARIANTS}
    for v in R.PREPARED:
        assert (v.problem, v.key) not in registered and R.get(v.problem, v.key) is v
        assert v not in R.kernel_variants(v.problem) and v.is_kernel and v.precision in R.PRECISIONS
        assert re.fullmatch(r"\d\d[a-z]?", v.step) and v.source.startswith(v.step + "_")
        assert v.source_path.exists()
    call = (R.ROOT / "results" / "device-logs" / "explore-2026-12-05" / "callU" / "call_wino_u.sh").read_text()
    spec = {"04e_wino_3xtf32": "$W", "04e_wino_tf32": "$WT"}     # the call's names for them
    for p, k, d in R.PREPARED_BUILDS:        # the first device call times each prepared build (of 04e, prepared or not)
        assert R.get(p, k).source == "04e_winograd_wgmma" and f"{spec[k]}@{','.join(d)} " in call.replace("\\\n", " "), d
    v = R.PREPARED[0]
    with pytest.raises(ValueError, match=f"prepared, not yet registered: .*{v.key}"):
        R.get(v.problem, v.key[:-1])            # a mistyped name: the message lists the prepared keys too


def test_every_kernel_file_opens_with_a_header():
    for v in R.kernel_variants() + list(R.PREPARED):
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


def test_candidate_and_ablation_builds_are_named_by_their_defines():
    v = R.with_defines(R.get("conv2d", "04b_wgmma_tf32"), ("CF_XBUFS=3", "CF_WGS=2"))
    assert v.key == "04b_wgmma_tf32_cf_xbufs3_cf_wgs2" and v.defines[-2:] == ("CF_XBUFS 3", "CF_WGS 2")
    assert R.with_defines(R.get("conv3d", "04b_wgmma_3xtf32"), ()).defines == ("CF_3XTF32",)
    # "-NAME" leaves a registered define out, so a candidate stays the build that was measured
    tf32 = R.get("conv3d", "04b_wgmma_tf32")
    assert "CF_BULK_STORE" in tf32.defines
    old = R.with_defines(tf32, ("-CF_BULK_STORE", "CF_RAW"))
    assert old.key == "04b_wgmma_tf32_no_cf_bulk_store_cf_raw"
    assert old.defines == tuple(d for d in tf32.defines if d != "CF_BULK_STORE") + ("CF_RAW",)
    with pytest.raises(ValueError, match="not built with CF_WINDOW"):
        R.with_defines(tf32, ("-CF_WINDOW",))
    specs = R.explore_specs()
    assert len(specs) == len(set(specs))
    for p, k, d in R.CANDIDATES:
        assert f"{p}:{k}@{','.join(d)}" in specs
        assert R.get(p, k).step in ("04b", "04c", "04d")  # candidates are builds of registered variants
    for spec in specs:                            # every spec names a registered variant
        name = spec.partition("@")[0]
        R.get(*name.split(":"))


def test_ablation_specs_leave_out_what_the_ablation_switches_do_not_act_on():
    # the CF_ABL_ switches act on conv3d 04b's register-staged loop and store_tile, not the bulk store or lean loop
    for spec in R.explore_specs():
        name, _, extra = spec.partition("@")
        if "CF_ABL_" in extra:
            v = R.with_defines(R.get(*name.split(":")), tuple(extra.split(",")))
            assert "CF_BULK_STORE" not in v.defines and "CF_LEAN" not in v.defines, spec
            assert "CF_TMA_STORE" not in v.defines, spec
    assert any(s.startswith("conv3d:04b_wgmma_fp16@-CF_TMA_STORE,") and "CF_ABL_" in s for s in R.explore_specs())


def test_tensor_copy_store_is_built_on_the_bulk_store():
    # CF_TMA_STORE replaces CF_BULK_STORE's row copies for full tiles; the kernel stops at #error without it
    builds = [v for v in R.kernel_variants()] + [R.with_defines(R.get(p, k), d) for p, k, d in R.CANDIDATES]
    tma = [v for v in builds if "CF_TMA_STORE" in v.defines]
    assert tma and all("CF_BULK_STORE" in v.defines for v in tma)
