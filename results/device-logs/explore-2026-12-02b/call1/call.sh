#!/bin/bash
# Session call 1 (untracked): the ablations of the registered conv3d builds (the producer's ceiling), and ncu.
D=$OUT/call1; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; H=conv3d:04b_wgmma_fp16
A=CF_ABL_NOSTAGE; SK=CF_ABL_NOLOAD,CF_ABL_NOSTAGE,CF_ABL_RAWEPI,CF_ABL_NOSTORE
ST="$T $T@$A $T@$A,CF_ABL_RAWEPI $T@$A,CF_ABL_NOSTORE $T@CF_ABL_NOSTORE $T@CF_ABL_RAWEPI $T@$SK"
SH="$H $H@$A $H@$A,CF_ABL_RAWEPI $H@$A,CF_ABL_NOSTORE $H@$SK"
python3 xk.py build $ST $SH > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
date >> $D/start.txt
python3 scripts/check_variant.py $ST > $D/time_tf32.log 2>&1
python3 scripts/check_variant.py $SH > $D/time_fp16.log 2>&1
python3 scripts/check_variant.py $ST > $D/time_tf32_2.log 2>&1
date >> $D/start.txt
ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum,smsp__sass_inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio python3 scripts/ncu_sections.py $T $T@$A $T@$A,CF_ABL_NOSTORE $H $H@$A > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call1.tgz call1
grep -h -A12 "timing, median" $D/time_tf32.log $D/time_fp16.log $D/time_tf32_2.log | grep -v "^--"
grep -E "gpu__time|issue_active|gmma|inst_executed" $D/ncu.log | head -40
