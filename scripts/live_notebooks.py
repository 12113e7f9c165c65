"""Execute notebooks in live mode on a GPU machine that has no Jupyter front end (the lent device):
nbclient + ipykernel are enough. Writes each executed notebook to OUT/<stem>.live.ipynb and prints one
line per notebook. Live results go to $CONVFUSE_RESULTS_DIR (default results/).

    python3 scripts/live_notebooks.py OUT_DIR 00_eager_reference [02_vectorized_epilogue ...]
"""
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nbformat  # noqa: E402

from convfuse import report  # noqa: E402


def main(out_dir: str, names: list[str]) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="cfk-spec-") as spec:
        for path in report.notebook_paths(names):
            nb, err, dt = report.execute(path, "live", 3600, Path(spec))
            nbformat.write(nb, out / f"{path.stem}.live.ipynb")
            print(f"[live] {path.stem}: {'FAILED: ' + err if err else 'ok'} ({dt:.0f} s)", flush=True)
            failed += bool(err)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
