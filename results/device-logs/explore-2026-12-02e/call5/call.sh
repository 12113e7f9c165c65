#!/bin/bash
# Session call 5 (untracked): synccheck on CF_XWIN_LATE (one-thread window inits) on a window shape and a fallback shape
# apart; CF_XWIN_W1 (w_hi only) and CF_GROUP_DOUBLE (two sets of group boxes) bitwise and timed twice.
D=$OUT/call5; mkdir -p $D; date > $D/start.txt
F=conv3d:04b_wgmma_fp16; L=CF_GROUP_STORE,CF_XWIN,CF_XWIN_LATE; W=$L,CF_XWIN_W1; B=$W,CF_GROUP_DOUBLE
timeout 120 python3 xk.py build $F $F@$L $F@$W $F@$B > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $F $F@$L $F@$W $F@$B > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
XK_SHAPES="2,8,6,10,64" timeout 45 compute-sanitizer --tool synccheck python3 xk.py san $F@$L > $D/san_sync_window.log 2>&1; echo "rc $?" >> $D/san_sync_window.log
XK_SHAPES="1,8,7,39,55" timeout 45 compute-sanitizer --tool synccheck python3 xk.py san $F@$L > $D/san_sync_fallback.log 2>&1; echo "rc $?" >> $D/san_sync_fallback.log
XK_SHAPES="2,8,6,10,64" timeout 45 compute-sanitizer --tool synccheck python3 xk.py san $F@$B > $D/san_sync_window_double.log 2>&1; echo "rc $?" >> $D/san_sync_window_double.log
timeout 65 python3 scripts/check_variant.py $F $F@$L $F@$W $F@$B > $D/time.log 2>&1
timeout 65 python3 scripts/check_variant.py $F@$B $F@$W $F@$L $F > $D/time_2.log 2>&1
date > $D/end.txt
cd $OUT && tar czf call5.tgz call5
tail -2 $D/bitwise.log
for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|Warning|rc ' $f | tr '\n' ' ')"; done
grep -h -A7 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
