"""Turn ``kernels/<problem>/<name>.cu`` into a loaded extension with ``load_inline``.

The kernel file holds device code and one host function, ``launch(const ConvArgs&, cudaStream_t)``
(kernels/conv_args.h). This module prepends ``conv_args.h`` and ``common.cuh`` to it as text (and pastes in a header
of its folder that it ``#include``s, conv3d's ``04b_common.cuh``), adds
a small torch glue (compiled by the host compiler, so nvcc never parses torch's headers), and builds
for sm_80 (A100) and sm_90 (H100/H200) with -O3, plus PTX for the newest portable target so that a later GPU
can JIT it, cached under ``build/<name>`` in a source checkout (``$CONVFUSE_CACHE``, else
``$TORCH_EXTENSIONS_DIR/convfuse``, else ``~/.cache/convfuse`` when installed). A second call in a
fresh process with unchanged sources only re-imports the cached library.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from .registry import KERNELS, ROOT, SOURCE_CHECKOUT, Variant


def _build_dir() -> Path:
    # an installed package's directory may be read-only and is shared by its users: builds go to a cache of the user's
    if os.environ.get("CONVFUSE_CACHE"):
        return Path(os.environ["CONVFUSE_CACHE"]).expanduser()
    if SOURCE_CHECKOUT:
        return ROOT / "build"
    if os.environ.get("TORCH_EXTENSIONS_DIR"):
        return Path(os.environ["TORCH_EXTENSIONS_DIR"]).expanduser() / "convfuse"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "convfuse"


BUILD_DIR = _build_dir()
ARCHS = ("80", "90")   # A100; H100 and H200 (the default; a variant names its own in registry.Variant.archs)
NVCC_FLAGS = ("-O3", "-std=c++17")   # no --use_fast_math: erff and the FP32 bounds need IEEE division and erf

GLUE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

static void check_tensor(const at::Tensor& t, const char* name) {
    TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
    TORCH_CHECK(t.scalar_type() == at::kFloat, name, " must be float32");
    TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
}

// x: conv input (fused) or conv output (epilogue_only); y: preallocated output.
void forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, const at::Tensor& param,
             at::Tensor& y, int64_t k, bool epilogue_only) {
    check_tensor(x, "x"); check_tensor(bias, "bias"); check_tensor(param, "param"); check_tensor(y, "y");
    if (!epilogue_only) check_tensor(w, "weight");
    TORCH_CHECK(x.dim() == 4 || x.dim() == 5, "x must be 4-D or 5-D");
    TORCH_CHECK(y.dim() == x.dim(), "y must have the rank of x");
    const bool three = x.dim() == 5;
    ConvArgs a;
    a.x = x.data_ptr<float>();
    a.w = epilogue_only ? nullptr : w.data_ptr<float>();
    a.bias = bias.data_ptr<float>();
    a.param = param.data_ptr<float>();
    a.y = y.data_ptr<float>();
    a.N = (int)x.size(0); a.Cin = (int)x.size(1); a.Cout = (int)y.size(1);
    a.D = three ? (int)x.size(2) : 1; a.H = (int)x.size(-2); a.W = (int)x.size(-1);
    a.Do = three ? (int)y.size(2) : 1; a.Ho = (int)y.size(-2); a.Wo = (int)y.size(-1);
    a.k = (int)k;
    if (y.numel() == 0) return;
    const c10::cuda::CUDAGuard guard(x.device());
    const char* err = launch(a, c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == nullptr, "kernel refused the call: ", err ? err : "");
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""


class BuildError(RuntimeError):
    pass


def kernel_source(variant: Variant) -> str:
    """The text nvcc compiles for this variant: ABI header, helpers, the kernel file (its own headers pasted in)."""
    if variant.source_path is None:
        raise ValueError(f"{variant.key} is a reference row: it has no kernel source")
    # NAME=VALUE as the registry spells a valued define (e.g. CF_GROUP=2): #define NAME VALUE
    defines = "".join(f"#define {d.replace('=', ' ', 1)}\n" for d in variant.defines)
    headers = ["conv_args.h", "common.cuh"] + (["wgmma.cuh"] if any(a.endswith("a") for a in variant.archs) else [])
    path = variant.source_path.resolve()
    parts = [defines, *map(_headers_text, headers), f'#line 1 "{_shown(path)}"\n',
             _with_local_headers(path, KERNELS / variant.problem)]
    return "\n".join(parts)


def _shown(path: Path):
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


# `#include "name.cuh"` in a kernel file: a header of its problem's folder, shared by the files of one step (conv3d's
# 04b_common.cuh). Pasted in its place as text, like the headers above, so the build, its fingerprint and the wheel see
# one text; #line keeps nvcc's messages on the right file and line. A scratch copy (scripts/check_variant.py) finds
# the header beside it, else the one under kernels/.
_LOCAL_INCLUDE = re.compile(r'^#include "([\w.]+\.cuh)"[^\n]*$', re.M)


def _with_local_headers(path: Path, folder: Path) -> str:
    text = path.read_text()

    def paste(m: re.Match) -> str:
        header = path.parent / m.group(1) if (path.parent / m.group(1)).is_file() else folder / m.group(1)
        after = text.count("\n", 0, m.end()) + 2      # the line after the #include
        body = header.read_text().replace("#pragma once\n", "\n")   # the lines kept
        return f'#line 1 "{_shown(header.resolve())}"\n{body}#line {after} "{_shown(path)}"'
    return _LOCAL_INCLUDE.sub(paste, text)


def _headers_text(name: str) -> str:
    # pasted as text, so their include guard would only draw "#pragma once in main file" warnings
    return (KERNELS / name).read_text().replace("#pragma once\n", "")


def require_toolchain() -> None:
    """Clear errors for the two things a reader's machine most often lacks."""
    import torch

    if not torch.cuda.is_available():
        raise BuildError(
            "convfuse: building the kernels needs a CUDA GPU and torch with CUDA "
            f"(torch {torch.__version__} sees none). On this machine use the recorded results: "
            "CONVFUSE_MODE=recorded (what `make report` does).")
    if find_nvcc() is None:
        raise BuildError("convfuse: nvcc not found. Install the CUDA toolkit or set CUDA_HOME "
                         "(load_inline compiles the kernels with nvcc).")


