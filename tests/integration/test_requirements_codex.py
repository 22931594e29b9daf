"""Against the real Codex, both supported cores (the pinned 0.171.0 and the 0.166.0 that
codex-acp 2.6.0 bundles): profilec's compiled managed requirements hold whatever the session
asks for.

Each cell is one `codex exec` session (a scripted model on 127.0.0.1 runs one probe command),
with the compiled document bound over /etc/codex in a private mount namespace (`unshare -m`,
nothing outside the session's process tree sees it), the session started the ways a client can
start it: a legacy `sandbox_mode` (what codex-acp's built-in `read-only`, `workspace-write`,
`agent` and `agent-full-access` modes send), the built-in `:workspace` profile, or profilec's
own profile; and with a cwd inside the workspace, at CODEX_HOME, in the vault, at HOME.
The probe reads the credential through the link and at its target, tries the other identity's
vault and writer lock, and writes into the cwd.

Control: the same sessions without the requirements file leak the marker (legacy
`danger-full-access`) and write CODEX_HOME (the cwd of a legacy `workspace-write` session).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from profilec.e2e.layout import requirements_prefix
from profilec.emit.codex_home import write_codex_home
from profilec.emit.requirements import render_requirements
from profilec.emit.requirements_verify import requirements_problems
from profilec.models.compiled import CompiledBundle
from profilec.scripted_model import ScriptedModelServer
from tests.integration.conftest import missing
from tests.integration.test_identities_codex import compile_a1, two_identities

pytestmark = pytest.mark.codex

#: How a client can start the session: `-c` overrides on top of profilec's CODEX_HOME config.
REQUESTS: dict[str, list[str]] = {
    "legacy-read-only": ['sandbox_mode="read-only"'],
    "legacy-workspace-write": ['sandbox_mode="workspace-write"'],
    "legacy-danger-full-access": ['sandbox_mode="danger-full-access"'],
    "builtin-workspace": ['default_permissions=":workspace"'],
    "profilec-agent-full-access": ['default_permissions="profilec-agent-full-access"'],
}
CWDS = ("ws", "codex-home", "vault", "home")


@pytest.fixture
def core(core: Path) -> Path:
    """Each supported Codex core (the conftest fixture), when this process is root."""
    if os.geteuid() != 0:
        missing("binding /etc/codex in a private mount namespace needs root")
    return core


def _layout(base: Path) -> tuple[dict[str, Any], CompiledBundle, Path]:
    lay = two_identities(base)
    bundle = compile_a1(lay)
    write_codex_home(bundle, str(lay["a1"] / "codex-home"))
    etc = base / "etc-codex"
    etc.mkdir()
    (etc / "requirements.toml").write_text(render_requirements(bundle))
    return lay, bundle, etc


def _bound(etc: Path) -> tuple[str, ...]:
    """The argv prefix that binds `etc` (holding requirements.toml) over /etc/codex in a private
    mount namespace whose /etc is an overlay on a tmpfs: the host's /etc is never written."""
    return requirements_prefix((etc / "requirements.toml").read_text(), str(etc.parent))


def _session(
    codex: Path, lay: dict[str, Any], etc: Path | None, cwd: Path, request: list[str]
) -> str:
    a1, a2 = lay["a1"], lay["a2"]
    vault = lay["manifest"].parent / "vaults"
    probe = (
        f"cat '{a1}/codex-home/auth.json'; cat '{vault}/a1/auth.json'; cat '{vault}/a2/auth.json'; "
        f"echo x >> '{a2}/codex-home/auth.lock' && echo LOCK-OPENED; "
        "touch ./profilec-cwd-probe && echo CWD-WROTE"
    )
    with ScriptedModelServer(probes=[probe]) as srv:
        argv = [str(codex), "exec", "--skip-git-repo-check"]
        for o in [*srv.provider_overrides(), 'approval_policy="never"', *request]:
            argv += ["-c", o]
        argv.append("run the probe")
        if etc is not None:
            argv = [*_bound(etc), *argv]
        env = {
            "PATH": "/usr/bin:/bin",
            "CODEX_HOME": str(a1 / "codex-home"),
            "HOME": str(a1 / "home"),
            "OPENAI_API_KEY": "sk-profilec-test",
        }
        proc = subprocess.run(
            argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=180, check=False
        )
        ran = bool(srv.tool_outputs())
        outputs = "\n".join(srv.tool_outputs().values())
    wrote = (cwd / "profilec-cwd-probe").exists()
    (cwd / "profilec-cwd-probe").unlink(missing_ok=True)
    # The verdict reads what the model saw (the tool outputs); stderr echoes the command.
    head = f"rc={proc.returncode} ran={ran} cwd-file={wrote}"
    return f"{head}\n{outputs}\n--- stderr\n{proc.stderr[-1500:]}"


