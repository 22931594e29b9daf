"""A CODEX_HOME under the temp dir the launch gives Codex is refused, not compiled.

Codex refuses to create its sandbox helper under the temp dir ('Refusing to create helper
binaries under temporary dir', measured on 0.165.0 and 0.171.0), so no model command runs.
The temp dir is `--tmpdir`, else $TMPDIR, else /tmp: one definition
(paths.codex_home_temp_dir) behind compile's refusal, check's PC035 and the plan's TMPDIR.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.check.check_inputs import CheckInputs
from profilec.check.checker import run_check
from profilec.check.configstack import ConfigStack
from profilec.errors import LayoutError
from profilec.paths import codex_home_temp_dir, launch_temp_dir
from tests.helpers import make_layout

REPO = Path(__file__).resolve().parents[2]


def test_the_definition() -> None:
    assert launch_temp_dir(None) == "/tmp"
    assert launch_temp_dir("") == "/tmp"
    assert launch_temp_dir("/var/tmp/x/") == "/var/tmp/x"
    assert codex_home_temp_dir("/tmp/a/codex", None) == "/tmp"
    assert codex_home_temp_dir("/tmp", None) == "/tmp"
    assert codex_home_temp_dir("/tmpx/codex", None) is None  # whole components only
    assert codex_home_temp_dir("/tmp/a/codex", "/var/tmp") is None  # TMPDIR replaces /tmp
    assert codex_home_temp_dir("/var/tmp/s/codex", "/var/tmp/s") == "/var/tmp/s"


def test_a_codex_home_under_tmpdir_is_refused_naming_the_fix(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    ws = [str(lay.workspace)]
    with pytest.raises(LayoutError) as exc:
        load_and_compile(lay.manifest, workspace_roots=ws, tmpdir=tmp_path)
    line = exc.value.one_line()
    assert exc.value.exit_code == 2 and "\n" not in line
    assert f"CODEX_HOME {lay.codex_home} is under the temp dir {tmp_path}" in line
    assert "Refusing to create helper binaries" in line and "persistent directory" in line
    # negative control: the same layout with a TMPDIR of its own compiles
    own = tmp_path / "launch-tmp"
    own.mkdir()
    assert load_and_compile(lay.manifest, workspace_roots=ws, tmpdir=own).codex_home


def test_without_tmpdir_the_environment_and_then_tmp_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lay = make_layout(tmp_path / "l")
    ws = [str(lay.workspace)]
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with pytest.raises(LayoutError, match="under the temp dir"):
        load_and_compile(lay.manifest, workspace_roots=ws)
    monkeypatch.delenv("TMPDIR")
    if codex_home_temp_dir(os.path.realpath(lay.codex_home), None) is None:
        pytest.skip("pytest's basetemp is not under /tmp here")
    with pytest.raises(LayoutError, match="under the temp dir /tmp"):
        load_and_compile(lay.manifest, workspace_roots=ws)


def test_the_cli_exits_2_with_one_line(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    flags = ["--roots", str(lay.manifest), "--workspace-root", str(lay.workspace)]
    proc = subprocess.run(
        [sys.executable, "-m", "profilec.cli", "compile", *flags, "--tmpdir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("profilec: layout:")]
    assert len(errors) == 1 and "under the temp dir" in errors[0], proc.stderr


def test_pc035_is_an_error_and_falls_back_to_tmp() -> None:
    def report(tmpdir: str | None):  # type: ignore[no-untyped-def]
        inp = CheckInputs(
            stack=ConfigStack(()),
            mode_map={},
            roots=(),
            workspace_roots=(),
            codex_home="/tmp/agent/codex-home",
            tmpdir=tmpdir,
        )
        return run_check(inp)

    for tmpdir in (None, "/tmp"):
        found = [f for f in report(tmpdir).findings if f.rule == "PC035"]
        assert [f.severity for f in found] == ["error"], tmpdir
    assert not [f for f in report("/var/tmp/launch").findings if f.rule == "PC035"]
