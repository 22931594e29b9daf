"""PC063: a mode's profile that makes whatever cwd the client picks writable is an error.

The client picks the session cwd (app-server thread/start, ACP session/new). A profile that
extends `:workspace`, or grants `:workspace_roots` = write, makes that cwd a writable root: a
session opened at CODEX_HOME, HOME or above a vault wrote there (measured on 0.171.0 and
0.166.0). profilec's own profiles extend `:read-only` and name each workspace root by path: the
negative control checks that config and finds no PC063.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profilec.cli import main
from tests.helpers import Layout, make_layout


def _flags(lay: Layout) -> list[str]:
    return [
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]


def _findings(
    capsys: pytest.CaptureFixture[str], lay: Layout, cfg: Path
) -> tuple[int, list[dict[str, str]]]:
    rc = main(["check", *_flags(lay), "--config", str(cfg), "--format", "json"])
    out = capsys.readouterr().out
    return rc, json.loads(out)["findings"]


@pytest.mark.parametrize(
    ("profile", "edit"),
    [
        ("profilec-agent", ('extends = ":read-only"', 'extends = ":workspace"')),
        (
            "profilec-read-only",
            (
                "[permissions.profilec-read-only.filesystem]\n",
                '[permissions.profilec-read-only.filesystem]\n":workspace_roots" = "write"\n',
            ),
        ),
    ],
)
def test_a_profile_that_writes_any_cwd_is_an_unwaivable_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], profile: str, edit: tuple[str, str]
) -> None:
    lay = make_layout(tmp_path / "l")
    cfg = tmp_path / "config.toml"
    assert main(["compile", *_flags(lay), "--format", "toml", "--out", str(cfg)]) == 0
    capsys.readouterr()
    # Negative control: profilec's own profiles never follow the cwd.
    rc, found = _findings(capsys, lay, cfg)
    assert [f for f in found if f["rule"] == "PC063"] == [], found
    text = cfg.read_text(encoding="utf-8")
    section = text.index(f"[permissions.{profile}")
    before, after = text[:section], text[section:]
    assert edit[0] in after, after[:400]
    cfg.write_text(before + after.replace(edit[0], edit[1], 1), encoding="utf-8")
    rc, found = _findings(capsys, lay, cfg)
    hits = [f for f in found if f["rule"] == "PC063"]
    assert rc == 1 and len(hits) == 1, found
    assert hits[0]["severity"] == "error" and hits[0]["profile"] == profile
    assert "writable" in hits[0]["message"]
