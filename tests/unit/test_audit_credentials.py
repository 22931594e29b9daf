"""No credential byte reaches any audit output, and no audit command opens a protected path.

A random marker is the credential's content; compile (bundle), lock, check --lock, explain
(every spelling, text and json), diff and audit (md and html) all run in-process while an audit
hook records every `open`; the marker must be absent from everything they print or write.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from profilec.cli import main
from tests.audit_helpers import setup

_OPENED: list[str] = []
_RECORDING = [False]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _RECORDING[0] and event == "open" and args and isinstance(args[0], (str, bytes)):
        _OPENED.append(args[0].decode() if isinstance(args[0], bytes) else args[0])


sys.addaudithook(_hook)  # cannot be removed; records only while enabled


def test_marker_never_reaches_any_output_and_no_protected_path_is_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    hop = lay.base / "hostlink" / "auth.json"
    protected = {str(lay.link), str(lay.host_target), str(hop)}
    out = tmp_path / "out"
    out.mkdir()
    lock = lay.codex_home / "profilec.lock"  # where no mode writes (PC050)
    cmds: list[list[str]] = [
        ["compile", *flags, "--format", "bundle", "--out", str(out / "bundle.json")],
        ["lock", *flags, "--out", str(lock)],
        ["check", *flags, "--lock", str(lock)],
        ["diff", str(lock), str(out / "bundle.json")],
        ["diff", str(lock), str(out / "bundle.json"), "--format", "json"],
        ["audit", *flags, "--format", "md", "--out", str(out / "audit.md")],
        ["audit", *flags, "--format", "html", "--out", str(out / "audit.html")],
        ["audit", "--bundle", str(out / "bundle.json"), "--format", "md"],
    ]
    for path in sorted(protected):
        for mode in ("read-only", "agent", "agent-full-access"):
            for fmt in ("text", "json"):
                cmds.append(["explain", path, "--mode", mode, *flags, "--format", fmt])
    printed: list[str] = []
    _OPENED.clear()
    _RECORDING[0] = True
    try:
        for argv in cmds:
            rc = main(argv)
            captured = capsys.readouterr()
            printed += [captured.out, captured.err]
            assert rc == 0, (argv, captured.err)
    finally:
        _RECORDING[0] = False
    opened = {str(Path(p)) for p in _OPENED}
    assert not opened & protected, opened & protected
    assert str(lay.manifest) in opened  # the hook really records the reads that do happen
    written = [p.read_text(encoding="utf-8") for p in [*sorted(out.iterdir()), lock]]
    assert len(written) == 4
    for text in [*printed, *written]:
        assert lay.marker not in text
    # The outputs do talk about the credential, by path and decision only.
    assert any(str(lay.host_target) in t and "deny" in t for t in printed)
