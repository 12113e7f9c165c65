#!/bin/bash
# Session call 7 (untracked): CF_DEAL_CONTIG (each block a contiguous range of rounds) checked bitwise, by the
# protocol, under synccheck and racecheck, timed twice beside the registered build; ncu DRAM and L2 counters.
# (xk.py: the copy in ../call1.)
D=$OUT/call7; mkdir -p $D; date > $D/start.txt
T=conv3d:04b_wgmma_tf32; C=CF_DEAL_CONTIG
timeout 120 python3 xk.py build $T $T@$C > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $T $T@$C > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
timeout 50 python3 xk.py verify $T@$C > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in synccheck racecheck; do
  timeout 45 compute-sanitizer --tool $tool python3 xk.py san $T@$C > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date >> $D/start.txt
timeout 55 python3 scripts/check_variant.py $T $T@$C > $D/time.log 2>&1
timeout 55 python3 scripts/check_variant.py $T@$C $T > $D/time_2.log 2>&1
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_op_read_hit_rate.pct,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 45 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T $T@$C > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call7.tgz call7
tail -2 $D/bitwise.log; grep -E "verify\]|FAIL|rc" $D/verify.log | tail -4; for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|rc ' $f | tr '\n' ' ')"; done
grep -h -A5 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
grep -E "gpu__time|inst_exec|dram__|lts__|long_sc|barrier|issue_active" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
