"""The kernels stay readable by a learner (issue 65): lexical checks over kernels/, no compiler needed.

- No kernel file over MAX_LINES lines unless its header (the comment block it opens with) says why: a line
  "Over N lines: <reason>" with N >= its length.
- No preprocessor switch around or inside a kernel's signature: a `__global__` declaration sits in no conditional but
  an architecture guard, and no directive stands between it and its body's brace. The registered builds differ by
  template parameters (one `constexpr` chosen from the registry's define, `if constexpr` below it).
- At most MAX_CONDITIONALS preprocessor conditionals per file, not counting include guards and architecture guards
  (`__CUDA_ARCH...`): the one place a build's define is read, and what `if constexpr` cannot express.
- No numeric literal used as a shared-memory byte offset: an integer of three digits or more added to, subtracted from
  or multiplying an address expression (`wc + 9216`, `chunk * 18432`, `h[at + 4608]`), or handed to a wgmma descriptor
  (`desc(..., 1024)`), outside a constant's definition. Offsets are named constants computed from the layout they
  index. Decimal literals only: masks and limits are written in hex.

Each check has a negative control below, quoted from the kernels as they were before issue 65 (8c773e2), so a check that
stopped catching what it was written for fails too.
"""
import re
from pathlib import Path

import pytest

from convfuse import registry as R

MAX_LINES = 900
MAX_CONDITIONALS = 4

_OPEN = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b(.*)$")
_ELSE = re.compile(r"^\s*#\s*(elif|else)\b")
_END = re.compile(r"^\s*#\s*endif\b")
_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")
_REASON = re.compile(r"\bover (\d[\d,]*) lines\b", re.I)
# an integer literal of 3+ digits added, subtracted or multiplied in (not a multiplier of something else, `+ 128 * k`)
_OFFSET = re.compile(r"(?<![\w.])(?:[+\-]\s*(\d{3,})\b(?!\s*[*/.])|\*\s*(\d{3,})\b(?!\.))")
_DESC_CALL = re.compile(r"\b\w*desc\w*\s*\(")
_BIG_LITERAL = re.compile(r"(?<![\w.])\d{3,}\b(?![.\w])")


def kernel_files() -> dict:
    return {p: p.read_text() for p in sorted(R.KERNELS.rglob("*")) if p.is_file() and p.suffix in (".cu", ".cuh", ".h")}


