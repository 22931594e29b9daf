"""Every benchmark in one invocation: medians of N runs, each next to a floor from the same run.

Figures: whole-process `profilec compile` (10 / 1,000 / 10,000 roots; one typer app, one
pydantic model family), static `check` (bundled example, 1,000 roots x 3 modes), all vs
`python -c pass`; what importing pydantic, and typer with the pydantic adapters it loads to
parse parameters, costs alone (the floor any `profilec` command stands on); in-process compile of
10 roots (`compile_bundle`, the call a daemon makes per session launch, and `load_and_compile`
with its file reads); a three-mode canary run vs its floor (one bare `docker run` per mode plus
one bare `codex sandbox -- true` per probe and one real `codex login --with-api-key` save per
mode; the run includes the dynamic probes, refresh race and lock holding). Each child process
is reaped with os.wait4, so its peak RSS and CPU time are its own (RUSAGE_CHILDREN would be a
running maximum). Prints a Markdown table and the fitted growth exponent 1,000 -> 10,000
roots; asserts nothing.

Output goes to stdout (discarded), never `--out /dev/null`, so an --out write's cost stays out
of the figures (compiler/fsio.py writes a device in place; it once renamed over /dev/null).
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench.check import _layout  # noqa: E402

RUNS = max(5, int(os.environ.get("BENCH_RUNS", "5")))
PY = sys.executable
CLI = [PY, "-m", "profilec.cli"]


@dataclass(frozen=True)
class Figure:
    """One row: median wall seconds, median CPU seconds and max peak RSS (MiB) of the runs."""

    name: str
    wall: float
    cpu: float = float("nan")
    rss: float = float("nan")
    ratio_to: str = ""
    floor: float = float("nan")


def run_child(cmd: list[str]) -> tuple[float, float, float, int]:
    """(wall s, user+sys CPU s, peak RSS MiB, exit status) of one child, from its own rusage."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO, env=env
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"bench: {' '.join(cmd)} exited {proc.returncode}: {err.decode()[-300:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def timed(name: str, cmd: list[str], *, ratio_to: str = "", floor: float = math.nan) -> Figure:
    """Median wall/CPU and max peak RSS of RUNS runs of `cmd`."""
    samples = [run_child(cmd) for _ in range(RUNS)]
    return Figure(
        name,
        statistics.median(s[0] for s in samples),
        statistics.median(s[1] for s in samples),
        max(s[2] for s in samples),
        ratio_to,
        floor,
    )


