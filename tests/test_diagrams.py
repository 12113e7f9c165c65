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


def test_the_core_matrix_layout_reads_in_one_wavefront_and_swizzle_is_what_rows_of_128_bytes_need():
    assert [D.wavefronts(D.core_matrix_read(lay)) for lay in D.SWIZZLE_LAYOUTS] == [1, 8, 1]
    # the study's layout is the descriptor model's (wgmma_layouts.operand, sbo = 128): one core matrix, 128 B
    assert np.array_equal(D.core_matrix_read("core matrices"), D.core_matrix_offsets(8, 4))
    assert sorted(D.core_matrix_read("core matrices").ravel()) == list(range(0, 128, 4))
    # a swizzle permutes the 16-byte units inside each 1 KB atom (128 B mode): nothing lost, nothing doubled
    a = np.arange(0, 1024, 16)
    for mode in (32, 64, 128):
        sw = D.swizzle(a, mode)
        assert sorted(sw) == list(a) and (sw // 128 == a // 128).all()
    assert (D.swizzle(a, 0) == a).all()


def test_the_wgmma_descriptor_is_built_without_swizzle():
    """The page says these kernels use no swizzle: the shipped descriptor leaves bits 62-63 at 0 and the TMA map asks
    for none."""
    from convfuse import registry as R
    text = (R.ROOT / "kernels" / "wgmma.cuh").read_text()
    body = text[text.index("uint64_t wgmma_desc("):]
    body = body[:body.index("}")]
    assert "<< 62" not in body and "<< 32" in body
    assert "CU_TENSOR_MAP_SWIZZLE_NONE" in text and "CU_TENSOR_MAP_SWIZZLE_128B" not in text


def test_the_tma_box_is_the_copy_the_producer_reads():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 16, 8, 256)).astype(np.float32)
    for t in range(3):
        ox0 = t * L.TW
        p = D.tma_box_placement(ox0, 256)
        assert p["start"] % L.TMA_ALIGN == 0 and 0 <= p["shift"] < L.TMA_ALIGN
        assert p["shift"] + L.XW <= p["width"]                         # the staged pixels lie inside the box
        staged, nbytes = L.staged_from_tma(x, 0, 0, ox0, 1)
        assert nbytes == p["bytes"]                                    # expect_tx's count is the box's bytes
        cols = np.arange(*p["staged"])
        ok = cols < 256
        assert np.array_equal(staged[0, ok, :], x[0, 8:16, 0, cols[ok]])
        assert not staged[0, ~ok, :].any() and (p["zero_from"] == 256) == (~ok).any()


def test_the_raw_buffers_mbarriers_wait_for_their_own_copy():
    for raws in (2, 3):
        ev = D.raw_buffer_trace(chunks=9, raws=raws)
        waits = [e for e in ev if e["kind"] == "wait"]
        assert [w["chunk"] for w in waits] == list(range(9))
        assert all(w["holds"] == w["chunk"] for w in waits)           # the copy of that chunk has landed, no other
        assert [w["parity"] for w in waits if w["buf"] == 0] == [i % 2 for i in range(len(waits[::raws]))]
    # a wrong parity (always 0) returns at once on a phase that completed earlier: the buffer holds an older chunk
    bad = [e for e in D.raw_buffer_trace(6, 2, parity_of=lambda c, bits, b: 0) if e["kind"] == "wait"]
    assert any(w["holds"] != w["chunk"] for w in bad)
    m = D.MBarrier(1)
    m.arrive(expect_tx=64)
    assert not m.try_wait_parity(0)                                   # arrived, bytes not yet landed
    m.complete_tx(64)
    assert m.try_wait_parity(0) and not m.try_wait_parity(1) and m.pending == 1


def test_the_model_mirrors_the_producers_expressions():
    from convfuse import registry as R
    src = " ".join((R.ROOT / "kernels/conv2d/04c_warp_specialized_wgmma.cu").read_text().split())
    for expr in ("mbar_wait(bars + buf, (parity >> buf) & 1u);", "parity ^= 1u << buf;",
                 "mbar_arrive_expect_tx(bars + b, RAWF * 4);", "buf = buf + 1 == RAWS ? 0 : buf + 1;",
                 "constexpr int RAWS = 2;", "constexpr int RAW_PITCH = XW + 4;", "constexpr int RAWF = CHUNK * RAW_PIX;",
                 "{(uint32_t)RAW_PITCH, (uint32_t)XH, (uint32_t)CHUNK, 1u}",
                 "int full_bar(int k, int s) { return 1 + k * STAGES + s; }",
                 "int empty_bar(int k, int s) { return 1 + PIPES * STAGES + k * STAGES + s; }",
                 "int order_bar(int k) { return 1 + 2 * PIPES * STAGES + PIPES + k; }",
                 "named_sync<PTHREADS>(1 + 2 * PIPES * STAGES + k);",
                 "constexpr int PIPES = X1F16 ? CONSUMERS : 1;", "constexpr int STAGES = X3F16 ? 4 : 3;",
                 "if (PIPES == 1 && j > 0) order_wait(k);"):
        assert expr in src, expr


@pytest.mark.parametrize("build,pipes,stages", [("tf32", 1, 3), ("3xfp16", 1, 4), ("fp16", 2, 3)])
def test_every_04c_build_has_distinct_named_barriers_under_16(build, pipes, stages):
    ids = D.ws_barrier_ids(pipes, stages)
    assert len(set(ids.values())) == len(ids) and min(ids.values()) >= 1 and max(ids.values()) <= 15, ids
    assert sum(k.startswith("FULL") for k in ids) == pipes * stages


@pytest.mark.parametrize("name", ["mma_fragments", "wgmma_core_matrices", "ring_timeline", "turned_gemm",
                                  "winograd_flow", "bank_layouts", "tma_box", "mbarrier_phases", "ring_barriers"])
def test_each_diagram_draws(name, tmp_path):
    import matplotlib.pyplot as plt

    fig = getattr(D, name)()
    path = tmp_path / f"{name}.png"
    fig.savefig(path, dpi=60)
    assert path.stat().st_size > 5000
    plt.close(fig)
