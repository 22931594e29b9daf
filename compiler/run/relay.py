"""The ACP relay: the line relay between the client and the adapter that enforces what the
launch document only says.

`RelayPolicy` decides, message by message (pure: tests drive it with dicts):

- client -> adapter: `session/set_mode` and `session/set_config_option` with `configId: "mode"`
  to any id but the compiled `permission-profile:<id>` modes are answered with an error that
  says why and never forwarded; `session/new`, `load`, `resume` and `fork` whose `cwd` is not a
  compiled workspace root by real path (`os.path.realpath` against the compiled canonical
  roots) or that list any `additionalDirectories` are refused the same way (a directory the
  adapter opens a session in, or adds, becomes a trusted project whose `.codex/` config layer
  would load above profilec's); an accepted `cwd` is forwarded as the canonical root, the path
  the boundary binds. `providers/set` and `providers/disable` are refused: the model provider
  is the launcher's (`--provider-config`), never the client's. A line that is not one JSON
  object is answered with a parse error and dropped; every forwarded message is re-encoded
  from what was checked, so the adapter parses exactly that.
- adapter -> client: `initialize`'s capabilities lose `additionalDirectories` and
  `providers` (the relay refuses both); every mode list (`modes.availableModes`) and the
  `mode` config option's choices (flat or grouped) in responses and `session/update`
  notifications are cut to the allowed ids. A session whose current mode is not allowed is
  closed to the client: the response that opened it becomes an error, a later update is
  dropped, and every request naming it is refused.

`Relay` runs the policy over two byte streams each way (one thread each way); `send_client`
lets the supervisor tell the client why the session ended.
"""

from __future__ import annotations

import contextlib
import copy
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any

from ..jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    FramingError,
    RpcError,
    decode,
    encode,
    error_response,
    read_lines,
)

