#!/bin/bash
# Session call 5 (untracked): CF_ABL_SKIP_ITEM=2 (warp 0's third item left out) timed twice beside the registered
# build and CF_ABL_STAGE_ONCE; ncu instruction counts. (xk.py: the copy in ../call1.)
D=$OUT/call5; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; H=CF_ABL_HALF_ITEMS; K=CF_ABL_SKIP_ITEM=2; O=CF_ABL_STAGE_ONCE
S="$T $T@$K $T@$H $T@$O"
timeout 150 python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 70 python3 scripts/check_variant.py $S > $D/time.log 2>&1
timeout 70 python3 scripts/check_variant.py $T@$O $T@$H $T@$K $T > $D/time_2.log 2>&1
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__sass_inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T $T@$K > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call5.tgz call5
grep -h -A7 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -E "gpu__time|per_second|issue_active|inst_exec|barrier|long_sc" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
