#!/bin/bash
# Session call 2 (untracked): conv3d fp16 with the group stores and the shared window (CF_XWIN): bitwise against
# registered fp16, protocol + special values, three sanitizers; timed twice beside fp16 (registered and group); ncu.
D=$OUT/call2; mkdir -p $D; date > $D/start.txt
F=conv3d:04b_wgmma_fp16; G=CF_GROUP_STORE; X=CF_GROUP_STORE,CF_XWIN; T=conv3d:04b_wgmma_tf32
timeout 120 python3 xk.py build $F $F@$G $F@$X $T > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 80 python3 scripts/check_bitwise.py --deadline 30 $F $F@$X > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
timeout 50 python3 xk.py verify $F@$X > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in memcheck synccheck racecheck; do
  timeout 45 compute-sanitizer --tool $tool python3 xk.py san $F@$X > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date >> $D/start.txt
timeout 60 python3 scripts/check_variant.py $F $F@$G $F@$X $T > $D/time.log 2>&1
timeout 55 python3 scripts/check_variant.py $F@$X $F@$G $F > $D/time_2.log 2>&1
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,dram__bytes_read.sum,lts__t_sectors_op_write.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 40 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $F@$G $F@$X > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call2.tgz call2
grep -E "build rc|\] " $D/build.log | tail -3; tail -2 $D/bitwise.log; grep -E "verify\]|FAIL|rc" $D/verify.log | tail -12; for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|rc ' $f | tr '\n' ' ')"; done
grep -h -A7 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -E "gpu__time|inst_exec|dram__|lts__|long_sc|barrier|issue_active" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