def find_nvcc() -> str | None:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / "nvcc").exists():
        return str(Path(home) / "bin" / "nvcc")
    return shutil.which("nvcc")


def _fingerprint(variant: Variant) -> str:
    import hashlib

    import torch

    h = hashlib.sha256()
    for part in (GLUE, (KERNELS / "conv_args.h").read_text(), kernel_source(variant), repr(NVCC_FLAGS),
                 arch_list(variant), torch.__version__, sys.version):
        h.update(part.encode())
    return h.hexdigest()


def _library(variant: Variant) -> Path:
    return BUILD_DIR / variant.build_name / f"{variant.build_name}{'.pyd' if os.name == 'nt' else '.so'}"


def _import_built(variant: Variant):
    import importlib.util

    import torch  # noqa: F401  (loads libtorch before the extension)

    spec = importlib.util.spec_from_file_location(variant.build_name, _library(variant))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _nvcc_torch_stub() -> list[str]:
    """load_inline prepends `#include <torch/types.h>` to every CUDA source. Our kernel files use
    nothing of torch, so an empty torch/types.h, searched (-I) before torch's own (-isystem) for the
    nvcc compile only, spares nvcc parsing torch's headers for the host and for each of the two
    architectures: most of a cold build. CONVFUSE_NVCC_TORCH_HEADERS=1 turns it off."""
    if os.environ.get("CONVFUSE_NVCC_TORCH_HEADERS") == "1":
        return []
    stub = BUILD_DIR / "nvcc-stub"
    header = stub / "torch" / "types.h"
    if not header.exists():
        header.parent.mkdir(parents=True, exist_ok=True)
        header.write_text("// empty on purpose: see convfuse/build.py, _nvcc_torch_stub\n#pragma once\n")
    return ["-I" + str(stub)]


def _load(variant: Variant, verbose: bool = False):
    """Import the cached library when its fingerprint (sources, flags, torch, python) matches;
    otherwise build with load_inline (ninja recompiles what changed) and record the fingerprint."""
    import torch.utils.cpp_extension as ext

    build_dir = BUILD_DIR / variant.build_name
    stamp = build_dir / "convfuse.fingerprint"
    fp = _fingerprint(variant)
    if _library(variant).exists() and stamp.exists() and stamp.read_text() == fp:
        return _import_built(variant)
    build_dir.mkdir(parents=True, exist_ok=True)
    abi = _headers_text("conv_args.h")
    # load_inline reads its targets from the environment; the caller's value is put back (a notebook that builds a
    # kernel must not find its own torch builds retargeted)
    before = os.environ.get("TORCH_CUDA_ARCH_LIST")
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list(variant)
    try:
        mod = ext.load_inline(
            name=variant.build_name,
            cpp_sources=[abi + GLUE],
            cuda_sources=[kernel_source(variant)],
            functions=["forward"],
            extra_cflags=["-O3"],
            extra_cuda_cflags=list(NVCC_FLAGS) + _nvcc_torch_stub(),
            build_directory=str(build_dir),
            verbose=verbose,
        )
    finally:
        if before is None:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = before
    stamp.write_text(fp)
    return mod


