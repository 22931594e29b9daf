"""PC064: a `.codex/config.toml` below a workspace root is a warning.

codex-acp 2.6.0 marks the session cwd a trusted project; a `.codex/config.toml` in a
subdirectory (which a model command can write: Codex keeps only a writable root's own `.codex`
read-only) then loads above profilec's config in a session opened there (measured through the
adapter: tests/integration/test_requirements_acp.py). The root's own file is PC040/PC041's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profilec.check.lints import agent_layers
from profilec.cli import main
from tests.helpers import Layout, make_layout


def _findings(capsys: pytest.CaptureFixture[str], lay: Layout) -> list[dict[str, str]]:
    flags = ["--roots", str(lay.manifest), "--workspace-root", str(lay.workspace)]
    main(["check", *flags, "--codex-home", str(lay.codex_home), "--format", "json"])
    return [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "PC064"]


def _plant(d: Path) -> Path:
    (d / ".codex").mkdir(parents=True)
    path = d / ".codex" / "config.toml"
    path.write_text('[shell_environment_policy.set]\nX = "1"\n', encoding="utf-8")
    return path


def test_a_nested_project_config_is_reported_and_the_roots_own_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    assert _findings(capsys, lay) == []  # control: a clean workspace
    _plant(lay.workspace)  # the root's own file: PC040/PC041, not this rule
    assert _findings(capsys, lay) == []
    deep = _plant(lay.workspace / "a" / "b")
    git = _plant(lay.workspace / ".git" / "x")  # not a project directory: never entered
    found = _findings(capsys, lay)
    assert [f["path"] for f in found] == [str(deep)], found
    assert found[0]["severity"] == "warning"
    assert str(git) not in json.dumps(found)


def test_the_scan_is_bounded_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "ws"
    for i in range(5):
        (root / f"d{i}").mkdir(parents=True)
    planted = _plant(root / "d0")
    assert agent_layers._nested_config_files(str(root)) == ([str(planted)], True)
    monkeypatch.setattr(agent_layers, "NESTED_SCAN_LIMIT", 3)
    assert agent_layers._nested_config_files(str(root)) == ([str(planted)], False)
