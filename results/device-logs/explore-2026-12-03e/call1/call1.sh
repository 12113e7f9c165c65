#!/bin/bash
# Twenty-sixth session, call 1: CF_BOX_ROWMAP (the box's channel rows reordered so the pair's st.shared.v2 are free of
# bank conflicts; the copy reads them through a 5-D map of y) against the registered conv3d TF32 build, and both
# floors (CF_ABL_RAWEPI, CF_ABL_NOSTORE). Bitwise, two timings, the protocol, sanitizers on small shapes, ncu time
# and shared-store bank conflicts. Also the first GPU run of wgmma.cuh's host refactor (one encoder lookup).
D=$OUT/call1; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; R=$B@CF_BOX_ROWMAP; FB=$B@CF_ABL_RAWEPI,CF_ABL_NOSTORE; FR=$R,CF_ABL_RAWEPI,CF_ABL_NOSTORE
export PYTHONUNBUFFERED=1
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 150 python3 xk.py build $B $R $FB $FR > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
timeout 60 python3 scripts/check_bitwise.py $B $R 2>&1 | tee $D/bitwise.log | tail -3
timeout 60 python3 scripts/check_variant.py $B $R $FB $FR 2>&1 | tee $D/time.log | grep -A7 "timing, median"
timeout 60 python3 scripts/check_variant.py $FR $FB $R $B 2>&1 | tee $D/time2.log | grep -A7 "timing, median"
timeout 60 python3 xk.py verify $B $R > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
for t in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $t python3 xk.py san $R > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
unset XK_SHAPES
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,dram__bytes_write.sum
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $R $FB $FR 2>&1 | tee $D/ncu.log | grep -E "gpu__|l1tex__|dram__|smsp__inst|ncu-sections\]|ERR"
date -u
} 2>&1 | tee $D/call.log
