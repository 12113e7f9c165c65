"""The design diagrams of step 04's notebooks, one per kernel design, drawn from the layouts they show.

Each drawing is made from a small function that computes what it shows, and tests/test_diagrams.py checks those
functions against the rules they follow (the PTX ISA's fragment layout of `mma.sync.m16n8k8` TF32, the `wgmma`
no-swizzle descriptor arithmetic of `convfuse.wgmma_layouts`, a ring whose stages are never read before they are
filled nor refilled before they are released, the Winograd transforms of `convfuse.winograd`, the TMA copy
`wgmma_layouts.staged_from_tma` models, an mbarrier model run on the producer's own loop, the kernel's barrier ids):

    mma_fragments()         which lane holds which element of A, B and C in one m16n8k8 TF32 MMA    (notebook 04)
    wgmma_core_matrices()   an operand's core matrices in shared memory and a descriptor's lbo/sbo  (04b)
    bank_layouts()          one core matrix's banks: no swizzle, rows of 128 B, rows of 128 B swizzled (04b)
    tma_box()               conv2d 04c's tensor map and boxes: alignment, shift, zero fill         (04c)
    mbarrier_phases()       the raw buffers' mbarriers: expect_tx, bytes landing, phase parity     (04c)
    ring_barriers()         the ring's stages and their FULL/EMPTY/ORDER named-barrier ids        (04c)
    ring_timeline()         producer and two consumers around a ring of stages, as a timeline      (04c)
    turned_gemm()           the operand roles of the GEMM before and after it is turned around      (04d)
    winograd_flow()         F(2x2, 3x3): input patch and weights transformed, 16 products, output  (04e)

Every function returns a matplotlib Figure; nothing here reads a results file.
"""
from __future__ import annotations

import numpy as np

from .plots import plt  # the backend choice (headless or inline) is plots'

LANE_COLORS = plt.get_cmap("tab10").colors[:8]    # one colour per group of 4 lanes (lane // 4)


