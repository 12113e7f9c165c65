#!/bin/bash
# Twenty-ninth session, call A: conv2d 04d in 3xTF32 (04d_rs_3xtf32) built, verified (protocol + Inf/NaN), timed against
# eager, torch.compile, the TF32 04d, 04c 3xFP16 and 04_mma_3xtf32 (two processes, orders reversed), sanitized, ncu.
# Run from the root with xk.py copied there: `mkdir -p $OUT; timeout 560 bash notes/call_3xtf32_a.sh`.
D=$OUT/callA; mkdir -p $D; cp "$0" $D/
S=conv2d:04d_rs_3xtf32; F=$S@CF_GELU_FAST; S2=$S@CF_STAGES=2
T=conv2d:04d_rs_tf32; H=conv2d:04c_ws_3xfp16; M=conv2d:04_mma_3xtf32
export PYTHONUNBUFFERED=1
{
date -u
timeout 150 python3 xk.py build $S $F $S2 $T $H $M > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
for so in build/convfuse_*/*.so; do
  case $so in *04d_rs*) ;; *) continue ;; esac
  n=$(basename $so .so); cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  printf "[sass] %-60s HGMMA %4s LDS.64 %4s MOV %4s LDL %s STL %s total %s\n" "$n" "$(grep -c HGMMA /tmp/$n.sass)" \
    "$(grep -c 'LDS.64' /tmp/$n.sass)" "$(grep -c ' MOV ' /tmp/$n.sass)" "$(grep -c LDL /tmp/$n.sass)" \
    "$(grep -c STL /tmp/$n.sass)" "$(grep -c '/\*[0-9a-f]*\*/' /tmp/$n.sass)"
done
timeout 70 python3 xk.py verify $S $F > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
timeout 100 python3 scripts/check_variant.py $S $F $S2 $T $H $M > $D/time1.log 2>&1; echo "time1 rc $?"
grep -E "\(128|timing|^  " $D/time1.log
timeout 80 python3 scripts/check_variant.py $M $H $T $S2 $F $S > $D/time2.log 2>&1; echo "time2 rc $?"
grep -A8 "timing" $D/time2.log
for t in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $t python3 xk.py san $S > $D/san_$t.log 2>&1; echo "$t rc $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -1
done
Q=gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
Q=$Q,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,smsp__inst_executed_op_shared_ld.sum
for r in long_scoreboard short_scoreboard wait barrier math_pipe_throttle; do Q=$Q,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
timeout 60 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $S $T > $D/ncu.log 2>&1
grep -E "gpu__|sm__|smsp__|dram__|lts__|ncu-sections\]|ERR" $D/ncu.log
date -u
} 2>&1 | tee $D/call.log
