"""Bad input: one clear line on stderr, a distinct exit code, and nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from profilec.cli import main
from tests.helpers import make_layout, write_manifest


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(args)
    err = capsys.readouterr().err
    return rc, err


def _assert_one_line(err: str) -> None:
    lines = [line for line in err.split("\n") if line]
    assert len(lines) == 1, err
    assert lines[0].startswith("profilec: ")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        ("malformed", 2),
        ("schema", 2),
        ("untrusted", 3),
        ("relative", 2),
        ("traversal", 2),
        ("duplicate", 2),
        ("loop", 4),
        ("dangling", 4),
        ("missing-file", 2),
    ],
)
def test_bad_input_writes_nothing(
    tmp_path: Path, setup: str, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    m = tmp_path / "roots.toml"
    if setup == "malformed":
        m.write_text("schema_version = \n")
        os.chmod(m, 0o600)
    elif setup == "schema":
        write_manifest(m, [{"id": "a", "path": "/x", "bogus": True}])
    elif setup == "untrusted":
        write_manifest(m, [{"id": "a", "path": "/x"}], mode=0o646)
    elif setup == "relative":
        write_manifest(m, [{"id": "a", "path": "x/auth.json"}])
    elif setup == "traversal":
        write_manifest(m, [{"id": "a", "path": "/x/../etc/shadow"}])
    elif setup == "duplicate":
        write_manifest(m, [{"id": "a", "path": "/etc/hostname"}, {"id": "a", "path": "/etc/hosts"}])
    elif setup == "loop":
        (tmp_path / "a").symlink_to(tmp_path / "b")
        (tmp_path / "b").symlink_to(tmp_path / "a")
        write_manifest(m, [{"id": "a", "path": str(tmp_path / "a")}])
    elif setup == "dangling":
        (tmp_path / "a").symlink_to(tmp_path / "nothing")
        write_manifest(m, [{"id": "a", "path": str(tmp_path / "a")}])
    out = tmp_path / "out.toml"
    rc, err = _run(["compile", "--roots", str(m), "--out", str(out)], capsys)
    assert rc == code, err
    _assert_one_line(err)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".profilec-")] == []


def test_unsafe_root_exit_code_and_no_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "auth.json").write_text("x")
    m = write_manifest(tmp_path / "roots.toml", [{"id": "a", "path": str(ws / "auth.json")}])
    out = tmp_path / "out.toml"
    (tmp_path / "ch").mkdir()
    rc, err = _run(
        [
            "compile",
            "--roots",
            str(m),
            "--workspace-root",
            str(ws),
            "--codex-home",
            str(tmp_path / "ch"),
            "--out",
            str(out),
        ],
        capsys,
    )
    assert rc == 5, err
    _assert_one_line(err)
    assert not out.exists()


def test_relative_workspace_root_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    rc, err = _run(["compile", "--roots", str(lay.manifest), "--workspace-root", "ws"], capsys)
    assert rc == 2
    _assert_one_line(err)


def test_unknown_format_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    rc, err = _run(["compile", "--roots", str(lay.manifest), "--format", "yaml"], capsys)
    assert rc == 2
    _assert_one_line(err)


def test_session_config_cannot_set_permissions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    sc = tmp_path / "session.json"
    sc.write_text(
        '{"model": "m", "default_permissions": ":danger-full-access",'
        ' "permissions": {"x": {"filesystem": {"/": "write"}}},'
        ' "sandbox_mode": "danger-full-access"}'
    )
    out = tmp_path / "s.json"
    rc = main(
        [
            "compile",
            "--roots",
            str(lay.manifest),
            "--session-config",
            str(sc),
            "--format",
            "session-config",
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 0
    assert out.read_text() == '{\n  "model": "m"\n}\n'
    assert "default_permissions" in err and "sandbox_mode" in err


def test_no_codex_home_is_a_usage_error_naming_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --codex-home and no codex root to infer it from, the writer's lock would stay
    open: compile refuses (exit 2) and writes nothing."""
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "k.json").write_text("x")
    key = tmp_path / "v" / "k.json"
    m = write_manifest(tmp_path / "roots.toml", [{"id": "a", "path": str(key)}])
    out = tmp_path / "out.toml"
    rc, err = _run(["compile", "--roots", str(m), "--out", str(out)], capsys)
    assert rc == 2, err
    _assert_one_line(err)
    assert "--codex-home" in err and "auth.lock" in err
    assert not out.exists()
