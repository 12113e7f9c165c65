#!/bin/bash
# Twenty-sixth session, call 3: CF_GROUP_DEFER (the last slot's wait for its copy's reads and the box's EMPTY arrive
# moved to the next round, after its wgmmas are issued) against the registered conv3d TF32 build. Bitwise, two
# timings, the protocol, the three sanitizers on small shapes that take the sweep's group store, ncu stalls.
D=$OUT/call3; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; F=$B@CF_GROUP_DEFER
export PYTHONUNBUFFERED=1
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 120 python3 xk.py build $B $F > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 60 python3 scripts/check_bitwise.py $B $F 2>&1 | tail -1
timeout 50 python3 scripts/check_variant.py $B $F 2>&1 | grep -A4 "timing, median"
timeout 50 python3 scripts/check_variant.py $F $B 2>&1 | grep -A4 "timing, median"
timeout 40 python3 xk.py verify $F > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
for t in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $t python3 xk.py san $F > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
unset XK_SHAPES
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
timeout 40 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $F 2>&1 | grep -E "gpu__|smsp__|sm__|ncu-sections\]|ERR"
date -u
} 2>&1 | tee $D/call.log
