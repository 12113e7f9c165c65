#!/bin/bash
# Prepared by the twenty-fourth session for the next one (not run: after its exploration calls it had 574 device-seconds,
# under what a full record takes with a machine's start). Register first (convfuse/registry.py: CF_GROUP=2 and
# CF_GELU_Q3 for conv3d 04b TF32, from _MEASURED_ON_SWEEP), commit, then the full record as every session makes it:
mkdir -p $OUT; date -u > /tmp/rec_start.txt
timeout 560 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack
date -u >> /tmp/rec_start.txt; cat /tmp/rec_start.txt
