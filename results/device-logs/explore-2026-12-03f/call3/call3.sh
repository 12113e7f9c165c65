#!/bin/bash
# Twenty-seventh session, call 3: conv2d 04d TF32 with the box four chunks ahead prefetched into L2 (CF_L2_PREFETCH=4),
# on the registered build, on two stages a ring (four rows) and on five rows with carried sets, each beside its build
# without it. Bitwise, two timings, the protocol and the three sanitizers on the five-row prefetching build, ncu counters.
D=$OUT/call3; mkdir -p $D; cp "$0" $D/
B=conv2d:04d_rs_tf32
PF=$B@CF_L2_PREFETCH=4; S2=$B@CF_STAGES=2; S2PF=$S2,CF_L2_PREFETCH=4
R5C=$B@CF_ROWS=5,CF_PITCH=72,CF_STAGES=2,CF_SET_CARRY; R5CPF=$R5C,CF_L2_PREFETCH=4
export PYTHONUNBUFFERED=1
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 150 python3 xk.py build $B $PF $S2 $S2PF $R5C $R5CPF > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 80 python3 scripts/check_bitwise.py $B $PF $S2PF $R5CPF > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -1 $D/bitwise.log
timeout 80 python3 scripts/check_variant.py $B $PF $S2 $S2PF $R5C $R5CPF 2>&1 | grep -A9 "timing, median"
timeout 70 python3 scripts/check_variant.py $R5CPF $R5C $S2PF $S2 $PF $B 2>&1 | grep -A9 "timing, median"
timeout 50 python3 xk.py verify $PF $R5CPF > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
for t in memcheck racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $t python3 xk.py san $R5CPF > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
S=smsp__average_warps_issue_stalled; R=per_issue_active.ratio
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
for r in barrier long_scoreboard short_scoreboard wait; do M=$M,${S}_${r}_$R; done
timeout 50 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $PF $S2 $S2PF $R5C $R5CPF 2>&1 | grep -E "gpu__|smsp__|sm__|dram__|lts__|ncu-sections\]|ERR"
date -u
} 2>&1 | tee $D/call.log
