"""The explore calls' logs (scripts/check_variant.py output) as tables: candidate and ablation builds of the
04b kernels, verified and timed next to the registered kernel, eager and torch.compile in ONE process.

These builds are not in the results file (they are not variants of the study); their logs are committed
under results/device-logs/ and read here, so that the notebooks quote measured numbers, not copies. Times
are comparable within one log's timing block only (one interleaved run); across logs, compare ratios.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from . import problems as P, profile as NCU, registry as R

LOG_DIR = R.ROOT / "results" / "device-logs" / "explore-2026-12-01"
# H200, 2026-12-01: (1) the 04b candidates of 2026-11-30 and the ablations, (2) two candidates written after
# (1), (3) conv3d's CF_OUT_SMEM with cheaper addressing, (4) three one-line switches. (3) and (4) ran
# versions of the kernel files that are not committed (they lost; their diffs are in notes/patches/).
# Log 1 ran before conv2d's 04b_wgmma_tf32 was built with -DCF_GELU_FAST: its conv2d builds use erff.
class Run(NamedTuple):
    """The `nth` (from 0) timing run of a log that holds several, a call's printed log (call.log) where its own
    check_variant logs did not come back from the device."""
    log: Path
    nth: int


def twice(log: Path, call: str, what: str) -> dict:
    """A call that timed its builds twice in one process, the second run in reverse order: its two session-table
    entries, `call` and `call (again)`, read from the printed log."""
    return {call: (Run(log, 0), what), f"{call} (again)": (Run(log, 1), "the same builds, a second run in reverse order")}


LOGS = {"explore-1": LOG_DIR / "explore.log", "explore-2": LOG_DIR / "explore2.log",
        "explore-3": LOG_DIR / "explore3.log", "explore-4": LOG_DIR / "explore4.log"}

# conv2d step 04c (kernels/conv2d/04c_warp_specialized_wgmma.cu), H200, 2026-12-01 04:4x-05:0x UTC: each log
# ran one version of the kernel file as registered then, next to eager, torch.compile and 04b in one process.
LOG_DIR_04C = R.ROOT / "results" / "device-logs" / "explore-2026-12-01b"
VERSIONS_04C = {
    "04c-1": (LOG_DIR_04C / "explore5.log", "producer loads into registers, 2 pixels (16 loads) in flight per "
              "thread (CF_PUNROLL: pixels in flight), 3-stage ring"),
    "04c-2": (LOG_DIR_04C / "explore6.log", "producer copies each chunk with cp.async into one raw buffer per "
              "consumer, then stages it into a 2-stage ring"),
    "04c-3": (LOG_DIR_04C / "explore7.log", "04c-2 with a half-chunk pipeline (one half in flight while the "
              "other is staged; 4 producer barriers per chunk instead of 2): not kept"),
    "04c-4": (LOG_DIR_04C / "explore8.log", "the committed file (04c-2 + the CF_LD8 switch), after the record; "
              "CF_LD8: 8-byte copies of pixel pairs"),
    "04c-5": (R.ROOT / "results" / "device-logs" / "explore-2026-12-01c" / "explore_producers.log",
              "8-byte copies by default; TF32 with two producer warpgroups (CF_PRODUCERS=2, 48 / 208 registers), "
              "then made the TF32 build's default"),
}
# H200, 2026-12-01 from 10:21 UTC (the day's third session): the FP16-operand builds (CF_1XF16, registered as
# 04c_ws_fp16 and conv3d's 04b_wgmma_fp16) and conv3d's single-pixel staging. Calls 1-3 and 5-6 ran kernel files
# that were then changed (the headers of kernels/conv2d/04c_* and kernels/conv3d/04b_* say how); the committed
# files are the record's of 10:52 UTC.
LOG_DIR_D = R.ROOT / "results" / "device-logs" / "explore-2026-12-01d"
VERSIONS_04C.update({
    "04c-6": (LOG_DIR_D / "call1" / "explore.log", "CF_1XF16 (FP16 operands, 5 wgmmas per chunk) in 3xFP16's "
              "weight layout with one raw buffer; CF_RNA_ADD (TF32 rounding as an add)"),
    "04c-7": (LOG_DIR_D / "call3" / "explore.log", "FP16: w_hi-only weights (74 KB), CF_RAWS raw buffers per "
              "consumer (a producer loop that computed the tile coordinates per chunk)"),
    "04c-8": (LOG_DIR_D / "call5" / "explore.log", "FP16: tile coordinates once per tile, three stages, padding "
              "for compute-sanitizer, and copies without the select per channel (not kept)"),
    "04c-9": (LOG_DIR_D / "call6" / "explore.log", "copies without (default then) and with (CF_COPY_SEL) the "
              "select per channel, one process: the select kept"),
    "04c-10": (LOG_DIR_D / "call8" / "explore.log", "after the record, the committed file + notes/patches/"
               "conv2d_04c_fp16_pair_offsets.patch: CF_PIX_OFFSETS, the producer's pixel-pair offsets once per tile"),
})
# H200, 2026-12-01 ~12:2x UTC (the day's fourth session): the committed file of the record of 12:22 UTC with CF_TMA
# still a switch (its default since). The same call timed conv3d with bias and sum in shared memory (no old build
# beside it: compare its ratios with the record of 10:52 UTC).
LOG_DIR_E = R.ROOT / "results" / "device-logs" / "explore-2026-12-01e"
VERSIONS_04C.update({
    "04c-11": (LOG_DIR_E / "explore.log", "CF_PIX_OFFSETS as FP16's default; CF_TMA: one TMA per chunk (a box 16-byte "
               "aligned in global memory, 92-pixel rows) in place of the producer threads' cp.async, in all three builds"),
})
# H200, 2026-12-01 from 13:10 UTC (the day's fifth session): aimed at the TF32 build's waits. CF_CHAN_SMEM,
# CF_TF32_TRUNC and CF_STAGE_UNROLL were switches of that session only (no gain; removed before its record: the
# kernel log says what each did); CF_RAW_CH and CF_SHARED_RING stay (candidates; the shared ring is 3xFP16's default).
LOG_DIR_F = R.ROOT / "results" / "device-logs" / "explore-2026-12-01f"
VERSIONS_04C.update({
    "04c-12": (LOG_DIR_F / "explore_a.log", "the consumers' bias and multiplier in shared memory once per block "
               "(CF_CHAN_SMEM), against the per-tile loads"),
    "04c-13": (LOG_DIR_F / "explore_b.log", "half-chunk raw buffers, three per consumer, as that call's TF32 and "
               "3xFP16 default (the plain builds), against whole-chunk ones (-DCF_RAW_CH=8, the record's structure)"),
    "04c-14": (LOG_DIR_F / "explore_c.log", "TF32 staged without rounding (CF_TF32_TRUNC), a producer thread's three "
               "pixels' loads together (CF_STAGE_UNROLL=3), half-chunk buffers again"),
    "04c-15": (LOG_DIR_F / "explore_d.log", "one ring for both consumers, chunk loops in turn (CF_SHARED_RING)"),
    "04c-16": (LOG_DIR_F / "explore_e.log", "the shared ring as 3xFP16's default (CF_RING_PER_CONSUMER restores the "
               "former), ring depths"),
    "04c-17": (LOG_DIR_F / "explore_f.log", "the shared ring with more raw buffers in flight (CF_RAWS) and fewer stages"),
})
LOGS.update({k: v[0] for k, v in VERSIONS_04C.items()})


def _logs(prefix: str, calls: dict) -> None:
    """Register a session's calls ({call: (log, what it tried)}) in LOGS as "prefix: call"."""
    LOGS.update({f"{prefix}: {k}": path for k, (path, _) in calls.items()})


SANITIZERS = ("memcheck", "racecheck", "synccheck")
_SANITIZER_CLEAN = {"memcheck": "ERROR SUMMARY: 0 errors", "synccheck": "ERROR SUMMARY: 0 errors",
                    "racecheck": "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"}


def sanitizer_logs(call_dir: Path, label: str = "") -> dict:
    """One call's compute-sanitizer logs (san_<tool>.log), keyed "<tool><label>"."""
    return {f"{t}{label}": call_dir / f"san_{t}.log" for t in SANITIZERS}


def sanitizer_verdicts(texts: dict, label: str = "") -> dict:
    """Per tool, whether its log text (keyed as sanitizer_logs keys them) reports no error and no hazard."""
    return {t: _SANITIZER_CLEAN[t] in texts[f"{t}{label}"] for t in SANITIZERS}


def sanitizers_clean(texts: dict, label: str = "") -> bool:
    """Whether every tool's log text (keyed as sanitizer_logs keys them) reports no error and no hazard."""
    return all(sanitizer_verdicts(texts, label).values())


def sanitizers_clean_in_one_log(text: str, builds: int = 1) -> bool:
    """Whether one log that holds all three tools' runs (memcheck, racecheck, synccheck, in any order) on `builds`
    builds reports no error and no hazard: every error summary at 0 (two a build) and racecheck's at 0 hazards (one)."""
    return (text.count(_SANITIZER_CLEAN["memcheck"]) == 2 * builds == text.count("ERROR SUMMARY:")
            and text.count(_SANITIZER_CLEAN["racecheck"]) == builds)


def verify_verdicts(log: Path) -> list[str]:
    """A call log's protocol verdicts, one line a build as xk.py verify prints them ("[verify] conv2d/KEY (PRECISION):
    15/15 pass, worst max_abs ... rel_l2 ...")."""
    return [line for line in Path(log).read_text().splitlines() if line.startswith("[verify]")]


def verdict_rel_l2(line: str) -> float:
    """The worst rel-L2 a verify_verdicts line reports."""
    return float(line.rsplit("rel_l2 ", 1)[1])


SESSION_FORMAT = {"median ms": "{:.3f}", "× its variant in the same call": "{:.3f}", "× torch.compile's time": "{:.3f}",
                  "worst rel-L2": "{:.1e}"}


def session_view(table: pd.DataFrame):
    """A session_table as the notebook shows it: without the calls' descriptions, times to the microsecond."""
    return table.drop(columns="what the call tried").style.format(SESSION_FORMAT)


LOGS.update({"stage-pix": LOG_DIR_D / "call2" / "explore.log"})     # conv3d: single-pixel staging (CF_STAGE_PIX)
# H200, 2026-12-01 06:15 UTC: conv3d's 04b_wgmma_3xfp16 (then new) at 4 and 3 warpgroups, and 04c with 8-byte
# copies as its default, before that session's record.
LOGS["explore-5"] = R.ROOT / "results" / "device-logs" / "explore-2026-12-01c" / "explore.log"
# 06:3x UTC, after the record: 04c TF32 with two accumulator sets taking tiles in turn (CF_PINGPONG; slower, not
# kept: notes/patches/conv2d_04c_pingpong_accumulators.patch).
LOGS["explore-6"] = R.ROOT / "results" / "device-logs" / "explore-2026-12-01c" / "explore_pingpong.log"
# H200, 2026-12-01 from 14:26 UTC (the day's sixth session). conv3d 04b's TF32 build was registered WITHOUT the turns
# (CF_MMA_ORDER) until the record of 14:57 UTC: in these logs `04b_wgmma_tf32` and `04b_wgmma_fp16` are the builds
# without them, and a build "_cf_mma_order" is today's registered one. From the second call on, each candidate was
# also compared bitwise with the default build on 9 shapes (the *_bitwise.log files: 0 differences in every call that
# finished; the first call's comparison did not run, and the lean loop was compared in the fourth, with the turns).
# The script of those comparisons is scripts/check_bitwise.py now (the same shapes: problems.bitwise_shapes).
LOG_DIR_G = R.ROOT / "results" / "device-logs" / "explore-2026-12-01g"
SIXTH = {"lean": (LOG_DIR_G / "call1_conv3d_lean.log", "the loop without its integer overhead (CF_LEAN)"),
         "window": (LOG_DIR_G / "call2_window.log", "a ring of input rows, contiguous ranges of rows (CF_WINDOW)"),
         "window rows": (LOG_DIR_G / "call3_window_rows.log", "the ring in chunks of R rows dealt like tiles"),
         "turns": (LOG_DIR_G / "call4_order.log", "the warpgroups' MMAs in turn (CF_MMA_ORDER)"),
         "turns again": (LOG_DIR_G / "call6_window_order.log", "the turns again, and the ring with the turns")}
_logs("sixth", SIXTH)
LOGS["04c-ablations"] = LOG_DIR_G / "call1_conv2d_04c_ablations.log"
# H200, 2026-12-01 from 16:10 UTC (the seventh session): conv3d 04b's output through the bulk-copy engine. In these
# logs `04b_wgmma_tf32`, `_fp16` and `_3xfp16` are the builds registered then (TF32 and fp16 with the turns, none with
# the bulk store or the lean loop). "_cf_bulk_store" is the first version in the first two calls (lanes 0-15 issue a
# row each) and the second from the third on (lane 0 issues the warp's 16 rows from warp-uniform addresses).
# Each call's call*_bitwise_*.log compares the bulk builds bit for bit with those (0 differences in all), and its
# call*_sanitize_*.log has compute-sanitizer on them (0 errors, 0 hazards).
LOG_DIR_H = R.ROOT / "results" / "device-logs" / "explore-2026-12-01h"
SEVENTH = {"bulk, lanes 0-15 issue": (LOG_DIR_H / "call1_bulk.log", "the output through the bulk-copy engine"),
           "the same, again": (LOG_DIR_H / "call2_bulk.log", "the same builds again (with ncu after)"),
           "bulk, lane 0 issues": (LOG_DIR_H / "call3_bulk2.log", "the copies issued from warp-uniform addresses"),
           "bulk and lean": (LOG_DIR_H / "call4_bulk_lean.log", "the lean loop with the stores off the LSU")}
_logs("seventh", SEVENTH)
# H200, 2026-12-01 from 17:43 UTC (the eighth session): a warp's 16 channel rows in one tensor copy (CF_TMA_STORE). In
# this log `04b_wgmma_tf32`, `_fp16` and `_3xfp16` are the builds of the 16:32 UTC record; call1_bitwise.log compares
# the tensor-copy builds bit for bit with them (0 differences). Its compute-sanitizer step did not run (the helper
# script lacked a main guard for the build's process pool); the record after it sanitized the registered builds.
LOG_DIR_I = R.ROOT / "results" / "device-logs" / "explore-2026-12-01i"
EIGHTH = {"tensor copy": (LOG_DIR_I / "call1_tma.log", "a warp's 16 rows in one tensor copy (CF_TMA_STORE)"),
          # 18:20 UTC, notes/patches/conv3d_04b_tf32_tma_store.patch applied on the device only: the tensor-copy builds
          # without the lean stores (TF32 then spill-free); `04b_wgmma_fp16` here is the patched registered build
          "tensor copy, TF32 spill-free": (LOG_DIR_I / "call5_tf32_tma.log",
                                           "the tensor copy without the lean stores, so TF32 does not spill")}
_logs("eighth", EIGHTH)
# 18:12 UTC: the ablations of the builds of the 17:57 UTC record (TF32: turns, bulk store, lean loop; fp16 the same with
# the tensor copy), with notes/patches/conv3d_04b_ablations_bulk.patch applied on the device only (CF_ABL_NOSTORE ends
# the copy-engine stores after the epilogue's writes to shared memory; CF_ABL_NOLOAD zero-fills in the lean loads)
LOGS["eighth: ablations"] = LOG_DIR_I / "call4_ablations.log"
# H200, 2026-12-01 from 19:27 UTC (the ninth session). In call 1 `04b_wgmma_tf32` and `_fp16` are the builds of the
# 19:46 UTC record (the tensor copy for both), `-UCF_TMA_STORE` the builds of the 17:57 UTC one (bitwise_*.log: 0
# differences); CF_XDOUBLE stages the next tile under this tile's MMAs. Call 2: its output in a buffer of its own
# (CF_XOUT_APART), at 3 warpgroups (CF_WGS=3) for the shared memory, beside 3 warpgroups without it. Call 3: both
# without their staging; call 4: both staging without rounding.
LOG_DIR_J = R.ROOT / "results" / "device-logs" / "explore-2026-12-01j"
NINTH = {"staging under the MMAs": (LOG_DIR_J / "time.log", "the next tile staged under this tile's MMAs (CF_XDOUBLE)"),
         "output apart": (LOG_DIR_J / "call2" / "time.log",
                          "the same with the output in a buffer of its own (CF_XOUT_APART), 3 warpgroups"),
         # 19:55 UTC, after the 19:46 UTC record: the same two 3-warpgroup builds without their staging (CF_ABL_NOSTAGE:
         # no rounding, no shared stores; the loads kept)
         "without the staging": (LOG_DIR_J / "call3" / "call3_nostage.log",
                                 "3 warpgroups with and without CF_XDOUBLE + CF_XOUT_APART, without the staging"),
         # 20:00 UTC: the same two staging without rounding (CF_TF32_TRUNC: the shared stores alone)
         "stores without rounding": (LOG_DIR_J / "call4" / "call4_trunc.log",
                                     "3 warpgroups with and without CF_XDOUBLE + CF_XOUT_APART, staging unrounded")}
