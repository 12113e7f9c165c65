#!/bin/bash
# The record call of 2026-12-05 (thirty-fourth session), after call U, with notes/patches/conv2d_04d_register_epi_ilp.patch
# and notes/patches/conv2d_04e_register.patch applied (04e_wino_3xtf32 registered with CF_WINO_DESC_UNIFORM):
timeout 575 bash scripts/device_session.sh env gputest sanitize harden build bench profile sass pack 2>&1 | tail -40
