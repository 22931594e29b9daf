#!/usr/bin/env python3
"""A minimal launcher daemon that embeds profilec (docs/embedding.md), written only from the
README and that page.

For each mode (read-only, agent, agent-full-access) it starts Codex sessions two ways:

  library   profilec.api: load_and_compile (the agent's session config as data), override_lines,
            `codex app-server` with the -c lines and the mode's profile, watched in-process
            (start_watch)
  launch    the `compile --format launch` document, as written: its `codex app-server` entry
            (args, env, cwd; the mode chosen per turn with `select`) and its `codex exec` entry
            ([codex, *args, *select, prompt]), each with `profilec watch` run from watch.argv

Every session runs one turn with PROMPT, as the `trusted_parent.run_as` user (never root: when
started as root it drops to `--run-as`, default 65534, with setpriv). It prints one JSON line per
session and exits 0 when every session started, finished its turn and the watch held; 1
otherwise. The model is whatever the `-c` lines name (`--config`, repeatable): the launcher's own
provider settings.

    python3 examples/embed_daemon.py --roots /etc/agentd/roots.toml \
        --workspace-root /srv/agents/a1/ws --codex-home /srv/agents/a1/codex-home \
        --tmpdir /srv/agents/a1/tmp --home /srv/agents/a1/home \
        --codex /path/to/codex --prompt "run the tests" [--config 'model="..."' ...]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from profilec import api

MODES = ("read-only", "agent", "agent-full-access")
# The agent's own session config, as data (untrusted: profilec keeps only allow-listed keys).
AGENT_SESSION_CONFIG: dict[str, Any] = {
    "model_reasoning_effort": "low",
    "sandbox_mode": "danger-full-access",
}


class AppServer:
    """`codex app-server` over stdio: JSON-RPC lines, every server request declined."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str) -> None:
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "id" in msg and "method" in msg:  # a request to us (approval): never approve
                if msg["method"] in ("execCommandApproval", "applyPatchApproval"):
                    self._send({"id": msg["id"], "result": {"decision": "denied"}})
                elif msg["method"].endswith("/requestApproval"):
                    self._send({"id": msg["id"], "result": {"decision": "decline"}})
                else:
                    self._send(
                        {"id": msg["id"], "error": {"code": -32601, "message": "not supported"}}
                    )
                continue
            self.inbox.put(msg)
        self.inbox.put(None)

    def _send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def wait_for(self, match: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("codex app-server did not answer in time")
            msg = self.inbox.get(timeout=left)
            if msg is None:
                raise RuntimeError(f"codex app-server exited ({self.proc.wait()})")
            if "error" in msg and "id" in msg:
                raise RuntimeError(f"codex app-server: {msg['error'].get('message')}")
            if match(msg):
                return msg

    def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        self._send({"id": rid, "method": method, "params": params})
        reply = self.wait_for(lambda m: m.get("id") == rid, timeout)
        return dict(reply.get("result") or {})

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # its own session: Codex and its helpers
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def session(
    server: AppServer, cwd: str, turn_extra: dict[str, Any], prompt: str, timeout: float
) -> str:
    """initialize, thread/start, one turn; returns the turn's final status."""
    server.request(
        "initialize",
        {
            "clientInfo": {"name": "embed-daemon", "version": "1"},
            "capabilities": {"experimentalApi": True},
        },
        timeout,
    )
    server._send({"method": "initialized", "params": {}})
    thread = server.request("thread/start", {"cwd": cwd}, timeout)["thread"]["id"]
    server.request(
        "turn/start",
        {
            "threadId": thread,
            "input": [{"type": "text", "text": prompt, "text_elements": []}],
            **turn_extra,
        },
        timeout,
    )
    done = server.wait_for(lambda m: m.get("method") == "turn/completed", timeout)
    return str(done["params"]["turn"]["status"])


def as_user(argv: list[str], uid: int | None) -> list[str]:
    """The argv run as `uid` (setpriv keeps the pid), or as it is when not root."""
    if uid is None:
        return argv
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *argv]


