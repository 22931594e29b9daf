"""Untrusted session config (the JSON a launcher passes as CODEX_CONFIG).

It never contributes a path and never redefines the permission profile: any key that is, or
starts, `permissions`, `default_permissions`, `sandbox_mode` or `sandbox_workspace_write`
is stripped at any depth (plain or dotted, e.g. `profiles.x.sandbox_mode`) and reported.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import InputError

FORBIDDEN_PREFIXES = (
    "permissions",
    "default_permissions",
    "sandbox_mode",
    "sandbox_workspace_write",
)


def _forbidden(key: str) -> bool:
    return any(seg.startswith(FORBIDDEN_PREFIXES) for seg in key.split("."))


def _strip(obj: dict[str, Any], path: str, stripped: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sorted(obj):
        full = f"{path}.{key}" if path else key
        if _forbidden(key):
            stripped.append(full)
            continue
        value = obj[key]
        out[key] = _strip(value, full, stripped) if isinstance(value, dict) else value
    return out


def sanitize(config: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Return the config without forbidden keys, and the dotted names of what was stripped."""
    stripped: list[str] = []
    clean = _strip(config, "", stripped)
    return clean, tuple(stripped)


def load_session_config(path: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Read and sanitize an agent-supplied session config file (JSON object)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read session config: {exc.strerror}", where=path) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"session config is not valid JSON: {exc}", where=path) from None
    if not isinstance(data, dict):
        raise InputError("session config must be a JSON object", where=path)
    return sanitize(data)
