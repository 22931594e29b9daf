"""Reviewed policy in `profiles/`: one base profile per ACP mode and the mode map.

Policy speaks in Codex's own vocabulary (`:specials`, `~/`, scoped tables, system paths); it
never names a host credential path. Compile checks that no policy key reaches a protected root.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pydantic import ValidationError

from .codex.vocabulary import (
    BUILTIN_WORKSPACE,
    PARENT_FORBIDDEN_PREFIXES,
    SCOPABLE_SPECIALS,
    SPECIAL_ALIASES,
    SPECIALS,
)
from .errors import PolicyError
from .fsio import read_input
from .models.policy import ACP_MODES, ModeMap, ModeProfilePolicy, ParentPolicy, TrustedBasePolicy
from .readers import parse_toml, validation_message
from .resources import profiles_dir

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


class Policy(NamedTuple):
    """The validated policy: the mode map and each mode's base profile."""

    mode_map: ModeMap
    bases: dict[str, ModeProfilePolicy]
    source_dir: str
    #: `trusted-base.toml`: what no mode may write, which sockets every mode denies.
    trusted_base: TrustedBasePolicy | None = None
    #: `parent.toml`: what every output sets on the trusted Codex parent.
    parent: ParentPolicy | None = None


#: What each ACP mode may grant, by its advertised meaning: (writes, network). `read-only`
#: writes nothing and has no network; `agent` writes the workspace and temp, no network;
#: `agent-full-access` may do both. A base profile that grants more is refused at load.
MODE_MEANINGS: dict[str, tuple[bool, bool]] = {
    "read-only": (False, False),
    "agent": (True, False),
    "agent-full-access": (True, True),
}


def _first_write(base: ModeProfilePolicy) -> str | None:
    """The first policy key through which `base` writes, else None: an `extends` of a
    built-in that writes (`:workspace`), `write_workspace_roots`, or a `write` value (a key's,
    or a subpath's in a scoped table) in the filesystem table."""
    if base.extends == BUILTIN_WORKSPACE:
        return f"extends = {BUILTIN_WORKSPACE!r}"
    if base.write_workspace_roots:
        return "write_workspace_roots = true"
    for key, value in base.filesystem.items():
        if value == "write":
            return f"filesystem {key!r} = 'write'"
        if isinstance(value, dict):
            for sub, access in value.items():
                if access == "write":
                    return f"filesystem {key!r}.{sub!r} = 'write'"
    return None


def check_mode_meaning(base: ModeProfilePolicy, mode: str, where: str) -> None:
    """A base profile grants no more than its ACP mode means (MODE_MEANINGS): a read-only that
    writes, or a read-only or agent with network, is refused naming the key. A mode outside
    MODE_MEANINGS has no advertised meaning to hold it to."""
    meaning = MODE_MEANINGS.get(mode)
    if meaning is None:
        return
    writes, network = meaning
    offending = None if writes else _first_write(base)
    if offending is None and not network and base.network.enabled:
        offending = "network.enabled = true"
    if offending is not None:
        raise PolicyError(
            f"mode {mode!r} grants more than it means ({_MEANING_TEXT[mode]}): {offending}",
            where=where,
            hint="a wider policy belongs to a wider mode",
        )


_MEANING_TEXT = {
    "read-only": "writes nothing, no network",
    "agent": "writes the workspace and temp, no network",
    "agent-full-access": "writes and network",
}


TRUSTED_BASE_FILE = "trusted-base.toml"
PARENT_FILE = "parent.toml"
MODE_MAP_FILE = "modes.toml"


def default_profiles_dir() -> str:
    """The shipped policy directory (package data, from the source tree's `profiles/`)."""
    return profiles_dir()


def _read(path: str) -> bytes:
    return read_input(path, error=PolicyError)


def _check_key(key: str, value: object, where: str) -> None:
    if key.startswith(":"):
        if key in SPECIAL_ALIASES:  # reviewed policy spells the current name only
            raise PolicyError(
                f"{key} is Codex's legacy spelling; write {SPECIAL_ALIASES[key]}", where=where
            )
        if key not in SPECIALS:
            raise PolicyError(
                f"unknown special {key!r} (Codex would ignore it silently)", where=where
            )
        if isinstance(value, dict) and key not in SCOPABLE_SPECIALS:
            raise PolicyError(f"{key} does not support nested entries", where=where)
        if isinstance(value, dict):
            for sub in value:
                segs = sub.split("/")
                if sub != "." and (sub.startswith("/") or any(s in ("", ".", "..") for s in segs)):
                    raise PolicyError(
                        f"subpath {sub!r} under {key} must be a descendant without . or ..",
                        where=where,
                    )
        return
    if key.startswith("~/") or key == "~":
        return
    if not key.startswith("/"):
        raise PolicyError(
            f"filesystem key {key!r} must be absolute, ~/..., or a :special", where=where
        )
    if isinstance(value, dict):
        raise PolicyError(
            f"scoped tables under absolute paths are not policy: {key!r}", where=where
        )


