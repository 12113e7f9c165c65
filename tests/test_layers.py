"""A house without circles: the package's modules import one another one way down. Every import counts, a function's
local one too (it is an import the module needs, only later), relative or through `convfuse.`."""
import ast
from pathlib import Path

import convfuse

PACKAGE = Path(convfuse.__file__).resolve().parent


def imports_of(path: Path, modules: set) -> set:
    deps = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 or (node.level == 0 and (node.module or "").split(".")[0] == "convfuse"):
                parts = (node.module or "").split(".")
                if node.level == 0:
                    parts = parts[1:]
                if parts and parts[0]:
                    deps.add(parts[0])
                else:       # from . import a, b / from convfuse import a
                    deps.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "convfuse" and len(parts) > 1:
                    deps.add(parts[1])
    return {d for d in deps if d in modules and d != path.stem}


def import_graph(package: Path = PACKAGE) -> dict:
    modules = {p.stem for p in package.glob("*.py")}
    return {p.stem: imports_of(p, modules) for p in sorted(package.glob("*.py"))}


def circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_walk_sees_every_kind_of_import(tmp_path):
    (tmp_path / "a.py").write_text("from . import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from .c import x\n")             # function-local
    (tmp_path / "c.py").write_text("import convfuse.a\nfrom convfuse import d\n")
    (tmp_path / "d.py").write_text("from convfuse.e import y\nimport os\n")
    (tmp_path / "e.py").write_text("")
    g = import_graph(tmp_path)
    assert g == {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": set()}
    assert circles(g) == [["a", "b", "c"]]


def test_no_module_of_the_package_imports_one_that_imports_it_back():
    found = circles(import_graph())
    assert not found, f"import circles: {found}"


def test_timing_is_below_every_timer():
    g = import_graph()
    assert g["timing"] == set()
    for user in ("bench", "kernelbench", "cudnn_fused"):
        assert "timing" in g[user], (user, g[user])
    # CUDA-event timing is written once
    timers = [p.name for p in PACKAGE.glob("*.py") if "enable_timing=True" in p.read_text()]
    assert timers == ["timing.py"], timers
