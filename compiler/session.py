"""Untrusted session config (the JSON a launcher passes on as CODEX_CONFIG).

An agent definition's config reaches the trusted Codex parent, which runs `mcp_servers` and
`notify` programs itself (outside the command sandbox) and sends the bearer token wherever
`chatgpt_base_url` or a provider's `base_url` points. So a session config passes through an
allow-list, not a deny-list: a top-level key passes only if `profiles/session-allowlist.toml`
lists it with the value type Codex reads. Everything else is stripped and reported by dotted
key path with its class (`CLASSES`); a key Codex 0.171.0 does not know is `unknown`, and an
allowed key whose value has another type (or that a dotted key sets as a table) is `wrong-type`,
reported with the type the allow-list names and the type it got (`wrong_type`).

`KNOWN_KEYS` is the reviewed classification of every top-level field of Codex 0.171.0's
ConfigToml (read from the binary's serde field list, "struct ConfigToml with 109 elements",
and cross-read with codex-rs/core/config.schema.json; see docs/session-config.md). An allow-list
entry that names a key classified here as dangerous is a policy error.

The input is bounded: more than `MAX_BYTES` bytes, nesting deeper than `MAX_DEPTH`, or more than
`MAX_KEYS` keys in all is an input error (exit 2), never a crash.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from .errors import InputError, PolicyError
from .fsio import read_input
from .models.session import SessionAllowList, ValueType
from .policy import default_profiles_dir, validated
from .projects import project_root as project_root
from .projects import untrusted_project_paths as untrusted_project_paths
from .readers import parse_toml

StripClass = Literal[
    "runs-program",
    "redirects-credential",
    "widens-access",
    "changes-approvals",
    "unknown",
    "wrong-type",
]
CLASSES: tuple[StripClass, ...] = get_args(StripClass)

MAX_BYTES = 1 << 20
MAX_DEPTH = 64
MAX_KEYS = 10_000
ALLOWLIST_FILE = "session-allowlist.toml"

_P: StripClass = "runs-program"
_R: StripClass = "redirects-credential"
_W: StripClass = "widens-access"
_A: StripClass = "changes-approvals"

#: Every top-level ConfigToml key of Codex 0.171.0 that is not on the allow-list, with the class
#: that strips it. Allowed keys are `None` here and carry their reason in the allow-list file.
KNOWN_KEYS: dict[str, StripClass | None] = {
    # Programs Codex starts itself, outside the command sandbox, or code it loads.
    "mcp_servers": _P,
    "notify": _P,
    "hooks": _P,
    "plugins": _P,
    "marketplaces": _P,
    "skills": _P,
    "js_repl_node_path": _P,
    "js_repl_node_module_dirs": _P,
    "code_mode": _P,
    "orchestrator": _P,
    "agents": _P,  # role config_file: another config layer from any path
    "tool_suggest": _P,
    "browser_use": _P,
    "computer_use": _P,
    "file_opener": _P,
    # Where the trusted side sends requests (and the bearer token), or how it stores/gets auth.
    "chatgpt_base_url": _R,
    "openai_base_url": _R,
    "model_provider": _R,
    "model_providers": _R,
    "oss_provider": _R,
    "experimental_realtime_ws_base_url": _R,
    "experimental_realtime_webrtc_call_base_url": _R,
    "experimental_realtime_ws_model": _R,
    "experimental_realtime_ws_backend_prompt": _R,
    "experimental_realtime_ws_startup_context": _R,
    "experimental_realtime_start_instructions": _R,
    "experimental_thread_store_endpoint": _R,
    "experimental_thread_store": _R,
    "realtime": _R,
    "audio": _R,
    "otel": _R,
    "analytics": _R,
    "feedback": _R,
    "cloud": _R,
    "responses": _R,
    "responses_api_metadata": _R,
    "apps_mcp_product_sku": _R,
    "cli_auth_credentials_store": _R,
    "forced_chatgpt_workspace_id": _R,
    "forced_login_method": _R,
    "mcp_oauth_credentials_store": _R,
    "mcp_oauth_callback_port": _R,
    "mcp_oauth_callback_url": _R,
    "mcp_enterprise_managed_auth": _R,
    "mcp_optional_startup_grace_ms": _R,
    # Filesystem, network, environment or trust: what a command or the parent may reach.
    "permissions": _W,
    "default_permissions": _W,
    "sandbox_mode": _W,
    "sandbox_workspace_write": _W,
    "allow_symlinked_codex_home": _W,
    "shell_environment_policy": _W,
    "allow_login_shell": _W,
    "features": _W,
    "profile": _W,
    "profiles": _W,
    "projects": _W,
    "project_root_markers": _W,
    "project_doc_fallback_filenames": _W,
    "model_instructions_file": _W,
    "experimental_compact_prompt_file": _W,
    "model_catalog_json": _W,
    "sqlite_home": _W,
    "log_dir": _W,
    "history": _W,
    "rollout_trace": _W,
    "ghost_snapshot": _W,
    "memories": _W,
    "web_search": _W,
    "tools": _W,
    "windows": _W,
    "debug": _W,
    "desktop": _W,
    "thread_unload_delay_secs": _W,
    "experimental_use_unified_exec_tool": _W,
    "include_apps_instructions": _W,
    "goals": _W,
    "tui": _W,
    "notice": _W,
    # Who approves what.
    "approval_policy": _A,
    "approvals_reviewer": _A,
    "auto_review": _A,
    "apps": _A,
    # Allowed (reason in profiles/session-allowlist.toml).
    "model": None,
    "review_model": None,
    "model_reasoning_effort": None,
    "plan_mode_reasoning_effort": None,
    "model_reasoning_summary": None,
    "model_verbosity": None,
    "personality": None,
    "service_tier": None,
    "model_context_window": None,
    "model_auto_compact_token_limit": None,
    "model_auto_compact_token_limit_scope": None,
    "model_post_turn_compact_threshold_percent": None,
    "tool_output_token_limit": None,
    "background_terminal_max_timeout": None,
    "hide_agent_reasoning": None,
    "show_raw_agent_reasoning": None,
    "developer_instructions": None,
    "instructions": None,
    "compact_prompt": None,
    "include_environment_context": None,
    "include_collaboration_mode_instructions": None,
    "include_permissions_instructions": None,
    "project_doc_max_bytes": None,
    "suppress_unstable_features_warning": None,
    "disable_paste_burst": None,
    "check_for_update_on_startup": None,
}


@dataclass(frozen=True, slots=True)
class Stripped:
    """A stripped key: its dotted path, its class and, for `wrong-type`, what was wrong."""

    path: str
    cls: StripClass
    why: str | None = None


def parse_allowlist(data: dict[str, Any], *, where: str) -> SessionAllowList:
    """The parsed allow-list read through its model (a schema violation is one line naming the
    key), then each allowed key checked against KNOWN_KEYS, which no schema states."""
    allow = validated(SessionAllowList, data, where)
    for name in allow.allowed:
        if name not in KNOWN_KEYS:
            raise PolicyError(
                f"allowed key {name!r} is not a Codex {allow.codex_version} config key",
                where=where,
                hint=f"remove [allowed.{name}], or check its spelling",
            )
        cls = KNOWN_KEYS[name]
        if cls is not None:
            raise PolicyError(
                f"allowed key {name!r} is forbidden ({cls}); it cannot be allow-listed",
                where=where,
                hint=f"remove [allowed.{name}]",
            )
    return allow


def load_allowlist(profiles_dir: str | None = None) -> SessionAllowList:
    """Read and validate `<profiles_dir>/session-allowlist.toml` (default: the shipped one)."""
    path = os.path.join(profiles_dir or default_profiles_dir(), ALLOWLIST_FILE)
    return allowlist_from_bytes(read_input(path, error=PolicyError), where=path)


def allowlist_from_bytes(raw: bytes, *, where: str) -> SessionAllowList:
    """Parse and validate the allow-list file's bytes (as every policy file is parsed)."""
    return parse_allowlist(parse_toml(raw, where=where), where=where)


