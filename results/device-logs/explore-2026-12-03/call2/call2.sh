#!/bin/bash
# Session call 2 (untracked): conv3d 04b TF32 CF_DWIN with cursors and the group box fix, CF_DWIN_WAVES, EARLY.
D=$OUT/call2; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
B=conv3d:04b_wgmma_tf32; W=$B@CF_DWIN; V=$B@CF_DWIN,CF_DWIN_WAVES; E=$V,CF_DWIN_EARLY
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $B $W $V $E > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
date >> $D/start.txt
timeout 60 python3 scripts/check_variant.py $B $W $V $E > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc " $D/time.log; grep -A7 "timing, median" $D/time.log
timeout 120 python3 scripts/check_bitwise.py --deadline 20 $B $W $V $E > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
grep -c "equal" $D/bitwise.log; grep -E "DIFFERENT|rc |Error|check_bitwise\]" $D/bitwise.log | cut -c1-200 | tail -5
date >> $D/start.txt
timeout 100 python3 xk.py verify $V > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log; grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-160
export XK_SHAPES="2,8,6,10,64;3,8,4,9,64;2,8,4,7,20"
for T in memcheck racecheck synccheck; do
  X=""; [ $T = synccheck ] && X="--num-cuda-barriers 64"
  timeout 80 compute-sanitizer --tool $T $X python3 xk.py san $V $W > $D/san_$T.log 2>&1; echo "$T rc $?" >> $D/san_$T.log
  grep -E "ERROR SUMMARY|HAZARD|RACECHECK SUMMARY|rc " $D/san_$T.log | tail -3
done 2>/dev/null
date >> $D/start.txt
timeout 60 python3 scripts/check_variant.py $E $V $W $B > $D/time2.log 2>&1
grep -A7 "timing, median" $D/time2.log
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
timeout 150 ncu --clock-control none --profile-from-start off --section WarpStateStats --metrics $M python3 scripts/ncu_sections.py $B $W $V > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cp call2.sh xk.py $D/
grep -E "gpu__time|issue_active|dram__|sectors|inst_executed|hit_rate|Stall|rc " $D/ncu.log | cut -c1-120
cd $OUT && tar czf call2.tgz call2 && rm -rf call2
