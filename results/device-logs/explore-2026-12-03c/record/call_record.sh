#!/bin/bash
# Twenty-fourth session's record: conv3d 04b TF32 with the sweep's boxes of two rows and the degree-3 clamped GELU
# registered (CF_GROUP=2, CF_GELU_Q3); every other kernel's machine code as in the 09:10 UTC record's commit 1404808.
mkdir -p $OUT; date -u > /tmp/rec_start.txt
timeout 560 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack
date -u >> /tmp/rec_start.txt; cat /tmp/rec_start.txt
