"""Every command reads each input file once and never opens the credential, seen by strace.

The unit tests' audit hook (tests/unit/test_one_edge.py) sees Python's own `open`; strace sees
every open(2)/openat(2) of the whole process tree, C extensions and subprocesses included. Each
command runs as a user would run it (`python -m profilec ...`) on a layout whose credential is
a random marker behind a symlinked CODEX_HOME, with a session config, a vouched MCP file, a plan
layout, a lock and two bundles: every input file it takes must be opened exactly once, and
neither the credential's link nor its target may appear in any open call (failed ones too).
Covered: compile (every format), check (with every input file it takes), lock, check --lock,
explain, audit (compiling, and of a bundle with canary results and an e2e matrix), diff, plan,
watch, canary and e2e. `canary` and `e2e` run with PROFILEC_CODEX_BIN naming no file: each reads its
inputs first (canary compiles its flags' files, e2e --check-catalog reads the adapter catalog of
--profiles) and then stops at exit 7 (the pinned codex is missing), before any container or
Codex session, so the trace is of exactly the input reading and takes a second. The probes
that follow read no input file (tests/unit/test_one_edge.py scans compiler/ for readers).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import Layout, make_layout
from tests.integration.conftest import missing

REPO = Path(__file__).resolve().parents[2]
OPEN = re.compile(r'^\d+\s+(?:open|openat|openat2)\((?:AT_FDCWD|\d+), "((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Case:
    layout: Layout
    flags: list[str]
    inputs: dict[str, Path]  # name -> an input file of the compile flags
    work: Path


def _strace() -> str:
    exe = shutil.which("strace")
    if exe is None:
        missing("strace is not installed (.ci/tools.sh installs it)")
    return exe


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> Case:
    base = tmp_path_factory.mktemp("readonce")
    lay = make_layout(base / "l", hop_dir=True)
    session = base / "l" / "session.json"
    session.write_text(json.dumps({"model": "gpt-5"}), encoding="utf-8")
    mcp = base / "l" / "mcp.toml"
    mcp.write_text(
        (
            'schema_version = 2\ncodex = "/usr/bin/codex"\n'
            '[servers.bridge]\ncommand = "/usr/bin/true"\ncwd = "/srv/agentd/mcp"\n'
        ),
        encoding="utf-8",
    )
    os.chmod(mcp, 0o600)
    flags = [
        "--roots", str(lay.manifest),
        "--workspace-root", str(lay.workspace),
        "--codex-home", str(lay.codex_home),
        "--session-config", str(session),
        "--vouched-mcp", str(mcp),
    ]  # fmt: skip
    work = base / "work"
    work.mkdir()
    return Case(lay, flags, {"manifest": lay.manifest, "session": session, "mcp": mcp}, work)


def _traced(
    argv: list[str], work: Path, *, until: str | None = None, env: dict[str, str] | None = None
) -> tuple[int, str, Counter[str]]:
    """Run `python -m profilec ARGV` under strace -f; with `until`, SIGTERM it once that text
    appears on stderr (a long-running command: watch); `env` is added to the environment.
    Returns (exit, stderr, opened paths)."""
    log = work / f"strace-{time.monotonic_ns()}.log"
    cmd = [
        _strace(),
        "-f",
        "-qq",
        "-e",
        "trace=open,openat,openat2",
        "-o",
        str(log),
        sys.executable,
        "-m",
        "profilec",
        *argv,
    ]
    environ = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})}
    proc = subprocess.Popen(
        cmd, cwd=work, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    err = ""
    if until is not None:
        for line in iter(proc.stderr.readline, ""):  # event-driven: the line says it is up
            err += line
            if until in line:
                # strace's own child is the command; SIGTERM to strace would only detach it
                kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
                for kid in kids:
                    os.kill(int(kid), signal.SIGTERM)
                break
    _out, rest = proc.communicate(timeout=600)
    err += rest
    opened: Counter[str] = Counter()
    for line in log.read_text(encoding="utf-8", errors="replace").split("\n"):
        m = OPEN.match(line)
        if m:
            path = m.group(1).encode().decode("unicode_escape")
            # canonical: the shipped policy is reached through the package's data links
            opened[os.path.realpath(os.path.join(str(work), path))] += 1
    return proc.returncode, err, opened


def _judge(case: Case, opened: Counter[str], once: list[Path]) -> None:
    lay = case.layout
    for secret in (lay.host_target, lay.link):
        hits = [p for p in opened if p in (str(secret), os.path.realpath(secret))]
        hits += [p for p in opened if os.path.basename(p) == "auth.json"]
        assert not hits, f"the credential was opened: {hits}"
    for p in once:
        n = opened[os.path.realpath(p)]
        assert n == 1, f"{p} opened {n} times"
    policy = REPO / "profiles"
    twice = {p: n for p, n in opened.items() if p.startswith(str(policy) + "/") and n > 1}
    assert twice == {}, f"policy files opened more than once: {twice}"


def _bundle(case: Case, name: str, fmt: str = "bundle") -> Path:
    out = case.work / name
    rc, err, _ = _traced(["compile", *case.flags, "--format", fmt, "--out", str(out)], case.work)
    assert rc == 0, err
    return out


def _written(case: Case, name: str, text: str) -> Path:
    out = case.work / name
    out.write_text(text, encoding="utf-8")
    return out


@pytest.mark.parametrize("fmt", ["toml", "overrides", "acp-json", "bundle", "launch"])
def test_compile(case: Case, fmt: str) -> None:
    run_as = ["--run-as", "0"] if fmt == "launch" and os.geteuid() == 0 else []
    rc, err, opened = _traced(["compile", *case.flags, *run_as, "--format", fmt], case.work)
    assert rc == 0, err
    _judge(case, opened, list(case.inputs.values()))


def test_compile_codex_home(case: Case) -> None:
    out = case.work / "home-out"
    argv = ["compile", *case.flags, "--run-as", str(os.geteuid()), "--format", "codex-home"]
    rc, err, opened = _traced([*argv, "--out", str(out)], case.work)
    assert rc == 0, err
    _judge(case, opened, list(case.inputs.values()))


def test_check(case: Case) -> None:
    rc, err, opened = _traced(["check", *case.flags, "--format", "json"], case.work)
    assert rc in (0, 1), err
    _judge(case, opened, list(case.inputs.values()))


def test_lock_and_check_lock(case: Case) -> None:
    lock = case.layout.base / "profilec.lock"
    rc, err, opened = _traced(["lock", *case.flags, "--out", str(lock)], case.work)
    assert rc == 0, err
    _judge(case, opened, list(case.inputs.values()))
    rc, err, opened = _traced(["check", *case.flags, "--lock", str(lock)], case.work)
    assert rc in (0, 1), err
    _judge(case, opened, [*case.inputs.values(), lock])


def test_check_reads_every_input_it_takes_once(case: Case) -> None:
    """check's own inputs beside the compile flags: a foreign config or override list, an
    acp-json document or mode map, launcher requests, argv and environment, a baseline and a
    project config. --config and --overrides exclude each other, so do --acp-json and
    --mode-map: two runs."""
    acp = _bundle(case, "c.acp-json", "acp-json")
    modes = _written(case, "modes.json", json.dumps(json.loads(acp.read_text())["modeProfiles"]))
    baseline = case.work / "baseline.json"
    rc, err, _ = _traced(
        ["check", *case.flags, "--format", "json", "--out", str(baseline)], case.work
    )
    assert rc in (0, 1), err
    request = {"jsonrpc": "2.0", "id": 1, "method": "thread/start", "params": {}}
    common = {
        "--launch-requests": _written(case, "requests.jsonl", json.dumps(request) + "\n"),
        "--launch-argv": _written(case, "argv.json", '["codex", "app-server"]'),
        "--launch-env": _written(case, "env.json", '{"GIT_DIR": "/dev/null/x"}'),
        "--baseline": baseline,
        "--project-config": _written(case, "profilec.toml", "waiver = []\n"),
    }
    runs = (
        {"--config": _bundle(case, "config.toml", "toml"), "--acp-json": acp},
        {"--overrides": _bundle(case, "c.overrides", "overrides"), "--mode-map": modes},
    )
    for own in runs:
        files = {**own, **common}
        flags = [str(x) for flag, path in files.items() for x in (flag, path)]
        # A foreign config is checked as written: --vouched-mcp is refused with it.
        compile_flags = case.flags[: case.flags.index("--vouched-mcp")]
        rc, err, opened = _traced(["check", *compile_flags, *flags, "--format", "json"], case.work)
        assert rc in (0, 1), err
        _judge(case, opened, [case.inputs["manifest"], case.inputs["session"], *files.values()])


def test_explain(case: Case) -> None:
    rc, err, opened = _traced(
        ["explain", str(case.layout.link), "--mode", "agent", *case.flags], case.work
    )
    assert rc == 0, err
    _judge(case, opened, list(case.inputs.values()))


def test_audit(case: Case) -> None:
    rc, err, opened = _traced(
        ["audit", *case.flags, "--out", str(case.work / "audit.md")], case.work
    )
    assert rc == 0, err
    _judge(case, opened, list(case.inputs.values()))


def test_audit_of_a_bundle_with_canary_results_and_a_matrix(case: Case) -> None:
    """audit --bundle reads the bundle instead of compiling; --canary-json (bound to that
    bundle) and --e2e-matrix are read once each too."""
    from datetime import UTC, datetime

    from profilec.audit.evidence import bind
    from profilec.models.canary import CanaryMode, CanaryReport

    bundle = _bundle(case, "audited.json")
    report = CanaryReport.of(
        "run-1", (CanaryMode.of("agent", "profilec-agent", (), 1.5),), 2.0, "i:1"
    )
    bound = bind(report.model_dump(mode="json"), json.loads(bundle.read_text()), datetime.now(UTC))
    canary = _written(case, "canary.json", json.dumps(bound))
    row = {
        "adapter": "codex app-server", "adapter_version": "0.171.0", "codex_version": "0.171.0",
        "launch_method": "app-server -c", "session_event": "new", "result": "held",
        "evidence": "cat target: Permission denied", "lint": None,
    }  # fmt: skip
    matrix = _written(case, "matrix.json", json.dumps({"schema_version": 1, "rows": [row]}))
    out = case.work / "audit-bundle.md"
    argv = ["audit", "--bundle", str(bundle), "--canary-json", str(canary)]
    rc, err, opened = _traced([*argv, "--e2e-matrix", str(matrix), "--out", str(out)], case.work)
    assert rc == 0, err
    assert "Canary run run-1: pass" in out.read_text(encoding="utf-8")
    _judge(case, opened, [bundle, canary, matrix])


def test_diff(case: Case) -> None:
    old, new = _bundle(case, "old.json"), _bundle(case, "new.json")
    rc, err, opened = _traced(["diff", str(old), str(new)], case.work)
    assert rc == 0, err
    _judge(case, opened, [old, new])


def test_plan(case: Case) -> None:
    """The example's layout (examples/make-layout.sh) with its plan layout."""
    proc = subprocess.run(
        ["bash", str(REPO / "examples" / "make-layout.sh"), str(case.work / "example")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    d = Path(proc.stdout.strip())
    rc, err, opened = _traced(
        ["plan", "--roots", str(d / "roots.toml"), "--layout", str(d / "layout.toml")], case.work
    )
    assert rc == 0, err
    for secret in (d / "host" / "auth.json", d / "agent" / "codex-home" / "auth.json"):
        assert str(secret) not in opened and os.path.realpath(secret) not in opened
    _judge(case, opened, [d / "roots.toml", d / "layout.toml"])


def test_watch(case: Case) -> None:
    rc, err, opened = _traced(
        ["watch", *case.flags, "--interval", "0.05"], case.work, until="watching"
    )
    assert rc == 0, err
    _judge(case, opened, list(case.inputs.values()))


#: A codex binary that is not there: canary and e2e stop at exit 7 once their inputs are read.
NO_CODEX = {"PROFILEC_CODEX_BIN": "/nonexistent/profilec-test/codex"}


def test_canary(case: Case) -> None:
    """canary compiles the flags it takes (--roots, --workspace-root, --codex-home, --home;
    no session config or vouched MCP file) through the edge before it looks for codex."""
    flags = case.flags[: case.flags.index("--session-config")]
    rc, err, opened = _traced(["canary", *flags], case.work, env=NO_CODEX)
    assert rc == 7 and "codex" in err, err
    _judge(case, opened, [case.inputs["manifest"]])
    for name in ("modes.toml", "agent.toml", "trusted-base.toml", "parent.toml"):
        assert opened[os.path.realpath(REPO / "profiles" / name)] == 1, name


def test_e2e(case: Case) -> None:
    """e2e --check-catalog reads the adapter catalog of --profiles before any session."""
    profiles = case.work / "e2e-profiles"
    if not profiles.exists():
        shutil.copytree(REPO / "profiles", profiles)
    rc, err, opened = _traced(
        ["e2e", "--check-catalog", "--profiles", str(profiles)], case.work, env=NO_CODEX
    )
    assert rc == 7 and "codex" in err, err
    _judge(case, opened, [profiles / "adapters.toml"])
