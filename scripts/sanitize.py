"""compute-sanitizer (memcheck, racecheck, synccheck) over every kernel variant; see convfuse/sanitize.py.

    python3 scripts/sanitize.py [--record results/<gpu>.json] [--out DIR/sanitize.json] [--jobs N] [--logs DIR]
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from convfuse.sanitize import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
