#!/bin/bash
# Session call 6 (untracked): CF_XWIN_LATE + CF_XWIN_W1 + CF_GROUP_DOUBLE (fp16) through the protocol and special-value
# tests, the three sanitizers on all their shapes; timed a third time; ncu counters beside CF_XWIN_LATE.
D=$OUT/call6; mkdir -p $D; date > $D/start.txt
F=conv3d:04b_wgmma_fp16; L=CF_GROUP_STORE,CF_XWIN,CF_XWIN_LATE; B=$L,CF_XWIN_W1,CF_GROUP_DOUBLE; T=conv3d:04b_wgmma_tf32
timeout 100 python3 xk.py build $F $F@$L $F@$B $T > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 50 python3 xk.py verify $F@$B > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in memcheck synccheck racecheck; do
  timeout 45 compute-sanitizer --tool $tool python3 xk.py san $F@$B > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
timeout 55 python3 scripts/check_variant.py $F@$B $F $T $F@$L > $D/time.log 2>&1
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 35 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $F@$L $F@$B > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call6.tgz call6
grep -E "verify\]|harden|rc" $D/verify.log | tail -12; for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Warning|rc ' $f | tr '\n' ' ')"; done
grep -h -A7 "timing, median" $D/time.log
grep -E "gpu__time|inst_exec|long_sc|barrier|issue_active" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
