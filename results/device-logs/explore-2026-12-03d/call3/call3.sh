#!/bin/bash
# Twenty-fifth session, call 3: what the registered conv3d 04b TF32 build (boxes of two rows) spends beyond its floor.
# Ablations (wrong outputs on purpose, timed only): the epilogue's math off (CF_ABL_RAWEPI), the stores off
# (CF_ABL_NOSTORE), both; two timings in reverse order; ncu time and instructions.
D=$OUT/call3; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; RAW=$B@CF_ABL_RAWEPI; NOS=$B@CF_ABL_NOSTORE; BOTH=$B@CF_ABL_RAWEPI,CF_ABL_NOSTORE
export PYTHONUNBUFFERED=1
{
date -u
timeout 150 python3 xk.py build $B $RAW $NOS $BOTH > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 60 python3 scripts/check_variant.py $B $RAW $NOS $BOTH 2>&1 | tee $D/time.log | grep -A6 "timing, median"
timeout 60 python3 scripts/check_variant.py $BOTH $NOS $RAW $B 2>&1 | tee $D/time2.log | grep -A6 "timing, median"
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,dram__bytes_read.sum
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $RAW $NOS $BOTH 2>&1 | tee $D/ncu.log | grep -E "gpu__|sm__|dram__|smsp__inst|ncu-sections\]"
date -u
} 2>&1 | tee $D/call.log
