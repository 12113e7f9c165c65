#!/bin/bash
# Twenty-fifth session, call 1: conv3d 04b TF32 as registered (boxes of two rows, Q3, halved clamp) against the same
# with CF_DWIN_SKIP (a plane's last group skips the rows the group before computed) and the leftover rounds dealt by
# cost (CF_DWIN_WEIGHT=32/40/48). Bitwise against the registered build, two timings, the protocol, sanitizers, ncu.
D=$OUT/call1; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; OLD=$B@-CF_GROUP=2,-CF_GELU_Q3,-CF_GELU_HALF; S=$B@CF_DWIN_SKIP
S32=$S,CF_DWIN_WEIGHT=32; S40=$S,CF_DWIN_WEIGHT=40; S48=$S,CF_DWIN_WEIGHT=48
export PYTHONUNBUFFERED=1
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 150 python3 xk.py build $B $OLD $S $S32 $S40 $S48 > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
timeout 60 python3 scripts/check_bitwise.py $B $S $S32 $S40 $S48 2>&1 | tail -3
timeout 60 python3 scripts/check_variant.py $B $OLD $S $S32 $S40 $S48 2>&1 | tee $D/time.log | grep -A9 "timing, median"
timeout 60 python3 scripts/check_variant.py $S48 $S40 $S32 $S $OLD $B 2>&1 | tee $D/time2.log | grep -A9 "timing, median"
timeout 90 python3 xk.py verify $B $S $S32 $S40 $S48 > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
for t in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $t python3 xk.py san $S40 > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_write.sum,dram__bytes_read.sum
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $S $S32 $S40 $S48 2>&1 | tee $D/ncu.log | grep -E "gpu__|dram__|smsp__inst|ncu-sections\]"
date -u
} 2>&1 | tee $D/call.log
