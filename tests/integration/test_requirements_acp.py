"""codex-acp 2.6.0 under profilec's managed requirements: no offered mode loses the credential.

The adapter offers its built-in modes (`read-only`, `workspace-write`, `agent`,
`agent-full-access`, legacy sandbox policies) beside profilec's `permission-profile:*` modes.
Without requirements the built-in `agent`, `agent-full-access` and `workspace-write` lose the
deny (the control: the end-to-end matrix, tests/integration/test_e2e_acp.py
`test_ts_builtin_modes_lose_and_profile_modes_hold`, run in the same suite). Here the same
harness runs the same launch under the compiled requirements, bound over /etc/codex in a private
mount namespace, for the pinned Codex and the 0.166.0 the adapter bundles: profilec's modes
hold, and no built-in mode runs a turn at all.
"""

from __future__ import annotations

import os

import pytest

from profilec.e2e import acp, adapters, roads
from profilec.e2e.acp import run_adapter_method
from profilec.emit.requirements import render_requirements
from profilec.models.compiled import CompiledBundle
from tests.integration.conftest import missing

pytestmark = [pytest.mark.e2e, pytest.mark.codex]

METHOD = adapters.METHOD_CODEX_HOME_INITIAL_MODE + adapters.NON_ROOT_SUFFIX


#: The built-in modes that send `on-request` (and a legacy policy) on every turn.
ON_REQUEST_BUILTINS = ("mode:read-only", "mode:workspace-write", "mode:agent")
#: The exact Codex refusal of their turns (0.171.0 and 0.166.0), the allowed set elided.
REFUSED_ON_REQUEST = "invalid value for `approval_policy`: `OnRequest` is not in the allowed set ["
REFUSED_FULL_ACCESS = (
    "`DangerFullAccess` is not in the allowed set [read-only, workspace-write] "
    "(set by /etc/codex/requirements.toml)"
)


def _zed_or_missing() -> adapters.Adapter:
    adapter = adapters.zed_adapter()
    if adapter.missing:
        missing(adapter.missing)
    if os.geteuid() != 0:
        missing("binding /etc/codex in a private mount namespace needs root")
    return adapter


def _root_or_missing(bundled: bool) -> adapters.Adapter:
    adapter = adapters.ts_adapter(bundled_codex=bundled)
    if adapter.missing:
        missing(adapter.missing)
    if os.geteuid() != 0:
        missing("binding /etc/codex in a private mount namespace needs root")
    return adapter


@pytest.mark.parametrize("bundled", [False, True], ids=["pinned-codex", "bundled-0.166"])
def test_every_offered_mode_keeps_the_vault_denied_under_the_managed_requirements(
    bundled: bool,
) -> None:
    """Every built-in mode is offered and switched to; none runs a turn. The three that send
    `on-request` are refused by `allowed_approval_policies` (profilec's modes run the granular
    spelling of it), the built-in full access by the sandbox mode. profilec's three profile modes
    and new, loaded and resumed sessions run and hold (vault denied, holder dirs read-only)."""
    adapter = _root_or_missing(bundled)
    rows = [o.row for o in run_adapter_method(adapter, METHOD, managed=True)]
    by_event = {r.session_event: (r.result, r.evidence) for r in rows}
    modes = sorted(e for e in by_event if e.startswith("mode:"))
    for builtin in ("agent", "agent-full-access", "workspace-write", "read-only"):
        assert f"mode:{builtin}" in modes, modes
    profile_modes = [m for m in modes if m.startswith("mode:permission-profile:")]
    assert len(profile_modes) == 3, modes
    for event in ("new", "loaded", "resumed", *profile_modes):
        assert by_event[event][0] == "held", (event, by_event[event])
    result, evidence = by_event["mode:agent-full-access"]
    assert result == "error" and REFUSED_FULL_ACCESS in evidence, evidence
    for event in ON_REQUEST_BUILTINS:
        result, evidence = by_event[event]
        assert result == "error" and REFUSED_ON_REQUEST in evidence, (event, evidence)
        assert "(set by /etc/codex/requirements.toml)" in evidence, (event, evidence)


