"""Whole-process `profilec compile` for 10 / 1,000 / 10,000 roots vs `python -c pass`, and
in-process compile of 10 roots. Prints medians of N runs and the ratio to the floor measured in
the same invocation; also the fitted growth exponent from 1,000 to 10,000 roots."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.check import _layout

RUNS = int(os.environ.get("BENCH_RUNS", "5"))


def _median(cmd: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    """Run every figure and print the table."""
    floor = _median([sys.executable, "-c", "pass"])
    rows = [("python -c pass (floor)", floor)]
    results: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="profilec-bench-") as tmp:
        for n in (10, 1000, 10000):
            d = Path(tmp) / f"n{n}"
            d.mkdir()
            manifest, _ws, home = _layout(d, n)
            cmd = [
                sys.executable,
                "-m",
                "profilec.cli.__main__",
                "compile",
                "--roots",
                str(manifest),
                "--codex-home",  # compile refuses to run without a private CODEX_HOME
                str(home),
                "--format",
                "overrides",
            ]
            results[n] = _median(cmd)
            rows.append((f"profilec compile, {n} roots", results[n]))
        from profilec.compile import compile_bundle
        from profilec.inputs import Inputs
        from profilec.models import LaunchLayout
        from profilec.policy import load_policy
        from profilec.roots import resolve_roots

        policy = load_policy()
        roots = resolve_roots(Inputs(roots=str(Path(tmp) / "n10" / "roots.toml")).manifest())
        inproc = []
        for _ in range(max(RUNS, 50)):
            t0 = time.perf_counter()
            compile_bundle(roots, policy, LaunchLayout())
            inproc.append(time.perf_counter() - t0)
        rows.append(("in-process compile_bundle, 10 roots", statistics.median(inproc)))
    print(f"{'figure':<40} {'median':>10} {'x floor':>8}")
    for name, t in rows:
        print(f"{name:<40} {t * 1000:>8.1f}ms {t / floor:>8.1f}")
    work_1k = results[1000] - floor
    work_10k = results[10000] - floor
    exponent = math.log(work_10k / work_1k) / math.log(10) if work_1k > 0 else float("nan")
    print(f"fitted growth exponent 1,000 -> 10,000 roots (floor subtracted): {exponent:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
