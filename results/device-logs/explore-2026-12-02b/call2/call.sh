#!/bin/bash
# Session call 2 (untracked): the output path alone (CF_ABL_NOMMA, patch applied), the write bandwidth, source pages.
D=$OUT/call2; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; A=CF_ABL_NOSTAGE; Z=CF_ABL_NOLOAD,CF_ABL_NOSTAGE,CF_ABL_NOMMA
S="$T $T@$A $T@$Z $T@$Z,CF_ABL_RAWEPI $T@$Z,CF_ABL_NOSTORE $T@$A,CF_ABL_NOMMA"
python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
python3 wb.py > $D/write_bw.log 2>&1
python3 scripts/check_variant.py $S > $D/time.log 2>&1
python3 wb.py >> $D/write_bw.log 2>&1
date >> $D/start.txt
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio
ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T $T@$A $T@$Z $T@$Z,CF_ABL_NOSTORE > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
for s in "$T" "$T@$A"; do
  f=$(echo "$s" | tr ':@,' '___')
  ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$s" 2> $D/ncu_err_$f.log | gzip > $D/ncu_source_$f.csv.gz
done
date > $D/end.txt
cd $OUT && tar czf call2.tgz call2
cat $D/write_bw.log; grep -h -A10 "timing, median" $D/time.log
grep -E "gpu__time|dram__bytes|lts__t_sectors_op_write|issue_active|long_score" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