def _type_ok(value: Any, vtype: ValueType) -> bool:
    if vtype == "string":
        return isinstance(value, str)
    if vtype == "boolean":
        return isinstance(value, bool)
    if vtype == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def type_name(value: Any) -> str:
    """The TOML/JSON name of a value's type, as a `wrong-type` report spells it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "string-array" if all(isinstance(v, str) for v in value) else "array"
    if isinstance(value, Mapping):
        return "table"
    return type(value).__name__


def wrong_type(key: str, value: Any, allow: SessionAllowList) -> str | None:
    """Why an allow-listed key cannot pass as given, or None (not allowed, or well typed).

    `key` is the key as the config spells it: a dotted key under an allowed head (`model.x`)
    sets that key as a table, which no allow-list type is.
    """
    head = key.split(".", 1)[0]
    entry = allow.allowed.get(head)
    if entry is None:
        return None
    want = f"{'an' if entry.type[0] in 'aeiou' else 'a'} {entry.type}"
    if head != key:
        return f"key {head!r} is allowed but must be {want}, got table (set through {key!r})"
    if _type_ok(value, entry.type):
        return None
    return f"key {key!r} is allowed but must be {want}, got {type_name(value)}"


def classify(key: str) -> StripClass | None:
    """The class of a top-level key (None: on the shipped allow-list's side of KNOWN_KEYS)."""
    return KNOWN_KEYS.get(key, "unknown")


def sanitize_with(
    config: Mapping[str, Any], allow: SessionAllowList
) -> tuple[dict[str, Any], tuple[Stripped, ...]]:
    """The config with only allow-listed keys of the right type, and what was stripped.

    A dotted key (`a.b`, as a `-c` key would be spelled) is judged by its first segment.
    """
    out: dict[str, Any] = {}
    stripped: list[Stripped] = []
    for key in sorted(config):
        head = key.split(".", 1)[0]
        value = config[key]
        if head in allow.allowed:
            why = wrong_type(key, value, allow)
            if why is None:
                out[key] = value
            else:
                stripped.append(Stripped(key, "wrong-type", why))
            continue
        cls = classify(head)
        # A known key this allow-list does not list (a narrower allow-list than the shipped
        # one) has no class of its own: `unknown`.
        stripped.append(Stripped(key, "unknown" if cls is None else cls))
    return out, tuple(stripped)


def sanitize(
    config: Mapping[str, Any], profiles_dir: str | None = None
) -> tuple[dict[str, Any], tuple[Stripped, ...]]:
    """`sanitize_with` the allow-list in `profiles_dir` (default: the shipped one)."""
    return sanitize_with(config, load_allowlist(profiles_dir))


def _check_shape(data: Any, where: str) -> None:
    """Depth and key-count bounds, iteratively (a deep config must not exhaust the stack)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    keys = 0
    while stack:
        node, depth = stack.pop()
        # A level is an object or array; a scalar inside the 64th level is still level 64.
        if isinstance(node, dict | list) and depth > MAX_DEPTH:
            raise InputError(f"session config nests deeper than {MAX_DEPTH} levels", where=where)
        if isinstance(node, dict):
            keys += len(node)
            if keys > MAX_KEYS:
                raise InputError(f"session config has more than {MAX_KEYS} keys", where=where)
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def parse_session_bytes(raw: bytes, *, where: str) -> dict[str, Any]:
    """Parse an untrusted session config: a bounded JSON object, else InputError (exit 2)."""
    if len(raw) > MAX_BYTES:
        raise InputError(f"session config is larger than {MAX_BYTES} bytes", where=where)
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise InputError(
            f"session config nests deeper than {MAX_DEPTH} levels", where=where
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"session config is not valid JSON: {exc}", where=where) from None
    if not isinstance(data, dict):
        raise InputError("session config must be a JSON object", where=where)
    _check_shape(data, where)
    return data
