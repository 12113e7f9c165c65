#!/bin/bash
# Session call 3 (untracked): CF_OUT_SHARED, a deeper shared ring for conv2d 04c TF32 with the bulk stores.
D=$OUT/call3; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
T0=conv2d:04c_ws_tf32; B=CF_SHARED_RING,CF_BULK_STORE
T2=$T0@$B,CF_STAGES=3; T5=$T0@$B,CF_STAGES=3,CF_RAWS=3,CF_OUT_SHARED; T6=$T0@$B,CF_STAGES=4,CF_OUT_SHARED; T7=$T0@$B,CF_STAGES=3,CF_OUT_SHARED
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $T0 $T2 $T5 $T6 $T7 > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 80 python3 scripts/check_bitwise.py --deadline 30 $T0 $T5 $T6 $T7 > $D/bitwise.log 2>&1; echo "rc $?" >> $D/bitwise.log
tail -n 2 $D/bitwise.log
timeout 90 python3 scripts/check_variant.py $T0 $T2 $T5 $T6 $T7 > $D/time.log 2>&1
grep -A8 "timing, median" $D/time.log
timeout 90 python3 scripts/check_variant.py $T7 $T6 $T5 $T2 $T0 > $D/time2.log 2>&1
grep -A8 "timing, median" $D/time2.log
date >> $D/start.txt
for s in $T2 $T5; do
  f=$(echo $s | tr ':@,=' '____')
  timeout 90 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$s" 2> $D/ncu_err_$f.log | gzip > $D/ncu_source_$f.csv.gz
done
M=gpu__time_duration.sum,lts__t_requests_op_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__sass_inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T5 $T6 > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
date >> $D/start.txt
for tool in memcheck synccheck racecheck; do
  timeout 80 compute-sanitizer --tool $tool python3 xk.py san $T5 $T6 > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date > $D/end.txt; cp call3.sh $D/
cd $OUT && tar czf call3.tgz call3
for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|rc ' $f | tr '\n' ' ')"; done
ls -la $D/*.gz; grep -E "gpu__time|issue_active|barrier" $D/ncu.log
