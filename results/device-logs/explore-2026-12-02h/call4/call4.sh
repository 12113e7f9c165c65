#!/bin/bash
# Session call 4 (untracked): conv2d 04d with three consumers of three rows: bitwise against the default, repeats,
# two timings, protocol and hardening, the three sanitizers, ncu counters.
D=$OUT/call4; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
R=conv2d:04d_rs_tf32; R3=$R@CF_CONSUMERS=3,CF_ROWS=3,CF_PITCH=72,CF_STAGES=2,CF_PRODUCER_REGS=40,CF_PARAMS_SMEM
R3S=$R3,CF_FRAG_SETS=3; T0=conv2d:04c_ws_tf32
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $R $R3 $R3S $T0 > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $R $R3 $R3S > $D/bitwise.log 2>&1; echo "rc $?" >> $D/bitwise.log
grep -c "equal (nan 0.0000)" $D/bitwise.log; tail -2 $D/bitwise.log
timeout 60 python3 xk.py repeat $R $R3 > $D/repeat.log 2>&1; echo "rc $?" >> $D/repeat.log; grep -E "repeat\]|rc" $D/repeat.log
timeout 100 python3 scripts/check_variant.py $R $R3 $R3S $T0 > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc " $D/time.log; grep -A7 "timing, median" $D/time.log
timeout 60 python3 scripts/check_variant.py $T0 $R3S $R3 $R > $D/time2.log 2>&1
grep -A7 "timing, median" $D/time2.log
date >> $D/start.txt
timeout 60 python3 xk.py verify $R3 > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log; grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-160
for t in memcheck racecheck synccheck; do timeout 60 compute-sanitizer --tool $t python3 xk.py san $R3 > $D/$t.log 2>&1; echo "rc $?" >> $D/$t.log; tail -2 $D/$t.log; done
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
timeout 90 ncu --clock-control none --profile-from-start off --metrics $M --section ComputeWorkloadAnalysis python3 scripts/ncu_sections.py $R3 > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cp call4.sh xk.py $D/
cd $OUT && tar czf call4.tgz call4
grep -E "gpu__time|issue_active|stalled|highest|dram|wavefronts|conflicts|rc " $D/ncu.log | cut -c1-120
