"""Inputs that do not exist are refused with the fix: exit 2, one line naming the flag.

A misspelled `--workspace-root` or `--tmpdir` used to compile silently (exit 0) into a profile
for a directory no session uses; a missing CODEX_HOME was a dangling-chain error whose hint
(`allow_missing`, a root's key) could not fix it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.cli import main
from profilec.errors import InputError
from tests.helpers import Layout, make_layout


def _flags(lay: Layout, **over: str) -> list[str]:
    args = {
        "--roots": str(lay.manifest),
        "--workspace-root": str(lay.workspace),
        "--codex-home": str(lay.codex_home),
    } | over
    return [w for kv in args.items() for w in kv]


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    rc = main(["compile", *argv])
    out = capsys.readouterr()
    assert rc == 2, out.err
    assert out.out == "" and out.err.count("\n") == 1, out.err  # one line, nothing emitted
    return out.err


@pytest.mark.parametrize("flag", ["--workspace-root", "--tmpdir"])
def test_a_misspelled_launch_directory_is_refused_naming_the_flag_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    lay = make_layout(tmp_path / "l")
    typo = str(lay.base / "wrokspace")
    err = _refused(capsys, _flags(lay, **{flag: typo}))
    assert err.startswith(f"profilec: input: {flag}: {typo} does not exist")
    assert "fix the spelling, or create the directory" in err
    with pytest.raises(InputError, match=flag):  # the library says the same
        load_and_compile(
            str(lay.manifest),
            workspace_roots=[typo if flag == "--workspace-root" else str(lay.workspace)],
            codex_home=str(lay.codex_home),
            tmpdir=typo if flag == "--tmpdir" else None,
        )


def test_an_existing_tmpdir_and_workspace_compile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    (lay.base / "tmp").mkdir()
    assert main(["compile", *_flags(lay, **{"--tmpdir": str(lay.base / "tmp")})]) == 0
    assert capsys.readouterr().err == ""


def test_a_file_or_a_dangling_link_is_no_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    err = _refused(capsys, _flags(lay, **{"--workspace-root": str(lay.control)}))
    assert f"--workspace-root: {lay.control} is not a directory" in err
    link = lay.base / "ws-link"
    link.symlink_to(lay.base / "gone")
    err = _refused(capsys, _flags(lay, **{"--tmpdir": str(link)}))
    assert f"--tmpdir: {link} does not exist (it resolves to {lay.base}/gone)" in err


def test_a_missing_codex_home_names_the_flag_and_not_allow_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    typo = str(lay.base / "codexhom")
    err = _refused(capsys, _flags(lay, **{"--codex-home": typo}))
    assert err.startswith(f"profilec: input: --codex-home: CODEX_HOME {typo} does not exist")
    assert "allow_missing" not in err and "create the agent's private CODEX_HOME" in err
