"""Waivers for `profilec check`: the project config file, `--ignore` and `--baseline`.

The project config is `profilec.toml`, or the `[tool.profilec]` table of `pyproject.toml`, found
by walking up from the working directory (the first directory holding either wins;
`profilec.toml` before `pyproject.toml`). Its format is schemas/profilec-config.schema.json:

    [[waiver]]
    rule = "PC025"                  # required
    reason = "..."                  # required: a waiver without a reason is an input error
    expires = 2027-01-31            # optional TOML date (or "YYYY-MM-DD"); after it: PC090
    path = "/usr"                   # optional: the finding's path (or one it affects) under it
    mode = "agent-full-access"      # optional
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tomllib
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InputError, UsageError
from ..inputs import json_object
from .result import CheckReport, Waiver
from .triage import fingerprint

CONFIG_NAMES = ("profilec.toml", "pyproject.toml")

SCHEMA: dict[str, Any] = {
    "title": "ProfilecConfig",
    "description": (
        "`profilec.toml` or `[tool.profilec]` in `pyproject.toml` (compiler/check/waivers.py), "
        "found upward from the working directory: waivers for `profilec check`."
    ),
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "waiver": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["rule", "reason"],
                "properties": {
                    "rule": {"type": "string", "pattern": "^PC[0-9]{3}$"},
                    "reason": {"type": "string", "minLength": 1},
                    "expires": {"type": "string", "format": "date"},
                    "path": {"type": "string", "pattern": "^/"},
                    "mode": {"type": "string"},
                },
            },
        }
    },
}


def find_config(start: str, read: Callable[[str], bytes]) -> tuple[str, dict[str, Any]] | None:
    """(path, the profilec table) of the nearest project config at or above `start`; `read`
    gives a file's bytes (the run's inputs.Inputs.project_file)."""
    d = os.path.abspath(start)
    while True:
        for name in CONFIG_NAMES:
            path = os.path.join(d, name)
            if not os.path.isfile(path):
                continue
            data = _parse_toml(read(path), path)
            if name == "profilec.toml":
                return path, data
            tool = data.get("tool")
            if isinstance(tool, dict) and isinstance(tool.get("profilec"), dict):
                return path, tool["profilec"]
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _parse_toml(raw: bytes, path: str) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"project config is not valid TOML: {exc}", where=path) from None


def load_config(path: str, raw: bytes) -> dict[str, Any]:
    """The profilec table of a named project config file (`--project-config`) as read."""
    data = _parse_toml(raw, path)
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool")
        inner = tool.get("profilec") if isinstance(tool, dict) else None
        return inner if isinstance(inner, dict) else {}
    return data


def parse_waivers(table: dict[str, Any], where: str) -> list[Waiver]:
    """The waivers of one project config table, validated (one InputError line)."""
    out: list[Waiver] = []
    items = table.get("waiver", [])
    extra = sorted(k for k in table if k != "waiver")
    if extra:
        raise InputError(f"unknown project config key {extra[0]!r} (only [[waiver]])", where=where)
    if not isinstance(items, list):
        raise InputError("`waiver` must be an array of tables ([[waiver]])", where=where)
    for n, w in enumerate(items, start=1):
        if not isinstance(w, dict):
            raise InputError(f"waiver {n} must be a table", where=where)
        unknown = sorted(set(w) - {"rule", "reason", "expires", "path", "mode"})
        if unknown:
            raise InputError(f"waiver {n}: unknown key {unknown[0]!r}", where=where)
        rule = w.get("rule")
        if not isinstance(rule, str) or not (
            len(rule) == 5 and rule.startswith("PC") and rule[2:].isdigit()
        ):
            raise InputError(f"waiver {n}: rule must be like PC025, got {rule!r}", where=where)
        reason = w.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise InputError(
                f"waiver {n} ({rule}) has no reason: say why it is accepted", where=where
            )
        expires = w.get("expires")
        if isinstance(expires, dt.date) and not isinstance(expires, dt.datetime):
            expires = expires.isoformat()
        elif isinstance(expires, str):
            try:
                expires = dt.date.fromisoformat(expires).isoformat()
            except ValueError:
                raise InputError(
                    f"waiver {n} ({rule}): expires {expires!r} is not a date", where=where
                ) from None
        elif expires is not None:
            raise InputError(f"waiver {n} ({rule}): expires must be a date", where=where)
        path = w.get("path")
        if path is not None and (not isinstance(path, str) or not path.startswith("/")):
            raise InputError(f"waiver {n} ({rule}): path must be absolute", where=where)
        mode = w.get("mode")
        if mode is not None and not isinstance(mode, str):
            raise InputError(f"waiver {n} ({rule}): mode must be a string", where=where)
        out.append(
            Waiver(
                rule=rule,
                reason=reason.strip(),
                source=where,
                expires=expires,
                path=path,
                mode=mode,
            )
        )
    return out


def ignore_waivers(rules: Sequence[str]) -> list[Waiver]:
    """`--ignore PCxxx` (repeatable) as waivers without expiry."""
    out: list[Waiver] = []
    for r in rules:
        if not (len(r) == 5 and r.startswith("PC") and r[2:].isdigit()):
            raise UsageError(f"--ignore takes a rule id like PC025, got {r!r}")
        out.append(Waiver(rule=r, reason="--ignore on the command line", source="--ignore"))
    return out


def load_baseline(path: str, raw: bytes) -> set[str]:
    """Fingerprints of the unwaived findings of a previous `check --format json` report, as
    read from `path`."""
    doc = json_object(raw, path, "baseline")
    if doc.get("tool") != "profilec" or not isinstance(doc.get("findings"), list):
        raise InputError("baseline is not a `profilec check --format json` report", where=path)
    try:
        report = CheckReport.model_validate_json(json.dumps(doc))
    except ValueError:
        raise InputError(
            "baseline does not match schemas/check-report.schema.json", where=path
        ) from None
    return {fingerprint(f) for f in report.findings if f.waiver is None}