def validated(model: type[M], data: dict[str, Any], where: str) -> M:
    """`data` as a `model`, or a PolicyError naming the schema violation."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(f"schema violation: {validation_message(exc)}", where=where) from None


def load_parent(pdir: str, read: Callable[[str], bytes] | None = None) -> ParentPolicy:
    """`<pdir>/parent.toml`, validated; a policy directory without one is an error (every
    output must carry the parent policy). Two settings on one key (or a key and a table holding
    it), or a key the compiled profiles own, are refused."""
    path = os.path.join(pdir, PARENT_FILE)
    parent = validated(ParentPolicy, parse_toml((read or _read)(path), where=path), path)
    seen: list[str] = []
    for s in parent.settings:
        if any(s.key == o or s.key.startswith(o + ".") or o.startswith(s.key + ".") for o in seen):
            raise PolicyError(f"parent setting {s.key!r} overlaps another", where=path)
        seen.append(s.key)
        if s.key.split(".", 1)[0] in PARENT_FORBIDDEN_PREFIXES:
            raise PolicyError(
                f"parent setting {s.key!r} belongs to the compiled profiles, not the parent",
                where=path,
            )
    return parent


def load_trusted_base(pdir: str, read: Callable[[str], bytes] | None = None) -> TrustedBasePolicy:
    """`<pdir>/trusted-base.toml`, validated; a policy directory without one is an error."""
    path = os.path.join(pdir, TRUSTED_BASE_FILE)
    tb = validated(TrustedBasePolicy, parse_toml((read or _read)(path), where=path), path)
    for p in (*tb.read_only, *tb.deny):
        if p != "/" and (p.endswith("/") or "//" in p or "/./" in p or "/../" in p):
            raise PolicyError(f"trusted-base path {p!r} is not normalized", where=path)
        if p == "/":
            raise PolicyError(
                "trusted-base path / would leave no mode anything to write", where=path
            )
    return tb


def load_policy(
    profiles_dir: str | None = None, *, read: Callable[[str], bytes] | None = None
) -> Policy:
    """Load and validate `profiles/modes.toml`, every base profile it names, the trusted base.

    `read` supplies each file's bytes (compiler/inputs.py reads each once); default: open it.
    """
    read = read or _read
    pdir = profiles_dir or default_profiles_dir()
    map_path = os.path.join(pdir, MODE_MAP_FILE)
    data = parse_toml(read(map_path), where=map_path)
    mode_map = validated(ModeMap, data, map_path)
    for mode in ACP_MODES:
        if mode not in mode_map.modes:
            raise PolicyError(f"ACP mode {mode!r} has no mapping", where=map_path)
    if mode_map.default_mode not in mode_map.modes:
        raise PolicyError(
            f"default_mode {mode_map.default_mode!r} is not in [modes]", where=map_path
        )
    ids = [e.profile_id for e in mode_map.modes.values()]
    if len(set(ids)) != len(ids):
        raise PolicyError("two modes map to the same profile_id", where=map_path)
    bases: dict[str, Any] = {}
    for mode, entry in sorted(mode_map.modes.items()):
        path = os.path.join(pdir, entry.base)
        raw = parse_toml(read(path), where=path)
        base = validated(ModeProfilePolicy, raw, path)
        if base.mode != mode:
            raise PolicyError(
                f"declares mode {base.mode!r} but modes.toml maps it to {mode!r}", where=path
            )
        for key, value in base.filesystem.items():
            _check_key(key, value, f"{path}: filesystem")
        check_mode_meaning(base, mode, path)
        bases[mode] = base
    trusted = load_trusted_base(pdir, read)
    parent = load_parent(pdir, read)
    return Policy(
        mode_map=mode_map, bases=bases, source_dir=pdir, trusted_base=trusted, parent=parent
    )
