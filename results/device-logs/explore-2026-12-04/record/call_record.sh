# The thirty-first session's record (2026-12-04 from ~02:16 UTC: conv2d 04d_rs_3xtf32 registered with the row prefetch,
# CF_3X_ROW_PREFETCH), from the repo root on the device, after the microbenchmark (callM/) in the same call:
mkdir -p $OUT/callM; (timeout 100 python3 scripts/wgmma_rate.py $OUT/callM/wgmma_rate.json > $OUT/callM/rate.log 2>&1; echo "rate rc $?"; grep "wgmma_rate\]" $OUT/callM/rate.log | tail -5); timeout 480 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack 2>&1 | tail -32
