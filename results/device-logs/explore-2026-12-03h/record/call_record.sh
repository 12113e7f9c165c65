# The twenty-ninth session's record (2026-12-03 from ~21:45 UTC: conv2d 04d_rs_3xtf32 registered, four rows in tap-column
# groups), from the repo root on the device:
mkdir -p $OUT; timeout 590 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack 2>&1 | tail -40
