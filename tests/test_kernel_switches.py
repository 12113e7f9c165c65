"""kernels/ holds the code the registered variants compile, nothing else (README, "Working on a kernel").

A preprocessor switch is a CF_* macro that a kernel file tests (#if, #ifdef, #ifndef, #elif, defined()). Every switch
must be set by a registered variant's defines: by a variant built from that file (a .cu under kernels/<problem>/), or
by any variant (a header every kernel includes). A switch defined inside a header and tested by the kernels is no
variant's choice either, so it fails too. A candidate lives in a scratch copy, not behind a switch, so these fail
the moment one is left in the tree. And the tree stays readable: at most MAX_SWITCHES distinct switches, no file over
MAX_FILE_LINES lines, kernels/ at most MAX_TOTAL_LINES lines.
"""
import re
from pathlib import Path

from convfuse import registry as R

MAX_SWITCHES = 30
MAX_FILE_LINES = 1500
# 7000 + 159: the family's tf32h design (kernels/family/conv_epilogue_window_wgmma.cuh, 110 lines; the window's
# WinCore and shared drain, 40; wgmma.cuh's register-A core made pasteable, 9). Back to 7000 or below once
# conv_epilogue_mma.cuh (188 lines) is deleted after the next GPU measurement.
MAX_TOTAL_LINES = 7159

_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif)\b(.*)$")
_MACRO = re.compile(r"\bCF_\w+")


def _logical_lines(text: str):
    """Source lines with backslash continuations joined and comments removed."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"\\\n", " ", text)
    for line in text.splitlines():
        yield line.split("//", 1)[0]


def switches_tested(text: str) -> set[str]:
    """The CF_* macros a source text tests in its preprocessor conditionals."""
    out = set()
    for line in _logical_lines(text):
        m = _DIRECTIVE.match(line)
        if m:
            out |= set(_MACRO.findall(m.group(2)))
    return out


def _name(define: str) -> str:
    return define.split("=", 1)[0].split(" ", 1)[0]


def allowed_switches(path: Path, variants=None) -> set[str]:
    """The defines a switch in `path` may test: those of the variants built from it, or of every variant (a header)."""
    variants = R.kernel_variants() if variants is None else variants
    own = [v for v in variants if v.source_path == path]
    return {_name(d) for v in (own if path.suffix == ".cu" else variants) for d in v.defines}


def violations(files: dict, variants=None) -> dict:
    """{path: sorted switches no registered variant sets} for {path: source text}."""
    out = {}
    for path, text in files.items():
        bad = switches_tested(text) - allowed_switches(Path(path), variants)
        if bad:
            out[str(path)] = sorted(bad)
    return out


def kernel_files() -> dict:
    return {p: p.read_text() for p in sorted(R.KERNELS.rglob("*")) if p.is_file()}


def test_every_switch_a_kernel_tests_is_set_by_a_registered_variant():
    bad = violations(kernel_files())
    assert not bad, "switches that no registered variant sets (a candidate belongs in scratch/, see README): " + \
        "; ".join(f"{Path(p).relative_to(R.ROOT)}: {', '.join(s)}" for p, s in bad.items())


def test_kernels_test_at_most_30_distinct_switches():
    switches = set().union(*(switches_tested(t) for t in kernel_files().values()))
    assert len(switches) <= MAX_SWITCHES, f"{len(switches)} distinct switches: {', '.join(sorted(switches))}"


def test_kernel_files_stay_readable_in_size():
    lines = {p: t.count("\n") for p, t in kernel_files().items()}
    long = {str(p.relative_to(R.ROOT)): n for p, n in lines.items() if n > MAX_FILE_LINES}
    assert not long, f"files over {MAX_FILE_LINES} lines: {long}"
    assert sum(lines.values()) <= MAX_TOTAL_LINES, f"kernels/ is {sum(lines.values())} lines"


def test_the_check_fails_on_a_switch_no_variant_sets():
    """The checks above can fail: a scratch idea left behind a switch, another file's switch, a header's own switch."""
    mine = R.Variant("k1", "conv2d", "04d", "tf32", "fused", "t", source="04d_register_a_wgmma",
                     defines=("CF_SPLIT", "CF_ROWS=3"))
    other = R.Variant("k2", "conv2d", "04e", "tf32", "fused", "t", source="04e_winograd_wgmma", defines=("CF_WINO",))
    variants, path = [mine, other], mine.source_path
    src = "\n".join([
        "#if defined(CF_SPLIT) && CF_ROWS == 3   // registered: fine",
        "#ifdef CF_IDEA_NOT_REGISTERED",
        "#elif defined(CF_OTHER) || \\",
        "      CF_CONTINUED",
        "/* #ifdef CF_IN_A_COMMENT */",
        "#endif",
    ])
    assert switches_tested(src) == {"CF_SPLIT", "CF_ROWS", "CF_IDEA_NOT_REGISTERED", "CF_OTHER", "CF_CONTINUED"}
    assert violations({path: src}, variants) == {str(path): ["CF_CONTINUED", "CF_IDEA_NOT_REGISTERED", "CF_OTHER"]}
    # a switch of another file's variants does not count for this one; in a header any variant's does
    assert violations({path: "#ifdef CF_WINO\n#endif"}, variants) == {str(path): ["CF_WINO"]}
    assert not violations({R.KERNELS / "wgmma.cuh": "#ifdef CF_WINO\n#endif"}, variants)
    # a header that defines a switch for the kernels to test is no registered variant's choice either
    header = "#define CF_HEADER_SWITCH 1\n#if CF_HEADER_SWITCH\n#endif\n"
    assert violations({R.KERNELS / "wgmma.cuh": header}, variants) == {str(R.KERNELS / "wgmma.cuh"): ["CF_HEADER_SWITCH"]}
    # a define no conditional tests is no switch
    assert not violations({path: "#define CF_SQRT1_2 0.7071f\nfloat a = CF_SQRT1_2;\n"}, variants)
