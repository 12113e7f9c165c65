"""conv3d 04b FP16's input windows and group stores (kernels/conv3d/04b_implicit_gemm_wgmma.cu), modelled on the CPU.

A block's four warpgroups hold four consecutive output rows in every round, and one window per round holds the input
rows they share, each staged once by one of the block's 512 threads (`win_round`, `win_load`). A wrong item map gives
wrong outputs only on some shapes; a wrong mbarrier phase hangs the GPU. So the kernel's expressions are written out
below, and checked: every row a warpgroup's wgmmas read holds its tile's input, no slot is staged twice, every load is
inside the input; the windows' mbarriers (an arrival count of 16 warps, waits on a phase's parity) never deadlock, never
take an arrival meant for a later phase and never wait on a parity two phases old; the turns are the default loop's.
"""
import itertools
import random
from pathlib import Path

import pytest

from test_mma_turns import _grid, default_turns, run_block

WROWS, WBUFS, THREADS, WIN_ITEMS, WARPS = 8, 3, 512, 2, 16


def walk_of(tile, ho, do):
    """A tile (a whole output row: tiles_x = 1) as (n, od, oh)."""
    plane, oh = divmod(tile, ho)
    return plane // do, plane % do, oh


def win_round(n, od, oh, ho, do, batch):
    k0 = min(4, ho - oh)
    wrap = od + 1 == do
    od1, n1 = (0 if wrap else od + 1), (n + 1 if wrap else n)
    return dict(n0=n, od0=od, oh0=oh, k0=k0, n1=n1, od1=od1, has1=k0 < 4 and n1 < batch)


def win_items(r):
    """Each thread's items of a round: (slot, k-half, quad) -> (n, input depth, input row), as win_load computes them."""
    nr = WROWS if r["k0"] < 4 else 6
    out = {}
    for tid in range(THREADS):
        for k in range(WIN_ITEMS):
            i = tid + THREADS * k
            q, rr = i & 15, i >> 4
            wr = rr & 7 if nr == WROWS else rr % 6
            t = rr >> 3 if nr == WROWS else rr // 6
            dz, half = t % 3, t // 3
            nxt = wr >= r["k0"] + 2
            if not (i < 96 * nr and (not nxt or r["has1"])):
                continue
            n = r["n1"] if nxt else r["n0"]
            row = wr - (r["k0"] + 2) if nxt else r["oh0"] + wr
            key = (dz * WROWS + wr, half, q)
            assert key not in out, f"slot {key} staged twice"
            out[key] = (n, (r["od1"] if nxt else r["od0"]) + dz, row)
    return out


SHAPES = list(itertools.product((1, 2, 3), (1, 2, 3, 5), (3, 4, 5, 6, 7, 12, 62), (1, 2, 3, 132)))


@pytest.mark.parametrize("batch,do,ho,sms", SHAPES)
def test_every_row_a_warpgroup_reads_holds_its_tiles_input(batch, do, ho, sms):
    d, h = do + 2, ho + 2
    tiles = batch * do * ho
    grid = _grid(tiles, 4, sms)
    for block in range(grid):
        t0, stride = block * 4, grid * 4
        for tile_r in range(t0, tiles, stride):
            r = win_round(*walk_of(tile_r, ho, do), ho, do, batch)
            staged = win_items(r)
            assert len(staged) <= THREADS * WIN_ITEMS
            for slot_half_q, (n, i_d, i_h) in staged.items():
                assert n < batch and i_d < d and i_h < h, (slot_half_q, n, i_d, i_h)
            for wg in range(4):
                if tile_r + wg >= tiles:
                    continue
                n, od, oh = walk_of(tile_r + wg, ho, do)
                # the kernel's own tile coordinates: wt.ty + wg, carried into the next plane
                oh_k, od_k, n_k = r["oh0"] + wg, r["od0"], r["n0"]
                if oh_k >= ho:
                    oh_k -= ho
                    od_k += 1
                    if od_k == do:
                        od_k, n_k = 0, n_k + 1
                assert (n_k, od_k, oh_k) == (n, od, oh)
                base = wg + (2 if wg >= r["k0"] else 0)
                for kd, kh, half, q in itertools.product(range(3), range(3), range(2), range(16)):
                    got = staged.get((kd * WROWS + base + kh, half, q))
                    assert got == (n, od + kd, oh + kh), (tile_r, wg, kd, kh, half, q, got)