def test_control_without_the_approval_keys_a_builtin_write_mode_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The negative control of `allowed_approval_policies` / `allowed_approvals_reviewers`: the
    same requirements less those two keys. The built-in `workspace-write` mode then runs its
    turn under the legacy policy, which writes the directories holding the credential's link
    (the harness tree sits under /tmp): `lost`, though the managed deny keeps the marker
    itself unread."""
    adapter = _root_or_missing(False)

    def without_approval_keys(bundle: CompiledBundle) -> str:
        text = render_requirements(bundle)
        kept = [x for x in text.split("\n") if not x.startswith("allowed_approval")]
        assert len(kept) == len(text.split("\n")) - 2, text
        return "\n".join(kept)

    monkeypatch.setattr(acp, "render_requirements", without_approval_keys)
    rows = [o.row for o in run_adapter_method(adapter, METHOD, managed=True)]
    by_event = {r.session_event: (r.result, r.evidence) for r in rows}
    result, evidence = by_event["mode:workspace-write"]
    assert result == "lost" and "marker absent" in evidence and "writable" in evidence, evidence
    assert by_event["new"][0] == "held", by_event["new"]


def test_zed_adapter_under_the_managed_requirements() -> None:
    """@zed-industries/codex-acp 0.16.0 offers only its built-in modes (`read-only`, `auto`,
    `full-access`, legacy sandbox policies); its sessions run profilec's default profile (the
    `-c`/CODEX_HOME config). Under the requirements none of its presets can be selected:
    `full-access` for its sandbox mode, `read-only` and `auto` for their `on-request` approval
    policy (exact Codex text below), so a client cannot leave the default profile. New, loaded
    and resumed sessions hold. The control, without requirements, is the same harness run in
    test_e2e_acp.py (the presets selected and run; auto and full-access lose)."""
    adapter = _zed_or_missing()
    rows = [o.row for o in run_adapter_method(adapter, METHOD, managed=True)]
    by_event = {r.session_event: (r.result, r.evidence) for r in rows}
    assert {"mode:read-only", "mode:auto", "mode:full-access"} <= set(by_event), sorted(by_event)
    result, evidence = by_event["mode:full-access"]
    assert result == "not-supported" and REFUSED_FULL_ACCESS in evidence, evidence
    for event in ("mode:read-only", "mode:auto"):
        result, evidence = by_event[event]
        assert result == "not-supported" and REFUSED_ON_REQUEST in evidence, (event, evidence)
    for event in ("new", "loaded", "resumed"):
        assert by_event[event][0] == "held", (event, by_event[event])


@pytest.mark.parametrize("managed", [True, False], ids=["requirements", "control"])
def test_a_client_listed_mcp_server_never_starts_under_the_requirements(managed: bool) -> None:
    """An ACP client's own `session/new` `mcpServers` become a thread config layer of the
    trusted parent, which would start them outside the sandbox. Under the managed `[mcp_servers]`
    allow-list (the vouched servers only) a server the client lists never starts; the control,
    the same launch without requirements, starts it (its marker file appears)."""
    adapter = _root_or_missing(False)
    ran, evidence = roads.client_mcp_server_ran(adapter, METHOD, managed=managed)
    assert "turn ran: True" in evidence, evidence  # the session got as far as a whole turn
    assert ran is (not managed), evidence


@pytest.mark.parametrize("bundled", [False, True], ids=["pinned-codex", "bundled-0.166"])
def test_a_planted_project_config_loads_only_below_a_workspace_root(bundled: bool) -> None:
    """Why the launch document allows only workspace roots as session cwds: codex-acp marks the
    session cwd a trusted project. A `.codex/config.toml` the model planted in `<ws>/sub`
    (Codex keeps only a writable root's own `.codex` read-only) loads above profilec's config
    in a session opened in `<ws>/sub`, even under the managed requirements: its environment
    reaches model commands and its `write` entry on CODEX_HOME widens profilec's profile
    (measured on 0.171.0). The same plant is inert in a session opened at the workspace root.
    A re-grant of a vault is refused by the requirements at session start (docs/requirements.md).
    This is the control of the test below, which closes the road."""
    adapter = _root_or_missing(bundled)
    at_root = roads.planted_project_layer(adapter, METHOD, below_root=False)
    assert not at_root.loaded and not at_root.home_writable, at_root.output
    below = roads.planted_project_layer(adapter, METHOD, below_root=True)
    assert below.loaded and below.home_writable, below.output


@pytest.mark.parametrize("kind", ["ts", "zed"])
@pytest.mark.parametrize("shape", ["compiled", "control-workspace"])
@pytest.mark.parametrize("where", ["codex-home", "vault-parent", "base"])
def test_a_session_cwd_outside_the_workspace_holds(where: str, shape: str, kind: str) -> None:
    """The client picks the session cwd: at CODEX_HOME, at the directory holding the vault, or
    above them all, the default profile mode still denies every spelling of the credential,
    keeps the holder directories read-only and does not write the cwd (profilec's profiles name
    each workspace root; PC063 refuses a profile that follows the cwd), through either ACP
    adapter. The control, through the same adapter and requirements: the default mode in the
    pre-fix `:workspace` shape writes the cwd (the managed deny still keeps the vault). Through
    zed's adapter that control runs no command at all with the cwd at CODEX_HOME (measured),
    so there it only shows the shape is not held."""
    adapter = _root_or_missing(False) if kind == "ts" else _zed_or_missing()
    if shape == "compiled":
        verdict = roads.session_at(adapter, METHOD, where)
        assert verdict.startswith("held:") and verdict.endswith("cwd-write=refused"), verdict
        return
    control = roads.session_at(
        adapter, METHOD, where, reshape=lambda b: roads.as_workspace(b, "agent")
    )
    assert not control.startswith("held:"), control
    if (kind, where) != ("zed", "codex-home"):
        assert control.endswith("cwd-write=created"), control


def test_zeds_adapter_loads_no_project_config_from_the_session_cwd() -> None:
    """@zed-industries/codex-acp 0.16.0 does not mark the session cwd a trusted project: the
    same plant that loads through agentclientprotocol/codex-acp (above) stays inert in a
    session opened in `<ws>/sub`, and at the root (the probe ran: its output reached the
    model)."""
    adapter = _zed_or_missing()
    for below in (False, True):
        seen = roads.planted_project_layer(adapter, METHOD, below_root=below)
        assert "home-rc=" in seen.output, seen.output
        assert not seen.loaded and not seen.home_writable, (below, seen.output)


@pytest.mark.parametrize("plant", ["link", "git"])
@pytest.mark.parametrize("bundled", [False, True], ids=["pinned-codex", "bundled-0.166"])
def test_a_plant_behind_a_link_or_in_a_git_directory_loads_too(bundled: bool, plant: str) -> None:
    """The control of the two plants the scan before issue 40 did not see: `<ws>/lib -> <TMPDIR>/x`
    holding `.codex/config.toml` (the session opened in `<ws>/lib`), and
    `<ws>/g/.git/.codex/config.toml` (the session opened in `<ws>/g/.git`, a `.git` that is no
    repository). Each loads: its environment variable reaches the model's command. The test
    below closes both."""
    adapter = _root_or_missing(bundled)
    seen = roads.planted_project_layer(adapter, METHOD, below_root=True, plant=plant)
    assert seen.loaded, seen.output


#: What watch and check report for each plant: (watch kind, path suffix, check rule).
REPORTED = {
    "sub": ("project-config-planted", "/sub/.codex", "PC064"),
    "link": ("project-config-link-outside", "/lib", "PC065"),
    "git": ("project-config-planted", "/g/.git/.codex", "PC064"),
}


@pytest.mark.parametrize("plant", roads.PLANTS)
@pytest.mark.parametrize("bundled", [False, True], ids=["pinned-codex", "bundled-0.166"])
def test_a_planted_project_config_is_reported_by_watch_and_refused_by_check(
    bundled: bool, plant: str
) -> None:
    """The roads above, closed: a model command in a session at the workspace root plants
    `<ws>/sub/.codex/config.toml`, or a link `<ws>/lib` to a directory it made in its TMPDIR
    holding one, or `<ws>/g/.git/.codex/config.toml` (the controls above show each loading in a
    session opened there). `profilec watch`, started as the launch document starts it, reports
    it (role `project-config`, exit 9: the launcher ends the session), and `profilec check`,
    which the launcher runs before the next session, refuses the tree (PC064; PC065 for the
    link, which leads outside every workspace root), so no session meets it."""
    adapter = _root_or_missing(bundled)
    kind, suffix, rule = REPORTED[plant]
    seen = roads.planted_layer_watched(adapter, METHOD, plant)
    assert seen.planted, seen.output  # the model could write it: Codex does not protect it
    assert seen.watch_exit == 9 and seen.event is not None, seen.output
    assert (seen.event["role"], seen.event["kind"]) == ("project-config", kind)
    assert seen.event["path"].endswith(suffix), seen.event
    assert seen.check_exit != 0 and seen.check_rules == (rule,), seen  # nothing else fails


@pytest.mark.parametrize("bundled", [False, True], ids=["pinned-codex", "bundled-0.166"])
@pytest.mark.parametrize("managed", [True, False], ids=["requirements", "control"])
def test_a_builtin_mode_by_set_config_option(bundled: bool, managed: bool) -> None:
    """codex-acp 2.6.0 switches modes by `session/set_config_option` (`configId: "mode"`) as
    well as `session/set_mode`, so the launch document's allow-list covers both
    (`mode_methods`). A client that switches to the built-in `agent-full-access` by the former:
    the control, without the requirements, reads the marker; under them Codex refuses the
    turn (its sandbox mode), on the pinned Codex and on 0.166.0."""
    adapter = _root_or_missing(bundled)
    verdict = roads.mode_by_config_option(adapter, METHOD, "agent-full-access", managed=managed)
    if managed:
        assert verdict.startswith("refused:") and REFUSED_FULL_ACCESS in verdict, verdict
    else:
        assert verdict.startswith("lost: credential marker"), verdict
