# The thirtieth session's record (2026-12-03 from ~22:55 UTC: conv2d 04d_rs_3xtf32 registered as three rows, CONCAT,
# three fragment sets, the erf polynomial), from the repo root on the device:
mkdir -p $OUT; timeout 590 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack 2>&1 | tail -40
