"""The kernels stay readable by a learner (issue 65): lexical checks over kernels/, no compiler needed.

- No kernel file over MAX_LINES lines unless its header (the comment block it opens with) says why: a line
  "Over N lines: <reason>" with N >= its length.
- No preprocessor switch around or inside a kernel's signature: a `__global__` declaration sits in no conditional but
  an architecture guard, and no directive stands between it and its body's brace. The registered builds differ by
  template parameters (one `constexpr` chosen from the registry's define, `if constexpr` below it).
- At most MAX_CONDITIONALS preprocessor conditionals per file, not counting include guards and architecture guards
  (`__CUDA_ARCH...`): the one place a build's define is read, and what `if constexpr` cannot express.
- No function (kernel, device function, launcher) over MAX_FUNCTION_LINES lines, from its first line (`template` or
  declaration) to its closing brace, unless the comment block right above it says why: a line "Over N lines: <reason>"
  with N >= its length. A learner sees a function whole on one screen; a kernel's roles (producer, consumer, a loop over
  tiles) are functions of their own.
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
MAX_FUNCTION_LINES = 120

_OPEN = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b(.*)$")
_ELSE = re.compile(r"^\s*#\s*(elif|else)\b")
_END = re.compile(r"^\s*#\s*endif\b")
_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")
_REASON = re.compile(r"\bover (\d[\d,]*) lines\b", re.I)
# an integer literal of 3+ digits added, subtracted or multiplied in (not a multiplier of something else, `+ 128 * k`)
_OFFSET = re.compile(r"(?<![\w.])(?:[+\-]\s*(\d{3,})\b(?!\s*[*/.])|\*\s*(\d{3,})\b(?!\.))")
_FUNC_HEAD = re.compile(r"\)\s*(?:const\s*)?(?:noexcept\s*)?(?:->[^{;]*)?$")   # a definition's text before `{`
_FUNC_NAME = re.compile(r"([\w:~]+)\s*\(")
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


def functions(text: str) -> list[tuple[int, int, str]]:
    """[(first line, last line, name)] of the functions defined at file, namespace or struct scope: a `{` whose
    statement (since the last `;`, `{` or `}` there) ends with a parameter list (and const, noexcept or a trailing
    return type), up to its matching `}`. The first line is the statement's (a `template <...>` line included).
    Directives and macro bodies are skipped; comments and strings do not count (_code)."""
    out, stack, stmt, first = [], [], "", None     # stack: "func" for a function's own brace, "in" inside it, "scope"
    continued = False
    for i, line in _code(text):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            continue
        for ch in line:
            in_func = "func" in stack
            if ch == "{":
                if in_func:
                    stack.append("in")
                    continue
                s = stmt.strip()
                if _FUNC_HEAD.search(s) and not re.match(r"(struct|class|union|enum|namespace)\b", s):
                    names = _FUNC_NAME.findall(s)
                    stack.append("func")
                    out.append([first, None, names[-1] if names else s[:40]])
                    # the name: the last `name(` before the parameter list's own parentheses
                    depth, k = 0, len(s) - 1
                    while k >= 0:
                        depth += {")": 1, "(": -1}.get(s[k], 0)
                        if depth == 0 and s[k] == "(":
                            m = re.search(r"([\w:~]+)\s*$", s[:k])
                            out[-1][2] = m.group(1) if m else out[-1][2]
                            break
                        k -= 1
                else:
                    stack.append("scope")
                stmt, first = "", None
            elif ch == "}":
                if stack and stack.pop() == "func":
                    out[-1][1] = i
                if "func" not in stack:
                    stmt, first = "", None
            elif in_func:
                continue
            elif ch == ";":
                stmt, first = "", None
            else:
                if first is None and not ch.isspace():
                    first = i
                stmt += ch
        if "func" not in stack:
            stmt += " "
    return [(a, b, name) for a, b, name in out if b is not None]


def comment_above(text: str, line: int) -> str:
    """The comment block (whole `//` lines) right above line `line`, joined."""
    lines, out, k = text.splitlines(), [], line - 2
    while k >= 0 and lines[k].lstrip().startswith("//"):
        out.insert(0, lines[k].strip())
        k -= 1
    return " ".join(out)


def long_functions(text: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[int, str, int]]:
    """[(first line, name, lines)] of functions over `limit` lines whose comment block does not say "Over N lines:"
    with N >= their length."""
    out = []
    for a, b, name in functions(text):
        n = b - a + 1
        m = re.search(r"\bover (\d[\d,]*) lines:", comment_above(text, a), re.I)
        if n > limit and not (m and int(m.group(1).replace(",", "")) >= n):
            out.append((a, name, n))
    return out


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


def test_no_function_over_the_size_without_a_reason_above_it():
    long = {_rel(p): long_functions(t) for p, t in kernel_files().items() if long_functions(t)}
    assert not long, (f"functions over {MAX_FUNCTION_LINES} lines without '// Over N lines: why' right above them "
                      f"(line, name, lines): {long}")


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

# conv2d 04d's kernel at 8c773e2 (129 lines): its opening and producer branch as they were, the consumer branch cut
OLD_04D_KERNEL = """
__global__ void __launch_bounds__(THREADS, 1)
conv2d_rs_kernel(const __grid_constant__ CUtensorMap xmap, const float* __restrict__ x, const float* __restrict__ w,
                 const float* __restrict__ bias, const float* __restrict__ mult, float* __restrict__ y, Geom g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) float smem[];
    float* sw = smem;
    float* rings = sw + WFLOATS;
    uint64_t* bars = reinterpret_cast<uint64_t*>(rings + RING_FLOATS);
    if (threadIdx.x == 0) {
        for (int i = 0; i < CONSUMERS * STAGES; ++i) {
            mbar_init(bars + i, g.tma ? 1 : 32);                       // FULL: the TMA's expect_tx, or a warp's cp.async
            mbar_init(bars + CONSUMERS * STAGES + i, 128);             // EMPTY: every thread of the consumer
        }
        mbar_init_fence();
    }
    stage_weights(sw, w);
    fence_proxy_async();                         // the weights, written by ordinary stores, are read by wgmma
    __syncthreads();
    const int wg = threadIdx.x >> 7;
