#!/bin/bash
# Call O (thirty-first session): the epilogue warpgroup's build with its epilogue's math off and with math and stores
# off, against itself and the registered build; one timing (the device-seconds left). From the root:
# `mkdir -p $OUT; timeout 200 bash notes/call_3xtf32_o.sh`
D=$OUT/callO; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32
E=$A@CF_3X_EPI_WG,CF_STAGES=2,-CF_3X_SETS=3
export PYTHONUNBUFFERED=1
{ date -u
timeout 170 python3 scripts/check_variant.py $A $E $E,CF_ABL_RAWEPI $E,CF_ABL_NOEPI > $D/time1.log 2>&1; echo "time1 rc $?"
grep -E "verify\]|FAIL|timing" -A6 $D/time1.log | tail -12
date -u; } 2>&1 | tee $D/call.log