def window_events(rounds):
    """One warp's mbarrier events over its block's rounds, as the kernel issues them: (kind, barrier, phase)."""
    ev = [("arrive", ("full", r), 0) for r in range(min(2, rounds))]
    for r in range(rounds):
        ev.append(("wait", ("full", r % WBUFS), r // WBUFS))
        ev.append(("use", ("full", r % WBUFS), r // WBUFS + 1))        # the wgmmas read window r
        ev.append(("arrive", ("empty", r % WBUFS), r // WBUFS))
        if r + 2 < rounds:
            b2 = (r + 2) % WBUFS
            if r >= 1:
                ev.append(("wait", ("empty", b2), (r - 1) // WBUFS))
                ev.append(("use", ("empty", b2), (r - 1) // WBUFS + 1))  # staging over round r - 1's window
            ev.append(("arrive", ("full", b2), (r + 2) // WBUFS))
    return ev


def run_mbarriers(streams, rng, arrivals=lambda bar: WARPS):
    """Warps run in a random order; an mbarrier completes a phase at `arrivals(bar)` arrivals (16 for the windows'); a
    "use" (the wgmmas reading a window, the staging writing one) must come after the phases it depends on. Returns "ok"
    or what went wrong."""
    phase, count, pos = {}, {}, [0] * len(streams)
    while True:
        ready = [w for w in range(len(streams)) if pos[w] < len(streams[w])]
        if not ready:
            return "ok" if not any(count.values()) else "arrivals left over"
        rng.shuffle(ready)
        moved = False
        for w in ready:
            kind, bar, k = streams[w][pos[w]]
            c = phase.get(bar, 0)
            if kind == "use":                      # a data access that needs k phases of bar done
                if c < k:
                    return f"race: {bar} used with {c} of its phases done, {k} needed"
            elif kind == "arrive":
                if c != k:
                    return f"arrival for phase {k} while {bar} is in phase {c}"
                count[bar] = count.get(bar, 0) + 1
                if count[bar] == arrivals(bar):
                    phase[bar], count[bar] = c + 1, 0
            else:
                if c >= k + 2:
                    return f"wait on {bar}'s phase {k} when {c} are done: its parity is the current phase's"
                if c == k:
                    continue                       # blocked on try_wait
            pos[w] += 1
            moved = True
            break
        if not moved:
            return "deadlock"


@pytest.mark.parametrize("rounds", (1, 2, 3, 4, 5, 7, 211))
def test_the_windows_mbarriers_never_hang_mix_phases_or_alias_parities(rounds):
    rng = random.Random(rounds)
    for _ in range(3):
        assert run_mbarriers([window_events(rounds) for _ in range(WARPS)], rng) == "ok"


def test_the_mbarrier_model_catches_a_missing_wait():
    """Without the wait for round r - 1's wgmmas, a warp can stage over a window another warp still reads."""
    def no_empty_wait(rounds):
        return [e for e in window_events(rounds) if e[0] != "wait" or e[1][0] != "empty"]
    rng = random.Random(0)
    streams = [window_events(9) for _ in range(WARPS - 1)] + [no_empty_wait(9)]
    results = {run_mbarriers([list(s) for s in streams], rng) for _ in range(20)}
    assert any(r != "ok" for r in results)


@pytest.mark.parametrize("ho,planes,sms", [(ho, p, s) for ho, p, s in itertools.product((3, 5, 12, 62), (1, 2, 5), (1, 3, 132))])
def test_the_windows_turns_are_the_default_loops(ho, planes, sms):
    """The window loop takes a turn in round r if its tile (t0 + r stride + wg) exists, with the default loop's
    expressions: the same events, so test_mma_turns' checks hold for it."""
    tiles = ho * planes
    grid = _grid(tiles, 4, sms)
    for block in range(grid):
        t0, stride = block * 4, grid * 4
        streams = []
        for wg in range(4):
            ev, r = [], 0
            while t0 + r * stride < tiles:
                tile_r = t0 + r * stride
                tile = tile_r + wg
                if tile < tiles:
                    if not (wg == 0 and r == 0):
                        ev.append(("sync", wg))
                    if (tile + 1 < tiles) if wg + 1 < 4 else (tile_r + stride < tiles):
                        ev.append(("arrive", (wg + 1) % 4))
                r += 1
            assert ev == default_turns(block, wg, 4, grid, tiles)
            streams.append(ev)
        assert run_block(streams) == "ok"


def test_the_model_mirrors_the_kernels_expressions():
    src = " ".join((Path(__file__).resolve().parent.parent / "kernels" / "conv3d" / "04b_implicit_gemm_wgmma.cu")
                   .read_text().split())
    for expr in (
        "r.k0 = min(4, g.Ho - w.ty); const bool wrap = w.od + 1 == g.Do; r.od1 = wrap ? 0 : w.od + 1; "
        "r.n1 = wrap ? w.n + 1 : w.n; r.has1 = r.k0 < 4 && r.n1 < g.N;",
        "const int nr = r.k0 < 4 ? WROWS : 6;",
        "const int i = threadIdx.x + THREADS * k, q = i & 15, rr = i >> 4; "
        "const int wr = nr == WROWS ? rr & 7 : rr % 6, t = nr == WROWS ? rr >> 3 : rr / 6; "
        "const int dz = t % 3, half = t / 3; const bool next = wr >= r.k0 + 2;",
        "const int n = next ? r.n1 : r.n0, row = next ? wr - (r.k0 + 2) : r.oh0 + wr; "
        "const unsigned off = ((4u * half * g.D + (next ? r.od1 : r.od0) + dz) * g.H + row) * g.W + 4 * q;",
        "s.at[k] = i < 96 * nr && (!next || r.has1) ? 2 * ((dz * WROWS + wr) * XP + 4 * q) + half : -1;",
        "auto tap_boff = [](int kd, int kh, int kw) -> uint32_t { return ((kd * WROWS + kh) * XP + kw) * 16; };",
        "win_mma_issue(acc, sw, wins + b * WBUF + (wg + (wg >= k0 ? 2 : 0)) * XP * 4, zrow);",
        "TileCoord tc = { wt.n, wt.od, wt.ty + wg, 0 }; if (tc.oh0 >= g.Ho) {",
        "tc.oh0 -= g.Ho; if (++tc.od == g.Do) { tc.od = 0; ++tc.n; }",
        "mbar_wait(wfull + b, (r / WBUFS) & 1);",
        "if (r >= 1) mbar_wait(wempty + b2, ((r - 1) / WBUFS) & 1);",
        "if (!(wg == 0 && r == 0)) turn_wait(wg);",
        "void turn_wait(int wg) { named_sync<TURN_THREADS>(1 + WGS + wg); }",
        "if (wg + 1 < WGS ? tile + 1 < g.tiles : tile_r + stride < g.tiles)",
        "for (int r = 0; r < 2 && r < rounds; ++r) {",
        "g.tiles_x == 1 && a.Ho >= 3 && g.xlean ? conv3d_wgmma_kernel<P, true>",
    ):
        assert expr in src, expr


def group_store_events(wg, warp, rounds, sets, lazy=False):
    """One warp's events at the group store's mbarriers (store_tile_group, GROUP = 4): round r's box is warp's of set
    r % sets; slots 0-2 wait until the box's last copy has read it, write their row and arrive on FULL (3 arrivals); the
    last slot waits for FULL, copies the box out, waits for the copy's reads and arrives on EMPTY (1 arrival). `lazy`
    (the FP16 build's, two sets): it waits only for the last round's copy and frees that box (the other set's)."""
    ev = []
    for r in range(rounds):
        b = (r & 1) * 4 + warp if sets == 2 else warp
        use = r >> 1 if sets == 2 else r
        if wg < 3:
            if use > 0:
                ev.append(("wait", ("empty", b), use - 1))
            ev.append(("use", ("empty", b), use))               # the row into the box: its last copy has read it
            ev.append(("arrive", ("full", b), use))
        else:
            ev.append(("use", ("empty", b), use))
            ev.append(("wait", ("full", b), use))
            ev.append(("use", ("full", b), use + 1))            # the copy: every slot's row is in
            if not lazy:
                ev.append(("arrive", ("empty", b), use))
            elif r > 0:
                ev.append(("arrive", ("empty", b ^ 4), (r - 1) >> 1))
    return ev


@pytest.mark.parametrize("sets,lazy", ((1, False), (2, False), (2, True)))
@pytest.mark.parametrize("rounds", (1, 2, 3, 8, 211))
def test_the_group_stores_boxes_in_one_or_two_sets_never_hang_race_or_alias(sets, lazy, rounds):
    rng = random.Random(rounds * sets + lazy)
    streams = [group_store_events(wg, w, rounds, sets, lazy) for wg in range(4) for w in range(4)]
    for _ in range(3):
        assert run_mbarriers([list(e) for e in streams], rng, lambda bar: 3 if bar[0] == "full" else 1) == "ok"


def test_the_group_store_model_mirrors_the_kernel():
    src = " ".join((Path(__file__).resolve().parent.parent / "kernels" / "conv3d" / "04b_implicit_gemm_wgmma.cu")
                   .read_text().split())
    for expr in (
        "const int b = (FP16 ? (round & 1) * (GBARS<P> / 2) : 0) + (wg / GROUP<P>) * 4 + warp; if (FP16) round >>= 1;",
        "if (slot < GROUP<P> - 1 && round > 0) mbar_wait(empty, (round - 1) & 1);",
        "mbar_wait(full, round & 1);",
        "mbar_init(gbar + threadIdx.x, GROUP<P> - 1);", "mbar_init(gbar + GBARS<P> + threadIdx.x, 1);",
        "bulk_commit(); bulk_wait_read_but_last();",
        "if (!first_round) mbar_arrive(gbar + GBARS<P> + (b ^ (GBARS<P> / 2)));",
    ):
        assert expr in src, expr


def test_the_group_store_model_catches_a_lazy_arrival_on_the_wrong_box():
    """Freeing this round's box (not the other set's) before its copy has read it: slots 0-2 of two rounds on would
    write into a box a copy may still be reading."""
    def wrong(wg, w, rounds):
        ev = group_store_events(wg, w, rounds, 2, lazy=True)
        if wg < 3:
            return ev
        out = []
        for kind, bar, k in ev:
            if kind == "arrive":              # the arrival moved to this round's box, and before the copy
                continue
            out.append((kind, bar, k))
            if kind == "use" and bar[0] == "empty":
                out.append(("arrive", ("empty", bar[1]), k))
        return out
    rng = random.Random(5)
    streams = [wrong(wg, w, 8) for wg in range(4) for w in range(4)]
    results = {run_mbarriers([list(e) for e in streams], rng, lambda bar: 3 if bar[0] == "full" else 1) for _ in range(20)}
    assert any(r != "ok" for r in results)
