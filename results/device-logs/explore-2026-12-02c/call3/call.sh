#!/bin/bash
# Session call 3 (untracked): does the time depend on the data multiplied? data_dep.py (random vs zero operands,
# clocks and power), and ablations that multiply real data (CF_ABL_STAGE_ONCE), with the earlier ones beside them.
D=$OUT/call3; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; P=CF_PRODUCER; Z=CF_ABL_NOLOAD,CF_ABL_NOSTAGE; O=CF_ABL_STAGE_ONCE
S="$T $T@$P $T@$O $T@$P,$O $T@$P,$O,CF_ABL_NOSYNC $T@$Z $T@$P,$Z"
python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 120 python3 data_dep.py $T $T@$P > $D/data_dep.log 2>&1; echo "rc $?" >> $D/data_dep.log; mv smi.csv $D/ 2>/dev/null
date >> $D/start.txt
timeout 150 python3 scripts/check_variant.py $S > $D/time.log 2>&1
timeout 150 python3 scripts/check_variant.py $T@$O $T@$P,$O,CF_ABL_NOSYNC $T@$P,$O $T@$Z $T > $D/time_2.log 2>&1
date >> $D/start.txt
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__sass_inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 100 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T $T@$O $T@$Z > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call3.tgz call3
cat $D/data_dep.log | grep -v Warn
grep -h -A10 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -E "gpu__time|per_second|issue_active" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
