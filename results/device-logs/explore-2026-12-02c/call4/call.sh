#!/bin/bash
# Session call 4 (untracked): CF_TMA_STAGE (each warpgroup stages from a TMA box) checked bitwise, by the protocol,
# under the sanitizers, timed beside the registered build, the producer build and the real-data ceiling; ncu.
D=$OUT/call4; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; P=CF_PRODUCER; TS=CF_TMA_STAGE; O=CF_ABL_STAGE_ONCE
S="$T $T@$TS $T@$P $T@$O"
python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 120 python3 scripts/check_bitwise.py $T $T@$TS $T@$P > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
timeout 90 python3 xk.py verify $T@$TS > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool python3 xk.py san $T@$TS > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date >> $D/start.txt
timeout 120 python3 scripts/check_variant.py $S > $D/time.log 2>&1
timeout 100 python3 scripts/check_variant.py $T@$TS $T $T@$O > $D/time_2.log 2>&1
date >> $D/start.txt
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__sass_inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
timeout 80 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T $T@$TS > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
timeout 80 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$T@$TS" 2> $D/ncu_err_source.log | gzip > $D/ncu_source_tma_stage.csv.gz
date > $D/end.txt
cd $OUT && tar czf call4.tgz call4
tail -2 $D/bitwise.log; grep -E "verify|FAIL|rc" $D/verify.log | tail -6; for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|rc ' $f | tr '\n' ' ')"; done
grep -h -A8 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -E "gpu__time|per_second|issue_active|inst_exec|barrier|long_sc" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
