"""conv3d 04b's depth sweep (CF_DWIN): its slab bookkeeping, modelled on the CPU (convfuse.wgmma_model.c3_depth_sweep)."""
import random
from pathlib import Path

import pytest
from test_xwin import run_mbarriers     # the mbarrier interleaving model of the window loop's tests

from convfuse import problems as P
from convfuse import wgmma_model as M


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
    # explore-2026-12-03 calls 1-2: Ho = 7 faulted (illegal instruction) at the copies of odd rows
    assert M.c3_dwin_misaligned_copies((3, 8, 4, 9, 64)) > 0
    assert all(M.c3_dwin_misaligned_copies(s) == 0 for s in SHAPES + [P.CONV3D.input_shape])


def test_the_model_catches_too_few_slots_and_a_unit_of_one_depth():
    hazards = M.c3_depth_sweep((2, 8, 6, 10, 64), 3, slots=5)["hazards"]
    assert hazards                                       # a unit's three new slabs land on a slab still read
    with pytest.raises(AssertionError):
        M.c3_depth_sweep((2, 8, 3, 10, 64), 1)           # Do = 1: the kernel takes the registered loop
    with pytest.raises(AssertionError):
        M.c3_depth_sweep((2, 8, 4, 9, 64), 1)            # Ho odd: so does it (a group's copy 8 bytes off alignment)


@pytest.mark.parametrize("shape,grid,waves,chan", [((2, 8, 5, 8, 64), 3, False, False), ((1, 8, 6, 6, 64), 2, False, False),
                                                   ((3, 8, 5, 8, 64), 4, True, False), ((2, 8, 5, 8, 64), 3, False, True),
                                                   ((3, 8, 5, 8, 64), 4, True, True)])
def test_the_slabs_as_staged_and_read_by_the_descriptors_give_each_tile_its_convolution(shape, grid, waves, chan):
    """chan: CF_DWIN_CHAN's channel quads in place of the 4-channel items."""
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((64, 8, 3, 3, 3)).astype(np.float32)
    seen = set()
    for b in range(grid):
        for (n, od, oh), acc in M.c3_dwin_block_tiles(x, w, grid, b, waves, chan=chan):
            win = x[n, :, od:od + 3, oh:oh + 3, :].astype(np.float64)                # 8 x 3 x 3 x 64
            ref = np.zeros((64, 62))
            for kd in range(3):
                for kh in range(3):
                    for kw in range(3):
                        ref += w[:, :, kd, kh, kw].astype(np.float64) @ win[:, kd, kh, kw:kw + 62]
            assert np.abs(acc - ref).max() < 1e-3, (b, n, od, oh)
            seen.add((n, od, oh))
    assert len(seen) == shape[0] * (shape[2] - 2) * (shape[3] - 2)


@pytest.mark.parametrize("first", [False, True])
def test_channel_quads_cover_each_slab_once_and_their_stores_meet_no_bank_conflict(first):
    cover = {}
    for wg in range(4):
        for tid in range(128):
            for k in range(M.C3_DW_CQ):
                it = M._c3_dw_load_chan_at(wg, tid, k, first, 0)
                if it is not None:
                    cover[it[:5]] = cover.get(it[:5], 0) + 1
    assert len(cover) == (3 if first else 1) * 2 * 4 * 6 * 16 and set(cover.values()) == {1}
    stores = M.c3_dwin_stage_stores(first, chan=True)
    assert all(ins == wf for ins, wf in stores.values())               # one wavefront per scalar store
    assert len(stores) == 4                                           # every warp stages
    # the 4-channel items' 16-byte stores are conflict-free too (rotated): a wavefront per 8 lanes, so a full warp's
    # store takes 4 and warp 1's half-warp slot 2
    items = M.c3_dwin_stage_stores(first, chan=False)
    assert items == ({0: (8, 24), 1: (4, 16), 2: (4, 16), 3: (4, 16)} if first else {0: (4, 16), 1: (4, 8)})


