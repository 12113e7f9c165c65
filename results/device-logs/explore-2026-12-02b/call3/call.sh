#!/bin/bash
# Session call 3 (untracked): store methods on the store-only ablation and in the full kernel (patch applied).
D=$OUT/call3; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; Z=CF_ABL_NOLOAD,CF_ABL_NOSTAGE,CF_ABL_NOMMA; R=-CF_TMA_STORE,-CF_BOX_STS; P=$R,-CF_BULK_STORE
S="$T $T@$Z $T@$Z,CF_ABL_NOENDS $T@$Z,$R $T@$Z,$P $T@$R $T@$P $T@CF_ABL_NOENDS"
python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
python3 scripts/check_variant.py $S > $D/time.log 2>&1
python3 scripts/check_variant.py $S > $D/time_2.log 2>&1
date >> $D/start.txt
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio
ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T@$Z,$R $T@$Z,$P $T@$P > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call3.tgz call3
grep -h -A12 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -E "gpu__time|dram__bytes_write|lts__t_sectors_op_write|issue_active|long_score|lg_thr" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