def _key(lay: dict[str, Any], ident: str) -> str:
    """The marker in an identity's vault (`{"OPENAI_API_KEY": "<marker>"}`)."""
    text = (lay["manifest"].parent / "vaults" / ident / "auth.json").read_text()
    return str(text.split('"')[3])


def _cwd(lay: dict[str, Any], name: str) -> Path:
    a1: Path = lay["a1"]
    vaults: Path = lay["manifest"].parent / "vaults"
    cwds: dict[str, Path] = {
        "ws": a1 / "ws",
        "codex-home": a1 / "codex-home",
        "vault": vaults / "a1",
        "home": a1 / "home",
    }
    return cwds[name]


@pytest.mark.parametrize("request_name", sorted(REQUESTS))
def test_requirements_hold_for_every_request_and_cwd(
    core: Path, var_tmp_base: Path, request_name: str
) -> None:
    lay, _, etc = _layout(var_tmp_base)
    keys = [_key(lay, i) for i in ("a1", "a2")]
    for cwd_name in CWDS:
        out = _session(core, lay, etc, _cwd(lay, cwd_name), REQUESTS[request_name])
        cell = (request_name, cwd_name, out)
        if cwd_name == "vault":
            # A session started inside a denied vault does not start at all (measured, both
            # cores): "failed to load AGENTS.md instructions ... Permission denied".
            assert "ran=False" in out and "Permission denied" in out, cell
            continue
        assert "rc=0 ran=True" in out, cell  # the session started and ran the probe
        seen = out.split("--- stderr", 1)[0]
        for key in keys:
            assert key not in out, cell
        assert "LOCK-OPENED" not in seen, cell
        if cwd_name != "ws":
            assert "cwd-file=False" in out and "CWD-WROTE" not in seen, cell


def test_control_without_requirements_leaks(core: Path, var_tmp_base: Path) -> None:
    lay, _, _ = _layout(var_tmp_base)
    key = _key(lay, "a1")
    out = _session(core, lay, None, _cwd(lay, "ws"), REQUESTS["legacy-danger-full-access"])
    assert key in out, out
    out = _session(core, lay, None, _cwd(lay, "codex-home"), REQUESTS["legacy-workspace-write"])
    assert "cwd-file=True" in out, out


#: Codex's refusal of a requirements file that defines a profile named like a config one
#: (0.171.0 and 0.166.0, identical).
CONFLICTS = (
    "requirements.toml permissions profile `profilec-agent` conflicts with a config-defined "
    "profile of the same name"
)


@pytest.mark.parametrize("extra", [True, False], ids=["extra-table", "control"])
def test_an_extra_permissions_table_stops_every_session(
    core: Path, var_tmp_base: Path, extra: bool
) -> None:
    """Why `requirements verify` and `check --requirements` refuse a `[permissions.<name>]`
    table other than `filesystem`: Codex reads it as a managed-layer profile, and one named
    like a config profile (a hand merge of another daemon's file, say) stops every session
    before it starts. Control: profilec's document alone starts and runs the probe."""
    lay, bundle, etc = _layout(var_tmp_base)
    req = etc / "requirements.toml"
    if extra:
        req.write_text(
            req.read_text() + '\n[permissions.profilec-agent.filesystem]\n"/" = "read"\n'
        )
        assert requirements_problems(req.read_text(), bundle)[0].startswith(
            "[permissions.profilec-agent] defines"
        )
    out = _session(core, lay, etc, _cwd(lay, "ws"), [])
    if extra:
        assert "ran=False" in out and CONFLICTS in out, out
        assert "rc=0" not in out, out
    else:
        assert "rc=0 ran=True" in out and CONFLICTS not in out, out


