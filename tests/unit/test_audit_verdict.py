"""`profilec audit`: the verdict comes first and sets the exit code; evidence names its bundle.

A canary report judges one bundle: `audit --canary-json` refuses results for another one (exit 2,
one line) and marks results stale when an input file changed after the run finished.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.audit_helpers import bound_canary, run, setup


def _probe(name: str, expected: str, observed: str, ok: bool, **kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": name,
        "kind": "model",
        "command": ["cat", "/x"],
        "exit_code": 0 if observed == "allow" else 1,
        "output": "",
        "expected": expected,
        "predicted": None,
        "observed": observed,
        "ok": ok,
        "failures": [] if ok else ["leak"],
    }
    base.update(kw)
    return base


def _canary(probes: list[dict[str, Any]]) -> dict[str, Any]:
    passed = all(p["ok"] for p in probes)
    return {
        "run_id": "r1",
        "passed": passed,
        "failures": [] if passed else ["leak"],
        "seconds": 1.0,
        "image": "profilec-canary:test",
        "modes": [
            {
                "mode": "agent",
                "profile_id": "profilec-agent",
                "passed": passed,
                "failures": [] if passed else ["leak"],
                "seconds": 0.5,
                "error": None,
                "probes": probes,
            }
        ],
    }


GOOD = [
    _probe("grep-r-codex-auth", "deny", "allow", True),  # ran, exit 0, no secret byte
    _probe("read-target", "deny", "deny", True),
]
BAD = [*GOOD, _probe("tar-codex-auth", "deny", "allow", False)]


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _first_section(html: str) -> str:
    """What precedes the first detail section: the title and the banner."""
    return html[: html.index("<h2>Versions and hashes</h2>")]


def test_a_passing_report_opens_with_pass_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    cj = _write(tmp_path / "c.json", bound_canary(_canary(GOOD), flags))
    rc, html, err = run(capsys, "audit", *flags, "--canary-json", str(cj), "--format", "html")
    assert rc == 0, err
    top = _first_section(html)
    assert '<section id="verdict" class="pass">' in top and "<h2>PASS</h2>" in top
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    rc, md, _ = run(capsys, "audit", *flags, "--canary-json", str(cj))
    assert rc == 0
    assert md.split("\n")[2] == "## PASS"


def test_a_failing_canary_makes_the_report_fail_first_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    cj = _write(tmp_path / "c.json", bound_canary(_canary(BAD), flags))
    rc, html, err = run(capsys, "audit", *flags, "--canary-json", str(cj), "--format", "html")
    assert rc == 1
    assert err == "profilec: audit: FAIL: 1 items at or above error\n"
    top = _first_section(html)
    assert '<section id="verdict" class="fail">' in top and "<h2>FAIL</h2>" in top
    assert '<a href="#canaries">error: canary agent tar-codex-auth: leak</a>' in top
    assert '<h2 id="canaries">' in html
    # The failing probe is the first row of its table, and styled as failing.
    table = html[html.index('id="canary-probes"') :]
    first_row = table[table.index("<tbody>") + 7 :].split("</tr>")[0].strip()
    assert first_row.startswith('<tr class="fail">') and "tar-codex-auth" in first_row
    rc, md, _ = run(capsys, "audit", *flags, "--canary-json", str(cj))
    assert rc == 1 and md.split("\n")[2] == "## FAIL"
    assert "1. error: canary agent tar-codex-auth: leak ([canaries](#canaries))" in md


def test_a_deny_expected_probe_that_exited_0_says_why_it_is_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    cj = _write(tmp_path / "c.json", bound_canary(_canary(GOOD), flags))
    _, md, _ = run(capsys, "audit", *flags, "--canary-json", str(cj))
    row = next(x for x in md.split("\n") if "grep-r-codex-auth" in x)
    assert "| deny | - | allow | ok: the command itself succeeded, but no credential byte" in row


def test_fail_on_sets_the_threshold_like_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    rc, md, _ = run(capsys, "audit", *flags)
    assert rc == 0 and "- note: bundle not tested by canaries" in md
    rc, md, err = run(capsys, "audit", *flags, "--fail-on", "note")
    assert rc == 1 and md.split("\n")[2] == "## FAIL"
    assert "1. note: bundle not tested by canaries" in md
    rc, _, err = run(capsys, "audit", *flags, "--fail-on", "bad")
    assert rc == 2 and err.count("\n") == 1 and "--fail-on" in err


def test_evidence_for_another_bundle_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    _, other = setup(tmp_path / "other")
    cj = _write(tmp_path / "c.json", bound_canary(_canary(GOOD), other))
    rc, out, err = run(capsys, "audit", *flags, "--canary-json", str(cj))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1
    assert "canary results are for bundle sha256:" in err and "(other compiled profiles)" in err


def test_evidence_without_a_bundle_hash_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    cj = _write(tmp_path / "c.json", _canary(GOOD))
    rc, out, err = run(capsys, "audit", *flags, "--canary-json", str(cj))
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "canary results name no bundle" in err


def test_evidence_older_than_an_input_is_marked_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    os.utime(lay.manifest, (1_500_000_000, 1_500_000_000))
    fresh = _write(tmp_path / "f.json", bound_canary(_canary(GOOD), flags, 1_600_000_000))
    rc, md, _ = run(capsys, "audit", *flags, "--canary-json", str(fresh))
    assert rc == 0 and "STALE" not in md
    assert "Results for bundle sha256:" in md and "finished 2020-09-13T12:26:40Z" in md
    os.utime(lay.manifest, (1_700_000_000, 1_700_000_000))  # the manifest changed afterwards
    rc, md, _ = run(capsys, "audit", *flags, "--canary-json", str(fresh))
    assert rc == 0  # stale is a warning
    assert f"STALE: {lay.manifest} changed at 2023-11-14T22:13:20Z" in md.replace("\\_", "_")
    assert "- warning: canary evidence stale:" in md
    rc, md, _ = run(capsys, "audit", *flags, "--canary-json", str(fresh), "--fail-on", "warning")
    assert rc == 1 and md.split("\n")[2] == "## FAIL"


def _e2e_row(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "adapter": "@agentclientprotocol/codex-acp",
        "adapter_version": "2.6.0",
        "codex_version": "0.171.0",
        "launch_method": "codex-home+initial-mode",
        "session_event": "new",
        "result": "held",
        "evidence": "cat: Permission denied",
        "lint": None,
    }
    base.update(kw)
    return base


def test_launcher_control_rows_are_explained_not_red(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    rows = [
        _e2e_row(),
        _e2e_row(launch_method="none", result="lost", evidence="marker read"),
        _e2e_row(launch_method="codex-config", result="lost", lint="PC018"),
    ]
    matrix = _write(tmp_path / "m.json", {"schema_version": 1, "rows": rows})
    rc, html, err = run(capsys, "audit", *flags, "--e2e-matrix", str(matrix), "--format", "html")
    assert rc == 0, err
    table = html[html.index('<table id="launchers">') :]
    none_row = next(r for r in table.split("<tr") if "<td>none</td>" in r)
    assert "expected to lose: no profile (negative control)" in none_row
    assert 'class="fail"' not in none_row and '<td class="ctl">lost</td>' in none_row
    config_row = next(r for r in table.split("<tr") if "<td>codex-config</td>" in r)
    assert "lost: expected, not the reviewed launch method" in config_row


def test_lock_shows_what_changed_after_the_banner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    lock = tmp_path / "profilec.lock"
    rc, _, err = run(capsys, "lock", *flags, "--out", str(lock))
    assert rc == 0, err
    rc, md, err = run(capsys, "audit", *flags, "--lock", str(lock))
    assert rc == 0, err
    assert md.index("## Changed since the lock") < md.index("## Versions and hashes")
    assert "No change." in md
    ws2 = tmp_path / "ws2"
    ws2.mkdir()
    rc, md, err = run(capsys, "audit", *flags, "--workspace-root", str(ws2), "--lock", str(lock))
    assert "## Changed since the lock" in md and "No change." not in md
    # ws2 sits under /tmp, writable already: its carve-outs only narrow.
    assert "| narrowing | agent | " in md and "| widening |" not in md
    assert md.index("## Changed since the lock") < md.index("## Versions and hashes")
    del lay
