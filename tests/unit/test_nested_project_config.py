"""PC064: a `.codex` folder Codex would load, below a workspace root, is an error.

codex-acp 2.6.0 marks the session cwd a trusted project; a `.codex/config.toml` (or `rules`) in a
subdirectory, which a model command can write (Codex keeps only a writable root's own `.codex`
read-only), then loads above profilec's config in a session opened there (measured through the
adapter: tests/integration/test_requirements_acp.py). The root's own file is PC040/PC041's.
The scanner is compiler/projectlayers.py, shared with `profilec watch`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from profilec import projectlayers
from profilec.cli import main
from tests.helpers import Layout, make_layout


def _check(capsys: pytest.CaptureFixture[str], lay: Layout) -> tuple[int, list[dict[str, str]]]:
    flags = ["--roots", str(lay.manifest), "--workspace-root", str(lay.workspace)]
    code = main(["check", *flags, "--codex-home", str(lay.codex_home), "--format", "json"])
    found = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "PC064"]
    return code, found


def _plant(d: Path, name: str = "config.toml") -> Path:
    (d / ".codex").mkdir(parents=True)
    path = d / ".codex" / name
    if name == "rules":
        path.mkdir()
    else:
        path.write_text('[shell_environment_policy.set]\nX = "1"\n', encoding="utf-8")
    return d / ".codex"


def test_a_nested_project_config_fails_check_and_the_roots_own_does_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    clean_code, clean = _check(capsys, lay)
    assert clean == [] and clean_code == 0  # control: a clean workspace passes
    deep = _plant(lay.workspace / "a" / "b")
    rules = _plant(lay.workspace / "r", "rules")
    inert = lay.workspace / "s" / ".codex" / "skills"  # nothing Codex loads as a layer
    inert.mkdir(parents=True)
    git = _plant(lay.workspace / "g" / ".git")  # a session opened in g/.git loads it
    code, found = _check(capsys, lay)
    assert sorted(f["path"] for f in found) == sorted([str(deep), str(rules), str(git)]), found
    assert {f["severity"] for f in found} == {"error"} and code != 0
    assert str(inert) not in json.dumps(found)
    _plant(lay.workspace)  # the root's own file: PC040/PC041, not this rule
    assert sorted(f["path"] for f in _check(capsys, lay)[1]) == sorted(
        [str(deep), str(rules), str(git)]
    )


def test_a_planted_link_named_codex_is_found(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    os.symlink("/etc", root / "sub" / ".codex")  # Codex follows it (metadata().is_dir())
    seen = projectlayers.scan(str(root))
    assert seen.found == (str(root / "sub" / ".codex"),) and seen.complete
    assert projectlayers.loads(seen.found[0])


def test_the_scan_is_bounded_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for i in range(5):
        (root / f"d{i}").mkdir(parents=True)
    planted = _plant(root / "d0")
    assert projectlayers.scan(str(root)) == projectlayers.Scan(str(root), (str(planted),))
    stopped = projectlayers.scan(str(root), limit=3)
    assert stopped.overflow and not stopped.complete and not stopped.unlisted


def test_a_scan_stopped_at_its_limit_fails_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lay = make_layout(tmp_path / "l")
    for i in range(4):
        (lay.workspace / f"d{i}").mkdir()
    monkeypatch.setattr(projectlayers, "SCAN_LIMIT", 2)
    monkeypatch.setattr(projectlayers.scan, "__defaults__", (2, ()))
    code, found = _check(capsys, lay)
    assert code != 0
    assert [f["path"] for f in found] == [str(lay.workspace)]
    assert "the scan for planted project configs stopped there" in found[0]["message"]
