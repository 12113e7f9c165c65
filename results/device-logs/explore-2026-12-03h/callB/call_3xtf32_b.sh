#!/bin/bash
# Twenty-ninth session, call B: conv2d 04d 3xTF32 without a producer warpgroup, one fragment set (consumer_3x): four
# rows, three rows, three rows with two main accumulators; SASS (serialized?), verify, two timing processes, sanitizers,
# ncu. Run from the root with xk.py copied there: `mkdir -p $OUT; timeout 570 bash notes/call_3xtf32_b.sh`.
D=$OUT/callB; mkdir -p $D; cp "$0" $D/
S=conv2d:04d_rs_3xtf32; A=$S@CF_FRAG_SETS=1; B=$S@CF_ROWS=3,CF_PITCH=72,CF_FRAG_SETS=1; C=$B,CF_3X_MAIN2
T=conv2d:04d_rs_tf32; H=conv2d:04c_ws_3xfp16
export PYTHONUNBUFFERED=1
{
date -u
timeout 150 python3 xk.py build $A $B $C $T $H > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
for so in build/convfuse_*/*.so; do
  case $so in *04d_rs*) ;; *) continue ;; esac
  n=$(basename $so .so); cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  printf "[sass] %-66s HGMMA %4s DEPBAR %4s ARRIVE %4s MOV %4s LDL %s STL %s total %s\n" "$n" "$(grep -c HGMMA /tmp/$n.sass)" \
    "$(grep -c 'WARPGROUP.DEPBAR' /tmp/$n.sass)" "$(grep -c 'WARPGROUP.ARRIVE' /tmp/$n.sass)" "$(grep -c ' MOV ' /tmp/$n.sass)" \
    "$(grep -c LDL /tmp/$n.sass)" "$(grep -c STL /tmp/$n.sass)" "$(grep -c '/\*[0-9a-f]*\*/' /tmp/$n.sass)"
done
cp /tmp/convfuse_conv2d_04d_rs_3xtf32_cf_frag_sets1.sass $D/ 2>/dev/null
timeout 90 python3 xk.py verify $A $B $C > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
timeout 100 python3 scripts/check_variant.py $A $B $C $T $H > $D/time1.log 2>&1; echo "time1 rc $?"
grep -E "\(128|timing|^  " $D/time1.log
timeout 80 python3 scripts/check_variant.py $H $T $C $B $A > $D/time2.log 2>&1; echo "time2 rc $?"
grep -A7 "timing" $D/time2.log
for v in $A $C; do for t in memcheck racecheck synccheck; do
  timeout 45 compute-sanitizer --tool $t python3 xk.py san $v > $D/san_$t.log 2>&1; echo "$v $t rc $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done; done
Q=gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
Q=$Q,sm__inst_executed_pipe_tensor_op_gmma.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
for r in long_scoreboard short_scoreboard wait barrier math_pipe_throttle; do Q=$Q,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
timeout 60 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $A $C > $D/ncu.log 2>&1
grep -E "gpu__|sm__|smsp__|dram__|lts__|ncu-sections\]|ERR" $D/ncu.log
date -u
} 2>&1 | tee $D/call.log
