"""Reviewer-audit wall times: bundle, lock, check --lock, explain, diff, audit html.

Whole-process medians of BENCH_RUNS (>= 5) runs for 10 and 1,000 roots, beside `python -c pass`
measured in the same invocation. Prints a table; asserts nothing (`python bench/audit.py`).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.check import _layout

RUNS = max(5, int(os.environ.get("BENCH_RUNS", "5")))
REPO = Path(__file__).resolve().parent.parent


def _median(cmd: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=REPO)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    """Print one row per command and size."""
    cli = [sys.executable, "-m", "profilec.cli"]
    floor = _median([sys.executable, "-c", "pass"])
    rows: list[tuple[str, float]] = [("python -c pass (floor)", floor)]
    with tempfile.TemporaryDirectory() as tmp:
        for n in (10, 1000):
            manifest, ws, home = _layout(Path(tmp) / f"n{n}", n)
            flags = [
                "--roots",
                str(manifest),
                "--workspace-root",
                str(ws),
                "--codex-home",
                str(home),
            ]
            lock = Path(tmp) / f"n{n}.lock"
            subprocess.run([*cli, "lock", *flags, "--out", str(lock)], check=True, cwd=REPO)
            link = str(home / "auth-0.json")
            cmds = {
                "compile --format bundle": [*cli, "compile", *flags, "--format", "bundle"],
                "lock": [*cli, "lock", *flags, "--out", str(Path(tmp) / "x.lock")],
                "check --lock": [*cli, "check", *flags, "--lock", str(lock)],
                "explain (link, agent)": [*cli, "explain", link, "--mode", "agent", *flags],
                "diff lock lock": [*cli, "diff", str(lock), str(lock)],
                "audit --format html": [*cli, "audit", *flags, "--format", "html", "--now", "0"],
            }
            for name, cmd in cmds.items():
                rows.append((f"{name}, {n} roots", _median(cmd)))
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}  median    ratio")
    for name, secs in rows:
        print(f"{name:<{width}}  {secs * 1000:6.0f} ms  {secs / floor:5.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
