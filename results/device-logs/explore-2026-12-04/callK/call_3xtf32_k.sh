#!/bin/bash
# Call K (thirty-first session): conv2d 04d 3xTF32, where the tensor pipe's idle third goes — ablations of the registered
# build (timed only) and CF_STAGES=2 (verified), two timings each beside it, ncu's tensor pipe for each, the registered
# build's SASS. Run from the root with results/device-logs/explore-2026-12-02h/call4/xk.py copied there:
# `mkdir -p $OUT; timeout 560 bash notes/call_3xtf32_k.sh; tar czf $OUT/callK.tgz -C $OUT callK`; afterwards move this
# script beside its logs and remove xk.py.
D=$OUT/callK; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32
S="$A $A@CF_ABL_RAWEPI $A@CF_ABL_NOEPI $A@CF_ABL_NOLDS $A@CF_ABL_NOLDS,CF_ABL_NOSPLIT $A@CF_ABL_NOLDS,CF_ABL_NOSPLIT,CF_ABL_NOEPI $A@CF_STAGES=2"
R=$(echo $S | tr ' ' '\n' | tac | tr '\n' ' ')
export PYTHONUNBUFFERED=1
{
date -u
timeout 120 python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
for so in build/convfuse_*/*.so; do
  case $so in *04d_rs_3x*) ;; *) continue ;; esac
  n=$(basename $so .so); cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  printf "[sass] %-62s HGMMA %4s DEPBAR %3s MOV %4s LDS.64 %4s LDL %s STL %s total %s\n" "$n" "$(grep -c HGMMA /tmp/$n.sass)" \
    "$(grep -c 'WARPGROUP.DEPBAR' /tmp/$n.sass)" "$(grep -c ' MOV ' /tmp/$n.sass)" "$(grep -c 'LDS.64' /tmp/$n.sass)" \
    "$(grep -c LDL /tmp/$n.sass)" "$(grep -c STL /tmp/$n.sass)" "$(grep -c '/\*[0-9a-f]*\*/' /tmp/$n.sass)"
done
gzip -c /tmp/convfuse_conv2d_04d_rs_3xtf32.sass > $D/registered.sass.gz
timeout 60 python3 xk.py verify $A@CF_STAGES=2 > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
timeout 100 python3 scripts/check_variant.py $S > $D/time1.log 2>&1; echo "time1 rc $?"; grep -A9 "timing" $D/time1.log
timeout 100 python3 scripts/check_variant.py $R > $D/time2.log 2>&1; echo "time2 rc $?"; grep -A9 "timing" $D/time2.log
Q=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
Q=$Q,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_gmma.sum
for r in long_scoreboard short_scoreboard wait barrier; do Q=$Q,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
timeout 120 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $S > $D/ncu.log 2>&1
grep -E "gpu__time|pipe_tensor_cycles|ncu-sections\]|ERR" $D/ncu.log
date -u
} 2>&1 | tee $D/call.log
