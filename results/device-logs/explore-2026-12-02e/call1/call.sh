#!/bin/bash
# Session call 1 (untracked): conv3d fp16 with the group stores (04b_wgmma_fp16@CF_GROUP_STORE) checked bitwise
# against the registered fp16 build, by the protocol with the special-value tests, under three sanitizers; timed
# twice beside registered fp16 and TF32, with CF_ABL_STAGE_ONCE on both fp16 builds; ncu counters.
D=$OUT/call1; mkdir -p $D; date > $D/start.txt; nvidia-smi > $D/gpu.txt 2>&1
F=conv3d:04b_wgmma_fp16; C=CF_GROUP_STORE; T=conv3d:04b_wgmma_tf32
timeout 150 python3 xk.py build $F $F@$C $T $F@CF_ABL_STAGE_ONCE $F@$C,CF_ABL_STAGE_ONCE > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $F $F@$C > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
timeout 60 python3 xk.py verify $F@$C > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in memcheck synccheck racecheck; do
  timeout 50 compute-sanitizer --tool $tool python3 xk.py san $F@$C > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date >> $D/start.txt
timeout 75 python3 scripts/check_variant.py $F $F@$C $T $F@CF_ABL_STAGE_ONCE $F@$C,CF_ABL_STAGE_ONCE > $D/time.log 2>&1
timeout 60 python3 scripts/check_variant.py $F@$C $F $T > $D/time_2.log 2>&1
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 45 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $F $F@$C > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call1.tgz call1
tail -2 $D/bitwise.log; grep -E "verify\]|FAIL|rc" $D/verify.log | tail -12; for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|rc ' $f | tr '\n' ' ')"; done
grep -h -A7 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -E "gpu__time|inst_exec|dram__|lts__|long_sc|barrier|issue_active" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
