"""The turn-taking of conv3d 04b's warpgroups (kernels/conv3d/04b_implicit_gemm_wgmma.cu), modelled on the CPU.

A block's warpgroups issue their MMAs in turn: before its turn a warpgroup waits at its ORDER barrier (`bar.sync`,
256 threads: itself and the warpgroup that passes the turn), after issuing it passes the turn on (`bar.arrive` at the
next one's barrier) unless that one has no turn left. A mistake here hangs the GPU, so the schedules the kernel
computes are written out below, expression for expression, and run against a model of named barriers: every wait
must be met by exactly one arrive, and no arrive may be left over.
"""
import itertools

import pytest


def default_turns(block, wg, wgs, grid, tiles):
    """The default loop's turns: a tile per round, tiles dealt block-major (tile += grid * wgs)."""
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


def test_the_model_mirrors_the_kernels_expressions():
    """The schedules above are the kernel's, expression for expression: if the kernel's change, this fails until the
    model is changed with them (and then the tests above run the new schedule)."""
    from pathlib import Path
    src = " ".join((Path(__file__).resolve().parent.parent / "kernels" / "conv3d" / "04b_implicit_gemm_wgmma.cu")
                   .read_text().split())
    for expr in (
        # the tile loop: waits unless warpgroup 0's first tile; passes to wg + 1, or to warpgroup 0 a round on
        "mma_ordered<P>(acc, sw, sx, wg, !(wg == 0 && tile == tile0), "
        "wg + 1 < WGS ? tile + 1 < g.tiles : tile + stride - (WGS - 1) < g.tiles, (wg + 1) % WGS);",
        # the dealing: block-major
        "const int stride = gridDim.x * WGS;", "const unsigned tile0 = blockIdx.x * WGS;", "int tile = tile0 + wg;",
        "for (; tile < g.tiles; tile += stride) {",
    ):
        assert expr in src, expr
