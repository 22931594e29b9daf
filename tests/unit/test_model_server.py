"""The scripted Responses-API model server, spoken to with urllib over loopback."""

from __future__ import annotations

import json
import tomllib
import urllib.error
import urllib.request
from typing import Any

import pytest

from profilec.scripted_model import (
    FINAL_TEXT,
    PROVIDER_ID,
    ScriptedModelServer,
    pick_shell_tool,
)

TOOLS = [{"type": "function", "name": "write_stdin"}, {"type": "function", "name": "exec_command"}]


def _post(
    srv: ScriptedModelServer, body: dict[str, Any], headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    req = urllib.request.Request(
        srv.base_url + "/responses",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.headers["Content-Type"] == "text/event-stream"
        text = resp.read().decode()
    events = []
    for block in text.split("\n\n"):
        if not block:
            continue
        lines = block.split("\n")
        assert lines[0].startswith("event: ")
        data = json.loads(lines[1].removeprefix("data: "))
        assert data["type"] == lines[0].removeprefix("event: ")
        events.append(data)
    return events


def _item(events: list[dict[str, Any]]) -> dict[str, Any]:
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert len(done) == 1
    item: dict[str, Any] = done[0]
    return item


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def test_turn_gets_a_tool_call_then_a_final_message_and_output_is_recorded() -> None:
    with ScriptedModelServer(["cat control.txt"]) as srv:
        first = _post(srv, {"input": [_user("go")], "tools": TOOLS})
        assert [e["type"] for e in first] == [
            "response.created",
            "response.output_item.added",
            "response.output_item.done",
            "response.completed",
        ]
        call = first[2]["item"]
        assert call["type"] == "function_call" and call["name"] == "exec_command"
        assert json.loads(call["arguments"])["cmd"] == "cat control.txt"
        follow = {
            "input": [
                _user("go"),
                call,
                {"type": "function_call_output", "call_id": call["call_id"], "output": "CONTROL"},
            ],
            "tools": TOOLS,
        }
        second = _post(srv, follow)
        done = [e for e in second if e["type"] == "response.output_item.done"]
        assert done[0]["item"]["content"][0]["text"] == FINAL_TEXT
        assert second[-1]["response"]["id"] != first[-1]["response"]["id"]
        assert srv.tool_outputs() == {call["call_id"]: "CONTROL"}
        assert [c.command for c in srv.calls] == ["cat control.txt"]
        assert len(srv.requests) == 2
        assert "CONTROL" in srv.model_visible_text()


def test_each_new_turn_takes_the_next_probe_and_an_empty_script_just_answers() -> None:
    with ScriptedModelServer(["one"]) as srv:
        srv.add_probe("two")
        a = _item(_post(srv, {"input": [_user("t1")], "tools": TOOLS}))
        out_a = {"type": "function_call_output", "call_id": a["call_id"], "output": "A"}
        _post(srv, {"input": [_user("t1"), a, out_a], "tools": TOOLS})
        b = _item(_post(srv, {"input": [_user("t1"), a, out_a, _user("t2")], "tools": TOOLS}))
        assert json.loads(b["arguments"])["cmd"] == "two"
        assert srv.pending_probes() == 0
        plain = _post(srv, {"input": [_user("t3")], "tools": TOOLS})
        assert _item(plain)["type"] == "message"


def test_output_for_a_call_we_did_not_issue_is_ignored() -> None:
    with ScriptedModelServer() as srv:
        forged = {"type": "function_call_output", "call_id": "forged", "output": "x"}
        _post(srv, {"input": [forged]})
        assert srv.tool_outputs() == {}


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["exec_command", "shell"], "exec_command"),
        (["shell", "shell_command"], "shell_command"),
        (["shell"], "shell"),
        (["web_search"], None),
    ],
)
def test_pick_shell_tool_prefers_exec_command(names: list[str], expected: str | None) -> None:
    assert pick_shell_tool({"tools": [{"type": "function", "name": n} for n in names]}) == expected


def test_shell_tool_gets_argv_arguments() -> None:
    with ScriptedModelServer(["echo hi"]) as srv:
        tools = [{"type": "function", "name": "shell"}]
        item = _item(_post(srv, {"input": [_user("go")], "tools": tools}))
    assert json.loads(item["arguments"])["command"] == ["sh", "-c", "echo hi"]


def test_no_shell_tool_is_recorded_as_a_script_error() -> None:
    with ScriptedModelServer(["echo hi"]) as srv:
        events = _post(srv, {"input": [_user("go")], "tools": [{"type": "function", "name": "x"}]})
        assert _item(events)["type"] == "message"
        assert srv.errors and "offers no shell tool" in srv.errors[0]


def test_secret_headers_are_redacted_but_bodies_kept() -> None:
    marker = "MARKER-abc123"
    with ScriptedModelServer() as srv:
        _post(srv, {"input": [_user("hello")]}, headers={"Authorization": f"Bearer {marker}"})
        rec = srv.requests[0]
    assert marker not in json.dumps(rec.headers)
    assert rec.headers["authorization"].startswith("<redacted")
    assert rec.body["input"][0]["content"][0]["text"] == "hello"


def test_models_listing_and_unknown_paths_answer_json() -> None:
    with ScriptedModelServer() as srv:
        with urllib.request.urlopen(srv.base_url + "/models", timeout=10) as resp:
            assert json.loads(resp.read())["object"] == "list"
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(srv.base_url + "/nope", timeout=10)
        assert info.value.code == 404


def test_server_binds_loopback_and_overrides_parse_as_toml() -> None:
    with ScriptedModelServer() as srv:
        assert srv.base_url.startswith("http://127.0.0.1:")
        doc: dict[str, Any] = {}
        for line in srv.provider_overrides():
            key, value = line.split("=", 1)
            parsed = tomllib.loads(f"v = {value}")["v"]
            target = doc
            parts = key.split(".")
            for part in parts[:-1]:
                target = target.setdefault(part, {})
            target[parts[-1]] = parsed
        assert doc == srv.provider_config()
        assert doc["model_providers"][PROVIDER_ID]["wire_api"] == "responses"
    with pytest.raises(RuntimeError):
        _ = srv.base_url


def test_dropped_probes_are_not_issued() -> None:
    with ScriptedModelServer(["a", "b"]) as srv:
        assert srv.drop_pending_probes() == ["a", "b"]
        assert srv.pending_probes() == 0
        assert _item(_post(srv, {"input": [_user("go")], "tools": TOOLS}))["type"] == "message"
        assert srv.calls == []