def _hook_ran(core: Path, lay: dict[str, Any], etc: Path | None, mark: Path) -> tuple[bool, str]:
    """One `codex exec` session whose CODEX_HOME holds a SessionStart hook writing `mark`, with
    every other gate open: hooks turned back on by `-c` (as a config layer the model got
    written would) and `--dangerously-bypass-hook-trust`."""
    home = lay["a1"] / "codex-home"
    hook = {"type": "command", "command": f"echo ran >> '{mark}'"}
    (home / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}}))
    with ScriptedModelServer(probes=["true"]) as srv:
        argv = [str(core), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"]
        for o in [*srv.provider_overrides(), 'approval_policy="never"', "features.hooks=true"]:
            argv += ["-c", o]
        argv.append("run the probe")
        if etc is not None:
            argv = [*_bound(etc), *argv]
        env = {
            "PATH": "/usr/bin:/bin",
            "CODEX_HOME": str(home),
            "HOME": str(lay["a1"] / "home"),
            "OPENAI_API_KEY": "sk-profilec-test",
        }
        proc = subprocess.run(
            argv, env=env, cwd=lay["a1"] / "ws", capture_output=True, text=True, timeout=180
        )
        ran = bool(srv.tool_outputs())
    return mark.exists(), f"rc={proc.returncode} turn-ran={ran}\n{proc.stderr[-1200:]}"


@pytest.mark.parametrize("managed", [True, False], ids=["requirements", "control"])
def test_no_config_layer_hook_runs_under_the_requirements(
    core: Path, var_tmp_base: Path, managed: bool
) -> None:
    """`allow_managed_hooks_only` and `[features] hooks = false`: a hook from CODEX_HOME (a
    config layer, like a project layer an adapter trusts) never runs as the parent, even with
    hooks turned on again and hook trust bypassed. Control: without the requirements it runs.
    (Each of the two keys alone also stopped it, measured by hand on both cores.)"""
    lay, _, etc = _layout(var_tmp_base)
    mark = var_tmp_base / "hook-ran"
    ran, evidence = _hook_ran(core, lay, etc if managed else None, mark)
    assert "turn-ran=True" in evidence, evidence  # the session started and ran its turn
    assert ran is (not managed), evidence


@pytest.mark.parametrize("managed", [True, False], ids=["requirements", "control"])
def test_a_direct_app_server_client_sending_legacy_policies(
    core: Path, var_tmp_base: Path, managed: bool
) -> None:
    """A client of `codex app-server` itself (a launcher, not an adapter) that sends a legacy
    `sandboxPolicy` on turn/start with an approval policy the requirements allow (`never`),
    after a thread in profilec's profile, from profilec's CODEX_HOME config. Under the
    requirements: readOnly and workspaceWrite turns run the legacy policy (no active profile)
    and still deny the vault and keep the holder directories read-only; dangerFullAccess is
    refused by Codex. The control, without the requirements, leaks the marker in
    dangerFullAccess. (PC023 still flags a launcher that sends any legacy policy.)"""
    from profilec.e2e.appserver import LEGACY_EVENTS, run_method

    rows = {
        o.session_event: o
        for o in run_method(
            str(core),
            "codex-home",
            managed=managed,
            parent=str(var_tmp_base),
            events=("new", *LEGACY_EVENTS),
        )
    }
    assert rows["new"].result == "held", rows["new"].evidence
    for kind in ("readOnly", "workspaceWrite"):
        o = rows[f"legacy-sandboxPolicy:{kind}"]
        assert o.result == "held" and o.active_profile in (None, "None"), (kind, o.evidence)
        assert "write:codex-home rc=1" in o.evidence, o.evidence
    full = rows["legacy-sandboxPolicy:dangerFullAccess"]
    if managed:
        assert full.result == "error", full.evidence
        assert (
            "`DangerFullAccess` is not in the allowed set [read-only, workspace-write] "
            "(set by /etc/codex/requirements.toml)"
        ) in full.evidence
    else:
        assert full.result == "lost", full.evidence
