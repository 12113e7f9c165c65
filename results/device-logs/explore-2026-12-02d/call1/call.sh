#!/bin/bash
# Session call 1 (untracked): the mended CF_TMA_STAGE checked bitwise, by the protocol, under the sanitizers, timed
# twice beside the registered build and the real-data ceiling; ncu counters and a source page; data_dep.py.
D=$OUT/call1; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; TS=CF_TMA_STAGE; O=CF_ABL_STAGE_ONCE
S="$T $T@$TS $T@$O"
timeout 150 python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 110 python3 scripts/check_bitwise.py --deadline 30 $T $T@$TS > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
date >> $D/start.txt
timeout 60 python3 xk.py verify $T@$TS > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool python3 xk.py san $T@$TS > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date >> $D/start.txt
timeout 70 python3 scripts/check_variant.py $S > $D/time.log 2>&1
timeout 70 python3 scripts/check_variant.py $T@$TS $T $T@$O > $D/time_2.log 2>&1
date >> $D/start.txt
timeout 60 python3 data_dep.py $T > $D/data_dep.log 2>&1; echo "rc $?" >> $D/data_dep.log; mv smi.csv $D/ 2>/dev/null
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__sass_inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T $T@$TS > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
timeout 60 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$T@$TS" 2> $D/ncu_err_source.log | gzip > $D/ncu_source_tma_stage.csv.gz
date > $D/end.txt
cd $OUT && tar czf call1.tgz call1
tail -2 $D/bitwise.log; grep -E "verify|FAIL|rc" $D/verify.log | tail -4; for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|rc ' $f | tr '\n' ' ')"; done
grep -h -A6 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -v Warn $D/data_dep.log | tail -6
grep -E "gpu__time|per_second|issue_active|inst_exec|barrier|long_sc" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
