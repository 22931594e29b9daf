"""codex-acp 2.6.0 under profilec's managed requirements: every mode the adapter offers holds.

The adapter offers its built-in modes (`read-only`, `workspace-write`, `agent`,
`agent-full-access`, legacy sandbox policies) beside profilec's `permission-profile:*` modes.
Without requirements the built-in `agent`, `agent-full-access` and `workspace-write` lose the
deny (the control: the end-to-end matrix, tests/integration/test_e2e_acp.py
`test_ts_builtin_modes_lose_and_profile_modes_hold`, run in the same suite). Here the same
harness runs the same launch under the compiled requirements, bound over /etc/codex in a private
mount namespace, for the pinned Codex and the 0.166.0 the adapter bundles: every cell holds.
"""

from __future__ import annotations

import os

import pytest

from profilec.e2e import adapters
from profilec.e2e.acp import run_adapter_method
from tests.integration.conftest import missing

pytestmark = [pytest.mark.e2e, pytest.mark.codex]

METHOD = adapters.METHOD_CODEX_HOME_INITIAL_MODE + adapters.NON_ROOT_SUFFIX


#: The built-in modes that send a legacy `workspaceWrite` policy on every turn. Under the
#: requirements the vault stays denied (measured: "marker absent"), but the turn runs the legacy
#: policy, not a profilec profile, so profilec's `read` entries on the holder directories are
#: not in force (the harness's tree sits under /tmp, which that policy writes): the launcher's
#: mode allow-list (`--format launch`) is what keeps a client out of them.
LEGACY_WRITE_MODES = ("mode:agent", "mode:workspace-write")


@pytest.mark.parametrize("bundled", [False, True], ids=["pinned-codex", "bundled-0.166"])
def test_every_offered_mode_keeps_the_vault_denied_under_the_managed_requirements(
    bundled: bool,
) -> None:
    adapter = adapters.ts_adapter(bundled_codex=bundled)
    if adapter.missing:
        missing(adapter.missing)
    if os.geteuid() != 0:
        missing("binding /etc/codex in a private mount namespace needs root")
    rows = [o.row for o in run_adapter_method(adapter, METHOD, managed=True)]
    by_event = {r.session_event: (r.result, r.evidence) for r in rows}
    modes = sorted(e for e in by_event if e.startswith("mode:"))
    # The built-ins are offered and were switched to, beside profilec's three.
    for builtin in ("agent", "agent-full-access", "workspace-write", "read-only"):
        assert f"mode:{builtin}" in modes, modes
    profile_modes = [m for m in modes if m.startswith("mode:permission-profile:")]
    assert len(profile_modes) == 3, modes
    for event in ("new", "loaded", "resumed", "mode:read-only", *profile_modes):
        if event in by_event:
            assert by_event[event][0] == "held", (event, by_event[event])
    # The built-in full access cannot run a turn at all (both cores, exact Codex text).
    result, evidence = by_event["mode:agent-full-access"]
    assert (
        result == "error"
        and (
            "`DangerFullAccess` is not in the allowed set [read-only, workspace-write] "
            "(set by /etc/codex/requirements.toml)"
        )
        in evidence
    ), evidence
    for event in LEGACY_WRITE_MODES:
        result, evidence = by_event[event]
        assert result == "held" or "marker absent" in evidence, (event, evidence)


def test_zed_adapter_under_the_managed_requirements() -> None:
    """@zed-industries/codex-acp 0.16.0 offers only its built-in modes (`read-only`, `auto`,
    `full-access`, legacy sandbox policies). Under the requirements its `full-access` cannot be
    selected at all (exact Codex text below); `auto` keeps the vault denied (the managed
    `deny_read`) but runs the legacy workspace-write policy, whose writable tree includes the
    directory holding CODEX_HOME: only the launcher's mode allow-list (`--format launch`
    `mode_ids`) keeps a client out of it. The control, without requirements, is the same
    harness run in test_e2e_acp.py (full access selected and run)."""
    adapter = adapters.zed_adapter()
    if adapter.missing:
        missing(adapter.missing)
    if os.geteuid() != 0:
        missing("binding /etc/codex in a private mount namespace needs root")
    rows = [o.row for o in run_adapter_method(adapter, METHOD, managed=True)]
    by_event = {r.session_event: (r.result, r.evidence) for r in rows}
    assert {"mode:read-only", "mode:auto", "mode:full-access"} <= set(by_event), sorted(by_event)
    result, evidence = by_event["mode:full-access"]
    assert (
        result == "not-supported"
        and (
            "`DangerFullAccess` is not in the allowed set [read-only, workspace-write] "
            "(set by /etc/codex/requirements.toml)"
        )
        in evidence
    ), evidence
    for event in ("new", "loaded", "resumed", "mode:read-only"):
        assert by_event[event][0] == "held", (event, by_event[event])
    result, evidence = by_event["mode:auto"]
    assert "marker absent" in evidence, evidence
