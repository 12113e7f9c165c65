#!/bin/bash
# Session call 2 (untracked): conv2d 04d's issue order, ping-pong and register sets: build, bitwise, two timings, ncu.
D=$OUT/call2; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
R0=conv2d:04d_rs_tf32; RI=$R0@CF_MMA_INTERLEAVE; RN=$R0@CF_NO_ORDER; RIN=$R0@CF_MMA_INTERLEAVE,CF_NO_ORDER
RI3=$R0@CF_MMA_INTERLEAVE,CF_FRAG_SETS=3; RI3N=$R0@CF_MMA_INTERLEAVE,CF_FRAG_SETS=3,CF_NO_ORDER; T0=conv2d:04c_ws_tf32
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $R0 $RI $RN $RIN $RI3 $RI3N $T0 > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
date >> $D/start.txt
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $R0 $RI $RN $RIN $RI3 $RI3N > $D/bitwise.log 2>&1; echo "rc $?" >> $D/bitwise.log
tail -2 $D/bitwise.log
timeout 150 python3 scripts/check_variant.py $R0 $RI $RN $RIN $RI3 $RI3N $T0 > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc " $D/time.log; grep -A9 "timing, median" $D/time.log
timeout 120 python3 scripts/check_variant.py $T0 $RI3N $RI3 $RIN $RN $RI $R0 > $D/time2.log 2>&1
grep -A9 "timing, median" $D/time2.log
date >> $D/start.txt
M=gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_misc_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__average_warp_latency_per_inst_issued.ratio
timeout 120 ncu --clock-control none --profile-from-start off --metrics $M --section ComputeWorkloadAnalysis python3 scripts/ncu_sections.py $R0 $RIN $RI3N > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cp call2.sh $D/
cd $OUT && tar czf call2.tgz call2
grep -E "^  [a-z_0-9]+\(|gpu__time|issue_active|stalled|highest|rc " $D/ncu.log | cut -c1-120 | head -60