_logs("ninth", NINTH)
SOURCE_04B_XDOUBLE = LOG_DIR_J / "call2" / "ncu_source_tf32_xdouble.csv.gz"
SPECIAL_VALUES = LOG_DIR_J / "special.log"
_SPECIAL = re.compile(r"(\S+) (nan|inf) \(([\d, ]+)\): unwritten\(NaN where float64 finite\) (\d+), "
                      r"nonfinite_mismatch (\d+), max_abs (\S+), (ok|FAIL)")


def special_values(path: Path = SPECIAL_VALUES) -> pd.DataFrame:
    """Inf or NaN inputs (five of them) on conv3d shapes whose tiles take each store path, into a NaN-poisoned output:
    per build, special value and shape, the outputs left unwritten (NaN where float64 is finite), the outputs whose
    NaN/Inf class differs from float64's, and whether the rest is within the build's bound. `head_` builds are the
    FP16-operand builds as committed before the ninth session (the FP32 path decided per thread)."""
    rows = [{"build": m.group(1), "special": m.group(2), "shape": tuple(int(v) for v in m.group(3).split(",")),
             "unwritten": int(m.group(4)), "class mismatches": int(m.group(5)), "within bounds": m.group(7) == "ok"}
            for line in Path(path).read_text().splitlines() if (m := _SPECIAL.match(line))]
    return pd.DataFrame(rows).set_index(["build", "special", "shape"])


# H200, 2026-12-01 from 20:56 UTC (the tenth session). In calls 1 and 2 `04b_wgmma_tf32` and `_fp16` are the builds
# of the 19:46 UTC record (without the rotation); CF_STAGE_ROT stores the staging's items without bank conflicts.
# Call 1: its first form (the rotated offsets hoisted; TF32 at 4 warpgroups spilled 12 B), at 3 and 4 warpgroups and
# under the MMAs; call 2: the rotation read per item (spill-free), two interleaved runs (time.log, time2.log). Each of
# these calls' ncu_st.log: shared-memory store wavefronts, bank conflicts and store instructions of one launch per build.
LOG_DIR_K = R.ROOT / "results" / "device-logs" / "explore-2026-12-01k"
TENTH = {"rotation, first form": (LOG_DIR_K / "call1" / "time.log",
                                  "the staging's stores lane-rotated (CF_STAGE_ROT), offsets hoisted"),
         "rotation, per item": (LOG_DIR_K / "call2" / "time.log",
                                "CF_STAGE_ROT with the rotation read per item (spill-free at 4 warpgroups)"),
         "rotation, per item (again)": (LOG_DIR_K / "call2" / "time2.log", "the same builds, a second interleaved run"),
         # call 4 (21:31 UTC): the builds recorded at 21:12 UTC against CF_BOX_STS, a candidate kept as
         # notes/patches/conv3d_04b_box_sts.patch (applied on the device only; not in the committed kernel)
         "box writes as shared stores": (LOG_DIR_K / "call4" / "time.log",
                                         "the tensor copy's box written with st.shared at compile-time offsets (patch)"),
         "box writes as shared stores (again)": (LOG_DIR_K / "call4" / "time2.log", "the same builds, a second run"),
         # call 5 (21:37 UTC): CF_EPI_FOLD (bias and sum folded per channel) on top of the same patch
         "folded epilogue": (LOG_DIR_K / "call5" / "time.log", "CF_EPI_FOLD on top of CF_BOX_STS (patch)"),
         "folded epilogue (again)": (LOG_DIR_K / "call5" / "time2.log", "the same builds, a second run")}
_logs("tenth", TENTH)
STORE_WAVEFRONTS = {"first form": LOG_DIR_K / "call1" / "ncu_st.log", "per item": LOG_DIR_K / "call2" / "ncu_st.log"}
# call 3 (21:22 UTC): ncu source pages of the builds recorded at 21:12 UTC (the rotation registered), and
# CF_XDOUBLE at 4 warpgroups with it (time.log; that build spills 52 B, ptxas)
SOURCE_04B_ROT = {"TF32": LOG_DIR_K / "call3" / "ncu_source_04b_wgmma_tf32.csv.gz",
                  "fp16": LOG_DIR_K / "call3" / "ncu_source_04b_wgmma_fp16.csv.gz"}
LOGS["tenth: CF_XDOUBLE at 4 warpgroups"] = LOG_DIR_K / "call3" / "time.log"
_NCU_DONE = re.compile(r"\[ncu-sections\] (\w+)/(\S+) done")
_NCU_METRIC = re.compile(r"^\s+(\S+?)\s+(?:(\S+)\s+)?([\d,.]+)$")
# a profiled launch's header line: "  cf04b::conv3d_wgmma_kernel(CUtensorMap_st, ...) (132, 1, 1)x(512, 1, 1), ..."
_NCU_LAUNCH = re.compile(r"^\s+(?:void )?(?:\w+::)*conv[23]d_\w*kernel(?:<\d+>)?\(")   # CF_XWIN's: a template
_STORE_METRICS = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "store wavefronts",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "store bank conflicts",
                  "smsp__inst_executed_op_shared_st.sum": "shared store instructions"}


def launch_metrics(path: Path, names: dict) -> pd.DataFrame:
    """ncu's `--metrics` counters of one launch per build at the full shape (a call's ncu log from
    scripts/ncu_sections.py), indexed by build, columns renamed by `names` ({metric: column}). Bytes come back in
    bytes and times in ms, whatever unit ncu chose per line; the launches are in the order the builds ran
    ("[ncu-sections] ... done"). A log grepped down to its metric lines (no launch headers) opens a launch where a
    metric repeats."""
    text = Path(path).read_text().splitlines()
    builds = [parse_key(m.group(1), m.group(2)).spelled for line in text if (m := _NCU_DONE.match(line))]
    launches = _ncu_launches(text, names, _NCU_LAUNCH if any(_NCU_LAUNCH.match(t) for t in text) else None)
    if len(launches) != len(builds):
        raise ValueError(f"{path}: {len(launches)} profiled launches for {len(builds)} builds")
    return pd.DataFrame(launches, index=pd.Index(builds, name="build"))


def _ncu_launches(text: list, names: dict, header: re.Pattern | None) -> list:
    """The `--metrics` counters of each launch (a line matching `header` opens one; with no header, a metric seen
    again) in an ncu log's lines, renamed by `names`; bytes in bytes and times in ms, whatever unit ncu chose per
    line."""
    launches, cur = [], None
    for line in text:
        m = _NCU_METRIC.match(line)
        if header.match(line) if header else (m and m.group(1) in names and (cur is None or names[m.group(1)] in cur)):
            cur = {}
            launches.append(cur)
            if header:
                continue
        if cur is not None and m and m.group(1) in names:
            value, unit = float(m.group(3).replace(",", "")), m.group(2) or ""
            cur[names[m.group(1)]] = value / NCU.UNITS_PER_MS[unit] if unit in NCU.UNITS_PER_MS else \
                value * NCU.BYTES_PER_UNIT.get(unit, 1)
    return launches


def store_wavefronts(path: Path) -> pd.DataFrame:
    """ncu's shared-memory store counters of one launch per build (one call's ncu_st.log), indexed by build."""
    return launch_metrics(path, _STORE_METRICS).astype("int64")


# The eleventh session (2026-12-01 from 22:38 UTC; results/device-logs/explore-2026-12-01l/): callA (22:40 UTC),
# CF_STAGE_SKEW against the builds with the box stores, which the 22:49 UTC record then took; callB (22:55 UTC), the
# L2 eviction hints (notes/patches/conv3d_04b_l2_hints.patch, applied on the device only) and the same skew builds
# profiled beside them
LOG_DIR_L = R.ROOT / "results" / "device-logs" / "explore-2026-12-01l"
ELEVENTH = {"staging skewed": (LOG_DIR_L / "callA" / "time.log",
                               "65-pixel staged rows, a quarter-warp on 2 quads x 4 rows (CF_STAGE_SKEW)"),
            "staging skewed (again)": (LOG_DIR_L / "callA" / "time2.log", "the same builds, a second run"),
            "L2 hints": (LOG_DIR_L / "callB" / "time.log", "the output evict_first, then also the input evict_last (patch)"),
            "L2 hints (again)": (LOG_DIR_L / "callB" / "time2.log", "the same builds, a second run"),
            "L2 hints (third)": (LOG_DIR_L / "callB" / "time3.log", "after the profile, a third run")}
_logs("eleventh", ELEVENTH)
NCU_ELEVENTH = {"skew": LOG_DIR_L / "callA" / "ncu.log", "hints and skew": LOG_DIR_L / "callB" / "ncu.log"}
# the record those calls stood beside (results/nvidia-h200.json as of 2026-12-01 22:49 UTC, from git), for the section
# that discusses it: the current results file has moved on
RECORD_ELEVENTH = LOG_DIR_L / "record-2026-12-01T2249.json"
# The twelfth session (2026-12-02 from 00:10 UTC; results/device-logs/explore-2026-12-02a/): the four cuts prepared in the
# eleventh (notes/patches/), each alone and together, against the builds of the 22:49 UTC record; the 00:24 UTC record
# then took the winners. In these logs a registered key names the build registered then.
LOG_DIR_2A = R.ROOT / "results" / "device-logs" / "explore-2026-12-02a"
TWELFTH = {"each cut, then together": (LOG_DIR_2A / "call1" / "time3d.log",
                                       "the loads' addresses, uniform descriptors, cvt.rn rounding: alone and together"),
           "again, FP16's two apart": (LOG_DIR_2A / "call2" / "time3d.log", "a second process; FP16's two cuts apart"),
           "again (third run)": (LOG_DIR_2A / "call2" / "time3d_2.log", "the same builds, a second interleaved run")}
TWELFTH_CONV2D = {"each cut, then together": (LOG_DIR_2A / "call1" / "time2d.log",
                                              "04c: descriptors once per chunk, cvt.rn rounding: alone and together"),
                  "again": (LOG_DIR_2A / "call2" / "time2d.log", "a second process"),
                  "again (third run)": (LOG_DIR_2A / "call2" / "time2d_2.log", "the same builds, a second run")}
_logs("twelfth", TWELFTH)
_logs("twelfth, conv2d", TWELFTH_CONV2D)
NCU_TWELFTH = LOG_DIR_2A / "call2" / "ncu.log"
# call 3 (00:40 UTC): L2 sector counts by source and operation, for where FP16 + CF_LOAD_ADDR's extra DRAM reads come
# from (the TF32 build, then FP16 and FP16 + CF_LOAD_ADDR twice each)
NCU_TWELFTH_L2 = LOG_DIR_2A / "call3" / "ncu.log"
# call 4 (00:44 UTC): the registered FP16 build (with CF_DESC_UNIFORM since the record), + CF_LOAD_ADDR, + CF_LOAD_ADDR with
# the output written evict-first (notes/patches/conv3d_04b_l2_hints.patch's CF_Y_EVICT, applied on the device only), each
# profiled twice, then timed once
NCU_TWELFTH_EVICT = LOG_DIR_2A / "call4" / "ncu.log"
TWELFTH_EVICT = {"output evict-first": (LOG_DIR_2A / "call4" / "time.log",
                                        "FP16 + CF_LOAD_ADDR with the output written evict-first (patch)")}
_logs("twelfth", TWELFTH_EVICT)
# The thirteenth session (2026-12-02 from 01:39 UTC; results/device-logs/explore-2026-12-02b/): what bounds conv3d 04b
# TF32, by ablation (calls 1-3; CF_ABL_NOMMA and CF_ABL_NOENDS from notes/patches/conv3d_04b_abl_nomma.patch, applied on
# the device only), the write rate by geometry without the kernel (call 4, store_patterns.py beside its log), and the
# group stores (call 5; the record of 02:14 UTC then took them, with the bug that call found fixed). In these logs
# `04b_wgmma_tf32` names the build registered then, without CF_GROUP_STORE.
LOG_DIR_2B = R.ROOT / "results" / "device-logs" / "explore-2026-12-02b"
THIRTEENTH = {"ablations": (LOG_DIR_2B / "call1" / "time_tf32.log",
                            "the registered build without its staging, epilogue math or copy out; the MMA skeleton"),
              "ablations (again)": (LOG_DIR_2B / "call1" / "time_tf32_2.log", "the same builds, a second run"),
              "the output path alone": (LOG_DIR_2B / "call2" / "time.log",
                                        "no loads, staging or wgmmas (CF_ABL_NOMMA, patch): the epilogue and its copies"),
              "store methods": (LOG_DIR_2B / "call3" / "time.log",
                                "the output by row copies or plain stores, and without the pair stores (patch)"),
              "store methods (again)": (LOG_DIR_2B / "call3" / "time_2.log", "the same builds, a second run"),
              "group stores": (LOG_DIR_2B / "call5" / "time.log",
                               "4 (or 2) warpgroups' rows in one tensor copy (CF_GROUP_STORE), with its bug since fixed"),
              "group stores (again)": (LOG_DIR_2B / "call5" / "time_2.log", "the same builds, a second run")}
THIRTEENTH_FP16 = {"ablations, FP16": (LOG_DIR_2B / "call1" / "time_fp16.log", "the FP16 build's ablations")}
_logs("thirteenth", THIRTEENTH)
_logs("thirteenth", THIRTEENTH_FP16)
NCU_THIRTEENTH = {"ablations": LOG_DIR_2B / "call1" / "ncu.log", "the output path": LOG_DIR_2B / "call2" / "ncu.log",
                  "store methods": LOG_DIR_2B / "call3" / "ncu.log", "group stores": LOG_DIR_2B / "call5" / "ncu.log"}
STALL_METRICS = {f"smsp__average_warps_issue_stalled_{k}_per_issue_active.ratio": f"{k.replace('_', ' ')} stalls per issue"
                 for k in ("long_scoreboard", "barrier")}
WRITE_METRICS = {"gpu__time_duration.sum": "ms (ncu)",
                 "smsp__sass_inst_executed.sum": "warp instructions",
                 "dram__bytes_read.sum": "DRAM bytes read",
                 "dram__bytes_write.sum": "DRAM bytes written",
                 "lts__t_sectors_op_write.sum": "L2 write sectors",
                 "lts__t_requests_op_write.sum": "L2 write requests",
                 "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active %",
                 **STALL_METRICS}
# call 2: torch's fill_, zero_ and copy_ at the output's size (write_bw.py beside the log), twice
WRITE_BW = LOG_DIR_2B / "call2" / "write_bw.log"
_WRITE_BW = re.compile(r"^(.+?)\s{2,}([\d.]+) ms\s+([\d.]+) TB/s \(([\d.]+) GB\)$")
# call 4: the output's 1.76 GB written by a persistent grid shaped as 04b's, by what each warp copies out (no arithmetic)
STORE_PATTERNS = LOG_DIR_2B / "call4" / "patterns.log"
STORE_PATTERNS_NCU = LOG_DIR_2B / "call4" / "ncu.log"
STORE_PATTERN_MODES = {
    "A": "04b's: 62-pixel rows, a 60-pixel box per 16 channels and the pair left out stored apart",
    "B": "A without the pairs (8 bytes per row never written)",
    "C": "two rows per box: 124 pixels (496 B), 16-byte aligned",
    "D": "64-pixel boxes (256 B), sector-aligned",
    "E": "128-pixel boxes (512 B), sector-aligned",
    "H": "8 KB contiguous per box",
}
_PATTERN = re.compile(r"^mode (\w): ([\d.]+) ms\s+([\d.]+) TB/s$")
_PATTERNS_PROFILED = ("fill_", "A", "B", "C", "D", "H")     # the call's `store_patterns.py ncu A B C D H`, after a fill_
_PATTERN_LAUNCH = re.compile(r"^\s+(?:void at::\S*elementwise_kernel|pattern\()")
# the 00:24 UTC record (results/nvidia-h200.json then, from git), for the section that discusses it
RECORD_TWELFTH = LOG_DIR_2A / "record-2026-12-02T0024.json"

