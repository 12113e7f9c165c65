#!/bin/bash
# Prepared by the twenty-eighth session (its device-seconds ran out): conv2d 04d's registered pixel pairs against tap 1's
# pixels loaded on their own (CF_PAIR_SPLIT). Copy results/device-logs/explore-2026-12-02h/call4/xk.py to the repo root
# for the call (remove it after); run from the root as `mkdir -p $OUT; timeout 400 bash notes/next_call_conv2d_pair_split.sh`,
# then move this script beside its logs. Prediction: notes/kernel_log.md (twenty-eighth session, at its end).
D=$OUT/callS; mkdir -p $D; cp "$0" $D/
B=conv2d:04d_rs_tf32; S=$B@CF_PAIR_SPLIT
export PYTHONUNBUFFERED=1
{
date -u
timeout 80 python3 xk.py build $B $S > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
for so in build/convfuse_*/*.so; do
  case $so in *04d_rs_tf32*) ;; *) continue ;; esac
  n=$(basename $so .so); cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  printf "[sass] %-50s MOV %4s F2FP %4s LDS %4s LDS.64 %4s HGMMA %4s STG.64 %4s LDL %s total %s\n" "$n" "$(grep -c ' MOV ' /tmp/$n.sass)" \
    "$(grep -c F2FP /tmp/$n.sass)" "$(grep -c 'LDS ' /tmp/$n.sass)" "$(grep -c 'LDS.64' /tmp/$n.sass)" "$(grep -c HGMMA /tmp/$n.sass)" \
    "$(grep -c 'STG.E.EF.64' /tmp/$n.sass)" "$(grep -c LDL /tmp/$n.sass)" "$(grep -c '/\*[0-9a-f]*\*/' /tmp/$n.sass)"
done
timeout 45 python3 scripts/check_variant.py $B $S 2>&1 | grep -A4 "timing, median"
timeout 30 python3 scripts/check_bitwise.py --deadline 10 $B $S > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -1 $D/bitwise.log
timeout 40 python3 scripts/check_variant.py $S $B 2>&1 | grep -A4 "timing, median"
timeout 50 python3 xk.py verify $S > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
for t in memcheck racecheck synccheck; do
  timeout 50 compute-sanitizer --tool $t python3 xk.py san $S > $D/san_$t.log 2>&1; echo "$t rc $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_op_shared_ld.sum
M=$M,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
for r in long_scoreboard short_scoreboard wait; do M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
timeout 40 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $S 2>&1 | grep -E "gpu__|smsp__|l1tex__|ncu-sections\]|ERR"
date -u
} 2>&1 | tee $D/call.log
