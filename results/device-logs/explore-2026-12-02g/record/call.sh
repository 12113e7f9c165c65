#!/bin/bash
# Session record (untracked): a bitwise gate for conv2d 04c's registration (against the builds registered before),
# then the full record.
mkdir -p $OUT; date > $OUT/rec_start.txt
T=conv2d:04c_ws_tf32; F=conv2d:04c_ws_fp16
timeout 60 python3 scripts/check_bitwise.py --deadline 30 $T@-CF_SHARED_RING,-CF_BULK_STORE $T > $OUT/gate_tf32.log 2>&1; r1=$?
timeout 50 python3 scripts/check_bitwise.py --deadline 30 $F@-CF_BULK_STORE $F > $OUT/gate_fp16.log 2>&1; r2=$?
tail -n 1 $OUT/gate_tf32.log $OUT/gate_fp16.log
if [ $r1 -ne 0 ] || [ $r2 -ne 0 ]; then
  echo "GATE FAILED ($r1 $r2): no record"; cd $OUT && tar czf logs.tgz gate_*.log rec_start.txt; exit 1
fi
date >> $OUT/rec_start.txt
timeout 480 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack
date >> $OUT/rec_start.txt; cat $OUT/rec_start.txt
