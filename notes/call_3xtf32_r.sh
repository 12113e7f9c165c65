#!/bin/bash
# Call R (thirty-second session): conv2d 04d 3xTF32's epilogue without what slowed CONCAT's pair in the microbenchmark
# (call Q): the stores through shared memory and the bulk-copy engine (CF_3X_BULK_STORE, two stages a ring for its
# buffers), the GELU without MUFU (CF_GELU_ALU), both; against the registered build, its two-stage build, and the
# registered build without its stores (CF_ABL_NOSTORE; with CF_GELU_ALU too). Bitwise (bulk vs two stages), protocol
# and hardening, two timings, racecheck of the bulk build. Needs xk.py (results/device-logs/explore-2026-12-02h/call4/)
# in the root. `mkdir -p $OUT; timeout 580 bash notes/call_3xtf32_r.sh; tar czf $OUT/callR.tgz -C $OUT callR`
D=$OUT/callR; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32
S2=$A@CF_STAGES=2
B=$S2,CF_3X_BULK_STORE
G=$A@CF_GELU_ALU
BG=$B,CF_GELU_ALU
NS=$A@CF_ABL_NOSTORE
GNS=$A@CF_GELU_ALU,CF_ABL_NOSTORE
export PYTHONUNBUFFERED=1
{
date -u
timeout 200 python3 xk.py build $A $S2 $B $G $BG $NS $GNS > $D/build.log 2>&1; echo "build rc $?"; tail -2 $D/build.log
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $S2 $B > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -2 $D/bitwise.log
timeout 120 python3 xk.py verify $B $G $BG > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "\[verify\]|FAIL" $D/verify.log | cut -c1-200
date -u
timeout 170 python3 scripts/check_variant.py $A $S2 $B $G $BG $NS $GNS > $D/time1.log 2>&1; echo "time1 rc $?"; grep -A10 "timing" $D/time1.log
timeout 100 python3 scripts/check_variant.py $BG $G $B $A > $D/time2.log 2>&1; echo "time2 rc $?"; grep -A7 "timing" $D/time2.log
date -u
XK_SHAPES="1,64,21,92;2,64,10,176" timeout 80 compute-sanitizer --tool racecheck python3 xk.py san $B > $D/san.log 2>&1
echo "racecheck rc $?"; tail -3 $D/san.log | cut -c1-300
date -u
} 2>&1 | tee $D/call.log