def arch_list(variant: Variant) -> str:
    """TORCH_CUDA_ARCH_LIST for a variant: SASS for each of its targets, and PTX for its newest portable one, which the
    driver of a later GPU (Blackwell, ...) compiles at load. Arch-specific targets (sm_90a) get none: their PTX runs on
    that GPU alone, which has the SASS, and registry.Variant.runs_on refuses them elsewhere. The PTX is another entry of
    the fatbin: the SASS of each target is what it was (results.machine_code compiles the same targets alone)."""
    names = [f"{a[:-1]}.{a[-1]}" if a[-1].isdigit() else f"{a[:-2]}.{a[-2:]}" for a in variant.archs]
    portable = [i for i, a in enumerate(variant.archs) if a[-1].isdigit()]
    if portable:
        newest = max(portable, key=lambda i: Variant.min_capability(variant.archs[i]))
        names[newest] += "+PTX"
    return ";".join(names)


def build(variant: Variant, verbose: bool = False, log=print):
    """Build (or load from cache) one variant's extension; one line of progress."""
    require_toolchain()
    t0 = time.perf_counter()
    try:
        mod = _load(variant, verbose=verbose)
    except Exception as e:   # compiler output is in the message; keep the first screenful
        msg = str(e)
        raise BuildError(f"building {variant.problem}/{variant.key} failed:\n{msg[-4000:]}") from None
    log(f"[build] {variant.problem}/{variant.key}: {time.perf_counter() - t0:.1f} s")
    return mod


def _build_in_subprocess(variant: Variant) -> tuple[str, float]:
    os.environ.setdefault("MAX_JOBS", "2")
    t0 = time.perf_counter()
    _load(variant)
    return variant.key, time.perf_counter() - t0


def build_all(variants, jobs: int | None = None, log=print) -> dict:
    """Build many variants in parallel processes, then load each (cache hits) in this one.

    Returns {(problem, key): module}. Timings: cold builds run concurrently, so wall time is what a
    reader waits; each line gives one extension's own build time.
    """
    require_toolchain()
    variants = list(variants)
    # each build is one g++ (the torch glue, the long pole) and one short nvcc: one process per core
    jobs = jobs or max(1, min(len(variants), os.cpu_count() or 2))
    t0 = time.perf_counter()
    log(f"[build] {len(variants)} extensions, {jobs} at a time, cache {BUILD_DIR}/")
    errors = []
    import multiprocessing as mp

    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
        futs = {pool.submit(_build_in_subprocess, v): v for v in variants}
        for i, f in enumerate(as_completed(futs), 1):
            v = futs[f]
            try:
                _, dt = f.result()
                log(f"[build {i}/{len(variants)}] {v.problem}/{v.key}: {dt:.1f} s")
            except Exception as e:
                errors.append(f"{v.problem}/{v.key}: {str(e)[-3000:]}")
                log(f"[build {i}/{len(variants)}] {v.problem}/{v.key}: FAILED")
    wall = time.perf_counter() - t0
    log(f"[build] all built in {wall:.1f} s")
    if errors:
        raise BuildError("some kernels failed to build:\n" + "\n".join(errors))
    mods = {}
    t1 = time.perf_counter()
    for v in variants:
        mods[(v.problem, v.key)] = _load(v)
    log(f"[build] loaded {len(mods)} in {time.perf_counter() - t1:.1f} s")
    build_all.last_wall_s = wall
    return mods


# --- resource usage: registers, shared memory, spills from ptxas -v ------------------------------
_PTXAS_FUNC = re.compile(r"Compiling entry function '(\w+)' for '(sm_\d+a?)'")
_PTXAS_USED = re.compile(r"Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes smem)?")
_PTXAS_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
# ptxas' C751x notes: it serializes a function's wgmmas (waits after each) where it lacks registers or sees an
# unsupported pattern; load_inline's build log does not show them (conv2d 04d 3xTF32's first build, 4.73 ms)
_PTXAS_WGMMA_SERIAL = re.compile(r"\((C75\d\d)\) Potential Performance Loss: wgmma\.mma_async instructions are "
                                 r"serialized (.*?) for the function '(\w+)'")


