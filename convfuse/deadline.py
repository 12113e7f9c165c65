"""A deadline for GPU work in the scripts that run candidates (scripts/check_variant.py).

A kernel that hangs (a barrier whose phase never completes) holds `torch.cuda.synchronize()` forever, and with it
every later step of the run on the device. `finish_within` waits for the work queued so far, but at most a given time;
past it, it says what hung and ends the process at once (exit status 124, as timeout(1) gives), which frees the GPU
for the next step.
"""
from __future__ import annotations

import os
import time


def finish_within(seconds: float, what: str, event=None, clock=time.monotonic, sleep=time.sleep, exit=os._exit) -> float:
    """Wait until the GPU work queued so far is done, at most `seconds`; return the seconds waited. `event`: a
    recorded CUDA event (default: one recorded now on the current stream); `clock`, `sleep` and `exit` are there for
    the tests. Past the deadline: a line naming `what`, then exit(124), with no Python cleanup (a context whose kernel
    never finishes cannot be synchronised; the driver tears it down with the process)."""
    if event is None:
        import torch

        event = torch.cuda.Event()
        event.record()
    t0 = clock()
    while not event.query():
        if clock() - t0 > seconds:
            print(f"[deadline] {what}: not finished after {seconds:g} s: taken as hung; ending the process", flush=True)
            exit(124)
            return clock() - t0          # only where `exit` returns (tests)
        sleep(0.001)
    return clock() - t0
