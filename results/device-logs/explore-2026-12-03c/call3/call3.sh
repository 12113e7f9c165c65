#!/bin/bash
# Twenty-fourth session, call 3: the sweep's output in boxes of two rows (CF_GROUP=2), so a warpgroup's next rows wait
# for its partner's copy, not for the round's last warpgroup's; alone and with the instruction cuts of call 1. Bitwise
# first (deadline), two timings, the protocol, memcheck / racecheck / synccheck, ncu counters; the gmma metric names.
D=$OUT/call3; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; G=$B@CF_GROUP=2; GQ=$B@CF_GROUP=2,CF_GELU_Q3; GA=$B@CF_GROUP=2,CF_DESC_HI,CF_GELU_Q3,CF_GELU_HALF
export PYTHONUNBUFFERED=1
{
date -u
timeout 100 python3 xk.py build $B $G $GQ $GA > /tmp/build.log 2>&1; echo "build rc $?"; tail -1 /tmp/build.log
timeout 60 python3 scripts/check_bitwise.py --deadline 15 $B $G > $D/bitwise.log 2>&1; echo "bitwise rc $?"
grep -c ": equal" $D/bitwise.log; grep -E "differ|check_bitwise\]" $D/bitwise.log | tail -3
timeout 60 python3 scripts/check_variant.py $B $G $GQ $GA 2>&1 | grep -A6 "timing, median"
timeout 60 python3 scripts/check_variant.py $GA $GQ $G $B 2>&1 | grep -A6 "timing, median"
timeout 60 python3 xk.py verify $G $GQ $GA > /tmp/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" /tmp/verify.log
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
for t in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $t python3 xk.py san $G > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $G $GQ $GA 2>&1 | grep -E "gpu__|sm__|smsp__|ncu-sections\]"
ncu --query-metrics --chip gh100 2>&1 | grep -iE "gmma|pipe_tensor" > $D/metric_names.txt; wc -l < $D/metric_names.txt
date -u
} 2>&1 | tee $D/call.log
timeout 50 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$G" 2> /dev/null | gzip > $D/ncu_source_group2.csv.gz
