#!/bin/bash
# Session call 5 (untracked; the session's last 381 device-seconds): conv2d 04d with the fragment loads one row ahead
# (CF_FRAG_PREFETCH): bitwise against the registered build, one timing. Not for the record (no time left for one).
D=$OUT/call5; mkdir -p $D; date > $D/start.txt
R=conv2d:04d_rs_tf32; RP=$R@CF_FRAG_PREFETCH
export PYTHONUNBUFFERED=1
timeout 100 python3 xk.py build $R $RP > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 50 python3 scripts/check_bitwise.py --deadline 20 $R $RP > $D/bitwise.log 2>&1; echo "rc $?" >> $D/bitwise.log
grep -c ": equal" $D/bitwise.log; tail -2 $D/bitwise.log
timeout 90 python3 scripts/check_variant.py $R $RP > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc |max_abs" $D/time.log | cut -c1-120; grep -A4 "timing, median" $D/time.log
date > $D/end.txt; cp call5.sh $D/
