"""`compile --format launch` tells launchers to run `profilec watch` and which uid to use."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from profilec.cli import main
from tests.helpers import make_layout

REPO = Path(__file__).resolve().parents[2]


def test_launch_document_carries_watch_and_the_trusted_uid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    rc = main(["compile", "--roots", str(lay.manifest), "--workspace-root", str(lay.workspace),
               "--codex-home", str(lay.codex_home), "--format", "launch"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, json.loads((REPO / "schemas/launch.schema.json").read_text()))
    watch = doc["watch"]
    assert watch["argv"] == ["profilec", "watch", "--workspace-root", str(lay.workspace),
                             "--codex-home", str(lay.codex_home)]
    assert watch["drift_exit_code"] == 9 and "End the session" in watch["on_drift"]
    assert "SIGTERM" in watch["stop"]
    parent = doc["trusted_parent"]
    assert (parent["uid"], parent["gid"], parent["never_root"]) == (65534, 65534, True)
    assert parent["vaults"] == [str(lay.host_target.parent)]
    assert "setting up uid map" in parent["statement"]
    assert lay.marker not in out

    # The argv is what `watch` takes: with the launcher's --roots it parses (only the
    # deliberately bad interval is refused).
    rc = main([*watch["argv"][1:], "--roots", str(lay.manifest), "--interval", "9"])
    assert rc == 2 and "--interval must be between" in capsys.readouterr().err
