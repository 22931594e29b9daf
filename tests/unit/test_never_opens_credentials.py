"""The compiler never opens a root, hop or target, and no credential byte reaches any output."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from profilec.cli import main
from tests.helpers import make_layout

_OPENED: list[str] = []
_RECORDING = [False]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _RECORDING[0] and event == "open" and args and isinstance(args[0], (str, bytes)):
        path = args[0].decode() if isinstance(args[0], bytes) else args[0]
        _OPENED.append(path)


sys.addaudithook(_hook)  # audit hooks cannot be removed; it records only while enabled


@pytest.mark.parametrize("fmt", ["toml", "overrides", "acp-json", "session-config"])
def test_compile_never_opens_root_hop_or_target(
    tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    protected = {
        str(lay.link),
        str(lay.host_target),
        str(tmp_path / "l" / "hostlink" / "auth.json"),
    }
    _OPENED.clear()
    _RECORDING[0] = True
    try:
        rc = main(
            [
                "compile",
                "--roots",
                str(lay.manifest),
                "--workspace-root",
                str(lay.workspace),
                "--codex-home",
                str(lay.codex_home),
                "--format",
                fmt,
            ]
        )
    finally:
        _RECORDING[0] = False
    out = capsys.readouterr()
    assert rc == 0, out.err
    opened = {str(Path(p)) for p in _OPENED}
    assert not opened & protected, opened & protected
    assert str(lay.manifest) in opened  # the hook really records opens
    assert lay.marker not in out.out and lay.marker not in out.err


def test_the_audit_hook_would_catch_an_open(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    _OPENED.clear()
    _RECORDING[0] = True
    try:
        with open(lay.link, "rb") as fh:  # what the compiler must never do
            fh.read()
    finally:
        _RECORDING[0] = False
    assert str(lay.link) in _OPENED
