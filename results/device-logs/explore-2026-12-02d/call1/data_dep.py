"""Session script (untracked until archived): does the registered conv3d TF32 kernel's time depend on the data it
multiplies? The same build, the same launch, inputs and weights random or zero; each case 1,500 launches in a row,
timed with events; nvidia-smi samples SM clock and power meanwhile (smi.csv, with times), each case's wall-clock
window printed."""
import sys, time, subprocess, statistics
sys.path.insert(0, "scripts"); sys.path.insert(0, ".")
import torch
from check_variant import parse_spec
from convfuse import build as B, problems as P, registry as R



def main():
    specs = sys.argv[1:] or ["conv3d:04b_wgmma_tf32"]
    vs = [parse_spec(s) for s in specs]
    mods = B.build_all(vs)
    prob = P.get("conv3d")
    model = prob.make_model(seed=0, device="cuda")
    w, b, s = P.conv_params(model)
    x = prob.make_input(device="cuda")
    cases = {"x randn, w randn": (x, w), "x zeros, w randn": (torch.zeros_like(x), w),
             "x randn, w zeros": (x, torch.zeros_like(w)), "x randn, w randn (again)": (x, w)}
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu",
                            "--format=csv,noheader", "-lms", "50"], stdout=open("smi.csv", "w"))
    time.sleep(1.0)
    for v in vs:
        run = R.kernel_runner(v, mods[(v.problem, v.key)])
        y = torch.empty(prob.output_shape(x.shape), device="cuda")
        for name, (xi, wi) in cases.items():
            with torch.no_grad():
                for _ in range(30):
                    run(xi, wi, b, s, out=y)
                torch.cuda.synchronize()
                ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(1500)]
                t0 = time.strftime("%H:%M:%S")
                for a, e in ev:
                    a.record(); run(xi, wi, b, s, out=y); e.record()
                torch.cuda.synchronize()
                t1 = time.strftime("%H:%M:%S")
            ms = sorted(a.elapsed_time(e) for a, e in ev)
            print(f"{v.key:40s} {name:26s} median {statistics.median(ms):.3f} ms  p10 {ms[150]:.3f}  p90 {ms[1350]:.3f}  "
                  f"({t0}-{t1})", flush=True)
    time.sleep(0.5)
    smi.terminate()


if __name__ == "__main__":
    main()
