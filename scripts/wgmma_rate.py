"""Run the wgmma rate microbenchmark (convfuse/micro.py) on an H100/H200 and write its JSON.

    python3 scripts/wgmma_rate.py OUT.json [--iters 3996] [--repeats 5]
"""
import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402

from convfuse import micro  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--iters", type=int, default=3996, help="groups a warpgroup, a multiple of 6")
    ap.add_argument("--repeats", type=int, default=5, help="timed launches a case (the median is kept)")
    a = ap.parse_args()
    mod = micro.build()
    cases = micro.measure(mod, iters=a.iters, repeats=a.repeats)
    env = {"gpu": torch.cuda.get_device_name(0), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "torch": torch.__version__, "cuda": torch.version.cuda}
    a.out.write_text(json.dumps({"env": env, "cases": cases}, indent=1) + "\n")
    print(micro.table(a.out).to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
