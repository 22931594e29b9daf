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

The startup figures run interleaved (one run of each command per round), so the compile and
its floors see the same load on a shared machine. profilec's own share of a 10-root compile is
median(`profilec compile`) - median(floor app): the floor app is a minimal typer program with one
command and two options that imports pydantic, i.e. what any typer 0.29 program pays before it
does anything of its own. These are measurements, not targets (issue 34 retired the start-up
targets); the reference figures printed beside them: whole-process compile of 10 roots within
1.6x of the floor app, warm in-process `load_and_compile` under 15 ms, 10,000 roots under 1.5 s.

`--only GROUP[,GROUP...]` picks figure groups: startup (the floors, compile of 10 roots, the own
share, in-process compile), scale (compile of 1,000 / 10,000 roots), check, canary. Default: all.

Output goes to stdout (discarded), never `--out /dev/null`, so an --out write's cost stays out
of the figures (compiler/fsio.py writes a device in place; it once renamed over /dev/null).
"""

from __future__ import annotations

import argparse
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
GROUPS = ("startup", "scale", "check", "canary", "watch")
#: Reference figures (issue 34): printed beside the measurement, never asserted.
COMPILE_VS_APP_REFERENCE = 1.6
LOAD_AND_COMPILE_REFERENCE = 0.015
ROOTS_10K_REFERENCE = 1.5

#: The floor of the own-share figure: a real typer app, one command, two options, pydantic
#: imported. Running it costs what any typer 0.29 command line pays (typer, its vendored click,
#: the pydantic it coerces parameters with, building and parsing the command).
FLOOR_APP = """\
from pathlib import Path
from typing import Annotated

import pydantic
import typer

app = typer.Typer()


@app.command()
def compile(
    roots: Annotated[Path, typer.Option("--roots", help="The roots manifest.")],
    fmt: Annotated[str, typer.Option("--format", help="The output format.")] = "toml",
) -> None:
    \"\"\"Echo the arguments.\"\"\"
    print(pydantic.VERSION, roots, fmt)


if __name__ == "__main__":
    app()
"""


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


Sample = tuple[float, float, float, int]


def interleaved(cmds: dict[str, list[str]]) -> tuple[dict[str, Figure], dict[str, list[Sample]]]:
    """Figures (and the raw samples) for several commands run round-robin, RUNS rounds: each
    round runs every command once, so a load spike on the shared machine hits all of them."""
    samples: dict[str, list[Sample]] = {name: [] for name in cmds}
    for _ in range(RUNS):
        for name, cmd in cmds.items():
            samples[name].append(run_child(cmd))
    figures = {
        name: Figure(
            name,
            statistics.median(s[0] for s in got),
            statistics.median(s[1] for s in got),
            max(s[2] for s in got),
        )
        for name, got in samples.items()
    }
    return figures, samples


def paired(a: list[Sample], b: list[Sample], field: int) -> float:
    """Median of the round-by-round differences a - b (same round, same load)."""
    return statistics.median(x[field] - y[field] for x, y in zip(a, b, strict=True))


def in_process(manifest: Path, home: Path, launch_tmp: Path) -> list[Figure]:
    """compile_bundle and load_and_compile for `manifest`, medians of many calls."""
    import resource

    from profilec.api import load_and_compile
    from profilec.compile import compile_bundle
    from profilec.flags import CompileFlags
    from profilec.inputs import Inputs
    from profilec.models.roots import LaunchLayout
    from profilec.policy import load_policy
    from profilec.roots import resolve_roots

    policy = load_policy()
    roots = resolve_roots(Inputs(CompileFlags.from_text(roots=str(manifest))).manifest())
    layout = LaunchLayout()
    compile_bundle(roots, policy, layout)  # warm: first use builds the pydantic validators
    pure, edge = [], []
    for _ in range(max(RUNS, 200)):
        t0 = time.perf_counter()
        compile_bundle(roots, policy, layout)
        pure.append(time.perf_counter() - t0)
    for _ in range(max(RUNS, 50)):
        t0 = time.perf_counter()
        load_and_compile(str(manifest), codex_home=str(home), tmpdir=str(launch_tmp))
        edge.append(time.perf_counter() - t0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return [
        Figure(
            "in-process `compile_bundle()`, 10 roots",
            statistics.median(pure),
            rss=rss,
        ),
        Figure("in-process `load_and_compile()`, 10 roots (reads files)", statistics.median(edge)),
    ]


def watch_figures(tmp: Path) -> tuple[list[Figure], str]:
    """`profilec watch`'s tree scan for planted project config folders (compiler/projectlayers.py)
    over 22,040 directories and 2,000 links to directories (one in each middle directory, to a
    sibling: the scan resolves every link to a directory, to report one that leads outside the
    roots), beside its floor: a bare recursive `os.scandir` of the same tree (what any look at
    every directory costs; it resolves no link). Interleaved, medians of RUNS rounds."""
    from profilec import projectlayers
    from profilec.watch import SCAN_DUTY

    root = tmp / "watch-tree"
    for a in range(40):
        for b in range(50):
            for c in range(10):
                d = root / f"d{a}" / f"e{b}" / f"f{c}"
                d.mkdir(parents=True)
                (d / "x.py").touch()
            (root / f"d{a}" / f"e{b}" / "lnk").symlink_to("f0")

    def bare() -> int:
        n, stack = 0, [str(root)]
        while stack:
            with os.scandir(stack.pop()) as it:
                n += 1
                stack.extend(e.path for e in it if e.is_dir(follow_symlinks=False))
        return n

    scans, floors = [], []
    dirs = bare()
    for _ in range(RUNS):
        t0 = time.perf_counter()
        seen = projectlayers.scan(str(root))
        scans.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        bare()
        floors.append(time.perf_counter() - t0)
    assert seen.complete and not seen.found and not seen.outside
    scan, floor = statistics.median(scans), statistics.median(floors)
    rows = [
        Figure(f"bare `os.scandir` of {dirs:,} directories (floor)", floor),
        Figure(
            f"`watch` project-config scan, {dirs:,} directories, 2,000 links",
            scan,
            ratio_to="scandir floor",
            floor=floor,
        ),
    ]
    verdict = (
        f"watch: one project-config scan of {dirs:,} directories takes {ms(scan)}; the next "
        f"starts {SCAN_DUTY:g}x that later, so a planted folder is seen within about "
        f"{ms(scan * (1 + SCAN_DUTY))} plus one poll"
    )
    return rows, verdict


def canary_figures(ex: Path, launch_tmp: Path) -> list[Figure]:
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
        *("--tmpdir", str(launch_tmp)),
    ]
    bundle = load_and_compile(
        str(ex / "roots.toml"),
        workspace_roots=[str(ex / "workspace")],
        codex_home=str(ex / "agent" / "codex-home"),
        tmpdir=str(launch_tmp),
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


def parse_groups(argv: list[str]) -> set[str]:
    """The figure groups `--only` names (every group without it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--only",
        default=",".join(GROUPS),
        help=f"comma-separated figure groups of {', '.join(GROUPS)} (default: all)",
    )
    groups = {g.strip() for g in parser.parse_args(argv).only.split(",") if g.strip()}
    unknown = groups - set(GROUPS)
    if unknown or not groups:
        parser.error(f"--only: unknown group(s) {sorted(unknown)}; choose from {GROUPS}")
    return groups


