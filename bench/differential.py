"""The long differential run: 2,000 seeded cases against the real Codex; prints the table.

    PROFILEC_CACHE=... python3 bench/differential.py [--cases 2000] [--seed S]
PROFILEC_CODEX_VERSION picks another installed version ($PROFILEC_CACHE/codex-<ver>) and the
enforcement model of that release: run it with 0.171.0 (the pin) and with 0.166.0 (the floor
codex-acp 2.6.0 accepts); .ci/tools.sh installs both.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.difftest.__main__ import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--cases" not in args:
        args = ["--cases", "2000", *args]
    raise SystemExit(main(args))
