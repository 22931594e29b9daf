"""The app-server driver's verdict and evidence, without a real Codex."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from profilec.e2e.appserver import (
    FORK_SANDBOX_EVENT,
    LEGACY_EVENTS,
    RESTORE_EVENT,
    RESUME_SANDBOX_EVENT,
    THREAD_SANDBOX_EVENTS,
    AppServer,
    compile_layout,
    drop_denies,
    entries_in_effect,
    judge,
    run_method,
)
from profilec.e2e.jsonrpc import RpcError
from profilec.e2e.layout import APPSERVER_TREE, build_layout


def test_judge_reads_the_model_visible_text_not_the_exit_code(tmp_path: Path) -> None:
    lay = build_layout(APPSERVER_TREE, str(tmp_path))
    ok = (
        f"== link\ncat: x: Permission denied\nrc=1\n== control\n{lay.control_marker}\nrc=0\n"
        "== write:codex-home\nro\nrc=1\n== write:host\nro\nrc=1\n== write:base\nro\nrc=1\n"
    )
    assert judge(lay, ok, "", False)[0] == "held"
    # The marker anywhere the model saw it is a loss, even with every exit code non-zero.
    assert judge(lay, ok, f'{{"x": "{lay.marker}"}}', False)[0] == "lost"
    assert (
        judge(lay, ok.replace("ro\nrc=1\n== write:host", "\nrc=0\n== write:host"), "", False)[0]
        == "lost"
    )
    assert judge(lay, ok.replace(lay.control_marker, "nothing"), "", False)[0] == "error"
    assert judge(lay, None, "", False)[0] == "error"


def test_layout_links_reach_the_marker_and_compile_denies_the_target(tmp_path: Path) -> None:
    lay = build_layout(APPSERVER_TREE, str(tmp_path))
    assert Path(lay.link).is_symlink()
    assert Path(lay.link).resolve() == Path(lay.target).resolve()
    bundle = compile_layout(lay)
    entries = {(e.access, e.path) for e in bundle.profile_for(bundle.default_mode).entries}
    assert ("deny", os.path.dirname(lay.target)) in entries  # the target's vault
    assert all(e.access != "deny" for p in drop_denies(bundle).profiles for e in p.entries)


def test_entries_in_effect_counts_what_the_environment_context_shows(tmp_path: Path) -> None:
    lay = build_layout(APPSERVER_TREE, str(tmp_path))
    bundle = compile_layout(lay)
    ctx = (
        '<environment_context><entry access="deny" escalatable="false"><path>'
        f"{os.path.dirname(lay.target)}</path></entry></environment_context>"
    )
    body = {"input": [{"type": "message", "content": [{"type": "input_text", "text": ctx}]}]}
    shown = entries_in_effect(bundle, [body])
    # The vault is shown; the writer-lock deny and the trusted base's host-dependent socket
    # denies are not in this context.
    n_deny = sum(e.access == "deny" for e in bundle.profile_for(bundle.default_mode).entries)
    assert shown.startswith(f"compiled entries in effect: deny 1/{n_deny}, read 0/")
    assert entries_in_effect(bundle, []) == ""
    assert entries_in_effect(None, [body]) == ""


FAKE_APP_SERVER = """#!{python}
import json, sys
for raw in sys.stdin:
    msg = json.loads(raw)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        reply = {{"id": msg["id"], "result": {{}}}}
    else:
        reply = {{"id": msg["id"], "error": {{"code": -32600, "message": "no threads here"}}}}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


def test_a_failing_app_server_gives_error_rows_never_held(tmp_path: Path) -> None:
    import sys

    fake = tmp_path / "codex"
    fake.write_text(FAKE_APP_SERVER.format(python=sys.executable))
    fake.chmod(0o755)
    out = run_method(str(fake), "app-server -c", timeout=10, parent=str(tmp_path))
    assert [o.session_event for o in out] == [
        "new",
        "resumed",
        *LEGACY_EVENTS,
        RESTORE_EVENT,
        *THREAD_SANDBOX_EVENTS,
        FORK_SANDBOX_EVENT,
        RESUME_SANDBOX_EVENT,
    ]
    assert {o.result for o in out} == {"error"}
    assert all("no threads here" in o.evidence for o in out)
    assert [p for p in tmp_path.iterdir() if p.name.startswith("profilec-e2e-as-")] == []


def test_every_server_request_is_declined_and_recorded() -> None:
    srv = AppServer.__new__(AppServer)  # the handler alone, no process
    srv.approvals = []
    cmd = "item/commandExecution/requestApproval"
    assert srv._on_request(cmd, {"command": "cat x"}) == {"decision": "decline"}
    assert srv._on_request("item/fileChange/requestApproval", {}) == {"decision": "decline"}
    assert srv._on_request("execCommandApproval", {}) == {"decision": "denied"}
    with pytest.raises(RpcError):
        srv._on_request("item/permissions/requestApproval", {})
    assert srv.approvals == [
        cmd,
        "item/fileChange/requestApproval",
        "execCommandApproval",
        "item/permissions/requestApproval",
    ]
