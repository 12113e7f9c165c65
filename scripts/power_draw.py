"""At what SM clock and power do the kernels run? Each variant in three stretches of launches, nvidia-smi sampling the
board meanwhile (convfuse.power), the clocks left alone:

  back to back   one launch after another on the benchmark's input (KernelBench's `rand`, four input sets in turn);
  zeros          the same on an all-zero input (the tensor cores' operands do not switch);
  as the bench   rounds of (L2 flush, eager, L2 flush, the kernel), as the recorded timing interleaves them.

For each stretch: the kernel's median time (and of its first and last tenth), the mean and lowest SM clock, the mean
and highest power, the share of samples with the software power cap active, and cycles = time x mean clock. Writes
JSON (--out) and prints a table.

    python3 scripts/power_draw.py [--seconds 1.5] [--out power.json] conv3d:04b_wgmma_tf32 conv3d:eager ...
"""
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from convfuse import bench, build as B, power, problems as P, registry as R  # noqa: E402


def _stretch(fn, seconds, before=None):
    """Launch fn (after before(), untimed, where given) until `seconds` have passed; per-launch event times."""
    ev = []
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        for _ in range(20):
            if before:
                before()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            ev.append((a, b))
        ev[-1][1].synchronize()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) for a, b in ev]


def main(argv):
    seconds, out = 1.5, None
    if "--seconds" in argv:
        i = argv.index("--seconds"); seconds = float(argv[i + 1]); del argv[i:i + 2]
    if "--out" in argv:
        i = argv.index("--out"); out = argv[i + 1]; del argv[i:i + 2]
    from check_variant import parse_spec
    kernels = [parse_spec(s) for s in argv if not s.endswith(":eager")]
    mods = B.build_all(kernels)
    flush = bench.L2Flush()
    rows = []
    with torch.no_grad(), power.Sampler(period_ms=20) as smi:
        marks = []
        for spec in argv:
            problem = spec.split(":")[0]
            prob = P.get(problem)
            model = prob.make_model(seed=0, device="cuda")
            params = P.conv_params(model)
            xs = [prob.make_input(seed=s, device="cuda") for s in range(4)]
            zero = torch.zeros_like(xs[0])
            y = torch.empty(prob.output_shape(), device="cuda")
            if spec.endswith(":eager"):
                name, call = f"{problem} eager", (lambda x: model(x))
            else:
                v = parse_spec(spec)
                run = R.kernel_runner(v, mods[(v.problem, v.key)])
                name, call = f"{problem} {v.key}", (lambda x, run=run: run(x, *params, out=y))
            k = [0]

            def rotating():
                k[0] += 1
                return call(xs[k[0] % 4])

            for _ in range(5):
                rotating()
            stretches = {"back to back": (rotating, None), "zeros": (lambda: call(zero), None),
                         "as the bench": (rotating, lambda: (flush(), model(xs[0]), flush()))}
            for regime, (fn, before) in stretches.items():
                time.sleep(1.0)                              # the board settles between stretches
                t0 = power.now()
                ms = _stretch(fn, seconds, before)
                t1 = power.now()
                marks.append((name, regime, ms, t0, t1))
                print(f"[power] {name}, {regime}: {len(ms)} launches, median {statistics.median(ms):.3f} ms", flush=True)
    for name, regime, ms, t0, t1 in marks:
        w = power.window(smi.rows, t0, t1)
        tenth = max(1, len(ms) // 10)
        med = statistics.median(ms)
        rows.append({"kernel": name, "regime": regime, "launches": len(ms), "median_ms": med,
                     "first_tenth_ms": statistics.median(ms[:tenth]), "last_tenth_ms": statistics.median(ms[-tenth:]),
                     "t0": t0.isoformat(), "t1": t1.isoformat(), **w,
                     "mcycles": med * 1e-3 * w["clock_mhz"] if w.get("clock_mhz") else None})
    if out:
        Path(out).write_text(json.dumps({"environment": bench.environment(), "fields": list(smi.fields),
                                         "seconds": seconds, "rows": rows}, indent=1, default=str) + "\n")
        Path(out).with_suffix(".smi.csv").write_text(smi.text)
    print(f"\n{'kernel':40s} {'regime':13s} {'ms':>7s} {'first':>7s} {'last':>7s} {'MHz':>6s} {'min':>6s} "
          f"{'W':>5s} {'max W':>6s} {'capped':>6s} {'Mcyc':>6s}")
    for r in rows:
        f = lambda k, fmt: (format(r[k], fmt) if r.get(k) is not None else "-")
        print(f"{r['kernel'][:40]:40s} {r['regime']:13s} {r['median_ms']:7.3f} {r['first_tenth_ms']:7.3f} "
              f"{r['last_tenth_ms']:7.3f} {f('clock_mhz', '6.0f'):>6s} {f('clock_min_mhz', '6.0f'):>6s} "
              f"{f('power_w', '5.0f'):>5s} {f('power_max_w', '6.0f'):>6s} {f('power_capped', '6.0%'):>6s} "
              f"{f('mcycles', '6.3f'):>6s}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