class Watch:
    """`profilec watch` from the launch document, beside one session."""

    def __init__(self, watch: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            watch["argv"],
            env={**os.environ, **watch["env"]},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()  # blocks until it watches (or exits)
        if "watching" not in line:
            raise RuntimeError(f"profilec watch did not start: {line.strip()}")

    def stop(self) -> int:
        """SIGTERM at the session's end: 0 when nothing drifted (9 and a JSON line if it did)."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--roots", required=True)
    ap.add_argument("--workspace-root", required=True)
    ap.add_argument("--codex-home", required=True)
    ap.add_argument("--tmpdir", required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--codex", required=True, help="the codex binary (launcher_supplies)")
    ap.add_argument("--prompt", default="list the workspace")
    ap.add_argument("--config", action="append", default=[], help="extra -c line (the model)")
    ap.add_argument("--run-as", type=int, default=65534, help="uid when started as root")
    ap.add_argument("--timeout", type=float, default=120.0)
    a = ap.parse_args()
    uid = a.run_as if os.getuid() == 0 else None
    extra = [x for line in a.config for x in ("-c", line)]
    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    ok = True

    def report(path: str, launcher: str, mode: str, status: str, watch: str) -> None:
        nonlocal ok
        ok = ok and status == "completed" and watch == "held"
        print(
            json.dumps(
                {"path": path, "launcher": launcher, "mode": mode, "turn": status, "watch": watch}
            ),
            flush=True,
        )

    try:
        inputs = api.make_inputs(
            a.roots,
            workspace_roots=[a.workspace_root],
            codex_home=a.codex_home,
            tmpdir=a.tmpdir,
            home=a.home,
            session_config=AGENT_SESSION_CONFIG,
            run_as=uid,  # compiled for the uid Codex runs as: a profile that starts as that uid
        )
        bundle = api.compile_inputs(inputs)
        doc = api.launch_document(bundle, inputs=inputs)
    except api.ProfilecError as exc:  # one line, the CLI's exit code
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    ids = {p.mode: p.profile_id for p in bundle.profiles}
    cwd = doc["cwd"]

    # 1. The library path: one app-server per mode, the mode's profile as the default.
    # The launch document's env (GIT_DIR: the parent's own git off; no -c line can do that).
    parent_env = next(c["env"] for c in doc["codex"] if c["launcher"] == "codex app-server")
    env = {**base_env, **parent_env, "CODEX_HOME": a.codex_home, "TMPDIR": a.tmpdir, "HOME": a.home}
    for mode in MODES:
        drifts: list[object] = []
        handle = api.start_watch(bundle, drifts.append)
        argv = [
            a.codex,
            "app-server",
            *extra,
            *(x for line in api.override_lines(bundle) for x in ("-c", line)),
            "-c",
            f"default_permissions={json.dumps(ids[mode])}",
        ]
        server = AppServer(as_user(argv, uid), env, cwd)
        try:
            status = session(server, cwd, {}, a.prompt, a.timeout)
        except (RuntimeError, TimeoutError, queue.Empty) as exc:
            status = f"failed: {exc}"
        finally:
            server.close()
            handle.stop()
        report("library", "codex app-server", mode, status, "drift" if drifts else "held")

    # 2. The launch document, as written: first its managed requirements, installed as root
    # (watch.argv verifies them at its start and reports any later change as drift).
    entries = {c["launcher"]: c for c in doc["codex"]}
    app = entries["codex app-server"]
    req = app["requirements"]
    installed = subprocess.run(
        req["install_argv"],
        env={**os.environ, **req["install_env"]},
        capture_output=True,
        text=True,
    )
    if installed.returncode != 0:
        print(
            f"embed_daemon: requirements install failed: {installed.stderr.strip()}",
            file=sys.stderr,
        )
        return 1
    run_env = {**base_env, **app["env"]}
    if "HOME" not in run_env:
        run_env["HOME"] = a.home
    for mode in MODES:
        watch = Watch(doc["watch"])
        server = AppServer(as_user([a.codex, *app["args"], *extra], uid), run_env, app["cwd"])
        try:
            status = session(server, app["cwd"], app["modes"][mode]["select"], a.prompt, a.timeout)
        except (RuntimeError, TimeoutError, queue.Empty) as exc:
            status = f"failed: {exc}"
        finally:
            server.close()
        report("launch", "codex app-server", mode, status, "held" if watch.stop() == 0 else "drift")
    ex = entries["codex exec"]
    for mode in MODES:
        watch = Watch(doc["watch"])
        argv = [a.codex, *ex["args"], *extra, *ex["modes"][mode]["select"], a.prompt]
        try:
            done = subprocess.run(
                as_user(argv, uid),
                env={**base_env, **ex["env"], "HOME": a.home},
                cwd=ex["cwd"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=a.timeout,
            )
            status = "completed" if done.returncode == 0 else f"failed: exit {done.returncode}"
        except subprocess.TimeoutExpired:
            status = "failed: timeout"
        report("launch", "codex exec", mode, status, "held" if watch.stop() == 0 else "drift")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
