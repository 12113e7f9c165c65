#!/bin/bash
# Call S (thirty-second session): conv2d 04d's pixel-pair epilogue a row (3xTF32) or half a row (TF32) of values at a
# time, then their stores (CF_EPI_ILP), against the registered builds: verified and timed in one process, then bitwise
# against them. `mkdir -p $OUT; timeout 330 bash notes/call_epi_ilp_s.sh; tar czf $OUT/callS.tgz -C $OUT callS`
D=$OUT/callS; mkdir -p $D; cp "$0" $D/
X=conv2d:04d_rs_3xtf32
T=conv2d:04d_rs_tf32
export PYTHONUNBUFFERED=1
{
date -u
timeout 200 python3 scripts/check_variant.py $X $X@CF_EPI_ILP $T $T@CF_EPI_ILP > $D/time1.log 2>&1; echo "time1 rc $?"
grep -E "rel_l2" $D/time1.log | awk '{print substr($0, length($0)-100)}'; grep -A6 "timing" $D/time1.log
timeout 60 python3 scripts/check_bitwise.py --deadline 30 $X $X@CF_EPI_ILP > $D/bitwise_3x.log 2>&1; echo "bitwise 3x rc $?"; tail -1 $D/bitwise_3x.log
timeout 60 python3 scripts/check_bitwise.py --deadline 30 $T $T@CF_EPI_ILP > $D/bitwise_tf32.log 2>&1; echo "bitwise tf32 rc $?"; tail -1 $D/bitwise_tf32.log
date -u
} 2>&1 | tee $D/call.log
