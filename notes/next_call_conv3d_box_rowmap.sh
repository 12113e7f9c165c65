#!/bin/bash
# Prepared by the twenty-fifth session (2026-12-03) for the next one; not run: its last 298 device-seconds could not
# start a machine. Needs the session helper xk.py at the repo root (results/device-logs/explore-2026-12-02h/call4/xk.py).
# CF_BOX_ROWMAP, the box's channel rows reordered so that
# the pair's st.shared.v2 are free of bank conflicts. Bitwise against the recorded build, one timing with both floors
# (ablations), the protocol, ncu time and shared-store bank conflicts. No sanitizer (no device time left for it).
D=$OUT/call5; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; R=$B@CF_BOX_ROWMAP; FB=$B@CF_ABL_RAWEPI,CF_ABL_NOSTORE; FR=$R,CF_ABL_RAWEPI,CF_ABL_NOSTORE
export PYTHONUNBUFFERED=1
{
date -u
timeout 120 python3 xk.py build $B $R $FB $FR > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 40 python3 scripts/check_bitwise.py $B $R 2>&1 | tee $D/bitwise.log | tail -1
timeout 45 python3 scripts/check_variant.py $B $R $FB $FR 2>&1 | tee $D/time.log | grep -A6 "timing, median"
timeout 40 python3 xk.py verify $R > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
M=gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
timeout 40 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $R 2>&1 | tee $D/ncu.log | grep -E "gpu__|l1tex__|ncu-sections\]|ERR"
date -u
} 2>&1 | tee $D/call.log
