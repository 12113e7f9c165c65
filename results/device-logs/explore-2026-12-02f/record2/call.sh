#!/bin/bash
# Session record (untracked): a bitwise gate for CF_GROUP_LAZY's registration first, then the full record, then an ncu
# source page and counters of registered FP16 (the build cache of the record's build stage).
mkdir -p $OUT; date > $OUT/rec_start.txt
F=conv3d:04b_wgmma_fp16
timeout 100 python3 scripts/check_bitwise.py --deadline 30 $F@-CF_GROUP_LAZY $F > $OUT/gate_bitwise.log 2>&1; rc=$?
grep -c equal $OUT/gate_bitwise.log; tail -1 $OUT/gate_bitwise.log
if [ $rc -ne 0 ]; then
  echo "GATE FAILED ($rc): no record"; grep -iE "DIFFER|error" $OUT/gate_bitwise.log | head
  cd $OUT && tar czf logs.tgz gate_bitwise.log rec_start.txt; exit 1
fi
date >> $OUT/rec_start.txt
timeout 470 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack
date >> $OUT/rec_start.txt
D=$OUT/call3; mkdir -p $D
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 30 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $F > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
timeout 45 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py $F 2> $D/ncu_err.log | gzip > $D/ncu_source_conv3d_04b_wgmma_fp16.csv.gz
date >> $OUT/rec_start.txt; cat $OUT/rec_start.txt
grep -E "gpu__time|inst_exec|long_sc|barrier|issue_active" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'; ls -la $D
