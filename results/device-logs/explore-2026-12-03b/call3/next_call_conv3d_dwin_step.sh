#!/bin/bash
# Twenty-third session, call 3. Run from the repo root with the session helper beside it:
# cp results/device-logs/explore-2026-12-02h/call4/xk.py . && bash <this file>
# About 250 s: CF_DWIN_STEP (the depth step's item address stepped) against CF_DWIN_BRANCH and the registered loop; bitwise, protocol,
# memcheck/racecheck/synccheck, two timings, ncu counters and a source page of the step build.
D=$OUT/call3; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; F=$B@CF_DWIN,CF_DWIN_WAVES,CF_DWIN_EARLY,CF_DWIN_BRANCH; H=$B@CF_DWIN,CF_DWIN_WAVES,CF_DWIN_EARLY,CF_DWIN_BRANCH,CF_DWIN_STEP
export PYTHONUNBUFFERED=1
{
date -u
timeout 90 python3 xk.py build $B $F $H > /tmp/build.log 2>&1; echo "build rc $?"; tail -3 /tmp/build.log
timeout 45 python3 scripts/check_variant.py $B $F $H 2>&1 | grep -A5 "timing, median"
timeout 60 python3 scripts/check_bitwise.py --deadline 15 $B $H > $D/bitwise.log 2>&1; echo "bitwise rc $?"
grep -c ": equal" $D/bitwise.log; grep -E "DIFFERENT|Error|check_bitwise\]" $D/bitwise.log | cut -c1-200 | tail -3
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 40 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $F $H 2>&1 | grep -E "inst_executed|issue_active|gpu__time|ncu-sections\]"
timeout 40 python3 scripts/check_variant.py $H $F $B 2>&1 | grep -A5 "timing, median"
timeout 60 python3 xk.py verify $H > /tmp/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" /tmp/verify.log
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
for t in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $t python3 xk.py san $H > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
date -u
} 2>&1 | tee $D/call.log
timeout 60 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$H" 2> /dev/null | gzip > $D/ncu_source_step.csv.gz
