"""Session helper (untracked): DRAM write and copy bandwidth at conv3d's output size, CUDA events, median of 30."""
import torch
from convfuse import problems as P

def med(fn, n=30):
    for _ in range(5): fn()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]

p = P.get("conv3d"); o = p.output_shape(p.input_shape)
y = torch.empty(o, device="cuda"); z = torch.empty(o, device="cuda"); x = torch.randn(p.input_shape, device="cuda")
nb = y.numel() * 4
for name, fn, byt in [("fill_ (write only)", lambda: y.fill_(0.5), nb), ("zero_", lambda: y.zero_(), nb),
                      ("copy_ (read + write)", lambda: z.copy_(y), 2 * nb),
                      ("input copy (read + write 0.27 GB)", lambda: x.clone(), 2 * x.numel() * 4)]:
    ms = med(fn)
    print(f"{name:36s} {ms:.3f} ms  {byt / ms / 1e9:.2f} TB/s ({byt / 1e9:.3f} GB)", flush=True)
