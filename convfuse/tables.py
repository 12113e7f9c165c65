"""How a table looks on a page: one HTML formatter for every DataFrame a notebook shows, in Jupyter and in the report.

The study's helpers return plain DataFrames, numbers as numbers, so a notebook can compute with them; this module
decides how a reader sees them. Per column (per row where a "unit" column says each row is its own quantity): a count prints as a count (256, not 256.0, also where a missing row made
the column float), other numbers with one number of decimals for the whole column (at most three; a column of small
magnitudes only in scientific notation), markdown in a cell (`**fail**`, `` `code` ``, `*abl.*`) as the emphasis it
means, nothing cut off, and a missing value as a dash.
"""
from __future__ import annotations

import html
import math
import numbers
import re

import pandas as pd

MAX_DECIMALS = 3
SMALL = 1e-2            # a column whose magnitudes all stay below this (errors, bounds) prints in scientific notation
_MD = ((re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
       (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
       (re.compile(r"(?<![\w*])\*([^\s*][^*]*?)\*(?![\w*])"), r"<em>\1</em>"))


def _is_number(v) -> bool:
    return isinstance(v, numbers.Number) and not isinstance(v, bool) and not (isinstance(v, float) and math.isnan(v))


def _decimals(v: float) -> int:
    """The decimals `v` needs, up to MAX_DECIMALS (3.16736 -> 3, 56.5 -> 1, 34.0 -> 0)."""
    text = f"{v:.{MAX_DECIMALS}f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def number_format(values) -> "callable":
    """One format for a column's numbers: integers alike, else one number of decimals, else scientific."""
    nums = [float(v) for v in values if _is_number(v)]
    if all(v.is_integer() for v in nums):
        return lambda v: f"{int(v)}"
    if nums and max(abs(v) for v in nums) < SMALL and any(nums):
        return lambda v: f"{v:.1e}"
    d = max(_decimals(v) for v in nums)
    return lambda v: f"{v:.{d}f}"


LONG_WORD = 40          # a word longer than this (a cuDNN engine's name) may break after its _ and ::


def markdown_cell(text: str) -> str:
    """A cell's text as HTML: escaped, with its markdown emphasis and code spans rendered, and long symbols allowed
    to wrap where a reader would break them (so the cell stays whole without widening the page)."""
    out = html.escape(text, quote=False)
    for pattern, repl in _MD:
        out = pattern.sub(repl, out)
    return re.sub(r"\S{%d,}" % LONG_WORD, lambda m: re.sub(r"(_|::)", r"\1<wbr>", m.group(0)), out)


def cell_html(v, fmt) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT:
        return "—"
    if isinstance(v, (bool,)) or type(v).__name__ == "bool_":
        return "yes" if v else "no"
    if _is_number(v):
        return fmt(v)
    return markdown_cell(str(v))


def _column_html(values) -> list[str]:
    fmt = number_format(values)
    return [cell_html(v, fmt) for v in values]


def _row_number(v) -> str:
    """A number in a column whose rows carry their own units: a count whole, anything else to three decimals at
    most, trailing zeros dropped."""
    v = float(v)
    if v.is_integer():
        return f"{int(v):,}"
    return f"{v:.1e}" if abs(v) < SMALL else f"{v:.{MAX_DECIMALS}f}".rstrip("0").rstrip(".")


def frame_html(df: pd.DataFrame) -> str:
    """The table as a reader sees it (see the module's docstring), through pandas' own to_html. A frame with a
    "unit" column is one quantity a row (the evidence tables): its "value" column is formatted row by row."""
    out = df.copy()
    out = out.astype(object) if len(out.columns) else out
    for c in out.columns:
        per_row = c == "value" and "unit" in df.columns
        out[c] = [cell_html(v, _row_number) for v in df[c]] if per_row else _column_html(list(df[c]))
    if isinstance(out.index, pd.MultiIndex):
        levels = [_column_html(list(df.index.get_level_values(i))) for i in range(df.index.nlevels)]
        out.index = pd.MultiIndex.from_arrays(levels, names=df.index.names)
    else:
        out.index = pd.Index(_column_html(list(df.index)), name=df.index.name)
    out.columns = pd.Index([markdown_cell(str(c)) for c in df.columns], name=df.columns.name) \
        if not isinstance(df.columns, pd.MultiIndex) else df.columns
    with pd.option_context("display.max_colwidth", None):
        return out.to_html(escape=False, na_rep="—", notebook=True, border=0)


def install() -> bool:
    """Register frame_html as IPython's HTML formatter for DataFrames (a no-op outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None:
        return False
    ip.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)
    return True
