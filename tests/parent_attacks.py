"""Attacks on the trusted, unsandboxed Codex parent (docs: ../shared research codex-parent.md).

A scripted model that issues arbitrary tool calls (not only shell probes), `codex exec` runs
against it, and the fixtures each road needs (a tiny PNG that carries a marker, a HOME whose
login files leave a proof, a repository enclosing the workspace). Markers are random, never a
real credential.
"""

from __future__ import annotations

import json
import os
import secrets
import struct
import subprocess
import time
import tomllib
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from profilec.e2e.model_server import (
    FINAL_TEXT,
    ScriptedModelServer,
    call_item,
    message_item,
    pick_shell_tool,
    sse_events,
)

REPO = Path(__file__).resolve().parent.parent
PARENT_POLICY = REPO / "profiles" / "parent.toml"


# ---------------------------------------------------------------------------------------------
# The scripted model


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


def _text_of(out: Any) -> str:
    if isinstance(out, str):
        return out
    if isinstance(out, dict) and isinstance(out.get("content"), str):
        return str(out["content"])
    if isinstance(out, list):
        return "".join(str(p.get("text", "")) for p in out if isinstance(p, dict))
    return json.dumps(out)


class ToolScriptServer(ScriptedModelServer):
    """The scripted model, driving whole turns of arbitrary calls.

    `add_turn([Shell("env"), Call("spawn_agent", {...}, "multi_agent_v1")])`: the next request
    that starts a turn (its last input item is not the output of one of our calls) gets the
    first step; each follow-up carrying a step's output gets the next; then a plain message ends
    the turn. A request that starts a turn with no turn queued (a sub-agent's first request, a
    later session) gets a plain message.
    """

    def __init__(self, turns: Iterable[Sequence[Step]] = ()) -> None:
        super().__init__()
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
                        s.outputs[cid] = _text_of(item.get("output"))
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
                item = {"type": "function_call", "id": f"fc_{cid}", "call_id": cid,
                        "name": step.name, "status": "completed",
                        "arguments": json.dumps(args, separators=(",", ":"))}
                if step.namespace is not None:
                    item["namespace"] = step.namespace
            s.active[cid] = turn
            s.issued.append((cid, step))
            return sse_events(rid, [item])


# ---------------------------------------------------------------------------------------------
# Fixtures


def png_with_marker(marker: str) -> bytes:
    """A valid 8x8 grey PNG whose tEXt chunk holds `marker` (and whose pixels spell it)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    width = height = 8
    pixels = (marker.encode() * 64)[: width * height]
    raw = b"".join(b"\x00" + pixels[y * width:(y + 1) * width] for y in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"tEXt", b"Comment\x00" + marker.encode())
            + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def parent_policy_keys() -> tuple[str, ...]:
    """The dotted keys profiles/parent.toml sets on the parent (the reviewed policy)."""
    with PARENT_POLICY.open("rb") as fh:
        doc = tomllib.load(fh)
    return tuple(str(s["key"]) for s in doc["settings"])


def without_keys(lines: Sequence[str], keys: Iterable[str]) -> list[str]:
    """`lines` (`-c key=value`) minus every line setting one of `keys`."""
    drop = tuple(keys)
    return [ln for ln in lines if ln.split("=", 1)[0].strip() not in drop]


@dataclass(frozen=True)
class ExecResult:
    """One `codex exec` run."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_exec(codex: Path, *, cwd: Path, lines: Sequence[str], env: dict[str, str],
             prompt: str = "run the scripted steps", timeout: float = 120.0) -> ExecResult:
    """`codex exec` with every `-c` line, in `cwd`, stdin closed; never raises on exit status."""
    args = [str(codex), "exec", "--skip-git-repo-check", "--color", "never", "-C", str(cwd)]
    for line in lines:
        args += ["-c", line]
    args.append(prompt)
    start = time.monotonic()
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    return ExecResult(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def base_env(home: Path, codex_home: Path, tmpdir: Path) -> dict[str, str]:
    """A minimal launcher environment."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "CODEX_HOME": str(codex_home), "TMPDIR": str(tmpdir), "LANG": "C.UTF-8"}


def new_marker(tag: str) -> str:
    """A fresh random marker."""
    return f"PROFILEC-{tag}-{secrets.token_hex(12)}"
