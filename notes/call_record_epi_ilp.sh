#!/bin/bash
# The record that registers CF_EPI_ILP for conv2d 04d TF32 and 3xTF32 (measured by the thirty-second session,
# explore-2026-12-04b/callS: bitwise equal, 2.9 % and 1.6 % faster in one process). That session's record call was cut
# off (the device machine stopped answering and lending was paused). Before the call, on the CPU machine:
#   git apply notes/patches/conv2d_04d_register_epi_ilp.patch && make test && git commit -am "Register CF_EPI_ILP ..."
# and, if call U (results/device-logs/explore-2026-12-05/callU/call_wino_u.sh) verified 04e 3xTF32 faster than torch.compile, first
#   git apply notes/patches/conv2d_04e_register.patch   (then its comment's figures and the winning build's defines)
# (registry: CF_EPI_ILP in both builds' defines, the 04d candidates spelled against it; the test of the candidates'
# spelling), then from the repo root on the device, as the thirty-first session's record call:
# first the wgmma rate microbenchmark with its cases 32-33 (fresh fragments before groups of three and six m64n64k8, the
# 64-Cout design's groups: notes/kernel_log.md), ~60 s, into $OUT/callT (the pack stage takes $OUT's subdirectories):
mkdir -p $OUT/callT; (timeout 100 python3 scripts/wgmma_rate.py $OUT/callT/wgmma_rate.json > $OUT/callT/rate.log 2>&1; echo "rate rc $?"; grep "wgmma_rate\]" $OUT/callT/rate.log | tail -3)
timeout 480 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack 2>&1 | tail -32
# Afterwards: the record procedure in notes/kernel_log.md's earlier entries (old record archived beside this session's
# logs, a test of the new record, README goals table and device-logs list, notebook 04, the kernel header), and
# scripts/same_machine_code.py against the record's commit once the kernels change again.
