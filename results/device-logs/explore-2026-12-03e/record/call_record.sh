# The twenty-sixth session's record (2026-12-03 ~15:05-15:10 UTC, commit db02e41: CF_BOX_ROWMAP registered for conv3d
# 04b TF32), from the repo root on the device (297 s of wall time):
mkdir -p $OUT; timeout 580 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack 2>&1 | tail -45