def resource_usage(variant: Variant, arch: str = "90", nvcc: str | None = None) -> dict:
    """Compile the kernel file alone (no torch) with -Xptxas -v; per kernel entry: registers,
    static shared memory, stack frame and spill bytes, and `wgmma_serialized` where ptxas serializes its wgmmas.
    Dynamic shared memory is not in this report."""
    nvcc = nvcc or find_nvcc()
    if nvcc is None:
        raise BuildError("nvcc not found (set CUDA_HOME or put nvcc on PATH)")
    import tempfile

    stem = f"{variant.problem}_{variant.key}"
    if len(stem) > 150:     # nvcc's temporary files carry the name and a prefix: 255 bytes is the file-name limit
        stem = f"{stem[:130]}_{hashlib.sha1(stem.encode()).hexdigest()[:12]}"
    (BUILD_DIR / "ptxas").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=BUILD_DIR / "ptxas") as tmp:   # its own: builds may run side by side
        src = Path(tmp) / f"{stem}.cu"
        src.write_text(kernel_source(variant))
        cmd = [nvcc, *NVCC_FLAGS, "-c", str(src), "-o", str(src.with_suffix(f".sm{arch}.o")),
               f"-gencode=arch=compute_{arch},code=sm_{arch}", "-Xptxas", "-v", "-I", str(KERNELS)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"nvcc failed on {variant.problem}/{variant.key} for sm_{arch}:\n{proc.stderr[-4000:]}")
    return parse_ptxas(proc.stderr)


def parse_ptxas(text: str) -> dict:
    kernels, cur = {}, None
    for line in text.splitlines():
        m = _PTXAS_WGMMA_SERIAL.search(line)
        if m:       # printed before the function's own lines
            kernels.setdefault(m.group(3), {})["wgmma_serialized"] = f"{m.group(1)}: serialized {m.group(2)}"
            continue
        m = _PTXAS_FUNC.search(line)
        if m:
            cur = kernels.setdefault(m.group(1), {})
            cur["arch"] = m.group(2)
            continue
        if cur is None:
            continue
        m = _PTXAS_SPILL.search(line)
        if m:
            cur.update(stack_bytes=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        m = _PTXAS_USED.search(line)
        if m:
            cur.update(registers=int(m.group(1)), smem_bytes=int(m.group(2) or 0))
    return kernels


def main_kernel_usage(usage: dict) -> dict:
    """The entry with the most registers stands for the variant in a results record."""
    if not usage:
        return {}
    return max(usage.values(), key=lambda u: u.get("registers", 0))


def measure_build_times(variants, log=print) -> dict:
    """Cold build of one extension, cold build of all (in parallel), warm load of all in a fresh
    process: the numbers the README quotes. Empties build/ first."""
    import json

    variants = list(variants)
    shutil.rmtree(BUILD_DIR, ignore_errors=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"from convfuse import build, registry; "
                    f"build.build(registry.get({variants[0].problem!r}, {variants[0].key!r}))"], check=True, cwd=ROOT)
    one = time.perf_counter() - t0
    shutil.rmtree(BUILD_DIR, ignore_errors=True)
    t0 = time.perf_counter()
    build_all(variants, log=log)
    cold_all = time.perf_counter() - t0
    code = ("import time; t=time.perf_counter(); import torch; t1=time.perf_counter(); "
            "from convfuse import build, registry; [build._load(v) for v in registry.kernel_variants()]; "
            "t2=time.perf_counter(); print(t1-t, t2-t1)")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True)
    warm_process = time.perf_counter() - t0
    out = {"cold_one_s": round(one, 1), "cold_one_variant": f"{variants[0].problem}/{variants[0].key}",
           "cold_all_s": round(cold_all, 1), "n_extensions": len(variants), "cpu_count": os.cpu_count(),
           "warm_load_all_s": round(sum(map(float, p.stdout.split()[-2:])), 2),
           "warm_torch_import_s": round(float(p.stdout.split()[-2]), 2),
           "warm_load_all_after_torch_s": round(float(p.stdout.split()[-1]), 2),
           "warm_load_all_process_s": round(warm_process, 2)}
    log("[build] times: " + json.dumps(out))
    return out


if __name__ == "__main__":   # python -m convfuse.build [--timing OUT.json]
    import json

    from .registry import kernel_variants

    try:
        if len(sys.argv) > 2 and sys.argv[1] == "--timing":
            Path(sys.argv[2]).write_text(json.dumps(measure_build_times(kernel_variants()), indent=1))
        else:
            build_all(kernel_variants())
    except BuildError as e:
        sys.exit(str(e))