def in_process(manifest: Path) -> list[Figure]:
    """compile_bundle and load_and_compile for `manifest`, medians of many calls."""
    import resource

    from profilec.api import load_and_compile
    from profilec.compile import compile_bundle
    from profilec.models import LaunchLayout
    from profilec.policy import load_policy
    from profilec.roots import load_manifest, resolve_roots

    policy = load_policy()
    roots = resolve_roots(load_manifest(str(manifest)))
    layout = LaunchLayout()
    compile_bundle(roots, policy, layout)  # warm: first use builds the pydantic validators
    pure, edge = [], []
    for _ in range(max(RUNS, 200)):
        t0 = time.perf_counter()
        compile_bundle(roots, policy, layout)
        pure.append(time.perf_counter() - t0)
    for _ in range(max(RUNS, 50)):
        t0 = time.perf_counter()
        load_and_compile(str(manifest))
        edge.append(time.perf_counter() - t0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return [
        Figure(
            "in-process `compile_bundle()`, 10 roots (target 1 ms)",
            statistics.median(pure),
            rss=rss,
        ),
        Figure("in-process `load_and_compile()`, 10 roots (reads files)", statistics.median(edge)),
    ]


def canary_figures(ex: Path) -> list[Figure]:
    """Three-mode canary (a `profilec canary` child) and its floor, or nothing without engine."""
    try:
        from profilec.api import load_and_compile
        from profilec.canary import engine
        from profilec.canary.image import ensure_image
        from profilec.settings import codex_binary

        client = engine.docker_client()
    except Exception as exc:
        print(f"bench: canary figures skipped: {exc}", file=sys.stderr)
        return []
    binary = codex_binary()
    if binary is None or not binary.is_file():
        print("bench: canary figures skipped: pinned codex not installed", file=sys.stderr)
        return []
    args = [
        "--roots",
        str(ex / "roots.toml"),
        "--workspace-root",
        str(ex / "workspace"),
        "--codex-home",
        str(ex / "agent" / "codex-home"),
    ]
    bundle = load_and_compile(
        str(ex / "roots.toml"),
        workspace_roots=[str(ex / "workspace")],
        codex_home=str(ex / "agent" / "codex-home"),
    )
    from profilec.canary.run import run_canaries

    probes = max(len(m.probes) for m in run_canaries(bundle, codex_bin=binary).modes)
    image = ensure_image(client)
    mounts, cbin = engine.codex_mount(binary)

    def floor_once() -> float:
        t0 = time.perf_counter()
        for _mode in range(3):
            c = client.containers.run(
                image, ["sleep", "30"], detach=True, volumes=mounts, **engine.run_settings()
            )
            try:
                for _p in range(probes):
                    c.exec_run(
                        [cbin, "sandbox", "-P", ":read-only", "--", "true"],
                        environment={"CODEX_HOME": "/codex-home"},
                    )
                # One real trusted save per mode (the dynamic probes make several).
                c.exec_run(
                    ["sh", "-c", f"echo sk-floor | {cbin} login --with-api-key"],
                    environment={"CODEX_HOME": "/codex-home"},
                )
            finally:
                c.remove(force=True)
        return time.perf_counter() - t0

    # Interleaved, so a canary run and its floor see the same load on a shared machine.
    runs, floors = [], []
    for _ in range(RUNS):
        runs.append(run_child([*CLI, "canary", *args, "--format", "json"]))
        floors.append(floor_once())
    floor = statistics.median(floors)
    label = (
        "canary floor: 3 bare `docker run` + bare `codex sandbox -- true` per probe "
        "+ one real `codex login --with-api-key` save per mode (serial)"
    )
    return [
        Figure(
            f"`profilec canary`, 3 modes x {probes} probes (parallel, whole process)",
            statistics.median(r[0] for r in runs),
            statistics.median(r[1] for r in runs),
            max(r[2] for r in runs),
            "canary floor",
            floor,
        ),
        Figure(label, floor, ratio_to="canary floor", floor=floor),
    ]


def machine() -> str:
    """One line describing where this ran."""
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().split("\n"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs ({cpu}), {mem:.0f} GiB, {platform.platform()}, "
        f"Python {platform.python_version()}, load average {load}"
    )


def main() -> int:
    """Run all figures and print one table."""
    # Byte-compile first: with PYTHONDONTWRITEBYTECODE set, an edited module would otherwise be
    # compiled again in every child (an installed wheel ships compiled).
    subprocess.run(
        [PY, "-m", "compileall", "-q", str(REPO / "compiler")],
        check=False,
        stdout=subprocess.DEVNULL,
    )
    print(f"machine: {machine()}; runs per figure: {RUNS}", flush=True)
    floor = timed("`python -c pass` (floor)", [PY, "-c", "pass"], ratio_to="floor")
    py = floor.wall
    rows = [Figure(floor.name, floor.wall, floor.cpu, floor.rss, "floor", py)]
    rows.append(
        timed(
            "`python -c 'from pydantic import BaseModel'`",
            [PY, "-c", "from pydantic import BaseModel"],
            ratio_to="floor",
            floor=py,
        )
    )
    typer_floor = timed(
        "`python -c 'import typer._adapters'` (typer + the pydantic it parses "
        "with: the floor of every command)",
        [PY, "-c", "import typer._adapters"],
        ratio_to="floor",
        floor=py,
    )
    rows.append(typer_floor)
    with tempfile.TemporaryDirectory(prefix="profilec-bench-") as tmp:
        manifests = {}
        for n in (10, 1000, 10000):
            d = Path(tmp) / f"n{n}"
            d.mkdir()
            manifests[n] = _layout(d, n)[0]
        compiled: dict[int, Figure] = {}
        for n, m in manifests.items():
            compiled[n] = timed(
                f"`profilec compile`, {n:,} roots (whole process)",
                [*CLI, "compile", "--roots", str(m), "--format", "overrides"],
                ratio_to="floor",
                floor=py,
            )
            rows.append(compiled[n])
        ex = Path(
            subprocess.run(
                ["bash", "examples/make-layout.sh", str(Path(tmp) / "ex")],
                check=True,
                capture_output=True,
                text=True,
                cwd=REPO,
            ).stdout.strip()
        )
        ex_args = [
            "--roots",
            str(ex / "roots.toml"),
            "--workspace-root",
            str(ex / "workspace"),
            "--codex-home",
            str(ex / "agent" / "codex-home"),
        ]
        rows.append(
            timed(
                "`profilec check`, bundled example (static)",
                [*CLI, "check", *ex_args, "--format", "json"],
                ratio_to="floor",
                floor=py,
            )
        )
        rows.append(
            timed(
                "`profilec check`, 1,000 roots x 3 modes (static)",
                [*CLI, "check", "--roots", str(manifests[1000]), "--format", "json"],
                ratio_to="floor",
                floor=py,
            )
        )
        rows += in_process(manifests[10])
        rows += canary_figures(ex)

    print()
    print("| figure | median wall | ratio | median CPU | peak RSS |")
    print("|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r.wall / r.floor:.1f}x {r.ratio_to}" if r.ratio_to else ""
        wall = f"{r.wall * 1000:.1f} ms" if r.wall < 2 else f"{r.wall:.2f} s"
        cpu = "" if math.isnan(r.cpu) else f"{r.cpu * 1000:.0f} ms"
        rss = "" if math.isnan(r.rss) else f"{r.rss:.0f} MiB"
        print(f"| {r.name} | {wall} | {ratio} | {cpu} | {rss} |")
    w1k, w10k = compiled[1000].wall - py, compiled[10000].wall - py
    c1k, c10k = compiled[1000].cpu - floor.cpu, compiled[10000].cpu - floor.cpu
    print()
    print(
        "growth exponent, compile 1,000 -> 10,000 roots (floor subtracted): "
        f"wall {math.log(w10k / w1k) / math.log(10):.2f}, "
        f"CPU {math.log(c10k / c1k) / math.log(10):.2f} (1 = linear; n log n = 1.12)"
    )
    c10 = compiled[10].wall
    print(
        f"compile, 10 roots: {c10 * 1000:.0f} ms median; targets 150 ms "
        f"({'met' if c10 <= 0.150 else f'missed by {(c10 - 0.150) * 1000:.0f} ms'}) and 4x "
        f"the floor = {4 * py * 1000:.0f} ms ({c10 / py:.1f}x: "
        f"{'met' if c10 <= 4 * py else 'missed'}); typer + pydantic alone: "
        f"{typer_floor.wall * 1000:.0f} ms, so profilec's own share is "
        f"{(c10 - typer_floor.wall) * 1000:.0f} ms"
    )
    print(
        "ratio: to `python -c pass` for process figures, to the canary floor for canaries. "
        "Peak RSS: the child's own (os.wait4); in-process rows: this bench process."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
