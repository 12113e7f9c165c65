#!/bin/bash
# Prepared for the next device call (twenty-second session; not run: the device time ran out). Run from the repo
# root with the session helper beside it: cp results/device-logs/explore-2026-12-02h/call4/xk.py . && bash <this file>
D=$OUT/call5; mkdir -p $D; date > $D/start.txt; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; E=$B@CF_DWIN,CF_DWIN_WAVES,CF_DWIN_EARLY; F=$E,CF_DWIN_BRANCH
export PYTHONUNBUFFERED=1
timeout 60 python3 xk.py build $B $E $F > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 35 python3 scripts/check_variant.py $B $E $F > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -A5 "timing, median" $D/time.log
timeout 40 python3 scripts/check_bitwise.py --deadline 15 $B $F > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
grep -c ": equal" $D/bitwise.log; grep -E "DIFFERENT|rc |Error|check_bitwise\]" $D/bitwise.log | cut -c1-200 | tail -3
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 35 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $E $F > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
grep -E "inst_executed|issue_active|gpu__time" $D/ncu.log | cut -c1-110
timeout 30 python3 scripts/check_variant.py $F $E $B > $D/time2.log 2>&1
grep -A5 "timing, median" $D/time2.log
date > $D/end.txt
