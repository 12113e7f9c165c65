#!/bin/bash
# Prepared by the twenty-ninth session (its last 239 device-seconds were too few to start a machine): CF_3X_CONCAT at
# three rows against three rows without it and the registered four rows: verify, one timing process (a second and the
# sanitizers if it wins). Afterwards move this script beside its logs. Run from the root with xk.py copied there:
# `mkdir -p $OUT; timeout 150 bash notes/call_3xtf32_d.sh`.
D=$OUT/callD; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32; B=$A@CF_ROWS=3,CF_PITCH=72; C=$B,CF_3X_CONCAT
export PYTHONUNBUFFERED=1
{
date -u
timeout 60 python3 xk.py build $A $B $C > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 25 python3 xk.py verify $C > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
timeout 50 python3 scripts/check_variant.py $C $B $A > $D/time1.log 2>&1; echo "time1 rc $?"
grep -E "\(128|timing|^  " $D/time1.log
date -u
} 2>&1 | tee $D/call.log
