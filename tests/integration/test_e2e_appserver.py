"""The real pinned `codex app-server`, driven over stdio by a scripted loopback model.

One run (about 15 s) drives every launch method through new, resumed and legacy-sandboxPolicy
turns plus two negative controls; the tests below pin what Codex 0.171.0 does with each. The
controls (built-in :workspace; the compiled profile with its deny removed) prove the harness
can fail: the same probe, the same verdict code, and the marker does reach the model.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from profilec.check.lints.launcher import launcher_findings, parse_launch_requests
from profilec.compat_matrix import holding_methods, matrix_json
from profilec.e2e.appserver import (
    CONTROL_BUILTIN,
    CONTROL_NO_DENY,
    FORK_SANDBOX_EVENT,
    LAUNCH_METHODS,
    LEGACY_LINT,
    RESTORE_EVENT,
    RESUME_SANDBOX_EVENT,
    SESSION_ONLY_LINT,
    THREAD_SANDBOX_EVENTS,
    AppServerReport,
    EventOutcome,
    run_appserver,
)

pytestmark = [pytest.mark.e2e, pytest.mark.codex]

HELD_READS = ("link, hop, target rc=1 (Permission denied)", "control rc=0 (read)")


@pytest.fixture(scope="module")
def report(codex_bin: Path) -> AppServerReport:
    return run_appserver(codex_bin, timeout=90.0)


def _one(report: AppServerReport, method: str, event: str) -> EventOutcome:
    found = [o for o in report.outcomes if o.launch_method == method and o.session_event == event]
    assert len(found) == 1, (method, event, report.outcomes)
    return found[0]


def test_controls_leak_so_the_harness_can_fail(report: AppServerReport) -> None:
    names = sorted(c.launch_method for c in report.controls)
    assert names == sorted([CONTROL_BUILTIN, CONTROL_NO_DENY])
    for c in report.controls:
        assert c.result == "lost", c
        assert "link, hop, target rc=0 (printed the marker)" in c.evidence
        assert "control rc=0 (read)" in c.evidence
    assert report.controls_failed


def _in_effect(evidence: str) -> dict[str, str]:
    """Per access, whether all, none or some of the compiled entries were in effect."""
    part = evidence.rsplit("compiled entries in effect: ", 1)[-1].split(";")[0]
    out = {}
    for item in part.split(", "):
        access, _, frac = item.partition(" ")
        if access not in ("deny", "read"):
            continue
        shown, _, total = frac.partition("/")
        out[access] = "all" if shown == total else "none" if shown == "0" else "some"
    return out


def _write_status(evidence: str, holder: str) -> str:
    """The status of the `write:<holder>` probe in an evidence line ("rc=1 (...)")."""
    for part in evidence.split("; "):
        names, _, status = part.partition(" rc=")
        if f"write:{holder}" in names.split(", "):
            return "rc=" + status
    raise AssertionError(f"no write:{holder} probe in {evidence!r}")


@pytest.mark.parametrize("method", LAUNCH_METHODS)
@pytest.mark.parametrize("event", ["new", "resumed"])
def test_deny_holds_for_new_and_truly_resumed_threads(
    report: AppServerReport, method: str, event: str
) -> None:
    o = _one(report, method, event)
    assert o.result == "held", o
    for part in HELD_READS:
        assert part in o.evidence
    # the holder directories stay read-only; the vault (host) is denied outright
    assert _write_status(o.evidence, "codex-home").startswith("rc=1 (Read-only")
    assert _write_status(o.evidence, "base").startswith("rc=1 (Read-only")
    assert _write_status(o.evidence, "host").startswith("rc=1")
    assert o.active_profile == "profilec-agent"
    assert _in_effect(o.evidence) == {"deny": "all", "read": "all"}, o.evidence
    assert o.approvals == ()


@pytest.mark.parametrize("method", LAUNCH_METHODS)
def test_legacy_sandbox_policy_replaces_the_profile(report: AppServerReport, method: str) -> None:
    ro = _one(report, method, "legacy-sandboxPolicy:readOnly")
    ww = _one(report, method, "legacy-sandboxPolicy:workspaceWrite")
    full = _one(report, method, "legacy-sandboxPolicy:dangerFullAccess")
    for o in (ro, ww, full):
        assert o.active_profile in (None, "None"), o
        assert "settings/updated: activePermissionProfile=None" in o.evidence
        assert o.row().lint == LEGACY_LINT
    # readOnly / workspaceWrite keep the deny entries but drop the rest of the profile...
    for o in (ro, ww):
        assert _in_effect(o.evidence) == {"deny": "all", "read": "none"}, o.evidence
        for part in HELD_READS:
            assert part in o.evidence
    assert ro.result == "held"
    # ...so under workspaceWrite the holder directories in /tmp become writable (link re-pointable)
    assert ww.result == "lost"
    assert _write_status(ww.evidence, "codex-home") == "rc=0 (writable)"
    assert _write_status(ww.evidence, "base") == "rc=0 (writable)"
    # dangerFullAccess drops the deny too: the marker reaches the model.
    assert full.result == "lost"
    assert "link, hop, target rc=0 (printed the marker)" in full.evidence


def test_thread_config_resumed_without_config_loses_the_profile(report: AppServerReport) -> None:
    o = _one(report, "thread config", "resumed:no-config")
    assert o.result == "lost"
    assert o.active_profile != "profilec-agent"
    assert o.row().lint == SESSION_ONLY_LINT


def test_matrix_rows_are_marker_free_and_render(report: AppServerReport) -> None:
    text = matrix_json(report.matrix())
    doc = json.loads(text)
    assert len(doc["rows"]) == len(report.outcomes) == 3 * 11 + 1
    assert "PROFILEC-E2E-SECRET" not in text
    for o in report.outcomes:
        assert "PROFILEC-E2E-SECRET" not in o.tool_output + o.evidence


def test_no_app_server_or_sandbox_process_outlives_the_run(report: AppServerReport) -> None:
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, timeout=10)
    leftovers = [line for line in ps.stdout.split("\n") if "profilec-e2e-as-" in line]
    assert leftovers == []


def test_check_flags_exactly_the_requests_that_replace_the_profile(
    report: AppServerReport,
) -> None:
    """PC023 run on what the driver really sent: it fires on the legacy turns and only there."""
    for o in report.outcomes:
        assert o.sent, o
        found = launcher_findings(parse_launch_requests("\n".join(o.sent), where="sent"))
        if o.session_event.startswith("legacy-"):
            assert [f.rule for f in found] == [LEGACY_LINT], o.session_event
        else:
            assert found == [], (o.launch_method, o.session_event)


def test_methods_that_hold_without_launcher_side_legacy_requests(report: AppServerReport) -> None:
    held = holding_methods(report.matrix(), skip_events=("legacy-",))
    assert held == {"codex app-server": ["app-server -c", "codex-home"]}
    assert holding_methods(report.matrix()) == {"codex app-server": []}


@pytest.mark.parametrize("method", LAUNCH_METHODS)
def test_turn_permissions_restore_the_profile_after_a_legacy_policy(
    report: AppServerReport, method: str
) -> None:
    """PC023's fix, verified: `permissions: <id>` on turn/start brings the profile back."""
    o = _one(report, method, RESTORE_EVENT)
    assert o.result == "held", o
    assert o.active_profile == "profilec-agent"
    for part in HELD_READS:
        assert part in o.evidence
    assert _in_effect(o.evidence) == {"deny": "all", "read": "all"}, o.evidence


@pytest.mark.parametrize("method", LAUNCH_METHODS)
@pytest.mark.parametrize(
    "event", [*THREAD_SANDBOX_EVENTS, FORK_SANDBOX_EVENT, RESUME_SANDBOX_EVENT]
)
def test_legacy_sandbox_on_thread_start_fork_resume_drops_the_deny(
    report: AppServerReport, method: str, event: str
) -> None:
    """Unlike turn/start sandboxPolicy, a thread `sandbox` of any mode loses the deny."""
    o = _one(report, method, event)
    assert o.result == "lost", o
    assert "link, hop, target rc=0 (printed the marker)" in o.evidence
    assert o.active_profile in (None, "None")
    assert o.row().lint == LEGACY_LINT
