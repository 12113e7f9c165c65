"""The handoffs of conv3d 04b's candidates `CF_TMA_STAGE` and `CF_PRODUCER` (kernels/conv3d/04b_implicit_gemm_wgmma.cu),
modelled on the CPU with the turns of `CF_MMA_ORDER` beside them.

A named barrier (`bar.sync` / `bar.arrive`, 256 threads) completes a phase when two warpgroups' 128 threads have
reached it; it does not know which two. If one warpgroup can reach a barrier twice before its partner reaches it once,
it completes a phase with itself: it passes a wait that was meant for another warpgroup's work. `CF_TMA_STAGE` as first
written (one HANDOFF barrier per raw buffer, used in both directions by the two warpgroups sharing the buffer) did
that: it was bitwise equal on the first 8 shapes checked, whose blocks have one or two rounds, and hung on the next,
(3, 8, 10, 64, 64) (H200, 2026-12-02, results/device-logs/explore-2026-12-02c/call4/). Here the schedules the
kernel computes run against a model of named barriers under adversarial orders (each warpgroup in turn allowed to run ahead of the others
as far as it can): a phase completed by one warpgroup alone, a wait never met or an arrival left over fails.
"""
import itertools

import pytest

from test_turns import CASES, _grid


def _turn_events(tile, block, wg, wgs, stride, tiles):
    """CF_MMA_ORDER's turn around one tile (the default loop's expressions, as test_turns models them)."""
    ev = []
    if not (wg == 0 and tile == block * wgs):
        ev.append(("sync", ("turn", wg)))
    if (tile + 1 < tiles) if wg + 1 < wgs else (tile + stride - (wgs - 1) < tiles):
        ev.append(("arrive", ("turn", (wg + 1) % wgs)))
    return ev


def tma_stage_events(block, wg, wgs, grid, tiles, per_direction=True):
    """One warpgroup's named-barrier events in CF_TMA_STAGE's loop: per tile the HANDOFF wait (from its tile's second
    use of the raw buffer on), the HANDOFF arrival (if the block's tile two on exists), then its turn. `per_direction`:
    the kernel now (warpgroup wg arrives at HANDOFF wg and waits at HANDOFF wg ^ 2); False: the version that hung (both
    at HANDOFF wg % 2)."""
    stride, tile, use, ev = grid * wgs, block * wgs + wg, wg >> 1, []
    out = ("handoff", wg if per_direction else wg & 1)
    into = ("handoff", (wg ^ 2) if per_direction else wg & 1)
    while tile < tiles:
        if use > 0:
            ev.append(("sync", into))
        t2 = tile + 2 if wg + 2 < wgs else tile + stride - 2
        if t2 < tiles:
            ev.append(("arrive", out))
        ev += _turn_events(tile, block, wg, wgs, stride, tiles)
        tile += stride
        use += 2
    return ev


def producer_events(block, wgs, grid, tiles):
    """CF_PRODUCER's producer: tiles in the consumers' order; EMPTY(c) waited from c's second tile on, FULL(c) arrived."""
    stride, t, staged, ev = grid * wgs, block * wgs, 0, []
    while t < tiles:
        c = t % wgs
        if staged >= wgs:
            ev.append(("sync", ("empty", c)))
        staged += 1
        ev.append(("arrive", ("full", c)))
        t = t + 1 if t % wgs + 1 < wgs else t + stride - (wgs - 1)
    return ev


def consumer_events(block, wg, wgs, grid, tiles):
    """CF_PRODUCER's consumer wg: FULL waited per tile, its turn, EMPTY arrived if it has a next tile."""
    stride, tile, ev = grid * wgs, block * wgs + wg, []
    while tile < tiles:
        ev.append(("sync", ("full", wg)))
        ev += _turn_events(tile, block, wg, wgs, stride, tiles)
        if tile + stride < tiles:
            ev.append(("arrive", ("empty", wg)))
        tile += stride
    return ev


def run(streams, order):
    """Run a block's warpgroups (lists of events) against 256-thread named barriers, always advancing the first
    warpgroup in `order` that can move (so it runs ahead as far as the barriers let it). Returns "ok", "deadlock",
    "self-paired" (a phase completed by one warpgroup alone) or "left over" (a phase half-reached at the end)."""
    pos = [0] * len(streams)
    half = {}                   # barrier -> the warpgroup that reached it first in the open phase
    blocked = {}                # warpgroup -> the barrier it waits at
    while True:
        w = next((w for w in order if w not in blocked and pos[w] < len(streams[w])), None)
        if w is None:
            if blocked or any(pos[v] < len(s) for v, s in enumerate(streams)):
                return "deadlock"
            return "left over" if half else "ok"
        kind, bar = streams[w][pos[w]]
        pos[w] += 1
        if bar in half:
            first = half.pop(bar)
            if first == w:
                return "self-paired"
            blocked = {v: b for v, b in blocked.items() if b != bar}
        else:
            half[bar] = w
            if kind == "sync":
                blocked[w] = bar


