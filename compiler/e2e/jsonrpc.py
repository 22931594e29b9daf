"""A small JSON-RPC 2.0 client over a subprocess's stdio, one JSON message per "\\n"-ended line.

Public API:

    client = JsonRpcClient(argv, env=..., cwd=..., on_request=handler)
    result = client.request("initialize", {...}, timeout=30.0)   # raises RpcError / RpcTimeout
    client.notify("initialized", {})
    note = client.wait_for(lambda m: m.get("method") == "turn/completed", timeout=60.0)
    client.notifications          # list of notifications seen so far (dicts)
    client.server_requests        # list of server->client requests seen so far (dicts)
    client.transcript             # every message both ways: TranscriptEntry(direction, message)
    client.stderr_tail()          # last bytes the process wrote to stderr (decoded)
    client.close(grace=3.0)       # terminate its own pid (kill after `grace` s), then the
                                  # descendants it had and its session's members, each by pid
    (ending by pid: descendants, session_members, end_processes in profilec.procs)

The framing (split on b"\\n" only, compact JSON) is compiler/jsonrpc.py's, shared with
`profilec run`'s relay; `RpcError` is that module's too. A reader thread correlates responses
to requests by id; server->client requests go to `on_request(method, params)` whose return
value is sent back as the result (raise RpcError to answer with an error; with no handler
every server request is answered -32601). ACP speaks the same framing, so the ACP driver
reuses this client.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..jsonrpc import FramingError, RpcError, decode, encode, read_lines
from ..procs import _stat, descendants, end_processes, session_members

__all__ = ["JsonRpcClient", "RpcClosed", "RpcError", "RpcTimeout", "TranscriptEntry"]

Handler = Callable[[str, Any], Any]
Direction = Literal["out", "in"]

#: Bytes of stderr kept for diagnostics (the rest is drained and dropped).
STDERR_KEEP = 64 * 1024


class RpcTimeout(Exception):
    """No answer (or no matching message) within the timeout."""


class RpcClosed(Exception):
    """The peer's stdout ended (process exited) before the answer came."""


@dataclass(frozen=True)
class TranscriptEntry:
    """One message as sent ("out") or received ("in"), with seconds since the client started."""

    direction: Direction
    seconds: float
    message: dict[str, Any]


