#!/bin/bash
# Session record (untracked): the full record with conv3d 04d registered (every other kernel's machine code unchanged
# since e24a37d, the 16:32 UTC record's commit).
mkdir -p $OUT; date > $OUT/rec_start.txt
timeout 560 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack
date >> $OUT/rec_start.txt; cat $OUT/rec_start.txt