def test_channel_quads_halve_the_busiest_warps_staging_in_a_depth_step():
    items = M.c3_dwin_stage_stores(False, chan=False)                 # 4-channel items: warps 0-1 only
    chan = M.c3_dwin_stage_stores(False, chan=True)
    assert set(items) == {0, 1} and set(chan) == {0, 1, 2, 3}
    # values each lane of the busiest warp loads, rotates and rounds: 16-byte stores carry 4, scalar ones 1
    assert max(4 * ins for ins, _ in items.values()) == 16 and max(ins for ins, _ in chan.values()) == 8


@pytest.mark.parametrize("shape", [(2, 8, 5, 10, 64), (3, 8, 10, 64, 64)])
@pytest.mark.parametrize("grid,waves", [(1, False), (7, True), (132, True)])
def test_the_depth_steps_cursor_finds_the_item_dw_load_would_work_out(shape, grid, waves):
    """CF_DWIN_STEP: a unit's first round works out each thread's depth-step item at depth od + 3 (an offset in the
    image); every depth step loads there and moves it one depth plane on. It must equal CF_DWIN_BRANCH's item."""
    _, _, d, h, w = shape
    do, _, _, total, rnd = M._c3_dw_rounds_of(shape)

    def offset(half, depth, row, quad, oh0):                     # x's offset in image n of (4 half, depth, row, 4 quad)
        return ((4 * half * d + depth) * h + oh0 + row) * w + 4 * quad

    for b in range(grid):
        step = {}
        for q, first in M.c3_dwin_rounds(total, do, grid, b, waves):
            n, od, oh0 = rnd(q)
            for wg in range(4):
                for tid in range(48):
                    if first:
                        _, half, row, quad, _ = M._c3_dw_load_at(wg, tid, 0, False, 0)
                        step[wg, tid] = offset(half, od + 3, row, quad, oh0)
                        continue
                    j, half, row, quad, _ = M._c3_dw_load_at(wg, tid, 0, False, 0)
                    assert j == 0 and step[wg, tid] == offset(half, od + 2, row, quad, oh0)
                    step[wg, tid] += h * w
                assert M._c3_dw_load_at(wg, 48, 0, False, 0) is None    # threads 48-127 have no depth-step item


def _skipped(oh0: int, wg: int) -> bool:
    """CF_DWIN_SKIP's rule, as the round loop writes it: wg < (-oh0) & 3."""
    return wg < ((-oh0) & (M.C3_WGS - 1))


@pytest.mark.parametrize("ho", [4, 6, 8, 10, 30, 62, 64])
def test_the_skipping_pair_holds_exactly_the_rows_the_group_before_computed(ho):
    """CF_DWIN_SKIP: in a plane's last group (oh0 = Ho - 4 when Ho is no multiple of 4) the warpgroups whose rows the
    group before computed skip; the rows the others compute are every row of the plane once. Ho is even (the launch's
    rule), so the skipping warpgroups are 0 and 1, one whole box of two rows (CF_GROUP=2)."""
    _, _, groups, _, rnd = M._c3_dw_rounds_of((1, 8, 3, ho + 2, 64))
    rows = [rnd(g * 1)[2] + wg for g in range(groups) for wg in range(4) if not _skipped(rnd(g)[2], wg)]
    assert sorted(rows) == list(range(ho))
    assert {wg for g in range(groups) for wg in range(4) if _skipped(rnd(g)[2], wg)} == ({0, 1} if ho % 4 else set())


@pytest.mark.parametrize("shape,grid", [(s, g) for s in SHAPES if (s[3] - 2) % 4 for g in (1, 2, 5, 7, 132)
                                        if s[0] > 2 or g < 132] + [(P.CONV3D.input_shape, 132)])