# The fourteenth session (2026-12-02 from 03:37 UTC; results/device-logs/explore-2026-12-02c/): a producer warpgroup for
# conv3d 04b TF32 (call 1: its loads into registers, notes/patches/conv3d_04b_producer_registers.patch applied on the
# device only; calls 2-4: CF_PRODUCER, TMA boxes transposed from shared memory), ablations that multiply
# real data (CF_ABL_STAGE_ONCE, call 3) beside those that multiply never-written shared memory, and each warpgroup
# staging its own tile from TMA boxes (CF_TMA_STAGE, call 4, which hung). CF_PRODUCER, CF_TMA_STAGE and the two
# ablations are in the kernel, off by default (CF_PRODUCER since refactored: its transposition and copy in helpers shared
# with CF_TMA_STAGE; CF_ABL_NOSYNC in call 2 meant no producer at all). In these logs `04b_wgmma_tf32` is the registered
# build.
LOG_DIR_2C = R.ROOT / "results" / "device-logs" / "explore-2026-12-02c"
FOURTEENTH = {
    "producer, loads in registers": (LOG_DIR_2C / "call1" / "time.log",
                                     "a producer warpgroup loading into registers (patch), its handoffs alone, a ceiling"),
    "producer, loads in registers (again)": (LOG_DIR_2C / "call1" / "time_2.log", "the same builds, a second run"),
    "producer, TMA boxes": (LOG_DIR_2C / "call2" / "time.log",
                            "CF_PRODUCER: TMA boxes transposed from shared memory; its handoffs alone; no producer "
                            "and no handoffs (CF_ABL_NOSYNC as it was then: never-written buffers)"),
    "producer, TMA boxes (again)": (LOG_DIR_2C / "call2" / "time_2.log", "the same builds, a second run"),
    "real data": (LOG_DIR_2C / "call3" / "time.log",
                  "ablations multiplying real data (CF_ABL_STAGE_ONCE) beside never-written shared memory"),
    "real data (again)": (LOG_DIR_2C / "call3" / "time_2.log", "the same builds, a second run"),
}
_logs("fourteenth", FOURTEENTH)
NCU_FOURTEENTH = {"producer, loads in registers": LOG_DIR_2C / "call1" / "ncu.log",
                  "real data": LOG_DIR_2C / "call3" / "ncu.log"}
# call 4 (04:19-04:29 UTC): CF_TMA_STAGE, bitwise equal on 8 small shapes, then hung on (3, 8, 10, 64, 64) (the call's
# 600 s ran out in it; no timing): its bitwise log, the sanitizers that ran, the build log
TMA_STAGE_BITWISE = LOG_DIR_2C / "call4" / "bitwise.log"
CLOCK_METRICS = {"gpu__time_duration.sum": "ms (ncu)", "sm__cycles_elapsed.avg.per_second": "SM clock (GHz)",
                 "smsp__sass_inst_executed.sum": "warp instructions",
                 "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active %"}
# ncu source pages of the producer builds: call 1's (loads in registers), call 2's (TMA), and call 2's handoffs alone
SOURCE_PRODUCER = {"loads in registers": LOG_DIR_2C / "call1" / "ncu_source_producer.csv.gz",
                   "TMA boxes": LOG_DIR_2C / "call2" / "ncu_source_conv3d_04b_wgmma_tf32_CF_PRODUCER.csv.gz",
                   "handoffs alone": LOG_DIR_2C / "call2" /
                   "ncu_source_conv3d_04b_wgmma_tf32_CF_PRODUCER_CF_ABL_NOLOAD_CF_ABL_NOSTAGE.csv.gz"}
# the producer builds' SASS: setup, then the consumers' loop (from their first named-barrier wait, FULL) to their
# last bulk wait (CCTL.IVALL before EXIT), then the producer's loop
PRODUCER_MARKS_04B = (("BAR.SYNC.DEFER_BLOCKING R", "consumers: FULL wait, wgmma issue, epilogue, group store"),
                      ("CCTL.IVALL", "producer: loads or copies, transposition, barriers"))

# The fifteenth session (2026-12-02 from 05:24 UTC; results/device-logs/explore-2026-12-02d/): the mended CF_TMA_STAGE
# measured (call 1), the board's clock and power per kernel (call 2, scripts/power_draw.py), the live notebooks 04 and
# 05 (call 3; kept in results/device-logs/live/), ablations that stage part of a tile (calls 4-6: CF_ABL_HALF_ITEMS,
# CF_ABL_SKIP_ITEM=2), and a contiguous dealing of rounds (call 7: CF_DEAL_CONTIG). In these logs `04b_wgmma_tf32` is
# the registered build.
LOG_DIR_2D = R.ROOT / "results" / "device-logs" / "explore-2026-12-02d"
FIFTEENTH = {
    "TMA boxes per warpgroup": (LOG_DIR_2D / "call1" / "time.log",
                                "CF_TMA_STAGE (one handoff barrier per direction) beside the real-data ceiling"),
    "TMA boxes per warpgroup (again)": (LOG_DIR_2D / "call1" / "time_2.log", "the same builds, a second run"),
    "half the items": (LOG_DIR_2D / "call4" / "time.log",
                       "CF_ABL_HALF_ITEMS: 160 of a tile's 288 four-pixel items loaded and staged"),
    "half the items (again)": (LOG_DIR_2D / "call4" / "time_2.log", "the same builds, a second run"),
    "warp 0's third item": (LOG_DIR_2D / "call5" / "time.log",
                            "CF_ABL_SKIP_ITEM=2: the item only warp 0 has, left out"),
    "warp 0's third item (again)": (LOG_DIR_2D / "call5" / "time_2.log", "the same builds, a second run"),
    "contiguous rounds": (LOG_DIR_2D / "call7" / "time.log",
                          "CF_DEAL_CONTIG: each block a contiguous range of rounds (the tiles of the registered build)"),
    "contiguous rounds (again)": (LOG_DIR_2D / "call7" / "time_2.log", "the same builds, a second run"),
}
_logs("fifteenth", FIFTEENTH)
NCU_FIFTEENTH = {"TMA boxes per warpgroup": LOG_DIR_2D / "call1" / "ncu.log",
                 "half the items": LOG_DIR_2D / "call4" / "ncu.log",
                 "warp 0's third item": LOG_DIR_2D / "call5" / "ncu.log",
                 "loads": LOG_DIR_2D / "call6" / "ncu.log",
                 "contiguous rounds": LOG_DIR_2D / "call7" / "ncu.log"}
DEAL_BITWISE = LOG_DIR_2D / "call7" / "bitwise.log"
STAGE_METRICS = {"gpu__time_duration.sum": "ms (ncu)", "smsp__sass_inst_executed.sum": "warp instructions",
                 "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active %",
                 **STALL_METRICS}
LOAD_METRICS = {"gpu__time_duration.sum": "ms (ncu)", "dram__bytes_read.sum": "DRAM bytes read",
                "lts__t_sector_op_read_hit_rate.pct": "L2 read hit rate %",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "L1 global load sectors"}
TMA_STAGE_BITWISE_2D = LOG_DIR_2D / "call1" / "bitwise.log"
SOURCE_FIFTEENTH = {"CF_TMA_STAGE": LOG_DIR_2D / "call1" / "ncu_source_tma_stage.csv.gz",
                    "registered": LOG_DIR_2D / "call6" / "ncu_source_conv3d_04b_wgmma_tf32.csv.gz",
                    "CF_ABL_SKIP_ITEM=2": LOG_DIR_2D / "call6" / "ncu_source_conv3d_04b_wgmma_tf32_CF_ABL_SKIP_ITEM_2.csv.gz"}
POWER = LOG_DIR_2D / "call2" / "power.json"
# what each mbarrier of the TF32 builds is, by its offset in shared memory (SASS `[R+URZ+0x...]`)
MBARRIERS_04B = {"0x9000": "CF_TMA_STAGE's raw buffers (is the box in?)",
                 "0xf820": "the group store's slots (FULL and EMPTY)"}

# Sixteenth session (2026-12-02, from 07:12 UTC): conv3d fp16 on the group stores, and the shared window (CF_XWIN)
LOG_DIR_2E = R.ROOT / "results" / "device-logs" / "explore-2026-12-02e"
SIXTEENTH = {
    "fp16 group stores": (LOG_DIR_2E / "call1" / "time.log",
                          "CF_GROUP_STORE for fp16, and CF_ABL_STAGE_ONCE with and without it"),
    "fp16 group stores (again)": (LOG_DIR_2E / "call1" / "time_2.log", "the same builds, a second run"),
    "shared window": (LOG_DIR_2E / "call2" / "time.log",
                      "CF_XWIN: one window of input rows per round for the block's 4 warpgroups"),
    "shared window (again)": (LOG_DIR_2E / "call2" / "time_2.log", "the same builds, a second run"),
    "the round's order": (LOG_DIR_2E / "call4" / "time.log",
                          "CF_XWIN_LATE (the window staged after the stores), CF_XWIN_NOTURN (no MMA turns)"),
    "the round's order (again)": (LOG_DIR_2E / "call4" / "time_2.log", "the same builds, a second run"),
    "two sets of boxes": (LOG_DIR_2E / "call5" / "time.log",
                          "CF_XWIN_W1 (fp16's w_hi alone), and with it CF_GROUP_DOUBLE (two sets of group boxes)"),
    "two sets of boxes (again)": (LOG_DIR_2E / "call5" / "time_2.log", "the same builds, a second run"),
    "two sets of boxes (third)": (LOG_DIR_2E / "call6" / "time.log", "after its protocol, special values, sanitizers"),
}
_logs("sixteenth", SIXTEENTH)
NCU_SIXTEENTH = {"fp16 group stores": LOG_DIR_2E / "call1" / "ncu.log",
                 "shared window": LOG_DIR_2E / "call2" / "ncu.log",
                 "loads": LOG_DIR_2E / "call3" / "ncu.log",
                 "two sets of boxes": LOG_DIR_2E / "call6" / "ncu.log"}
_XWIN_DOUBLE = "CF_GROUP_STORE_CF_XWIN_CF_XWIN_LATE_CF_XWIN_W1_CF_GROUP_DOUBLE"
SOURCE_SIXTEENTH = {"group stores": LOG_DIR_2E / "call3" / "ncu_source_conv3d_04b_wgmma_fp16_CF_GROUP_STORE.csv.gz",
                    "shared window": LOG_DIR_2E / "call3" / "ncu_source_conv3d_04b_wgmma_fp16_CF_GROUP_STORE_CF_XWIN.csv.gz",
                    "no staging": LOG_DIR_2E / "call3" /
                    "ncu_source_conv3d_04b_wgmma_fp16_CF_GROUP_STORE_CF_ABL_STAGE_ONCE.csv.gz",
                    "staged after the stores": LOG_DIR_2E / "call7" /
                    "ncu_source_conv3d_04b_wgmma_fp16_CF_GROUP_STORE_CF_XWIN_CF_XWIN_LATE.csv.gz",
                    "two sets of boxes": LOG_DIR_2E / "call7" / f"ncu_source_conv3d_04b_wgmma_fp16_{_XWIN_DOUBLE}.csv.gz"}
XWIN_SANITIZE = {"overflow": LOG_DIR_2E / "call2" / "san_synccheck.log",
                 "window shape": LOG_DIR_2E / "call5" / "san_sync_window.log",
                 "fallback shape": LOG_DIR_2E / "call5" / "san_sync_fallback.log",
                 "two sets of boxes": LOG_DIR_2E / "call6" / "san_synccheck.log"}
XWIN_DOUBLE_VERIFY = LOG_DIR_2E / "call6" / "verify.log"
XWIN_BITWISE = LOG_DIR_2E / "call2" / "bitwise.log"
GROUP_F16_BITWISE = LOG_DIR_2E / "call1" / "bitwise.log"
# the 02:14 UTC record (results/nvidia-h200.json then, from git), for the sections that discuss it
RECORD_THIRTEENTH = LOG_DIR_2B / "record" / "record-2026-12-02T0214.json"

# Seventeenth session (2026-12-02, from 09:41 UTC): conv3d fp16 registered with the window and two sets of boxes and
# recorded (09:47 UTC), CF_GROUP_LAZY measured, registered and recorded again (10:01 UTC)
LOG_DIR_2F = R.ROOT / "results" / "device-logs" / "explore-2026-12-02f"
SEVENTEENTH = {
    "the last box unwaited": (LOG_DIR_2F / "call2" / "time.log",
                              "CF_GROUP_LAZY on the registered fp16 build (the window, two sets of boxes)"),
    "the last box unwaited (again)": (LOG_DIR_2F / "call2" / "time2.log", "the same builds, a second run"),
}
_logs("seventeenth", SEVENTEENTH)
# the record made with the window and two sets of boxes registered, 14 minutes before the one with CF_GROUP_LAZY
RECORD_SEVENTEENTH_FIRST = LOG_DIR_2F / "record1" / "record-2026-12-02T0947.json"
# the registered fp16 build after the 10:01 UTC record (its ncu counters, and its source page beside
# SOURCE_SIXTEENTH["two sets of boxes"], the same build without CF_GROUP_LAZY)
NCU_SEVENTEENTH = LOG_DIR_2F / "record2" / "ncu.log"
SOURCE_SEVENTEENTH = LOG_DIR_2F / "record2" / "ncu_source_conv3d_04b_wgmma_fp16.csv.gz"
LAZY_CHECKS = {"bitwise": LOG_DIR_2F / "call2" / "bitwise.log", "verify": LOG_DIR_2F / "call2" / "verify.log",
               **{tool: LOG_DIR_2F / "call2" / f"san_{tool}.log" for tool in ("memcheck", "racecheck", "synccheck")}}
GATES_SEVENTEENTH = {"09:47 UTC": LOG_DIR_2F / "record1" / "gate_bitwise.log",
                     "10:01 UTC": LOG_DIR_2F / "record2" / "gate_bitwise.log"}

# Eighteenth session (2026-12-02, from 12:33 UTC): conv2d 04c's output through the bulk-copy engine (CF_BULK_STORE) and,
# for TF32, one ring for both consumers (CF_SHARED_RING, 3 stages); then deeper rings, balanced staging, a counted
# refill; both registered and recorded (13:26 UTC). In these logs `04c_ws_tf32` and `04c_ws_fp16` are the builds
# registered before that record (a ring per consumer for TF32, plain stores for both).
LOG_DIR_2G = R.ROOT / "results" / "device-logs" / "explore-2026-12-02g"
EIGHTEENTH = {
    "bulk stores": (LOG_DIR_2G / "call1" / "time.log", "the output through the bulk-copy engine; TF32 on the shared ring"),
    "bulk stores (again)": (LOG_DIR_2G / "call1" / "time2.log", "the same builds, a second run in the reverse order"),
    "deeper rings": (LOG_DIR_2G / "call3" / "time.log", "one set of output buffers for both consumers, deeper rings"),
    "deeper rings (again)": (LOG_DIR_2G / "call3" / "time2.log", "the same builds, a second run"),
    "staging and refill": (LOG_DIR_2G / "call4" / "time.log", "half-pixel staging items; the refill by the last warp out"),
    "staging and refill (again)": (LOG_DIR_2G / "call4" / "time2.log", "the same builds, a second run"),
}
_logs("eighteenth", EIGHTEENTH)
NCU_EIGHTEENTH = {"bulk stores": LOG_DIR_2G / "call1" / "ncu.log", "deeper rings": LOG_DIR_2G / "call3" / "ncu.log"}
_BULK_SR = "ncu_source_conv2d_04c_ws_tf32_CF_SHARED_RING_CF_BULK_STORE_CF_STAGES_3"
SOURCE_EIGHTEENTH = {"shared ring, bulk stores": LOG_DIR_2G / "call3" / f"{_BULK_SR}.csv.gz",
                     "with 3 raw buffers, one set of output buffers": LOG_DIR_2G / "call3" / f"{_BULK_SR}_CF_RAWS_3_CF_OUT_SHARED.csv.gz"}