def _orders(n):
    return list(itertools.permutations(range(n)))


def test_the_model_catches_the_tma_stage_version_that_hung_on_the_device():
    # the full conv3d shape: 128 x 14 x 62 = 111,104 tiles, 132 blocks of 4 warpgroups
    wgs, tiles = 4, 128 * 14 * 62
    grid = _grid(tiles, wgs, 132)
    streams = [tma_stage_events(0, w, wgs, grid, tiles, per_direction=False) for w in range(wgs)]
    assert "self-paired" in {run(streams, o) for o in _orders(wgs)}
    fixed = [tma_stage_events(0, w, wgs, grid, tiles) for w in range(wgs)]
    assert {run(fixed, o) for o in _orders(wgs)} == {"ok"}


def test_the_model_predicts_which_shapes_passed_on_the_device_and_which_hung():
    # the call ran the bitwise check over the odd shapes, then problems.bitwise_shapes, in order: the first 8 passed,
    # the 9th, (3, 8, 10, 64, 64), hung (1,488 tiles: 132 blocks of up to 3 rounds)
    from convfuse import problems as P
    shapes = [*P.CONV3D.odd_shapes, *P.CONV3D.bitwise_shapes][:9]
    wgs = 4
    for i, shape in enumerate(shapes):
        n, _, d, h, w = shape
        tiles = n * (d - 2) * (h - 2) * -(-(w - 2) // 62)
        grid = _grid(tiles, wgs, 132)
        got = set()
        for block in range(grid):
            streams = [tma_stage_events(block, v, wgs, grid, tiles, per_direction=False) for v in range(wgs)]
            got |= {run(streams, o) for o in _orders(wgs)}
        assert (got == {"ok"}) if i < 8 else ("self-paired" in got), shape


@pytest.mark.parametrize("wgs,ho,planes,sms", [c for c in CASES if c[0] == 4])
def test_tma_stage_handoffs_never_hang_pair_wrongly_or_leave_an_arrival(wgs, ho, planes, sms):
    tiles = ho * planes
    grid = _grid(tiles, wgs, sms)
    for block in range(grid):
        streams = [tma_stage_events(block, w, wgs, grid, tiles) for w in range(wgs)]
        assert {run(streams, o) for o in _orders(wgs)} == {"ok"}


@pytest.mark.parametrize("wgs,ho,planes,sms", [c for c in CASES if c[0] == 4])
def test_producer_handoffs_never_hang_pair_wrongly_or_leave_an_arrival(wgs, ho, planes, sms):
    tiles = ho * planes
    grid = _grid(tiles, wgs, sms)
    for block in range(grid):
        streams = [consumer_events(block, w, wgs, grid, tiles) for w in range(wgs)]
        streams.append(producer_events(block, wgs, grid, tiles))
        for o in _orders(wgs + 1)[::7]:           # a spread of the 120 orders, each warpgroup first in some
            assert run(streams, o) == "ok", o


def test_the_model_mirrors_the_kernels_expressions():
    """The schedules above are the kernel's, expression for expression: if the kernel's change, this fails until the
    model is changed with them."""
    from pathlib import Path
    src = " ".join((Path(__file__).resolve().parent.parent / "kernels" / "conv3d" / "04b_implicit_gemm_wgmma.cu")
                   .read_text().split())
    for expr in (
        # CF_TMA_STAGE
        'if (use > 0) asm volatile("bar.sync %0, 256;\\n" :: "r"(1 + 2 * WGS + (wg ^ 2)) : "memory");',
        "const int t2 = wg + 2 < WGS ? tile + 2 : tile + stride - 2;",
        'asm volatile("bar.arrive %0, 256;\\n" :: "r"(1 + 2 * WGS + wg) : "memory");',
        "for (unsigned use = wg >> 1; tile < g.tiles; tile += stride, use += 2) {",
        # CF_PRODUCER
        'if (staged++ >= WGS) asm volatile("bar.sync %0, %1;\\n" :: "r"(1 + 2 * WGS + c), "n"(256) : "memory");',
        'asm volatile("bar.arrive %0, %1;\\n" :: "r"(1 + c), "n"(256) : "memory");',
        "auto next = [&](int t) { return t % WGS + 1 < WGS ? t + 1 : t + stride - (WGS - 1); };",
        'if (tile + stride < g.tiles) asm volatile("bar.arrive %0, %1;\\n" :: "r"(1 + 2 * WGS + wg), "n"(256) : "memory");',
    ):
        assert expr in src, expr
