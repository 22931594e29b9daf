"""Ask the real Codex how it compiles a permission profile (`codex debug prompt-input`).

Used by the oracle tests to check `profilec.evaluate` against Codex itself. The profile goes in
as `-c` inline-table overrides (Codex splits `-c` keys on `.` with no quoting, so every path
and `:token` sits inside a value), and the `<permission_profile>` element of the printed
`<environment_context>` is parsed back into entries.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
import os
import re
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from profilec.procs import end_processes, session_members, start_time

T = TypeVar("T")
R = TypeVar("R")

OracleKind = Literal["path", "special", "glob"]

_ENTRY_RE = re.compile(
    r'<entry access="(?P<access>[a-z]+)"[^>]*><(?P<kind>path|special|glob)>'
    r"(?P<value>.*?)</(?P=kind)></entry>"
)
_PROFILE_RE = re.compile(r'<permission_profile type="(?P<type>[a-z_]+)">')
_NETWORK_RE = re.compile(r"Network access is (?P<state>[a-z]+)")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class OracleEntry:
    """One entry as Codex printed it; specials stay unexpanded (`:root`, `:tmpdir`, ...)."""

    kind: OracleKind
    value: str
    access: str


@dataclass(frozen=True, slots=True)
class OracleResult:
    """What Codex made of a profile, or the error it refused it with."""

    ok: bool
    error: str | None
    profile_type: str | None  # "managed" | "disabled"
    unrestricted: bool
    entries: tuple[OracleEntry, ...]
    network_enabled: bool | None
    workspace_roots: tuple[str, ...]


def toml_inline(value: object) -> str:
    """Render a Python value as a TOML inline value (strings, bools, ints, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite float")
        return repr(value)
    if isinstance(value, str):
        # A JSON string is a valid TOML basic string for the characters we emit.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        parts = [f"{_toml_key(str(k))}={toml_inline(v)}" for k, v in value.items()]
        return "{" + ", ".join(parts) + "}"
    raise TypeError(f"cannot render {type(value).__name__} as TOML")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def overrides(permissions: Mapping[str, object], profile_id: str) -> list[str]:
    """The `-c` arguments selecting `profile_id` with `permissions` defined."""
    args = ["-c", f"default_permissions={toml_inline(profile_id)}"]
    if permissions:
        args += ["-c", f"permissions={toml_inline(permissions)}"]
    return args


def parse_prompt_input(stdout: str) -> OracleResult:
    """Parse prompt-input JSON: the permission profile entries and the network state."""
    items = json.loads(stdout)
    env_text = ""
    network: bool | None = None
    for item in items:
        for part in item.get("content", []) if isinstance(item, dict) else []:
            text = part.get("text", "") if isinstance(part, dict) else ""
            if "<environment_context>" in text:
                env_text = text
            m = _NETWORK_RE.search(text)
            if m and network is None:
                network = m.group("state") == "enabled"
    pm = _PROFILE_RE.search(env_text)
    if pm is None:
        return OracleResult(
            False, "no <permission_profile> in output", None, False, (), network, ()
        )
    unrestricted = '<file_system type="unrestricted"' in env_text
    entries = tuple(
        OracleEntry(
            kind=m.group("kind"),  # type: ignore[arg-type]  # regex limits it to the 3 kinds
            value=html.unescape(m.group("value")),
            access=m.group("access"),
        )
        for m in _ENTRY_RE.finditer(env_text)
    )
    ws = re.search(r"<workspace_roots>(.*?)</workspace_roots>", env_text)
    roots = (
        tuple(html.unescape(r) for r in re.findall(r"<root>(.*?)</root>", ws.group(1)))
        if ws
        else ()
    )
    return OracleResult(True, None, pm.group("type"), unrestricted, entries, network, roots)


def error_line(stderr: str) -> str:
    """The `Error: ...` line Codex printed (LF-split, never splitlines), else the first line."""
    lines = [ln for ln in stderr.split("\n") if ln.strip()]
    for ln in lines:
        if ln.startswith("Error: "):
            return ln[len("Error: ") :]
    return lines[0] if lines else "codex failed without a message"


@dataclass(frozen=True, slots=True)
class CodexEnv:
    """A throwaway environment for one codex run: all paths absolute and private."""

    codex: Path
    cwd: str
    home: str
    codex_home: str
    tmpdir: str | None
    add_dirs: tuple[str, ...] = ()


def prompt_input(
    env: CodexEnv,
    permissions: Mapping[str, object],
    profile_id: str,
    *,
    timeout: float = 30.0,
    skip_project_docs: bool = True,
) -> OracleResult:
    """Run `codex debug prompt-input` for one profile and parse what it compiled."""
    argv = [str(env.codex), "-C", env.cwd]
    for d in env.add_dirs:
        argv += ["--add-dir", d]
    argv += ["debug", "prompt-input", *overrides(permissions, profile_id)]
    if skip_project_docs:
        # AGENTS.md is loaded through a bwrap helper under the profile; a profile bwrap cannot
        # build (e.g. a deny nested in a denied dir) then fails prompt-input. Skipping the docs
        # keeps this a pure config compile; canaries cover the run-time side.
        argv += ["-c", "project_doc_max_bytes=0"]
    argv.append("hi")
    # A minimal env: no inherited CODEX_*, proxies or config from the caller.
    child_env = {"PATH": "/usr/bin:/bin", "HOME": env.home, "CODEX_HOME": env.codex_home}
    if env.tmpdir is not None:
        child_env["TMPDIR"] = env.tmpdir
    rc, stdout, stderr = run_in_session(argv, cwd=env.cwd, env=child_env, timeout=timeout)
    if rc != 0:
        return OracleResult(False, error_line(stderr), None, False, (), None, ())
    return parse_prompt_input(stdout)


def run_in_session(
    argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout: float
) -> tuple[int, str, str]:
    """Run `argv` to its end in a session of its own and return (exit, stdout, stderr); then
    end what it left in that session (the sandbox helpers Codex leaves behind, re-parented to
    init), by pid and start time, so no helper outlives the call."""
    child = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    born = start_time(child.pid) or 0
    try:
        out, err = child.communicate(timeout=timeout)
    finally:
        end_processes([(child.pid, born), *session_members(child.pid, not_before=born)], 2.0)
        if child.poll() is None:
            child.kill()
        child.wait()
    return child.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def map_per_home(
    fn: Callable[[T, str], R], items: Sequence[T], base_home: str, *, workers: int
) -> list[R]:
    """`fn(item, codex_home)` for every item, `workers` at a time, in input order.

    Each worker thread has its own CODEX_HOME (`<base_home>/w<n>`). Codex 0.171.0 must not be
    started twice at once on one CODEX_HOME: each start's janitor locks and deletes the other
    starts' unlocked `tmp/path2/codex-arg0*` dirs, and a start whose dir it takes between the
    dir's creation and its lock fails with "could not create PATH aliases: operation would
    block"; that process then cannot find `codex-linux-sandbox` (measured in CI, 1 case in 686).
    """
    local = threading.local()
    lock = threading.Lock()
    made: list[str] = []

    def home() -> str:
        if not hasattr(local, "home"):
            with lock:
                local.home = os.path.join(base_home, f"w{len(made)}")
                made.append(local.home)
            os.makedirs(local.home, exist_ok=True)
        return str(local.home)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(lambda item: fn(item, home()), items))


def prompt_input_many(
    env: CodexEnv,
    cases: Sequence[tuple[Mapping[str, object], str]],
    *,
    workers: int = 2,
) -> list[OracleResult]:
    """Run many cases, `workers` at a time, keeping input order; one CODEX_HOME per worker."""
    return map_per_home(
        lambda c, h: prompt_input(dataclasses.replace(env, codex_home=h), c[0], c[1]),
        cases,
        env.codex_home,
        workers=workers,
    )
