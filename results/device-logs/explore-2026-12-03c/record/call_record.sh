#!/bin/bash
# Twenty-fourth session's record: conv3d 04b TF32 with the sweep's boxes of two rows and the degree-3 clamped GELU
# registered (CF_GROUP=2, CF_GELU_Q3); every other kernel's machine code as in the 09:10 UTC record's commit 1404808.
# Cut to the session's last ~360 device-seconds: no gputest stage (the GPU test suite, ~70 s, ran in the 09:10 record on
# the same machine code for every kernel but this one; this one's protocol, special values and repeatability ran in
# explore-2026-12-03c/call3) and no sass stage; pack always runs.
mkdir -p $OUT; date -u > /tmp/rec_start.txt
timeout 300 bash scripts/device_session.sh env build sanitize harden bench profile
bash scripts/device_session.sh pack > /dev/null
date -u >> /tmp/rec_start.txt; cat /tmp/rec_start.txt
