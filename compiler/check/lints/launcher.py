"""Launcher requests: what a launcher sends to `codex app-server`, linted for PC023.

`profilec check --launch-requests FILE` reads JSON Lines, one JSON-RPC message per line (split
on "\\n" only), as a launcher logs the requests it sends, or as profilec.e2e.jsonrpc's
transcript holds them (schemas/launch-request.schema.json describes one line; responses, i.e.
lines without `method`, are skipped). PC023 fires for every request that carries a legacy
sandbox field: `sandboxPolicy` on turn/start, thread/settings/update or command/exec, `sandbox`
on thread/start, thread/resume or thread/fork. The e2e run (docs/e2e.md) observed on Codex
0.171.0 that such a request replaces the active permission profile (activePermissionProfile
null): a turn/start readOnly or workspaceWrite policy keeps only the profile's deny entries,
dangerFullAccess drops the deny as well, and a `sandbox` (any mode) on thread/start, thread/fork
or thread/resume drops it too.

    text = edge.text(path, "launch requests")   # read through the run's edge (Inputs)
    requests = parse_launch_requests(text, where=path)  # InputError (exit 2) on a bad line
    findings = launcher_findings(requests, file=path)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...codex.vocabulary import UNSANDBOXED
from ...errors import InputError
from ...models.check import CheckFinding
from ...paths import PARENT_GIT_DIR
from ...rule_ids import (
    LEGACY_SANDBOX_REQUEST,
    PARENT_GIT_ON,
    PARENT_LISTENER,
    PROFILE_ONLY_IN_SESSION_CONFIG,
    SECRET_ON_PARENT_ARGV,
)
from ..context import LintContext, lint
from ..rules import rule, rule_by_id

rule(
    LEGACY_SANDBOX_REQUEST,
    "legacy-sandbox-request",
    "error",
    "a launcher request carries a legacy sandboxPolicy (turn/start) or sandbox (thread/start)",
    "Codex replaces the active permission profile (activePermissionProfile null): a "
    "turn/start readOnly or workspaceWrite policy keeps only its deny entries; "
    "dangerFullAccess, and a sandbox of any mode on thread/start, fork or resume, drop the "
    "deny too "
    "(observed by profilec e2e on 0.171.0, docs/e2e.md)",
    "send `permissions: <profile id>` (experimentalApi) or no sandbox field; with "
    "agentclientprotocol/codex-acp stay in a permission-profile:<id> mode",
    waivable=False,
)


RULE = LEGACY_SANDBOX_REQUEST
#: Request method -> its legacy sandbox field.
LEGACY_FIELDS: dict[str, str] = {
    "turn/start": "sandboxPolicy",
    "thread/settings/update": "sandboxPolicy",
    "command/exec": "sandboxPolicy",
    "thread/start": "sandbox",
    "thread/resume": "sandbox",
    "thread/fork": "sandbox",
}


@dataclass(frozen=True, slots=True)
class LaunchRequest:
    """One request a launcher sends (1-based line in its file)."""

    line: int
    method: str
    params: dict[str, Any]


def parse_launch_requests(text: str, *, where: str) -> tuple[LaunchRequest, ...]:
    """Every request line of a JSON Lines text; blank lines and responses are skipped."""
    out: list[LaunchRequest] = []
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            msg = json.loads(raw)
        except ValueError as exc:
            raise InputError(f"not JSON: {exc}", where=f"{where}:{n}") from None
        if not isinstance(msg, dict):
            raise InputError("a line must be a JSON object", where=f"{where}:{n}")
        if "method" not in msg:
            if "id" in msg and ("result" in msg or "error" in msg):
                continue  # a response in a transcript
            raise InputError("a request needs a string `method`", where=f"{where}:{n}")
        method, params = msg["method"], msg.get("params", {})
        if not isinstance(method, str):
            raise InputError("`method` must be a string", where=f"{where}:{n}")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise InputError("`params` must be an object", where=f"{where}:{n}")
        out.append(LaunchRequest(n, method, params))
    return tuple(out)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("type", "object"))
    return str(value)


def launcher_findings(
    requests: Sequence[LaunchRequest], *, file: str | None = None
) -> list[CheckFinding]:
    """PC023 for each request that carries a legacy sandbox field."""
    out: list[CheckFinding] = []
    for r in requests:
        field = LEGACY_FIELDS.get(r.method)
        if field is None or r.params.get(field) is None:
            continue
        kind = _kind(r.params[field])
        if field == "sandbox":
            effect = "the thread runs the legacy sandbox, not the profile; its deny is dropped"
        elif kind in UNSANDBOXED:
            effect = "the profile and its deny are dropped (no sandbox)"
        else:
            effect = (
                "the profile is replaced; only its deny entries survive (read-only holder "
                "directories and the rest are dropped)"
            )
        out.append(
            CheckFinding(
                rule=RULE,
                severity=rule_by_id(RULE).severity,
                message=f"{r.method} sends legacy {field} {kind}: {effect}",
                file=file,
                line=r.line,
            )
        )
    return out


rule(
    PARENT_LISTENER,
    "parent-listener",
    "error",
    "the trusted parent is started with a network listener (app-server --listen ws:// or tcp)",
    "measured on 0.171.0: in agent-full-access a model command found the port in /proc/net/tcp, "
    "connected, and getAuthStatus {includeToken: true} answered with the token; with "
    "--ws-auth capability-token the token file sat where the model could read it "
    "(docs/parent.md)",
    "talk to app-server over stdio (the default; --format launch does); a unix:// socket under "
    "/tmp/codex-daemon-<uid>/ is masked in every sandbox",
    waivable=False,
)

rule(
    SECRET_ON_PARENT_ARGV,
    "secret-on-parent-argv",
    "error",
    "a secret sits on the trusted parent's command line",
    "in a container whose seccomp profile keeps Codex from mounting a fresh /proc, the parent's "
    "argv is readable to model commands (measured on 0.171.0; environ and memory are not)",
    "pass the secret in the environment or a 0600 file the sandbox denies (profilec emits a "
    "vouched MCP server's credential into CODEX_HOME/config.toml, denied in every mode)",
    waivable=False,
)

#: Parts of a `-c` key (or a flag) that name a secret; matched case-insensitively.
_SECRET_WORDS = (
    "token",
    "secret",
    "password",
    "passwd",
    "api_key",
    "apikey",
    "bearer",
    "authorization",
    "credential",
    "private_key",
    "cookie",
)
#: Listener values the sandbox cannot reach (stdio, or a unix socket Codex masks).
_SAFE_LISTEN = ("stdio", "stdio://", "unix://", "off")


def load_launch_argv(path: str, text: str) -> list[tuple[str, list[str]]]:
    """(label, argv) pairs from a JSON array of strings, or a `--format launch` document (each
    adapter's `args`), as read from `path`."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InputError(f"cannot read the launch argv: {exc}", where=path) from None
    if isinstance(doc, list) and all(isinstance(a, str) for a in doc):
        return [("argv", list(doc))]
    if isinstance(doc, dict) and isinstance(doc.get("adapters"), list):
        out: list[tuple[str, list[str]]] = []
        for i, a in enumerate(doc["adapters"]):
            args = a.get("args", []) if isinstance(a, dict) else []
            if isinstance(args, list) and all(isinstance(x, str) for x in args):
                name = a.get("adapter") or a.get("name") or f"adapters[{i}]"
                out.append((str(name), list(args)))
        return out
    raise InputError("expected a JSON array of arguments or a --format launch document", where=path)


def _secret_key(key: str) -> bool:
    low = key.lower().replace("-", "_")
    return any(w in low for w in _SECRET_WORDS)


def argv_findings(
    argvs: Sequence[tuple[str, list[str]]], *, file: str | None = None
) -> list[CheckFinding]:
    """PC048 for a network listener, PC049 for a secret on the argv (names only reported)."""
    out: list[CheckFinding] = []

    def add(rule_id: str, message: str) -> None:
        out.append(
            CheckFinding(
                rule=rule_id, severity=rule_by_id(rule_id).severity, message=message, file=file
            )
        )

    for label, argv in argvs:
        for i, arg in enumerate(argv):
            nxt = argv[i + 1] if i + 1 < len(argv) else ""
            if arg == "--listen" or arg.startswith("--listen="):
                value = arg.split("=", 1)[1] if "=" in arg else nxt
                if not value.startswith(_SAFE_LISTEN):
                    add(
                        PARENT_LISTENER,
                        f"{label}: --listen {value}: a model command with network "
                        "can connect to the parent",
                    )
            if arg in ("-c", "--config") and "=" in nxt:
                key, value = nxt.split("=", 1)
                if _secret_key(key) or "bearer " in value.lower():
                    add(
                        SECRET_ON_PARENT_ARGV,
                        f"{label}: -c {key}=<{len(value)} characters> carries a "
                        "secret on the parent's argv",
                    )
            elif arg.startswith("--") and "=" in arg and _secret_key(arg.split("=", 1)[0]):
                add(
                    SECRET_ON_PARENT_ARGV,
                    f"{label}: {arg.split('=', 1)[0]}=<value> on the parent's argv",
                )
            elif arg.startswith("--") and _secret_key(arg) and nxt and not nxt.startswith("-"):
                add(SECRET_ON_PARENT_ARGV, f"{label}: {arg} <value> on the parent's argv")
    return out


rule(
    PARENT_GIT_ON,
    "parent-git-on",
    "error",
    "the trusted parent's environment does not turn its own git off (GIT_DIR)",
    "at every turn start the parent runs git in the session cwd outside the sandbox, and git "
    "runs the filters of the repository it finds there: one the model planted below a "
    "workspace root, or a worktree's common dir, ran as the parent (measured on 0.171.0 and "
    "0.166.0: a launcher that followed the README's steps and `-c` recipe without GIT_DIR "
    "leaked the credential). No Codex config key sets the parent's environment",
    f"set GIT_DIR={PARENT_GIT_DIR} in the environment the launcher starts the adapter or Codex "
    "with (every launch document entry's env has it), and give that environment to check "
    "with --launch-env FILE",
    waivable=False,
)

#: A GIT_DIR below a character device can never exist: the parent's git finds no repository.
_NEVER_EXISTS = "/dev/null/"


def load_launch_env(path: str, text: str) -> list[tuple[str, dict[str, str]]]:
    """(label, environment) pairs from a JSON object of strings (the parent's environment as
    the launcher sets it), or a `--format launch` document (each holding adapter entry's and
    each codex entry's `env`), as read from `path`."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InputError(f"cannot read the launch environment: {exc}", where=path) from None
    if isinstance(doc, dict) and all(isinstance(v, str) for v in doc.values()):
        return [("env", dict(doc))]
    envs = document_envs(doc)
    if envs is None:
        raise InputError(
            "expected a JSON object of environment variables or a --format launch document",
            where=path,
        )
    return envs


def document_envs(doc: Any) -> list[tuple[str, dict[str, str]]] | None:
    """Each entry's `env` of a `--format launch` document (an adapter entry that holds, and
    each plain codex entry); None when `doc` is not one."""
    if not isinstance(doc, dict) or not isinstance(doc.get("adapters"), list):
        return None
    out: list[tuple[str, dict[str, str]]] = []
    for group in ("adapters", "codex"):
        entries = doc.get(group)
        for i, e in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(e, dict) or e.get("holds") is False:
                continue
            env = e.get("env")
            name = e.get("package") or e.get("launcher") or f"{group}[{i}]"
            label = str(name)
            if "version" in e:
                label += f" {e['version']} (codex {e.get('codex_version')})"
            out.append((label, dict(env) if isinstance(env, dict) else {}))
    return out


def env_findings(
    envs: Sequence[tuple[str, dict[str, str]]] | None, *, file: str | None = None
) -> list[CheckFinding]:
    """PC052 for an environment without a GIT_DIR that can never exist; `envs` None: a launch
    was given (--launch-argv) but not its environment."""
    severity = rule_by_id(PARENT_GIT_ON).severity
    if envs is None:
        message = "the launch's environment was not given, so nothing shows GIT_DIR is set"
        return [CheckFinding(rule=PARENT_GIT_ON, severity=severity, message=message, file=file)]
    out: list[CheckFinding] = []
    for label, env in envs:
        git_dir = env.get("GIT_DIR")
        if git_dir is not None and git_dir.startswith(_NEVER_EXISTS):
            continue
        what = "no GIT_DIR" if git_dir is None else f"GIT_DIR={git_dir}, a path that may exist"
        message = f"{label}: {what}: the parent's git runs a planted repository's filters"
        out.append(CheckFinding(rule=PARENT_GIT_ON, severity=severity, message=message, file=file))
    return out


rule(
    PROFILE_ONLY_IN_SESSION_CONFIG,
    "profile-only-in-session-config",
    "error",
    "the profiles live only in CODEX_CONFIG (thread config), not in a config layer",
    "agentclientprotocol/codex-acp lists permission-profile:<id> modes only for profiles in "
    "$CODEX_HOME/config.toml or app-server -c; otherwise it stays in `agent` mode and sends "
    "a legacy sandboxPolicy on every turn, which replaces the profile and its denies",
    "write a CODEX_HOME (profilec compile --format codex-home) and set "
    "INITIAL_AGENT_MODE=permission-profile:<id>, or pass -c to app-server",
    waivable=False,
)


@lint
def _launcher(o: LintContext) -> None:
    inp = o.inp
    stack = inp.stack
    config_layers = stack.profiles_defined_in("config-toml", "cli-override")
    session_only = sorted(
        pid
        for pid in set(inp.mode_map.values())
        if pid in stack.profiles_defined_in("session") and pid not in config_layers
    )
    for pid in session_only:
        layer = stack.layer_defining(pid)
        o.add(
            PROFILE_ONLY_IN_SESSION_CONFIG,
            f"profile {pid} is defined only in {layer.name if layer else 'session'}; "
            "agentclientprotocol/codex-acp replaces it with a per-turn sandboxPolicy",
            layer=layer,
            needles=(pid,),
            profile=pid,
        )
