#!/bin/bash
# Prepared for the next device call (twenty-second session; not run: the device time ran out). Run from the repo
# root with the session helper beside it: cp results/device-logs/explore-2026-12-02h/call4/xk.py . && bash <this file>
# About 250 s: CF_DWIN_BRANCH with and without early staging against the sweep as measured and the registered loop;
# bitwise, protocol, memcheck, two timings, ncu counters and a source page of the branch build.
D=$OUT/call1; mkdir -p $D; date > $D/start.txt; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; E=$B@CF_DWIN,CF_DWIN_WAVES,CF_DWIN_EARLY; F=$E,CF_DWIN_BRANCH; G=$B@CF_DWIN,CF_DWIN_WAVES,CF_DWIN_BRANCH
export PYTHONUNBUFFERED=1
timeout 90 python3 xk.py build $B $E $F $G > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 45 python3 scripts/check_variant.py $B $E $F $G > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -A6 "timing, median" $D/time.log
timeout 60 python3 scripts/check_bitwise.py --deadline 15 $B $F $G > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
grep -c ": equal" $D/bitwise.log; grep -E "DIFFERENT|rc |Error|check_bitwise\]" $D/bitwise.log | cut -c1-200 | tail -3
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 40 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $E $F > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
grep -E "inst_executed|issue_active|gpu__time" $D/ncu.log | cut -c1-110
timeout 40 python3 scripts/check_variant.py $G $F $E $B > $D/time2.log 2>&1
grep -A6 "timing, median" $D/time2.log
timeout 60 python3 xk.py verify $F > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log; grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-160
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
timeout 45 compute-sanitizer --tool memcheck python3 xk.py san $F > $D/san_memcheck.log 2>&1; echo "memcheck rc $?" >> $D/san_memcheck.log
grep -E "ERROR SUMMARY|rc " $D/san_memcheck.log | tail -2
timeout 60 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$F" 2> $D/ncu_err_source.log | gzip > $D/ncu_source_branch.csv.gz
date > $D/end.txt
