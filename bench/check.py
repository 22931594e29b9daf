"""Static `profilec check` wall time: the bundled example and 1,000 roots x 3 modes.

Whole-process medians of BENCH_RUNS (>= 5) runs against `python -c pass` measured in the same
invocation, plus the in-process check alone (compile excluded) for 100 / 1,000 / 3,000 roots and
the fitted growth exponent, which stays near 1: the evaluator is linear, not roots x entries.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = max(5, int(os.environ.get("BENCH_RUNS", "5")))
REPO = Path(__file__).resolve().parent.parent


def _layout(base: Path, n: int) -> tuple[Path, Path, Path]:
    """n roots, each a private-home link to its own host target; a workspace; CODEX_HOME."""
    host, home, ws = base / "host", base / "home", base / "ws"
    for d in (host, home, ws):
        d.mkdir(parents=True)
    lines = ["schema_version = 1"]
    for i in range(n):
        target = host / f"auth-{i}.json"
        target.write_text("marker")
        link = home / f"auth-{i}.json"
        link.symlink_to(target)
        lines += ["[[roots]]", f'id = "r{i}"', f'path = "{link}"']
    manifest = base / "roots.toml"
    manifest.write_text("\n".join(lines) + "\n")
    os.chmod(manifest, 0o600)
    return manifest, ws, home


def _median(cmd: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=REPO)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _check_cmd(manifest: Path, ws: Path, home: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "profilec.cli",
        "check",
        "--roots",
        str(manifest),
        "--workspace-root",
        str(ws),
        "--codex-home",
        str(home),
        "--format",
        "json",
    ]


def _in_process(n: int, base: Path) -> float:
    """Median seconds of the check alone (parse, resolve, matrix, lints), compile excluded."""
    sys.path.insert(0, str(REPO))
    from profilec.api import load_and_compile
    from profilec.check.build import from_bundle
    from profilec.check.checker import run_check

    manifest, ws, home = _layout(base, n)
    bundle = load_and_compile(str(manifest), workspace_roots=[str(ws)], codex_home=str(home))
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        report = run_check(from_bundle(bundle, bundle.mode_profiles))
        times.append(time.perf_counter() - t0)
        assert report.passed and report.summary.cells == 3 * 2 * n
    return statistics.median(times)


def main() -> int:
    """Run every figure and print the table."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        floor = _median([sys.executable, "-c", "pass"])
        example = subprocess.run(
            ["bash", str(REPO / "examples" / "make-layout.sh"), str(base / "example")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        ex = Path(example)
        t_example = _median(
            _check_cmd(ex / "roots.toml", ex / "workspace", ex / "agent" / "codex-home")
        )
        t_1000 = _median(_check_cmd(*_layout(base / "n1000", 1000)))
        inproc = {n: _in_process(n, base / f"ip{n}") for n in (100, 1000, 3000)}
    rows = [
        ("python -c pass (floor)", floor),
        ("profilec check, bundled example (1 root x 3 modes)", t_example),
        ("profilec check, 1,000 roots x 3 modes (process)", t_1000),
    ]
    rows += [(f"check only, in-process, {n:,} roots x 3 modes", t) for n, t in inproc.items()]
    width = max(len(name) for name, _ in rows)
    print(f"{'figure'.ljust(width)}  median (s)  x floor   (runs={RUNS})")
    for name, t in rows:
        print(f"{name.ljust(width)}  {t:10.3f}  {t / floor:7.1f}")
    exponent = math.log(inproc[3000] / inproc[1000]) / math.log(3)
    print(f"growth exponent of the check, 1,000 -> 3,000 roots: {exponent:.2f} (1 = linear)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
