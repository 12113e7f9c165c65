# The twenty-seventh session's record (2026-12-03 ~16:49-16:57 UTC, commit 8cfbcd3: CF_GROUP_DEFER registered for
# conv3d 04b TF32), from the repo root on the device (462 s of wall time):
mkdir -p $OUT; date -u; timeout 580 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack 2>&1 | tail -45; date -u
