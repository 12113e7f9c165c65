#!/bin/bash
# Thirtieth session, call I: the wgmma rate microbenchmark, every case again; A loaded before each group of 9, 18, 27
# and on three register sets (call H: groups of 9, two sets, N = 32 at 78 %).
# Run from the root: `mkdir -p $OUT; timeout 240 bash notes/call_wgmma_rate_i.sh; tar czf $OUT/callI.tgz -C $OUT callI`.
D=$OUT/callI; mkdir -p $D; cp "$0" $D/
export PYTHONUNBUFFERED=1
{
date -u
timeout 200 python3 scripts/wgmma_rate.py $D/wgmma_rate.json > $D/rate.log 2>&1; echo "rate rc $?"; tail -18 $D/rate.log
date -u
} 2>&1 | tee $D/call.log