BULK_CHECKS = {"bitwise TF32": LOG_DIR_2G / "call1" / "bitwise_tf32.log", "bitwise FP16": LOG_DIR_2G / "call1" / "bitwise_fp16.log",
               "verify": LOG_DIR_2G / "call1" / "verify.log",
               **{tool: LOG_DIR_2G / "call2" / f"san_{tool}.log" for tool in ("memcheck", "racecheck", "synccheck")}}
GATES_EIGHTEENTH = {"TF32": LOG_DIR_2G / "record" / "gate_tf32.log", "FP16": LOG_DIR_2G / "record" / "gate_fp16.log"}
RECORD_SEVENTEENTH = LOG_DIR_2G / "record" / "record-2026-12-02T1001.json"     # the record the 13:26 UTC one replaced
# the write side of the output path, for the bulk stores' table (NCU_EIGHTEENTH["bulk stores"])
BULK_METRICS = {"gpu__time_duration.sum": "ms (ncu)", "lts__t_requests_op_write.sum": "L2 write requests",
                "lts__t_sectors_op_write.sum": "L2 write sectors", "dram__bytes_write.sum": "DRAM bytes written",
                "smsp__sass_inst_executed.sum": "warp instructions",
                "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active (%)",
                "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "barrier stalls per issue"}

# Nineteenth session (2026-12-02, from 15:53 UTC): conv2d 04d, the implicit GEMM turned around (output pixels as M, the
# input fragments loaded from the TMA's raw rows into registers: wgmma with A in registers, nothing staged), recorded at
# 16:32 UTC. In calls 1 and 2 `04d_rs_tf32` is the first build (its consumers in ping-pong, each stage released right
# after its loads, a race); call 2's `-DCF_NO_ORDER` is what call 3 made the default. From call 3 on it is the
# registered build, and `-DCF_PINGPONG` restores the ping-pong.
LOG_DIR_2H = R.ROOT / "results" / "device-logs" / "explore-2026-12-02h"
NINETEENTH = {
    "first build": (LOG_DIR_2H / "call1" / "time.log", "04d as first written, against 04c; no cvt (CF_TF32_TRUNC)"),
    "issue order": (LOG_DIR_2H / "call2" / "time.log", "accumulators interleaved, no ping-pong, three register sets"),
    "issue order (again)": (LOG_DIR_2H / "call2" / "time2.log", "the same builds, a second run in the reverse order"),
    "ablations": (LOG_DIR_2H / "call3" / "time.log",
                  "the release after the wgmmas, no ping-pong; skew, truncation; parts switched off"),
    "ablations (again)": (LOG_DIR_2H / "call3" / "time2.log", "04c, the skewed and the registered build, a second run"),
    "three consumers": (LOG_DIR_2H / "call4" / "time.log", "three consumers of three rows, two stages each"),
    "three consumers (again)": (LOG_DIR_2H / "call4" / "time2.log", "the same builds, a second run in the reverse order"),
    "prefetch": (LOG_DIR_2H / "call5" / "time.log", "the fragment loads one row ahead (after the record)"),
}
_logs("nineteenth", NINETEENTH)
NCU_NINETEENTH = {"first build": LOG_DIR_2H / "call1" / "ncu.log", "issue order": LOG_DIR_2H / "call2" / "ncu.log",
                  "three consumers": LOG_DIR_2H / "call4" / "ncu.log"}
SOURCE_NINETEENTH = LOG_DIR_2H / "call3" / "ncu_source.csv.gz"        # the registered build's code, call 3
SASS_NINETEENTH = LOG_DIR_2H / "call1" / "convfuse_conv2d_04d_rs_tf32.sass.gz"   # the first build's SASS
RS_CHECKS = {"bitwise, issue order": LOG_DIR_2H / "call2" / "bitwise.log",
             "bitwise, release after the wgmmas": LOG_DIR_2H / "call3" / "bitwise.log",
             "bitwise, three consumers": LOG_DIR_2H / "call4" / "bitwise.log",
             "bitwise, prefetch": LOG_DIR_2H / "call5" / "bitwise.log",
             "30 repeats": LOG_DIR_2H / "call4" / "repeat.log",
             "verify": LOG_DIR_2H / "call3" / "verify.log", "verify, three consumers": LOG_DIR_2H / "call4" / "verify.log",
             "memcheck": LOG_DIR_2H / "call3" / "memcheck.log", "synccheck": LOG_DIR_2H / "call3" / "synccheck.log",
             "racecheck, three consumers": LOG_DIR_2H / "call4" / "racecheck.log"}
RECORD_EIGHTEENTH = LOG_DIR_2H / "record" / "record-2026-12-02T1326.json"     # the record the 16:32 UTC one replaced
# 04d's roles in its SASS: setmaxnreg's allocation starts the consumers, the wait for all MMAs their epilogue, its
# deallocation the producer (which only issues TMAs)
ROLE_MARKS_04D = (("USETMAXREG.TRY_ALLOC", "consumer: tile loop (FULL wait, fragment loads, wgmma issue, release)"),
                  ("WARPGROUP.DEPBAR.LE gsb0, 0x0", "consumer: epilogue and stores"),
                  ("USETMAXREG.DEALLOC", "producer: TMA issue (one thread a ring)"))
RS_METRICS = {"gpu__time_duration.sum": "ms (ncu)", "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active (%)",
              "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": "shared wavefronts",
              "dram__bytes_read.sum": "DRAM bytes read",
              "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "long-scoreboard stalls per issue",
              "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio": "short-scoreboard stalls per issue",
              "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "barrier stalls per issue"}

RECORD_NINETEENTH = R.ROOT / "results" / "device-logs" / "explore-2026-12-02i" / "record" / "record-2026-12-02T1632.json"

# Twentieth session (2026-12-02, from 17:38 UTC): conv3d 04d, conv2d 04d's turned-around GEMM for the 3-D conv (a measured
# negative: its tiles are too short to hide their stores), and two conv2d 04d epilogue candidates; recorded at 18:08 UTC
# (the record the 16:32 UTC one was replaced by). Call 1's conv2d timing and verify log did not come back (the device tool
# left them out for their count; the later calls' logs came as one archive); call 2 verified call 1's builds again.
LOG_DIR_2I = R.ROOT / "results" / "device-logs" / "explore-2026-12-02i"
TWENTIETH_CONV3D = {
    "first builds": (LOG_DIR_2I / "call1" / "time.log",
                     "04d as registered (two consumers of four rows), three of three, four of two; without the epilogue"),
    "stores and copies": (LOG_DIR_2I / "call2" / "time.log", "without stores, without input copies, without both"),
}
TWENTIETH_CONV2D = {
    "epilogue overlap": (LOG_DIR_2I / "call3" / "time.log", "each row's epilogue under the last chunk's wgmmas; the lean "
                         "epilogue"),
    "epilogue overlap (again)": (LOG_DIR_2I / "call3" / "time2.log", "the same two builds, a second run"),
}
_logs("twentieth", {**TWENTIETH_CONV3D, **TWENTIETH_CONV2D})
NCU_TWENTIETH = LOG_DIR_2I / "call1" / "ncu.log"                      # conv3d 04d: two, three, four consumers
SOURCE_TWENTIETH = LOG_DIR_2I / "call2" / "ncu_source.csv.gz"         # conv3d 04d as registered
RS3_CHECKS = {"bitwise, block shapes": LOG_DIR_2I / "call1" / "bitwise.log",
              "verify, block shapes": LOG_DIR_2I / "call2" / "verify.log",
              "bitwise, overlap": LOG_DIR_2I / "call3" / "bitwise.log", "30 repeats, overlap": LOG_DIR_2I / "call3" / "repeat.log",
              "verify, overlap": LOG_DIR_2I / "call3" / "verify.log",
              "racecheck, overlap": LOG_DIR_2I / "call3" / "racecheck.log"}
RS_METRICS_STORES = {**RS_METRICS, "dram__bytes_write.sum": "DRAM bytes written",
                     "smsp__inst_executed.sum": "warp instructions"}

# Twenty-second session (2026-12-03, from 06:22 UTC): conv3d 04b's depth sweep (CF_DWIN), prepared by the twenty-first
# (which got no device), measured. Call 1 timed the sweep as prepared (contiguous rounds; the indices divided out per
# round); call 2 the walk by cursors (CF_DWIN itself from then on), the units dealt round-robin (CF_DWIN_WAVES) and the
# early staging on top. Both calls' bitwise checks ended in an illegal instruction at (3, 8, 4, 9, 64), an odd row's
# group copy (the sweep takes even Ho only since). Call 3 checked that fix and timed two ablations.
LOG_DIR_3A = R.ROOT / "results" / "device-logs" / "explore-2026-12-03"
TWENTY_SECOND = {
    "sweep as prepared": (LOG_DIR_3A / "call1" / "time.log", "contiguous rounds, indices by division; early staging"),
    "sweep as prepared (again)": (LOG_DIR_3A / "call1" / "time2.log", "the same builds, a second run in reverse order"),
    "cursors, waves": (LOG_DIR_3A / "call2" / "time.log",
                       "the walk by cursors; units dealt round-robin; early staging on top"),
    "cursors, waves (again)": (LOG_DIR_3A / "call2" / "time2.log", "the same builds, a second run in reverse order"),
    "handoff ablation": (LOG_DIR_3A / "call3" / "time.log", "even Ho only; the sweep without its mbarrier waits; the "
                         "registered loop without its staging"),
    "handoff ablation (again)": (LOG_DIR_3A / "call3" / "time2.log", "the same builds, a second run in reverse order"),
}
_logs("twenty-second", TWENTY_SECOND)
NCU_TWENTY_SECOND = {"sweep as prepared": LOG_DIR_3A / "call1" / "ncu.log", "cursors, waves": LOG_DIR_3A / "call2" / "ncu.log"}
DWIN_CHECKS = {"bitwise, as prepared": LOG_DIR_3A / "call1" / "bitwise.log", "verify, as prepared": LOG_DIR_3A / "call1" / "verify.log",
               "memcheck, as prepared": LOG_DIR_3A / "call1" / "san_memcheck.log",
               "bitwise, cursors": LOG_DIR_3A / "call2" / "bitwise.log", "verify, waves": LOG_DIR_3A / "call2" / "verify.log",
               "memcheck, cursors": LOG_DIR_3A / "call2" / "san_memcheck.log",
               "bitwise, even Ho": LOG_DIR_3A / "call3" / "bitwise.log", "verify, even Ho": LOG_DIR_3A / "call3" / "verify.log",
               **sanitizer_logs(LOG_DIR_3A / "call3", ", even Ho")}
NCU_DWIN_STALLS = LOG_DIR_3A / "call3" / "ncu.log"      # the registered loop and the sweep (waves, early)
# call 4: ncu source pages of the registered loop, the sweep (waves, early) and the registered loop without staging
SOURCE_DWIN = {"registered": LOG_DIR_3A / "call4" / "ncu_source_registered.csv.gz",
               "sweep (waves, early)": LOG_DIR_3A / "call4" / "ncu_source_sweep.csv.gz",
               "registered without staging": LOG_DIR_3A / "call4" / "ncu_source_stage_once.csv.gz"}
DWIN_STALL_METRICS = {"smsp__inst_executed.sum": "warp instructions",
                      "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active (%)",
                      **{f"smsp__average_warps_issue_stalled_{k}_per_issue_active.ratio": f"{k.replace('_', ' ')} stalls per issue"
                         for k in ("barrier", "long_scoreboard", "short_scoreboard", "wait", "dispatch_stall",
                                   "not_selected", "math_pipe_throttle")}}
DWIN_METRICS = {"gpu__time_duration.sum": "ms (ncu)", "dram__bytes_read.sum": "DRAM bytes read",
                "dram__bytes_write.sum": "DRAM bytes written",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "L1 global-load sectors",
                "lts__t_sector_hit_rate.pct": "L2 hit rate (%)", "smsp__inst_executed.sum": "warp instructions",
                "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active (%)"}

# Twenty-third session (2026-12-03, from 08:32 UTC): CF_DWIN_BRANCH measured (call 1), two changes on it (CF_DWIN_CHAN,
# CF_DWIN_STEP; calls 2-3), then the sweep registered and recorded (09:10 UTC). Call 1's timing logs did not come back
# (the device tool returns 8 files); its printed output did (output_tail.txt), and calls 2-3 printed both runs into
# call.log: the time*.log files are cut from those, unchanged.
LOG_DIR_3B = R.ROOT / "results" / "device-logs" / "explore-2026-12-03b"
TWENTY_THIRD = {
    "branch": (LOG_DIR_3B / "call1" / "time.log", "the item's address arithmetic only in threads with an item; the sweep "
               "without it; the registered loop"),
    "branch (again)": (LOG_DIR_3B / "call1" / "time2.log", "the same builds, a second run in reverse order"),
    "channel quads": (LOG_DIR_3B / "call2" / "time.log", "the staging in channel quads over all four warps"),
    "channel quads (again)": (LOG_DIR_3B / "call2" / "time2.log", "the same builds, a second run in reverse order"),
    "depth step": (LOG_DIR_3B / "call3" / "time.log", "a depth step's item address stepped, not worked out"),
    "depth step (again)": (LOG_DIR_3B / "call3" / "time2.log", "the same builds, a second run in reverse order"),
}
_logs("twenty-third", TWENTY_THIRD)
NCU_TWENTY_THIRD = {"branch": LOG_DIR_3B / "call1" / "ncu.log"}
DWIN23_CHECKS = {"bitwise, branch": LOG_DIR_3B / "call1" / "bitwise.log",
                 "memcheck, branch": LOG_DIR_3B / "call1" / "san_memcheck.log",
                 "printed, branch": LOG_DIR_3B / "call1" / "output_tail.txt",
                 **{f"{what}, {name}": LOG_DIR_3B / c / f for name, c in (("channel quads", "call2"), ("depth step", "call3"))
                    for what, f in (("bitwise", "bitwise.log"), ("printed", "call.log"), ("memcheck", "san_memcheck.log"),
                                    ("racecheck", "san_racecheck.log"), ("synccheck", "san_synccheck.log"))}}
# ncu source pages (SASS with stall samples) of the sweep's builds with waves and early staging; the registered loop's is
# the twenty-second session's (SOURCE_DWIN)
SOURCE_DWIN23 = {"registered loop": LOG_DIR_3A / "call4" / "ncu_source_registered.csv.gz",
                 "branch (registered since)": LOG_DIR_3B / "call1" / "ncu_source_branch.csv.gz",
                 "channel quads": LOG_DIR_3B / "call2" / "ncu_source_chan.csv.gz",
                 "depth step": LOG_DIR_3B / "call3" / "ncu_source_step.csv.gz"}
RECORD_TWENTIETH = LOG_DIR_3B / "record" / "record-2026-12-02T1808.json"   # the record the 09:10 UTC one replaced
LOG_DIR_3C = R.ROOT / "results" / "device-logs" / "explore-2026-12-03c"
TWENTY_FOURTH = {
    "cuts": (LOG_DIR_3C / "call1" / "time.log", "fewer warp instructions: the degree-3 GELU, the descriptors' high words in "
             "registers, the GELU of the halved clamp, each and together; the sweep on two warpgroups of m64n128k8"),
    "cuts (again)": (LOG_DIR_3C / "call1" / "time2.log", "the same builds, a second run in reverse order"),
    "floors": (LOG_DIR_3C / "call2" / "time.log", "three of them again; the registered build and N128 without epilogue "
               "and stores (ablations: wrong outputs, timed only)"),
    "floors (again)": (LOG_DIR_3C / "call2" / "time2.log", "the same builds, a second run in reverse order"),
    "boxes of two rows": (LOG_DIR_3C / "call3" / "time.log", "the sweep's output in boxes of two rows, alone, with the "
                          "degree-3 GELU, with the three cuts"),
    "boxes of two rows (again)": (LOG_DIR_3C / "call3" / "time2.log", "the same builds, a second run in reverse order"),
    "on boxes of two rows": (LOG_DIR_3C / "call4" / "time.log", "on boxes of two rows with the degree-3 GELU, each other "
                             "cut; the halved clamp without the degree-3 GELU"),
    "on boxes of two rows (again)": (LOG_DIR_3C / "call4" / "time2.log", "the same builds, a second run in reverse order"),
}
_logs("twenty-fourth", TWENTY_FOURTH)
# ncu counters the calls printed, read by launch_metrics with COUNTERS_24 (call 1 without the SM clock)
COUNTERS_24 = {"gpu__time_duration.sum": "ms (ncu)", "sm__cycles_elapsed.avg.per_second": "SM clock (GHz)",
               "smsp__inst_executed.sum": "warp instructions",
               "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active (%)"}
NCU_TWENTY_FOURTH = {"cuts": LOG_DIR_3C / "call1" / "call.log", "floors": LOG_DIR_3C / "call2" / "call.log",
                     "boxes of two rows": LOG_DIR_3C / "call3" / "call.log",
                     "on boxes of two rows": LOG_DIR_3C / "call4" / "call.log"}
CUTS24_CHECKS = {"printed, cuts": LOG_DIR_3C / "call1" / "call.log",
                 "bitwise, desc_hi and n128": LOG_DIR_3C / "call1" / "bitwise.log",
                 "memcheck": LOG_DIR_3C / "call1" / "san_memcheck.log",
                 "printed, boxes of two rows": LOG_DIR_3C / "call3" / "call.log",
                 "bitwise, boxes of two rows": LOG_DIR_3C / "call3" / "bitwise.log",
                 **sanitizer_logs(LOG_DIR_3C / "call3", ", boxes of two rows"),
                 "printed, on boxes of two rows": LOG_DIR_3C / "call4" / "call.log",
                 **sanitizer_logs(LOG_DIR_3C / "call4", ", on boxes of two rows")}
# ncu source pages: N128 with the three cuts (call 1), the GELU of the halved clamp (call 2), the boxes of two rows
# without the degree-3 GELU (call 3); the registered build's before them is
# the twenty-third session's (SOURCE_DWIN23, "branch (registered since)": the same machine code)
SOURCE_24 = {"n128 with the three cuts": LOG_DIR_3C / "call1" / "ncu_source_page.csv.gz",
             "gelu of the halved clamp": LOG_DIR_3C / "call2" / "ncu_source_gelu_half.csv.gz",
             "boxes of two rows": LOG_DIR_3C / "call3" / "ncu_source_group2.csv.gz"}
# The twenty-fifth session (2026-12-03 from 12:55 UTC; results/device-logs/explore-2026-12-03d/): the registered build
# (boxes of two rows with the degree-3 GELU of the halved clamp, registered at the session's start) against a plane's
# repeated rows skipped (CF_DWIN_SKIP) and the leftover rounds dealt by cost (CF_DWIN_WEIGHT); call 2 after the record
LOG_DIR_3D = R.ROOT / "results" / "device-logs" / "explore-2026-12-03d"
RECORD_TWENTY_THIRD = LOG_DIR_3D / "record" / "record-2026-12-03T0910.json"   # the record the 13:15 UTC one replaced
TWENTY_FIFTH = {
    "skip": (LOG_DIR_3D / "call1" / "time.log", "the repeated rows of a plane's last group skipped, alone and with the "
             "leftover rounds dealt by cost (W = 32, 40, 48); the build registered before boxes of two rows"),
    "skip (again)": (LOG_DIR_3D / "call1" / "time2.log", "the same builds, a second run in reverse order"),
    "skip (after the record)": (LOG_DIR_3D / "call2" / "time.log", "skipping alone and with W = 40, a third run"),
    "parts": (LOG_DIR_3D / "call3" / "time.log", "the registered build without its epilogue's math, without its stores, "
              "without both (ablations: wrong outputs, timed only)"),
    "parts (again)": (LOG_DIR_3D / "call3" / "time2.log", "the same builds, a second run in reverse order"),
    "floors": (LOG_DIR_3D / "call4" / "time.log", "the recorded build and the build before boxes of two rows, each in full "
               "and without epilogue math and stores (ablations: wrong outputs, timed only)"),
    "floors (again)": (LOG_DIR_3D / "call4" / "time2.log", "the same builds, a second run in reverse order"),
}
_logs("twenty-fifth", TWENTY_FIFTH)
COUNTERS_25 = {"gpu__time_duration.sum": "ms (ncu)", "smsp__inst_executed.sum": "warp instructions",
               "dram__bytes_read.sum": "DRAM read (bytes)", "dram__bytes_write.sum": "DRAM write (bytes)"}
L2_25 = {"lts__t_sectors_srcunit_tex_op_read.sum": "L2 read sectors from the SMs",
         "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum": "hits",
         "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum": "misses"}
NCU_TWENTY_FIFTH = {"counters": (LOG_DIR_3D / "call1" / "ncu.log", COUNTERS_25),
                    "L2 reads": (LOG_DIR_3D / "call2" / "ncu2.log", L2_25),
                    "parts": (LOG_DIR_3D / "call3" / "ncu.log", {**COUNTERS_24, "dram__bytes_read.sum": "DRAM read (bytes)"}),
                    "floors": (LOG_DIR_3D / "call4" / "ncu.log", COUNTERS_24)}
SKIP25_CHECKS = {"printed": LOG_DIR_3D / "call1" / "call.log",
                 **sanitizer_logs(LOG_DIR_3D / "call1")}
# The twenty-sixth session (2026-12-03 from 14:58 UTC; results/device-logs/explore-2026-12-03e/): the box rows' order
# (CF_BOX_ROWMAP, prepared by the twenty-fifth) against the build registered then, with both floors (call 1); after
# its registration and the record, the cuts left and the recorded build's parts (call 2). The device tool returned
# at most 8 files a call, so each call's two timing runs are read from its printed log (Run). In call 1 the plain
# "04b_wgmma_tf32" is the build registered then (without the order), spelled by today's registry as the registration.
LOG_DIR_3E = R.ROOT / "results" / "device-logs" / "explore-2026-12-03e"
RECORD_TWENTY_FIFTH = LOG_DIR_3E / "record" / "record-2026-12-03T1315.json"   # the record the 15:07 UTC one replaced
TWENTY_SIXTH = {
    **twice(LOG_DIR_3E / "call1" / "call.log", "row order", "the box's channel rows in the conflict-free order against "
            "the build registered then, each in full and without epilogue math and stores (ablations: timed only)"),
    **twice(LOG_DIR_3E / "call2" / "call.log", "cuts and parts", "after the record: the descriptors' high words, the "
            "halved clamp left out, the build before the row order, and the recorded build without its epilogue's math "
            "or its copies (ablations: timed only)"),
    **twice(LOG_DIR_3E / "call3" / "call.log", "release deferred", "the last slot's wait for its copy's reads and the "
            "box's EMPTY arrive moved to the next round, after its wgmmas are issued (CF_GROUP_DEFER)"),
}
_logs("twenty-sixth", TWENTY_SIXTH)
COUNTERS_26 = {"gpu__time_duration.sum": "ms (ncu)", "smsp__inst_executed.sum": "warp instructions",
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "shared-store bank conflicts",
               "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "shared-store wavefronts",
               "dram__bytes_write.sum": "DRAM write (bytes)"}
STALLS_26 = {"gpu__time_duration.sum": "ms (ncu)", "sm__cycles_elapsed.avg.per_second": "SM clock (GHz)",
             "smsp__inst_executed.sum": "warp instructions",
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "shared-store bank conflicts",
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "shared-load bank conflicts",
             "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "barrier stalls per issue",
             "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "long-scoreboard stalls per issue",
             "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": "wait stalls per issue"}
NCU_TWENTY_SIXTH = {"row order": (LOG_DIR_3E / "call1" / "call.log", COUNTERS_26),
                    "cuts and parts": (LOG_DIR_3E / "call2" / "call.log", STALLS_26),
                    "release deferred": (LOG_DIR_3E / "call3" / "call.log", STALLS_26)}
ROWMAP26_CHECKS = {"printed": LOG_DIR_3E / "call1" / "call.log", "bitwise": LOG_DIR_3E / "call1" / "bitwise.log",
                   **sanitizer_logs(LOG_DIR_3E / "call1"),
                   "printed, after the record": LOG_DIR_3E / "call2" / "call.log"}
DEFER26_CHECKS = {"printed": LOG_DIR_3E / "call3" / "call.log", "verify": LOG_DIR_3E / "call3" / "verify.log",
                  **sanitizer_logs(LOG_DIR_3E / "call3")}

# The twenty-seventh session (2026-12-03 from 16:46 UTC; results/device-logs/explore-2026-12-03f/): CF_GROUP_DEFER
# registered, then the 16:53 UTC record; the 15:07 UTC one it replaced is kept here.
LOG_DIR_3F = R.ROOT / "results" / "device-logs" / "explore-2026-12-03f"
RECORD_TWENTY_SIXTH = LOG_DIR_3F / "record" / "record-2026-12-03T1507.json"   # the record the 16:53 UTC one replaced
# After the record, conv2d 04d (the record put it at 1.98x torch.compile): three calls of candidates that keep each
# value's arithmetic (bitwise equal), each timed twice in one process, the second run in reverse order.
TWENTY_SEVENTH = {
    **twice(LOG_DIR_3F / "call1" / "call.log", "weights, tiles, epilogue", "the weights staged 32 loads at a time, the "
            "leftover tiles to lone consumers, the epilogue in a loop over rows (one or two a turn)"),
    **twice(LOG_DIR_3F / "call2" / "call.log", "five rows", "five output rows a consumer on two stages a ring, with the "
            "register sets carried across chunk pairs, and two stages at four rows (the control)"),
    **twice(LOG_DIR_3F / "call3" / "call.log", "L2 prefetch", "the box four chunks ahead prefetched into L2, on the "
            "registered build, on two stages and on five rows"),
    "parts": (Run(LOG_DIR_3F / "call4" / "call.log", 0), "the registered build without its epilogue's math or its "
              "stores, and without the math on two stages at four and five rows (ablations: timed only, one run)"),
}
_logs("twenty-seventh", TWENTY_SEVENTH)
STALL_REASONS = ("barrier", "branch_resolving", "dispatch_stall", "lg_throttle", "long_scoreboard", "math_pipe_throttle",
                 "mio_throttle", "no_instruction", "not_selected", "selected", "short_scoreboard", "wait")
def _stall_columns(reasons) -> dict:
    """ncu's stall-per-issue metrics for `reasons`, named as the session tables show them ("long scoreboard per issue")."""
    return {f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio": f"{r.replace('_', ' ')} per issue"
            for r in reasons}


STALLS_27 = {"gpu__time_duration.sum": "ms (ncu)", "smsp__inst_executed.sum": "warp instructions",
             **_stall_columns(STALL_REASONS)}
COUNTERS_27 = {"gpu__time_duration.sum": "ms (ncu)", "smsp__inst_executed.sum": "warp instructions",
               "dram__bytes_read.sum": "DRAM read (bytes)", "lts__t_sectors_srcunit_tex_op_read.sum": "L2 read sectors",
               "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "long scoreboard per issue",
               "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio": "short scoreboard per issue"}
NCU_TWENTY_SEVENTH = {"weights, tiles, epilogue": (LOG_DIR_3F / "call1" / "call.log", STALLS_27),
                      "five rows": (LOG_DIR_3F / "call2" / "call.log", COUNTERS_27),
                      "L2 prefetch": (LOG_DIR_3F / "call3" / "call.log", COUNTERS_27)}
CHECKS_27 = {call: {"printed": LOG_DIR_3F / call / "call.log", "bitwise": LOG_DIR_3F / call / "bitwise.log",
                    **({"verify": LOG_DIR_3F / call / "verify.log"} if call != "call1" else {}),
                    **sanitizer_logs(LOG_DIR_3F / call)}
             for call in ("call1", "call2", "call3")}

# The twenty-eighth session (2026-12-03 from 18:34 UTC; results/device-logs/explore-2026-12-03g/): conv2d 04d on one
# pool of stages dealt by need (CF_POOL, prepared by the twenty-seventh session), then pixel pairs (CF_PIXEL_PAIRS).
LOG_DIR_3G = R.ROOT / "results" / "device-logs" / "explore-2026-12-03g"
RECORD_TWENTY_SEVENTH = LOG_DIR_3G / "record" / "record-2026-12-03T1653.json"  # the record the 19:50 UTC one replaced
LOG_DIR_3H = R.ROOT / "results" / "device-logs" / "explore-2026-12-03h"
RECORD_TWENTY_EIGHTH = LOG_DIR_3H / "record" / "record-2026-12-03T1950.json"  # the record the 21:41 UTC one replaced
TWENTY_EIGHTH = {
    **twice(LOG_DIR_3G / "callP" / "call.log", "pool", "one pool of stages for both consumers, dealt by need: five rows "
            "on five stages, four rows on six, against five rows on two-stage rings and the registered build"),
    **twice(LOG_DIR_3G / "callQ" / "call.log", "pixel pairs", "a warp's M rows g, g + 8 as its pixels 2 g, 2 g + 1 "
            "(8-byte fragment loads and stores), at four rows and at five rows on two stages"),
    **twice(LOG_DIR_3G / "callR" / "call.log", "conversions", "the registered pixel pairs with each use of a shared "
            "value converted on its own (CF_PAIR_CVT)"),
}
_logs("twenty-eighth", TWENTY_EIGHTH)
COUNTERS_28 = {"gpu__time_duration.sum": "ms (ncu)", "smsp__inst_executed.sum": "warp instructions",
               "dram__bytes_read.sum": "DRAM read (bytes)",
               **_stall_columns(("barrier", "long_scoreboard", "short_scoreboard", "wait"))}
PAIRS_28 = {**COUNTERS_28, "smsp__inst_executed_op_shared_ld.sum": "shared-load instructions",
            "smsp__inst_executed_op_global_st.sum": "global-store instructions",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "shared-load bank conflicts",
            "lts__t_sectors_op_write.sum": "L2 write sectors"}
# The twenty-ninth session (explore-2026-12-03h): conv2d 04d in 3xTF32 (04d_rs_3xtf32), three calls, each timing its
# builds twice (two processes, the second in reverse order) beside eager, torch.compile, the TF32 04d and 04c 3xFP16.
TWENTY_NINTH = {
    **twice(LOG_DIR_3H / "callA" / "call.log", "first build", "a block per Cout half, a producer warpgroup, whole input "
            "rows in flight on two fragment sets (ptxas serialized its wgmmas, C7512), beside 04_mma_3xtf32"),
    **twice(LOG_DIR_3H / "callB" / "call.log", "one set", "no producer warpgroup, one fragment set (each row waits for its "
            "own wgmmas): four rows, three rows, three rows with two main accumulators"),
    **twice(LOG_DIR_3H / "callC" / "call.log", "tap groups", "the chunk in tap-column groups on two sets of 8 registers "
            "(the registered build at four rows), three rows, three rows with two main accumulators"),
}
_logs("twenty-ninth", TWENTY_NINTH)
COUNTERS_29 = {**COUNTERS_28, "sm__inst_executed_pipe_tensor_op_gmma.sum": "HGMMA (warp-level)"}
NCU_TWENTY_NINTH = {call: (LOG_DIR_3H / call / "call.log", COUNTERS_29) for call in ("callA", "callB", "callC")}
# Thirtieth session (H200, 2026-12-03 from 22:40 UTC): conv2d 04d 3xTF32 at three rows with a_big times both weight parts
# in one m64n64k8 (CF_3X_CONCAT) and three fragment sets (CF_3X_SETS=3), then the erf polynomial; call E's last two runs
# time the TF32 04d with tap 1's pixels loaded on their own (CF_PAIR_SPLIT). In these logs 04d_rs_3xtf32 is the build
# registered then (four rows, the 21:41 UTC record's), so call_times reads them, not session_table.
LOG_DIR_3I = R.ROOT / "results" / "device-logs" / "explore-2026-12-03i"
RECORD_TWENTY_NINTH = LOG_DIR_3I / "record" / "record-2026-12-03T2141.json"  # the record the 22:59 UTC one replaced
THIRTIETH = {
    **twice(LOG_DIR_3I / "callE" / "call.log", "concat and sets", "three rows: CONCAT, three fragment sets, both, against "
            "three rows and the registered four rows"),
    "pair split": (Run(LOG_DIR_3I / "callE" / "call.log", 2), "TF32 04d: tap 1's pixels loaded on their own"),
    "pair split (again)": (Run(LOG_DIR_3I / "callE" / "call.log", 3), "the same builds, a second run in reverse order"),
    **twice(LOG_DIR_3I / "callF" / "call.log", "erf polynomial", "three rows, CONCAT and three sets, with and without the "
            "erf polynomial, against the registered four rows"),
}
_logs("thirtieth", THIRTIETH)
NCU_THIRTIETH = {call: (LOG_DIR_3I / call / "call.log", COUNTERS_29) for call in ("callE", "callF")}
# Call G (23:19 UTC): the wgmma rate microbenchmark (convfuse/micro.py; its JSON, micro.table reads it) and ncu's
# tensor-pipe counter, calibrated on it (99.7-99.9 % on its long launches), on the registered kernels of the 22:59 record.
WGMMA_RATE_30 = LOG_DIR_3I / "callG" / "wgmma_rate.json"
# Call H (23:25 UTC): the same cases again and two more, A loaded from shared memory and converted before each group
WGMMA_RATE_H = LOG_DIR_3I / "callH" / "wgmma_rate.json"
PIPE_COUNTERS = {"gpu__time_duration.sum": "ms (ncu)", "sm__cycles_elapsed.avg": "SM cycles",
                 "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor pipe active (%)"}
NCU_PIPE_30 = (LOG_DIR_3I / "callG" / "ncu_kernels.log", PIPE_COUNTERS)
PIPE_30_PROBLEM = {"04d_rs_3xtf32": "conv2d", "04d_rs_tf32": "conv2d", "04b_wgmma_tf32": "conv3d",
                   "04c_ws_3xfp16": "conv2d"}     # call G profiled each kernel on its own problem
# Thirty-first session (H200, 2026-12-04 from 01:49 UTC): conv2d 04d 3xTF32 with two tap columns a group (call J), its
# parts by ablation (call K: CF_ABL_* builds, timed only, wrong outputs on purpose), the next row's loads under the
# current group and an epilogue warpgroup (call L), the epilogue warpgroup's parts (call O, after the record). In calls
# J-L 04d_rs_3xtf32 is the build registered then (the 22:59 UTC record's), in call O the 02:22 record's (with the row
# prefetch), so call_times reads them.
LOG_DIR_4 = R.ROOT / "results" / "device-logs" / "explore-2026-12-04"
RECORD_THIRTIETH = LOG_DIR_4 / "record" / "record-2026-12-03T2259.json"  # the record the 02:22 UTC one replaced
# Thirty-fourth session (H200, 2026-12-05): call U, conv2d 04e's first run (Winograd F(2x2, 3x3): verified, timed with
# its candidate builds, sanitizers, hardening, ncu), then the record that registered it (and CF_EPI_ILP on conv2d 04d)
LOG_DIR_5 = R.ROOT / "results" / "device-logs" / "explore-2026-12-05"
RECORD_THIRTY_FIRST = LOG_DIR_5 / "record" / "record-2026-12-04T0222.json"   # the record the 02:56 UTC one replaced
THIRTY_FOURTH = {"call U": (LOG_DIR_5 / "callU" / "time.log", "conv2d 04e's first run: the 3xTF32 build, its candidate "
                            "builds and the TF32 build (with CF_WINO_ROWS) beside 04d's, verified and timed in one process")}
THIRTY_FIRST = {
    **twice(LOG_DIR_4 / "callJ" / "call.log", "tap-column pairs", "two tap columns a group on two sets (CF_3X_PAIRS) "
            "against the registered build"),
    **twice(LOG_DIR_4 / "callK" / "call.log", "ablations", "the registered build without its epilogue's math, its "
            "epilogue, its fragment loads, its loads and splits, all three; and with two stages"),
    **twice(LOG_DIR_4 / "callL" / "call.log", "prefetch and epilogue warpgroup", "the next row's loads under the "
            "current group, the epilogue in a third warpgroup, both, and two fragment sets alone"),
    "epilogue warpgroup's parts": (Run(LOG_DIR_4 / "callO" / "call.log", 0), "the epilogue warpgroup's build (with the "
                                   "prefetch) without its epilogue's math, and without math and stores (one run)"),
}
_logs("thirty-first", THIRTY_FIRST)
COUNTERS_31 = {**COUNTERS_29, **PIPE_COUNTERS}
NCU_THIRTY_FIRST = {call: (LOG_DIR_4 / call / "ncu.log", COUNTERS_31) for call in ("callJ", "callK", "callL")}
# the wgmma rate microbenchmark with its cases 11-13 (call J: groups of 18 and 27 with fresh fragments, groups of 9 on
# three sets) and 14-17 (call M, before the 02:22 UTC record in the same machine: beside a warpgroup of arithmetic)
WGMMA_RATE_J = LOG_DIR_4 / "callJ" / "wgmma_rate.json"
WGMMA_RATE_M = LOG_DIR_4 / "callM" / "wgmma_rate.json"
# call N (02:45 UTC): the same again with CONCAT's pair (one accumulator pair) alone and beside FFMAs, RS m64n32k8 beside
# GELUs and beside one dependent FFMA chain a thread
WGMMA_RATE_N = LOG_DIR_4 / "callN" / "wgmma_rate.json"
# Thirty-second session (H200, 2026-12-04 from 20:58 UTC): what slows 04d 3xTF32's wgmmas beside its epilogue. Call P
# (the thirty-first session's prepared script): the microbenchmark's cases 22-25 (beside shared loads; the pair beside
# global stores) and ncu's L1 / shared-memory counters on the registered build, the epilogue warpgroup's build and that
# build without math and stores. Call Q: cases 26-31 (the pair beside GELUs, shared stores and 04d's epilogue; RS n64,
# RS n32 and SS n64 beside global stores), four rows without CONCAT timed twice, and the first source page of the
# registered 3xTF32 build.
LOG_DIR_4B = R.ROOT / "results" / "device-logs" / "explore-2026-12-04b"
WGMMA_RATE_P = LOG_DIR_4B / "callP" / "wgmma_rate.json"
WGMMA_RATE_Q = LOG_DIR_4B / "callQ" / "wgmma_rate.json"
L1_COUNTERS = {**PIPE_COUNTERS, "l1tex__data_bank_reads.sum": "L1 bank reads",
               "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": "shared wavefronts",
               "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "shared-load wavefronts",
               "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "global-store sectors",
               "smsp__inst_executed_op_global_st.sum": "STG (warp-level)",
               "smsp__inst_executed_op_shared_ld.sum": "LDS (warp-level)"}
NCU_L1_P = (LOG_DIR_4B / "callP" / "ncu.log", L1_COUNTERS)
SOURCE_3X = LOG_DIR_4B / "callQ" / "ncu_source.csv.gz"      # the registered conv2d 04d_rs_3xtf32 (02:22 record's build)
# the 3xTF32 build has no producer warpgroup (no setmaxnreg): its tile loop from the first wgmma, its epilogue after the
# wait for all of them
ROLE_MARKS_3X = (("HGMMA", "consumer: tile loop from its first wgmma"),
                 ("WARPGROUP.DEPBAR.LE gsb0, 0x0", "consumer: epilogue and stores"))
THIRTY_SECOND = {
    "four rows without CONCAT": (Run(LOG_DIR_4B / "callQ" / "time1.log", 0), "four output rows, three m64n32k8 a tap "
                                 "on two fragment sets, against the registered build"),
    "four rows without CONCAT (again)": (Run(LOG_DIR_4B / "callQ" / "time2.log", 0),
                                         "the same builds, a second process in reverse order"),
    # Call R: the epilogue without what slowed the pair in the microbenchmark — stores through shared memory and the
    # bulk-copy engine (CF_3X_BULK_STORE, two stages), the GELU without MUFU (CF_GELU_ALU), both — against the registered
    # and two-stage builds, and the registered build without stores (CF_ABL_NOSTORE) with and without CF_GELU_ALU. Call S:
    # the pixel-pair epilogue 16 values at a time, then their stores (CF_EPI_ILP), TF32 and 3xTF32, against the registered
    # builds. Both one verified, interleaved run; bitwise checks beside them.
    "epilogue without MUFU or STG": (Run(LOG_DIR_4B / "callR" / "time1.log", 0), "bulk stores (two stages), the GELU "
                                     "without MUFU, both; the registered build without stores, with and without it"),
    "epilogue sixteen values at a time": (Run(LOG_DIR_4B / "callS" / "time1.log", 0), "TF32 and 3xTF32 with CF_EPI_ILP "
                                          "against the registered builds"),
}
_logs("thirty-second", THIRTY_SECOND)
# ncu source pages of conv2d 04d (SASS, CSV): the nineteenth session's (the registered build's ancestor, the same
# fragment loads and epilogue) and call Q's, two launches: the build of the 16:53 record, then the pixel pairs. 04d's
# SASS has ROLE_MARKS in their order: consumer's chunk loop, its epilogue after the wait for all its wgmmas, producer.
SOURCE_04D = {"nineteenth session": (R.ROOT / "results" / "device-logs" / "explore-2026-12-02h" / "call3"
                                     / "ncu_source.csv.gz", None),
              "16:53 record's build": (LOG_DIR_3G / "callQ" / "ncu_source.csv.gz", 0),
              "pixel pairs": (LOG_DIR_3G / "callQ" / "ncu_source.csv.gz", 1)}
NCU_TWENTY_EIGHTH = {"pool": (LOG_DIR_3G / "callP" / "call.log", COUNTERS_28),
                     "pixel pairs": (LOG_DIR_3G / "callQ" / "call.log", PAIRS_28)}
CHECKS_28 = {"callP": {"printed": LOG_DIR_3G / "callP" / "call.log", "bitwise": LOG_DIR_3G / "callP" / "bitwise.log",
                       "verify": LOG_DIR_3G / "callP" / "verify.log", **sanitizer_logs(LOG_DIR_3G / "callP")},
             # call Q's three sanitizer runs in one log (san.log); its bitwise check stopped at a misaligned store, the
             # record's (after the fix) compared every shape and offset
             "callQ": {"printed": LOG_DIR_3G / "callQ" / "call.log", "bitwise": LOG_DIR_3G / "callQ" / "bitwise.log",
                       "verify": LOG_DIR_3G / "callQ" / "verify.log", "sanitizers": LOG_DIR_3G / "callQ" / "san.log",
                       "bitwise after the fix": LOG_DIR_3G / "record" / "bitwise_pairs.log"}}



def _opcodes_per_tile(p, first: int, last: int) -> pd.Series:
    """Warp instructions per warp tile of conv3d 04b by opcode over lines first..last (inclusive) of a read page."""
    ops = _per_opcode(p.source[first:last + 1], p.instructions[first:last + 1])
    return (pd.Series(ops, dtype=float) / warp_tiles_04b()).sort_values(ascending=False)


def sass_bins(path: Path, width: int = 60, top: int = 5, least: float = 2.0) -> pd.DataFrame:
    """One ncu source page of conv3d 04b cut into bins of `width` SASS lines, in program order: each bin's warp
    instructions per warp tile and its `top` opcodes (bins under `least` left out). Read before a change: which part
    of the loop (descriptors, HGMMA issue, staging, loads, epilogue, stores) an opcode's count comes from."""
    p = _samples(path)
    rows = []
    for b in range(0, len(p.source), width):
        ops = _opcodes_per_tile(p, b, b + width - 1)
        if ops.sum() >= least:
            rows.append({"SASS lines": f"{b}–{b + width - 1}", "instructions per warp tile": ops.sum(),
                         "largest": ", ".join(f"{k} {v:.1f}" for k, v in ops.head(top).items())})
    return pd.DataFrame(rows).set_index("SASS lines")


def sass_region(path: Path, first: int, last: int) -> pd.Series:
    """Warp instructions per warp tile of conv3d 04b by SASS opcode (predicate and modifiers dropped) over source-page
    lines first..last (0-based, inclusive) of one ncu profile: where a count comes from, read before a change."""
    return _opcodes_per_tile(_samples(path), first, last)

def store_sectors(path: Path) -> dict:
    """The global stores of one ncu source-page profile: warp instructions, L2 sectors touched, the ideal count, and
    their share of all warp samples (all, and on lg throttle)."""
    hdr, data = _source_table(path)
    ix = {k: i for i, k in enumerate(hdr)}
    total = sum(_num(r[ix["Warp Stall Sampling (All Samples)"]]) for r in data)
    st = [r for r in data if _opcode(r[ix["Source"]]).startswith("STG")]
    def col(k): return sum(_num(r[ix[k]]) for r in st)
    return {"store instructions": col("Instructions Executed"), "L2 sectors": col("L2 Theoretical Sectors Global"),
            "L2 sectors ideal": col("L2 Theoretical Sectors Global Ideal"),
            "share of samples": col("Warp Stall Sampling (All Samples)") / total, "share on lg throttle": col("stall_lg") / total}


def pipe_utilisation(path: Path) -> list:
    """Nsight Compute's ComputeWorkloadAnalysis line naming the busiest pipeline, per launch of an ncu log:
    [(pipeline, % of elapsed cycles)]."""
    return [(m.group(1), float(m.group(2))) for m in
            re.finditer(r"INF\s+(\w+) is the highest-utilized pipeline \(([\d.]+)%\)", Path(path).read_text())]


# the fp16 builds' mbarriers by shared-memory offset (the group store's as in TF32; CF_XWIN's after its zero row)
MBARRIERS_04B_FP16 = {"0xf820": "the group store's slots (FULL and EMPTY)",
                      "0x2fdc0": "CF_XWIN's windows: staged", "0x2fdd8": "CF_XWIN's windows: read by every warp",
                      # with CF_XWIN_W1 (28 KB less of weights) and CF_GROUP_DOUBLE (two sets of boxes)
                      "0x1f000": "the group store's slots, two sets: FULL (the other slots' rows are in)",
                      "0x1f040": "the group store's slots, two sets: EMPTY (the box's copy has read it)",
                      "0x38600": "CF_XWIN's windows: staged",
                      "0x38618": "CF_XWIN's windows: read by every warp"}


def write_bandwidth(path: Path = WRITE_BW) -> pd.DataFrame:
    """torch's own writes at conv3d's output size (call 2): each operation's times in its runs, and its TB/s (mean)."""
    rows: dict = {}
    for line in Path(path).read_text().splitlines():
        if m := _WRITE_BW.match(line.strip()):
            rows.setdefault(m.group(1).strip(), []).append((float(m.group(2)), float(m.group(3)), float(m.group(4))))
    return pd.DataFrame([{"operation": k, "ms": " / ".join(f"{ms:.3f}" for ms, _, _ in v),
                          "TB/s": sum(t for _, t, _ in v) / len(v), "GB moved": v[0][2]} for k, v in rows.items()]
                        ).set_index("operation")


def store_patterns(log: Path = STORE_PATTERNS, ncu: Path = STORE_PATTERNS_NCU) -> pd.DataFrame:
    """The write rate of each store geometry (call 4): its times in the two rounds, its TB/s (mean), and ncu's L2
    write sectors and DRAM bytes of one launch; `fill_` first, as the floor."""
    runs: dict = {}
    for line in Path(log).read_text().splitlines():
        if m := _PATTERN.match(line.strip()):
            runs.setdefault(m.group(1), []).append(float(m.group(2)))
        elif line.startswith("fill_:"):
            runs.setdefault("fill_", []).append(float(line.split()[1]))
    launches = _ncu_launches(Path(ncu).read_text().splitlines(), WRITE_METRICS, _PATTERN_LAUNCH)
    if len(launches) != len(_PATTERNS_PROFILED):
        raise ValueError(f"{ncu}: {len(launches)} launches for {len(_PATTERNS_PROFILED)} profiled writes")
    prof = dict(zip(_PATTERNS_PROFILED, launches))
    out_bytes = 4.0 * math.prod(P.CONV3D.output_shape())
    rows = []
    for mode, ms in runs.items():
        rows.append({"mode": mode, "what each warp writes": STORE_PATTERN_MODES.get(mode, "torch's fill_ (the floor)"),
                     "ms (two rounds)": " / ".join(f"{t:.3f}" for t in ms),
                     "TB/s": out_bytes / (sum(ms) / len(ms) * 1e-3) / 1e12, **prof.get(mode, {})})
    return pd.DataFrame(rows).set_index("mode")


L2_METRICS = {"gpu__time_duration.sum": "ms (ncu)",
              "dram__sectors_read.sum": "DRAM sectors read",
              "lts__d_sectors_fill_device.sum": "L2 sectors filled from DRAM",
              "lts__t_sectors_srcunit_tex_op_read.sum": "L2 read sectors (SM loads)",
              "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum": "L2 read misses (SM loads)",
              "lts__t_sectors_op_read_lookup_miss.sum": "L2 read misses (all)",
              "lts__t_sectors_op_write_lookup_miss.sum": "L2 write misses (all)",
              "lts__t_sectors_srcunit_ltcfabric.sum": "L2 sectors across the partitions' fabric"}
LAUNCH_METRICS = {"gpu__time_duration.sum": "ms (ncu)",
                  "smsp__sass_inst_executed.sum": "warp instructions",
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "store wavefronts",
                  "dram__bytes_read.sum": "DRAM bytes read",
                  "dram__bytes_write.sum": "DRAM bytes written",
                  "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "global load requests",
                  "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "global load sectors",
                  "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active %",
                  **{f"smsp__average_warps_issue_stalled_{k}_per_issue_active.ratio": f"{k.replace('_', ' ')} stalls per issue"
                     for k in ("long_scoreboard", "short_scoreboard", "wait", "barrier", "mio_throttle")}}


# ncu per-instruction samples of conv3d 04b TF32 at full clock: the default before the turns (10:5x UTC, the day's
# third session), the lean loop, the turns, and the row ring at six warpgroups
SOURCE_04B_TF32 = {"default (no turns)": LOG_DIR_D / "call9" / "ncu_source_conv3d_04b_wgmma_tf32.csv.gz",
                   "CF_LEAN": LOG_DIR_G / "ncu_source_conv3d_04b_tf32_lean.csv.gz",
                   "CF_MMA_ORDER (registered 14:57 to 16:30 UTC)": LOG_DIR_G / "ncu_source_conv3d_04b_tf32_order.csv.gz",
                   "CF_WINDOW, 6 warpgroups": LOG_DIR_G / "ncu_source_conv3d_04b_tf32_window6.csv.gz"}
# ... and the seventh session's: the bulk store's two versions (TF32), and fp16 without and with the first
SOURCE_04B_BULK = {"TF32 as registered then": SOURCE_04B_TF32["CF_MMA_ORDER (registered 14:57 to 16:30 UTC)"],
                   "TF32, bulk, lanes 0-15 issue": LOG_DIR_H / "ncu_source_conv3d_04b_tf32_bulk.csv.gz",
                   "TF32, bulk, lane 0 issues": LOG_DIR_H / "ncu_source_conv3d_04b_tf32_bulk2.csv.gz",
                   "fp16 as registered then": LOG_DIR_H / "ncu_source_conv3d_04b_fp16.csv.gz",
                   "fp16, bulk, lanes 0-15 issue": LOG_DIR_H / "ncu_source_conv3d_04b_fp16_bulk.csv.gz",
                   # the builds of the 16:32 UTC record (turns, bulk store from lane 0, lean loop), at 16:36 UTC
                   "TF32, 16:32 UTC record": LOG_DIR_H / "ncu_source_conv3d_04b_tf32_registered.csv.gz",
                   "fp16, 16:32 UTC record": LOG_DIR_H / "ncu_source_conv3d_04b_fp16_registered.csv.gz"}
# ... and the eighth session's: fp16 as registered at 16:32 UTC against the same with the tensor copy (17:45 UTC)
SOURCE_04B_TMA = {"fp16, row copies (16:32 UTC record)": SOURCE_04B_BULK["fp16, 16:32 UTC record"],
                  "fp16, one tensor copy": LOG_DIR_I / "ncu_source_conv3d_04b_fp16_tma.csv.gz"}

# What each ablation switch removes (kernels/*/04b_implicit_gemm_wgmma.cu, "Ablation knobs")
ABLATION_LABELS = {
    "CF_ABL_NOLOAD": "no global loads (zeros staged)",
    "CF_ABL_NOSTAGE": "no staging (04b: its stores to shared memory; 04c: the producer's conversion)",
    "CF_ABL_NOMMA": "no MMAs (04c: zero accumulators)",
    "CF_ABL_RAWEPI": "no epilogue math (acc + bias stored)",
    "CF_ABL_NOSTORE": "no output stores",
    "CF_ABL_STAGE_ONCE": "first tile staged, its real data multiplied again (no loads or staging after it)",
    "CF_ABL_NOSYNC": "producer: round 0 handed over, then no producer and no handoffs",
    "CF_ABL_NOEPI": "no epilogue and no stores (04d)",
    "CF_ABL_NOLDS": "fragments loaded in a tile's first chunk only (04d)",
}
SKELETON_04B = ("CF_ABL_NOLOAD", "CF_ABL_NOSTAGE", "CF_ABL_RAWEPI", "CF_ABL_NOSTORE")   # all four off: 04b's MMAs alone
_VALUED = ("CF_TH", "CF_WGS", "CF_GROUP", "CF_XBUFS", "CF_L2_PREFETCH", "CF_PUNROLL", "CF_PRODUCER_REGS", "CF_STAGES",
           "CF_PRODUCERS", "CF_RAWS", "CF_RAW_CH", "CF_STAGE_UNROLL", "CF_WINDOW_ROWS", "CF_PRODUCER_SETS",
           "CF_ABL_SKIP_ITEM", "CF_CONSUMERS", "CF_ROWS", "CF_PITCH", "CF_FRAG_SETS", "CF_BOX_ROWS",
           "CF_DWIN_WEIGHT", "CF_EPI_ROLL", "CF_POOL", "CF_3X_SETS")   # knobs that take a number: -DCF_TH=2

_TIMING = re.compile(r"^(conv2d|conv3d) timing, median ms")
_TIME_ROW = re.compile(r"^\s+(\S+)\s+([\d.]+)\s+\(([\d.]+)-([\d.]+)\)")
_CHECK = re.compile(r"^(conv2d|conv3d)/(\S+) \(([\d, ]+)\): max_abs (\S+) rel_l2 (\S+) wrong (\S+) nan (\S+)")


@dataclass(frozen=True)
class Build:
    base: str            # the registered variant it is a build of
    defines: tuple       # ("CF_RAW", "CF_WGS=3"), empty for the registered build

    @property
    def ablations(self) -> tuple:
        return tuple(d for d in self.defines if d.startswith("CF_ABL_"))

    @property
    def only_ablations(self) -> bool:
        """The registered build or parts of it switched off, nothing else changed."""
        return self.ablations == self.defines

    @property
    def label(self) -> str:
        if not self.defines:
            return "full kernel"
        if self.only_ablations:
            if set(self.defines) == set(SKELETON_04B):
                return "MMA skeleton (all four removed)"
            return ", ".join(ABLATION_LABELS[d] for d in self.defines)
        return flags(self.defines)

    @property
    def spelled(self) -> str:
        """The variant and its compiler flags, as a build is named in the session tables: `04b_wgmma_tf32 -DCF_WGS=3`."""
        return " ".join((self.base, flags(self.defines))).strip()


def flags(defines) -> str:
    """A build's defines as compiler flags: -DNAME[=VALUE] added, -UNAME for a registered define left out."""
    return " ".join(f"-U{d[1:]}" if d.startswith("-") else f"-D{d}" for d in defines)


def parse_key(problem: str, key: str) -> Build:
    """A build key of check_variant (registry.with_defines) back into its variant and defines."""
    keys = sorted((v.key for v in [*R.all_variants(problem), *(v for v in R.PREPARED if v.problem == problem)]),
                  key=len, reverse=True)
    base = next((k for k in keys if key == k or re.match(re.escape(k) + "_(no_)?cf_", key)), None)
    if base is None:
        raise ValueError(f"{problem}/{key}: no registered or prepared variant is a prefix of this build key")
    defines = []
    for neg, tok in re.findall(r"_(no_)?cf_(.+?)(?=_(?:no_)?cf_|$)", key[len(base):]):
        name = "CF_" + tok.upper()
        for v in _VALUED:
            m = re.fullmatch(re.escape(v) + r"(\d+)", name)
            if m:
                name = f"{v}={m.group(1)}"
        defines.append(("-" if neg else "") + name)     # "-NAME": a registered define left out
    return Build(base, tuple(defines))


def read_log(path: Path | Run) -> dict:
    """{"timings": DataFrame, "checks": DataFrame} of one check_variant log (of one run of it, for a Run)."""
    timings, checks, problem, runs = [], [], None, -1
    log, nth = (path.log, path.nth) if isinstance(path, Run) else (path, None)
    for line in Path(log).read_text().splitlines():
        if m := _TIMING.match(line):
            runs += 1
            problem = m.group(1) if nth is None or runs == nth else None
            continue
        if problem and (m := _TIME_ROW.match(line)):
            timings.append({"problem": problem, "build": m.group(1), "median_ms": float(m.group(2)),
                            "p20_ms": float(m.group(3)), "p80_ms": float(m.group(4))})
            continue
        problem = None if not line.startswith("  ") else problem
        if m := _CHECK.match(line):
            checks.append({"problem": m.group(1), "build": m.group(2),
                           "shape": tuple(int(s) for s in m.group(3).split(",")),
                           "max_abs": float(m.group(4)), "rel_l2": float(m.group(5)),
                           "wrong": float(m.group(6)), "nan": float(m.group(7))})
    return {"timings": pd.DataFrame(timings), "checks": pd.DataFrame(checks)}


def _of_problem(log: dict, problem: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A read_log result cut to one problem: (timings indexed by build, checks)."""
    t, c = log["timings"], log["checks"]
    t = t[t["problem"] == problem].set_index("build") if len(t) else t
    c = c[c["problem"] == problem] if len(c) else c
    return t, c


def ablation_table(problem: str, variant: str = "04b_wgmma_tf32", log: str = "explore-1") -> pd.DataFrame:
    """The variant with parts switched off, one interleaved run: time, time saved against the full kernel,
    and that saving as a share of the gap between the full kernel and its MMA skeleton."""
    t, _ = _of_problem(read_log(LOGS[log]), problem)
    full = t.loc[variant, "median_ms"]
    rows = []
    for build, r in t.iterrows():
        if build in ("eager", "compile"):
            continue
        b = parse_key(problem, build)
        if b.base != variant or not b.only_ablations:
            continue
        rows.append({"build": b.label, "median ms": r["median_ms"], "p20–p80 ms": f"{r['p20_ms']:.3f}–{r['p80_ms']:.3f}",
                     "saved ms": full - r["median_ms"], "n_removed": len(b.defines)})
    df = pd.DataFrame(rows).sort_values("n_removed")
    gap = full - df["median ms"].min()
    df["share of the gap to the skeleton"] = df["saved ms"] / gap if gap > 0 else float("nan")
    return df.drop(columns="n_removed").set_index("build")


def _builds(path: Path, problem: str):
    """Each timed build of one log but the references: (Build, its timing row, the run's timings, its
    checks' worst rel-L2 and max-abs and their count)."""
    t, chk = _of_problem(read_log(path), problem)
    for build, r in t.iterrows():
        if build in ("eager", "compile"):
            continue
        c = chk[chk["build"] == build] if len(chk) else chk     # a log with timings only (no check lines)
        worst = (c["rel_l2"].max(), c["max_abs"].max()) if len(c) else (float("nan"), float("nan"))
        yield parse_key(problem, build), r, t, (*worst, len(c))


def candidate_table(problem: str, log: str = "explore-1") -> pd.DataFrame:
    """Every non-ablation build of one log against the registered variant it is a build of (same run):
    time, ratio, and its worst errors against float64 over the odd shapes and the full shape."""
    rows = []
    for b, r, t, (rel, mab, n) in _builds(LOGS[log], problem):
        if b.ablations:
            continue
        base_ms = t.loc[b.base, "median_ms"] if b.base in t.index else float("nan")
        rows.append({"variant": b.base, "defines": flags(b.defines) or "(as registered)",
                     "median ms": r["median_ms"], "× its variant's time": r["median_ms"] / base_ms,
                     "× torch.compile's time": r["median_ms"] / t.loc["compile", "median_ms"],
                     "worst rel-L2": rel, "worst max-abs": mab, "shapes checked": n})
    return pd.DataFrame(rows).set_index(["variant", "defines"]) if rows else pd.DataFrame(rows)


def versions_04c(problem: str = "conv2d") -> pd.DataFrame:
    """Step 04c's versions, one explore log each: every build's time in that log's one interleaved run,
    as a ratio to torch.compile's in the same run, and its worst errors against float64. 04c-4 ran the
    committed file; 04c-3's diff is in notes/patches/."""
    rows = []
    for version, (path, what) in VERSIONS_04C.items():
        for b, r, t, (rel, _, _) in _builds(path, problem):
            rows.append({"version": version, "what changed": what, "build": b.spelled,
                         "median ms": r["median_ms"], "× torch.compile's time": r["median_ms"] / t.loc["compile", "median_ms"],
                         "worst rel-L2": rel})
    return pd.DataFrame(rows).set_index(["version", "build"])


# ncu's per-instruction warp-state samples of 04c_ws_3xfp16 at full size (H200, 2026-12-01 05:17 UTC:
# `ncu --section SourceCounters --section WarpStateStats --page source --print-source sass --csv`).
SOURCE_04C = LOG_DIR_04C / "ncu_source_04c_3xfp16.csv.gz"
SOURCE_04C_LD8 = LOG_DIR_04C / "ncu_source_04c_3xfp16_ld8.csv.gz"     # the same with -DCF_LD8, 05:32 UTC
# The same samples for the TF32 build (H200, 2026-12-01 13:1x UTC, full clock): built as in the records (a ring per
# consumer), with half-chunk raw buffers (CF_RAW_CH=4), and with one ring for both consumers (CF_SHARED_RING); and the
# 3xFP16 build with the shared ring, its default since.
SOURCE_04C_TF32 = {"ring per consumer": LOG_DIR_F / "ncu_source_conv2d_04c_ws_tf32.csv.gz",
                   "half-chunk raw buffers": LOG_DIR_F / "ncu_source_conv2d_04c_ws_tf32_rawch4.csv.gz",
                   "shared ring": LOG_DIR_F / "ncu_source_conv2d_04c_ws_tf32_CF_SHARED_RING.csv.gz"}
SOURCE_04C_3XF16_SHARED = LOG_DIR_F / "ncu_source_conv2d_04c_ws_3xfp16.csv.gz"
# The kernel's roles in its SASS, in order: setmaxnreg's allocation starts the consumer path, its
# deallocation the producer's; the consumer's chunk loop ends at the wait for all its MMAs.
ROLE_MARKS = (("USETMAXREG.TRY_ALLOC", "consumer: chunk loop (FULL wait, wgmma issue, stage release)"),
               ("WARPGROUP.DEPBAR.LE gsb0, 0x0", "consumer: combine, range check, epilogue, stores"),
               ("USETMAXREG.DEALLOC", "producer: copies, staging, barriers"))


def _source_table(path: Path, launch: int | None = None) -> tuple[list, list]:
    """The header and rows of an ncu source-page CSV (`--page source --csv`, gzipped or not). A page of several
    launches repeats its header before each: `launch` (from 0) takes that launch's rows alone; None, every row after
    the first header."""
    import csv
    import gzip
    import io

    text = gzip.open(path, "rt").read() if str(path).endswith(".gz") else Path(path).read_text()
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith('"Address"')]
    if launch is None:
        start, end = heads[0], len(lines)
    elif launch < len(heads):
        start, end = heads[launch], (heads[launch + 1] if launch + 1 < len(heads) else len(lines))
    else:
        raise ValueError(f"{path}: {len(heads)} launches on the page, no launch {launch}")
    rows = list(csv.reader(io.StringIO("\n".join(line for line in lines[start:end] if line.startswith('"')))))
    return rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]     # not the next launch's "Kernel Name" line


class _Samples(NamedTuple):
    source: list          # each SASS line's text
    samples: list         # its warp-state samples (all reasons)
    instructions: list    # its executed warp instructions (zeros where the profile did not count them)
    total: float          # all samples of the profile


def _samples(path: Path) -> _Samples:
    """The per-line columns of an ncu source-page profile that the share-of-samples readers below take."""
    return _samples_of(*_source_table(path))


def _samples_of(hdr: list, data: list) -> _Samples:
    i_src, i_all = hdr.index("Source"), hdr.index("Warp Stall Sampling (All Samples)")
    i_ins = hdr.index("Instructions Executed") if "Instructions Executed" in hdr else None
    samples = [_num(r[i_all]) for r in data]
    return _Samples([r[i_src] for r in data], samples,
                    [_num(r[i_ins]) if i_ins is not None else 0.0 for r in data], sum(samples))


def _num(s: str) -> float:
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


def stall_regions(path: Path = SOURCE_04C, marks: tuple = ROLE_MARKS, launch: int | None = None) -> pd.DataFrame:
    """Where the warps of a warp-specialised kernel (04c by default) spend their sampled cycles, by role: each
    region's share of all warp-state samples and its three largest stall reasons (as shares of all samples too); and,
    where the profile counted them, the warp instructions each region executed. `marks`: (SASS text, the region it
    starts), in the order the SASS has them; `launch`: which launch of a page of several (`_source_table`)."""
    hdr, data = _source_table(path, launch)
    p = _samples_of(hdr, data)
    reasons = [(j, h[len("stall_"):]) for j, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]

    region, k, acc = "before the roles (weights, zeroing)", 0, {}
    for r, src, n, ins in zip(data, p.source, p.samples, p.instructions):
        if k < len(marks) and marks[k][0] in src:
            region = marks[k][1]
            k += 1
        a = acc.setdefault(region, {"samples": 0.0, "instructions": 0.0, **{name: 0.0 for _, name in reasons}})
        a["samples"] += n
        a["instructions"] += ins
        for j, name in reasons:
            a[name] += _num(r[j])
    if k < len(marks):
        raise ValueError(f"{path}: SASS marker {marks[k][0]!r} not found; not the profile of the kernel these marks cut")
    total = sum(a["samples"] for a in acc.values())
    out = []
    for name, a in acc.items():
        top = sorted(((v, n) for n, v in a.items() if n not in ("samples", "instructions")), reverse=True)[:3]
        out.append({"region": name, "share of samples": a["samples"] / total,
                    "largest stall reasons": ", ".join(f"{n} {v / total:.1%}" for v, n in top),
                    **({"warp instructions (M)": a["instructions"] / 1e6} if "Instructions Executed" in hdr else {})})
    return pd.DataFrame(out).set_index("region")


def opcodes_between(path: Path, first: str, last: str, launch: int | None = None) -> pd.Series:
    """Executed warp instructions (millions) by opcode (predicate and modifiers dropped) from the SASS line holding
    `first` up to the line holding `last` (excluded): one launch of an ncu source page, largest first."""
    p = _samples_of(*_source_table(path, launch))
    a = next(i for i, s in enumerate(p.source) if first in s)
    b = next(i for i, s in enumerate(p.source) if i > a and last in s)
    ops = _per_opcode(p.source[a:b], p.instructions[a:b])
    return (pd.Series(ops, dtype=float, name="warp instructions (M)") / 1e6).sort_values(ascending=False)


# The row ring (CF_WINDOW) at R = 1 and R = 2 rows per chunk, with the turns and without the bulk store or the lean
# loop (as measured in the sixth session), profiled at 16:4x UTC with the device time left after the record
SOURCE_04B_WINDOW = {"R = 1": LOG_DIR_H / "ncu_source_conv3d_04b_tf32_window_r1.csv.gz",
                     "R = 2": LOG_DIR_H / "ncu_source_conv3d_04b_tf32_window_r2.csv.gz"}
LOGS["seventh: window profiled"] = LOG_DIR_H / "call8_window.log"


def first_use_waits(path: Path) -> float:
    """The share of all warp samples at the staging's first use of the loaded input (the rounding's finite test,
    `FSETP.GEU ... |R|, +INF`): where a load's latency shows when it was issued too late."""
    p = _samples(path)
    return sum(n for src, n in zip(p.source, p.samples) if "FSETP.GEU" in src and "+INF" in src) / p.total


_MBAR = re.compile(r"\[R\d+\+URZ\+(0x[0-9a-f]+)\]")


def mbarrier_waits(path: Path) -> pd.Series:
    """The share of all warp samples at each mbarrier's waits, by the mbarrier's shared-memory offset: its try-wait
    (`SYNCS.PHASECHK`), the branch back that retries it, and its arrivals (`SYNCS.ARRIVE`, where a warp waits for the
    copy before it to have read its buffer). One ncu source-page profile."""
    p = _samples(path)
    out: dict = {}
    last = None
    for src, n in zip(p.source, p.samples):
        m = _MBAR.search(src) if "SYNCS." in src else None
        if m:
            last = m.group(1)
            out[last] = out.get(last, 0.0) + n
        elif last is not None and "BRA" in src and "@!P" in src:     # the try-wait's retry, right after it
            out[last] += n
            last = None
        else:
            last = None
    return (pd.Series(out, dtype=float) / p.total).sort_values(ascending=False)


def turn_waits(path: Path) -> float:
    """The share of all warp samples at the MMA turns' `bar.sync` (the busiest `WARPSYNC.ALL` line: the named barrier a
    warpgroup waits at for its turn, CF_MMA_ORDER). One ncu source-page profile."""
    p = _samples(path)
    return max(n for src, n in zip(p.source, p.samples) if "WARPSYNC.ALL" in src) / p.total


def power_table(path: Path = POWER) -> pd.DataFrame:
    """scripts/power_draw.py's JSON as a table, one row per (kernel, stretch): the median time, the mean and lowest SM
    clock, the mean power, the share of samples the software power cap was active, and cycles per launch (M)."""
    import json
    rows = json.loads(Path(path).read_text())["rows"]
    t = pd.DataFrame(rows).set_index(["kernel", "regime"])
    return t[["median_ms", "clock_mhz", "clock_min_mhz", "power_w", "power_capped", "mcycles"]].rename(columns={
        "median_ms": "median ms", "clock_mhz": "SM clock (MHz)", "clock_min_mhz": "lowest clock (MHz)",
        "power_w": "power (W)", "power_capped": "power-capped samples", "mcycles": "cycles per launch (M)"})


def same_run_ratios(calls: dict, spelled: str, problem: str = "conv3d") -> pd.DataFrame:
    """One build (as session_table spells it) in each call that timed it: its median ms and eager's and
    torch.compile's times over its own, all from the call's one interleaved run (the goals' same-run ratios)."""
    t = call_times(calls, problem)
    return t[t.index.get_level_values("build") == spelled].droplevel("build")


def call_times(calls: dict, problem: str = "conv3d") -> pd.DataFrame:
    """Every build of each call ({call: (log, what it tried)}) with its median ms and eager's and torch.compile's times
    over its own, from the call's one interleaved run: for calls that need not time their variant as registered
    (session_table's ratios need it)."""
    rows = []
    for call, (path, _) in calls.items():
        t, _ = _of_problem(read_log(path), problem)
        for build, r in t.iterrows():
            if build not in ("eager", "compile"):
                rows.append({"call": call, "build": parse_key(problem, build).spelled, "median ms": r["median_ms"],
                             "× eager": t.loc["eager", "median_ms"] / r["median_ms"],
                             "× torch.compile": t.loc["compile", "median_ms"] / r["median_ms"]})
    return pd.DataFrame(rows).set_index(["call", "build"])


def reference_ms(path: Path | Run, row: str = "eager", problem: str = "conv3d") -> float:
    """A reference row's median time (eager or compile) in one call's interleaved run."""
    t, _ = _of_problem(read_log(path), problem)
    return float(t.loc[row, "median_ms"])


def session_table(calls: dict, problem: str = "conv3d") -> pd.DataFrame:
    """One session's calls ({call: (log, what it tried)}) in one table: every build's time in its call's one
    interleaved run, as a ratio to its registered variant as built in that call and to torch.compile."""
    rows = []
    for call, (path, what) in calls.items():
        for b, r, t, (rel, _, n) in _builds(path, problem):
            base_ms = t.loc[b.base, "median_ms"]
            rows.append({"call": call, "what the call tried": what,
                         "build": b.spelled,
                         "median ms": r["median_ms"],
                         "× its variant in the same call": r["median_ms"] / base_ms,
                         "× torch.compile's time": r["median_ms"] / t.loc["compile", "median_ms"], "worst rel-L2": rel})
    return pd.DataFrame(rows).set_index(["call", "build"])


def _opcode(src: str) -> str:
    """A SASS line's opcode with its modifiers (`STS.128`), its predicate dropped; "" for a line without one."""
    words = src.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def _per_opcode(sources, values) -> dict:
    """Per SASS opcode (its first word, predicate and modifiers dropped): the sum of one per-line column."""
    out: dict = {}
    for src, n in zip(sources, values):
        if op := _opcode(src):
            op = op.split(".")[0]
            out[op] = out.get(op, 0.0) + n
    return out


def opcode_shares(path: Path, top: int = 8) -> pd.Series:
    """The share of all warp samples at each SASS opcode (its first word, predicate dropped) in one ncu source-page
    profile, largest first."""
    p = _samples(path)
    out = _per_opcode(p.source, p.samples)
    return (pd.Series(out) / sum(out.values())).sort_values(ascending=False).head(top)


def opcode_instructions(paths: dict) -> pd.DataFrame:
    """Warp instructions per warp tile of conv3d 04b (warp_tiles_04b) by SASS opcode (its first word, predicate and
    modifiers dropped), one column per ncu source-page profile ({name: path}), largest first by the first column."""
    cols = {}
    for name, path in paths.items():
        p = _samples(path)
        cols[name] = _opcodes_per_tile(p, 0, len(p.source) - 1)
    df = pd.DataFrame(cols).fillna(0.0)
    df.index.name = "opcode"
    return df.sort_values(df.columns[0], ascending=False)


def barrier_waits(path: Path) -> dict:
    """Where conv3d 04b's warps wait on barriers, as shares of all warp samples in one ncu source-page profile: at the
    named barriers (the MMA turns' and the warpgroup's `bar.sync`: samples with the barrier stall reason, which ncu
    puts a few instructions after a `BAR.SYNC.DEFER_BLOCKING`), and at the wait for the warpgroup's own wgmmas
    (`WARPGROUP.DEPBAR`, whose stall is also `barrier`)."""
    hdr, data = _source_table(path)
    p = _samples_of(hdr, data)
    j = hdr.index("stall_barrier")
    depbar = [k for k, src in enumerate(p.source) if "WARPGROUP.DEPBAR" in src]
    named = sum(_num(r[j]) for r in data) - sum(_num(data[k][j]) for k in depbar)
    return {"named barriers (turns, warpgroup)": named / p.total,
            "own wgmmas (WARPGROUP.DEPBAR)": sum(p.samples[k] for k in depbar) / p.total}


def bulk_issue_loop(path: Path) -> dict:
    """In a profile of a CF_BULK_STORE build, the compiler's loop over the lanes around the first cp.async.bulk
    (UBLKCP): from the VOTEU.ANY before it to the BRA.U.ANY after it. Its share of all warp samples and its warp
    instructions per warp tile; zeros where the copies issue without such a loop."""
    p = _samples(path)
    first = next(j for j, src in enumerate(p.source) if "UBLKCP" in src)
    end = next((j for j in range(first, min(first + 4, len(p.source))) if "BRA.U.ANY" in p.source[j]), None)
    if end is None:
        return {"share of samples": 0.0, "warp instructions per warp tile": 0.0}
    start = max(j for j in range(first) if "VOTEU.ANY" in p.source[j])
    return {"share of samples": sum(p.samples[start:end + 1]) / p.total,
            "warp instructions per warp tile": sum(p.instructions[start:end + 1]) / warp_tiles_04b()}


STALL_REASONS = ("long_sb", "short_sb", "barrier", "wait", "lg", "mio", "selected")   # ncu: long and short scoreboard, LG and MIO throttle


def warp_tiles_04b() -> int:
    """conv3d 04b's warp tiles at full size: one tile per output row and 62 columns (the kernel's TW), 4 warps each."""
    n, _, do, ho, wo = P.CONV3D.output_shape()
    return n * do * ho * -(-wo // 62) * 4


def shared_wavefronts(path: Path) -> pd.DataFrame:
    """Per SASS opcode of one conv3d 04b source-page profile: shared-memory wavefronts per warpgroup tile as ncu
    counted them and as it says they would be without bank conflicts ("L1 Wavefronts Shared Ideal"), and warp
    instructions per warpgroup tile; opcodes with no shared wavefronts left out. The wgmmas' operand reads count
    here too (HGMMA)."""
    hdr, data = _source_table(path)
    i_src, i_wf, i_ideal, i_ins = (hdr.index(h) for h in ("Source", "L1 Wavefronts Shared",
                                                          "L1 Wavefronts Shared Ideal", "Instructions Executed"))
    out: dict = {}
    for r in data:
        op = _opcode(r[i_src])
        if not op or _num(r[i_wf]) == 0:
            continue
        a = out.setdefault(op, [0.0, 0.0, 0.0])
        for k, j in enumerate((i_wf, i_ideal, i_ins)):
            a[k] += _num(r[j])
    tiles = warp_tiles_04b() // 4
    df = pd.DataFrame.from_dict(out, orient="index", columns=["wavefronts per tile", "ideal per tile",
                                                             "instructions per tile"]) / tiles
    df["× ideal"] = df["wavefronts per tile"] / df["ideal per tile"]
    df.index.name = "opcode"
    return df.sort_values("wavefronts per tile", ascending=False)


def stall_summary(paths: dict = None) -> pd.DataFrame:
    """Per profile of conv3d 04b (ncu --page source, per-instruction samples): warp instructions per warp and tile
    (warp_tiles_04b), and the share of all warp samples in each of the main stall reasons (`selected`: it issued)."""
    out = {}
    for name, path in (paths or SOURCE_04B_TF32).items():
        hdr, data = _source_table(path)

        def col(h):
            j = hdr.index(h)
            return sum(_num(r[j]) for r in data)

        total = col("Warp Stall Sampling (All Samples)")
        out[name] = {"warp instructions per warp tile": col("Instructions Executed") / warp_tiles_04b(),
                     **{f"{x} (share of samples)": col(f"stall_{x}") / total for x in STALL_REASONS}}
    return pd.DataFrame(out).T


def bounds_evidence() -> pd.DataFrame:
    """The measurements behind notebook 04's account of what bounds each Hopper kernel, one row each, read from the
    calls' logs: conv3d 04b TF32's floor (no epilogue math, no stores; twenty-sixth session, call 1), ncu's tensor-pipe
    activity of the registered kernels (call G), and conv2d 04d 3xTF32 part by part (thirty-first session, call K: timed
    only, wrong outputs on purpose), with torch.compile in the same process and the pipe's activity of its skeleton."""
    rows = []
    w1, d3 = "04b_wgmma_tf32", "04d_rs_3xtf32"
    dw26 = session_table(TWENTY_SIXTH)
    floor = f"{w1} -DCF_BOX_ROWMAP -DCF_ABL_RAWEPI -DCF_ABL_NOSTORE"
    for call in ("row order", "row order (again)"):
        rows.append({"kernel": f"conv3d {w1}", "measurement": "its floor: MMAs, staging and handoffs (no epilogue math, "
                     "no stores), ms", "value": dw26.loc[(call, floor), "median ms"], "source": f"twenty-sixth, {call}"})
        rows.append({"kernel": f"conv3d {w1}", "measurement": "the full build in the same run, ms",
                     "value": dw26.loc[(call, f"{w1} -DCF_BOX_ROWMAP"), "median ms"], "source": f"twenty-sixth, {call}"})
    pipe = launch_metrics(*NCU_PIPE_30)
    for build in pipe.index:
        rows.append({"kernel": f"{PIPE_30_PROBLEM[build]} {build}", "measurement": "tensor pipe active (ncu), %",
                     "value": pipe.loc[build, "tensor pipe active (%)"], "source": "thirtieth, call G"})
    t31 = call_times(THIRTY_FIRST, problem="conv2d").loc["ablations"]
    parts = {"the registered build": d3, "without the epilogue's math": f"{d3} -DCF_ABL_RAWEPI",
             "without the fragment loads": f"{d3} -DCF_ABL_NOLDS",
             "its skeleton (no loads, splits or epilogue)": f"{d3} -DCF_ABL_NOLDS -DCF_ABL_NOSPLIT -DCF_ABL_NOEPI"}
    for what, build in parts.items():
        rows.append({"kernel": f"conv2d {d3}", "measurement": f"{what}, ms", "value": t31.loc[build, "median ms"],
                     "source": "thirty-first, call K"})
    skeleton = parts["its skeleton (no loads, splits or epilogue)"]
    rows.append({"kernel": f"conv2d {d3}", "measurement": "torch.compile in the same process, ms",
                 "value": t31.loc[skeleton, "median ms"] * t31.loc[skeleton, "× torch.compile"],
                 "source": "thirty-first, call K"})
    k = launch_metrics(*NCU_THIRTY_FIRST["callK"])
    rows.append({"kernel": f"conv2d {d3}", "measurement": "its skeleton's tensor pipe active (ncu), %",
                 "value": k.loc[skeleton, "tensor pipe active (%)"], "source": "thirty-first, call K"})
    return pd.DataFrame(rows).set_index(["kernel", "measurement", "source"])
