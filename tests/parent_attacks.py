"""Attacks on the trusted, unsandboxed Codex parent (docs: ../shared research codex-parent.md).

The scripted model that issues arbitrary tool calls (`ToolScriptServer`, shipped in
compiler/scripted_model.py), `codex exec` runs against it and the marker PNG come from the
shipped parent canaries (compiler/canary/parent.py): one implementation for the tests and the
canary. Markers are random, never a real credential.
"""

from __future__ import annotations

import secrets
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path

from profilec.canary.parent import (
    ExecResult,
    png_with_marker,
    run_exec,
)
from profilec.canary.parent import (
    launcher_env as base_env,
)
from profilec.scripted_model import Call, Shell, Step, ToolScriptServer

__all__ = [
    "Call",
    "ExecResult",
    "Shell",
    "Step",
    "ToolScriptServer",
    "base_env",
    "new_marker",
    "parent_policy_keys",
    "png_with_marker",
    "run_exec",
    "without_keys",
]

REPO = Path(__file__).resolve().parent.parent
PARENT_POLICY = REPO / "profiles" / "parent.toml"


def parent_policy_keys() -> tuple[str, ...]:
    """The dotted keys profiles/parent.toml sets on the parent (the reviewed policy)."""
    with PARENT_POLICY.open("rb") as fh:
        doc = tomllib.load(fh)
    return tuple(str(s["key"]) for s in doc["settings"])


def without_keys(lines: Sequence[str], keys: Iterable[str]) -> list[str]:
    """`lines` (`-c key=value`) minus every line setting one of `keys`."""
    drop = tuple(keys)
    return [ln for ln in lines if ln.split("=", 1)[0].strip() not in drop]


def new_marker(tag: str) -> str:
    """A fresh random marker."""
    return f"PROFILEC-{tag}-{secrets.token_hex(12)}"
