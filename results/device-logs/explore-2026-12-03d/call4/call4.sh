#!/bin/bash
# Twenty-fifth session, call 4: did boxes of two rows raise the floor? The recorded build and the build before it
# (one box of four rows, the degree-4 GELU), each in full and without epilogue math and stores (ablations: wrong
# outputs, timed only), in one process, twice in reverse order; ncu time and warp instructions.
D=$OUT/call4; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; OLD=$B@-CF_GROUP=2,-CF_GELU_Q3,-CF_GELU_HALF
FB=$B@CF_ABL_RAWEPI,CF_ABL_NOSTORE; FO=$OLD,CF_ABL_RAWEPI,CF_ABL_NOSTORE
export PYTHONUNBUFFERED=1
{
date -u
timeout 150 python3 xk.py build $B $OLD $FB $FO > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 60 python3 scripts/check_variant.py $B $OLD $FB $FO 2>&1 | tee $D/time.log | grep -A6 "timing, median"
timeout 60 python3 scripts/check_variant.py $FO $FB $OLD $B 2>&1 | tee $D/time2.log | grep -A6 "timing, median"
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $OLD $FB $FO 2>&1 | tee $D/ncu.log | grep -E "gpu__|sm__|smsp__inst|ncu-sections\]"
date -u
} 2>&1 | tee $D/call.log
