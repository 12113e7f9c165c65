#!/bin/bash
# Twenty-ninth session, call C: conv2d 04d 3xTF32 in tap-column groups (RsChunk3x::group): four rows, three rows, three
# rows with two main accumulators; SASS, verify, two timing processes, sanitizers, ncu.
# Run from the root with xk.py copied there: `mkdir -p $OUT; timeout 570 bash notes/call_3xtf32_c.sh`.
D=$OUT/callC; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32; B=$A@CF_ROWS=3,CF_PITCH=72; C=$B,CF_3X_MAIN2
T=conv2d:04d_rs_tf32; H=conv2d:04c_ws_3xfp16
export PYTHONUNBUFFERED=1
{
date -u
timeout 150 python3 xk.py build $A $B $C $T $H > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
for so in build/convfuse_*/*.so; do
  case $so in *04d_rs_3x*) ;; *) continue ;; esac
  n=$(basename $so .so); cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  printf "[sass] %-60s HGMMA %4s DEPBAR %4s ARRIVE %4s MOV %4s LDL %s STL %s total %s\n" "$n" "$(grep -c HGMMA /tmp/$n.sass)" \
    "$(grep -c 'WARPGROUP.DEPBAR' /tmp/$n.sass)" "$(grep -c 'WARPGROUP.ARRIVE' /tmp/$n.sass)" "$(grep -c ' MOV ' /tmp/$n.sass)" \
    "$(grep -c LDL /tmp/$n.sass)" "$(grep -c STL /tmp/$n.sass)" "$(grep -c '/\*[0-9a-f]*\*/' /tmp/$n.sass)"
done
timeout 90 python3 xk.py verify $A $B $C > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
timeout 100 python3 scripts/check_variant.py $A $B $C $T $H > $D/time1.log 2>&1; echo "time1 rc $?"
grep -E "\(128|timing|^  " $D/time1.log
timeout 80 python3 scripts/check_variant.py $H $T $C $B $A > $D/time2.log 2>&1; echo "time2 rc $?"
grep -A7 "timing" $D/time2.log
for v in $A $C; do for t in memcheck racecheck synccheck; do
  timeout 45 compute-sanitizer --tool $t python3 xk.py san $v > $D/san_$t.log 2>&1; echo "$v $t rc $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done; done
Q=gpu__time_duration.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,dram__bytes_read.sum,sm__cycles_elapsed.avg.per_second
for r in long_scoreboard short_scoreboard wait barrier; do Q=$Q,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
timeout 50 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $A $C > $D/ncu.log 2>&1
grep -E "gpu__|sm__|smsp__|dram__|ncu-sections\]|ERR" $D/ncu.log
date -u
} 2>&1 | tee $D/call.log
