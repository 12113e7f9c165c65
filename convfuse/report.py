"""Execute the notebooks and render report/: one HTML page per notebook, plus index.html.

    python -m convfuse report            (what `make report` runs; CONVFUSE_MODE=recorded there)
    python -m convfuse report --notebook 02_vectorized_epilogue

Each notebook runs in a fresh kernel of *this* interpreter (sys.executable, whatever kernelspecs the
machine has installed), with cwd = notebooks/, the repository on PYTHONPATH, and CONVFUSE_MODE resolved
here (recorded on a machine without a GPU). A notebook that fails still gets its page, showing the
error; render() raises after writing every page and the index.
"""
from __future__ import annotations

import html
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from . import results
from .registry import ROOT

NOTEBOOKS_DIR = ROOT / "notebooks"
REPORT_DIR = ROOT / "report"
KERNEL_NAME = "convfuse-python3"


def notebook_paths(notebooks=None) -> list[Path]:
    """All notebooks in order, or those named (stems, file names or paths)."""
    allnb = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
    if not notebooks:
        return allnb
    out = []
    for n in notebooks:
        p = Path(n)
        if p.suffix == ".ipynb" and p.exists():
            out.append(p.resolve())
            continue
        match = [q for q in allnb if q.stem == p.stem or q.stem.startswith(str(n))]
        if not match:
            raise FileNotFoundError(f"no notebook {n!r} in {NOTEBOOKS_DIR}; have {', '.join(q.stem for q in allnb)}")
        out += match
    return out


