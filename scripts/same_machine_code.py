"""Does the working tree build the same machine code as a git revision, for every kernel variant?

    python scripts/same_machine_code.py a03edef        # the commit of the recorded run

Compiles each registered variant's source (build.kernel_source: the text nvcc gets) to a cubin for each
of its targets, at REV (in a temporary git worktree) and in the working tree, with the same nvcc and
flags, and compares the bytes. Needs nvcc, no GPU. When every cubin is identical, a text-only change
(comments, refactors, opt-in macros off by default) leaves the recorded numbers describing the code as
built; when one differs, that variant needs a device run before its record can stand.
"""
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CUBINS = r'''
import hashlib, json, subprocess, sys
from pathlib import Path
from convfuse import build as B, registry as R
out, tmp = {}, Path(sys.argv[1])
for v in R.kernel_variants():
    for arch in v.archs:
        src = tmp / f"{v.problem}_{v.key}_{arch}.cu"
        src.write_text(B.kernel_source(v))
        cub = src.with_suffix(".cubin")
        r = subprocess.run([B.find_nvcc(), *B.NVCC_FLAGS, "-cubin", str(src), "-o", str(cub),
                            f"-gencode=arch=compute_{arch},code=sm_{arch}", "-I", str(B.KERNELS)],
                           capture_output=True, text=True)
        key = f"{v.problem}/{v.key} sm_{arch}"
        out[key] = hashlib.sha256(cub.read_bytes()).hexdigest()[:16] if r.returncode == 0 else "build failed"
print(json.dumps(out))
'''


def cubins(tree: Path) -> dict:
    import json

    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([sys.executable, "-c", _CUBINS, tmp], cwd=tree, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"compiling the variants of {tree} failed:\n{p.stderr[-2000:]}")
        return json.loads(p.stdout.strip().splitlines()[-1])


def main(rev: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "rev"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(old_tree), rev], cwd=ROOT, check=True)
        try:
            print(f"[same-machine-code] compiling every variant at {rev} ...", flush=True)
            old = cubins(old_tree)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT, check=False)
    print("[same-machine-code] compiling every variant in the working tree ...", flush=True)
    new = cubins(ROOT)
    differ = sorted(k for k in new if old.get(k) != new[k])
    for k in sorted(new):
        state = "same" if k not in differ else ("NEW variant" if k not in old else "DIFFERENT")
        print(f"  {k:40s} {state}")
    print(f"[same-machine-code] {len(new) - len(differ)} of {len(new)} cubins identical to {rev}")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1]))
