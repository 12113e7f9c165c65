"""Schedules of conv3d 04b (kernels/conv3d/04b_implicit_gemm_wgmma.cu), modelled on the CPU: how its output rows
go out (runs of y, and how many of them share a DRAM sector), how many input rows a block's round stages (a tile's own
3 x 3 or one window the round's warpgroups share, the FP16 build's), and the TF32 build's depth sweep: the rounds each
block takes, which slab of input depths each round stages into which slot of the ring, and which slots each round's
wgmmas read, with an emulation that computes the convolution through the ring's byte image and the descriptors.
tests/test_schedules.py checks them, and where a mistake would hang the GPU the mbarrier and named-barrier models in
tests/ (test_mma_turns.py, test_input_window.py) check the phases.
"""
from __future__ import annotations

import numpy as np

from .wgmma_layouts import C3_TAPS, C3_XD, C3_XH, C3_XW, COUT, operand

# conv3d 04b's output writes (store_tile_tma, store_tile_group): a tile is one output row of 62
# pixels (C3_TW) for all 64 channels; tiles are dealt block-major, tile = (block + k * grid) * WGS + wg, so in round k a
# block's warpgroups hold WGS consecutive tiles. Each channel's output row is one run of y; the group stores write the
# rows of GROUP consecutive warpgroups of a block as one run when they are the same planes' consecutive rows.
C3_TW, C3_WGS = C3_XW - 2, 4
C3_KS = 3                            # the kernel's extent in each dimension


