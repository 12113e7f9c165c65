#!/bin/bash
# Session call 1 (untracked): conv2d 04d (register-A wgmma) first build: build, SASS, verify, timing against 04c, checks, ncu.
D=$OUT/call1; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
R0=conv2d:04d_rs_tf32; R1=$R0@CF_TF32_TRUNC; T0=conv2d:04c_ws_tf32; F0=conv2d:04c_ws_fp16
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $R0 $R1 $T0 $F0 > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
for so in build/convfuse_conv2d_04d*/*.so; do n=$(basename $(dirname $so)); cuobjdump -sass $so > $D/$n.sass 2>/dev/null;
  printf "%s HGMMA %s DEPBAR %s LDS %s F2FP %s LDL %s STL %s\n" $n $(grep -c HGMMA $D/$n.sass) $(grep -c 'WARPGROUP.DEPBAR' $D/$n.sass) $(grep -c 'LDS' $D/$n.sass) $(grep -c 'F2FP' $D/$n.sass) $(grep -c LDL $D/$n.sass) $(grep -c STL $D/$n.sass); done | tee $D/sass_summary.txt
date >> $D/start.txt
timeout 150 python3 scripts/check_variant.py $R0 $R1 $T0 $F0 > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "max_abs|rc " $D/time.log | cut -c1-150 | head -14; grep -A7 "timing, median" $D/time.log
date >> $D/start.txt
timeout 90 python3 xk.py verify $R0 $R1 > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-200
timeout 100 compute-sanitizer --tool memcheck python3 xk.py san $R0 > $D/memcheck.log 2>&1; echo "rc $?" >> $D/memcheck.log; tail -3 $D/memcheck.log
timeout 100 compute-sanitizer --tool racecheck python3 xk.py san $R0 > $D/racecheck.log 2>&1; echo "rc $?" >> $D/racecheck.log; tail -3 $D/racecheck.log
date >> $D/start.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_requests_op_write.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__sass_inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,l1tex__throughput.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg
timeout 120 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $R0 $T0 > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
timeout 90 ncu --clock-control none --profile-from-start off --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis python3 scripts/ncu_sections.py $R0 > $D/ncu_sections.log 2>&1
date > $D/end.txt
cp call1.sh $D/
cd $OUT && tar czf call1.tgz call1
grep -E "^  [a-z_0-9]+\(|gpu__time|gmma|l1tex__data|issue_active|dram__bytes|rc " $D/ncu.log | cut -c1-130 | head -40
