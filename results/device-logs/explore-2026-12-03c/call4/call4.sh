#!/bin/bash
# Twenty-fourth session, call 4 (the device time left could not hold a full record): on boxes of two rows with the
# degree-3 GELU (call 3's fastest), each other cut of call 1 alone; two timings, the protocol, the three sanitizers on
# the fastest pair (memcheck, racecheck, synccheck), ncu counters.
D=$OUT/call4; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; GQ=$B@CF_GROUP=2,CF_GELU_Q3; GQH=$B@CF_GROUP=2,CF_GELU_Q3,CF_DESC_HI
GQF=$B@CF_GROUP=2,CF_GELU_Q3,CF_GELU_HALF; GF=$B@CF_GROUP=2,CF_GELU_HALF
export PYTHONUNBUFFERED=1
{
date -u
timeout 100 python3 xk.py build $B $GQ $GQH $GQF $GF > /tmp/build.log 2>&1; echo "build rc $?"; tail -1 /tmp/build.log
timeout 60 python3 scripts/check_variant.py $B $GQ $GQH $GQF $GF 2>&1 | grep -A7 "timing, median"
timeout 60 python3 scripts/check_variant.py $GF $GQF $GQH $GQ $B 2>&1 | grep -A7 "timing, median"
timeout 60 python3 xk.py verify $GQ $GQH $GQF $GF > /tmp/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" /tmp/verify.log
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
for t in memcheck racecheck synccheck; do
  timeout 50 compute-sanitizer --tool $t python3 xk.py san $GQ > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 50 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $GQ $GQH $GQF $GF 2>&1 | grep -E "gpu__|sm__|smsp__|ncu-sections\]"
date -u
} 2>&1 | tee $D/call.log
