"""The design diagrams of step 04's notebooks: what they draw follows the rules they illustrate, and each draws."""
from __future__ import annotations

import numpy as np
import pytest

from convfuse import diagrams as D
from convfuse import wgmma_layouts as L


def test_mma_fragments_give_every_element_to_exactly_one_lane_register():
    o = D.mma_fragment_owners()
    for name, regs in (("A", 4), ("B", 2), ("C", 4)):
        lanes, reg = o[name]
        assert (lanes >= 0).all() and (reg >= 0).all()
        pairs = {(int(a), int(b)) for a, b in zip(lanes.ravel(), reg.ravel())}
        assert len(pairs) == lanes.size == 32 * regs          # one element per (lane, register), none left over


def test_mma_fragments_follow_the_ptx_layout():
    o = D.mma_fragment_owners()
    # C: lane 5 (group 1, thread 1) holds row 1, columns 2 and 3 in c0, c1 and row 9 in c2, c3
    lanes, reg = o["C"]
    assert lanes[1, 2] == lanes[1, 3] == lanes[9, 2] == 5 and [reg[1, 2], reg[1, 3], reg[9, 2], reg[9, 3]] == [0, 1, 2, 3]
    # A: a2 of lane 6 is row 1, column 6; B: b1 of lane 6 is k 6, n 1
    assert (o["A"][0][1, 6], o["A"][1][1, 6]) == (6, 2)
    assert (o["B"][0][6, 1], o["B"][1][6, 1]) == (6, 1)


@pytest.mark.parametrize("lbo,sbo", [(1024, 128), (88 * 16, 128)])
def test_core_matrix_offsets_are_the_descriptor_model(lbo, sbo):
    off = D.core_matrix_offsets(64, 8, lbo, sbo)
    mem = np.arange(4096, dtype=np.float32).view(np.uint8)       # the float at byte b is b // 4
    assert np.array_equal(L.operand(mem, 0, lbo, 64, 8, 4, sbo=sbo), off // 4)
    # a core matrix is 128 contiguous bytes: rows 16 bytes apart, 4 TF32 in a row
    assert off[1, 0] - off[0, 0] == 16 and off[0, 1] - off[0, 0] == 4
    assert off[8, 0] == sbo and off[0, 4] == lbo
    assert len(set(off.ravel())) == off.size


def test_ring_schedule_respects_the_ring():
    for stages in (2, 3, 4):
        s = D.ring_schedule(chunks=16, stages=stages, produce=0.9, mma=1.0, epilogue=2.5)
        fill = {iv["chunk"]: iv for iv in s if iv["who"] == "producer"}
        use = {iv["chunk"]: iv for iv in s if iv["what"] == "MMAs"}
        assert sorted(fill) == sorted(use) == list(range(16))
        for c in range(16):
            assert use[c]["start"] >= fill[c]["end"] - 1e-9                            # read after it is filled
            assert use[c]["stage"] == fill[c]["stage"] == c % stages
            if c >= stages:
                assert fill[c]["start"] >= use[c - stages]["end"] - 1e-9               # refilled after release
        mmas = sorted((iv["start"], iv["end"]) for iv in s if iv["what"] == "MMAs")
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(mmas, mmas[1:]))                # one consumer issues at a time
        for k in ("consumer 0", "consumer 1"):                                          # a consumer does one thing at once
            mine = sorted((iv["start"], iv["end"]) for iv in s if iv["who"] == k)
            assert all(a[1] <= b[0] + 1e-9 for a, b in zip(mine, mine[1:]))
        # ping-pong: some epilogue overlaps the other consumer's MMAs
        epi = [iv for iv in s if iv["what"] == "epilogue"]
        assert any(o["who"] != e["who"] and o["start"] < e["end"] and o["end"] > e["start"]
                   for e in epi for o in s if o["what"] == "MMAs")


def test_winograd_example_is_the_direct_correlation():
    for seed in range(5):
        ex = D.winograd_example(seed)
        assert np.allclose(ex["Y"], ex["direct"])


def test_turned_gemm_swaps_the_operands():
    a, b = D.TURNED_ROLES["04b / 04c"], D.TURNED_ROLES["04d"]
    assert a["A"][0] == b["B"][0] == "weights" and a["B"][0] == b["A"][0] == "input pixels"
    assert b["A"][1].startswith("registers")


@pytest.mark.parametrize("name", ["mma_fragments", "wgmma_core_matrices", "ring_timeline", "turned_gemm",
                                  "winograd_flow"])
def test_each_diagram_draws(name, tmp_path):
    import matplotlib.pyplot as plt

    fig = getattr(D, name)()
    path = tmp_path / f"{name}.png"
    fig.savefig(path, dpi=60)
    assert path.stat().st_size > 5000
    plt.close(fig)