def ms(seconds: float) -> str:
    """Milliseconds with one decimal."""
    return f"{seconds * 1000:.1f} ms"


def main(argv: list[str] | None = None) -> int:
    """Run the selected figures and print one table."""
    groups = parse_groups(sys.argv[1:] if argv is None else argv)
    # Byte-compile first: with PYTHONDONTWRITEBYTECODE set, an edited module would otherwise be
    # compiled again in every child (an installed wheel ships compiled).
    subprocess.run(
        [PY, "-m", "compileall", "-q", str(REPO / "compiler")],
        check=False,
        stdout=subprocess.DEVNULL,
    )
    print(
        f"machine: {machine()}; runs per figure: {RUNS}; groups: {', '.join(sorted(groups))}",
        flush=True,
    )
    rows: list[Figure] = []
    verdicts: list[str] = []
    with tempfile.TemporaryDirectory(prefix="profilec-bench-") as tmp:
        # The launch's own TMPDIR, beside the layouts: compile refuses a CODEX_HOME under the
        # temp dir the launch gives Codex (--tmpdir, else $TMPDIR, else /tmp).
        launch_tmp = Path(tmp) / "launch-tmp"
        launch_tmp.mkdir()
        tmp_flag = ("--tmpdir", str(launch_tmp))
        layouts = {}
        for n in (10, 1000, 10000) if "scale" in groups else (10, 1000):
            d = Path(tmp) / f"n{n}"
            d.mkdir()
            manifest, _ws, home = _layout(d, n)
            layouts[n] = (manifest, home)

        def compile_cmd(n: int) -> list[str]:
            manifest, home = layouts[n]
            return [
                *CLI,
                *("compile", "--roots", str(manifest), "--codex-home", str(home)),
                *("--format", "overrides", *tmp_flag),
            ]

        floor_app = Path(tmp) / "floor_app.py"
        floor_app.write_text(FLOOR_APP)
        floor_args = ["--roots", str(layouts[10][0]), "--format", "overrides"]
        # The floors of every process figure, interleaved with the 10-root compile.
        names = {
            "pass": "`python -c pass` (floor)",
            "pydantic": "`python -c 'from pydantic import BaseModel'`",
            "adapters": "`python -c 'import typer._adapters'` (typer + its pydantic)",
            "app": "floor app: typer, one command, two options, imports pydantic (own-share floor)",
            "c10": "`profilec compile`, 10 roots (whole process)",
        }
        cmds = {names["pass"]: [PY, "-c", "pass"]}
        if "startup" in groups:
            cmds[names["pydantic"]] = [PY, "-c", "from pydantic import BaseModel"]
            cmds[names["adapters"]] = [PY, "-c", "import typer._adapters"]
            cmds[names["app"]] = [PY, str(floor_app), *floor_args]
            cmds[names["c10"]] = compile_cmd(10)
        got, samples = interleaved(cmds)
        py = got[names["pass"]]
        for name, fig in got.items():
            rows.append(Figure(name, fig.wall, fig.cpu, fig.rss, "floor", py.wall))
        if "startup" in groups:
            c10, app = got[names["c10"]], got[names["app"]]
            own, own_cpu = c10.wall - app.wall, c10.cpu - app.cpu
            pairs = samples[names["c10"]], samples[names["app"]]
            verdicts.append(
                f"own share, compile 10 roots: median compile {ms(c10.wall)} - median floor app "
                f"{ms(app.wall)} = **{ms(own)}** wall, **{c10.wall / app.wall:.2f}x** the floor "
                f"app (reference: within {COMPILE_VS_APP_REFERENCE}x); CPU {ms(c10.cpu)} - "
                f"{ms(app.cpu)} = {ms(own_cpu)}; `python -c pass` {ms(py.wall)}; {RUNS} runs each, "
                f"interleaved (median of the per-round differences: wall {ms(paired(*pairs, 0))}, "
                f"CPU {ms(paired(*pairs, 1))})"
            )
        if "scale" in groups:
            compiled = {
                n: timed(
                    f"`profilec compile`, {n:,} roots (whole process)",
                    compile_cmd(n),
                    ratio_to="floor",
                    floor=py.wall,
                )
                for n in (1000, 10000)
            }
            rows += compiled.values()
            w1k, w10k = compiled[1000].wall - py.wall, compiled[10000].wall - py.wall
            c1k, c10k = compiled[1000].cpu - py.cpu, compiled[10000].cpu - py.cpu
            verdicts.append(
                f"compile of 10,000 roots: median **{compiled[10000].wall:.2f} s** (reference: "
                f"under {ROOTS_10K_REFERENCE} s); "
                "growth exponent, compile 1,000 -> 10,000 roots (floor subtracted): "
                f"wall {math.log(w10k / w1k) / math.log(10):.2f}, "
                f"CPU {math.log(c10k / c1k) / math.log(10):.2f} (1 = linear; n log n = 1.12)"
            )
        ex: Path | None = None
        if groups & {"check", "canary"}:
            ex = Path(
                subprocess.run(
                    ["bash", "examples/make-layout.sh", str(Path(tmp) / "ex")],
                    check=True,
                    capture_output=True,
                    text=True,
                    cwd=REPO,
                ).stdout.strip()
            )
        if "check" in groups and ex is not None:
            ex_args = [
                "--roots",
                str(ex / "roots.toml"),
                "--workspace-root",
                str(ex / "workspace"),
                "--codex-home",
                str(ex / "agent" / "codex-home"),
                *tmp_flag,
            ]
            rows.append(
                timed(
                    "`profilec check`, bundled example (static)",
                    [*CLI, "check", *ex_args, "--format", "json"],
                    ratio_to="floor",
                    floor=py.wall,
                )
            )
            manifest, home = layouts[1000]
            rows.append(
                timed(
                    "`profilec check`, 1,000 roots x 3 modes (static)",
                    [
                        *(*CLI, "check", "--roots", str(manifest)),
                        *("--codex-home", str(home), "--format", "json", *tmp_flag),
                    ],
                    ratio_to="floor",
                    floor=py.wall,
                )
            )
        if "startup" in groups:
            inproc = in_process(*layouts[10], launch_tmp)
            rows += inproc
            pure, edge = inproc[0].wall, inproc[1].wall
            verdicts.append(
                f"in-process, 10 roots, warm: `compile_bundle()` median {ms(pure)}; "
                f"`load_and_compile()` median **{ms(edge)}** (reference: under "
                f"{ms(LOAD_AND_COMPILE_REFERENCE)})"
            )
        if "canary" in groups and ex is not None:
            rows += canary_figures(ex, launch_tmp)
        if "watch" in groups:
            figures, verdict = watch_figures(Path(tmp))
            rows += figures
            verdicts.append(verdict)

    print()
    print("| figure | median wall | ratio | median CPU | peak RSS |")
    print("|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r.wall / r.floor:.1f}x {r.ratio_to}" if r.ratio_to else ""
        wall = f"{r.wall * 1000:.1f} ms" if r.wall < 2 else f"{r.wall:.2f} s"
        cpu = "" if math.isnan(r.cpu) else f"{r.cpu * 1000:.0f} ms"
        rss = "" if math.isnan(r.rss) else f"{r.rss:.0f} MiB"
        print(f"| {r.name} | {wall} | {ratio} | {cpu} | {rss} |")
    print()
    for line in verdicts:
        print(line)
    print(
        "ratio: to `python -c pass` for process figures, to the canary floor for canaries. "
        "Peak RSS: the child's own (os.wait4); in-process rows: this bench process."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