@pytest.mark.parametrize("weight", [24, 40, 64])
def test_the_leftovers_dealt_by_cost_are_each_dealt_with_the_slabs_read_right(shape, grid, weight):
    do, _, groups, total, _ = M._c3_dw_rounds_of(shape)
    grid = min(grid, total // do)
    m = M.c3_depth_sweep(shape, grid, waves=True, weight=weight)
    assert m["wrong reads"] == [] and m["hazards"] == [] and m["out of bounds"] == [] and m["covered"]
    dealt = [q for b in range(grid) for q, _ in M.c3_dwin_rounds(total, do, grid, b, True, groups, weight)]
    assert set(dealt) == set(range(total))       # shares below zero may repeat a round, never drop one


def test_the_leftovers_dealt_by_cost_shorten_the_longest_block_at_the_full_shape():
    # 2,048 units of 14 rounds on 132 blocks, 128 of them a plane's last group of rows; in the full waves blocks
    # 3, 7, .. 131 hold 3 or 4 of those, the others none. Skipping their first pair (a round at half cost, if a round
    # were its MMAs and epilogues) leaves the longest block where it was unless the leftovers go to the cheap blocks.
    s = P.CONV3D.input_shape
    even = M.c3_dwin_block_costs(s, 132, None)
    assert max(even) == 219 and min(even) == 186
    assert max(M.c3_dwin_block_costs(s, 132, None, skip_cost=1.0)) == 219
    weighted = M.c3_dwin_block_costs(s, 132, 32)
    assert max(weighted) == 212 and sum(weighted) == pytest.approx(sum(even))     # nothing dealt twice
    assert max(M.c3_dwin_block_costs(s, 132, 40, skip_cost=0.6)) == pytest.approx(214)


def test_boxes_of_two_rows_store_in_bank_conflicts_that_the_row_order_removes():
    """store_tile_group's st.shared.v2, in half-warp phases: one box of four rows (248 floats a row, 24 banks on) and
    the reordered rows of two (CF_BOX_ROWMAP) take one wavefront per phase, boxes of two rows (124, 28 banks on) two.
    A model of the hardware's phases; measured (explore-2026-12-03e/call1, ncu): shared-store bank conflicts 16.3 M with
    boxes of two rows, 1.25 M with the rows reordered (tests/test_explore.py)."""
    assert M.c3_box_store_wavefronts(4 * 62) == 2
    assert M.c3_box_store_wavefronts(2 * 62) == 4
    assert M.c3_box_store_wavefronts(2 * 62, rowmap=True) == 2
    assert M.c3_box_store_wavefronts(2 * 62, phase=32) == 2      # were a warp one phase, no difference at all


def sweep_group_events(wg, warp, rounds, defer=False, release_late=False):
    """One warp's events in the depth sweep with boxes of two rows (GROUP = 2): its MMA turn (bar.sync on warpgroup
    wg's named barrier, bar.arrive on the next one's, four warps a warpgroup), then the group store: slot 0 waits for
    the box's EMPTY (the last copy has read it), writes its rows, arrives on FULL; slot 1 waits for FULL, writes its
    rows, copies the box out. Without `defer` slot 1 then waits for the copy's reads and arrives on EMPTY; with it
    (CF_GROUP_DEFER) that arrive moves to the next round, right after its turn's bar.arrive (group_release), and with
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
        "asm volatile(\"bar.arrive %0, 256;\\n\" :: \"r\"(1 + WGS + (wg + 1) % DW_WGS) : \"memory\"); "
        "#ifdef CF_GROUP_DEFER if (r > 0) group_release(gbar, wg, warp, lane);",
        "if (wg % GROUP == GROUP - 1 && lane == 0) { #ifndef CF_ABL_NOSTORE bulk_wait_read(); #endif "
        "mbar_arrive(gbar + GBARS + (wg / GROUP) * 4 + warp); }",
        "if (!DEFER) bulk_wait_read();", "if (!DEFER) mbar_arrive(empty);",
        "if (slot < GROUP - 1 && round > 0) mbar_wait(empty, (round - 1) & 1);",
        "store_tile_group<true>(acc, schan, gbuf, gbar, &ymap, g, tc, wg, warp, lane, unsigned(r));",
    ):
        assert expr in src, expr
