#!/bin/bash
# Session call 1 (untracked): conv3d 04d's first builds (two, three, four consumers) and conv2d 04d's CF_EPI_LEAN:
# protocol and hardening, bitwise, timings with ablations, ncu counters.
D=$OUT/call1; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
C=conv3d:04d_rs_tf32; C3=$C@CF_CONSUMERS=3,CF_ROWS=3,CF_PITCH=72,CF_STAGES=5,CF_PARAMS_SMEM
C4=$C@CF_CONSUMERS=4,CF_ROWS=2,CF_PITCH=72,CF_BOX_ROWS=5,CF_STAGES=3,CF_PARAMS_SMEM
CE=$C@CF_ABL_NOEPI; C4E=$C4,CF_ABL_NOEPI; B=conv3d:04b_wgmma_tf32
R=conv2d:04d_rs_tf32; RL=$R@CF_EPI_LEAN
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $C $C3 $C4 $CE $C4E $B $R $RL > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
date >> $D/start.txt
timeout 120 python3 xk.py verify $C $C3 $C4 $RL > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log; grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-160
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $C $C3 $C4 > $D/bitwise.log 2>&1; echo "rc $?" >> $D/bitwise.log
grep -c "equal (nan 0.0000)" $D/bitwise.log; tail -2 $D/bitwise.log
date >> $D/start.txt
timeout 120 python3 scripts/check_variant.py $B $C $C3 $C4 $CE $C4E > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc " $D/time.log; grep -A9 "timing, median" $D/time.log
timeout 60 python3 scripts/check_variant.py $R $RL > $D/time_c2.log 2>&1; echo "rc $?" >> $D/time_c2.log
grep -A5 "timing, median" $D/time_c2.log
timeout 60 python3 scripts/check_variant.py $C4 $C3 $C $B > $D/time2.log 2>&1
grep -A7 "timing, median" $D/time2.log
date >> $D/start.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__inst_executed.sum
timeout 100 ncu --clock-control none --profile-from-start off --metrics $M --section ComputeWorkloadAnalysis python3 scripts/ncu_sections.py $C $C3 $C4 > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cp call1.sh xk.py $D/
grep -E "gpu__time|issue_active|stalled|highest|dram__|wavefronts|conflicts|inst_executed|rc " $D/ncu.log | cut -c1-120
