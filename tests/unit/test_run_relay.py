"""`profilec run`'s ACP relay: every filter and refusal of `RelayPolicy`, and the `Relay` over
real pipes (a fake adapter's stream and a fake client's), with codex-acp 2.6.0's shapes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from profilec.jsonrpc import decode, encode
from profilec.run.relay import Relay, RelayPolicy, allowed_modes

P_AGENT, P_RO = "permission-profile:agent", "permission-profile:read-only"
MODES = allowed_modes(["agent", "read-only"])


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    return root


def _policy(ws: Path) -> RelayPolicy:
    return RelayPolicy(modes=MODES, roots=(os.path.realpath(ws),))


def _req(method: str, params: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _refused(policy: RelayPolicy, msg: dict[str, Any]) -> str:
    verdict = policy.from_client(msg)
    assert verdict.forward is None and verdict.reply is not None
    assert verdict.reply["id"] == msg["id"]
    message: str = verdict.reply["error"]["message"]
    assert message.startswith("profilec run: ")
    return message


def _forwarded(policy: RelayPolicy, msg: dict[str, Any]) -> dict[str, Any]:
    verdict = policy.from_client(msg)
    assert verdict.reply is None and verdict.forward is not None
    return verdict.forward


def test_the_allowed_modes_are_the_compiled_permission_profiles() -> None:
    assert {P_AGENT, P_RO} == MODES


@pytest.mark.parametrize("mode", ["agent", "agent-full-access", "read-only", "", None, 3])
def test_set_mode_to_anything_but_a_compiled_profile_is_refused(ws: Path, mode: object) -> None:
    why = _refused(_policy(ws), _req("session/set_mode", {"sessionId": "s", "modeId": mode}))
    assert f"modeId {mode!r} is refused" in why and P_AGENT in why


def test_set_mode_to_a_compiled_profile_is_forwarded(ws: Path) -> None:
    msg = _req("session/set_mode", {"sessionId": "s", "modeId": P_RO})
    assert _forwarded(_policy(ws), msg) == msg


@pytest.mark.parametrize("value", ["agent-full-access", "workspace-write", "permission-profile:x"])
def test_set_config_option_mode_to_a_built_in_is_refused(ws: Path, value: str) -> None:
    msg = _req("session/set_config_option", {"sessionId": "s", "configId": "mode", "value": value})
    assert 'session/set_config_option "mode"' in _refused(_policy(ws), msg)


def test_set_config_option_of_another_option_or_a_profile_mode_is_forwarded(ws: Path) -> None:
    policy = _policy(ws)
    model = _req("session/set_config_option", {"sessionId": "s", "configId": "model", "value": "m"})
    mode = _req("session/set_config_option", {"sessionId": "s", "configId": "mode", "value": P_RO})
    assert _forwarded(policy, model) == model
    assert _forwarded(policy, mode) == mode


@pytest.mark.parametrize(
    "method", ["session/new", "session/load", "session/resume", "session/fork"]
)
def test_a_session_below_or_outside_the_workspace_root_is_refused(
    ws: Path, tmp_path: Path, method: str
) -> None:
    policy = _policy(ws)
    for cwd in (ws / "sub", tmp_path, "relative", None):
        why = _refused(policy, _req(method, {"cwd": str(cwd) if cwd else cwd, "mcpServers": []}))
        assert method in why and "workspace root" in why


def test_a_link_to_the_root_opens_at_the_canonical_root(ws: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(ws)
    out = _forwarded(_policy(ws), _req("session/new", {"cwd": f"{link}/", "mcpServers": []}))
    assert out["params"]["cwd"] == os.path.realpath(ws)


def test_a_link_below_that_leads_back_to_the_root_is_the_root_by_real_path(ws: Path) -> None:
    (ws / "sub" / "up").symlink_to("..")
    out = _forwarded(_policy(ws), _req("session/new", {"cwd": str(ws / "sub" / "up")}))
    assert out["params"]["cwd"] == os.path.realpath(ws)


def test_a_link_inside_the_root_that_leads_elsewhere_is_refused(ws: Path, tmp_path: Path) -> None:
    (ws / "lib").symlink_to(tmp_path)
    _refused(_policy(ws), _req("session/new", {"cwd": str(ws / "lib")}))


def test_additional_directories_are_refused_even_the_root_itself(ws: Path) -> None:
    msg = _req("session/new", {"cwd": str(ws), "additionalDirectories": [str(ws)]})
    assert "additionalDirectories" in _refused(_policy(ws), msg)
    empty = _req("session/new", {"cwd": str(ws), "additionalDirectories": []})
    _forwarded(_policy(ws), empty)


@pytest.mark.parametrize("method", ["providers/set", "providers/disable"])
def test_the_client_cannot_change_the_provider(ws: Path, method: str) -> None:
    assert "--provider-config" in _refused(_policy(ws), _req(method, {"id": "x"}))


def test_a_refused_notification_is_dropped_without_an_answer(ws: Path) -> None:
    msg = {"jsonrpc": "2.0", "method": "session/set_mode", "params": {"modeId": "agent"}}
    verdict = _policy(ws).from_client(msg)
    assert verdict.forward is None and verdict.reply is None


def test_responses_and_other_requests_pass_unchanged(ws: Path) -> None:
    policy = _policy(ws)
    for msg in (
        {"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "cancelled"}}},
        _req("session/prompt", {"sessionId": "s", "prompt": []}),
        _req("initialize", {"protocolVersion": 1}),
    ):
        assert _forwarded(policy, msg) == msg


def _session_result(current: str, grouped: bool = True) -> dict[str, Any]:
    """A session/new result shaped like codex-acp 2.6.0's."""
    builtin = [{"id": m, "name": m} for m in ("read-only", "agent", "agent-full-access")]
    profiles = [{"id": P_AGENT, "name": "agent"}, {"id": P_RO, "name": "read-only"}]
    choices: list[dict[str, Any]] = [
        {"value": m["id"], "name": m["name"]} for m in [*builtin, *profiles]
    ]
    if grouped:
        choices = [
            {"group": "sandbox-modes", "name": "Sandbox Modes", "options": choices[:3]},
            {"group": "permission-profiles", "name": "Permission Profiles", "options": choices[3:]},
        ]
    return {
        "sessionId": "s1",
        "modes": {"currentModeId": current, "availableModes": [*builtin, *profiles]},
        "configOptions": [
            {"id": "mode", "name": "Mode", "category": "mode", "type": "select",
             "currentValue": current, "options": choices},
            {"id": "model", "name": "Model", "type": "select", "currentValue": "m",
             "options": [{"value": "m", "name": "m"}]},
        ],
    }  # fmt: skip


