#!/bin/bash
# Call L (thirty-first session): conv2d 04d 3xTF32 candidates — the next row's loads under the current group
# (CF_3X_ROW_PREFETCH), the epilogue in a third warpgroup (CF_3X_EPI_WG, with two stages and two fragment sets), both;
# SASS, bitwise against the registered build, verify + hardening, two timings, sanitizers for the combined one, ncu pipe.
# Run from the root with results/device-logs/explore-2026-12-02h/call4/xk.py copied there:
# `mkdir -p $OUT; timeout 560 bash notes/call_3xtf32_l.sh; tar czf $OUT/callL.tgz -C $OUT callL`
D=$OUT/callL; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32
P=$A@CF_3X_ROW_PREFETCH
E=$A@CF_3X_EPI_WG,CF_STAGES=2,-CF_3X_SETS=3
B=$A@CF_3X_EPI_WG,CF_STAGES=2,-CF_3X_SETS=3,CF_3X_ROW_PREFETCH
T=$A@-CF_3X_SETS=3
S="$A $P $E $B $T"; R="$T $B $E $P $A"
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
timeout 90 python3 scripts/check_bitwise.py $A $P $E $B > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -4 $D/bitwise.log
timeout 90 python3 xk.py verify $P $E $B > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
timeout 90 python3 scripts/check_variant.py $S > $D/time1.log 2>&1; echo "time1 rc $?"; grep -A7 "timing" $D/time1.log
timeout 90 python3 scripts/check_variant.py $R > $D/time2.log 2>&1; echo "time2 rc $?"; grep -A7 "timing" $D/time2.log
for t in memcheck racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $t python3 xk.py san $B > $D/san.tmp 2>&1; echo "$B $t rc $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san.tmp | tail -1; { echo "=== $B $t"; cat $D/san.tmp; } >> $D/san.log
done; rm -f $D/san.tmp
Q=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
Q=$Q,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_gmma.sum
for r in long_scoreboard short_scoreboard wait barrier; do Q=$Q,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
timeout 90 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $S > $D/ncu.log 2>&1
grep -E "gpu__time|pipe_tensor_cycles|ncu-sections\]|ERR" $D/ncu.log
date -u
} 2>&1 | tee $D/call.log
