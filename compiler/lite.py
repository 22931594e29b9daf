"""Pydantic-free twins of the compile-path models, for the `profilec compile` fast path.

Importing pydantic (and typer, which imports it to coerce parameters) costs more than the whole
150 ms budget of a `profilec compile` process. The CLI therefore compiles the common case with
these frozen dataclasses: the same field names, defaults and derived methods as the models in
`compiler/models.py` (which stay the published, schema-generating contract and what the library
API returns), built by the very same `compile_bundle` code through a constructor kit.

Input validation here is deliberately conservative: `manifest_doc`, `mode_map_doc` and
`policy_doc` accept only documents the strict pydantic models accept, and map them to equal
values; anything else raises `NotLite`, and the caller reruns the slow path, which produces the
exact error. tests/unit/test_fast_path.py proves field parity and byte-identical CLI results.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

ACP_MODES: tuple[str, ...] = ("read-only", "agent", "agent-full-access")

_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
_BASE_FILE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}\.toml")
_POLICY_ACCESS = ("read", "write", "deny", "none")


class NotLite(Exception):
    """The input is not one the fast path can vouch for; rerun the full (pydantic) path."""


# ---------------------------------------------------------------------------------------------
# Derived methods shared with compiler/models.py (one body for both families)


class _HopShape(Protocol):
    @property
    def link(self) -> str: ...
    @property
    def spelling(self) -> str: ...


class _RootShape(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def hops(self) -> Sequence[_HopShape]: ...


class _EntryShape(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def access(self) -> str: ...


class _ProfileShape(Protocol):
    @property
    def description(self) -> str: ...
    @property
    def extends(self) -> str | None: ...
    @property
    def workspace_roots(self) -> Sequence[str]: ...
    @property
    def policy_filesystem(self) -> Mapping[str, Any]: ...
    @property
    def entries(self) -> Sequence[_EntryShape]: ...
    @property
    def glob_scan_max_depth(self) -> int | None: ...
    @property
    def network_enabled(self) -> bool: ...


def root_spellings(root: _RootShape) -> tuple[str, ...]:
    """Every name that reaches the credential: declared path, each hop's path, the target."""
    seen: dict[str, None] = {root.path: None}
    for hop in root.hops:
        seen.setdefault(hop.link, None)
        seen.setdefault(hop.spelling, None)
    seen.setdefault(root.target, None)
    return tuple(seen)


def _has_glob_char(path: str) -> bool:
    return "*" in path or "?" in path or "[" in path or "]" in path


def _literal_key(entry: _EntryShape) -> str:
    from .emit.literal import literal_key

    return literal_key(entry.path, entry.access)


def codex_table(profile: _ProfileShape) -> dict[str, Any]:
    """The `[permissions.<id>]` table in Codex's own shape (no provenance)."""
    filesystem: dict[str, Any] = {}
    if profile.glob_scan_max_depth is not None:
        filesystem["glob_scan_max_depth"] = profile.glob_scan_max_depth
    for key in sorted(profile.policy_filesystem):
        value = profile.policy_filesystem[key]
        filesystem[key] = dict(sorted(value.items())) if isinstance(value, dict) else value
    for entry in profile.entries:
        # A compiled entry names one literal path; the key is escaped or refused (exit 5)
        # when the path holds a glob character (compiler/emit/literal.py).
        key = entry.path if not _has_glob_char(entry.path) else _literal_key(entry)
        filesystem[key] = entry.access
    table: dict[str, Any] = {"description": profile.description}
    if profile.extends is not None:
        table["extends"] = profile.extends
    if profile.workspace_roots:
        table["workspace_roots"] = {root: True for root in profile.workspace_roots}
    table["filesystem"] = filesystem
    table["network"] = {"enabled": profile.network_enabled}
    return table


class _ModeProfileShape(Protocol):
    @property
    def mode(self) -> str: ...
    @property
    def profile_id(self) -> str: ...


_P = TypeVar("_P", bound=_ModeProfileShape)


def profile_for_mode(profiles: Sequence[_P], mode: str) -> _P:
    """The compiled profile serving ACP `mode` (KeyError when none does)."""
    for profile in profiles:
        if profile.mode == mode:
            return profile
    raise KeyError(mode)


