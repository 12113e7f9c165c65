#!/bin/bash
# Call R (thirty-second session): conv2d 04d 3xTF32's epilogue without what slowed CONCAT's pair in the microbenchmark
# (call Q): the stores through shared memory and the bulk-copy engine (CF_3X_BULK_STORE, two stages a ring for its
# buffers), the GELU without MUFU (CF_GELU_ALU), both; against the registered build, its two-stage build, and the
# registered build without its stores (CF_ABL_NOSTORE; with CF_GELU_ALU too). Verified and timed in one process, then
# bitwise (bulk vs two stages); lean, so that a record run fits the device-seconds left after it (a registered change
# gets the record's hardening and sanitizers). `mkdir -p $OUT; timeout 400 bash notes/call_3xtf32_r.sh; tar czf
# $OUT/callR.tgz -C $OUT callR`
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
timeout 260 python3 scripts/check_variant.py $A $S2 $B $G $BG $NS $GNS > $D/time1.log 2>&1; echo "time1 rc $?"
grep -E "rel_l2" $D/time1.log | cut -c1-160 | awk '{print substr($0, length($0)-95)}'; grep -A10 "timing" $D/time1.log
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $S2 $B > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -2 $D/bitwise.log
date -u
} 2>&1 | tee $D/call.log
