"""A kernel variant's SASS, compiled and disassembled on this machine (no GPU): read it before a device call.

    python scripts/sass.py conv3d:04b_wgmma_tf32                       # opcode counts per kernel entry
    python scripts/sass.py conv3d:04b_wgmma_tf32@CF_GELU_Q3 --out k.sass
    python scripts/sass.py conv3d:04b_wgmma_tf32 conv3d:04b_wgmma_tf32@CF_DESC_HI   # side by side, with differences

Specs as scripts/check_variant.py takes them (problem:key@DEFINE,...). Each is compiled to a cubin for its first
target with build.NVCC_FLAGS (the flags the extensions are built with) and disassembled with nvdisasm, which the CUDA
toolkits here do not ship: `pip install nvidia-cuda-nvdisasm` puts one in the environment (found there, on PATH, or
at $NVDISASM). The counts are static (instructions in the code, not executed ones: a loop body counts once); the
device's ncu source pages give the executed ones.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

_INSTR = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")
_FUNC = re.compile(r"\.text\.(\S+):")


def find_nvdisasm() -> str:
    """nvdisasm from $NVDISASM, PATH, or the nvidia-cuda-nvdisasm wheel in this Python's environment."""
    found = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    if found:
        return found
    for base in map(Path, sys.path):
        for hit in sorted(base.glob("nvidia/cu*/bin/nvdisasm")):
            return str(hit)
    raise SystemExit("nvdisasm not found: pip install nvidia-cuda-nvdisasm, or set NVDISASM")


def disassemble(spec: str) -> str:
    from check_variant import parse_spec
    from convfuse import build as B
    variant = parse_spec(spec)
    nvcc = B.find_nvcc()
    if nvcc is None:
        raise SystemExit("nvcc not found (set CUDA_HOME or put nvcc on PATH)")
    arch = variant.archs[0]
    with tempfile.TemporaryDirectory() as tmp:
        src, cub = Path(tmp) / "k.cu", Path(tmp) / "k.cubin"
        src.write_text(B.kernel_source(variant))
        r = subprocess.run([nvcc, *B.NVCC_FLAGS, "-cubin", str(src), "-o", str(cub),
                            f"-gencode=arch=compute_{arch},code=sm_{arch}", "-I", str(B.KERNELS)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{spec}: nvcc failed\n{r.stderr[-3000:]}")
        return subprocess.run([find_nvdisasm(), "-c", str(cub)], capture_output=True, text=True, check=True).stdout


def opcode_counts(sass: str) -> dict:
    """{kernel entry: Counter of opcodes (modifiers and predicates dropped)} of nvdisasm's output."""
    out: dict = {}
    current = None
    for line in sass.splitlines():
        if m := _FUNC.search(line):
            current = out.setdefault(m.group(1), Counter())
        elif current is not None and (m := _INSTR.match(line)):
            current[m.group(2)] += 1
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--out", help="write the (first) spec's SASS here")
    ap.add_argument("--top", type=int, default=14, help="opcodes listed per kernel entry")
    a = ap.parse_args(argv)
    counts = {}
    for spec in a.specs:
        print(f"[sass] {spec}: compiling ...", flush=True)
        sass = disassemble(spec)
        if a.out and spec == a.specs[0]:
            Path(a.out).write_text(sass)
        counts[spec] = opcode_counts(sass)
    first = counts[a.specs[0]]
    for entry, c in first.items():
        per_spec = [counts[s].get(entry, Counter()) for s in a.specs]
        differ = {op for other in per_spec[1:] for op in set(c) | set(other) if other[op] != c[op]}
        ops = [op for op, _ in c.most_common(a.top)]
        ops += sorted(differ - set(ops))                # opcodes whose count differs between the specs, too
        print(f"\n{entry}\n  {'opcode':14s}" + "".join(f"{s[-28:]:>30s}" for s in a.specs))
        for op in ops:
            print(f"  {op:14s}" + "".join(f"{n[op]:30d}" for n in per_spec))
        print(f"  {'(all)':14s}" + "".join(f"{sum(n.values()):30d}" for n in per_spec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
