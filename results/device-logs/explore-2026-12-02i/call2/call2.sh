#!/bin/bash
# Session call 2 (untracked): conv3d 04d ablations (stores, input copies), protocol/hardening, ncu source page.
D=$OUT/call2; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
C=conv3d:04d_rs_tf32; C3=$C@CF_CONSUMERS=3,CF_ROWS=3,CF_PITCH=72,CF_STAGES=5,CF_PARAMS_SMEM
C4=$C@CF_CONSUMERS=4,CF_ROWS=2,CF_PITCH=72,CF_BOX_ROWS=5,CF_STAGES=3,CF_PARAMS_SMEM
CS=$C@CF_ABL_NOSTORE; CT=$C@CF_ABL_NOTMA; CTS=$C@CF_ABL_NOTMA,CF_ABL_NOSTORE; C4S=$C4,CF_ABL_NOSTORE; B=conv3d:04b_wgmma_tf32
R=conv2d:04d_rs_tf32; RL=$R@CF_EPI_LEAN
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $C $C3 $C4 $CS $CT $CTS $C4S $B $R $RL > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
date >> $D/start.txt
timeout 120 python3 scripts/check_variant.py $B $C $CS $CT $CTS $C4 $C4S > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc " $D/time.log; grep -A9 "timing, median" $D/time.log
date >> $D/start.txt
timeout 150 python3 xk.py verify $C $C3 $C4 $RL > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log; grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-160
date >> $D/start.txt
timeout 120 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py $C 2> $D/ncu_err.log | gzip > $D/ncu_source.csv.gz
timeout 80 ncu --clock-control none --profile-from-start off --section WarpStateStats --section MemoryWorkloadAnalysis_Tables python3 scripts/ncu_sections.py $C > $D/ncu_ws.log 2>&1
date > $D/end.txt
cp call2.sh xk.py $D/
cd $OUT && tar czf call2.tgz call2 && rm -rf call2