def c3_store_runs(shape, group: int = 1, sms: int = 132) -> list:
    """Every run of one channel plane that conv3d 04b's output copies write at the full width (Wo = C3_TW), as
    (first byte within the plane, bytes), for groups of `group` warpgroups (1: a tile's own row; a group that is not
    whole, or crosses an image, falls back to its rows one by one, as the kernel's plain stores)."""
    n, _, do, ho, wo = shape
    assert wo == C3_TW, "whole-row tiles only"
    tiles, rows_per_image = n * do * ho, do * ho
    grid = min(sms, -(-tiles // C3_WGS))
    runs = []
    for block in range(grid):
        for base in range(block * C3_WGS, tiles, grid * C3_WGS):
            for first in range(base, base + C3_WGS, group):
                whole = (first + group <= tiles and first // rows_per_image == (first + group - 1) // rows_per_image
                         and rows_per_image % group == 0)
                members = [first] if whole else range(first, min(first + group, tiles))
                for t in members:
                    runs.append(((t % rows_per_image) * wo * 4, (group if whole else 1) * wo * 4))
    return runs


def _c3_window(tiles, rows_per_image: int, ho: int) -> set:
    """The distinct input rows (image, depth, row) that whole-row output tiles read (tile t: output row t of the
    image-major (n, od, oh) order)."""
    rows = set()
    for t in tiles:
        img, r = divmod(t, rows_per_image)
        od, oh = divmod(r, ho)
        rows |= {(img, od + kd, oh + kh) for kd in range(C3_XD) for kh in range(C3_XH)}
    return rows


def c3_staged_rows(shape, sms: int = 132) -> dict:
    """Input rows (one depth slice, one row, 64 pixels, 8 channels: 2 KB) that conv3d 04b stages per block round at
    the full width (Wo = C3_TW), as registered (each warpgroup its tile's 3 x 3) and with one window per round shared
    by the block's C3_WGS warpgroups (the distinct rows its tiles read). Rounds are the tile dealing of c3_store_runs:
    a block's warpgroups hold consecutive output rows, which cross a plane or an image now and then. Returns the totals,
    the largest window and the share of rounds whose window is larger than one plane's (a group that crosses)."""
    n, _, do, ho, wo = shape
    assert wo == C3_TW, "whole-row tiles only"
    tiles, rows_per_image = n * do * ho, do * ho
    grid = min(sms, -(-tiles // C3_WGS))
    own = shared = widest = crossing = rounds = 0
    for block in range(grid):
        for base in range(block * C3_WGS, tiles, grid * C3_WGS):
            members = range(base, min(base + C3_WGS, tiles))
            rows = _c3_window(members, rows_per_image, ho)
            own += C3_XD * C3_XH * len(members)
            shared += len(rows)
            widest = max(widest, len(rows))
            crossing += len({(img, od) for t in members for img, od in [divmod(t // ho, do)]}) > 1
            rounds += 1
    return {"rounds": rounds, "rows staged per tile": own, "rows staged per shared window": shared,
            "widest window": widest, "rounds crossing a plane": crossing / rounds}


def shared_sectors(runs, sector: int = 32) -> float:
    """The share of run ends (starts and ends) that fall inside a `sector`-byte sector: a sector that another run
    (another tile's, written at another time) completes."""
    return sum((s % sector != 0) + ((s + b) % sector != 0) for s, b in runs) / (2 * len(runs))


def _c3_dw_rounds_of(shape):
    """The depth sweep's round geometry of an input shape: (Do, Ho, groups of C3_WGS output rows per plane, rounds in all, and
    round q's (n, od, oh0): q = (n groups + grp) Do + od, oh0 = min(C3_WGS grp, Ho - C3_WGS), dw_round's map)."""
    n_img, _, d, h, _ = shape
    do, ho = d - (C3_KS - 1), h - (C3_KS - 1)
    groups = -(-ho // C3_WGS)

    def rnd(q):
        u, od = divmod(q, do)
        n, grp = divmod(u, groups)
        return n, od, min(C3_WGS * grp, ho - C3_WGS)

    return do, ho, groups, n_img * groups * do, rnd


def c3_dwin_rounds(total: int, do: int, grid: int, block: int, waves: bool = False) -> list:
    """The rounds q block `block` of `grid` takes in the depth sweep, in order, with whether each stages three slabs
    (a first: the block's first round, a unit's (od = 0), or one that does not follow the round before it).
    Contiguous: [b R / grid, (b + 1) R / grid). `waves` (the kernel's order): whole units (Do rounds, one n and group
    of rows) dealt round-robin, unit b + i grid in the block's i-th wave, so that neighbouring groups of rows (two
    input rows shared) run at once on neighbouring blocks, then the units left over split contiguously by rounds (no
    range starting at a unit's last round)."""
    if not waves:
        qs = list(range(block * total // grid, (block + 1) * total // grid))
    else:
        units = total // do
        full = units // grid
        tail = (units - full * grid) * do
        qs = [(block + i * grid) * do + od for i in range(full) for od in range(do)]
        def cut(b):         # a cut one round before a unit's end moves on one: two firsts in a row would need 9 slots
            t = b * tail // grid
            return t + 1 if t % do == do - 1 else t
        qs += [full * grid * do + t for t in range(cut(block), max(cut(block), cut(block + 1)))]
    return [(q, r == 0 or q % do == 0 or q != qs[r - 1] + 1) for r, q in enumerate(qs)]


def c3_depth_sweep(shape, grid: int, slots: int = 8, waves: bool = False) -> dict:
    """conv3d 04b's depth-sweep bookkeeping, as the kernel does it: block b takes rounds [b R / grid, (b + 1) R / grid)
    (or the kernel's order with `waves`: c3_dwin_rounds) of the R = N x groups x Do rounds (q = (n groups + grp) Do + od; a round is C3_WGS output rows oh0.. of plane (n, od),
    oh0 = min(C3_WGS grp, Ho - C3_WGS)). A first round (c3_dwin_rounds) stages the slabs of depths
    od..od + 2, any other round the slab of depth od + 2; slab s goes to slot s % slots; round r's tap kd reads slot
    (e - 3 + kd) % slots, e = slabs staged through round r. Round r + 2's slabs are written at the end of round r, once
    round r - 1's wgmmas are done, so rounds r and r + 1 may still be reading.

    Returns "wrong reads" (a tap that would read a slot holding another slab), "hazards" (a slot written while round
    r or r + 1 reads it), "out of bounds" (a staged row or depth outside the input), the output rows covered, the
    slabs staged and the rounds per block (most)."""
    n_img, _, d, h, w = shape
    do, ho, _, total, rnd = _c3_dw_rounds_of(shape)
    assert w - (C3_KS - 1) == C3_TW and ho >= C3_WGS and do >= 2 and c3_dwin_misaligned_copies(shape) == 0, \
        "the shapes the depth sweep takes"
    wrong, hazards, oob, covered, slabs, most = [], [], [], set(), 0, 0
    for b in range(grid):
        order = c3_dwin_rounds(total, do, grid, b, waves)
        most = max(most, len(order))
        staged, el = [], 0                                  # per round: [(slot, (n, depth, oh0))]
        for q, f in order:
            n, od, oh0 = rnd(q)
            new = [(n, od + j, oh0) for j in range(3)] if f else [(n, od + 2, oh0)]
            staged.append([((el + j) % slots, c) for j, c in enumerate(new)])
            el += len(new)
            for (_, (nn, dd, r0)) in staged[-1]:
                if not (0 <= r0 and r0 + C3_WGS + C3_KS - 2 < h and dd < d and nn < n_img):
                    oob.append((b, q))
        slabs += el
        content, reads, e = {}, [], 0
        for r in range(min(2, len(staged))):
            content.update(staged[r])
        for r, (q, f) in enumerate(order):
            n, od, oh0 = rnd(q)
            e += 3 if f else 1
            reads.append([(e - 3 + kd) % slots for kd in range(3)])
            for kd, s in enumerate(reads[-1]):
                if content.get(s) != (n, od + kd, oh0):
                    wrong.append((b, q, kd))
            covered.update((n, od, oh0 + i) for i in range(C3_WGS))
            if r + 2 < len(staged):
                for s, c in staged[r + 2]:
                    if s in reads[r] or (r + 1 < len(staged) and s in _c3_sweep_reads(staged, r + 1, slots)):
                        hazards.append((b, q, s))
                    content[s] = c
    return {"wrong reads": wrong, "hazards": hazards, "out of bounds": oob,
            "covered": covered == {(n, od, oh) for n in range(n_img) for od in range(do) for oh in range(ho)},
            "slabs staged": slabs, "rounds per block": most}


def c3_dwin_misaligned_copies(shape) -> int:
    """How many of the depth sweep's group copies would start off the 16-byte alignment a TMA box needs in y: a round's copy
    starts at pixel (od Ho + oh0) Wo of its plane (Wo = 62), 2 mod 4 floats for an odd row. Any Ho, so that the
    launch's rule (even Ho only) has its reason under test: an odd Ho gives misaligned copies, an even one none."""
    _, ho, _, total, rnd = _c3_dw_rounds_of(shape)
    return sum((od * ho + oh0) * C3_TW % 4 != 0 for _, od, oh0 in map(rnd, range(total)))


def _c3_sweep_reads(staged, r: int, slots: int) -> list:
    """The slots round r of a block reads (its e from the slabs staged through it)."""
    e = sum(len(s) for s in staged[:r + 1])
    return [(e - 3 + kd) % slots for kd in range(3)]


# conv3d 04b's depth sweep: its slab ring, as the kernel lays it out (floats): slot [k-half][row 0..5][pixel 0..63][4 channels]
C3_DW_ROWS, C3_DW_SLOTS = C3_WGS + C3_KS - 1, 8
C3_DW_HALF = C3_DW_ROWS * C3_XW * 4
C3_DW_SLAB = 2 * C3_DW_HALF
C3_DW_ITEMS = 2 * C3_DW_ROWS * (C3_XW // 4)       # (k-half, row, quad) items per slab


def _c3_dw_load_at(wg: int, tid: int, k: int, first: bool, s0: int):
    """dw_load's item of thread (wg, tid), k-th: (j, half, row, quad, its first float in the ring) or None."""
    m = (3 if first else 1) * (C3_DW_ITEMS // C3_WGS)
    li = tid + 128 * k
    if li >= m:
        return None
    gi = wg * m + li
    j, rest = divmod(gi, C3_DW_ITEMS)
    half, rr = divmod(rest, C3_DW_ITEMS // 2)
    row, quad = rr >> 4, rr & 15
    slot = (s0 + j) & (C3_DW_SLOTS - 1)
    return j, half, row, quad, slot * C3_DW_SLAB + half * C3_DW_HALF + (row * C3_XW + 4 * quad) * 4


def c3_dwin_block_tiles(x: np.ndarray, w: np.ndarray, grid: int, block: int, waves: bool = False):
    """The tiles block `block` of `grid` computes in the depth sweep, emulated: each round's slabs written item by item at
    dw_load / dw_stage's addresses (the rotation's permutation included) into a byte image of the ring, each
    warpgroup's tile read back through dw_mma_issue's descriptors (tap (kd, kh, kw): slot (e - 3 + kd) % 8, row wg +
    kh, kw pixels in; lbo one k-half of a slab). Yields ((n, od, oh), 64 Cout x 62 conv sums without bias)."""
    do, _, _, total, rnd = _c3_dw_rounds_of(x.shape)
    order = c3_dwin_rounds(total, do, grid, block, waves)
    wimg = np.zeros(C3_TAPS * 2 * COUT * 16, np.uint8)
    wf = wimg.view(np.float32)
    for t in range(C3_TAPS):
        kd, kh, kw = t // 9, (t // 3) % 3, t % 3
        for hh in range(2):
            at = (t * 2 + hh) * COUT * 4
            wf[at:at + COUT * 4] = w[:, 4 * hh:4 * hh + 4, kd, kh, kw].reshape(-1)
    ring = np.zeros(C3_DW_SLOTS * C3_DW_SLAB + 16, np.float32)

    def stage(q, f, s0):
        n, od, oh0 = rnd(q)
        d0 = od if f else od + 2
        for wg in range(C3_WGS):
            for tid in range(128):
                rot = (tid >> 1) & 3
                for k in range(2):
                    it = _c3_dw_load_at(wg, tid, k, f, s0)
                    if it is None:
                        continue
                    j, half, row, quad, at = it
                    v = x[n, 4 * half:4 * half + 4, d0 + j, oh0 + row, 4 * quad:4 * quad + 4].astype(np.float32)
                    v = np.roll(v, -rot, axis=1)                     # rotate4: component j <- component (j + rot) % 4
                    for p in range(4):
                        ring[at + 4 * ((p + rot) & 3):at + 4 * ((p + rot) & 3) + 4] = v[:, p]
        return 3 if f else 1

    el = 0
    for q, f in order[:2]:
        el += stage(q, f, el % C3_DW_SLOTS)
    e = 0
    for r, (q, f) in enumerate(order):
        n, od, oh0 = rnd(q)
        e += 3 if f else 1
        mem = np.concatenate([wimg, ring.view(np.uint8)])
        for wg in range(C3_WGS):
            acc = np.zeros((COUT, C3_XW))
            for t in range(C3_TAPS):
                kd, kh, kw = t // 9, (t // 3) % 3, t % 3
                b0 = len(wimg) + wg * C3_XW * 16 + ((e - 3 + kd) & (C3_DW_SLOTS - 1)) * C3_DW_SLAB * 4
                a = operand(mem, t * 2 * COUT * 16, COUT * 16, COUT, 8, 4)
                b = operand(mem, b0 + (kh * C3_XW + kw) * 16, C3_DW_HALF * 4, C3_XW, 8, 4)
                acc += a @ b.T
            yield (n, od, oh0 + wg), acc[:, :C3_TW]
        if r + 2 < len(order):
            el += stage(*order[r + 2], el % C3_DW_SLOTS)
