"""Codex 0.171.0 filesystem-permission semantics, as a pure evaluator (no I/O).

`resolve()` turns a `[permissions]` table plus a session context into an `EffectiveProfile`,
the same entry list `codex debug prompt-input` prints (specials expanded), plus the read-only
carve-outs (`.git .agents .codex .aws`) that the Linux sandbox mounts inside *every* writable
root at run time. `EffectiveProfile.decide()` answers what one path gets. Every rule here was
checked against the real binary; see docs/codex-semantics.md for the commands and outputs.

Complexity (n = entries after expansion, d = depth of the query path, g = deny globs):
- `resolve()`: O(n log n) -- expansion is linear, one sort, and the carve-out pass calls
  `decide()` once per write entry at O(d) each.
- `decide()`: O(d + g) -- exact entries are indexed by path and only the query's ancestors
  are looked up; globs (deny-only, few in practice) are matched from a separate list.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import InputError

Access = Literal["read", "write", "deny"]

#: `:minimal` on Linux (`LINUX_PLATFORM_DEFAULT_READ_ROOTS` in codex-rs/linux-sandbox).
MINIMAL_LINUX: tuple[str, ...] = (
    "/bin",
    "/sbin",
    "/usr",
    "/etc",
    "/lib",
    "/lib64",
    "/nix/store",
    "/run/current-system/sw",
)
#: Names the sandbox keeps read-only inside every writable root.
CARVE_OUTS: tuple[str, ...] = (".git", ".agents", ".codex", ".aws")
BUILTIN_READ_ONLY = ":read-only"
BUILTIN_WORKSPACE = ":workspace"
BUILTIN_FULL = ":danger-full-access"
BUILTINS = (BUILTIN_READ_ONLY, BUILTIN_WORKSPACE, BUILTIN_FULL)

#: The TOML projection Codex uses when a user profile `extends` a built-in.
_EXTENSIBLE_PARENTS: dict[str, dict[str, Any]] = {
    BUILTIN_READ_ONLY: {"filesystem": {":root": "read"}},
    BUILTIN_WORKSPACE: {
        "filesystem": {
            ":root": "read",
            ":slash_tmp": "write",
            ":tmpdir": "write",
            # A table, not a string: a child's `:workspace_roots` table merges into it.
            ":workspace_roots": {".": "write"},
        }
    },
}
_NO_NESTING = (":root", ":minimal", ":tmpdir", ":slash_tmp")
_GLOB_CHARS = frozenset("*?[]")
_RANK: dict[str, int] = {"read": 0, "write": 1, "deny": 2}
EQUAL_PATH_RULE = "deny > write > read at equal path"
MORE_SPECIFIC_RULE = "more specific"
_ENUM_ERROR = "data did not match any variant of untagged enum FilesystemPermissionToml"


class EvaluationError(InputError):
    """A profile that Codex itself rejects (message mirrors Codex's own)."""

    kind = "codex-profile"


@dataclass(frozen=True, slots=True)
class EvalContext:
    """The session facts a profile is resolved against."""

    cwd: str
    workspace_roots: tuple[str, ...] = ()
    tmpdir: str | None = None
    home: str | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """One compiled filesystem entry: an exact subtree path or a deny glob."""

    kind: Literal["path", "glob"]
    path: str
    access: Access
    source: str


@dataclass(frozen=True, slots=True)
class Decision:
    """The access one path gets, the entry that decided it and the entries it beat."""

    path: str
    access: Access | None
    winner: Entry | None
    beaten: tuple[tuple[Entry, str], ...]

    @property
    def readable(self) -> bool:
        """True when the path can be read (read or write access)."""
        return self.access in ("read", "write")

    @property
    def writable(self) -> bool:
        """True when the path can be written."""
        return self.access == "write"


def _sort_key(e: Entry) -> tuple[str, str, int, str]:
    return (e.path, e.kind, _RANK[e.access], e.source)


@dataclass(frozen=True, slots=True)
class EffectiveProfile:
    """A resolved profile: expanded entries, network state and an O(depth) lookup index."""

    profile_id: str
    unrestricted: bool
    entries: tuple[Entry, ...]
    network_enabled: bool
    workspace_roots: tuple[str, ...]
    warnings: tuple[str, ...]
    _exact: dict[str, tuple[Entry, ...]] = field(init=False, repr=False, compare=False)
    _globs: tuple[tuple[Entry, re.Pattern[str]], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        exact: dict[str, list[Entry]] = {}
        globs: list[tuple[Entry, re.Pattern[str]]] = []
        for e in self.entries:
            if e.kind == "glob":
                globs.append((e, glob_regex(e.path)))
            else:
                exact.setdefault(e.path, []).append(e)
        object.__setattr__(self, "_exact", {k: tuple(v) for k, v in exact.items()})
        object.__setattr__(self, "_globs", tuple(globs))

    def _matches(self, p: str) -> list[tuple[int, Entry]]:
        """(depth, entry) for every entry covering normalized `p`; depth = its components."""
        matches: list[tuple[int, Entry]] = []
        for depth, anc in enumerate(reversed(_ancestors(p))):
            for e in self._exact.get(anc, ()):
                matches.append((depth, e))
        if self._globs:
            chain = _ancestors(p)  # most specific first
            for e, rx in self._globs:
                # On Linux a glob is expanded to existing matches at sandbox start, so a match
                # on an ancestor masks the whole subtree like an exact deny there.
                for i, anc in enumerate(chain):
                    if rx.fullmatch(anc):
                        matches.append((len(chain) - 1 - i, e))
                        break
        return matches

    def decide(self, path: str) -> Decision:
        """The access Codex gives `path` (absolute): most specific wins, then deny>write>read."""
        p = normalize_abs(path, what="query path")
        if self.unrestricted:
            return Decision(p, "write", None, ())
        matches = self._matches(p)
        if not matches:
            return Decision(p, None, None, ())
        best_depth, winner = max(matches, key=lambda m: (m[0], _RANK[m[1].access]))
        beaten = tuple(
            (e, EQUAL_PATH_RULE if d == best_depth else MORE_SPECIFIC_RULE)
            for d, e in sorted(matches, key=lambda m: (-m[0], _sort_key(m[1])))
            if e is not winner
        )
        return Decision(p, winner.access, winner, beaten)

    def winner(self, path: str) -> tuple[Access | None, Entry | None]:
        """`decide(path)`'s access and winner without ranking the beaten entries (hot loops)."""
        p = normalize_abs(path, what="query path")
        if self.unrestricted:
            return "write", None
        if not self._globs:
            # Exact entries only: the most specific covering path decides, so walk up from
            # `p` and stop at the first that has entries (max rank, first of equals).
            cur = p
            while True:
                here = self._exact.get(cur)
                if here:
                    top = here[0]
                    for e in here[1:]:
                        if _RANK[e.access] > _RANK[top.access]:
                            top = e
                    return top.access, top
                if cur == "/":
                    return None, None
                cur = cur[: cur.rfind("/")] or "/"
        best: tuple[int, int] | None = None
        found: Entry | None = None
        for depth, e in self._matches(p):
            key = (depth, _RANK[e.access])
            if best is None or key > best:  # first of equals wins, as max() picks
                best, found = key, e
        return (found.access, found) if found is not None else (None, None)


def _ancestors(p: str) -> list[str]:
    """`p` and its ancestors, most specific first, ending with `/`."""
    out = [p]
    while p != "/":
        p = p[: p.rfind("/")] or "/"  # posixpath.dirname for a normalized absolute path
        out.append(p)
    return out


def normalize_abs(path: str, *, what: str = "path") -> str:
    """Lexically normalize an absolute path (`..`, `.`, `//`, trailing `/`), as Codex does."""
    if not path.startswith("/"):
        raise EvaluationError(f"{what} `{path}` must be absolute")
    if path == "/" or ("//" not in path and "/." not in path and not path.endswith("/")):
        return path  # already normal: no empty, `.` or `..` segment, no trailing slash
    n = posixpath.normpath(path)
    # POSIX keeps a leading `//`; Codex does not.
    return "/" + n.lstrip("/")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Codex deny glob: `*`/`?` stay in one component, `**/` spans zero or more."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : j]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out))


def _has_glob(s: str) -> bool:
    return not _GLOB_CHARS.isdisjoint(s)


def _access(value: object) -> Access:
    if value == "read" or value == "write" or value == "deny":
        return value
    if value == "none":  # legacy alias Codex still accepts
        return "deny"
    raise EvaluationError(_ENUM_ERROR)


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """TOML deep merge: tables merge key by key, anything else in `over` replaces."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _merged_table(permissions: Mapping[str, Any], profile_id: str) -> dict[str, Any]:
    """Walk `extends` child -> parent, then fold parent first (Codex resolve_profile)."""
    chain: list[Mapping[str, Any]] = []
    seen: list[str] = []
    cur = profile_id
    base: Mapping[str, Any] = {}
    while True:
        if cur in seen:
            cycle = " -> ".join([*seen[seen.index(cur) :], cur])
            raise EvaluationError(f"permissions profile inheritance cycle detected: {cycle}")
        seen.append(cur)
        table = permissions[cur]
        if not isinstance(table, Mapping):
            raise EvaluationError(f"permissions profile `{cur}` must be a table")
        chain.append(table)
        parent = table.get("extends")
        if parent is None:
            break
        if not isinstance(parent, str):
            raise EvaluationError(f"permissions profile `{cur}` has a non-string `extends`")
        if parent.startswith(":"):
            if parent not in _EXTENSIBLE_PARENTS:
                raise EvaluationError(
                    f"permissions profile `{cur}` cannot extend unsupported built-in "
                    f"profile `{parent}`"
                )
            base = _EXTENSIBLE_PARENTS[parent]
            break
        if parent not in permissions:
            raise EvaluationError(
                f"permissions profile `{cur}` extends undefined profile `{parent}`"
            )
        cur = parent
    merged = dict(base)
    for table in reversed(chain):
        # The parent's description and extends do not survive into the child.
        merged.pop("extends", None)
        merged.pop("description", None)
        merged = _merge(merged, table)
    return merged


def _subpath(sub: str) -> str:
    """Validate a scoped-table subpath; `.` is the scope root itself."""
    if sub == ".":
        return ""
    parts = sub.split("/")
    # Codex rejects empty/absolute subpaths and `.`/`..` components. An interior `.` passes
    # its config check but then breaks prompt-input and the sandbox, so it is rejected too.
    if not sub or sub.startswith("/") or any(p in (".", "..") for p in parts):
        raise EvaluationError(
            f"filesystem subpath `{sub}` must be a descendant path without `.` or `..` components"
        )
    return "/".join(p for p in parts if p)


class _Builder:
    """Expands one merged filesystem table into entries (Codex compile order is irrelevant)."""

    def __init__(self, ctx: EvalContext, roots: tuple[str, ...]) -> None:
        self.ctx = ctx
        self.roots = roots
        self.entries: list[Entry] = []
        self.warnings: list[str] = []

    def add(self, base: str, sub: str, access: Access, source: str, key: str) -> None:
        """Add base/sub, turning glob subpaths into deny globs or `/**` subtree rules."""
        full = base if not sub else base.rstrip("/") + "/" + sub
        if _has_glob(full):
            if access == "deny":
                self.entries.append(Entry("glob", _norm_glob(full), "deny", source))
                return
            stem = full[: -len("/**")] if full.endswith("/**") else None
            if stem is None or _has_glob(stem):
                raise EvaluationError(_glob_error(key, access))
            full = stem
        self.entries.append(Entry("path", normalize_abs(full), access, source))

    def bases(self, key: str) -> list[str] | None:
        """Absolute bases a top-level key stands for; None = ignored (warned)."""
        if key in (":workspace_roots", ":project_roots"):
            return list(self.roots)
        if key == ":root":
            return ["/"]
        if key == ":minimal":
            return list(MINIMAL_LINUX)
        if key == ":slash_tmp":
            return ["/tmp"]
        if key == ":tmpdir":
            # TMPDIR unset: Codex compiles the special but it covers nothing at run time.
            return [normalize_abs(self.ctx.tmpdir)] if self.ctx.tmpdir else []
        if key.startswith(":"):
            self.warnings.append(f"unknown special filesystem path `{key}` ignored")
            return None
        if key == "~" or key.startswith("~/"):
            if self.ctx.home is None:
                self.warnings.append(f"`{key}` ignored: HOME is unset")
                return None
            return [self.ctx.home.rstrip("/") + key[1:]]
        if key.startswith("/"):
            return [key]
        raise EvaluationError(
            f"filesystem path `{key}` must be absolute, use `~/...`, or start with `:`"
        )

    def table(self, fs: Mapping[str, Any]) -> None:
        """Expand every key of a merged `filesystem` table."""
        for key in sorted(fs):
            value = fs[key]
            if key[:1] == "/" and type(value) is str:  # the common case: an absolute path
                self.add(key, "", _access(value), key, key)
                continue
            if key == "glob_scan_max_depth":
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    raise EvaluationError("glob_scan_max_depth must be an integer >= 1")
                continue
            if type(value) is dict or isinstance(value, Mapping):
                # Codex accepts a table holding only "." (the special itself), nothing else.
                if key in _NO_NESTING and set(value) != {"."}:
                    raise EvaluationError(
                        f"filesystem path `{key}` does not support nested entries"
                    )
                subs = [(_subpath(s), _access(a), s) for s, a in sorted(value.items())]
                bases = self.bases(key)
                if bases is None:
                    # Unknown special: no base to anchor a glob on, so Codex refuses any glob
                    # subpath (even a deny) except a plain trailing `/**`.
                    for sub, access, raw in subs:
                        stem = sub[: -len("/**")] if sub.endswith("/**") else sub
                        if _has_glob(stem):
                            raise EvaluationError(_glob_error(raw, access))
                for base in bases or []:
                    for sub, access, raw in subs:
                        self.add(base, sub, access, f"{key}/{raw}" if sub else key, key + "/" + raw)
                continue
            if not isinstance(value, str):
                raise EvaluationError(_ENUM_ERROR)
            access = _access(value)
            for base in self.bases(key) or []:
                self.add(base, "", access, key, key)
        if "glob_scan_max_depth" not in fs and any(
            e.kind == "glob" and "**" in e.path for e in self.entries
        ):
            self.warnings.append(
                "deny glob with `**` but no glob_scan_max_depth: Linux scans without a depth cap"
            )


def _glob_error(key: str, access: Access) -> str:
    return (
        f"filesystem glob path `{key}` only supports `deny` access; use an exact "
        f"path or trailing `/**` for `{access}` subtree access"
    )


def _norm_glob(pattern: str) -> str:
    # Only collapse `//` and trailing `/`; `.`/`..` inside a glob are left as written.
    p = re.sub("/+", "/", pattern)
    return p.rstrip("/") or "/"


def _workspace_roots(ctx: EvalContext, table: object) -> tuple[str, ...]:
    roots: list[str] = [normalize_abs(ctx.cwd, what="cwd")]
    roots += [normalize_abs(r, what="workspace root") for r in ctx.workspace_roots]
    if isinstance(table, Mapping):
        for k in sorted(table):
            if table[k] is True:
                # Relative workspace_roots keys resolve against the session cwd.
                roots.append(normalize_abs(posixpath.join(roots[0], k)))
    return tuple(dict.fromkeys(roots))


def _with_carve_outs(profile: EffectiveProfile) -> tuple[Entry, ...]:
    """Add the run-time read-only carve-outs inside every root that resolves to write."""
    extra: list[Entry] = []
    have = {(e.kind, e.path, e.access) for e in profile.entries}
    for e in profile.entries:
        if e.kind == "path" and e.access == "write" and profile.decide(e.path).writable:
            for name in CARVE_OUTS:
                p = normalize_abs(e.path.rstrip("/") + "/" + name)
                if ("path", p, "read") in have:
                    continue  # already listed (built-in :workspace prints its own)
                extra.append(
                    Entry("path", p, "read", f"carve-out {name} of writable root {e.path}")
                )
    if not extra:  # entries arrive de-duplicated from resolve(): only the order changes
        return tuple(sorted(dict.fromkeys(profile.entries), key=_sort_key))
    return tuple(sorted(set(profile.entries) | set(extra), key=_sort_key))


def _check_shapes(permissions: Mapping[str, Any]) -> None:
    """Codex deserializes every profile, selected or not: a bad access value anywhere fails."""
    for table in permissions.values():
        fs = table.get("filesystem") if isinstance(table, Mapping) else None
        if not isinstance(fs, Mapping):
            continue
        for key, value in fs.items():
            if key == "glob_scan_max_depth":
                continue
            values = (
                value.values() if type(value) is dict or isinstance(value, Mapping) else (value,)
            )
            for v in values:
                _access(v)


def resolve(permissions: Mapping[str, Any], profile_id: str, ctx: EvalContext) -> EffectiveProfile:
    """Resolve `profile_id` (user or built-in) from a parsed `[permissions]` table."""
    _check_shapes(permissions)
    for name in permissions:
        if name.startswith(":"):
            raise EvaluationError(
                f"permissions profile `{name}` uses a reserved built-in profile prefix"
            )
    if profile_id == BUILTIN_FULL:
        roots = _workspace_roots(ctx, None)
        return EffectiveProfile(profile_id, True, (), True, roots, ())
    if profile_id in (BUILTIN_READ_ONLY, BUILTIN_WORKSPACE):
        roots = _workspace_roots(ctx, None)
        b = _Builder(ctx, roots)
        b.table(_EXTENSIBLE_PARENTS[profile_id]["filesystem"])
        if profile_id == BUILTIN_WORKSPACE:
            # Selected directly (not extended), Codex also lists the carve-outs of each
            # workspace root in the compiled profile.
            for r in roots:
                for name in CARVE_OUTS:
                    b.add(r, name, "read", f":workspace carve-out {name}", name)
        base = EffectiveProfile(profile_id, False, tuple(b.entries), False, roots, ())
        return EffectiveProfile(profile_id, False, _with_carve_outs(base), False, roots, ())
    if profile_id.startswith(":"):
        raise EvaluationError(
            f"default_permissions refers to unknown built-in profile `{profile_id}`"
        )
    if profile_id not in permissions:
        raise EvaluationError(f"default_permissions refers to undefined profile `{profile_id}`")
    merged = _merged_table(permissions, profile_id)
    roots = _workspace_roots(ctx, merged.get("workspace_roots"))
    b = _Builder(ctx, roots)
    fs = merged.get("filesystem")
    if fs is not None and not isinstance(fs, Mapping):
        raise EvaluationError(f"permissions profile `{profile_id}` has a non-table `filesystem`")
    b.table(fs or {})
    if not fs:
        b.warnings.append(
            f"Permissions profile `{profile_id}` does not define any recognized filesystem "
            "entries for this version of Codex. Filesystem access will remain restricted."
        )
    net = merged.get("network")
    network = isinstance(net, Mapping) and net.get("enabled") is True
    entries = tuple(dict.fromkeys(b.entries))
    base = EffectiveProfile(profile_id, False, entries, network, roots, ())
    return EffectiveProfile(
        profile_id, False, _with_carve_outs(base), network, roots, tuple(b.warnings)
    )
