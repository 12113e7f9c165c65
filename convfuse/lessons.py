"""Step 04's lessons: one kernel file read whole, section by section; what a later kernel changes, as diffs of the
shipped files; and where every helper an excerpt calls is defined. Everything is read from the files at render time,
so a page cannot drift from the code it shows (the excerpts themselves come from convfuse.study.kernel_lines).

    walk(relpath, sections)          the file cut at the sections' markers: every line in exactly one section
    walk_section(relpath, sections, title)   one of them, under its file and line numbers, with its helpers' lines
    diff(old, new, ...)              a unified diff of two files' named functions or marked ranges, as a diff block
    helpers(text, relpath)           each function the text calls that a kernel file defines, with its file and lines
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from . import registry as R
from . import study

# where the helpers of an sm_90a kernel live, besides the kernel file itself (build.py prepends them in this order)
SHARED = ("kernels/wgmma.cuh", "kernels/common.cuh", "kernels/conv_args.h")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^<>;()]*>)?\s*\(")
_NOT_HELPERS = {"if", "for", "while", "switch", "return", "sizeof", "static_assert", "asm", "volatile", "min", "max",
                "defined", "reinterpret_cast", "static_cast", "const_cast", "__launch_bounds__", "__align__",
                "make_float2", "make_float4", "__ldg", "__uint_as_float", "__float_as_uint", "__any_sync", "fabsf",
                "decltype", "alignas", "uint64_t", "uint32_t", "int", "float", "bool", "size_t", "uintptr_t", "catch"}


@dataclass(frozen=True)
class Section:
    title: str
    first: int          # 1-based, inclusive
    last: int
    text: str


def walk(relpath: str, sections) -> list[Section]:
    """`sections` = [(title, marker), ...] in file order; a section runs from the first line (after the previous
    section's start) containing its marker to the line before the next section's, the first from line 1, the last to
    the end of the file. Raises LookupError if a marker is missing or out of order: the sections cover the file."""
    lines = (R.ROOT / relpath).read_text().splitlines()
    starts = []
    at = 0
    for i, (title, marker) in enumerate(sections):
        if i == 0:
            starts.append(0)
            continue
        k = next((j for j in range(at + 1, len(lines)) if marker in lines[j]), None)
        if k is None:
            raise LookupError(f"{relpath}: no line containing {marker!r} after line {at + 1} (section {title!r})")
        starts.append(k)
        at = k
    ends = starts[1:] + [len(lines)]
    return [Section(t, a + 1, b, "\n".join(lines[a:b]).rstrip("\n"))
            for (t, _), a, b in zip(sections, starts, ends)]


def _defines(relpath: str, name: str) -> tuple[int, int] | None:
    """Lines (first, last) defining function `name` in a file: its definition (study.kernel_lines), or the lines of a
    macro that defines it (`CF_WGMMA(name, ...)`)."""
    try:
        a, b, text = study.kernel_lines(relpath, name=name)
        code = "\n".join(study._code_only(ln) for ln in text.splitlines())
        m = re.search(rf"(\w+|[&*>])\s*{re.escape(name)}\s*\(", code)
        if m and m.group(1) not in ("return", "else", "do"):       # not a one-line function that calls `name`
            return a, b
    except LookupError:
        pass
    lines = (R.ROOT / relpath).read_text().splitlines()
    hits = [i for i, ln in enumerate(lines) if re.match(rf"\s*[A-Z_][A-Z0-9_]*\(\s*{re.escape(name)}\s*,", ln)]
    return (hits[0] + 1, hits[-1] + 1) if hits else None


def called(text: str) -> list[str]:
    """Names of the functions `text` calls (comments and strings left out), in order of first call."""
    code = "\n".join(study._code_only(ln) for ln in text.splitlines())
    code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', code)
    out = []
    for m in _CALL.finditer(code):
        n = m.group(1)
        if n not in _NOT_HELPERS and n not in out:
            out.append(n)
    return out


def helper_spans(text: str, relpath: str, exclude=(), within=None) -> list[tuple[str, str, int, int]]:
    """(name, file, first, last) for each function `text` calls that the kernel file `relpath` or a shared header
    defines; a name the excerpt itself defines (lines `within` of relpath, or a definition line in `text`) or
    `exclude` names is left out."""
    own = set(exclude)
    for ln in text.splitlines():
        m = re.match(r"\s*(?:template\s*<[^>]*>\s*)?(?:static\s+)?(?:__host__\s+)?(?:__device__|__global__|inline)"
                     r"[^(]*?\b(\w+)\s*\(", study._code_only(ln))
        if m:
            own.add(m.group(1))
    out = []
    for name in called(text):
        if name in own:
            continue
        for f in (relpath, *SHARED):
            if not (R.ROOT / f).exists():
                continue
            span = _defines(f, name)
            if span:
                if not (f == relpath and within and within[0] <= span[0] and span[1] <= within[1]):
                    out.append((name, f, *span))
                break
    return out


def helpers(text: str, relpath: str, exclude=(), within=None) -> str:
    """One Markdown line naming where each helper `text` calls is defined: `name` (file, lines a–b)."""
    spans = helper_spans(text, relpath, exclude, within)
    if not spans:
        return ""
    return "Helpers it calls: " + "; ".join(f"`{n}` ({f}, " + (f"line {a}" if a == b else f"lines {a}–{b}") + ")"
                                             for n, f, a, b in spans) + "."


def walk_section(relpath: str, sections, title: str, links: bool = True):
    """Section `title` of the file (walk), its lines under a heading with the file and line numbers, then where each
    helper it calls from elsewhere is defined."""
    sec = next((s for s in walk(relpath, sections) if s.title == title), None)
    if sec is None:
        raise LookupError(f"{relpath}: no section {title!r}")
    body = f"**`{relpath}`**, lines {sec.first}–{sec.last} ({sec.title})\n\n```cuda\n{sec.text}\n```"
    if links:
        h = helpers(sec.text, relpath, within=(sec.first, sec.last))
        if h:
            body += "\n\n" + h
    return study.md(body)


def _span(relpath: str, name: str | None, start: str | None, end: str | None, after: str | None,
          build: tuple[str, str] | None) -> tuple[int, int, str]:
    if name is not None:
        a, b, text = study.kernel_lines(relpath, name=name)
    else:
        a, b, text = study.kernel_lines(relpath, start=start, end=end, after=after)
    if build is not None:
        text = study.select_branches(text, R.get(*build).defines)
    return a, b, text


def diff_text(old: str, new: str, name: str | None = None, *, old_name: str | None = None,
              start: str | None = None, end: str | None = None, old_start: str | None = None,
              old_end: str | None = None, after: str | None = None, old_after: str | None = None,
              build: tuple[str, str] | None = None, old_build: tuple[str, str] | None = None) -> tuple[str, tuple, tuple]:
    """The unified diff (whole functions as context) of function `old_name` (default `name`) or the marked range
    in file `old` against function `name` or the marked range in file `new`, each as its registered build compiles it;
    returns (diff text, (old first, old last), (new first, new last))."""
    oa, ob, ot = _span(old, old_name or name, old_start or start, old_end or end, old_after, old_build)
    na, nb, nt = _span(new, name, start, end, after, build)
    ol, nl = ot.splitlines(), nt.splitlines()
    d = difflib.unified_diff(ol, nl, fromfile=f"{old}:{oa}-{ob}", tofile=f"{new}:{na}-{nb}", lineterm="",
                             n=max(len(ol), len(nl)))
    return "\n".join(d), (oa, ob), (na, nb)


def diff(old: str, new: str, name: str | None = None, links: bool = True, **kw):
    """diff_text as a Markdown ```diff block under a heading naming both files and line ranges, followed by where
    each helper the new lines call is defined."""
    text, (oa, ob), (na, nb) = diff_text(old, new, name, **kw)
    what = f"`{name}`" if name else "the lines"
    head = f"**{what}: `{old}` lines {oa}–{ob} → `{new}` lines {na}–{nb}**"
    if not text:
        return study.md(head + ": the same lines.")
    body = f"{head}\n\n```diff\n{text}\n```"
    if links:
        added = "\n".join(ln[1:] for ln in text.splitlines()[2:] if ln.startswith("+"))
        h = helpers(added, new, exclude=(name,) if name else (), within=(na, nb))
        if h:
            body += "\n\n" + h.replace("Helpers it calls", "Helpers the new lines call")
    return study.md(body)


# conv2d 04b, the kernel the step-04 pages read whole: its sections, in file order (notebooks/04b_wgmma.ipynb)
K04B = "kernels/conv2d/04b_implicit_gemm_wgmma.cu"
SECTIONS_04B = (
    ("header", None),
    ("constants", "namespace cf04b {"),
    ("tiles", "struct Geom {"),
    ("loads", "struct Staged"),
    ("staging", "void store_chunk("),
    ("MMAs", "// The 9 wgmmas of one chunk"),
    ("descriptors", "// Descriptors of the weights"),
    ("epilogue", "// Bias, epilogue and stores"),
    ("kernel", "__global__ void"),
    ("launch", "}  // namespace cf04b"),
)


def kernel_excerpt(relpath: str, *names: str, start: str | None = None, end: str | None = None,
                   after: str | None = None, build: tuple[str, str] | None = None, note: str = ""):
    """study.kernel_excerpt (the lines, read from the file, as the registered build compiles them), followed by where
    each helper those lines call from outside them is defined (file and lines, computed from the files)."""
    shown = study.kernel_excerpt(relpath, *names, start=start, end=end, after=after, build=build, note=note)
    if not (R.ROOT / relpath).exists():
        return shown
    spans = [study.kernel_lines(relpath, name=n) for n in names] if names else \
        [study.kernel_lines(relpath, start=start, end=end, after=after)]
    text = "\n".join(t for _, _, t in spans)
    if build is not None:
        text = study.select_branches(text, R.get(*build).defines)
    own = [n for n in called(text) if any(a <= (_defines(relpath, n) or (0, 0))[0] and
                                          (_defines(relpath, n) or (0, 0))[1] <= b for a, b, _ in spans)]
    h = helpers(text, relpath, exclude=own)
    return study.md(shown.data + ("\n\n" + h if h else ""))
