"""conv3d 04b's schedules, modelled on the CPU (convfuse/schedules.py): its output runs and the DRAM sectors they share,
the input rows a round stages, and the TF32 build's depth sweep (the rounds each block takes, the slab ring and the
descriptors that read it, the group stores' boxes of two rows and their mbarriers)."""
import random
from pathlib import Path

import numpy as np
import pytest
from test_input_window import run_mbarriers     # the mbarrier interleaving model

from convfuse import problems as P
from convfuse import schedules as M
from convfuse import wgmma_layouts as L


def test_conv3d_output_runs_share_sectors_unless_four_rows_go_out_together():
    # 04b's output geometry: 62-pixel rows (248 B) end inside a 32-byte sector at three of every four row ends; a
    # block's four consecutive rows (the group stores) are 992 B starting on a sector
    shape = P.CONV3D.output_shape()
    one = M.c3_store_runs(shape, group=1)
    assert len(one) == shape[0] * shape[2] * shape[3] and {b for _, b in one} == {248}
    assert M.shared_sectors(one) == pytest.approx(0.75, abs=1e-3)
    four = M.c3_store_runs(shape, group=4)
    assert {b for _, b in four} == {992} and M.shared_sectors(four) == 0.0
    assert sum(b for _, b in four) == sum(b for _, b in one)         # every row written once
    two = M.c3_store_runs(shape, group=2)
    assert {b for _, b in two} == {496} and M.shared_sectors(two) == pytest.approx(0.5, abs=1e-3)
    # a shape whose planes hold 2 x 3 rows: groups of 4 cross images and fall back to single rows
    odd = M.c3_store_runs((2, 64, 2, 3, 62), group=4)
    assert {b for _, b in odd} == {248}


def test_a_window_shared_by_a_blocks_round_stages_half_the_input_rows():
    # the FP16 build's input window: a block's 4 warpgroups hold 4 consecutive output rows, which read 6 input rows per
    # depth between them (18) instead of 4 x 9 = 36; 24 when the 4 rows cross a plane
    r = M.c3_staged_rows(P.CONV3D.output_shape())
    assert r["rows staged per tile"] == 9 * 128 * 14 * 62
    assert r["widest window"] == 24
    assert r["rounds crossing a plane"] == pytest.approx(1 / 31)        # Ho = 62: every other plane starts mid-group
    assert r["rows staged per shared window"] == pytest.approx(r["rows staged per tile"] * (18 * 30 + 24) / (36 * 31), rel=1e-3)
    assert M.c3_staged_rows((2, 64, 2, 3, 62))["rounds crossing a plane"] == 1.0   # 3 rows per plane: every round