class JsonRpcClient:
    """Drive one child process that speaks newline-delimited JSON-RPC 2.0 on stdin/stdout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        on_request: Handler | None = None,
    ) -> None:
        self._t0 = time.monotonic()
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._pending: dict[int | str, dict[str, Any]] = {}
        self._inbox: list[dict[str, Any]] = []
        self._write_lock = threading.Lock()
        self._closed = False
        self._eof = False
        self._stderr = bytearray()
        self.on_request = on_request
        self.transcript: list[TranscriptEntry] = []
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.bad_lines: list[str] = []
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=str(cwd) if cwd is not None else None,
            start_new_session=True,
        )
        self.pid = self.proc.pid
        started = _stat(self.pid)  # its start time bounds which session members are its own
        self._started = started[1] if started else 0
        self._reader = threading.Thread(
            target=self._read_loop, name=f"jsonrpc-{self.pid}", daemon=True
        )
        self._errreader = threading.Thread(
            target=self._drain_stderr, name=f"stderr-{self.pid}", daemon=True
        )
        self._reader.start()
        self._errreader.start()

    # -- sending ------------------------------------------------------------------------------

    def _record(self, direction: Direction, message: dict[str, Any]) -> None:
        with self._lock:
            self.transcript.append(TranscriptEntry(direction, time.monotonic() - self._t0, message))

    def _send(self, message: dict[str, Any]) -> None:
        data = encode(message)
        self._record("out", message)
        stdin = self.proc.stdin
        if stdin is None:
            raise RpcClosed("stdin is closed")
        with self._write_lock:
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise RpcClosed(f"cannot write to pid {self.pid}: {exc}") from exc

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no id, no answer)."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def request(self, method: str, params: Any = None, *, timeout: float = 30.0) -> Any:
        """Send a request and wait for its response; return `result` or raise RpcError."""
        rid = next(self._ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        deadline = time.monotonic() + timeout
        with self._lock:
            self._pending[rid] = {}
        self._send(msg)
        with self._lock:
            while not self._pending[rid]:
                left = deadline - time.monotonic()
                if self._eof:
                    del self._pending[rid]
                    raise RpcClosed(f"{method}: pid {self.pid} closed its stdout")
                if left <= 0:
                    del self._pending[rid]
                    raise RpcTimeout(f"{method}: no response within {timeout:g}s")
                self._lock.wait(left)
            resp = self._pending.pop(rid)
        if "error" in resp:
            err = resp["error"] if isinstance(resp["error"], dict) else {}
            raise RpcError(int(err.get("code", 0)), str(err.get("message", "")), err.get("data"))
        return resp.get("result")

    # -- receiving ----------------------------------------------------------------------------

    def _read_loop(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        read_lines(stdout.fileno(), self._dispatch)
        with self._lock:
            self._eof = True
            self._lock.notify_all()

    def _dispatch(self, raw: bytes) -> None:
        try:
            msg = decode(raw)
        except FramingError as exc:
            with self._lock:
                self.bad_lines.append(str(exc))
            return
        if msg is None:
            return
        self._record("in", msg)
        if "method" in msg and "id" in msg:
            with self._lock:
                self.server_requests.append(msg)
                self._inbox.append(msg)
                self._lock.notify_all()
            self._answer(msg)
        elif "method" in msg:
            with self._lock:
                self.notifications.append(msg)
                self._inbox.append(msg)
                self._lock.notify_all()
        elif "id" in msg:
            with self._lock:
                rid = msg["id"]
                if rid in self._pending:
                    self._pending[rid] = msg
                else:
                    self.bad_lines.append(f"unmatched response id {rid!r}")
                self._lock.notify_all()

    def _answer(self, msg: dict[str, Any]) -> None:
        method = str(msg.get("method"))
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"]}
        if self.on_request is None:
            reply["error"] = {"code": -32601, "message": f"client does not handle {method}"}
        else:
            try:
                reply["result"] = self.on_request(method, msg.get("params"))
            except RpcError as exc:
                reply["error"] = exc.object()
            except Exception as exc:
                reply["error"] = {"code": -32603, "message": f"client handler failed: {exc}"}
        with contextlib.suppress(RpcClosed):
            self._send(reply)

    def _drain_stderr(self) -> None:
        stderr = self.proc.stderr
        assert stderr is not None
        fd = stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._stderr += chunk
                if len(self._stderr) > STDERR_KEEP:
                    del self._stderr[: len(self._stderr) - STDERR_KEEP]

    def stderr_tail(self, limit: int = 4000) -> str:
        """The last `limit` characters the process wrote to stderr."""
        with self._lock:
            return bytes(self._stderr).decode("utf-8", errors="replace")[-limit:]

    def wait_for(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        *,
        timeout: float = 30.0,
        after: int = 0,
    ) -> dict[str, Any]:
        """The first notification or server request (index >= `after` in arrival order) matching."""
        deadline = time.monotonic() + timeout
        with self._lock:
            i = after
            while True:
                while i < len(self._inbox):
                    if predicate(self._inbox[i]):
                        return self._inbox[i]
                    i += 1
                if self._eof:
                    raise RpcClosed(f"pid {self.pid} closed its stdout while waiting")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RpcTimeout(f"no matching message within {timeout:g}s")
                self._lock.wait(left)

    def mark(self) -> int:
        """The current inbox length: pass as `after=` to wait only for later messages."""
        with self._lock:
            return len(self._inbox)

    def inbox(self, after: int = 0) -> list[dict[str, Any]]:
        """Notifications and server requests received (index >= `after`), in arrival order."""
        with self._lock:
            return list(self._inbox[after:])

    # -- ending -------------------------------------------------------------------------------

    def close(self, grace: float = 3.0) -> int | None:
        """End the process by its own pid: close stdin, terminate, kill after `grace` seconds.

        Its descendants (listed before it ends: e.g. sandbox helpers Codex leaves running, which
        would otherwise be re-parented to init) and every process still in its session (what it
        spawned while shutting down) are then ended by their own pids too.
        """
        if self._closed:
            return self.proc.returncode
        self._closed = True
        tree = descendants(self.pid) if self.proc.poll() is None else []
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(grace)
        # What it spawned while shutting down is not in `tree`; it is still in its session.
        late = session_members(self.pid, not_before=self._started)
        end_processes([*tree, *(p for p in late if p not in tree)], grace)
        self._reader.join(grace)
        self._errreader.join(grace)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return self.proc.returncode

    def __enter__(self) -> JsonRpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
