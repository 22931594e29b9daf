"""Per mode, does the approval behaviour profiles/modes.toml gives it hold? (real Codex, adapters)

The scripted model asks for one unsandboxed command; a request must reach the client exactly
when the mode's policy asks (compiler/e2e/approvals.py). The app-server run is its own negative
control: with profilec's config alone, agent-full-access (never) still gets a request, so the
probe can fail; with the launcher sending the mode's approvalPolicy per turn it holds. The TS
adapter rows must agree with profiles/adapters.toml (approval_modes_held / _lost), which
`compile --format launch` reports per adapter build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from profilec.e2e.adapters import ts_adapter
from profilec.e2e.approvals import appserver_approval_rows, ts_approval_rows
from profilec.emit.catalog import load_catalog
from profilec.models.compat import MatrixRow
from tests.integration.conftest import missing

pytestmark = [pytest.mark.e2e, pytest.mark.codex]


@pytest.fixture(scope="module")
def appserver(codex_bin: Path) -> dict[str, MatrixRow]:
    return {r.session_event: r for r in appserver_approval_rows(codex_bin)}


@pytest.mark.parametrize("mode", ["read-only", "agent", "agent-full-access"])
def test_launcher_sent_approval_policy_holds_per_mode(
    appserver: dict[str, MatrixRow], mode: str
) -> None:
    assert appserver[f"approval:{mode}:turn"].result == "held", appserver


def test_config_alone_gives_every_mode_the_default_modes_policy(
    appserver: dict[str, MatrixRow],
) -> None:
    assert appserver["approval:read-only:config"].result == "held"
    assert appserver["approval:agent:config"].result == "held"
    row = appserver["approval:agent-full-access:config"]
    assert row.result == "lost" and "1 approval request" in row.evidence, row


@pytest.mark.parametrize("bundled", [False, True], ids=["codex-path", "bundled"])
def test_ts_adapter_approvals_match_the_catalog(bundled: bool) -> None:
    ad = ts_adapter(bundled_codex=bundled)
    if ad.missing is not None:
        missing(f"{ad.package} {ad.version}: {ad.missing} (run .ci/tools.d/acp.sh)")
    rows = ts_approval_rows(bundled_codex=bundled)
    seen = {r.session_event.removeprefix("approval:"): r.result for r in rows}
    assert set(seen) == {"read-only", "agent", "agent-full-access"}, rows
    entry = next(
        e
        for e in load_catalog().adapters
        if (e.package, e.version, e.codex_version) == (ad.package, ad.version, ad.codex_version)
    )
    assert sorted(m for m, r in seen.items() if r == "held") == sorted(entry.approval_modes_held)
    assert sorted(m for m, r in seen.items() if r == "lost") == sorted(entry.approval_modes_lost)