# --- 04: mma.sync m16n8k8 TF32 fragments ---------------------------------------------------------------------------
def mma_fragment_owners() -> dict[str, np.ndarray]:
    """For `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: per matrix (A 16x8, B 8x8 as K x N, C 16x8), the
    lane that holds each element and the register index within that lane's fragment (PTX ISA, "Matrix fragments for
    mma.m16n8k8", .tf32: groupID = lane >> 2, threadID_in_group = lane % 4)."""
    A = np.full((2, 16, 8), -1)
    B = np.full((2, 8, 8), -1)
    C = np.full((2, 16, 8), -1)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i, (r, c) in enumerate([(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]):
            A[:, r, c] = lane, i
        for i, (k, n) in enumerate([(t, g), (t + 4, g)]):
            B[:, k, n] = lane, i
        for i, (r, c) in enumerate([(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
            C[:, r, c] = lane, i
    return {"A": A, "B": B, "C": C}


def _grid(ax, owners, title, rowlab, collab, regname):
    lanes, regs = owners
    rows, cols = lanes.shape
    for r in range(rows):
        for c in range(cols):
            ln = lanes[r, c]
            ax.add_patch(plt.Rectangle((c, rows - 1 - r), 1, 1, facecolor=LANE_COLORS[ln >> 2], alpha=0.35,
                                       edgecolor="white", lw=1.0))
            ax.text(c + 0.5, rows - 1 - r + 0.5, f"T{ln}\n{regname}{regs[r, c]}", ha="center", va="center",
                    fontsize=7.5, linespacing=0.95)
    ax.set_xlim(0, cols)
    ax.set_ylim(0, rows)
    ax.set_aspect("equal")
    ax.set_xticks(np.arange(cols) + 0.5, [str(i) for i in range(cols)], fontsize=7)
    ax.set_yticks(np.arange(rows) + 0.5, [str(i) for i in range(rows)][::-1], fontsize=7)
    ax.set_xlabel(collab, fontsize=8)
    ax.set_ylabel(rowlab, fontsize=8)
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    ax.set_title(title, fontsize=9)


def mma_fragments():
    """One m16n8k8 TF32 MMA, drawn: each cell names the lane (T0-T31) holding that element and which of its fragment
    registers it is; colours are the 8 groups of 4 lanes. In step 04, A is the weights (M = Cout), B the staged input
    (N = output pixels), and C's two neighbouring columns per lane are two neighbouring pixels of one channel."""
    o = mma_fragment_owners()
    fig, axes = plt.subplots(1, 3, figsize=(13, 8.2), gridspec_kw={"width_ratios": [8, 8, 8]})
    _grid(axes[0], o["A"], "A (16 × 8): weights, 4 registers a lane", "M: output channel", "K: input channel (one tap)",
          "a")
    _grid(axes[1], o["B"], "B (8 × 8): staged input, 2 registers a lane", "K: input channel", "N: output pixel", "b")
    _grid(axes[2], o["C"], "C (16 × 8): FP32 accumulators, 4 a lane", "M: output channel", "N: output pixel", "c")
    fig.suptitle("mma.sync m16n8k8 TF32: which lane holds what (colour: lanes 4g … 4g+3)", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return fig


# --- 04b: wgmma operands in shared memory --------------------------------------------------------------------------
def core_matrix_offsets(rows: int = 64, k: int = 8, lbo: int = 1024, sbo: int = 128, esize: int = 4) -> np.ndarray:
    """Byte offset from the descriptor's start of element (row, k) of a K-major, no-swizzle `wgmma` operand: core
    matrices of 8 rows x 16 bytes, `sbo` between core matrices 8 rows apart, `lbo` between core matrices 16 bytes of
    K apart (the rule of convfuse.wgmma_layouts.operand)."""
    per16 = 16 // esize
    r = np.arange(rows)[:, None]
    kk = np.arange(k)[None, :]
    return (r // 8) * sbo + (kk // per16) * lbo + (r % 8) * 16 + (kk % per16) * esize


def wgmma_core_matrices(rows: int = 64, lbo: int = 1024, sbo: int = 128):
    """A TF32 operand of `rows` x 8 (one k8 step) as `wgmma` reads it from shared memory: 2 x rows/8 core matrices
    of 8 rows x 16 bytes (4 TF32), each 128 contiguous bytes; `sbo` steps 8 rows, `lbo` steps to the second half of
    K. Left: the operand, each core matrix labelled with its offset; right: one core matrix's bytes."""
    from matplotlib.patches import FancyArrowPatch, Rectangle

    off = core_matrix_offsets(rows, 8, lbo, sbo)
    nb = rows // 8
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 6.2), gridspec_kw={"width_ratios": [1.25, 1]})
    colors = plt.get_cmap("tab20").colors
    for b in range(nb):
        for h in range(2):
            y0 = rows - 8 * (b + 1)
            ax.add_patch(Rectangle((4 * h, y0), 4, 8, facecolor=colors[(2 * b + h) % 20], alpha=0.45,
                                   edgecolor="black", lw=1.0))
            ax.text(4 * h + 2, y0 + 4, f"core matrix\n+{off[8 * b, 4 * h]} B", ha="center", va="center", fontsize=7.5)
    ax.add_patch(FancyArrowPatch((-0.6, rows - 4), (-0.6, rows - 12), arrowstyle="->", mutation_scale=12))
    ax.text(-0.9, rows - 8, f"sbo = {sbo} B", rotation=90, ha="right", va="center", fontsize=8)
    ax.add_patch(FancyArrowPatch((2, rows + 0.8), (6, rows + 0.8), arrowstyle="->", mutation_scale=12))
    ax.text(4, rows + 1.4, f"lbo = {lbo} B", ha="center", va="bottom", fontsize=8)
    ax.set_xlim(-3, 8.5)
    ax.set_ylim(-1, rows + 4)
    ax.set_xticks([2, 6], ["k 0–3", "k 4–7"], fontsize=8)
    ax.set_yticks([rows - 8 * b - 4 for b in range(nb)], [f"rows {8 * b}–{8 * b + 7}" for b in range(nb)], fontsize=7)
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    ax.set_title(f"one k8 step of a {rows}-row TF32 operand: {2 * nb} core matrices", fontsize=9)
    # one core matrix in detail
    for r in range(8):
        for c in range(4):
            ax2.add_patch(Rectangle((c, 7 - r), 1, 1, facecolor=colors[0], alpha=0.45, edgecolor="white"))
            ax2.text(c + 0.5, 7 - r + 0.5, f"+{off[r, c]}", ha="center", va="center", fontsize=8)
    ax2.set_xlim(0, 4)
    ax2.set_ylim(0, 8)
    ax2.set_aspect("equal")
    ax2.set_xticks(np.arange(4) + 0.5, [f"k {c}" for c in range(4)], fontsize=8)
    ax2.set_yticks(np.arange(8) + 0.5, [f"row {r}" for r in range(8)][::-1], fontsize=8)
    ax2.tick_params(length=0)
    ax2.set_title("one core matrix: 8 rows × 16 bytes, 128 contiguous bytes\n(byte offsets; a row is 16 bytes)",
                  fontsize=9)
    fig.text(0.5, 0.01, "descriptor = start address, lbo, sbo (each >> 4, 14 bits); element (r, k) at "
             "start + (r // 8)·sbo + (k // 4)·lbo + (r % 8)·16 + (k % 4)·4", ha="center", fontsize=8.5)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


# --- 04c: a ring of stages between a producer and two consumers ----------------------------------------------------
def ring_schedule(chunks: int = 8, stages: int = 3, produce: float = 1.0, mma: float = 1.0, epilogue: float = 2.0,
                  chunks_per_tile: int = 4) -> list[dict]:
    """A model schedule of a warp-specialised block: one producer fills a ring of `stages` stages in order; two
    consumers take the ring's chunks in turn by tile (consumer 0 the first `chunks_per_tile`, consumer 1 the next,
    ...), issue `mma` time units of MMAs per chunk (one consumer at a time: the tensor pipe), release the stage, and
    after a tile's last chunk run an `epilogue` (which overlaps the other consumer's MMAs). Returns intervals
    {who, what, chunk, stage, start, end}; times in units of one chunk's MMAs."""
    out = []
    filled = {}           # chunk -> time its stage is full
    released = {}         # chunk -> time its stage is free again
    free_at = [0.0, 0.0]  # consumer -> time it can issue
    pipe_free = 0.0
    prod_t = 0.0
    # chunk order is a valid order of the dependences: the producer runs ahead as far as the ring lets it (chunk c
    # needs the stage of chunk c - stages released), the consumers take the chunks in order
    for c in range(chunks):
        start = max(prod_t, released.get(c - stages, 0.0))
        out.append({"who": "producer", "what": "load + stage", "chunk": c, "stage": c % stages, "start": start,
                    "end": start + produce})
        prod_t = start + produce
        filled[c] = prod_t
        # consumers for every chunk now filled whose stage is ready and whose predecessor is consumed
        k = (c // chunks_per_tile) % 2
        s = max(filled[c], free_at[k], pipe_free)
        out.append({"who": f"consumer {k}", "what": "MMAs", "chunk": c, "stage": c % stages, "start": s,
                    "end": s + mma})
        pipe_free = free_at[k] = s + mma
        released[c] = s + mma
        if c % chunks_per_tile == chunks_per_tile - 1:
            out.append({"who": f"consumer {k}", "what": "epilogue", "chunk": c, "stage": None, "start": s + mma,
                        "end": s + mma + epilogue})
            free_at[k] = s + mma + epilogue
    return out


def ring_timeline(chunks: int = 16, stages: int = 3, produce: float = 0.9, mma: float = 1.0, epilogue: float = 2.5,
                  chunks_per_tile: int = 4):
    """The producer/consumer ring as a timeline (ring_schedule): the producer's loads and staging, each consumer's
    MMAs and epilogues; a box's number is its chunk, its colour the ring stage it uses. A consumer's epilogue runs
    while the other consumer issues MMAs (ping-pong), and the producer waits when the ring is full."""
    sched = ring_schedule(chunks, stages, produce, mma, epilogue, chunks_per_tile)
    lanes = ["producer", "consumer 0", "consumer 1"]
    colors = plt.get_cmap("Set2").colors
    fig, ax = plt.subplots(figsize=(11, 3.4))
    for iv in sched:
        y = 2 - lanes.index(iv["who"])
        if iv["what"] == "epilogue":
            fc, label = "0.8", "epilogue"
        else:
            fc, label = colors[iv["stage"] % len(colors)], str(iv["chunk"])
        ax.broken_barh([(iv["start"], iv["end"] - iv["start"])], (y - 0.35, 0.7), facecolors=fc, edgecolor="black",
                       lw=0.6)
        ax.text((iv["start"] + iv["end"]) / 2, y, label, ha="center", va="center", fontsize=7.5)
    ax.set_yticks([2, 1, 0], ["producer:\nload, stage", "consumer 0:\nMMAs, epilogue", "consumer 1:\nMMAs, epilogue"],
                  fontsize=8)
    ax.set_xlabel("time (units of one chunk's MMAs)", fontsize=8)
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=colors[s]) for s in range(stages)]
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="0.8"))
    ax.legend(handles, [f"ring stage {s}" for s in range(stages)] + ["epilogue"], fontsize=7.5, ncol=stages + 1,
              loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)
    ax.set_title(f"a ring of {stages} stages: numbers are chunks; {chunks_per_tile} chunks a tile, tiles dealt to "
                 "the consumers in turn", fontsize=9)
    ax.set_xlim(0, max(iv["end"] for iv in sched) + 0.3)
    ax.grid(axis="x", color="0.9")
    fig.tight_layout()
    return fig


# --- 04d: the GEMM turned around -----------------------------------------------------------------------------------
TURNED_ROLES = {
    "04b / 04c": {"M": "Cout (64)", "N": "output pixels", "A": ("weights", "shared memory,\nresident"),
                  "B": ("input pixels", "shared memory, staged\nK-major (transposed)")},
    "04d": {"M": "output pixels (64 a warpgroup)", "N": "Cout (64)",
            "A": ("input pixels", "registers, loaded\nfrom the copied rows"),
            "B": ("weights", "shared memory,\nresident")},
}


def turned_gemm():
    """The operand roles of step 04's GEMM as 04b/04c issue it (A = weights, B = input staged in shared memory) and
    as 04d turns it around (A = input in registers, straight from the rows the TMA copied; B = weights)."""
    from matplotlib.patches import Rectangle

    fig, axes = plt.subplots(1, 2, figsize=(12, 3.1))
    place = {"shared": "tab:blue", "registers": "tab:orange"}
    for ax, (name, roles) in zip(axes, TURNED_ROLES.items()):
        def box(x, y, w, h, text, where):
            c = place["registers" if where.startswith("registers") else "shared"]
            ax.add_patch(Rectangle((x, y), w, h, facecolor=c, alpha=0.3, edgecolor="black"))
            ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8)
        box(0, 0, 2.2, 2.2, f"A = {roles['A'][0]}\n{roles['M'].split(' (')[0]} × K\n\n{roles['A'][1]}", roles["A"][1])
        ax.text(2.45, 1.1, "·", fontsize=18, ha="center", va="center")
        box(2.7, 0, 2.6, 2.2, f"B = {roles['B'][0]}\nK × {roles['N'].split(' (')[0]}\n\n{roles['B'][1]}",
            roles["B"][1])
        ax.text(5.55, 1.1, "=", fontsize=14, ha="center", va="center")
        ax.add_patch(Rectangle((5.8, 0), 2.2, 2.2, facecolor="0.85", edgecolor="black"))
        ax.text(6.9, 1.1, f"C: {roles['M'].split(' (')[0]}\n× {roles['N'].split(' (')[0]}\n\nFP32 accumulators\n"
                "(registers)", ha="center", va="center", fontsize=8)
        ax.set_title(f"{name}: M = {roles['M']}, N = {roles['N']}", fontsize=9)
        ax.set_xlim(-0.1, 8.1)
        ax.set_ylim(-0.1, 2.3)
        ax.set_aspect("equal")
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=c, alpha=0.3, edgecolor="black") for c in place.values()]
    fig.legend(handles, ["operand read from shared memory", "operand in registers"], loc="lower center", ncol=2,
               fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


# --- 04e: Winograd F(2x2, 3x3) -------------------------------------------------------------------------------------
def winograd_example(seed: int = 0) -> dict[str, np.ndarray]:
    """One 4x4 input patch d and one 3x3 filter g (small integers), their transforms U = Bᵀ d B and V = G g Gᵀ, the
    16 products M = U ⊙ V, and the 2x2 output Y = Aᵀ M A, which equals the direct 3x3 correlation of d with g."""
    from . import winograd as W

    rng = np.random.default_rng(seed)
    d = rng.integers(-3, 4, (4, 4)).astype(float)
    g = rng.integers(-2, 3, (3, 3)).astype(float)
    BT, G, AT = (m.numpy() for m in (W.BT, W.G, W.AT))
    U = BT @ d @ BT.T
    V = G @ g @ G.T
    M = U * V
    Y = AT @ M @ AT.T
    direct = np.array([[(d[i:i + 3, j:j + 3] * g).sum() for j in range(2)] for i in range(2)])
    return {"d": d, "g": g, "U": U, "V": V, "M": M, "Y": Y, "direct": direct}


def winograd_flow(seed: int = 0):
    """F(2x2, 3x3) on one tile, with numbers: the 4x4 input patch becomes U = Bᵀ d B (adds only), the filter
    V = G g Gᵀ (once per call), 16 products M = U ⊙ V (in the kernel: 16 GEMMs over Cin, one per position, on the
    tensor cores), and Aᵀ M A the 2x2 outputs (adds only) — 16 multiplies where the direct conv does 36."""
    ex = winograd_example(seed)
    fig, axes = plt.subplots(1, 6, figsize=(13, 3.2), gridspec_kw={"width_ratios": [4, 4, 3, 4, 4, 2.4]})
    panels = [("d", "input patch d (4×4)"), ("U", "U = Bᵀ d B\n(adds)"), ("g", "filter g (3×3)"),
              ("V", "V = G g Gᵀ\n(once per call)"), ("M", "M = U ⊙ V\n16 products (tensor cores)"),
              ("Y", "y = Aᵀ M A\n2×2 outputs (adds)")]
    cmap = {"d": "Blues", "U": "Blues", "g": "Oranges", "V": "Oranges", "M": "Purples", "Y": "Greens"}
    for ax, (key, title) in zip(axes, panels):
        m = ex[key]
        lim = max(1.0, float(np.abs(m).max()))
        ax.imshow(np.abs(m) / lim, cmap=cmap[key], vmin=0, vmax=1.6)
        for (i, j), v in np.ndenumerate(m):
            ax.text(j, i, f"{v + 0.0:g}", ha="center", va="center", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(title, fontsize=8.5)
    fig.suptitle("Winograd F(2×2, 3×3) on one tile; the direct 3×3 correlation of d with g gives "
                 f"{ex['direct'].astype(int).tolist()}, the same", fontsize=9)
    fig.tight_layout()
    return fig


# --- 04b: why the no-swizzle layout reads without bank conflicts --------------------------------------------------
BANKS, BANK_BYTES = 32, 4


def swizzle(addr, mode: int = 128):
    """A shared-memory byte address as a `wgmma` descriptor's swizzle mode maps it (PTX ISA, "Shared memory matrix
    layout", the CUTLASS Swizzle<B, 4, 3> functors): 0 = none; 32/64/128 B = address bits [4, 4 + B) XORed with bits
    [7, 7 + B), B = 1, 2, 3: the 16-byte units of each row of `mode` bytes permuted by the row's index in 8."""
    addr = np.asarray(addr)
    if mode == 0:
        return addr
    b = {32: 1, 64: 2, 128: 3}[mode]
    mask = (1 << b) - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def core_matrix_read(layout: str) -> np.ndarray:
    """Byte addresses of one core matrix's 8 rows x 16 bytes (an 8 x 4 TF32 block, rows of M or N, columns of K) in
    three ways of storing a K-major operand: "core matrices" (this study's, no swizzle: 128 contiguous bytes,
    core_matrix_offsets), "rows of 128 B" (each row's 32 TF32 of K contiguous, the next row 128 B on, no swizzle: what
    a TMA box of 32 channels would write), "rows of 128 B, swizzled" (the same under the 128-byte swizzle). Shape 8 x 4."""
    r, k = np.arange(8)[:, None], np.arange(4)[None, :]
    if layout == "core matrices":
        return core_matrix_offsets(8, 4)
    linear = r * 128 + k * 4
    if layout == "rows of 128 B":
        return linear
    if layout == "rows of 128 B, swizzled":
        return swizzle(linear, 128)
    raise ValueError(layout)


def wavefronts(addrs) -> int:
    """Shared-memory wavefronts to read 4-byte words at `addrs` at once: the most distinct words one bank holds."""
    words = np.unique(np.asarray(addrs).ravel() // BANK_BYTES)
    return int(np.bincount(words % BANKS, minlength=BANKS).max())


SWIZZLE_LAYOUTS = ("core matrices", "rows of 128 B", "rows of 128 B, swizzled")


def bank_layouts():
    """One core matrix (8 rows x 16 bytes) as `wgmma` reads it, in three layouts: each cell is a 4-byte TF32 value,
    coloured and numbered by its shared-memory bank. The no-swizzle core-matrix layout (this study's) holds the 8 rows
    in 128 contiguous bytes: 32 banks, one wavefront. Rows of 128 bytes without swizzle put the 8 rows' same 16 bytes
    in the same 4 banks (8 wavefronts); the 128-byte swizzle moves each row's 16-byte unit by its row index, and the
    read is one wavefront again."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 5.4))
    cmap = plt.get_cmap("hsv")
    for ax, lay in zip(axes, SWIZZLE_LAYOUTS):
        a = core_matrix_read(lay)
        bank = (a // BANK_BYTES) % BANKS
        for r in range(8):
            for c in range(4):
                ax.add_patch(plt.Rectangle((c, 7 - r), 1, 1, facecolor=cmap(bank[r, c] / BANKS), alpha=0.45,
                                           edgecolor="white"))
                ax.text(c + 0.5, 7 - r + 0.5, f"bank {bank[r, c]}\n+{a[r, c]} B", ha="center", va="center",
                        fontsize=6.5)
        ax.set_xlim(0, 4)
        ax.set_ylim(0, 8)
        ax.set_aspect("equal")
        ax.set_xticks(np.arange(4) + 0.5, [f"k {c}" for c in range(4)], fontsize=8)
        ax.set_yticks(np.arange(8) + 0.5, [f"row {r}" for r in range(8)][::-1], fontsize=8)
        ax.tick_params(length=0)
        n = wavefronts(a)
        ax.set_title(f"{lay}\n{len(np.unique(bank))} banks, {n} wavefront{'s' if n > 1 else ''}", fontsize=9)
    fig.suptitle("one core matrix (8 rows × 4 TF32) read by wgmma: where its 32 values sit in shared memory's banks",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


# --- 04c: a TMA box of conv2d 04c's input ---------------------------------------------------------------------------
def tma_box_placement(ox0: int, W: int) -> dict:
    """Where conv2d 04c's TMA box for the tile starting at output column `ox0` lies in an input row of W pixels
    (convfuse.wgmma_layouts' constants, the kernel's): the box starts at the multiple of TMA_ALIGN floats at or below
    ox0, is RAW_PITCH pixels x XH rows x CHUNK channels, and the producer reads the XW staged pixels from `shift` on;
    columns at or past W arrive as zeros. `bytes` is what the copy delivers: expect_tx's count."""
    from . import wgmma_layouts as L

    start = ox0 - ox0 % L.TMA_ALIGN
    return {"start": start, "shift": ox0 - start, "width": L.RAW_PITCH, "rows": L.XH, "channels": L.CHUNK,
            "staged": (ox0, ox0 + L.XW), "zero_from": min(max(W, start), start + L.RAW_PITCH),
            "bytes": L.RAW_PITCH * L.XH * L.CHUNK * 4}


def tma_box(W: int = 256, tiles=(1, 2)):
    """conv2d 04c's tensor map and boxes, drawn for tiles of one input row band: the 4-D map describes x as
    (W, H, C, N) innermost first; a box of RAW_PITCH x XH x CHUNK x 1 is copied per chunk into a raw buffer, starting
    16-byte aligned at or below the tile; the tile's XW staged pixels lie `shift` into it; past the image's right edge
    the TMA fills zeros."""
    from matplotlib.patches import Rectangle

    from . import wgmma_layouts as L

    fig, axes = plt.subplots(len(tiles), 1, figsize=(12, 1.9 * len(tiles) + 0.9))
    axes = np.atleast_1d(axes)
    for ax, t in zip(axes, tiles):
        ox0 = t * L.TW
        p = tma_box_placement(ox0, W)
        lo, hi = p["start"] - 6, p["start"] + p["width"] + 10
        ax.add_patch(Rectangle((lo, 0), min(W, hi) - lo, p["rows"], facecolor="0.93", edgecolor="none"))
        ax.add_patch(Rectangle((p["start"], 0), p["width"], p["rows"], facecolor="tab:blue", alpha=0.18,
                               edgecolor="tab:blue", lw=1.5))
        ax.add_patch(Rectangle((p["staged"][0], 0.15), L.XW, p["rows"] - 0.3, facecolor="none", edgecolor="tab:orange",
                               lw=1.5, ls="--"))
        if p["zero_from"] < p["start"] + p["width"]:
            ax.add_patch(Rectangle((p["zero_from"], 0), p["start"] + p["width"] - p["zero_from"], p["rows"],
                                   facecolor="none", edgecolor="tab:red", hatch="///", lw=0))
            ax.text((p["zero_from"] + p["start"] + p["width"]) / 2, p["rows"] + 0.25, "zero-filled", color="tab:red",
                    ha="center", fontsize=8)
        if W < hi:
            ax.axvline(W, color="black", lw=1)
            ax.text(W - 0.5, p["rows"] + 0.25, f"W = {W}", ha="right", fontsize=8)
        ax.text(p["start"], p["rows"] + 0.25, f"box starts at column {p['start']} (multiple of {L.TMA_ALIGN})",
                fontsize=8, color="tab:blue")
        ax.text(p["staged"][0] + L.XW / 2, p["rows"] / 2,
                f"tile {t}: staged pixels {p['staged'][0]}–{p['staged'][1] - 1}, shift {p['shift']}",
                ha="center", va="center", fontsize=8.5, color="tab:orange")
        ax.set_xlim(lo, hi)
        ax.set_ylim(-0.8, p["rows"] + 0.8)
        ax.set_yticks(np.arange(p["rows"]) + 0.5, [f"row oh+{r}" for r in range(p["rows"])][::-1], fontsize=7)
        ax.set_xlabel("input column", fontsize=8)
        for s in ("top", "right", "left"):
            ax.spines[s].set_visible(False)
    p = tma_box_placement(0, W)
    fig.suptitle(f"tensor map: x as (W, H, C, N), FP32, no swizzle; box = {p['width']} pixels × {p['rows']} rows × "
                 f"{p['channels']} channels × 1 image = {p['bytes']:,} bytes a copy (expect_tx's count); "
                 "each channel plane of the box as drawn", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return fig


# --- 04c: an mbarrier's phases ---------------------------------------------------------------------------------------
class MBarrier:
    """An mbarrier as the PTX ISA describes it: a phase completes when its pending arrivals reach zero and its
    transaction count is back to zero; then the phase number advances and the arrival count is re-armed.
    `try_wait.parity(p)` succeeds once the phase of parity p has completed, i.e. while the current phase's parity
    differs from p (a waiter is never more than one phase behind)."""

    def __init__(self, count: int):
        self.count, self.pending, self.tx, self.phase = count, count, 0, 0

    def _check(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count

    def arrive(self, expect_tx: int = 0):
        self.tx += expect_tx
        self.pending -= 1
        self._check()

    def complete_tx(self, nbytes: int):
        self.tx -= nbytes
        self._check()

    def try_wait_parity(self, parity: int) -> bool:
        return self.phase % 2 != parity


def raw_buffer_trace(chunks: int = 6, raws: int = 2, nbytes: int | None = None, parity_of=None) -> list[dict]:
    """conv2d 04c's producer loop over its raw buffers, run against MBarrier models (one per buffer, count 1): the
    issuing thread's arrive.expect_tx(bytes) and TMA issue (copy_next), each copy's bytes landing later (complete_tx),
    and the producer's mbar_wait(bar + buf, (parity >> buf) & 1), parity ^= 1 << buf, refill, buf = next — the
    kernel's expressions. A wait that cannot succeed lets the oldest copy in flight land first. `parity_of(chunk,
    bits, buf)` replaces the kernel's parity expression (to show a wrong one fails). Returns events {t, kind, buf,
    chunk, phase, parity}; a wait records which copy's chunk the buffer held when it succeeded ("holds")."""
    nbytes = nbytes or tma_box_placement(0, 256)["bytes"]
    bars = [MBarrier(1) for _ in range(raws)]
    flight, holds, events = [], [None] * raws, []
    t, nxt = 0, 0

    def issue(b):
        nonlocal t, nxt
        if nxt >= chunks:
            return
        bars[b].arrive(nbytes)
        events.append({"t": t, "kind": "arrive.expect_tx", "buf": b, "chunk": nxt, "phase": bars[b].phase})
        flight.append((b, nxt))
        nxt += 1
        t += 1

    def land():
        nonlocal t
        b, c = flight.pop(0)
        bars[b].complete_tx(nbytes)
        holds[b] = c
        events.append({"t": t, "kind": "complete_tx", "buf": b, "chunk": c, "phase": bars[b].phase})
        t += 1

    for b in range(raws):
        issue(b)
    bits, buf = 0, 0
    for chunk in range(chunks):
        p = parity_of(chunk, bits, buf) if parity_of else (bits >> buf) & 1
        while not bars[buf].try_wait_parity(p):
            if not flight:
                raise RuntimeError(f"chunk {chunk}: waiting on buffer {buf}, parity {p}, with no copy in flight")
            land()
        events.append({"t": t, "kind": "wait", "buf": buf, "chunk": chunk, "phase": bars[buf].phase, "parity": p,
                       "holds": holds[buf]})
        t += 1
        bits ^= 1 << buf
        issue(buf)                      # the producer read the buffer (stage_raw): refill it
        buf = buf + 1 if buf + 1 < raws else 0
    return events


def mbarrier_phases(chunks: int = 6, raws: int = 2):
    """conv2d 04c's raw buffers and their mbarriers over the first chunks (raw_buffer_trace): per buffer, each copy
    from the arrive.expect_tx that announces its bytes to the moment they land (the phase completes, its number
    advances), and the producer's wait on the parity of the phase it needs: 0, 1, 0, ... per buffer."""
    ev = raw_buffer_trace(chunks, raws)
    colors = plt.get_cmap("tab10").colors
    fig, ax = plt.subplots(figsize=(11, 1.4 + 1.1 * raws))
    start = {}
    for e in ev:
        y = raws - 1 - e["buf"]
        if e["kind"] == "arrive.expect_tx":
            start[e["chunk"]] = e["t"]
        elif e["kind"] == "complete_tx":
            a = start[e["chunk"]]
            ax.broken_barh([(a, e["t"] - a)], (y - 0.3, 0.45), facecolors=colors[e["chunk"] % 10], alpha=0.45,
                           edgecolor="black", lw=0.6)
            ax.text((a + e["t"]) / 2, y - 0.075, f"chunk {e['chunk']}: TMA in flight", ha="center", va="center",
                    fontsize=7.5)
            ax.text(a, y + 0.22, "arrive.expect_tx", fontsize=6.5, ha="left")
            ax.plot([e["t"]], [y - 0.075], marker="|", ms=18, color="black")
            ax.text(e["t"], y - 0.5, f"phase {e['phase'] - 1} done", fontsize=7, ha="center")
        else:
            ax.plot([e["t"]], [y + 0.05], marker="v", ms=8, color="tab:red")
            ax.text(e["t"], y + 0.25, f"wait parity {e['parity']}", fontsize=7, ha="center", color="tab:red")
    ax.set_yticks([raws - 1 - b for b in range(raws)], [f"raw buffer {b}\n(its mbarrier)" for b in range(raws)],
                  fontsize=8)
    ax.set_xlabel("order of events in the producer (model)", fontsize=8)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_ylim(-0.8, raws - 0.2)
    ax.set_xlim(-0.5, max(e["t"] for e in ev) + 1)
    ax.set_title("mbarriers of the raw buffers: a copy's bytes complete its phase; the producer waits on that phase's "
                 "parity", fontsize=9)
    fig.tight_layout()
    return fig


# --- 04c: the ring's named barriers --------------------------------------------------------------------------------
def ws_barrier_ids(pipes: int, stages: int, consumers: int = 2) -> dict:
    """The named-barrier ids of conv2d 04c (full_bar, empty_bar, producer_sync, order_bar: the kernel's expressions),
    for a build with `pipes` rings of `stages` stages; ORDER exists only with one ring. Id 0 is __syncthreads'."""
    ids = {}
    for k in range(pipes):
        for s in range(stages):
            ids[f"FULL {k}.{s}" if pipes > 1 else f"FULL {s}"] = 1 + k * stages + s
            ids[f"EMPTY {k}.{s}" if pipes > 1 else f"EMPTY {s}"] = 1 + pipes * stages + k * stages + s
        ids[f"producers {k}"] = 1 + 2 * pipes * stages + k
    if pipes == 1:
        for k in range(consumers):
            ids[f"ORDER {k}"] = 1 + 2 * pipes * stages + pipes + k
    return ids


def ring_barriers(stages: int = 3, pipes: int = 1):
    """conv2d 04c's ring (TF32 build: one ring of 3 stages): per stage its FULL barrier (the producers arrive when they
    have written it, the consumer syncs) and EMPTY barrier (the consumer arrives when its MMAs have read it, the
    producers sync), with the ids ws_barrier_ids computes, and the ORDER barriers that pass the ring between the
    consumers."""
    from matplotlib.patches import FancyArrowPatch, Rectangle

    ids = ws_barrier_ids(pipes, stages)
    colors = plt.get_cmap("Set2").colors
    fig, ax = plt.subplots(figsize=(11, 3.6))
    for s in range(stages):
        x = 2.2 + 2.6 * s
        ax.add_patch(Rectangle((x, 1.0), 2.0, 1.3, facecolor=colors[s], alpha=0.6, edgecolor="black"))
        ax.text(x + 1.0, 1.65, f"stage {s}", ha="center", va="center", fontsize=9)
        ax.text(x + 1.0, 2.55, f"FULL {s}: id {ids[f'FULL {s}']}", ha="center", fontsize=8)
        ax.text(x + 1.0, 0.6, f"EMPTY {s}: id {ids[f'EMPTY {s}']}", ha="center", fontsize=8)
    right = 2.2 + 2.6 * stages
    ax.text(0.9, 1.65, "producers\nwrite stage s,\narrive FULL s", ha="center", va="center", fontsize=8)
    ax.text(right + 0.9, 1.65, "consumer\nsyncs FULL s,\nMMAs, arrives\nEMPTY s", ha="center", va="center", fontsize=8)
    ax.add_patch(FancyArrowPatch((1.7, 2.9), (right + 0.2, 2.9), arrowstyle="->", mutation_scale=12,
                                 connectionstyle="arc3,rad=-0.08"))
    ax.text(right / 2 + 0.9, 3.35, "FULL: stage written (bar.arrive by producers, bar.sync by the consumer)",
            ha="center", fontsize=8)
    ax.add_patch(FancyArrowPatch((right + 0.2, 0.25), (1.7, 0.25), arrowstyle="->", mutation_scale=12,
                                 connectionstyle="arc3,rad=-0.08"))
    ax.text(right / 2 + 0.9, -0.3, "EMPTY: stage read (bar.arrive by the consumer, bar.sync by producers)",
            ha="center", fontsize=8)
    extra = ", ".join(f"{k}: id {v}" for k, v in ids.items() if not k.startswith(("FULL", "EMPTY")))
    ax.set_title(f"one ring of {stages} stages, named barriers ({extra}; id 0 is __syncthreads)", fontsize=9)
    ax.set_xlim(-0.2, right + 2.0)
    ax.set_ylim(-0.6, 3.7)
    ax.axis("off")
    fig.tight_layout()
    return fig
