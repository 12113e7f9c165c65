#!/bin/bash
# Session call 1 (untracked): conv2d 04c CF_BULK_STORE candidates: build, bitwise, two timings, protocol, ncu counters.
D=$OUT/call1; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
T0=conv2d:04c_ws_tf32; SR=CF_SHARED_RING,CF_STAGES=3
T1=$T0@$SR; T2=$T0@$SR,CF_BULK_STORE; T3=$T0@CF_SHARED_RING,CF_STAGES=2,CF_RAWS=3,CF_BULK_STORE
F0=conv2d:04c_ws_fp16; F1=$F0@CF_BULK_STORE; TA=$T0@$SR,CF_BULK_STORE,CF_ABL_NOSTORE
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $T0 $T1 $T2 $T3 $F0 $F1 $TA > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
date >> $D/start.txt
timeout 70 python3 scripts/check_bitwise.py --deadline 30 $T0 $T1 $T2 $T3 > $D/bitwise_tf32.log 2>&1; echo "rc $?" >> $D/bitwise_tf32.log
timeout 40 python3 scripts/check_bitwise.py --deadline 30 $F0 $F1 > $D/bitwise_fp16.log 2>&1; echo "rc $?" >> $D/bitwise_fp16.log
tail -1 $D/bitwise_tf32.log $D/bitwise_fp16.log
date >> $D/start.txt
timeout 110 python3 scripts/check_variant.py $T0 $T1 $T2 $T3 $F0 $F1 $TA > $D/time.log 2>&1
grep -A12 "timing, median" $D/time.log
timeout 110 python3 scripts/check_variant.py $TA $F1 $F0 $T3 $T2 $T1 $T0 > $D/time2.log 2>&1
grep -A12 "timing, median" $D/time2.log
date >> $D/start.txt
timeout 70 python3 xk.py verify $T2 $F1 > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
grep -E "verify\]|FAIL|rc " $D/verify.log
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__sass_inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed
timeout 120 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T0 $T1 $T2 $F0 $F1 > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cp call1.sh $D/
cd $OUT && tar czf call1.tgz call1
grep -E "^  [a-z_0-9]+\(|gpu__time|lts__t_req|lts__t_sectors_op_write|gmma|dram__bytes|rc " $D/ncu.log | cut -c1-130 | head -80
