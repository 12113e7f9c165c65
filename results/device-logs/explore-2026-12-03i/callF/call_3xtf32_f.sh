#!/bin/bash
# Thirtieth session, call F: conv2d 04d 3xTF32 at three rows with CONCAT and three sets (call E's fastest), and the same
# with the erf polynomial (CF_GELU_FAST, the TF32 build's epilogue; |erf error| <= 1.5e-7), against the registered four
# rows: verify, two timing processes, ncu. Run from the root with xk.py copied there:
# `mkdir -p $OUT; timeout 300 bash notes/call_3xtf32_f.sh; tar czf $OUT/callF.tgz -C $OUT callF`.
D=$OUT/callF; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32; E=$A@CF_ROWS=3,CF_PITCH=72,CF_3X_CONCAT,CF_3X_SETS=3; F=$E,CF_GELU_FAST
export PYTHONUNBUFFERED=1
{
date -u
timeout 90 python3 xk.py build $A $E $F > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
timeout 60 python3 xk.py verify $E $F > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
timeout 60 python3 scripts/check_variant.py $A $E $F > $D/time1.log 2>&1; echo "time1 rc $?"; grep -A5 "timing" $D/time1.log
timeout 60 python3 scripts/check_variant.py $F $E $A > $D/time2.log 2>&1; echo "time2 rc $?"; grep -A5 "timing" $D/time2.log
Q=gpu__time_duration.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,dram__bytes_read.sum,sm__cycles_elapsed.avg.per_second
for r in long_scoreboard short_scoreboard wait barrier; do Q=$Q,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
timeout 50 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $A $F > $D/ncu.log 2>&1
grep -E "gpu__|sm__|smsp__|dram__|ncu-sections\]|ERR" $D/ncu.log
date -u
} 2>&1 | tee $D/call.log
