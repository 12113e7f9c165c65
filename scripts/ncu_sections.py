"""Nsight Compute's warp-state, scheduler and occupancy sections for chosen kernel variants at the full
problem size: where the issue slots of a kernel go (stall reasons), for the kernel log.

    ncu --profile-from-start off --section WarpStateStats --section SchedulerStats --section Occupancy \
        python3 scripts/ncu_sections.py conv2d/04_mma_tf32 conv3d/04_mma_tf32 ...
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from convfuse import build, problems as P, registry as R  # noqa: E402


def main(names):
    from check_variant import parse_spec   # scripts/check_variant.py: problem/key[@NAME=VALUE,...]
    variants = [parse_spec(n) for n in names]
    mods = build.build_all(variants, log=lambda m: None)
    with torch.no_grad():
        for v in variants:
            prob = P.get(v.problem)
            model = prob.make_model(seed=0, device="cuda")
            x = prob.make_input(seed=0, device="cuda")
            run = R.kernel_runner(v, mods[(v.problem, v.key)])
            w, b, p = P.conv_params(model)
            run(x, w, b, p)                       # warm-up, outside the profiled range
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            run(x, w, b, p)
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
            print(f"[ncu-sections] {v.problem}/{v.key} done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
