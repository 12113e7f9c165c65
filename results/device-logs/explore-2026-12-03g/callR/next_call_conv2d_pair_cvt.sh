#!/bin/bash
# Twenty-eighth session, call R (its last device-seconds): conv2d 04d's registered pixel pairs against each use converted
# on its own (CF_PAIR_CVT). Copy results/device-logs/explore-2026-12-02h/call4/xk.py to the repo root for the call;
# run from the root as `mkdir -p $OUT; timeout 150 bash notes/next_call_conv2d_pair_cvt.sh`.
D=$OUT/callR; mkdir -p $D; cp "$0" $D/
B=conv2d:04d_rs_tf32; C=$B@CF_PAIR_CVT
export PYTHONUNBUFFERED=1
{
date -u
timeout 80 python3 xk.py build $B $C > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
for so in build/convfuse_*/*.so; do
  case $so in *04d_rs_tf32*) ;; *) continue ;; esac
  n=$(basename $so .so); cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  printf "[sass] %-50s MOV %4s F2FP %4s LDS.64 %4s HGMMA %4s STG.64 %4s LDL %s total %s\n" "$n" "$(grep -c ' MOV ' /tmp/$n.sass)" \
    "$(grep -c F2FP /tmp/$n.sass)" "$(grep -c 'LDS.64' /tmp/$n.sass)" "$(grep -c HGMMA /tmp/$n.sass)" \
    "$(grep -c 'STG.E.EF.64' /tmp/$n.sass)" "$(grep -c LDL /tmp/$n.sass)" "$(grep -c '/\*[0-9a-f]*\*/' /tmp/$n.sass)"
done
timeout 45 python3 scripts/check_variant.py $B $C 2>&1 | grep -A4 "timing, median"
timeout 30 python3 scripts/check_bitwise.py --deadline 10 $B $C > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -1 $D/bitwise.log
timeout 40 python3 scripts/check_variant.py $C $B 2>&1 | grep -A4 "timing, median"
date -u
} 2>&1 | tee $D/call.log
