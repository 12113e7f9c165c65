#!/bin/bash
# Twenty-fourth session's record: conv3d 04b TF32 with the sweep's boxes of two rows and the degree-3 clamped GELU
# registered (CF_GROUP=2, CF_GELU_Q3); every other kernel's machine code as in the 09:10 UTC record's commit 1404808.
# Cut to the session's last ~360 device-seconds: the bench first (every variant, one process), then the sanitizers on the
# one changed kernel only (the others' entries in results/device-logs/sanitize.json checked the same source: their
# source hashes match), the hardening suite, ncu's bytes; no GPU test suite (~70 s; it ran in the 09:10 record on the
# same machine code for every kernel but this one, whose protocol, special values and repeatability ran in call 3) and
# no SASS summary. pack always runs.
mkdir -p $OUT; date -u > /tmp/rec_start.txt
export PYTHONUNBUFFERED=1
timeout 120 bash scripts/device_session.sh env build
timeout 150 bash scripts/device_session.sh bench
timeout 70 python3 -m convfuse.sanitize --problem conv3d --variant 04b_wgmma_tf32 --out $OUT/sanitize_conv3d_04b_tf32.json \
  --logs $OUT/sanitize-logs > $OUT/sanitize.log 2>&1; tail -4 $OUT/sanitize.log
timeout 40 bash scripts/device_session.sh harden
timeout 60 bash scripts/device_session.sh profile
date -u >> /tmp/rec_start.txt; cat /tmp/rec_start.txt; cp /tmp/rec_start.txt $OUT/
bash scripts/device_session.sh pack > /dev/null
