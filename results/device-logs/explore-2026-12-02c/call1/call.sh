#!/bin/bash
# Session call 1 (untracked): CF_PRODUCER (a producer warpgroup, a buffer per consumer) checked bitwise against the
# registered TF32 build, by the protocol, under the sanitizers; timed with its ceiling and its handoffs alone; ncu.
D=$OUT/call1; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; P=CF_PRODUCER; Z=CF_ABL_NOLOAD,CF_ABL_NOSTAGE
S="$T $T@$P $T@$P,-CF_MMA_ORDER $T@$P,CF_PRODUCER_SETS=2 $T@$Z $T@$P,$Z"
python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 120 python3 scripts/check_bitwise.py $T $T@$P $T@$P,-CF_MMA_ORDER $T@$P,CF_PRODUCER_SETS=2 > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
timeout 90 python3 xk.py verify $T@$P > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool python3 xk.py san $T@$P > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date >> $D/start.txt
timeout 150 python3 scripts/check_variant.py $S > $D/time.log 2>&1
timeout 80 python3 scripts/check_variant.py $T $T@$P $T@$P,-CF_MMA_ORDER > $D/time_2.log 2>&1
date >> $D/start.txt
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,dram__bytes_read.sum,lts__t_sectors_op_write.sum
timeout 90 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T $T@$P $T@$P,$Z > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
timeout 90 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$T@$P" 2> $D/ncu_err_source.log | gzip > $D/ncu_source_producer.csv.gz
date > $D/end.txt
cd $OUT && tar czf call1.tgz call1
tail -3 $D/bitwise.log; grep -E "verify|FAIL|rc" $D/verify.log | tail -6; for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|rc ' $f | tr '\n' ' ')"; done
grep -h -A10 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -E "gpu__time|issue_active|gmma|long_score|barrier|inst_exec" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