#: The methods that open a session in a directory.
OPENING = ("session/new", "session/load", "session/resume", "session/fork")
#: The methods that would change the model provider the launcher chose.
PROVIDER_METHODS = ("providers/set", "providers/disable")
#: The id of codex-acp's mode config option (`session/set_config_option`).
MODE_CONFIG_ID = "mode"
#: Error code of a refusal (JSON-RPC "invalid params": the request names what is not offered).
REFUSED = INVALID_PARAMS

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with one client message: forward `forward` (None: nothing), answer `reply`."""

    forward: Message | None = None
    reply: Message | None = None


def refusal(rid: Any, why: str) -> Message:
    """The error response refusing request `rid`, saying `why`."""
    return error_response(rid, RpcError(REFUSED, f"profilec run: {why}"))


@dataclass(slots=True)
class RelayPolicy:
    """The modes offered and the directories a session may open in (both from the compile).

    `modes`: the ACP mode ids of the compiled profiles (`permission-profile:<id>`); `roots`: the
    compiled canonical workspace roots. Holds the sessions closed to the client (a current
    mode outside `modes`) and the requests it forwarded that open a session."""

    modes: frozenset[str]
    roots: tuple[str, ...]
    closed: set[str] = field(default_factory=set)
    opening: set[Any] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- client -> adapter --------------------------------------------------------------------

    def from_client(self, msg: Message) -> Verdict:
        """Forward `msg` (re-encoded, maybe with its cwd made canonical) or refuse it."""
        method = msg.get("method")
        if not isinstance(method, str):
            return Verdict(forward=msg)  # a response to the adapter's request
        rid = msg.get("id")
        params = msg.get("params")
        why = self._refusal(method, params if isinstance(params, dict) else {})
        if why is not None:
            # A refused notification gets no answer (JSON-RPC): it is dropped.
            return Verdict(reply=refusal(rid, why) if "id" in msg else None)
        if method in OPENING:
            msg = copy.deepcopy(msg)
            msg["params"]["cwd"] = self._root_of(msg["params"]["cwd"])
            with self._lock:
                self.opening.add(rid)
        return Verdict(forward=msg)

    def _refusal(self, method: str, params: dict[str, Any]) -> str | None:
        """Why `method` with `params` is refused (None: forwarded)."""
        sid = params.get("sessionId")
        with self._lock:
            if isinstance(sid, str) and sid in self.closed:
                return (
                    f"session {sid} is closed: the adapter put it in a mode that is not a "
                    "compiled permission-profile mode"
                )
        if method == "session/set_mode":
            return self._mode_refusal(params.get("modeId"), "session/set_mode modeId")
        if method == "session/set_config_option" and params.get("configId") == MODE_CONFIG_ID:
            return self._mode_refusal(params.get("value"), 'session/set_config_option "mode"')
        if method in PROVIDER_METHODS:
            return (
                f"{method} is refused: the model provider is the launcher's "
                "(profilec run --provider-config), never the client's"
            )
        if method in OPENING:
            return self._cwd_refusal(method, params)
        return None

    def _mode_refusal(self, mode: object, what: str) -> str | None:
        if isinstance(mode, str) and mode in self.modes:
            return None
        return (
            f"{what} {mode!r} is refused: only the compiled permission-profile modes are "
            f"offered ({', '.join(sorted(self.modes))}); any other mode may drop the "
            "credential deny"
        )

    def _cwd_refusal(self, method: str, params: dict[str, Any]) -> str | None:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not cwd.startswith("/"):
            return f"{method} needs an absolute cwd that is a workspace root, got {cwd!r}"
        if self._root_of(cwd) is None:
            return (
                f"{method} cwd {cwd!r} is refused: a session opens only in a workspace root "
                f"({', '.join(self.roots)}), by real path; a project config below it would load "
                "above profilec's"
            )
        extra = params.get("additionalDirectories")
        if extra:
            return (
                f"{method} additionalDirectories {extra!r} are refused: profilec run opens "
                "sessions with none (each would be a trusted project whose config layer loads)"
            )
        return None

    def _root_of(self, cwd: str) -> str | None:
        """The compiled root `cwd` is by real path (None: it is none of them)."""
        real = os.path.realpath(cwd)
        return next((r for r in self.roots if r == real), None)

    # -- adapter -> client --------------------------------------------------------------------

    def from_agent(self, msg: Message) -> Message | None:
        """`msg` with the mode lists cut to the allowed modes (None: dropped)."""
        if "method" in msg:
            return self._notification(msg)
        rid = msg.get("id")
        opened = False
        if _valid_id(msg):  # else no request of the client has its id; it is filtered all the same
            with self._lock:
                opened = rid in self.opening
                self.opening.discard(rid)
        result = msg.get("result")
        if not isinstance(result, dict):
            return msg
        msg = copy.deepcopy(msg)
        _withhold_capabilities(msg["result"])
        current = self._filter_state(msg["result"])
        if opened and current is not None:
            sid = result.get("sessionId")
            with self._lock:
                if isinstance(sid, str):
                    self.closed.add(sid)
            return refusal(
                rid,
                f"the adapter opened the session in mode {current!r}, which is not a compiled "
                "permission-profile mode; it stays closed",
            )
        return msg

    def _notification(self, msg: Message) -> Message | None:
        params = msg.get("params")
        if msg.get("method") != "session/update" or not isinstance(params, dict):
            return msg
        update = params.get("update")
        if not isinstance(update, dict):
            return msg
        msg = copy.deepcopy(msg)
        update = msg["params"]["update"]
        kind = update.get("sessionUpdate")
        bad = None
        if kind == "current_mode_update":
            mode = update.get("currentModeId")
            bad = None if mode in self.modes else mode
        else:
            bad = self._filter_state(update)
        if bad is not None:
            sid = params.get("sessionId")
            with self._lock:
                if isinstance(sid, str):
                    self.closed.add(sid)
            return None
        return msg

    def _filter_state(self, holder: dict[str, Any]) -> str | None:
        """Cut `holder`'s `modes` and `configOptions` to the allowed modes in place; the
        current mode when it is not allowed (None: it is, or there is none)."""
        bad: str | None = None
        modes = holder.get("modes")
        if isinstance(modes, dict):
            available = modes.get("availableModes")
            if isinstance(available, list):
                modes["availableModes"] = [m for m in available if self._allowed_entry(m, "id")]
            current = modes.get("currentModeId")
            if current is not None and current not in self.modes:
                bad = str(current)
        options = holder.get("configOptions")
        if isinstance(options, list):
            for option in options:
                if isinstance(option, dict) and MODE_CONFIG_ID in (
                    option.get("id"),
                    option.get("configId"),
                ):
                    current = option.get("currentValue")
                    if current not in self.modes:
                        bad = bad or str(current)
                    option["options"] = self._filter_choices(option.get("options"))
        return bad

    def _filter_choices(self, choices: object) -> list[Any]:
        """The mode option's choices, flat or grouped, cut to the allowed ids (empty groups
        dropped)."""
        out: list[Any] = []
        for choice in choices if isinstance(choices, list) else []:
            if isinstance(choice, dict) and isinstance(choice.get("options"), list):
                kept = [c for c in choice["options"] if self._allowed_entry(c, "value")]
                if kept:
                    out.append({**choice, "options": kept})
            elif self._allowed_entry(choice, "value"):
                out.append(choice)
        return out

    def _allowed_entry(self, entry: object, key: str) -> bool:
        return isinstance(entry, dict) and entry.get(key) in self.modes


class Relay:
    """The policy over two newline-delimited JSON-RPC streams: the client's (`client_in`,
    `client_out`) and the adapter's stdio (`agent_in`: its stdin, `agent_out`: its stdout).

    `start()` runs one thread each way; `client_done` is set when the client's input ends
    (then the adapter's stdin is closed), `agent_done` when the adapter's stdout ends."""

    def __init__(
        self,
        policy: RelayPolicy,
        *,
        client_in: IO[bytes],
        client_out: IO[bytes],
        agent_in: IO[bytes],
        agent_out: IO[bytes],
    ) -> None:
        self.policy = policy
        self._client_in, self._client_out = client_in, client_out
        self._agent_in, self._agent_out = agent_in, agent_out
        self._client_lock = threading.Lock()
        self._agent_lock = threading.Lock()
        self.client_done = threading.Event()
        self.agent_done = threading.Event()
        #: Every refusal sent (the error responses), for the caller's log.
        self.refused: list[Message] = []
        #: Ids of the client's forwarded requests the adapter has not answered yet.
        self._pending: dict[Any, None] = {}
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start relaying both ways."""
        for target, name in ((self._pump_client, "client"), (self._pump_agent, "adapter")):
            thread = threading.Thread(target=target, name=f"profilec-relay-{name}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def send_client(self, msg: Message) -> bool:
        """Write one message to the client (False: its output is gone)."""
        return _write(self._client_out, self._client_lock, [msg])

    def fail_pending(self, why: str) -> None:
        """Answer every request the adapter has not answered with an error saying `why`."""
        with self._agent_lock:
            pending, self._pending = list(self._pending), {}
        for rid in pending:
            self.send_client(error_response(rid, RpcError(INTERNAL_ERROR, why)))

    def join(self, timeout: float | None = None) -> None:
        """Wait for both pumps (each ends at its input's end)."""
        for thread in self._threads:
            thread.join(timeout)

    def _pump_client(self) -> None:
        try:
            read_lines(self._client_in.fileno(), self._on_client_line)
        finally:
            self.client_done.set()
            with self._agent_lock:
                _close(self._agent_in)

    def _on_client_line(self, raw: bytes) -> None:
        try:
            msg = decode(raw)
        except FramingError as exc:
            self._refuse(error_response(None, RpcError(PARSE_ERROR, f"not one JSON object: {exc}")))
            return
        if msg is None:
            return
        if msg.get("jsonrpc") != "2.0" or not _valid_id(msg):
            why = RpcError(INVALID_REQUEST, "profilec run: not a JSON-RPC 2.0 message")
            self._refuse(error_response(msg.get("id"), why))
            return
        verdict = self.policy.from_client(msg)
        if verdict.reply is not None:
            self._refuse(verdict.reply)
        out = verdict.forward
        if out is not None:
            with self._agent_lock:
                if "method" in out and "id" in out:
                    self._pending[out["id"]] = None
            _write(self._agent_in, self._agent_lock, [out])

    def _refuse(self, reply: Message) -> None:
        self.refused.append(reply)
        self.send_client(reply)

    def _pump_agent(self) -> None:
        try:
            read_lines(self._agent_out.fileno(), self._on_agent_line)
        finally:
            self.agent_done.set()

    def _on_agent_line(self, raw: bytes) -> None:
        try:
            msg = decode(raw)
        except FramingError:
            return  # the adapter's noise is not the client's to parse
        if msg is None:
            return
        if "method" not in msg and _valid_id(msg):
            with self._agent_lock:
                self._pending.pop(msg.get("id"), None)
        out = self.policy.from_agent(msg)
        if out is not None:
            self.send_client(out)


def _write(stream: IO[bytes], lock: threading.Lock, messages: Iterable[Message]) -> bool:
    data = b"".join(encode(m) for m in messages)
    with lock:
        try:
            stream.write(data)
            stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            return False
    return True


def _close(stream: IO[bytes]) -> None:
    with contextlib.suppress(OSError):
        stream.close()


def _valid_id(msg: Message) -> bool:
    """A JSON-RPC id is a string, a number or null (a bool, list or object is none)."""
    rid = msg.get("id")
    return rid is None or (isinstance(rid, str | int | float) and not isinstance(rid, bool))


def _withhold_capabilities(result: dict[str, Any]) -> None:
    """`initialize`'s answer without what the relay refuses: `additionalDirectories` on
    sessions and the client's choice of provider (`providers`)."""
    caps = result.get("agentCapabilities")
    if not isinstance(caps, dict):
        return
    caps.pop("providers", None)
    sessions = caps.get("sessionCapabilities")
    if isinstance(sessions, dict):
        sessions.pop("additionalDirectories", None)


def allowed_modes(profile_ids: Iterable[str]) -> frozenset[str]:
    """The ACP mode ids of the compiled profiles: `permission-profile:<id>`."""
    return frozenset(f"permission-profile:{pid}" for pid in profile_ids)
