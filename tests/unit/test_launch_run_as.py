"""A root compile of a launch or a CODEX_HOME names the uid Codex runs as, and the launch document
says who runs what."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from profilec.cli import main
from profilec.emit.launch import RUN_AS, run_as_of
from profilec.flags import CompileFlags
from tests.helpers import make_layout


def _flags(tmp_path: Path) -> list[str]:
    lay = make_layout(tmp_path / "l")
    return [
        "--roots", str(lay.manifest), "--workspace-root", str(lay.workspace),
        "--codex-home", str(lay.codex_home),
    ]  # fmt: skip


@pytest.mark.parametrize("fmt", ["launch", "codex-home"])
def test_root_without_run_as_is_refused_with_the_fix(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = [*_flags(tmp_path), "--format", fmt, "--out", str(tmp_path / "out")]
    monkeypatch.setattr("profilec.commands.compile.os.geteuid", lambda: 0)
    assert main(["compile", *flags]) == 2
    err = capsys.readouterr().err
    assert f"--format {fmt} compiled as root needs --run-as UID" in err and "65534" in err
    assert len(err.rstrip("\n").split("\n")) == 1
    assert not (tmp_path / "out").exists()  # nothing written
    # Negative control: the same compile naming the uid (ours: the layout is ours) passes.
    monkeypatch.undo()
    assert main(["compile", *flags, "--run-as", str(os.geteuid())]) == 0, capsys.readouterr().err


def test_an_explicit_run_as_passes_and_the_document_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compile", *_flags(tmp_path), "--run-as", "0", "--format", "launch"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for entry in [*doc["adapters"], *doc["codex"]]:
        if entry["launch_method" if "launch_method" in entry else "launcher"] is None:
            continue
        assert entry["run_as"].startswith("uid 0 (--run-as 0): "), entry["run_as"]
    assert doc["trusted_parent"]["run_as"].startswith("uid 0 (--run-as 0)")


def test_run_as_text_names_the_uid_and_what_the_launcher_does_itself() -> None:
    text = run_as_of(CompileFlags(run_as=65534))
    assert text.startswith("uid 65534 (--run-as 65534): the adapter or Codex")
    assert "requirements.install_argv and watch.argv itself" in text
    assert run_as_of(None) == run_as_of(CompileFlags()) == RUN_AS
