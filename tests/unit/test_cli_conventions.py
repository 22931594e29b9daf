"""CLI conventions (issue 16 item 6): --version, -h, -q/-v, `--out -`, completion, placeholders
that read as values, `plan --profiles`, and a progress line only on a terminal."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profilec.cli import COMMANDS, console, main
from tests.helpers import make_layout

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`python3 -m profilec.cli ARGS` from the checkout under test."""
    return subprocess.run(
        [sys.executable, "-m", "profilec.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **env},
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return make_layout(tmp_path_factory.mktemp("conv") / "l")


def test_version_names_the_package_and_the_pinned_codex() -> None:
    proc = cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"profilec \S+ \(codex 0\.171\.0\)\n", proc.stdout), proc.stdout
    assert proc.stderr == ""
    pkg = subprocess.run(
        [sys.executable, "-m", "profilec", "--version"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert (pkg.returncode, pkg.stdout) == (0, proc.stdout), pkg.stderr


@pytest.mark.parametrize("command", [None, *dict.fromkeys(COMMANDS)])
def test_dash_h_is_help_everywhere_and_placeholders_read_as_values(
    command: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [command] if command else []
    assert main([*args, "-h"]) == 0
    short = capsys.readouterr().out
    assert main([*args, "--help"]) == 0
    assert capsys.readouterr().out == short
    assert "Usage: profilec" in short
    # typer's own placeholders (`<bool>`, `<str>`, `<list[str]>`, `<path>`) never show.
    assert re.findall(r"<[a-z][a-z_\[\], ]*>", short) == []
    rows: dict[str, str] = {}
    # An option's own row starts the line; help prose may mention other flags mid-line.
    for m in re.finditer(r"^[│|]?\s*(--[a-z-]+)\s+(?:-\w\s+)?(\S*)", short, re.M):
        rows.setdefault(m.group(1), m.group(2))
    for flag in ("--help", "--canary", "--check-catalog", "--version", "--quiet", "--verbose"):
        if flag in rows:  # a flag takes no value: no placeholder after it
            assert not re.fullmatch(r"[A-Z_|-]+", rows[flag]), (flag, rows[flag])
    for opt, metavars in (
        ("--roots", "FILE"),
        ("--profiles", "DIR"),
        ("--format", "FORMAT"),
        ("--workspace-root", "DIR"),
        ("--out", "FILE PATH"),
    ):
        if opt in rows:
            assert rows[opt] in metavars.split(), (opt, rows[opt])


def test_canary_is_a_flag_on_check(layout, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert main(["check", "--roots", str(layout.manifest), "--canary", "true"]) == 2
    assert "unexpected extra argument" in capsys.readouterr().err.lower()


def test_out_dash_writes_stdout_and_no_file_named_dash(layout, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base = ["--roots", str(layout.manifest), "--codex-home", str(layout.codex_home)]
    plain = cli("compile", *base, "--format", "overrides", cwd=tmp_path)
    dashed = cli("compile", *base, "--format", "overrides", "--out", "-", cwd=tmp_path)
    assert plain.returncode == dashed.returncode == 0, dashed.stderr
    assert dashed.stdout == plain.stdout != ""
    checked = cli("check", *base, "--format", "json", "--out", "-", cwd=tmp_path)
    assert checked.stdout.startswith("{"), checked.stderr
    locked = cli("lock", *base, "--out", "-", cwd=tmp_path)
    assert locked.returncode == 0 and "content_hash" in locked.stdout, locked.stderr
    assert not (tmp_path / "-").exists()
    home = cli("compile", *base, "--format", "codex-home", "--out", "-", cwd=tmp_path)
    assert home.returncode == 2 and "--out DIR" in home.stderr


def test_quiet_drops_warnings_and_verbose_adds_progress_lines(layout, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    session = tmp_path / "session.json"
    session.write_text('{"model": "m", "sandbox_mode": "danger-full-access"}')
    args = ["compile", "--roots", str(layout.manifest), "--session-config", str(session)]
    normal = cli(*args)
    assert normal.returncode == 0 and "profilec: warning: " in normal.stderr, normal.stderr
    quiet = cli("-q", *args)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == normal.stdout
    loud = cli("-v", *args)
    assert loud.returncode == 0 and loud.stdout == normal.stdout
    assert "profilec: compile: " in loud.stderr and "roots" in loud.stderr
    assert "profilec: compile: " not in normal.stderr
    both = cli("-q", "-v", *args)
    assert both.returncode == 2 and both.stderr.count("\n") == 1


def test_errors_still_show_under_quiet(tmp_path: Path) -> None:
    proc = cli("-q", "compile", "--roots", str(tmp_path / "absent.toml"))
    assert proc.returncode != 0 and proc.stderr.startswith("profilec: ")


def test_shell_completion_is_on() -> None:
    assert "--show-completion" in cli("--help").stdout
    proc = cli(_PROFILEC_COMPLETE="complete_bash", COMP_WORDS="profilec comp", COMP_CWORD="1")
    assert proc.returncode == 0 and proc.stdout.split("\n")[0] == "compile", proc
    proc = cli(
        _PROFILEC_COMPLETE="complete_bash", COMP_WORDS="profilec plan --prof", COMP_CWORD="2"
    )
    assert "--profiles" in proc.stdout.split("\n")


def test_plan_reads_its_backend_catalog_from_profiles(layout, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    daemon = layout.base / "daemon"
    daemon.mkdir(exist_ok=True)
    (layout.base / "hosthome").mkdir(exist_ok=True)
    lay_file = tmp_path / "plan.toml"
    lay_file.write_text(
        "schema_version = 1\n"
        f'daemon_root = "{daemon}"\n'
        f'agent_home = "{layout.codex_home}"\n'
        f'workspace_roots = ["{layout.workspace}"]\n'
        f'state_dir = "{daemon}/state/cand-1"\n'
        'backends = ["codex"]\n'
        f'hidden = {{ host_home = "{layout.base / "hosthome"}" }}\n'
    )
    os.chmod(lay_file, 0o600)
    empty = tmp_path / "policy"
    empty.mkdir()
    proc = cli(
        "plan", "--roots", str(layout.manifest), "--layout", str(lay_file), "--profiles", str(empty)
    )
    assert proc.returncode == 2, proc.stderr
    assert f"{empty}/backends.toml" in proc.stderr
    shutil.copy(REPO / "profiles" / "backends.toml", empty / "backends.toml")
    ok = cli(
        "plan", "--roots", str(layout.manifest), "--layout", str(lay_file), "--profiles", str(empty)
    )
    shipped = cli("plan", "--roots", str(layout.manifest), "--layout", str(lay_file))
    assert ok.returncode == shipped.returncode == 0, ok.stderr
    assert ok.stdout == shipped.stdout and '"credentials"' in ok.stdout


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("tty", "env", "level", "live"),
    [
        (True, {}, console.NORMAL, True),
        (False, {}, console.NORMAL, False),  # piped
        (True, {"NO_COLOR": "1"}, console.NORMAL, False),
        (True, {"TERM": "dumb"}, console.NORMAL, False),
        (True, {}, console.QUIET, False),
    ],
)
def test_progress_is_a_status_line_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tty: bool, env: dict[str, str], level: int, live: bool
) -> None:
    err = _Tty() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    console.set_level(level)
    try:
        with console.progress("canary", total=2) as step:
            step("mode agent: 9 probes, pass")
            step("mode read-only: 9 probes, pass")
    finally:
        console.set_level(console.NORMAL)
    text = err.getvalue()
    if live:
        assert "\rprofilec: canary: [2/2] mode read-only" in text
        assert text.endswith("\r") and "\n" not in text  # erased, nothing left behind
    else:
        assert text == ""


def test_verbose_progress_is_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    console.set_level(console.VERBOSE)
    try:
        with console.progress("e2e") as step:
            step("codex app-server: 4 rows")
    finally:
        console.set_level(console.NORMAL)
    assert err.getvalue() == "profilec: e2e: codex app-server: 4 rows\n"
