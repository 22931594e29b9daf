"""`--format codex-home` written by root for `--run-as UID`: the CODEX_HOME, config.toml and
auth.lock belong to that uid (0600 files, 0700 directory); a directory anyone else owns is
refused with one line naming the fix."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from profilec.cli import main
from tests.helpers import make_layout

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="giving files away needs root")

RUN_AS = 65534


def _compile(tmp_path: Path, out: Path, *extra: str) -> list[str]:
    lay = make_layout(tmp_path / "l")
    os.chown(lay.workspace, RUN_AS, RUN_AS)  # Codex creates its mount targets there as RUN_AS
    return [
        "compile",
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
        "--format",
        "codex-home",
        "--out",
        str(out),
        *extra,
    ]


def _owned(path: Path, uid: int, mode: int) -> None:
    st = os.lstat(path)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (uid, mode), (path, st.st_uid, oct(st.st_mode))


@pytest.mark.parametrize("existing", [None, RUN_AS, 0])
def test_root_writes_a_codex_home_the_run_as_uid_owns(
    tmp_path: Path, existing: int | None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "home"
    if existing is not None:
        out.mkdir(mode=0o755)
        os.chown(out, existing, existing)
    assert main(_compile(tmp_path, out, "--run-as", str(RUN_AS))) == 0, capsys.readouterr().err
    _owned(out, RUN_AS, 0o700)
    _owned(out / "config.toml", RUN_AS, 0o600)
    _owned(out / "auth.lock", RUN_AS, 0o600)


def test_a_root_owned_writer_lock_is_handed_to_the_run_as_uid(tmp_path: Path) -> None:
    out = tmp_path / "home"
    out.mkdir()
    (out / "auth.lock").touch(mode=0o600)
    assert main(_compile(tmp_path, out, "--run-as", str(RUN_AS))) == 0
    _owned(out / "auth.lock", RUN_AS, 0o600)


def test_a_codex_home_owned_by_anyone_else_is_refused_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "home"
    out.mkdir()
    os.chown(out, 1234, 1234)
    assert main(_compile(tmp_path, out, "--run-as", str(RUN_AS))) == 6
    lines = [x for x in capsys.readouterr().err.splitlines() if x]
    assert len(lines) == 1 and "owned by uid 1234" in lines[0], lines
    assert f"chown {RUN_AS}:" in lines[0]
    assert not (out / "config.toml").exists()
    # The negative control: the run-as uid's own directory is accepted.
    os.chown(out, RUN_AS, RUN_AS)
    assert main(_compile(tmp_path / "again", out, "--run-as", str(RUN_AS))) == 0


def test_without_run_as_a_foreign_codex_home_names_the_run_as_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "home"
    out.mkdir()
    os.chown(out, RUN_AS, RUN_AS)
    # Root without --run-as is refused before anything is written, naming the flag.
    assert main(_compile(tmp_path, out)) == 2
    err = capsys.readouterr().err
    assert "needs --run-as UID" in err and f"--run-as {RUN_AS}" in err, err
    assert len(err.strip().split("\n")) == 1, err
    _owned(out, RUN_AS, 0o755)
    # --run-as 0 (root's own home for Codex) and a directory owned by another uid: refused
    # with the chown or the --run-as that fixes it (exit 6).
    assert main(_compile(tmp_path / "again", out, "--run-as", "0")) == 6
    err = capsys.readouterr().err
    assert f"--run-as {RUN_AS}" in err and len(err.strip().split("\n")) == 1, err
    _owned(out, RUN_AS, 0o755)


def test_the_api_writes_for_run_as_and_refuses_a_bad_uid(tmp_path: Path) -> None:
    from profilec import api
    from profilec.errors import UsageError

    lay = make_layout(tmp_path / "l")
    os.chown(lay.workspace, RUN_AS, RUN_AS)
    bundle = api.load_and_compile(
        str(lay.manifest),
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
        run_as=RUN_AS,
    )
    out = tmp_path / "home"
    assert api.write_codex_home(bundle, str(out), run_as=RUN_AS) == str(out / "config.toml")
    _owned(out, RUN_AS, 0o700)
    _owned(out / "config.toml", RUN_AS, 0o600)
    _owned(out / "auth.lock", RUN_AS, 0o600)
    for bad in (-1, True, "65534"):
        with pytest.raises(UsageError):
            api.write_codex_home(bundle, str(out), run_as=bad)  # type: ignore[arg-type]
