# The twenty-fifth session's record (2026-12-03 13:12-13:18 UTC, commit 36de327), from the repo root on the device:
mkdir -p $OUT; date -u > $OUT/rec_times.txt; timeout 560 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack 2>&1 | tail -45; date -u >> $OUT/rec_times.txt; cat $OUT/rec_times.txt; ls $OUT
