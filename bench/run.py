"""Every benchmark in one invocation: medians of N runs, each next to a floor from the same run.

Figures: whole-process compile (10 / 1,000 / 10,000 roots) and static check (example, 1,000
roots x 3 modes) vs `python -c pass`; in-process compile of 10 roots; a three-mode canary run
vs its floor (one bare `docker run` per mode plus one bare `codex sandbox -- true` per probe);
peak RSS of each child process. Prints a table; asserts nothing.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.check import _layout

RUNS = int(os.environ.get("BENCH_RUNS", "5"))
PY = sys.executable


def timed(cmd: list[str], runs: int = RUNS) -> tuple[float, float]:
    """(median seconds, max child peak RSS in MiB) of `cmd`."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=Path(__file__).parent.parent)
        times.append(time.perf_counter() - t0)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return statistics.median(times), rss


def canary_figures(example_manifest: Path, ws: Path, home: Path) -> list[tuple[str, float, float]]:
    """Three-mode canary wall time and its floor, or nothing when no engine/codex is here."""
    try:
        from compiler.api import load_and_compile
        from compiler.canary import engine
        from compiler.canary.image import ensure_image
        from compiler.canary.run import run_canaries
        from compiler.settings import codex_binary
    except ImportError:
        return []
    binary = codex_binary()
    try:
        client = engine.docker_client()
    except Exception:
        return []
    if binary is None:
        return []
    bundle = load_and_compile(str(example_manifest), workspace_roots=[str(ws)],
                              codex_home=str(home))
    walls, probes = [], 0
    for _ in range(max(3, RUNS // 2)):
        rep = run_canaries(bundle, codex_bin=binary, client=client)
        walls.append(rep.seconds)
        probes = max(len(m.probes) for m in rep.modes)
    image = ensure_image(client)
    mounts, cbin = engine.codex_mount(binary)
    floors = []
    for _ in range(max(3, RUNS // 2)):
        t0 = time.perf_counter()
        for _mode in range(3):
            c = client.containers.run(image, ["sleep", "30"], detach=True,
                                      volumes=mounts, **engine.run_settings())
            try:
                for _p in range(probes):
                    c.exec_run([cbin, "sandbox", "-P", ":read-only", "--", "true"],
                               environment={"CODEX_HOME": "/codex-home"})
            finally:
                c.remove(force=True)
        floors.append(time.perf_counter() - t0)
    wall, floor = statistics.median(walls), statistics.median(floors)
    return [(f"canary: 3 modes x {probes} probes (parallel)", wall, wall / floor),
            ("canary floor: 3 docker runs + codex sandbox true per probe (serial)", floor, 1.0)]


def main() -> int:
    """Run all figures and print one table."""
    rows: list[tuple[str, float, float, float]] = []
    floor, rss = timed([PY, "-c", "pass"])
    rows.append(("python -c pass (floor)", floor, 1.0, rss))
    with tempfile.TemporaryDirectory(prefix="profilec-bench-") as tmp:
        manifests = {}
        for n in (10, 1000, 10000):
            d = Path(tmp) / f"n{n}"
            d.mkdir()
            manifests[n] = _layout(d, n)[0]
        for n, m in manifests.items():
            t, r = timed([PY, "-m", "compiler.cli.__main__", "compile", "--roots", str(m),
                          "--format", "overrides", "--out", os.devnull])
            rows.append((f"compile, {n} roots (whole process)", t, t / floor, r))
        ex = Path(subprocess.run(["bash", "examples/make-layout.sh", str(Path(tmp) / "ex")],
                                 check=True, capture_output=True, text=True,
                                 cwd=Path(__file__).parent.parent).stdout.strip())
        ex_args = ["--roots", str(ex / "roots.toml"), "--workspace-root", str(ex / "workspace"),
                   "--codex-home", str(ex / "agent" / "codex-home")]
        t, r = timed([PY, "-m", "compiler.cli.__main__", "check", *ex_args, "--format", "json",
                      "--out", os.devnull])
        rows.append(("check, bundled example (static)", t, t / floor, r))
        t, r = timed([PY, "-m", "compiler.cli.__main__", "check", "--roots", str(manifests[1000]),
                      "--format", "json", "--out", os.devnull])
        rows.append(("check, 1,000 roots x 3 modes (static)", t, t / floor, r))

        from compiler.compile import compile_bundle
        from compiler.models import LaunchLayout
        from compiler.policy import load_policy
        from compiler.roots import load_manifest, resolve_roots

        policy = load_policy()
        roots = resolve_roots(load_manifest(str(manifests[10])))
        samples = []
        for _ in range(200):
            t0 = time.perf_counter()
            compile_bundle(roots, policy, LaunchLayout())
            samples.append(time.perf_counter() - t0)
        rows.append(("compile_bundle(), 10 roots (in-process)", statistics.median(samples),
                     float("nan"), float("nan")))
        for name, t, ratio in canary_figures(ex / "roots.toml", ex / "workspace",
                                             ex / "agent" / "codex-home"):
            rows.append((name, t, ratio, float("nan")))
    print(f"{'figure':<66} {'median':>10} {'ratio':>7} {'peak MiB':>9}")
    for name, t, ratio, r in rows:
        print(f"{name:<66} {t * 1000:>8.1f}ms {ratio:>7.2f} {r:>9.1f}")
    print("ratio: to python -c pass for process figures; to the canary floor for canaries.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
