"""scripts/same_machine_code.py: cubins compared by bytes, then by their SASS, which is how "same SASS" is shown."""
import importlib.util
import subprocess
from pathlib import Path

import pytest

from convfuse import build as B
from convfuse.results import cuda_tool

_SPEC = importlib.util.spec_from_file_location("same_machine_code",
                                               Path(__file__).resolve().parent.parent / "scripts" / "same_machine_code.py")
smc = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(smc)

KERNEL = """extern "C" __global__ void %s(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = %s;
}
"""


def _cubin(tmp_path, name, fn, body):
    src = tmp_path / f"{name}.cu"
    src.write_text(KERNEL % (fn, body))
    out = tmp_path / f"{name}.cubin"
    subprocess.run([B.find_nvcc(), *B.NVCC_FLAGS, "-cubin", str(src), "-o", str(out),
                    "-gencode=arch=compute_90,code=sm_90"], check=True, capture_output=True)
    return str(out)


@pytest.mark.skipif(B.find_nvcc() is None or cuda_tool("cuobjdump") is None, reason="nvcc or cuobjdump not found")
def test_same_bytes_same_sass_and_different_code_are_told_apart(tmp_path):
    base = _cubin(tmp_path, "base", "k", "2.0f * x[i]")
    renamed = _cubin(tmp_path, "renamed", "k_renamed", "2.0f * x[i]")      # another symbol, the same instructions
    changed = _cubin(tmp_path, "changed", "k", "3.0f * x[i]")
    old = {"p/a sm_90": base, "p/b sm_90": base, "p/c sm_90": base, "p/d sm_90": None}
    new = {"p/a sm_90": base, "p/b sm_90": renamed, "p/c sm_90": changed, "p/d sm_90": base, "p/e sm_90": base}
    cuobjdump = cuda_tool("cuobjdump")
    assert Path(renamed).read_bytes() != Path(base).read_bytes()
    verdicts, bad = smc.compare(old, new, cuobjdump, diff_lines=20)
    assert verdicts["p/a sm_90"] == "same cubin"
    assert verdicts["p/b sm_90"] == "same SASS (cubin bytes differ)"
    assert verdicts["p/c sm_90"].startswith("DIFFERENT") and "0x40400000" in verdicts["p/c sm_90"]   # 3.0f
    assert verdicts["p/d sm_90"] == "build failed at the revision" and verdicts["p/e sm_90"] == "NEW variant"
    assert bad == 3
    # without cuobjdump a cubin that differs is not taken for the same machine code
    verdicts, bad = smc.compare(old, new, None)
    assert verdicts["p/b sm_90"].startswith("cubin differs, SASS not compared") and bad == 4
