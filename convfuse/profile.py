"""Measured DRAM bytes per variant with Nsight Compute: `make profile` on a GPU box.

One process runs every variant of both problems once, between cudaProfilerStart/Stop, with a
`torch.cuda._sleep` marker kernel before each; ncu (clock control off, caches flushed between kernels,
its default) reports dram__bytes_read/write and the duration of every kernel; the marker splits the
kernel sequence back into variants. The per-variant sums land in the results file as
`dram_bytes_measured`, each kernel's numbers as `ncu_kernels`; a kernel record also gets `ncu_machine_code`, the
machine code profiled (results.machine_code), and the file's env `profile_date`.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
           "launch__block_size", "launch__registers_per_thread", "launch__shared_mem_per_block_dynamic",
           "launch__shared_mem_per_block_static", "launch__occupancy_limit_registers",
           "sm__warps_active.avg.pct_of_peak_sustained_active")
LAUNCH = {"launch__block_size": "threads_per_block", "launch__registers_per_thread": "registers",
          "launch__shared_mem_per_block_dynamic": "smem_dynamic", "launch__shared_mem_per_block_static": "smem_static",
          "launch__occupancy_limit_registers": "blocks_per_sm_limit_registers",
          "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct"}
MARKER = "spin_kernel"
# ncu's units, as its --csv output (--print-units base) and its text output spell them
BYTES_PER_UNIT = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
UNITS_PER_MS = {"nsecond": 1e6, "ns": 1e6, "usecond": 1e3, "us": 1e3, "msecond": 1.0, "ms": 1.0, "second": 1e-3, "s": 1e-3}


def worker(order_path: str, problem_keys=None) -> None:
    import torch

    from . import bench, build, cudnn_fused, problems as P, registry as R

    order = []
    with torch.no_grad():
        for pk in problem_keys or list(P.PROBLEMS):
            prob = P.get(pk)
            cc = torch.cuda.get_device_capability()
            variants = [v for v in R.all_variants(pk) if not v.is_kernel or v.runs_on(cc)]
            mods = build.build_all([v for v in variants if v.is_kernel], log=lambda m: None)
            model = prob.make_model(seed=0, device="cuda").requires_grad_(False)
            x = prob.make_input(seed=0, device="cuda")
            w, b, p = P.conv_params(model)
            # cuDNN's fused graph, its fastest plan, where the frontend is installed and cuDNN plans the graph
            cudnn_rows = bench._cudnn_runners(prob, model, log=lambda m: None)
            variants = [v for v in variants if not v.key.startswith("cudnn_fused") or v.key in cudnn_rows]
            x_cl = cudnn_fused.to_channels_last(x)
            fns = {}
            for v in variants:
                if v.key in cudnn_rows:
                    run, xi = cudnn_rows[v.key], (x_cl if v.key == "cudnn_fused" else x)
                else:
                    run = R.kernel_runner(v, mods[(pk, v.key)]) if v.is_kernel else R.reference_runner(v, model)
                    xi = x
                fns[v.key] = lambda run=run, xi=xi: run(xi, w, b, p)
            for fn in fns.values():       # warm-up: builds, cuDNN heuristics, torch.compile
                fn()
                fn()
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            for key, fn in fns.items():
                torch.cuda._sleep(1000)
                fn()
                torch.cuda.synchronize()
                order.append([pk, key])
            torch.cuda.profiler.stop()
            del x, x_cl, model, cudnn_rows, fns
            torch.cuda.empty_cache()
    Path(order_path).write_text(json.dumps(order))


def parse(csv_text: str, order: list) -> dict:
    """{(problem, variant): [{"kernel", "dram_read", "dram_write", "ms"}]} from ncu's --csv output."""
    start = csv_text.find('"ID"')
    rows = list(csv.DictReader(io.StringIO(csv_text[start:])))
    kernels = {}
    for r in rows:
        k = kernels.setdefault(r["ID"], {"kernel": r["Kernel Name"]})
        val = float(r["Metric Value"].replace(",", ""))
        name = r["Metric Name"]
        unit = r.get("Metric Unit", "")
        if name == "gpu__time_duration.sum":
            k["ms"] = val / UNITS_PER_MS.get(unit, 1e6)
        elif name in LAUNCH:
            k[LAUNCH[name]] = val
        elif name.startswith("dram__bytes_"):
            scale = BYTES_PER_UNIT.get(unit, 1)
            k["dram_read" if "read" in name else "dram_write"] = val * scale
    seq = [kernels[i] for i in sorted(kernels, key=int)]
    out, idx = {}, -1
    for k in seq:
        if MARKER in k["kernel"]:
            idx += 1
            continue
        if 0 <= idx < len(order):
            out.setdefault(tuple(order[idx]), []).append(k)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m convfuse.profile", description=__doc__)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--results", help="results file to update (default: results/<gpu-slug>.json)")
    ap.add_argument("--problem", action="append")
    ap.add_argument("--csv-out", help="keep ncu's raw CSV here")
    a = ap.parse_args(argv)
    if a.worker:
        worker(a.worker, a.problem)
        return 0

    import datetime as _dt

    import torch

    from . import registry as R
    from . import results as RS

    if not torch.cuda.is_available():
        print("error: `make profile` needs a CUDA GPU and Nsight Compute (ncu)", file=sys.stderr)
        return 2
    order_path = Path("build") / "profile_order.json"
    order_path.parent.mkdir(exist_ok=True)
    cmd = [a.ncu, "--profile-from-start", "off", "--clock-control", "none", "--metrics", ",".join(METRICS),
           "--csv", "--print-units", "base", sys.executable, "-m", "convfuse.profile", "--worker", str(order_path)]
    for pk in a.problem or []:
        cmd += ["--problem", pk]
    print("[profile] " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if a.csv_out:
        Path(a.csv_out).write_text(proc.stdout)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
        return proc.returncode
    per_variant = parse(proc.stdout, json.loads(order_path.read_text()))
    path = Path(a.results) if a.results else RS.device_path()
    data = RS.load(path)
    data["env"]["profile_date"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    kernels = [R.get(p, k) for p, k in per_variant if any(v.problem == p and v.key == k for v in R.kernel_variants())]
    try:
        codes = RS.machine_codes(kernels)
    except (OSError, RuntimeError) as e:
        print(f"[profile] machine code not recorded: {e}", flush=True)
        codes = {}
    for rec in data["records"]:
        ks = per_variant.get((rec["problem"], rec["variant"]))
        if ks:
            if (rec["problem"], rec["variant"]) in codes:
                rec["ncu_machine_code"] = codes[(rec["problem"], rec["variant"])]
            rec["dram_bytes_measured"] = int(sum(k.get("dram_read", 0) + k.get("dram_write", 0) for k in ks))
            rec["ncu_kernels"] = ks
            rec["ncu_sum_ms"] = round(sum(k.get("ms", 0) for k in ks), 5)
            if rec.get("kind") == "fused":   # one kernel: its launch shape and occupancy
                main = max(ks, key=lambda k: k.get("ms", 0))
                for f in ("threads_per_block", "smem_dynamic", "achieved_occupancy_pct"):
                    if f in main:
                        rec[f if f != "smem_dynamic" else "smem_bytes_dynamic"] = main[f]
            print(f"[profile] {rec['problem']}/{rec['variant']}: {rec['dram_bytes_measured'] / 1e9:.3f} GB measured, "
                  f"{rec['model_bytes'] / 1e9:.3f} GB modeled, {len(ks)} kernels", flush=True)
    RS.save(data, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
