#!/bin/bash
# Prepared by the thirtieth session (its last device-seconds could not start a machine). Two parts:
# (1) the wgmma rate microbenchmark with its cases 11-13 (A loaded before each group of 18 and 27 m64n32k8, and of 9
#     on three register sets; call H had groups of 9 on two sets at 78 %);
# (2) conv2d 04d 3xTF32 with two tap columns a group (CF_3X_PAIRS, on two sets: the registered build has three sets of
#     one tap column) against the registered build: SASS, verify, two timings, the three sanitizers, ncu's tensor pipe.
# Run from the root with results/device-logs/explore-2026-12-02h/call4/xk.py copied there:
# `mkdir -p $OUT; timeout 560 bash notes/call_3xtf32_j.sh; tar czf $OUT/callJ.tgz -C $OUT callJ` (the tool returns 8
# files); afterwards move this script beside its logs and remove xk.py.
D=$OUT/callJ; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32; P=$A@-CF_3X_SETS=3,CF_3X_PAIRS
export PYTHONUNBUFFERED=1
{
date -u
timeout 150 python3 scripts/wgmma_rate.py $D/wgmma_rate.json > $D/rate.log 2>&1; echo "rate rc $?"; grep "wgmma_rate\]" $D/rate.log
timeout 90 python3 xk.py build $A $P > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
for so in build/convfuse_*/*.so; do
  case $so in *04d_rs_3x*) ;; *) continue ;; esac
  n=$(basename $so .so); cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  printf "[sass] %-62s HGMMA %4s DEPBAR %3s MOV %4s LDS.64 %4s LDL %s STL %s total %s\n" "$n" "$(grep -c HGMMA /tmp/$n.sass)" \
    "$(grep -c 'WARPGROUP.DEPBAR' /tmp/$n.sass)" "$(grep -c ' MOV ' /tmp/$n.sass)" "$(grep -c 'LDS.64' /tmp/$n.sass)" \
    "$(grep -c LDL /tmp/$n.sass)" "$(grep -c STL /tmp/$n.sass)" "$(grep -c '/\*[0-9a-f]*\*/' /tmp/$n.sass)"
done
timeout 40 python3 xk.py verify $P > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
timeout 50 python3 scripts/check_variant.py $A $P > $D/time1.log 2>&1; echo "time1 rc $?"; grep -A4 "timing" $D/time1.log
timeout 50 python3 scripts/check_variant.py $P $A > $D/time2.log 2>&1; echo "time2 rc $?"; grep -A4 "timing" $D/time2.log
for t in memcheck racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $t python3 xk.py san $P > $D/san.tmp 2>&1; echo "$P $t rc $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san.tmp | tail -1; { echo "=== $P $t"; cat $D/san.tmp; } >> $D/san.log
done; rm -f $D/san.tmp
Q=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
Q=$Q,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_gmma.sum
for r in long_scoreboard short_scoreboard wait barrier; do Q=$Q,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
timeout 50 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $A $P > $D/ncu.log 2>&1
grep -E "gpu__|sm__|smsp__|ncu-sections\]|ERR" $D/ncu.log
date -u
} 2>&1 | tee $D/call.log
