#!/bin/bash
# Session call 5 (untracked): CF_GROUP_STORE (groups of 4 and 2) checked bitwise, by the protocol, under the
# sanitizers, timed with its ablations (CF_ABL_NOMMA patch applied on top), and ncu's write counts.
D=$OUT/call5; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; G=CF_GROUP_STORE; G2=CF_GROUP_STORE,CF_GROUP=2; Z=CF_ABL_NOLOAD,CF_ABL_NOSTAGE,CF_ABL_NOMMA
S="$T $T@$G $T@$G2 $T@CF_ABL_NOSTORE $T@$G,CF_ABL_NOSTORE $T@$Z $T@$G,$Z $T@$G2,$Z"
python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
python3 scripts/check_bitwise.py $T $T@$G $T@$G2 > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
python3 xk.py verify $T@$G $T@$G2 > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool python3 xk.py san $T@$G > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
compute-sanitizer --tool memcheck python3 xk.py san $T@$G2 > $D/san_memcheck_g2.log 2>&1; echo "rc $?" >> $D/san_memcheck_g2.log
date >> $D/start.txt
python3 scripts/check_variant.py $S > $D/time.log 2>&1
python3 scripts/check_variant.py $T $T@$G $T@$G2 > $D/time_2.log 2>&1
date >> $D/start.txt
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T $T@$G $T@$G,$Z > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call5.tgz call5
tail -2 $D/bitwise.log; grep -E "verify|rc" $D/verify.log | tail -4; for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|rc ' $f | tr '\n' ' ')"; done
grep -h -A12 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -E "gpu__time|dram__bytes_write|lts__t_sectors_op_write|issue_active|long_score|barrier" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
