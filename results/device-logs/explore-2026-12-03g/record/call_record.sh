# The twenty-eighth session's record (2026-12-03 ~19:45-19:54 UTC, commit a635917: CF_PIXEL_PAIRS registered for
# conv2d 04d TF32), from the repo root on the device (514 s of wall time with the bitwise check after it):
mkdir -p $OUT; timeout 505 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack 2>&1 | tail -40
timeout 75 python3 scripts/check_bitwise.py --deadline 20 "conv2d:04d_rs_tf32@-CF_PIXEL_PAIRS" conv2d:04d_rs_tf32 > $OUT/bitwise_pairs.log 2>&1
