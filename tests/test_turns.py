"""The turn-taking of conv3d 04b's `CF_MMA_ORDER` (kernels/conv3d/04b_implicit_gemm_wgmma.cu), modelled on the CPU.

A block's warpgroups issue their MMAs in turn: before its turn a warpgroup waits at its ORDER barrier (`bar.sync`,
256 threads: itself and the warpgroup that passes the turn), after issuing it passes the turn on (`bar.arrive` at the
next one's barrier) unless that one has no turn left. A mistake here hangs the GPU (the first window version did, on
the device, 2026-12-01), so the schedules the kernel computes are written out below, expression for expression, and
run against a model of named barriers: every wait must be met by exactly one arrive, and no arrive may be left over.
"""
import itertools

import pytest


def default_turns(block, wg, wgs, grid, tiles, contiguous=False):
    """The default loop's turns: a tile per round, tiles dealt block-major (tile += grid * wgs); with `contiguous`
    (CF_DEAL_CONTIG) block b takes the rounds [b rpb, (b + 1) rpb) instead (tile += wgs, up to its range's end)."""
    if contiguous:
        rpb = -(-(-(-tiles // wgs)) // grid)
        stride, tile0 = wgs, block * rpb * wgs
        tend = min(tiles, tile0 + rpb * wgs)
    else:
        stride, tile0, tend = grid * wgs, block * wgs, tiles
    tile, first, events = tile0 + wg, True, []
    while tile < tend:
        pass_ = tile + 1 < tend if wg + 1 < wgs else tile + stride - (wgs - 1) < tend
        if not (wg == 0 and tile == tile0):
            events.append(("sync", wg))
        if pass_:
            events.append(("arrive", (wg + 1) % wgs))
        first = False
        tile += stride
    return events


def window_turns(block, wg, wgs, grid, chunks, rows):
    """CF_WINDOW's turns: `rows` steps per chunk (idle ones past a short chunk's end), chunks dealt block-major."""
    nwg, q, i, first, events = grid * wgs, block * wgs + wg, 0, True, []
    while q < chunks:
        to_next, alone = wg + 1 < wgs and q + 1 < chunks, wg == 0 and q + 1 >= chunks
        to = wg + 1 if to_next else 0
        pass_ = not alone and (to_next or i + 1 < rows or q - wg + nwg < chunks)
        wait = not (wg == 0 and first) and not (alone and i > 0)
        if wait:
            events.append(("sync", wg))
        if pass_:
            events.append(("arrive", to))
        first = False
        i += 1
        if i == rows:
            i, q = 0, q + nwg
    return events


def window_turns_first_version(block, wg, wgs, grid, chunks, rows):
    """The version that hung on the H200: the last warpgroup always passed to warpgroup 0, the others to wg + 1 (so
    in a round where only warpgroups 0..m-1 have a chunk, warpgroup 0's second step waited for warpgroup 3)."""
    nwg, q, i, first, events = grid * wgs, block * wgs + wg, 0, True, []
    while q < chunks:
        pass_ = q + 1 < chunks if wg + 1 < wgs else (i + 1 < rows or q + nwg - (wgs - 1) < chunks)
        if not (first and wg == 0):
            events.append(("sync", wg))
        if pass_:
            events.append(("arrive", (wg + 1) % wgs))
        first = False
        i += 1
        if i == rows:
            i, q = 0, q + nwg
    return events


def run_block(streams):
    """Run one block's warpgroups (lists of events) against 256-thread named barriers, 128 threads per warpgroup.
    Returns "ok", "deadlock", "unmatched arrive" or "self arrive"."""
    pos = [0] * len(streams)
    count = {}                 # barrier -> warpgroups arrived or waiting (0 or 1 between completions)
    waiting = {}               # barrier -> the warpgroup blocked in bar.sync there
    blocked = set()
    while True:
        progressed = False
        for w, ev in enumerate(streams):
            if w in blocked or pos[w] == len(ev):
                continue
            kind, bar = ev[pos[w]]
            pos[w] += 1
            progressed = True
            if kind == "arrive" and bar == w:
                return "self arrive"              # the PTX ISA does not promise what a warp arriving twice does
            if count.get(bar, 0) == 1:            # the second 128 threads: the barrier completes
                count[bar] = 0
                if bar in waiting:
                    blocked.discard(waiting.pop(bar))
                elif kind == "arrive":
                    return "unmatched arrive"     # two arrives and nobody waiting: a turn passed into the void
            else:
                count[bar] = 1
                if kind == "sync":
                    waiting[bar] = w
                    blocked.add(w)
        if not progressed:
            if any(pos[w] < len(ev) for w, ev in enumerate(streams)) or blocked:
                return "deadlock"
            return "ok" if not any(count.values()) else "unmatched arrive"


def _grid(tiles, wgs, sms):
    return max(1, min(sms, -(-tiles // wgs)))       # cf_persistent_grid: one block per SM, no more than needed


CASES = list(itertools.product((4, 5, 6), (1, 2, 3, 5, 12, 62), (1, 2, 5), (1, 2, 3, 132)))


@pytest.mark.parametrize("wgs,ho,planes,sms", CASES)
def test_the_default_loops_turns_never_hang_nor_leave_an_arrive(wgs, ho, planes, sms):
    tiles = ho * planes
    grid = _grid(tiles, wgs, sms)
    for block in range(grid):
        assert run_block([default_turns(block, w, wgs, grid, tiles) for w in range(wgs)]) == "ok"


@pytest.mark.parametrize("wgs,ho,planes,sms", CASES)
def test_the_contiguous_dealings_turns_never_hang_nor_leave_an_arrive(wgs, ho, planes, sms):
    tiles = ho * planes
    grid = _grid(tiles, wgs, sms)
    for block in range(grid):
        assert run_block([default_turns(block, w, wgs, grid, tiles, contiguous=True) for w in range(wgs)]) == "ok"


@pytest.mark.parametrize("wgs,ho,planes,sms", CASES)
@pytest.mark.parametrize("rows", (1, 2, 3, 8))
def test_the_window_loops_turns_never_hang_nor_leave_an_arrive(wgs, ho, planes, sms, rows):
    tiles, chunks = ho * planes, planes * -(-ho // rows)
    grid = _grid(tiles, wgs, sms)                      # the launch sizes the grid by tiles, not chunks
    for block in range(grid):
        assert run_block([window_turns(block, w, wgs, grid, chunks, rows) for w in range(wgs)]) == "ok"


def test_the_model_catches_the_version_that_hung_on_the_device():
    # conv3d odd shape (1, 8, 7, 39, 55): Do 5, Ho 37 -> 185 tiles, 95 two-row chunks; 47 blocks of 4 warpgroups
    wgs, tiles, chunks = 4, 185, 5 * 19
    grid = _grid(tiles, wgs, 132)
    results = {run_block([window_turns_first_version(b, w, wgs, grid, chunks, 2) for w in range(wgs)])
               for b in range(grid)}
    assert "deadlock" in results
    assert all(run_block([window_turns(b, w, wgs, grid, chunks, 2) for w in range(wgs)]) == "ok" for b in range(grid))


def test_the_model_mirrors_the_kernels_expressions():
    """The schedules above are the kernel's, expression for expression: if the kernel's change, this fails until the
    model is changed with them (and then the tests above run the new schedule)."""
    from pathlib import Path
    src = " ".join((Path(__file__).resolve().parent.parent / "kernels" / "conv3d" / "04b_implicit_gemm_wgmma.cu")
                   .read_text().split())
    for expr in (
        # default loop: waits unless warpgroup 0's first tile; passes to wg + 1, or to warpgroup 0 a round on
        "mma_ordered(acc, sw, sx, wg, !(wg == 0 && tile == CF_TILE0), "
        "wg + 1 < WGS ? tile + 1 < CF_TEND : tile + stride - (WGS - 1) < CF_TEND, (wg + 1) % WGS);",
        # the dealing: registered, and CF_DEAL_CONTIG's contiguous rounds
        "const int stride = gridDim.x * WGS; #define CF_TILE0 (blockIdx.x * WGS) #define CF_TEND g.tiles",
        "const int stride = WGS; const int tile0 = blockIdx.x * g.rpb * WGS, tend = min(g.tiles, tile0 + g.rpb * WGS);",
        "g.rpb = (rounds + grid - 1) / grid;", "for (; tile < CF_TEND; tile += stride) {",
        # window loop
        "const bool to_next = wg + 1 < WGS && q + 1 < chunks, alone = wg == 0 && q + 1 >= chunks;",
        "const int to = to_next ? wg + 1 : 0;",
        "const bool pass = !alone && (to_next || i + 1 < CF_WINDOW_ROWS || q - wg + nwg < chunks);",
        "const bool wait = !(wg == 0 && first) && !(alone && i > 0);",
    ):
        assert expr in src, expr
