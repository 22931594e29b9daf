"""`audit --canary` runs the real canaries and reports their probes; no marker leaks into it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from profilec.audit.report import NOT_TESTED
from tests.audit_helpers import run, setup

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.codex]


def test_audit_with_live_canaries_lists_every_mode_s_probes(
    tmp_path: Path,
    docker_client: DockerClient,
    codex_bin: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PROFILEC_CODEX_BIN", str(codex_bin))
    lay, flags = setup(tmp_path / "l")
    rc, md, err = run(capsys, "audit", *flags, "--canary", "--format", "md", "--now", "0")
    failing = [x for x in md.split("\n") if x.startswith("| ") and ("FAIL" in x or "error" in x)]
    assert rc == 0, err + "\n" + "\n".join(failing or [md[-3000:]])
    assert NOT_TESTED not in md
    assert ": pass (image profilec-canary:" in md
    rows = [x for x in md.split("\n") if x.startswith("| ") and " | model | " in x]
    assert {r.split(" | ")[0][2:] for r in rows} == {"read-only", "agent", "agent-full-access"}
    assert all(r.rsplit(" | ", 1)[1].startswith("ok") for r in rows)  # "ok" or "ok: why"
    assert lay.marker not in md and "PROFILEC-CANARY-" not in md


def test_canary_json_from_the_canary_command_feeds_the_report(
    tmp_path: Path,
    docker_client: DockerClient,
    codex_bin: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import json

    from tests.audit_helpers import validate

    monkeypatch.setenv("PROFILEC_CODEX_BIN", str(codex_bin))
    lay, flags = setup(tmp_path / "l")
    rc, out, err = run(capsys, "canary", *flags, "--format", "json")
    assert rc == 0, err + _failing(out)
    validate("canary-report.schema.json", json.loads(out))
    cj = tmp_path / "canary.json"
    cj.write_text(out, encoding="utf-8")
    rc, html, err = run(capsys, "audit", *flags, "--canary-json", str(cj), "--format", "html")
    assert rc == 0, err
    assert 'id="canary-probes"' in html and NOT_TESTED not in html
    assert "PROFILEC-CANARY-" not in html and lay.marker not in html
    # Bound to the bundle it probed: the same hash audit shows, the tools, and refused for
    # another bundle (a second layout compiles other paths).
    ev = json.loads(out)["evidence"]
    assert f"Results for bundle {ev['bundle_content_hash']}, finished {ev['finished']}" in html
    assert ev["tools"] == {"profilec": "0.1.0", "codex": "0.171.0"}
    _, other = setup(tmp_path / "other")
    rc, html, err = run(capsys, "audit", *other, "--canary-json", str(cj))
    assert rc == 2 and html == "" and "canary results are for bundle " in err


def _failing(out: str) -> str:
    """What a failed canary run reports: its failures and each failing probe's name, failures,
    exit code and output tail (the whole report when it is no JSON)."""
    import json

    try:
        doc = json.loads(out)
    except ValueError:
        return out[-4000:]
    probes = [
        {k: (p.get(k) or "")[-600:] if k == "output" else p.get(k) for k in PROBE_KEYS}
        for mode in doc.get("modes", [])
        for p in mode.get("probes", [])
        if not p.get("ok")
    ]
    errors = {m.get("mode"): m.get("error") for m in doc.get("modes", []) if m.get("error")}
    summary = {"failures": doc.get("failures"), "mode_errors": errors, "probes": probes}
    return json.dumps(summary, indent=1)


PROBE_KEYS = ("name", "kind", "failures", "exit_code", "expected", "observed", "output")
