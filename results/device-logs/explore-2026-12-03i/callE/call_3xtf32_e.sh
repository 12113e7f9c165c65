#!/bin/bash
# Thirtieth session, call E: conv2d 04d 3xTF32 — the twenty-ninth session's waiting CF_3X_CONCAT (notes/call_3xtf32_d.sh,
# never run) and three fragment sets (CF_3X_SETS=3), at three rows (four rows serialize with either: ptxas C7512),
# against the registered four rows and three rows without; then the twenty-eighth session's waiting CF_PAIR_SPLIT (TF32
# 04d, notes/next_call_conv2d_pair_split.sh). Run from the root with xk.py copied there:
# `mkdir -p $OUT; timeout 560 bash notes/call_3xtf32_e.sh; tar czf $OUT/callE.tgz -C $OUT callE` (the tool returns 8 files).
D=$OUT/callE; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32; B=$A@CF_ROWS=3,CF_PITCH=72; C=$B,CF_3X_CONCAT; S3=$B,CF_3X_SETS=3; E=$C,CF_3X_SETS=3
T=conv2d:04d_rs_tf32; TS=$T@CF_PAIR_SPLIT
export PYTHONUNBUFFERED=1
{
date -u
timeout 120 python3 xk.py build $A $B $C $S3 $E $T $TS > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
for so in build/convfuse_*/*.so; do
  case $so in *04d_rs_*) ;; *) continue ;; esac
  n=$(basename $so .so); cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  printf "[sass] %-62s HGMMA %4s DEPBAR %3s MOV %4s LDS.64 %4s LDL %s STL %s total %s\n" "$n" "$(grep -c HGMMA /tmp/$n.sass)" \
    "$(grep -c 'WARPGROUP.DEPBAR' /tmp/$n.sass)" "$(grep -c ' MOV ' /tmp/$n.sass)" "$(grep -c 'LDS.64' /tmp/$n.sass)" \
    "$(grep -c LDL /tmp/$n.sass)" "$(grep -c STL /tmp/$n.sass)" "$(grep -c '/\*[0-9a-f]*\*/' /tmp/$n.sass)"
done
timeout 70 python3 xk.py verify $C $S3 $E $TS > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
timeout 70 python3 scripts/check_variant.py $A $B $C $S3 $E > $D/time1.log 2>&1; echo "time1 rc $?"
grep -A8 "timing" $D/time1.log
timeout 70 python3 scripts/check_variant.py $E $S3 $C $B $A > $D/time2.log 2>&1; echo "time2 rc $?"
grep -A8 "timing" $D/time2.log
Q=gpu__time_duration.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,dram__bytes_read.sum,sm__cycles_elapsed.avg.per_second
for r in long_scoreboard short_scoreboard wait barrier; do Q=$Q,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
timeout 60 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $C $S3 $E > $D/ncu.log 2>&1
grep -E "gpu__|sm__|smsp__|dram__|ncu-sections\]|ERR" $D/ncu.log
for v in $E $S3 $C; do for t in memcheck racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $t python3 xk.py san $v > $D/san.tmp 2>&1; echo "$v $t rc $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san.tmp | tail -1; { echo "=== $v $t"; cat $D/san.tmp; } >> $D/san.log
done; done; rm -f $D/san.tmp
date -u
timeout 45 python3 scripts/check_variant.py $T $TS > $D/time_pair1.log 2>&1; echo "pair time1 rc $?"; grep -A4 "timing" $D/time_pair1.log
timeout 30 python3 scripts/check_bitwise.py --deadline 10 $T $TS > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -1 $D/bitwise.log
timeout 40 python3 scripts/check_variant.py $TS $T > $D/time_pair2.log 2>&1; echo "pair time2 rc $?"; grep -A4 "timing" $D/time_pair2.log
date -u
} 2>&1 | tee $D/call.log
