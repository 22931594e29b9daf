"""End-to-end: does each mode keep the approval behaviour profiles/modes.toml gives it?

Public API:

    rows = appserver_approval_rows(codex_bin)      # real `codex app-server`, per mode
    rows = ts_approval_rows()                      # @agentclientprotocol/codex-acp, per mode

Probe: the scripted model asks for one unsandboxed command (`exec_command` with
`sandbox_permissions: "require_escalated"`). Under `on-request` Codex asks the client (an
app-server `item/commandExecution/requestApproval`, an ACP `session/request_permission`);
under `never` it refuses without asking. The harness declines every request, so nothing runs
unsandboxed. A row is `held` when a request came exactly when the mode's policy says one
should, `lost` otherwise; the evidence says how many requests came.

App-server, per mode, two events on one thread: `approval:<mode>:config` (turn/start selects the
mode's profile with `permissions`, and the approval policy is the one profilec's `-c` lines
set: the default mode's), and `approval:<mode>:turn` (the launcher also sends the mode's
`approvalPolicy` on turn/start). TS adapter (launch method `codex-home+initial-mode`):
`approval:<mode>` after `session/set_mode permission-profile:<id>`.
Rows use launch methods named `approvals: ...`, so they never count as credential-deny methods.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from ..codex.vocabulary import APPROVAL_NEVER, DEFAULT_APPROVAL_POLICY
from ..compat_matrix import excerpt
from ..emit.extras import approval_value
from ..library import load_and_compile
from ..models.compat import MatrixRow, Result
from ..scripted_model import ScriptedModelServer
from ..settings import codex_version
from .acp import acp_process, build_launch, modes_of, remove_layout
from .adapters import METHOD_CODEX_HOME_INITIAL_MODE, ts_adapter
from .appserver import ADAPTER, _Session, compile_layout
from .jsonrpc import RpcClosed, RpcError, RpcTimeout
from .layout import ACP_TREE, APPSERVER_TREE, build_layout

PROBE = "echo profilec-approval-probe"
APPSERVER_METHOD = "approvals: app-server -c"
TS_METHOD = "approvals: codex-home+initial-mode"
APPROVAL_REQUESTS = ("item/commandExecution/requestApproval", "execCommandApproval")


def verdict(policy: str, asked: int) -> tuple[Result, str]:
    """held when a request came iff the policy asks (everything but `never` may ask)."""
    want = policy != APPROVAL_NEVER
    got = asked > 0
    text = (
        f"mode policy {policy}: {asked} approval request(s); "
        f"{'expected' if want else 'expected none'}"
    )
    return ("held" if want == got else "lost"), text


def appserver_approval_rows(codex: str | Path, *, timeout: float = 90.0) -> list[MatrixRow]:
    """Per mode: the approval behaviour with profilec's config alone, and with the launcher
    sending the mode's approvalPolicy per turn."""
    layout = build_layout(APPSERVER_TREE)
    rows: list[MatrixRow] = []
    try:
        bundle = compile_layout(layout)
        with ScriptedModelServer() as server:
            s = _Session("app-server -c", layout, bundle, server, str(codex), timeout)
            try:
                proc = s.start()
                started = proc.client.request(
                    "thread/start", {"cwd": layout.workspace}, timeout=timeout
                )
                thread = str(started["thread"]["id"])
                for profile in bundle.profiles:
                    approvals = bundle.mode_approvals.get(profile.mode, {})
                    policy = approvals.get("approval_policy", DEFAULT_APPROVAL_POLICY)
                    config_policy = bundle.mode_approvals.get(bundle.default_mode, {}).get(
                        "approval_policy", DEFAULT_APPROVAL_POLICY
                    )
                    for event, extra in (
                        ("config", {"permissions": profile.profile_id}),
                        (
                            "turn",
                            {
                                "permissions": profile.profile_id,
                                "approvalPolicy": approval_value(policy),
                            },
                        ),
                    ):
                        before = len(proc.approvals)
                        server.add_probe(PROBE, escalate=True)
                        try:
                            proc.turn(thread, f"approval probe {profile.mode}", extra, timeout)
                        except (RpcError, RpcTimeout, RpcClosed) as exc:
                            rows.append(
                                _row(
                                    APPSERVER_METHOD,
                                    f"approval:{profile.mode}:{event}",
                                    "error",
                                    f"turn failed: {exc}",
                                )
                            )
                            server.drop_pending_probes()
                            continue
                        server.drop_pending_probes()
                        asked = sum(1 for m in proc.approvals[before:] if m in APPROVAL_REQUESTS)
                        result, text = verdict(policy, asked)
                        where = (
                            f"config approval_policy {config_policy}"
                            if event == "config"
                            else f"turn/start approvalPolicy {policy}"
                        )
                        rows.append(
                            _row(
                                APPSERVER_METHOD,
                                f"approval:{profile.mode}:{event}",
                                result,
                                f"{text}; {where}",
                            )
                        )
            finally:
                s.stop()
    finally:
        shutil.rmtree(layout.base, ignore_errors=True)
    return rows


