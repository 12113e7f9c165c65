#!/bin/bash
# Twenty-seventh session, call 2: conv2d 04d TF32 with five output rows a consumer (two stages a ring), with and
# without the register sets carried across chunk pairs (CF_SET_CARRY) and the epilogue's parameters in shared memory,
# and two stages at four rows (the control), against the registered build. Bitwise, two timings, the protocol,
# the three sanitizers on the carried build, ncu counters of every build.
D=$OUT/call2; mkdir -p $D; cp "$0" $D/
B=conv2d:04d_rs_tf32
S2=$B@CF_STAGES=2; R5=$B@CF_ROWS=5,CF_PITCH=72,CF_STAGES=2; R5C=$R5,CF_SET_CARRY; R5CP=$R5C,CF_PARAMS_SMEM
export PYTHONUNBUFFERED=1
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 150 python3 xk.py build $B $S2 $R5 $R5C $R5CP > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 80 python3 scripts/check_bitwise.py $B $S2 $R5 $R5C $R5CP > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -1 $D/bitwise.log
timeout 80 python3 scripts/check_variant.py $B $S2 $R5 $R5C $R5CP 2>&1 | grep -A8 "timing, median"
timeout 70 python3 scripts/check_variant.py $R5CP $R5C $R5 $S2 $B 2>&1 | grep -A8 "timing, median"
timeout 50 python3 xk.py verify $R5C $R5CP > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
for t in memcheck racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $t python3 xk.py san $R5C > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
S=smsp__average_warps_issue_stalled; R=per_issue_active.ratio
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
for r in barrier long_scoreboard short_scoreboard wait; do M=$M,${S}_${r}_$R; done
timeout 50 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $S2 $R5 $R5C $R5CP 2>&1 | grep -E "gpu__|smsp__|sm__|dram__|lts__|ncu-sections\]|ERR"
date -u
} 2>&1 | tee $D/call.log