def _code(text: str):
    """(line number, code) with comments and string literals blanked, line numbers kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    for i, line in enumerate(text.splitlines(), 1):
        yield i, re.sub(r'"(\\.|[^"\\])*"', '""', line.split("//", 1)[0])


def _is_guard(cond: str, next_line: str) -> bool:
    """An architecture guard, or an include guard (#ifndef X followed by #define X)."""
    if "__CUDA_ARCH" in cond:
        return True
    m = re.match(r"\s*(\w+)\s*$", cond)
    return bool(m and re.match(rf"^\s*#\s*define\s+{m.group(1)}\b", next_line))


def conditionals(text: str) -> list[tuple[int, str]]:
    """The preprocessor conditionals a file opens, guards left out: [(line, directive)]."""
    lines = text.splitlines() + [""]
    out = []
    for i, line in _code(text):
        m = _OPEN.match(line)
        if m and not _is_guard(m.group(2) if m.group(1) != "ifdef" else m.group(2), lines[i] if i < len(lines) else ""):
            out.append((i, line.strip()))
    return out


def switched_kernels(text: str) -> list[int]:
    """Lines of `__global__` declarations inside a conditional other than a guard, or with a directive between the
    declaration and its body."""
    lines = text.splitlines() + [""]
    stack, bad, pending = [], [], None
    for i, line in _code(text):
        m = _OPEN.match(line)
        if m:
            stack.append(not _is_guard(m.group(2), lines[i] if i < len(lines) else ""))
        elif _END.match(line) and stack:
            stack.pop()
        if pending is not None and _DIRECTIVE.match(line):
            bad.append(pending)
            pending = None
        if "__global__" in line:
            if any(stack):
                bad.append(i)
            elif "{" not in line:
                pending = i
        if pending is not None and "{" in line and i != pending:
            pending = None
    return sorted(set(bad))


def literal_offsets(text: str) -> list[tuple[int, str]]:
    """[(line, literal)] of numbers of 3+ digits used as an address offset or a descriptor argument, outside constant
    definitions, static_asserts and directives."""
    out = []
    for i, line in _code(text):
        s = line.strip()
        if not s or s.startswith("#") or "constexpr" in s or "static_assert" in s:
            continue
        out += [(i, m.group(0).strip()) for m in _OFFSET.finditer(line)]
        if _DESC_CALL.search(line):
            out += [(i, m.group(0)) for m in _BIG_LITERAL.finditer(line[_DESC_CALL.search(line).start():])]
    return out


def stated_limit(text: str) -> int:
    """The length a file's header allows: MAX_LINES, or N of an "Over N lines:" line in its opening comment block."""
    header = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        header.append(line)
    m = _REASON.search(" ".join(header))
    return max(MAX_LINES, int(m.group(1).replace(",", ""))) if m else MAX_LINES


def _rel(p: Path) -> str:
    return str(p.relative_to(R.ROOT))


def test_no_kernel_file_over_the_size_without_a_reason_in_its_header():
    long = {_rel(p): (t.count("\n"), stated_limit(t)) for p, t in kernel_files().items()
            if t.count("\n") > stated_limit(t)}
    assert not long, f"over {MAX_LINES} lines without 'Over N lines: why' in the header (lines, allowed): {long}"


def test_no_preprocessor_switch_in_a_kernel_signature():
    bad = {_rel(p): switched_kernels(t) for p, t in kernel_files().items() if switched_kernels(t)}
    assert not bad, f"__global__ declarations inside a preprocessor switch (template parameters instead): {bad}"


def test_few_preprocessor_conditionals_per_file():
    many = {_rel(p): conditionals(t) for p, t in kernel_files().items() if len(conditionals(t)) > MAX_CONDITIONALS}
    assert not many, f"more than {MAX_CONDITIONALS} conditionals (if constexpr on template parameters instead): {many}"


def test_no_numeric_literal_as_a_shared_memory_offset():
    bad = {_rel(p): literal_offsets(t) for p, t in kernel_files().items() if literal_offsets(t)}
    assert not bad, f"numeric byte offsets (name them, computed from the layout they index): {bad}"


# --- negative controls: the kernels as they were before issue 65 (8c773e2) fail each check ---------------------------

OLD_04C = '''
        const uint32_t wc = wa + chunk * 18432;          // this chunk's [w_lo(0..8)][w_hi(0..8)]
            wgmma_f16(ac, desc(wc + t * 1024, 9216), desc(xa + tap_offset(t), XPART * 4), more || t > 0);
                h[at + 4608] = hi;
'''
OLD_04B_SIGNATURE = '''
#ifdef CF_GROUP_STORE
template <bool WIN>
__global__ void __launch_bounds__(THREADS, 1)
conv3d_wgmma_kernel(const __grid_constant__ CUtensorMap ymap, const float* __restrict__ x, Geom g) {
#else
__global__ void __launch_bounds__(THREADS, 1)
conv3d_wgmma_kernel(const float* __restrict__ x, Geom g) {
#endif
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#endif
}
'''


def test_the_checks_catch_what_the_kernels_held_before():
    found = {lit for _, lit in literal_offsets(OLD_04C)}
    assert {"* 18432", "* 1024", "9216", "+ 4608"} <= found
    assert switched_kernels(OLD_04B_SIGNATURE) == [4, 7]
    assert len(conditionals(OLD_04B_SIGNATURE)) == 1                      # the arch guard is not counted
    assert stated_limit("// x\n// Over 1,100 lines: two loops share the staging.\nint a;\n") == 1100
    assert stated_limit("// x\nint a;\n// Over 1,100 lines\n") == MAX_LINES


@pytest.mark.parametrize("ok", [
    "const int i = threadIdx.x + 128 * k;",                # a thread count, not an offset
    "if (x < 0x7fffffffLL - 1) return;",                   # hex: a limit
    "constexpr int XBUF = 2 * XHALF + 16;",                # a constant's definition names the layout
    "const uint64_t d = wgmma_desc(smem_addr(sw), B_KHALF, CORE_MATRIX_BYTES);",
])
def test_the_offset_check_leaves_names_and_counts_alone(ok):
    assert literal_offsets(ok) == []


def test_the_include_and_arch_guards_are_not_conditionals():
    text = "#ifndef CF_X_H\n#define CF_X_H\n#if defined(__CUDA_ARCH__)\n#endif\n#endif\n#ifdef CF_1XF16\n#endif\n"
    assert [d for _, d in conditionals(text)] == ["#ifdef CF_1XF16"]
