"""PC060-PC062: the launch's ownership and mode prerequisites for the run-as uid (lstat only).

The measured problem: a root daemon launching Codex as uid 65534 with a root-owned 0700 vault
passed `check`, yet the parent could not read or refresh its login."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from profilec.check.lints.ownership import ownership_findings
from profilec.check.rules import rule_by_id
from profilec.cli import main
from profilec.flags import CompileFlags
from profilec.inputs import Inputs
from profilec.models.compiled import ResolvedRoot
from profilec.pipeline import resolve_layout
from tests.helpers import Layout, make_layout

RUN_AS = 65534
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")


@pytest.fixture
def lay() -> Iterator[Layout]:
    """A layout under a 0755 directory in /tmp: every ancestor is searchable by RUN_AS (pytest's
    own base directory is 0700, which would be a finding of its own)."""
    base = Path(tempfile.mkdtemp(prefix="profilec-own-", dir="/tmp"))
    os.chmod(base, 0o755)
    try:
        yield make_layout(base / "l")
    finally:
        shutil.rmtree(base)


def _hand_over(lay: Layout) -> None:
    """Everything the parent keeps, owned by RUN_AS (as a root daemon sets it up)."""
    for p in (
        lay.host_target.parent,
        lay.host_target,
        lay.codex_home,
        lay.codex_home / "auth.lock",
    ):
        os.chown(p, RUN_AS, RUN_AS)
    os.chown(lay.codex_home / "auth.json", RUN_AS, RUN_AS, follow_symlinks=False)


def _resolved(lay: Layout) -> tuple[tuple[ResolvedRoot, ...], str]:
    """The layout's roots as compile resolves them, and its CODEX_HOME (canonical)."""
    inputs = Inputs(
        CompileFlags.from_text(
            roots=str(lay.manifest),
            workspace_roots=(str(lay.workspace),),
            codex_home=str(lay.codex_home),
        )
    )
    _, roots, home = resolve_layout(inputs)
    assert home is not None
    return roots, os.path.realpath(home)


def _findings(lay: Layout, uid: int) -> list[tuple[str, str | None]]:
    return [(f.rule, f.path) for f in ownership_findings(*_resolved(lay), uid)]


def test_the_rules_are_errors_no_waiver_accepts() -> None:
    for rid in ("PC060", "PC061", "PC062"):
        r = rule_by_id(rid)
        assert (r.severity, r.waivable) == ("error", False), rid


@root_only
def test_a_root_owned_0700_vault_is_a_finding_for_run_as_65534_and_chowned_passes(
    lay: Layout,
) -> None:
    vault = str(lay.host_target.parent)
    os.chmod(vault, 0o700)
    _hand_over(lay)
    os.chown(vault, 0, 0)  # the measured setup: the vault root's, 0700
    assert ("PC060", vault) in _findings(lay, RUN_AS)
    # The negative control: chowned to the run-as uid, nothing is found.
    os.chown(vault, RUN_AS, RUN_AS)
    assert _findings(lay, RUN_AS) == []
    # The same root-owned vault is fine for a root parent (it reads and writes anything).
    os.chown(vault, 0, 0)
    assert all(r != "PC060" for r, _ in _findings(lay, 0))


@root_only
def test_a_credential_the_run_as_uid_cannot_write_is_a_finding(lay: Layout) -> None:
    _hand_over(lay)
    os.chown(lay.host_target, 0, 0)  # 0600 root: the parent cannot read its login
    assert ("PC060", str(lay.host_target)) in _findings(lay, RUN_AS)
    os.chown(lay.host_target, RUN_AS, RUN_AS)
    assert _findings(lay, RUN_AS) == []


@root_only
def test_codex_home_owner_mode_and_lock(lay: Layout) -> None:
    _hand_over(lay)
    home = str(lay.codex_home)
    lock = str(lay.codex_home / "auth.lock")
    assert _findings(lay, RUN_AS) == []
    os.chown(home, 1234, 1234)  # neither the run-as uid nor root
    assert ("PC061", home) in _findings(lay, RUN_AS)
    os.chown(home, 0, 0)  # root may own it (it is 0755 here: the run-as uid can read it)
    os.chmod(home, 0o755)
    os.chown(lock, 0, 0)
    assert _findings(lay, RUN_AS) == [("PC062", lock)]  # root's 0600 lock: not the parent's
    os.chown(home, RUN_AS, RUN_AS)
    os.chown(lock, RUN_AS, RUN_AS)
    os.chmod(home, 0o777)
    assert _findings(lay, RUN_AS) == [("PC061", home)]
    os.chmod(home, 0o700)
    os.unlink(lock)
    assert _findings(lay, RUN_AS) == [("PC062", lock)]


def test_as_the_compiling_uid_the_helper_layout_passes(lay: Layout) -> None:
    assert _findings(lay, os.geteuid()) == []


def _reported(capsys: pytest.CaptureFixture[str]) -> set[tuple[str, str | None]]:
    doc = json.loads(capsys.readouterr().out)
    return {(f["rule"], f["path"]) for f in doc["findings"] if f["severity"] == "error"}


@root_only
def test_check_cli_reports_the_vault_for_run_as_and_passes_once_chowned(
    lay: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = lay.host_target.parent
    os.chmod(vault, 0o700)
    _hand_over(lay)
    os.chown(vault, 0, 0)
    os.chown(lay.workspace, RUN_AS, RUN_AS)  # Codex creates its mount targets there
    argv = [
        "check",
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
        "--no-project-config",
        "--format",
        "json",
    ]
    assert main([*argv, "--run-as", str(RUN_AS)]) == 1
    assert _reported(capsys) == {("PC060", str(vault))}
    assert main([*argv, "--run-as", str(RUN_AS), "--ignore", "PC060"]) == 2  # not waivable
    capsys.readouterr()
    os.chown(vault, RUN_AS, RUN_AS)
    assert main([*argv, "--run-as", str(RUN_AS)]) == 0, capsys.readouterr().out
    # Without --run-as the parent is the compiling uid (root here): a CODEX_HOME that uid
    # 65534 owns could be rewritten under it.
    capsys.readouterr()
    assert main(argv) == 1
    assert _reported(capsys) == {("PC061", str(lay.codex_home))}


@root_only
def test_check_as_root_without_run_as_names_the_flag_not_a_chown(lay: Layout) -> None:
    """Check running as root was not told the launch's uid: a CODEX_HOME another uid owns is
    most likely that uid's, so the message names `--run-as <owner>` first."""
    _hand_over(lay)
    roots, home = _resolved(lay)
    assumed = ownership_findings(roots, home, 0, given=False)
    messages = [f.message for f in assumed if f.rule == "PC061"]
    assert messages and all("root without --run-as" in m for m in messages)
    assert f"pass --run-as {RUN_AS} if Codex is launched as that uid" in messages[0]
    # Control: told the launch runs as root (--run-as 0), the owner is the finding itself.
    given = [f.message for f in ownership_findings(roots, home, 0) if f.rule == "PC061"]
    assert given and "--run-as" not in given[0] and "not the run-as uid 0" in given[0]
    # And as the launch's uid nothing is found.
    assert ownership_findings(roots, home, RUN_AS, given=False) == []
