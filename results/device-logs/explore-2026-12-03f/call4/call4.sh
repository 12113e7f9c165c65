#!/bin/bash
# Twenty-seventh session, call 4 (the session's last device-seconds): conv2d 04d's parts today. The registered build
# beside itself without the epilogue's math (CF_ABL_NOEPI) and without its stores (CF_ABL_NOSTORE), and without the
# math on two stages at four and five rows: one timing run in one process (ablations are timed only).
D=$OUT/call4; mkdir -p $D; cp "$0" $D/
B=conv2d:04d_rs_tf32
export PYTHONUNBUFFERED=1
{
date -u
timeout 100 python3 xk.py build $B $B@CF_ABL_NOEPI $B@CF_ABL_NOSTORE $B@CF_STAGES=2,CF_ABL_NOEPI $B@CF_ROWS=5,CF_PITCH=72,CF_STAGES=2,CF_SET_CARRY,CF_ABL_NOEPI > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 60 python3 scripts/check_variant.py $B $B@CF_ABL_NOEPI $B@CF_ABL_NOSTORE $B@CF_STAGES=2,CF_ABL_NOEPI $B@CF_ROWS=5,CF_PITCH=72,CF_STAGES=2,CF_SET_CARRY,CF_ABL_NOEPI 2>&1 | grep -A8 "timing, median"
date -u
} 2>&1 | tee $D/call.log
