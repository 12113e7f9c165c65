"""convfuse.lessons: a kernel read whole, diffs of the shipped files, and where each helper an excerpt calls lives."""
from __future__ import annotations

import pytest

from convfuse import lessons as Ls
from convfuse import registry as R


def test_04b_sections_cover_the_file_once():
    secs = Ls.walk(Ls.K04B, Ls.SECTIONS_04B)
    lines = (R.ROOT / Ls.K04B).read_text().splitlines()
    assert secs[0].first == 1 and secs[-1].last == len(lines)
    assert all(a.last + 1 == b.first for a, b in zip(secs, secs[1:]))
    assert all(s.text == "\n".join(lines[s.first - 1:s.last]).rstrip("\n") for s in secs)
    assert all(not ln.strip() for s in secs for ln in lines[s.first - 1 + len(s.text.splitlines()):s.last])
    assert [s.title for s in secs] == [t for t, _ in Ls.SECTIONS_04B]


def test_walk_refuses_a_missing_marker():
    with pytest.raises(LookupError):
        Ls.walk(Ls.K04B, [("a", None), ("b", "no such line in the file")])


def test_helpers_link_to_their_definitions():
    spans = {n: (f, a, b) for n, f, a, b in Ls.helper_spans(
        "named_sync<128>(1); Chunk::mma_rows<0>(acc); x = ring_tile(k, j); wgmma_tf32(acc, a, b, 1);",
        "kernels/conv2d/04c_warp_specialized_wgmma.cu")}
    assert spans["named_sync"][0] == "kernels/wgmma.cuh"
    assert spans["ring_tile"][0] == "kernels/conv2d/04c_warp_specialized_wgmma.cu"
    assert spans["mma_rows"][0] == "kernels/wgmma.cuh"
    for n, (f, a, b) in spans.items():
        text = "\n".join((R.ROOT / f).read_text().splitlines()[a - 1:b])
        assert n in text, n
    # a one-line function that calls another is not taken for the other's definition
    f, a, b = Ls.helper_spans("wgmma_desc(a, b, c);", "kernels/conv2d/04c_warp_specialized_wgmma.cu")[0][1:]
    assert f == "kernels/wgmma.cuh"


def test_diff_is_the_files_difference():
    text, (oa, ob), (na, nb) = Ls.diff_text(Ls.K04B, "kernels/conv2d/04c_warp_specialized_wgmma.cu", "mma_chunk",
                                            build=("conv2d", "04c_ws_tf32"))
    assert text.startswith(f"--- {Ls.K04B}:{oa}-{ob}") and "+            wgmma_tf32(am" in text
    same, _, _ = Ls.diff_text(Ls.K04B, Ls.K04B, "tile_coord")
    assert same == ""


def _code(stem):
    import nbformat
    nb = nbformat.read(R.ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def test_04b_shows_its_kernel_whole_and_later_pages_diff_from_it():
    code = _code("04b_wgmma")
    assert all(f'lessons.walk_section(K, PARTS, "{t}")' in code for t, _ in Ls.SECTIONS_04B)
    assert "K, PARTS = lessons.K04B, lessons.SECTIONS_04B" in code
    for stem in ("04c_warp_specialized", "04d_register_a", "04e_winograd"):
        assert "lessons.diff(lessons.K04B," in _code(stem), stem
    for stem in ("04_tensor_core_mma", "04b_wgmma", "04c_warp_specialized", "04d_register_a", "04e_winograd"):
        assert "study.kernel_excerpt(" not in _code(stem), f"{stem}: an excerpt without its helpers' lines"


def test_the_hopper_machinery_is_drawn_where_it_is_first_used():
    assert "diagrams.bank_layouts()" in _code("04b_wgmma")
    c = _code("04c_warp_specialized")
    for d in ("diagrams.tma_box()", "diagrams.mbarrier_phases()", "diagrams.ring_barriers(", "diagrams.ring_timeline("):
        assert d in c, d
    # 04b's kernel uses neither TMA nor mbarriers: 04c is where they are first used
    src = (R.ROOT / Ls.K04B).read_text()
    assert "tma_load" not in src and "mbar_" not in src