def _open(policy: RelayPolicy, ws: Path, rid: int = 1) -> None:
    _forwarded(policy, _req("session/new", {"cwd": str(ws)}, rid))


@pytest.mark.parametrize("grouped", [True, False])
def test_the_session_offers_only_the_compiled_modes(ws: Path, grouped: bool) -> None:
    policy = _policy(ws)
    _open(policy, ws)
    out = policy.from_agent(
        {"jsonrpc": "2.0", "id": 1, "result": _session_result(P_AGENT, grouped)}
    )
    assert out is not None
    result = out["result"]
    assert [m["id"] for m in result["modes"]["availableModes"]] == [P_AGENT, P_RO]
    mode, model = result["configOptions"]
    values = (
        [c["value"] for g in mode["options"] for c in g["options"]]
        if grouped
        else [c["value"] for c in mode["options"]]
    )
    assert values == [P_AGENT, P_RO]
    if grouped:
        assert [g["group"] for g in mode["options"]] == ["permission-profiles"]
    assert model["options"] == [{"value": "m", "name": "m"}]


def test_a_session_opened_in_a_built_in_mode_is_closed_to_the_client(ws: Path) -> None:
    policy = _policy(ws)
    _open(policy, ws, rid=4)
    out = policy.from_agent({"jsonrpc": "2.0", "id": 4, "result": _session_result("agent")})
    assert out is not None and "error" in out and "'agent'" in out["error"]["message"]
    why = _refused(policy, _req("session/prompt", {"sessionId": "s1", "prompt": []}, 5))
    assert "session s1 is closed" in why


def test_initialize_no_longer_advertises_what_the_relay_refuses(ws: Path) -> None:
    caps = {
        "loadSession": True,
        "providers": {},
        "sessionCapabilities": {"resume": {}, "additionalDirectories": {}, "fork": {}},
    }
    out = _policy(ws).from_agent({"jsonrpc": "2.0", "id": 0, "result": {"agentCapabilities": caps}})
    assert out is not None
    assert out["result"]["agentCapabilities"] == {
        "loadSession": True,
        "sessionCapabilities": {"resume": {}, "fork": {}},
    }


def test_config_option_updates_are_filtered_too(ws: Path) -> None:
    policy = _policy(ws)
    update = {"sessionUpdate": "config_option_update", **_session_result(P_RO)}
    note = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": update},
    }
    out = policy.from_agent(note)
    assert out is not None
    mode = out["params"]["update"]["configOptions"][0]
    assert [c["value"] for g in mode["options"] for c in g["options"]] == [P_AGENT, P_RO]


