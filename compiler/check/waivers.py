"""Waivers for `profilec check`: the project config file, `--ignore` and `--baseline`.

The project config is `profilec.toml`, or the `[tool.profilec]` table of `pyproject.toml`, found
by walking up from the working directory (the first directory holding either wins;
`profilec.toml` before `pyproject.toml`). The file used is trust-checked as the roots manifest
is (roots.read_trusted_bytes, through the run's Inputs.trusted): owned by root or the invoking
uid, not group- or world-writable, in no directory others can write. Its one model is
compiler/models/profilec_config.py (schemas/profilec-config.schema.json is generated from it):

    [[waiver]]
    rule = "PC025"                  # required
    reason = "..."                  # required: a waiver without a reason is an input error
    expires = 2027-01-31            # optional TOML date (or "YYYY-MM-DD"); after it: PC090
    path = "/usr"                   # optional: the finding's path (or one it affects) under it
    mode = "agent-full-access"      # optional

No waiver, from any of the three, may name a rule declared `waivable=False` (a protected root
reachable, a secret readable, the trusted side writable, or a mode's coverage unproven:
compiler/check/rules.py): `refuse_unwaivable` stops the run with one UsageError line naming the
rule, whatever the waiver's path, mode or expiry. Such a finding is fixed in the config.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from ..errors import InputError, TrustError, UsageError
from ..inputs import json_object
from ..models.check import CheckReport, Waiver
from ..models.profilec_config import ProfilecConfig
from .rules import rule_by_id
from .triage import fingerprint

CONFIG_NAMES = ("profilec.toml", "pyproject.toml")


def find_config(
    start: str, read: Callable[[str], bytes], peek: Callable[[str], bytes]
) -> tuple[str, dict[str, Any]] | None:
    """(path, the profilec table) of the nearest project config at or above `start`.

    `read` gives a file's bytes after the trust check (the run's inputs.Inputs.trusted: a
    TrustError when it fails); `peek` reads plainly (Inputs.project_file), only to see whether
    a `pyproject.toml` that failed the check holds a `[tool.profilec]` table at all: one that
    does not is no project config, and the walk goes on upward as it does for a trusted one."""
    d = os.path.abspath(start)
    while True:
        for name in CONFIG_NAMES:
            path = os.path.join(d, name)
            if not os.path.isfile(path):
                continue
            if name == "profilec.toml":
                return path, _parse_toml(read(path), path)
            try:
                table = _tool_table(_parse_toml(read(path), path))
            except TrustError:
                if _tool_table(_parse_toml(peek(path), path)) is None:
                    continue
                raise
            if table is not None:
                return path, table
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _parse_toml(raw: bytes, path: str) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"project config is not valid TOML: {exc}", where=path) from None


def _tool_table(data: dict[str, Any]) -> dict[str, Any] | None:
    """The `[tool.profilec]` table of a parsed pyproject.toml, or None."""
    tool = data.get("tool")
    inner = tool.get("profilec") if isinstance(tool, dict) else None
    return inner if isinstance(inner, dict) else None


def load_config(path: str, raw: bytes) -> dict[str, Any]:
    """The profilec table of a named project config file (`--project-config`) as read."""
    data = _parse_toml(raw, path)
    if os.path.basename(path) == "pyproject.toml":
        return _tool_table(data) or {}
    return data


def refuse_unwaivable(rule_id: str, where: str) -> None:
    """A UsageError (exit 2, one line naming the rule) when `rule_id` is declared
    `waivable=False`; an id no rule declares waives nothing and passes."""
    try:
        r = rule_by_id(rule_id)
    except KeyError:
        return
    if not r.waivable:
        raise UsageError(
            f"{r.id} ({r.name}) cannot be waived: it means a protected root may be reachable "
            "or the trusted side writable; fix the config (docs/check.md, Waivers)",
            where=where,
        )


#: One clear line per problem with a `[[waiver]]` key (the model's error, said for a person).
_KEY_PROBLEMS = {
    "rule": ": rule must be like PC025",
    "reason": " has no reason: say why it is accepted",
    "expires": ": expires must be a date (YYYY-MM-DD)",
    "path": ": path must be absolute",
    "mode": ": mode must be a string",
}


def _config_error(exc: ValidationError, table: dict[str, Any], where: str) -> InputError:
    """The model's first error as one InputError line naming the key (`where` names the file)."""
    first = exc.errors()[0]
    loc = first["loc"]
    if first["type"] == "extra_forbidden" and len(loc) == 1:
        return InputError(f"unknown project config key {loc[0]!r} (only [[waiver]])", where=where)
    if len(loc) == 1:
        return InputError("`waiver` must be an array of tables ([[waiver]])", where=where)
    n = int(loc[1]) + 1
    if len(loc) == 2:
        return InputError(f"waiver {n} must be a table", where=where)
    key = str(loc[2])
    if first["type"] == "extra_forbidden":
        return InputError(f"waiver {n}: unknown key {key!r}", where=where)
    rule = table["waiver"][n - 1].get("rule")
    if key == "rule":
        return InputError(f"waiver {n}{_KEY_PROBLEMS[key]}, got {rule!r}", where=where)
    problem = _KEY_PROBLEMS.get(key, f": {key}: {first['msg']}")
    return InputError(f"waiver {n} ({rule}){problem}", where=where)


def config_waivers(table: dict[str, Any], where: str) -> list[Waiver]:
    """The waivers of one project config table, validated by its model (ProfilecConfig: one
    InputError line naming the key), each refused when its rule is unwaivable."""
    try:
        config = ProfilecConfig.model_validate(table, strict=False)
    except ValidationError as exc:
        raise _config_error(exc, table, where) from None
    out: list[Waiver] = []
    for w in config.waiver:
        refuse_unwaivable(w.rule, where)
        out.append(
            Waiver(
                rule=w.rule,
                reason=w.reason.strip(),
                source=where,
                expires=w.expires.isoformat() if w.expires else None,
                path=w.path,
                mode=w.mode,
            )
        )
    return out


def ignore_waivers(rules: Sequence[str]) -> list[Waiver]:
    """`--ignore PCxxx` (repeatable) as waivers without expiry."""
    out: list[Waiver] = []
    for r in rules:
        if not (len(r) == 5 and r.startswith("PC") and r[2:].isdigit()):
            raise UsageError(f"--ignore takes a rule id like PC025, got {r!r}")
        refuse_unwaivable(r, "--ignore")
        out.append(Waiver(rule=r, reason="--ignore on the command line", source="--ignore"))
    return out


def load_baseline(path: str, raw: bytes) -> set[str]:
    """Fingerprints of the unwaived findings of a previous `check --format json` report, as
    read from `path`; a UsageError when one is of a rule this profilec declares unwaivable
    (the registry decides, never the report's own rule table)."""
    doc = json_object(raw, path, "baseline")
    if doc.get("tool") != "profilec" or not isinstance(doc.get("findings"), list):
        raise InputError("baseline is not a `profilec check --format json` report", where=path)
    try:
        report = CheckReport.model_validate_json(json.dumps(doc))
    except ValueError:
        raise InputError(
            "baseline does not match schemas/check-report.schema.json", where=path
        ) from None
    unwaived = [f for f in report.findings if f.waiver is None]
    for f in unwaived:
        refuse_unwaivable(f.rule, path)
    return {fingerprint(f) for f in unwaived}
