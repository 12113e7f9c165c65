#!/bin/bash
# Twenty-third session's record: conv3d 04b TF32 with the depth sweep registered (CF_DWIN, CF_DWIN_WAVES, CF_DWIN_EARLY,
# CF_DWIN_BRANCH); every other kernel's source unchanged since the 18:08 UTC record's commit 5c0f7ba.
mkdir -p $OUT; date -u > /tmp/rec_start.txt
timeout 560 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack
date -u >> /tmp/rec_start.txt; cat /tmp/rec_start.txt
