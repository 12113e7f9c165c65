#!/bin/bash
# Session call 4 (untracked): the order of CF_XWIN's round (staging after the stores: CF_XWIN_LATE; no MMA turns:
# CF_XWIN_NOTURN): bitwise against fp16, timed twice beside fp16 with and without the group stores and the window.
D=$OUT/call4; mkdir -p $D; date > $D/start.txt
F=conv3d:04b_wgmma_fp16; G=CF_GROUP_STORE; X=CF_GROUP_STORE,CF_XWIN
L=$X,CF_XWIN_LATE; N=$X,CF_XWIN_NOTURN; B=$X,CF_XWIN_LATE,CF_XWIN_NOTURN
timeout 120 python3 xk.py build $F $F@$G $F@$X $F@$L $F@$N $F@$B > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 100 python3 scripts/check_bitwise.py --deadline 30 $F $F@$L $F@$N $F@$B > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
timeout 75 python3 scripts/check_variant.py $F $F@$G $F@$X $F@$L $F@$N $F@$B > $D/time.log 2>&1
timeout 75 python3 scripts/check_variant.py $F@$B $F@$N $F@$L $F@$X $F@$G $F > $D/time_2.log 2>&1
date > $D/end.txt
cd $OUT && tar czf call4.tgz call4
tail -2 $D/bitwise.log
grep -h -A9 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
