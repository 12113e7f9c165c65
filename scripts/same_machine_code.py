"""Does the working tree build the same machine code as a git revision, for every registered variant?

    python scripts/same_machine_code.py 9cb67db [--diff 40]

Compiles each registered variant's source (build.kernel_source: the text nvcc gets) to a cubin for each of its
targets, at REV (in a temporary git worktree, with REV's registry) and in the working tree, with the same nvcc and
flags, and compares them build by build (problem/key and target):

  same cubin   the bytes are identical;
  same SASS    the bytes differ (symbol names, section order) but the machine code does not: `cuobjdump -sass` of both,
               with the lines that name the file, the function or the toolchain left out (results.normalized_sass,
               the rule the record's machine-code hashes use), is the same text;
  DIFFERENT    the SASS differs (--diff N prints its first N lines of unified diff);
  cubin differs, SASS not compared: no cuobjdump (beside nvcc, on PATH, or requirements.txt's wheels).

Needs nvcc, no GPU. When every build is the same cubin or the same SASS, the change left the machine code as it was
and the recorded numbers stand for it; a build that differs needs a device run before its record can stand. Exit
status 0 only then.
"""
import argparse
import difflib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from convfuse.results import cuda_tool, cuobjdump_sass, normalized_sass  # noqa: E402  (one rule for machine code)

_CUBINS = r'''
import json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from convfuse import build as B, registry as R
out_dir = Path(sys.argv[1])
def one(va):
    v, arch = va
    src = out_dir / f"{v.problem}_{v.key}_sm{arch}.cu"
    src.write_text(B.kernel_source(v))
    cub = src.with_suffix(".cubin")
    r = subprocess.run([B.find_nvcc(), *B.NVCC_FLAGS, "-cubin", str(src), "-o", str(cub),
                        f"-gencode=arch=compute_{arch},code=sm_{arch}", "-I", str(B.KERNELS)],
                       capture_output=True, text=True)
    return f"{v.problem}/{v.key} sm_{arch}", str(cub) if r.returncode == 0 else None
builds = [(v, a) for v in R.kernel_variants() for a in v.archs]
with ThreadPoolExecutor(max_workers=int(os.environ.get("JOBS") or os.cpu_count() or 1)) as pool:
    print(json.dumps(dict(pool.map(one, builds))))
'''

def cubins(tree: Path, out_dir: Path) -> dict:
    """{"problem/key sm_XX": cubin path, or None where the build failed} for `tree`'s registered variants."""
    out_dir.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([sys.executable, "-c", _CUBINS, str(out_dir)], cwd=tree, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"compiling the variants of {tree} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def sass(cubin: str, cuobjdump: str) -> list[str]:
    """The cubin's SASS, normalized (results.normalized_sass): the instructions with their offsets and encodings,
    without the lines that only name the file, the function or the toolchain."""
    proc = cuobjdump_sass(cuobjdump, cubin)
    proc.check_returncode()
    return normalized_sass(proc.stdout).splitlines()


def compare(old: dict, new: dict, cuobjdump: str | None, diff_lines: int = 0) -> tuple[dict, int]:
    """({build: verdict}, number of builds whose machine code is not shown to be the same)."""
    verdicts, bad = {}, 0
    for k in sorted(new):
        a, b = old.get(k), new[k]
        if b is None:
            verdict = "build failed"
        elif k not in old:
            verdict = "NEW variant"
        elif a is None:
            verdict = "build failed at the revision"
        elif Path(a).read_bytes() == Path(b).read_bytes():
            verdict = "same cubin"
        elif cuobjdump is None:
            verdict = "cubin differs, SASS not compared (no cuobjdump)"
        else:
            sa, sb = sass(a, cuobjdump), sass(b, cuobjdump)
            verdict = "same SASS (cubin bytes differ)" if sa == sb else "DIFFERENT"
            if sa != sb and diff_lines:
                d = list(difflib.unified_diff(sa, sb, "revision", "working tree", n=1, lineterm=""))
                verdict += "\n" + "\n".join("      " + line for line in d[:diff_lines])
        verdicts[k] = verdict
        bad += not verdict.startswith(("same cubin", "same SASS"))
    return verdicts, bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the git revision to compare with")
    ap.add_argument("--diff", type=int, default=0, metavar="N", help="print N lines of each differing SASS diff")
    a = ap.parse_args(argv)
    cuobjdump = cuda_tool("cuobjdump")
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "rev"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(old_tree), a.rev], cwd=ROOT, check=True)
        try:
            print(f"[same-machine-code] compiling every variant at {a.rev} ...", flush=True)
            old = cubins(old_tree, Path(tmp) / "old")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT, check=False)
        print("[same-machine-code] compiling every variant in the working tree ...", flush=True)
        new = cubins(ROOT, Path(tmp) / "new")
        verdicts, bad = compare(old, new, cuobjdump, a.diff)
    for k, verdict in verdicts.items():
        print(f"  {k:40s} {verdict}")
    same_cubin = sum(v == "same cubin" for v in verdicts.values())
    print(f"[same-machine-code] {len(verdicts) - bad} of {len(verdicts)} builds have {a.rev}'s machine code "
          f"({same_cubin} the same cubin, {len(verdicts) - bad - same_cubin} the same SASS)"
          + ("" if cuobjdump else "; cuobjdump not found: cubins that differ were not disassembled"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
