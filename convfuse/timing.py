"""The timing primitives every timer of the study uses (bench's interleaved rounds, KernelBench's verdict, cuDNN's plan
choice, the fused-module comparison): CUDA events around each call, the L2 flushed before it, quantiles of the
times. Below all of its users: it imports nothing of the package."""
from __future__ import annotations

import statistics
import time

import torch

N_TIMED = 25
N_WARMUP = 3
FLUSH_BYTES = 512 * 2**20   # > 8x the H200's 60 MB L2 (and the H100's 50 MB)


def _log(msg):
    print(msg, flush=True)


class L2Flush:
    """Writes a buffer several times the L2's size, so that the next timed call finds none of its data there."""

    def __init__(self, device="cuda", nbytes=FLUSH_BYTES):
        self.buf = torch.empty(nbytes // 4, dtype=torch.float32, device=device)

    def __call__(self):
        self.buf.fill_(1.0)


def quantiles(ms: list[float]) -> dict:
    s = sorted(ms)

    def q(p):
        i = p * (len(s) - 1)
        lo, hi = int(i), min(int(i) + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (i - lo)

    return {"median_ms": statistics.median(s), "p20_ms": q(0.2), "p80_ms": q(0.8), "n": len(s)}


@torch.no_grad()
def time_each(fn, n_timed: int, n_warmup: int, flush) -> list[float]:
    """One callable on its own: n_warmup calls, then n_timed calls, each after `flush`, between CUDA events, the host
    synchronised after each (KernelBench's way of timing a model); the times in ms."""
    for _ in range(n_warmup):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(n_timed):
        flush()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        ms.append(start.elapsed_time(end))
    return ms


@torch.no_grad()
def time_interleaved(fns: dict, n_timed=N_TIMED, n_warmup=N_WARMUP, flush=None, log=_log) -> dict:
    """{name: callable()} -> {name: {median_ms, p20_ms, p80_ms, n}}; one call of each per round, so that a clock or
    neighbour drift hits every callable alike. `flush` runs before each timed call (default: an L2Flush)."""
    flush = flush or L2Flush()
    for name, fn in fns.items():
        t0 = time.perf_counter()
        for _ in range(n_warmup):
            fn()
        torch.cuda.synchronize()
        log(f"[bench] warm-up {name}: {time.perf_counter() - t0:.1f} s")
    events = {name: [] for name in fns}
    for r in range(n_timed):
        for name, fn in fns.items():
            flush()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            events[name].append((a, b))
        if (r + 1) % 5 == 0:
            torch.cuda.synchronize()
            log(f"[bench] round {r + 1}/{n_timed}")
    torch.cuda.synchronize()
    return {name: quantiles([a.elapsed_time(b) for a, b in ev]) for name, ev in events.items()}
