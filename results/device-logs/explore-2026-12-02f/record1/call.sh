#!/bin/bash
# Session record (untracked): a bitwise gate for FP16's new registration first, then the full record.
mkdir -p $OUT; date > $OUT/rec_start.txt
T=conv3d:04b_wgmma_fp16
timeout 100 python3 scripts/check_bitwise.py --deadline 30 $T@-CF_XWIN,-CF_XWIN_LATE,-CF_XWIN_W1,-CF_GROUP_DOUBLE,-CF_GROUP_STORE $T > $OUT/gate_bitwise.log 2>&1; rc=$?
grep -c equal $OUT/gate_bitwise.log; tail -1 $OUT/gate_bitwise.log
if [ $rc -ne 0 ]; then
  echo "GATE FAILED ($rc): no record"; grep -iE "DIFFER|error" $OUT/gate_bitwise.log | head
  cd $OUT && tar czf logs.tgz gate_bitwise.log rec_start.txt; exit 1
fi
date >> $OUT/rec_start.txt
timeout 470 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack
date >> $OUT/rec_start.txt 2>/dev/null; cat $OUT/rec_start.txt 2>/dev/null