# ---------------------------------------------------------------------------------------------
# The twins (field names, order-independent defaults and methods as in compiler/models.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class RootSpec:
    """Twin of models.RootSpec."""

    id: str
    path: str
    backend: str | None = None
    description: str | None = None
    allow_missing: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustedBaseSpec:
    """Twin of models.TrustedBaseSpec."""

    read_only: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class RootsManifest:
    """Twin of models.RootsManifest."""

    schema_version: int
    roots: list[RootSpec]
    trusted_base: TrustedBaseSpec | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustedBasePolicy:
    """Twin of models.TrustedBasePolicy."""

    schema_version: int
    rationale: str
    read_only: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    discover: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkPolicy:
    """Twin of models.NetworkPolicy."""

    enabled: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ModeProfilePolicy:
    """Twin of models.ModeProfilePolicy."""

    schema_version: int
    mode: str
    description: str
    rationale: str
    extends: str | None = None
    filesystem: dict[str, Any] = field(default_factory=dict)
    glob_scan_max_depth: int | None = None
    network: NetworkPolicy = field(default_factory=NetworkPolicy)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModeMapEntry:
    """Twin of models.ModeMapEntry."""

    profile_id: str
    base: str
    approval_policy: str | None = None
    approvals_reviewer: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModeMap:
    """Twin of models.ModeMap."""

    schema_version: int
    default_mode: str
    modes: dict[str, ModeMapEntry]
    account_apps: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class LaunchLayout:
    """Twin of models.LaunchLayout."""

    workspace_roots: tuple[str, ...] = ()
    codex_home: str | None = None
    home: str | None = None
    tmpdir: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Hop:
    """Twin of models.Hop."""

    index: int
    link: str
    value: str
    spelling: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedRoot:
    """Twin of models.ResolvedRoot."""

    id: str
    path: str
    backend: str | None = None
    kind: str
    target: str
    hops: tuple[Hop, ...] = ()
    nlink: int | None = None
    vault: str
    holder_dirs: tuple[str, ...] = ()
    hops_under_workspace: tuple[str, ...] = ()

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every name that reaches the credential (see models.ResolvedRoot.spellings)."""
        return root_spellings(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustedPath:
    """Twin of models.TrustedPath."""

    path: str
    declared: str
    access: str
    kind: str
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedHome:
    """Twin of models.ResolvedHome."""

    path: str
    canonical: str
    holder_dirs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Twin of models.Provenance."""

    reason: str
    root_id: str | None = None
    hop_index: int | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompiledEntry:
    """Twin of models.CompiledEntry."""

    path: str
    access: str
    provenance: tuple[Provenance, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompiledProfile:
    """Twin of models.CompiledProfile."""

    mode: str
    profile_id: str
    description: str
    extends: str | None
    workspace_roots: tuple[str, ...]
    policy_filesystem: dict[str, Any]
    entries: tuple[CompiledEntry, ...]
    glob_scan_max_depth: int | None = None
    network_enabled: bool

    def codex_table(self) -> dict[str, Any]:
        """The `[permissions.<id>]` table in Codex's own shape (no provenance)."""
        return codex_table(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """Twin of models.Finding."""

    code: str
    message: str
    root_id: str | None = None
    path: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompiledBundle:
    """Twin of models.CompiledBundle."""

    profiles: tuple[CompiledProfile, ...]
    default_mode: str
    roots: tuple[ResolvedRoot, ...]
    layout: LaunchLayout
    codex_home: ResolvedHome | None = None
    findings: tuple[Finding, ...] = ()
    session_config: dict[str, Any] | None = None
    stripped_session_keys: tuple[str, ...] = ()
    stripped_session_classes: dict[str, str] = field(default_factory=dict)
    mode_approvals: dict[str, dict[str, str]] = field(default_factory=dict)
    account_apps: bool = False
    untrusted_projects: tuple[str, ...] = ()
    vouched_mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    vouched_mcp_credentials: dict[str, str] = field(default_factory=dict)
    trusted_base: tuple[TrustedPath, ...] = ()

    @property
    def mode_profiles(self) -> dict[str, str]:
        """ACP mode -> compiled profile id."""
        return {p.mode: p.profile_id for p in self.profiles}

    def profile_for(self, mode: str) -> CompiledProfile:
        """The compiled profile serving `mode`."""
        return profile_for_mode(self.profiles, mode)

    @property
    def default_profile_id(self) -> str:
        """The profile `default_permissions` selects."""
        return self.profile_for(self.default_mode).profile_id


# ---------------------------------------------------------------------------------------------
# Conservative validators: accept a subset of what the strict models accept, or raise NotLite


def _table(doc: object, required: Sequence[str], optional: Sequence[str]) -> dict[str, Any]:
    if type(doc) is not dict:
        raise NotLite
    keys = set(doc)
    if not keys.issuperset(required) or not keys.issubset((*required, *optional)):
        raise NotLite
    return doc


def _slug(value: object) -> str:
    if type(value) is not str or _SLUG.fullmatch(value) is None:
        raise NotLite
    return value


def _str(value: object) -> str:
    if type(value) is not str:
        raise NotLite
    return value


def _bool(value: object) -> bool:
    if type(value) is not bool:
        raise NotLite
    return value


def _version(value: object) -> int:
    if type(value) is not int or value != 1:
        raise NotLite
    return value


def _abs_list(value: object) -> list[str]:
    if type(value) is not list:
        raise NotLite
    out = [_str(v) for v in value]
    if any(not v.startswith("/") for v in out):
        raise NotLite
    return out


def trusted_base_spec_doc(doc: object) -> TrustedBaseSpec:
    """A manifest `[trusted_base]` table models.TrustedBaseSpec would accept, as its twin."""
    t = _table(doc, (), ("read_only", "deny"))
    return TrustedBaseSpec(
        read_only=_abs_list(t.get("read_only", [])), deny=_abs_list(t.get("deny", []))
    )


def trusted_base_doc(doc: object) -> TrustedBasePolicy:
    """A parsed `trusted-base.toml` models.TrustedBasePolicy would accept, as its twin."""
    t = _table(doc, ("schema_version", "rationale"), ("read_only", "deny", "discover"))
    raw = t.get("discover", [])
    if type(raw) is not list:
        raise NotLite
    discover = [_str(v) for v in raw]
    if any(d != "python-site-packages" for d in discover):
        raise NotLite
    return TrustedBasePolicy(
        schema_version=_version(t["schema_version"]),
        rationale=_str(t["rationale"]),
        read_only=_abs_list(t.get("read_only", [])),
        deny=_abs_list(t.get("deny", [])),
        discover=discover,
    )


def manifest_doc(doc: object) -> RootsManifest:
    """A parsed roots manifest the strict models.RootsManifest would accept, as its twin."""
    top = _table(doc, ("schema_version", "roots"), ("trusted_base",))
    raw_roots = top["roots"]
    if type(raw_roots) is not list or not raw_roots:
        raise NotLite
    roots: list[RootSpec] = []
    for raw in raw_roots:
        r = _table(raw, ("id", "path"), ("backend", "description", "allow_missing"))
        path = _str(r["path"])
        if not path.startswith("/"):
            raise NotLite
        roots.append(
            RootSpec(
                id=_slug(r["id"]),
                path=path,
                backend=_slug(r["backend"]) if "backend" in r else None,
                description=_str(r["description"]) if "description" in r else None,
                allow_missing=_bool(r["allow_missing"]) if "allow_missing" in r else False,
            )
        )
    tb = trusted_base_spec_doc(top["trusted_base"]) if "trusted_base" in top else None
    return RootsManifest(
        schema_version=_version(top["schema_version"]), roots=roots, trusted_base=tb
    )


_APPROVAL_POLICIES = ("untrusted", "on-failure", "on-request", "never")
_REVIEWERS = ("user", "auto_review")


def mode_map_doc(doc: object) -> ModeMap:
    """A parsed `modes.toml` the strict models.ModeMap would accept, as its twin."""
    top = _table(doc, ("schema_version", "default_mode", "modes"), ("account_apps",))
    raw_modes = top["modes"]
    if type(raw_modes) is not dict:
        raise NotLite
    modes: dict[str, ModeMapEntry] = {}
    for name, raw in raw_modes.items():
        e = _table(raw, ("profile_id", "base"), ("approval_policy", "approvals_reviewer"))
        base = _str(e["base"])
        if _BASE_FILE.fullmatch(base) is None:
            raise NotLite
        policy = e.get("approval_policy")
        if policy is not None and policy not in _APPROVAL_POLICIES:
            raise NotLite
        reviewer = e.get("approvals_reviewer")
        if reviewer is not None and reviewer not in _REVIEWERS:
            raise NotLite
        modes[_slug(name)] = ModeMapEntry(
            profile_id=_slug(e["profile_id"]),
            base=base,
            approval_policy=policy,
            approvals_reviewer=reviewer,
        )
    return ModeMap(
        schema_version=_version(top["schema_version"]),
        default_mode=_slug(top["default_mode"]),
        modes=modes,
        account_apps=_bool(top["account_apps"]) if "account_apps" in top else False,
    )


def _access(value: object) -> str:
    if type(value) is not str or value not in _POLICY_ACCESS:
        raise NotLite
    return value


def policy_doc(doc: object) -> ModeProfilePolicy:
    """A parsed base profile the strict models.ModeProfilePolicy would accept, as its twin."""
    top = _table(
        doc,
        (
            "schema_version",
            "mode",
            "description",
            "rationale",
        ),
        ("extends", "filesystem", "glob_scan_max_depth", "network"),
    )
    extends = top.get("extends")
    if extends is not None and extends not in (":read-only", ":workspace"):
        raise NotLite
    filesystem: dict[str, Any] = {}
    raw_fs = top.get("filesystem", {})
    if type(raw_fs) is not dict:
        raise NotLite
    for key, value in raw_fs.items():
        if type(value) is dict:
            filesystem[key] = {_str(k): _access(v) for k, v in value.items()}
        else:
            filesystem[key] = _access(value)
    depth = top.get("glob_scan_max_depth")
    if depth is not None and (type(depth) is not int or depth < 1):
        raise NotLite
    net = _table(top.get("network", {}), (), ("enabled",))
    return ModeProfilePolicy(
        schema_version=_version(top["schema_version"]),
        mode=_slug(top["mode"]),
        description=_str(top["description"]),
        rationale=_str(top["rationale"]),
        extends=extends,
        filesystem=filesystem,
        glob_scan_max_depth=depth,
        network=NetworkPolicy(enabled=_bool(net["enabled"]) if "enabled" in net else False),
    )