def _kernel_manager(spec_dir: Path, ipc_dir: str):
    """A kernel manager whose python3 kernel is this interpreter: a kernelspec written to a private
    directory, so that a user-wide `python3` spec pointing elsewhere cannot be picked up."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    kdir = spec_dir / "kernels" / KERNEL_NAME
    kdir.mkdir(parents=True, exist_ok=True)
    (kdir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "convfuse (python3)", "language": "python"}))
    ksm = KernelSpecManager(kernel_dirs=[str(spec_dir / "kernels")], ensure_native_kernel=False)
    # IPC sockets (local only; no warning about unencrypted TCP) in a short path: socket paths are
    # limited to ~100 characters
    return KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=ksm, transport="ipc",
                         ip=os.path.join(ipc_dir, "k"))


def _kernel_env(mode: str) -> dict:
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)          # the kernel picks its inline backend; a parent's Agg would hide figures
    env["CONVFUSE_MODE"] = mode
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")   # quiets a debugger warning on frozen modules
    return env


def _summary(nb) -> tuple[str, str]:
    """(title, one line) from the first Markdown cell: its heading and the first sentence after it."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = [ln.strip().replace("`", "") for ln in cell.source.splitlines() if ln.strip()]
        title = lines[0].lstrip("# ").strip() if lines else ""
        body = " ".join(ln for ln in lines[1:] if not ln.startswith("#"))
        first = body.split(". ")[0].rstrip(".") + "." if body else ""
        return title, first
    return "", ""


SLOW_CELL_S = 5.0   # a cell that runs longer gets a line of progress (a live notebook's first cell takes minutes)


def execute(path: Path, mode: str, timeout: int, spec_dir: Path, log=None):
    """Run one notebook; returns (executed notebook, error message or None, seconds)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    ipc_dir = tempfile.mkdtemp(prefix="cfk-")
    km = _kernel_manager(spec_dir, ipc_dir)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    started = {}

    def cell_start(cell, cell_index):
        started[cell_index] = time.perf_counter()

    def cell_complete(cell, cell_index):
        dt = time.perf_counter() - started.get(cell_index, time.perf_counter())
        if log and dt >= SLOW_CELL_S and cell_index in code:
            log(f"[report]   {path.stem}: cell {code.index(cell_index) + 1}/{len(code)} took {dt:.0f} s")

    client = NotebookClient(nb, timeout=timeout, km=km, allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}},
                            on_cell_start=cell_start, on_cell_complete=cell_complete)
    t0 = time.perf_counter()
    err = None
    try:
        client.execute(env=_kernel_env(mode))
    except CellExecutionError as e:
        err = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
    except Exception as e:   # a kernel that dies or times out: still write what ran
        err = f"{type(e).__name__}: {e}"
    finally:
        if km.has_kernel:    # nbclient leaves a kernel it did not create running
            km.shutdown_kernel(now=True)
        import shutil

        shutil.rmtree(ipc_dir, ignore_errors=True)
    return nb, err, time.perf_counter() - t0


def to_html(nb) -> str:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    return tidy_cells(body)


def tidy_cells(page: str) -> str:
    """Table cells as a reader reads them: a missing value (None, nan, <NA>) as a dash, a boolean as yes / no.
    Only whole <td> cells change (a pandas table's), never code or prose."""
    import re

    words = {"None": "—", "nan": "—", "NaN": "—", "&lt;NA&gt;": "—", "<NA>": "—", "NaT": "—",
             "True": "yes", "False": "no"}
    return re.sub(r"(<td[^>]*>)\s*(None|nan|NaN|&lt;NA&gt;|<NA>|NaT|True|False)\s*(</td>)",
                  lambda m: m.group(1) + words[m.group(2)] + m.group(3), page)


# the index's figures, in order: (file stem under figures/, caption)
FIGURES = (("progress", "The fastest kernel of each step, per accuracy class, against torch.compile and the bytes floor "
                        "(the README's figure)."),
           ("speedup", "Every kernel's speed-up over eager in the same run, grouped by step and precision class."),
           ("traffic", "DRAM bytes per kernel: the traffic model's accounting beside the measured bytes."))


def embed_png(path: Path) -> str:
    """A PNG as a data: URI, so that the page carries its figure (and still shows it when moved or mailed)."""
    import base64

    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


NAV_STYLE = ("position:sticky;top:0;z-index:10;background:#f6f8fa;border-bottom:1px solid #d0d7de;"
             "padding:6px 12px;font:14px system-ui,sans-serif;display:flex;gap:1.5em")


def nav_html(stem: str | None, order: list[tuple[str, str]]) -> str:
    """The bar every page opens with: the index, and the previous and next page (stem, title) in reading order."""
    stems = [s for s, _ in order]
    links = ['<a href="index.html">⌂ Index</a>']
    if stem in stems:
        i = stems.index(stem)
        if i > 0:
            links.append(f'<a href="{html.escape(stems[i - 1])}.html" rel="prev">← {html.escape(order[i - 1][1])}</a>')
        if i + 1 < len(stems):
            links.append(f'<a href="{html.escape(stems[i + 1])}.html" rel="next">{html.escape(order[i + 1][1])} →</a>')
    elif order:
        links.append(f'<a href="{html.escape(stems[0])}.html" rel="next">{html.escape(order[0][1])} →</a>')
    return f'<nav class="cf-nav" style="{NAV_STYLE}">' + "".join(links) + "</nav>"


def add_nav(page: str, nav: str) -> str:
    """The page with `nav` at the top of its body and again at its end (an earlier bar replaced)."""
    import re

    page = re.sub(r'<nav class="cf-nav".*?</nav>', "", page, flags=re.S)
    m = re.search(r"<body[^>]*>", page)
    if not m:
        return nav + page + nav
    page = page[:m.end()] + nav + page[m.end():]
    end = page.rfind("</body>")
    return page[:end] + nav + page[end:] if end >= 0 else page + nav


def reading_order() -> list[tuple[str, str]]:
    """(stem, title) of every notebook, in file-name order: the order of the nav bar's previous and next."""
    import nbformat

    out = []
    for path in notebook_paths():
        title = _summary(nbformat.read(path, as_version=4))[0] or path.stem
        out.append((path.stem, title.split(":")[0][:60]))
    return out


def check_links(out_dir: Path) -> list[str]:
    """What is wrong with a rendered report, read from its HTML alone (no browser): a local link to a page that is not
    there, an image that is not embedded, a page without the nav bar's index link. [] when nothing is."""
    from html.parser import HTMLParser

    class P(HTMLParser):
        def __init__(self):
            super().__init__()
            self.hrefs, self.imgs = [], []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "a" and a.get("href"):
                self.hrefs.append(a["href"])
            if tag == "img":
                self.imgs.append(a.get("src") or "")

    problems = []
    out_dir = Path(out_dir)
    for page in sorted(out_dir.glob("*.html")):
        p = P()
        p.feed(page.read_text(encoding="utf-8"))
        for h in p.hrefs:
            target = h.split("#")[0]
            if not target or "://" in target or target.startswith(("mailto:", "data:")):
                continue
            if not (out_dir / target).exists():
                problems.append(f"{page.name}: link to {h} (no such file)")
        problems += [f"{page.name}: image {src[:60]!r} is not embedded" for src in p.imgs if not src.startswith("data:")]
        if page.name != "index.html" and "index.html" not in p.hrefs:
            problems.append(f"{page.name}: no link to the index")
    return problems


def _index_html(pages: list[dict], run, out_dir: Path) -> str:
    """The index page: the notebooks, the figures, and each recorded GPU's run and results table (`run`: one run, a
    list of them, newest first, or None)."""
    from . import study

    runs = [r for r in ([run] if isinstance(run, dict) else list(run or [])) if r.get("env")]
    items = "\n".join(
        f'<li><a href="{html.escape(p["file"])}">{html.escape(p["title"] or p["stem"])}</a> — '
        f'{html.escape(p["summary"])} <span class="meta">('
        f'{"executed in %.0f s" % p["seconds"] if p["seconds"] is not None else "page from an earlier render"}'
        f'{", <b>failed: " + html.escape(p["error"]) + "</b>" if p["error"] else ""})</span></li>'
        for p in pages)
    infos, tables = [], []
    for r in runs:
        env = r["env"]
        infos.append(f"Recorded run: <b>{html.escape(str(env.get('gpu')))}</b>, "
                     f"{html.escape(str(env.get('date', '?'))[:16].replace('T', ' '))} UTC — "
                     f"torch {html.escape(str(env.get('torch')))}, CUDA {html.escape(str(env.get('cuda')))}, "
                     f"cuDNN {html.escape(study.cudnn_version(env.get('cudnn')))}; measured ceilings: copy "
                     f"{env.get('copy_gbps')} GB/s, FP32 {env.get('fp32_tflops')} TFLOP/s, TF32 "
                     f"{env.get('tf32_tflops')} TFLOP/s.")
        tables.append(f"<h3>{html.escape(str(env.get('gpu')))}</h3>\n" + tidy_cells(
            study.results_table(r).to_html(float_format=lambda x: f"{x:.3f}", na_rep="—", border=0)))
    runinfo = "<br>".join(infos) or "No run recorded yet: run <code>python -m convfuse bench</code> on a GPU."
    table = "\n".join(tables)
    figs = ""
    fdir = Path(os.environ.get("CONVFUSE_FIGURES_DIR") or ROOT / "figures")
    for name, caption in FIGURES:
        f = fdir / f"{name}.png"
        if not f.exists() and name == "progress":
            f = ROOT / "figures" / "progress.png"      # the README's, committed
        if f.exists():
            figs += (f'<figure><img src="{embed_png(f)}" alt="{html.escape(caption)}">'
                     f'<figcaption>{html.escape(caption)}</figcaption></figure>\n')
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>convfuse — fusing a convolution with its epilogue</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;line-height:1.45}}
.meta{{color:#666;font-size:90%}} table{{border-collapse:collapse;font-size:85%}}
td,th{{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}}
figure{{margin:1.5em 0}} figure img{{max-width:100%;height:auto}} figcaption{{color:#444;font-size:90%}}</style></head>
<body><h1>convfuse — fusing a convolution with its elementwise epilogue</h1>
<p>KernelBench level 2, problems 54 (conv2d) and 90 (conv3d): from eager PyTorch to a fused tensor-core kernel,
one step per notebook. Every number below comes from a recorded run; every page was executed to render it.</p>
<p>{runinfo}</p>
<h2>Notebooks</h2><ol>
{items}
</ol>
<h2>Figures</h2>
{figs}
<h2>Results</h2>
{table}
<p class="meta">Rendered {time.strftime('%Y-%m-%d %H:%M:%S %Z')} in {html.escape(pages[0]['mode'] if pages else '?')} mode.</p>
</body></html>
"""


def render(notebooks=None, out_dir=None, timeout: int | None = None, log=print) -> list[dict]:
    """Execute the notebooks (all, or those named) and write <out_dir>/<stem>.html and index.html.

    out_dir defaults to report/. timeout is per cell: 300 s in recorded mode, 3600 s live (a live
    notebook builds and benchmarks in its first cell). Returns one dict per page."""
    out_dir = Path(out_dir or REPORT_DIR)
    out_dir.mkdir(parents=True, exist_ok=True)
    mode = results.mode()
    timeout = timeout or (3600 if mode == "live" else 300)
    paths = notebook_paths(notebooks)
    log(f"[report] {len(paths)} notebooks, {mode} mode, output {out_dir}")
    pages = []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="convfuse-kernelspec-") as spec_dir:
        for i, path in enumerate(paths, 1):
            log(f"[report {i}/{len(paths)}] {path.stem}: running")
            nb, err, dt = execute(path, mode, timeout, Path(spec_dir), log=log)
            target = out_dir / f"{path.stem}.html"
            target.write_text(to_html(nb), encoding="utf-8")
            title, summary = _summary(nb)
            pages.append({"stem": path.stem, "file": target.name, "title": title, "summary": summary,
                          "seconds": dt, "error": err, "mode": mode})
            log(f"[report {i}/{len(paths)}] {path.stem}: {'FAILED: ' + err if err else 'ok'} ({dt:.1f} s) -> {target}")
    if notebooks:   # a partial render keeps the other pages of the index
        have = {p["stem"] for p in pages}
        for path in notebook_paths():
            f = out_dir / f"{path.stem}.html"
            if path.stem not in have and f.exists():
                import nbformat

                title, summary = _summary(nbformat.read(path, as_version=4))
                pages.append({"stem": path.stem, "file": f.name, "title": title, "summary": summary,
                              "seconds": None, "error": None, "mode": mode})
        pages.sort(key=lambda p: p["stem"])
    order = reading_order()
    for p in pages:
        f = out_dir / p["file"]
        f.write_text(add_nav(f.read_text(encoding="utf-8"), nav_html(p["stem"], order)), encoding="utf-8")
    run = _run_for_index(mode)
    (out_dir / "index.html").write_text(add_nav(_index_html(pages, run, out_dir), nav_html(None, order)),
                                        encoding="utf-8")
    log(f"[report] wrote {out_dir / 'index.html'} ({time.perf_counter() - t_all:.1f} s in all)")
    failed = [p for p in pages if p["error"]]
    if failed:
        raise RuntimeError("notebooks failed: " + "; ".join(f"{p['stem']}: {p['error']}" for p in failed))
    return pages


def _run_for_index(mode: str) -> list[dict]:
    """Every recorded results file, newest first (after a live render, the one the notebooks just wrote comes first)."""
    from . import study

    return results.all_recorded(study.results_dir())


if __name__ == "__main__":
    render(sys.argv[1:] or None)
