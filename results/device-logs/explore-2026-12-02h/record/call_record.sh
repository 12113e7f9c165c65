#!/bin/bash
# Session record (untracked): the full record with conv2d 04d registered (its code is call 4's default build; every
# other kernel's machine code unchanged since be6002e).
mkdir -p $OUT; date > $OUT/rec_start.txt
timeout 540 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack
date >> $OUT/rec_start.txt; cat $OUT/rec_start.txt