SHAPES = [(1, 8, 4, 6, 64), (2, 8, 5, 10, 64), (3, 8, 4, 8, 64), (2, 8, 6, 10, 64), (3, 8, 10, 64, 64),
          (2, 8, 16, 64, 64)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("grid", [1, 2, 5, 7, 132])
@pytest.mark.parametrize("waves", [False, True])
def test_every_round_reads_its_own_depths_and_no_slot_is_written_under_a_reader(shape, grid, waves):
    rounds = shape[0] * -(-(shape[3] - 2) // 4) * (shape[2] - 2)
    m = M.c3_depth_sweep(shape, min(grid, rounds), waves=waves)
    assert m["wrong reads"] == [] and m["hazards"] == [] and m["out of bounds"] == [] and m["covered"]


def test_the_full_shape_stages_a_fifth_of_the_registered_items_in_balanced_ranges():
    m = M.c3_depth_sweep(P.CONV3D.input_shape, 132)
    assert not (m["wrong reads"] or m["hazards"] or m["out of bounds"]) and m["covered"]
    n, _, d, h, _ = P.CONV3D.input_shape
    registered = n * (d - 2) * (h - 2) * 3 * 3            # 9 rows per tile (one output row)
    ratio = 6 * m["slabs staged"] / registered           # 6 rows per slab
    assert 0.19 < ratio < 0.20 and m["rounds per block"] == 218   # 28,672 rounds over 132 blocks: 217 or 218


def test_waves_deal_whole_units_round_robin_then_split_the_rest_by_rounds():
    n, _, d, h, _ = P.CONV3D.input_shape
    do, total = d - 2, n * 16 * (d - 2)                  # 2,048 units of 14 rounds
    blocks = [M.c3_dwin_rounds(total, do, 132, b, waves=True) for b in range(132)]
    qs = sorted(q for bl in blocks for q, _ in bl)
    assert qs == list(range(total)) and max(map(len, blocks)) <= 219 and min(map(len, blocks)) >= 216
    b7 = [q for q, _ in blocks[7]]
    assert b7[:do] == list(range(7 * do, 8 * do)) and b7[do] == (7 + 132) * do   # wave 1: unit 7 + 132
    firsts = [(r, q) for r, (q, f) in enumerate(blocks[7]) if f]
    assert [r for r, _ in firsts[:16]] == [i * do for i in range(16)]   # 15 whole units, then the leftover rounds
    assert all(q % do == 0 for _, q in firsts[16:])      # after which a unit's start
    m = M.c3_depth_sweep(P.CONV3D.input_shape, 132, waves=True)
    assert not (m["wrong reads"] or m["hazards"] or m["out of bounds"]) and m["covered"]


def test_the_sweep_takes_only_shapes_whose_group_copies_are_aligned():
    # on the H200 an odd Ho faulted (illegal instruction) at the copies of odd rows
    assert M.c3_dwin_misaligned_copies((3, 8, 4, 9, 64)) > 0
    assert all(M.c3_dwin_misaligned_copies(s) == 0 for s in SHAPES + [P.CONV3D.input_shape])


def test_the_model_catches_too_few_slots_and_a_unit_of_one_depth():
    hazards = M.c3_depth_sweep((2, 8, 6, 10, 64), 3, slots=5)["hazards"]
    assert hazards                                       # a unit's three new slabs land on a slab still read
    with pytest.raises(AssertionError):
        M.c3_depth_sweep((2, 8, 3, 10, 64), 1)           # Do = 1: the kernel takes the registered loop
    with pytest.raises(AssertionError):
        M.c3_depth_sweep((2, 8, 4, 9, 64), 1)            # Ho odd: so does it (a group's copy 8 bytes off alignment)


@pytest.mark.parametrize("shape,grid,waves", [((2, 8, 5, 8, 64), 3, False), ((1, 8, 6, 6, 64), 2, False),
                                              ((3, 8, 5, 8, 64), 4, True)])
def test_the_slabs_as_staged_and_read_by_the_descriptors_give_each_tile_its_convolution(shape, grid, waves):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((64, 8, 3, 3, 3)).astype(np.float32)
    seen = set()
    for b in range(grid):
        for (n, od, oh), acc in M.c3_dwin_block_tiles(x, w, grid, b, waves):
            win = x[n, :, od:od + 3, oh:oh + 3, :].astype(np.float64)                # 8 x 3 x 3 x 64
            ref = np.zeros((64, 62))
            for kd in range(3):
                for kh in range(3):
                    for kw in range(3):
                        ref += w[:, :, kd, kh, kw].astype(np.float64) @ win[:, kd, kh, kw:kw + 62]
            assert np.abs(acc - ref).max() < 1e-3, (b, n, od, oh)
            seen.add((n, od, oh))
    assert len(seen) == shape[0] * (shape[2] - 2) * (shape[3] - 2)


def test_boxes_of_two_rows_store_in_bank_conflicts_that_the_row_order_removes():
    """store_tile_group's st.shared.v2, in half-warp phases: one box of four rows (248 floats a row, 24 banks on) and
    the kernel's reordered rows of two take one wavefront per phase, boxes of two rows (124, 28 banks on) in channel
    order two. A model of the hardware's phases; measured on the H200 (ncu): shared-store bank conflicts 16.3 M with
    boxes of two rows in channel order, 1.25 M with the rows reordered."""
    assert L.c3_box_store_wavefronts(4 * 62) == 2
    assert L.c3_box_store_wavefronts(2 * 62) == 4
    assert L.c3_box_store_wavefronts(2 * 62, rowmap=True) == 2
    assert L.c3_box_store_wavefronts(2 * 62, phase=32) == 2      # were a warp one phase, no difference at all


def sweep_group_events(wg, warp, rounds, defer=False, release_late=False):
    """One warp's events in the depth sweep with boxes of two rows (GROUP = 2): its MMA turn (bar.sync on warpgroup
    wg's named barrier, bar.arrive on the next one's, four warps a warpgroup), then the group store: slot 0 waits for
    the box's EMPTY (the last copy has read it), writes its rows, arrives on FULL; slot 1 waits for FULL, writes its
    rows, copies the box out. Without `defer` slot 1 then waits for the copy's reads and arrives on EMPTY; with it
    (the kernel's) that arrive moves to the next round, right after its turn's bar.arrive (group_release), and with
    `release_late` (a wrong placement, for the negative test) to the end of its next round's store."""
    slot, b = wg % 2, (wg // 2) * 4 + warp
    ev = []
    for r in range(rounds):
        if not (wg == 0 and r == 0):
            ev.append(("wait", ("turn", wg), r if wg > 0 else r - 1))
        if wg + 1 < 4 or r + 1 < rounds:
            ev.append(("arrive", ("turn", (wg + 1) % 4), r))
        if defer and not release_late and slot == 1 and r > 0:
            ev.append(("arrive", ("empty", b), r - 1))
        if slot == 0:
            if r > 0:
                ev.append(("wait", ("empty", b), r - 1))
            ev.append(("use", ("empty", b), r))                 # its rows into the box: the last copy has read it
            ev.append(("arrive", ("full", b), r))
        else:
            ev.append(("use", ("empty", b), r))                 # its own rows: its own last copy has read the box
            ev.append(("wait", ("full", b), r))
            ev.append(("use", ("full", b), r + 1))              # the copy: both slots' rows are in
            if not defer:
                ev.append(("arrive", ("empty", b), r))
            elif release_late and r > 0:
                ev.append(("arrive", ("empty", b), r - 1))
    return ev


def _sweep_block(rounds, **kw):
    streams = [sweep_group_events(wg, w, rounds, **kw) for wg in range(4) for w in range(4)]
    return {run_mbarriers([list(s) for s in streams], random.Random(seed), lambda bar: 4 if bar[0] == "turn" else 1)
            for seed in range(5)}


@pytest.mark.parametrize("rounds", (1, 2, 3, 8, 57))
@pytest.mark.parametrize("defer", (False, True))
def test_the_sweeps_boxes_of_two_rows_never_hang_or_race_with_the_release_deferred_or_not(rounds, defer):
    assert _sweep_block(rounds, defer=defer) == {"ok"}


def test_the_sweep_model_catches_a_release_after_the_next_store():
    """Freeing the box only after the next round's store: slot 1 writes its next rows before its own copy has read the
    box (and slot 0 waits for an EMPTY that comes only after slot 1's next copy): the model must find it, in every
    interleaving it tries."""
    found = _sweep_block(4, defer=True, release_late=True)
    assert "ok" not in found and all(f.startswith(("race", "deadlock")) for f in found)


def test_the_sweep_model_mirrors_the_kernels_deferred_release():
    src = " ".join((Path(__file__).resolve().parent.parent / "kernels" / "conv3d" / "04b_implicit_gemm_wgmma.cu")
                   .read_text().split())
    for expr in (
        "if (wg + 1 < WGS || r + 1 < rounds) turn_pass((wg + 1) % WGS); if (r > 0) group_release<P>(gbar, wg, warp, lane);",
        "void turn_pass(int to) { named_arrive<TURN_THREADS>(1 + WGS + to); }", "constexpr int TURN_THREADS = 2 * 128;",
        "if (wg % GROUP<P> == GROUP<P> - 1 && lane == 0) { bulk_wait_read(); mbar_arrive(gbar + GBARS<P> + (wg / GROUP<P>) * 4 + warp); }",
        "if (!DEFER) bulk_wait_read();", "if (!DEFER) mbar_arrive(empty);",
        "if (slot < GROUP<P> - 1 && round > 0) mbar_wait(empty, (round - 1) & 1);",
        "store_tile_group<P, true>(acc, schan, gbuf, gbar, ymap, g, tc, wg, warp, lane, unsigned(r));",
    ):
        assert expr in src, expr
