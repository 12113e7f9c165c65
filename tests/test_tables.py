"""convfuse.tables: how every DataFrame a page shows is drawn (the rendered report's own test reads the pages)."""
import pandas as pd

from convfuse import tables


def _cells(html: str) -> list[str]:
    import re
    return re.findall(r"<td>(.*?)</td>", html)


def test_counts_print_as_counts_and_a_column_keeps_one_number_of_decimals():
    df = pd.DataFrame({"threads": [256.0, None, 65536.0], "ms": [3.16736, 1.5, 2.0]})
    assert _cells(tables.frame_html(df)) == ["256", "3.167", "—", "1.500", "65536", "2.000"]


def test_small_magnitudes_in_scientific_notation_and_markdown_rendered():
    df = pd.DataFrame({"rel L2": [1e-3, 2e-6], "verdict": ["**kept**", "`x` *abl.*"], "ok": [True, False]})
    assert _cells(tables.frame_html(df)) == ["1.0e-03", "<strong>kept</strong>", "yes",
                                            "2.0e-06", "<code>x</code> <em>abl.</em>", "no"]


def test_nothing_is_cut_and_long_symbols_may_wrap():
    name = "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x64x32_execute_kernel"
    html = tables.frame_html(pd.DataFrame({"kernel": [name], "note": ["x" * 120]}))
    assert "…" not in html and "..." not in html and "x" * 120 in html
    assert html.count("<wbr>") == name.count("_") and name == html.split("<td>")[1].split("</td>")[0].replace("<wbr>", "")


def test_a_value_column_with_units_is_formatted_row_by_row():
    df = pd.DataFrame({"what": ["pipe", "instructions", "stall"], "value": [60.59, 875383924.0, 0.001],
                       "unit": ["%", "instructions", "warps"]})
    assert _cells(tables.frame_html(df))[1::3] == ["60.59", "875,383,924", "1.0e-03"]
