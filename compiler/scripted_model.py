"""A scripted model on 127.0.0.1 that speaks the OpenAI Responses API streaming (SSE) format.

Public API:

    with ScriptedModelServer(probes=["cat /etc/hostname"]) as srv:
        srv.base_url                   # "http://127.0.0.1:<port>/v1"
        srv.provider_overrides()       # ["model_provider=...", "model_providers.<id>={...}", ...]
        srv.provider_config()          # the same as a dict (thread `config` map / config.toml)
        srv.add_probe("cat /x")        # queue the probe command for the next new turn
        srv.drop_pending_probes()      # forget queued probes not yet issued
        ... drive Codex ...
        srv.requests                   # RecordedRequest(path, headers (redacted), body) per request
        srv.tool_outputs()             # {call_id: output text Codex sent back for that call}
        srv.calls                      # ToolCall(call_id, tool, command) in the order issued

Script, per turn: a request whose last input item is not the output of one of our calls starts a
turn; if a probe is queued the reply is one function call of the shell tool that the request
offers (`exec_command`, `shell_command`, `shell` or `local_shell`, in that order of preference)
running the probe; the follow-up request carries that call's `function_call_output`, which is
recorded, and the reply is a plain assistant message that ends the turn. With no probe queued the
reply is a plain message. Anything else (GET /v1/models, unknown paths) gets a small valid JSON.

The verdict reads what the *model* saw, i.e. request bodies. Headers are stored with
Authorization-like values replaced by their length, so a credential a trusted parent sends to the
provider never lands in a log; bodies are kept whole because they are the evidence.
Loopback only: the server binds 127.0.0.1 and the provider entry names that address.

`ToolScriptServer` scripts whole turns of arbitrary calls (not only one shell probe): the parent
attacks (compiler/canary/parent.py, tests/parent_attacks.py) drive `spawn_agent` and friends
with it:

    with ToolScriptServer([[Shell("env"), Call("spawn_agent", {...}, "multi_agent_v1")]]) as srv:
        ... drive Codex ...
        srv.add_turn([Shell("echo next")])   # queued for the next request that starts a turn
        srv.issued, srv.outputs(), srv.bodies(), srv.script_errors()
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

PROVIDER_ID = "profilec_e2e"
MODEL = "gpt-5.1-codex"
FINAL_TEXT = "probe finished"
#: Shell tools Codex may offer, most preferred first.
SHELL_TOOLS = ("exec_command", "shell_command", "shell", "local_shell")
_SECRET_HEADERS = ("authorization", "api-key", "x-api-key", "openai-api-key", "chatgpt-account-id")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it (secret-looking header values redacted)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class ToolCall:
    """One function call the scripted model issued."""

    call_id: str
    tool: str
    command: str
    arguments: str


@dataclass
class _State:
    probes: deque[str] = field(default_factory=deque)
    escalate: set[str] = field(default_factory=set)
    requests: list[RecordedRequest] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _tool_names(body: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            name = tool.get("name") or tool.get("type")
            if isinstance(name, str):
                names.append(name)
    return names


def pick_shell_tool(body: dict[str, Any]) -> str | None:
    """The shell tool this request offers, by SHELL_TOOLS preference; None if it offers none."""
    names = _tool_names(body)
    for cand in SHELL_TOOLS:
        if cand in names:
            return cand
    return None


def call_item(tool: str, call_id: str, command: str, *, escalate: bool = False) -> dict[str, Any]:
    """The output item that makes Codex run `command` (through `sh -c`) with `tool`.

    `escalate` asks for unsandboxed execution (`sandbox_permissions: "require_escalated"`), a
    request the approval policy decides: on-request asks the client, never refuses it.
    """
    if tool == "local_shell":
        return {
            "type": "local_shell_call",
            "id": f"lsh_{call_id}",
            "call_id": call_id,
            "status": "completed",
            "action": {"type": "exec", "command": ["sh", "-c", command], "timeout_ms": 20000},
        }
    if tool == "exec_command":
        args: dict[str, Any] = {"cmd": command, "yield_time_ms": 10000}
    elif tool == "shell_command":
        args = {"command": command, "timeout_ms": 20000}
    else:
        args = {"command": ["sh", "-c", command], "timeout_ms": 20000}
    if escalate:
        args["sandbox_permissions"] = "require_escalated"
        args["justification"] = "profilec e2e approval probe"
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": tool,
        "arguments": json.dumps(args, separators=(",", ":")),
        "status": "completed",
    }


def message_item(text: str, item_id: str) -> dict[str, Any]:
    """A completed assistant message output item."""
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def sse_events(response_id: str, items: Iterable[dict[str, Any]]) -> bytes:
    """The SSE stream for one response: created, each item added+done, completed."""

    def ev(kind: str, data: dict[str, Any]) -> bytes:
        payload = {"type": kind, **data}
        return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()

    out = [ev("response.created", {"response": {"id": response_id, "status": "in_progress"}})]
    for index, item in enumerate(items):
        out.append(ev("response.output_item.added", {"output_index": index, "item": item}))
        if item.get("type") == "message":
            text = item["content"][0]["text"]
            out.append(
                ev(
                    "response.output_text.delta",
                    {
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": text,
                    },
                )
            )
        out.append(ev("response.output_item.done", {"output_index": index, "item": item}))
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    out.append(
        ev(
            "response.completed",
            {"response": {"id": response_id, "status": "completed", "usage": usage}},
        )
    )
    return b"".join(out)


def _output_text(item: dict[str, Any]) -> str:
    out = item.get("output")
    if isinstance(out, str):
        return out
    if isinstance(out, dict) and isinstance(out.get("content"), str):
        return str(out["content"])
    if isinstance(out, list):
        return "".join(str(p.get("text", "")) for p in out if isinstance(p, dict))
    return json.dumps(out)


class ScriptedModelServer:
    """The scripted Responses-API model; a context manager that serves on an ephemeral port."""

    def __init__(self, probes: Iterable[str] = (), *, model: str = MODEL) -> None:
        self.model = model
        self._state = _State(probes=deque(probes))
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> ScriptedModelServer:
        """Bind 127.0.0.1 on an ephemeral port and serve in a daemon thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                server._record(self, None)
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [], "models": []})
                else:
                    self._json(404, {"error": {"message": "not found", "type": "not_found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw or b"null")
                except json.JSONDecodeError:
                    body = {"_undecodable": raw.decode("utf-8", errors="replace")}
                server._record(self, body)
                is_responses = self.path.split("?")[0].rstrip("/").endswith("/responses")
                if not is_responses or not isinstance(body, dict):
                    self._json(404, {"error": {"message": "not found", "type": "not_found"}})
                    return
                stream = server._reply(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(stream)))
                self.end_headers()
                self.wfile.write(stream)

            def _json(self, code: int, doc: dict[str, Any]) -> None:
                data = json.dumps(doc).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- configuration ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (the server must be started)."""
        if self._httpd is None:
            raise RuntimeError("model server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The provider base_url Codex appends /responses to."""
        return f"http://127.0.0.1:{self.port}/v1"

    def provider_entry(self) -> dict[str, Any]:
        """The `model_providers.<id>` table: responses wire, no auth, no retries."""
        return {
            "name": "profilec scripted model",
            "base_url": self.base_url,
            "wire_api": "responses",
            "requires_openai_auth": False,
            "request_max_retries": 0,
            "stream_max_retries": 0,
            "stream_idle_timeout_ms": 30000,
        }

    def provider_config(self) -> dict[str, Any]:
        """Config keys selecting this provider (for a thread `config` map or config.toml)."""
        return {
            "model": self.model,
            "model_provider": PROVIDER_ID,
            "model_providers": {PROVIDER_ID: self.provider_entry()},
        }

    def provider_overrides(self) -> list[str]:
        """The same as `-c key=value` strings (values are TOML)."""
        entry = ", ".join(f"{k}={_toml(v)}" for k, v in self.provider_entry().items())
        return [
            f"model={_toml(self.model)}",
            f"model_provider={_toml(PROVIDER_ID)}",
            f"model_providers.{PROVIDER_ID}={{{entry}}}",
        ]

    # -- script -------------------------------------------------------------------------------

    def add_probe(self, command: str, *, escalate: bool = False) -> None:
        """Queue a probe: the next new turn runs `command` (asking for escalation if told)."""
        with self._lock:
            self._state.probes.append(command)
            if escalate:
                self._state.escalate.add(command)

    def drop_pending_probes(self) -> list[str]:
        """Forget every queued probe not yet issued (e.g. after a prompt that failed); returns
        them in order."""
        with self._lock:
            dropped = list(self._state.probes)
            self._state.probes.clear()
            return dropped

    def pending_probes(self) -> int:
        """Probes queued but not yet issued."""
        with self._lock:
            return len(self._state.probes)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, in arrival order."""
        with self._lock:
            return list(self._state.requests)

    @property
    def calls(self) -> list[ToolCall]:
        """Every tool call issued so far."""
        with self._lock:
            return list(self._state.calls)

    @property
    def errors(self) -> list[str]:
        """Script problems (e.g. a turn whose request offered no shell tool)."""
        with self._lock:
            return list(self._state.errors)

    def tool_outputs(self) -> dict[str, str]:
        """call_id -> the output text Codex sent back for it (first time seen)."""
        with self._lock:
            return dict(self._state.outputs)

    def model_visible_text(self) -> str:
        """Every request body concatenated: all the model was ever shown."""
        with self._lock:
            return "\n".join(json.dumps(r.body) for r in self._state.requests if r.body is not None)

    # -- internals ----------------------------------------------------------------------------

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        headers = {}
        for key, value in handler.headers.items():
            low = key.lower()
            secret = low in _SECRET_HEADERS or "token" in low or "key" in low or "auth" in low
            headers[low] = f"<redacted {len(value)} chars>" if secret else value
        with self._lock:
            rec = RecordedRequest(handler.command, handler.path, headers, body)
            self._state.requests.append(rec)

    def _reply(self, body: dict[str, Any]) -> bytes:
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        with self._lock:
            ours = {c.call_id for c in self._state.calls}
            for item in items:
                if item.get("type") in (
                    "function_call_output",
                    "local_shell_call_output",
                    "custom_tool_call_output",
                ):
                    cid = str(item.get("call_id"))
                    if cid in ours and cid not in self._state.outputs:
                        self._state.outputs[cid] = _output_text(item)
            last = items[-1] if items else {}
            is_output = str(last.get("type", "")).endswith("_output")
            follow_up = is_output and last.get("call_id") in ours
            n = next(self._ids)
            rid = f"resp_{n}"
            if follow_up or not self._state.probes:
                return sse_events(rid, [message_item(FINAL_TEXT, f"msg_{n}")])
            tool = pick_shell_tool(body)
            if tool is None:
                self._state.errors.append(f"request {n} offers no shell tool: {_tool_names(body)}")
                return sse_events(rid, [message_item("no shell tool offered", f"msg_{n}")])
            command = self._state.probes.popleft()
            cid = f"call_{n}"
            item = call_item(tool, cid, command, escalate=command in self._state.escalate)
            self._state.calls.append(ToolCall(cid, tool, command, str(item.get("arguments", ""))))
            return sse_events(rid, [item])


# ---------------------------------------------------------------------------------------------
# Whole scripted turns (arbitrary calls)


@dataclass(frozen=True)
class Shell:
    """Run `command` through whichever shell tool the request offers."""

    command: str


@dataclass(frozen=True)
class Call:
    """Call function `name` (in tool namespace `namespace`, if any) with `args`; `derive`, when
    set, builds the arguments from the previous step's output text instead (e.g. an agent id)."""

    name: str
    args: dict[str, Any]
    namespace: str | None = None
    derive: Callable[[str], dict[str, Any]] | None = None


Step = Shell | Call


@dataclass
class _Turn:
    steps: deque[Step]


@dataclass
class _Script:
    turns: deque[list[Step]] = field(default_factory=deque)
    active: dict[str, _Turn] = field(default_factory=dict)  # our call_id -> the rest of its turn
    issued: list[tuple[str, Step]] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


class ToolScriptServer(ScriptedModelServer):
    """The scripted model, driving whole turns of arbitrary calls.

    `add_turn([Shell("env"), Call("spawn_agent", {...}, "multi_agent_v1")])`: the next request
    that starts a turn (its last input item is not the output of one of our calls) gets the
    first step; each follow-up carrying a step's output gets the next; then a plain message ends
    the turn. A request that starts a turn with no turn queued (a sub-agent's first request, a
    later session) gets a plain message. The single-probe script of the base class is unused.
    """

    def __init__(self, turns: Iterable[Sequence[Step]] = (), *, model: str = MODEL) -> None:
        super().__init__(model=model)
        self._script = _Script(turns=deque(list(t) for t in turns))

    def __enter__(self) -> Self:
        self.start()
        return self

    def add_turn(self, steps: Sequence[Step]) -> None:
        """Queue one turn's calls."""
        with self._lock:
            self._script.turns.append(list(steps))

    @property
    def issued(self) -> list[tuple[str, Step]]:
        """(call_id, step) for every call issued, in order."""
        with self._lock:
            return list(self._script.issued)

    def outputs(self) -> dict[str, str]:
        """call_id -> the output text Codex sent back for it."""
        with self._lock:
            return dict(self._script.outputs)

    def script_errors(self) -> list[str]:
        """Script problems (a shell step in a request that offered no shell tool)."""
        with self._lock:
            return list(self._script.errors)

    def bodies(self) -> list[str]:
        """Every request body as JSON text, in arrival order."""
        return [json.dumps(r.body) for r in self.requests if r.body is not None]

    def _reply(self, body: dict[str, Any]) -> bytes:
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        with self._lock:
            s = self._script
            for item in items:
                if str(item.get("type", "")).endswith("_output"):
                    cid = str(item.get("call_id"))
                    if cid in s.active and cid not in s.outputs:
                        s.outputs[cid] = _output_text(item)
            n = next(self._ids)
            rid = f"resp_{n}"
            last = items[-1] if items else {}
            last_cid = str(last.get("call_id"))
            previous = ""
            if str(last.get("type", "")).endswith("_output") and last_cid in s.active:
                turn = s.active[last_cid]
                previous = s.outputs.get(last_cid, "")
            elif s.turns:
                turn = _Turn(deque(s.turns.popleft()))
            else:
                return sse_events(rid, [message_item(FINAL_TEXT, f"msg_{n}")])
            if not turn.steps:
                return sse_events(rid, [message_item(FINAL_TEXT, f"msg_{n}")])
            step = turn.steps.popleft()
            cid = f"call_{n}"
            if isinstance(step, Shell):
                tool = pick_shell_tool(body)
                if tool is None:
                    s.errors.append(f"request {n} offers no shell tool")
                    return sse_events(rid, [message_item("no shell tool", f"msg_{n}")])
                item = call_item(tool, cid, step.command)
            else:
                args = step.args if step.derive is None else step.derive(previous)
                item = {
                    "type": "function_call",
                    "id": f"fc_{cid}",
                    "call_id": cid,
                    "name": step.name,
                    "status": "completed",
                    "arguments": json.dumps(args, separators=(",", ":")),
                }
                if step.namespace is not None:
                    item["namespace"] = step.namespace
            s.active[cid] = turn
            s.issued.append((cid, step))
            return sse_events(rid, [item])


def _toml(value: Any) -> str:
    """A TOML value for a str / bool / int (all the provider entry holds)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))