#ifdef CF_3XTF32
    consumer_3x(xmap, x, bias, mult, y, g, sw, rings, bars, wg);
#else
    if (wg == 0) {
        // ---- producer: warp k fills consumer k's ring, one TMA per chunk ----
        setmaxnreg_dec<PRODUCER_REGS>();
        const int stride = tile_stride();           // in each branch: read before setmaxnreg, it was kept on the stack
        const int k = threadIdx.x >> 5, lane = threadIdx.x & 31;
        if (k >= CONSUMERS || (g.tma && lane != 0)) return;     // one thread per ring issues its TMAs
        float* ring = rings + k * STAGES * STAGE_FLOATS;
        uint64_t* full = bars + k * STAGES;
        uint64_t* empty = bars + CONSUMERS * STAGES + k * STAGES;
        int slot = 0;
        unsigned phase = 0;
#pragma unroll 1
        for (int tile = first_tile(k); tile < g.tiles; tile += stride) {
            const TileCoord tc = tile_coord(g, tile);
#pragma unroll 1
            for (int chunk = 0; chunk < NCHUNK; ++chunk) {
                mbar_wait(empty + slot, phase ^ 1u);      // a fresh barrier's previous phase counts as complete
                float* dst = ring + slot * STAGE_FLOATS;
                if (g.tma) {
                    if (lane == 0) {
                        mbar_arrive_expect_tx(full + slot, STAGE_FLOATS * 4);
                        tma_load_4d(dst, &xmap, tc.ox0, tc.oh, CHUNK * chunk, tc.n, full + slot);
                    }
                } else {
                    load_stage(dst, x, g, tc, CHUNK * chunk, lane);
                    cp_async_mbar_arrive(full + slot);
                }
                if (++slot == STAGES) { slot = 0; phase ^= 1u; }
            }
        }
        cp_async_wait<0>();                          // the fallback's copies have landed before the thread exits
    }
#endif  // CF_3XTF32
#endif
}

}  // namespace cf04d

const char* launch(const ConvArgs& a, cudaStream_t stream) { return nullptr; }
"""


def test_the_function_check_finds_the_old_kernel_and_its_end():
    # the quoted kernel is 57 lines: over a limit of 50, not over one of 57; the one-line launcher beside it is found too
    assert functions(OLD_04D_KERNEL) == [(2, 58, "conv2d_rs_kernel"), (62, 62, "launch")]
    assert long_functions(OLD_04D_KERNEL, limit=50) == [(2, "conv2d_rs_kernel", 57)]
    assert long_functions(OLD_04D_KERNEL, limit=57) == []
    reason = OLD_04D_KERNEL.replace("\n__global__", "\n// Over 60 lines: a reason.\n__global__", 1)
    assert long_functions(reason, limit=50) == []
    short = OLD_04D_KERNEL.replace("\n__global__", "\n// Over 40 lines: too few.\n__global__", 1)
    assert long_functions(short, limit=50) == [(3, "conv2d_rs_kernel", 57)]


def test_the_function_check_reads_templates_structs_and_lambdas():
    text = ("template <int N>\n__device__ __forceinline__ float f(const float (&a)[N]) {\n"
            "    auto g = [&](int i) { return a[i]; };\n    return g(0);\n}\n"
            "struct S {\n    int v;\n    __device__ int get() const {\n        return v;\n    }\n};\n"
            "constexpr int T[] = {1, 2};\n#define M(x) { x; }\n")
    assert functions(text) == [(1, 5, "f"), (8, 10, "get")]


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
