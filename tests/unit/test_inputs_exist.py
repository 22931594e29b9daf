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


def test_a_codex_home_whose_login_the_manifest_does_not_declare_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another agent's CODEX_HOME (or a mistyped one) given with this manifest: its auth.json
    is no root, so every mode would leave it readable (measured before the check: the compiled
    profile held only `read` on that CODEX_HOME and an auth.lock deny)."""
    from profilec.codex.resolve import EvalContext, resolve

    lay = make_layout(tmp_path / "l")
    other = lay.base / "home2"
    other.mkdir()
    # control: no login there yet (watch reports one appearing) compiles
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(other)
    )
    prof = bundle.profile_for("agent")
    eff = resolve(
        {prof.profile_id: prof.codex_table()}, prof.profile_id, EvalContext(cwd=str(lay.workspace))
    )
    assert eff.decide(str(other / "auth.json")).readable, "the hole this check closes"
    (other / "auth.json").write_text("{}", encoding="utf-8")
    line = _refused(capsys, _flags(lay, **{"--codex-home": str(other)}))
    assert "no root of the roots manifest declares" in line
    assert f"{other}/auth.json as a root" in line and str(lay.codex_home) in line
    # a link to a declared root's target is the declared login
    (other / "auth.json").unlink()
    (other / "auth.json").symlink_to(lay.host_target)
    load_and_compile(str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(other))