def test_a_set_config_option_response_is_filtered(ws: Path) -> None:
    policy = _policy(ws)
    result = {"configOptions": _session_result(P_RO)["configOptions"]}
    out = policy.from_agent({"jsonrpc": "2.0", "id": 9, "result": result})
    assert out is not None
    assert out["result"]["configOptions"][0]["options"][0]["group"] == "permission-profiles"


def test_a_mode_update_to_a_built_in_mode_is_dropped_and_closes_the_session(ws: Path) -> None:
    policy = _policy(ws)

    def note(mode: str) -> dict[str, Any]:
        update = {"sessionUpdate": "current_mode_update", "currentModeId": mode}
        return {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s2", "update": update},
        }

    assert policy.from_agent(note(P_RO)) == note(P_RO)
    assert policy.from_agent(note("agent-full-access")) is None
    _refused(policy, _req("session/set_mode", {"sessionId": "s2", "modeId": P_RO}))


# -- the relay over pipes -----------------------------------------------------------------------


class _Ends:
    """The relay between two pipe pairs: the test is the client and the adapter."""

    def __init__(self, policy: RelayPolicy) -> None:
        c_r, self.client_w = os.pipe()  # client -> relay
        self.client_r, c_w = os.pipe()  # relay -> client
        a_r, self.agent_w = os.pipe()  # adapter stdout -> relay
        self.agent_r, a_w = os.pipe()  # relay -> adapter stdin
        self.relay = Relay(
            policy,
            client_in=os.fdopen(c_r, "rb"),
            client_out=os.fdopen(c_w, "wb"),
            agent_in=os.fdopen(a_w, "wb"),
            agent_out=os.fdopen(a_r, "rb"),
        )
        self.to_client = os.fdopen(self.client_r, "rb")
        self.to_agent = os.fdopen(self.agent_r, "rb")
        self.relay.start()

    def client_sends(self, raw: bytes) -> None:
        os.write(self.client_w, raw)

    def agent_sends(self, msg: dict[str, Any]) -> None:
        os.write(self.agent_w, encode(msg))

    def client_gets(self) -> dict[str, Any]:
        msg = decode(self.to_client.readline())
        assert msg is not None
        return msg

    def agent_gets(self) -> dict[str, Any]:
        msg = decode(self.to_agent.readline())
        assert msg is not None
        return msg


def test_the_relay_refuses_without_forwarding_and_filters_the_answer(ws: Path) -> None:
    ends = _Ends(_policy(ws))
    ends.client_sends(encode(_req("session/set_mode", {"sessionId": "s", "modeId": "agent"}, 1)))
    assert ends.client_gets()["error"]["code"] == -32602
    ends.client_sends(b"not json\n" + encode(_req("session/new", {"cwd": f"{ws}/"}, 2)))
    assert ends.client_gets()["error"]["code"] == -32700
    forwarded = ends.agent_gets()  # the first thing the adapter sees is the accepted session/new
    assert forwarded["method"] == "session/new" and forwarded["params"]["cwd"] == str(ws.resolve())
    ends.agent_sends({"jsonrpc": "2.0", "id": 2, "result": _session_result(P_AGENT)})
    modes = ends.client_gets()["result"]["modes"]["availableModes"]
    assert [m["id"] for m in modes] == [P_AGENT, P_RO]
    assert len(ends.relay.refused) == 2


def test_a_message_with_an_id_that_is_no_json_rpc_id_is_refused(ws: Path) -> None:
    ends = _Ends(_policy(ws))
    ends.client_sends(encode({"jsonrpc": "2.0", "id": [1], "method": "session/prompt"}))
    assert ends.client_gets()["error"]["code"] == -32600
    ends.agent_sends({"jsonrpc": "2.0", "id": {"x": 1}, "result": {}})  # passed on as is
    assert ends.client_gets()["id"] == {"x": 1}


def test_pending_requests_get_an_error_when_the_session_ends(ws: Path) -> None:
    ends = _Ends(_policy(ws))
    ends.client_sends(encode(_req("session/prompt", {"sessionId": "s", "prompt": []}, 11)))
    assert ends.agent_gets()["id"] == 11
    ends.relay.fail_pending("profilec run: drift")
    assert ends.client_gets() == {
        "jsonrpc": "2.0",
        "id": 11,
        "error": {"code": -32603, "message": "profilec run: drift"},
    }


def test_the_client_s_end_closes_the_adapter_s_input(ws: Path) -> None:
    ends = _Ends(_policy(ws))
    os.close(ends.client_w)
    assert ends.relay.client_done.wait(10)
    assert ends.to_agent.read() == b""  # end of file: the adapter's stdin was closed
    assert not ends.relay.agent_done.is_set()
    os.close(ends.agent_w)
    assert ends.relay.agent_done.wait(10)
