#!/bin/bash
# Session call 1 (untracked): conv3d 04b TF32 CF_DWIN (depth sweep): bitwise, timing, protocol, sanitizers, ncu.
D=$OUT/call1; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
B=conv3d:04b_wgmma_tf32; W=$B@CF_DWIN; E=$W,CF_DWIN_EARLY
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $B $W $E > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
date >> $D/start.txt
timeout 100 python3 scripts/check_bitwise.py --deadline 20 $B $W $E > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
grep -c "equal" $D/bitwise.log; tail -3 $D/bitwise.log | cut -c1-200
timeout 90 python3 scripts/check_variant.py $B $W $E > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc " $D/time.log; grep -A6 "timing, median" $D/time.log
date >> $D/start.txt
timeout 100 python3 xk.py verify $W > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log; grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-160
export XK_SHAPES="2,8,6,10,64;3,8,4,9,64"
for T in memcheck racecheck synccheck; do
  X=""; [ $T = synccheck ] && X="--num-cuda-barriers 64"
  timeout 70 compute-sanitizer --tool $T $X python3 xk.py san $W > $D/san_$T.log 2>&1; echo "$T rc $?" >> $D/san_$T.log
  grep -E "ERROR SUMMARY|rc |error" $D/san_$T.log | tail -3
done 2>/dev/null
date >> $D/start.txt
timeout 60 python3 scripts/check_variant.py $E $W $B > $D/time2.log 2>&1
grep -A6 "timing, median" $D/time2.log
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__inst_executed.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
timeout 100 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $W > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cp call1.sh xk.py $D/
grep -E "gpu__time|issue_active|stalled|dram__|sectors|inst_executed|gmma|rc " $D/ncu.log | cut -c1-120
cd $OUT && tar czf call1.tgz call1 && rm -rf call1