def _row(
    method: str,
    event: str,
    result: Result,
    evidence: str,
    adapter: str = ADAPTER,
    adapter_version: str | None = None,
    core: str | None = None,
) -> MatrixRow:
    return MatrixRow(
        adapter=adapter,
        adapter_version=adapter_version or codex_version(),
        codex_version=core or codex_version(),
        launch_method=method,
        session_event=event,
        result=result,
        evidence=excerpt(evidence, []),
    )


def ts_approval_rows(*, bundled_codex: bool = False) -> list[MatrixRow]:
    """@agentclientprotocol/codex-acp under codex-home+initial-mode: per permission-profile
    mode, does an escalation request reach the client as the mode's policy says?"""
    adapter = ts_adapter(bundled_codex=bundled_codex)
    if adapter.missing:
        return []
    layout = build_layout(ACP_TREE)
    rows: list[MatrixRow] = []
    try:
        bundle = load_and_compile(layout.roots, workspace_roots=[layout.workspace])
        by_id = {p.profile_id: p.mode for p in bundle.profiles}
        with ScriptedModelServer() as server:
            launch = build_launch(adapter, METHOD_CODEX_HOME_INITIAL_MODE, layout, server)
            with acp_process(launch.argv, launch.env, layout.workspace) as client:
                session = client.new_session()
                sid = str(session.get("sessionId") or "")
                ids, _ = modes_of(session)
                for mode_id in ids:
                    pid = mode_id.removeprefix("permission-profile:")
                    mode = by_id.get(pid)
                    if mode is None or not mode_id.startswith("permission-profile:"):
                        continue
                    policy = bundle.mode_approvals.get(mode, {}).get(
                        "approval_policy", DEFAULT_APPROVAL_POLICY
                    )
                    event = f"approval:{mode}"
                    try:
                        client.set_mode(sid, mode_id)
                        before = len(client.permissions)
                        server.add_probe(PROBE, escalate=True)
                        client.prompt(sid, "approval probe")
                    except (RpcError, RpcTimeout, RpcClosed) as exc:
                        rows.append(
                            _row(
                                TS_METHOD,
                                event,
                                "error",
                                f"failed: {exc}",
                                adapter.name,
                                adapter.version,
                                adapter.codex_version,
                            )
                        )
                        continue
                    finally:
                        server.drop_pending_probes()
                    time.sleep(0.2)
                    asked = len(client.permissions) - before
                    result, text = verdict(policy, asked)
                    rows.append(
                        _row(
                            TS_METHOD,
                            event,
                            result,
                            f"{text}; mode {mode_id}",
                            adapter.name,
                            adapter.version,
                            adapter.codex_version,
                        )
                    )
    finally:
        remove_layout(layout)
    return rows
