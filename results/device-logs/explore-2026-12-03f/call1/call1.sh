#!/bin/bash
# Twenty-seventh session, call 1: conv2d 04d TF32, three bitwise-neutral candidates against the registered build
# (the 16:53 UTC record put it at 1.163 ms, 1.98x torch.compile: the goal's edge). CF_W_BATCH (weights staged with 32
# loads in flight per thread), CF_TILE_SPREAD (the 16 tiles over 62 rounds to lone consumers), CF_EPI_ROLL=1/2 (the
# epilogue in a loop over rows: a quarter / half the code) and two combinations. Bitwise, two timings, the protocol,
# the three sanitizers on the combination, ncu stall reasons of every build.
D=$OUT/call1; mkdir -p $D; cp "$0" $D/
B=conv2d:04d_rs_tf32
C1=$B@CF_W_BATCH; C2=$B@CF_TILE_SPREAD; C3=$B@CF_EPI_ROLL=1; C4=$B@CF_EPI_ROLL=2
C5=$B@CF_W_BATCH,CF_TILE_SPREAD,CF_EPI_ROLL=2; C6=$B@CF_W_BATCH,CF_TILE_SPREAD,CF_EPI_ROLL=1
export PYTHONUNBUFFERED=1
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 150 python3 xk.py build $B $C1 $C2 $C3 $C4 $C5 $C6 > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 80 python3 scripts/check_bitwise.py $B $C1 $C2 $C3 $C4 $C5 $C6 > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -1 $D/bitwise.log
timeout 80 python3 scripts/check_variant.py $B $C1 $C2 $C3 $C4 $C5 $C6 2>&1 | grep -A10 "timing, median"
timeout 70 python3 scripts/check_variant.py $C6 $C5 $C4 $C3 $C2 $C1 $B 2>&1 | grep -A10 "timing, median"
timeout 50 python3 xk.py verify $C5 $C6 > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
for t in memcheck racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $t python3 xk.py san $C6 > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
S=smsp__average_warps_issue_stalled; R=per_issue_active.ratio
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum
for r in barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard math_pipe_throttle membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait; do M=$M,${S}_${r}_$R; done
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $C1 $C2 $C3 $C4 $C5 2>&1 | grep -E "gpu__|smsp__|sm__|ncu-sections\]|ERR"
date -u
} 2>&1 | tee $D/call.log
