#!/bin/bash
# Twenty-sixth session, call 2: the registered conv3d TF32 build (boxes of two rows in the conflict-free row order,
# registered at db02e41) against the cuts that were slower on boxes of two rows (CF_DESC_HI; the halved clamp left
# out), the build before the row order, and its parts (epilogue math off, stores off: ablations, timed only).
D=$OUT/call2; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; H=$B@CF_DESC_HI; NH=$B@-CF_GELU_HALF; OLD=$B@-CF_BOX_ROWMAP
E=$B@CF_ABL_RAWEPI; S=$B@CF_ABL_NOSTORE
export PYTHONUNBUFFERED=1
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 150 python3 xk.py build $B $H $NH $OLD $E $S > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
timeout 60 python3 scripts/check_bitwise.py $B $H 2>&1 | tail -1
timeout 60 python3 scripts/check_variant.py $B $H $NH $OLD $E $S 2>&1 | grep -A9 "timing, median"
timeout 60 python3 scripts/check_variant.py $S $E $OLD $NH $H $B 2>&1 | grep -A9 "timing, median"
timeout 60 python3 xk.py verify $H $NH > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $H $E $S 2>&1 | grep -E "gpu__|l1tex__|smsp__|sm__|ncu-sections\]|ERR"
date -u
} 2>&1 | tee $D/call.log
