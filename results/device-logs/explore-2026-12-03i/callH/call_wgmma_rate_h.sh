#!/bin/bash
# Thirtieth session, call H: the wgmma rate microbenchmark with two cases more — A loaded from shared memory and
# converted into one of two register sets before each group (04d's pattern without its splits, epilogue and copies).
# Run from the root: `mkdir -p $OUT; timeout 240 bash notes/call_wgmma_rate_h.sh; tar czf $OUT/callH.tgz -C $OUT callH`.
D=$OUT/callH; mkdir -p $D; cp "$0" $D/
export PYTHONUNBUFFERED=1
{
date -u
timeout 200 python3 scripts/wgmma_rate.py $D/wgmma_rate.json > $D/rate.log 2>&1; echo "rate rc $?"; tail -14 $D/rate.log
date -u
} 2>&1 | tee $D/call.log
