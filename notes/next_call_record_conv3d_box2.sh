#!/bin/bash
# Prepared by the twenty-fourth session (2026-12-03) for the next one; not run: after its exploration calls it had
# 278 device-seconds, under what a full record takes with a machine's start (~435 s of commands, ~210 s more).
# First, on the CPU machine: register conv3d 04b TF32's fastest measured build (convfuse/registry.py: add
# ("CF_GROUP=2", "CF_GELU_Q3", "CF_GELU_HALF") to _CONV3D_TF32_ONLY, spell _MEASURED_ON_SWEEP against them with
# _spelled_against as the older tuples are, and the same for _CUTS), commit; predicted then: 0.81-0.83 ms, 12.2-12.5x
# eager, 7.0-7.2x torch.compile (explore-2026-12-03c/call4: 0.816 / 0.817 ms, 12.40x / 12.38x, 7.15x / 7.15x).
# Then the full record as every session makes it (from the repo root):
mkdir -p $OUT; date -u > /tmp/rec_start.txt
timeout 560 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack
date -u >> /tmp/rec_start.txt; cat /tmp/rec_start.txt
