"""Codex's profile resolution, as a pure function (no I/O).

`resolve()` turns a `[permissions]` table plus a session context into an `EffectiveProfile`,
the same entry list `codex debug prompt-input` prints (specials expanded), plus the read-only
carve-outs (`.git .agents .codex .aws`) that the Linux sandbox mounts inside *every* writable
root at run time. `EffectiveProfile.decide()` answers what the compiled policy gives one path;
what the sandbox really does on a filesystem is `codex.enforce`. Every rule here was checked
against the real binary; see docs/codex-semantics.md for the commands and outputs.

Complexity (n = entries after expansion, d = depth of the query path, g = deny globs):
- `resolve()`: O(n log n) -- expansion is linear, one sort, and the carve-out pass calls
  `decide()` once per write entry at O(d) each.
- `decide()`: O(d + g) -- exact entries are indexed by path and only the query's ancestors
  are looked up; globs (deny-only, few in practice) are matched from a separate list.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from .globs import glob_regex, has_glob
from .lexical import EvaluationError, ancestors, normalize_abs
from .vocabulary import (
    BUILTIN_FULL,
    BUILTIN_READ_ONLY,
    BUILTIN_WORKSPACE,
    CARVE_OUTS,
    MINIMAL_LINUX,
    SCOPABLE_SPECIALS,
    SPECIAL_MINIMAL,
    SPECIAL_ROOT,
    SPECIAL_SLASH_TMP,
    SPECIAL_TMPDIR,
    SPECIAL_WORKSPACE_ROOTS,
    SPECIALS,
    Access,
)

#: The TOML projection Codex uses when a user profile `extends` a built-in.
EXTENSIBLE_PARENTS: dict[str, dict[str, Any]] = {
    BUILTIN_READ_ONLY: {"filesystem": {SPECIAL_ROOT: "read"}},
    BUILTIN_WORKSPACE: {
        "filesystem": {
            SPECIAL_ROOT: "read",
            SPECIAL_SLASH_TMP: "write",
            SPECIAL_TMPDIR: "write",
            # A table, not a string: a child's `:workspace_roots` table merges into it.
            SPECIAL_WORKSPACE_ROOTS: {".": "write"},
        }
    },
}
_NO_NESTING = SPECIALS - SCOPABLE_SPECIALS


RANK: dict[str, int] = {"read": 0, "write": 1, "deny": 2}
EQUAL_PATH_RULE = "deny > write > read at equal path"
MORE_SPECIFIC_RULE = "more specific"
_ENUM_ERROR = "data did not match any variant of untagged enum FilesystemPermissionToml"


# The evaluator's records are NamedTuples (immutable, compared and hashed by value, like a frozen
# dataclass): a frozen slotted dataclass generates and compiles six methods when its class is
# created, in every process that imports this module; a NamedTuple class costs a tenth of that.
# EffectiveProfile stays a dataclass: it builds its lookup index after init.
class EvalContext(NamedTuple):
    """The session facts a profile is resolved against."""

    cwd: str
    workspace_roots: tuple[str, ...] = ()
    tmpdir: str | None = None
    home: str | None = None


#: Where evaluation puts the session cwd when the launcher did not name workspace roots: a
#: path that holds nothing, so no root is accidentally "inside the workspace".
PLACEHOLDER_CWD = "/nonexistent/profilec-session-cwd"


def session_contexts(
    workspace_roots: Sequence[str],
    *,
    cwd: str | None = None,
    tmpdir: str | None = None,
    home: str | None = None,
) -> list[EvalContext]:
    """One context per possible session cwd: `cwd` when the launcher names it, else each
    workspace root in turn (the others as extra roots), else the placeholder. The first is the
    launch the bundle describes (its first workspace root as cwd)."""
    if cwd is not None:
        cwds: Sequence[str] = (cwd,)
    else:
        cwds = workspace_roots or (PLACEHOLDER_CWD,)
    return cwd_contexts(cwds, workspace_roots, tmpdir=tmpdir, home=home)


def cwd_contexts(
    cwds: Sequence[str],
    workspace_roots: Sequence[str],
    *,
    tmpdir: str | None = None,
    home: str | None = None,
) -> list[EvalContext]:
    """One context per session cwd in `cwds` that lies outside the workspace (CODEX_HOME,
    HOME, a vault, ...): a client may start the session there, and under `:workspace` that
    cwd becomes a writable root. Every workspace root stays listed as an extra root."""
    return [
        EvalContext(
            cwd=c,
            workspace_roots=tuple(r for r in workspace_roots if r != c),
            tmpdir=tmpdir,
            home=home,
        )
        for c in cwds
    ]


class Entry(NamedTuple):
    """One compiled filesystem entry: an exact subtree path or a deny glob."""

    kind: Literal["path", "glob"]
    path: str
    access: Access
    source: str


class Decision(NamedTuple):
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
    return (e.path, e.kind, RANK[e.access], e.source)


@dataclass(frozen=True, slots=True)
class EffectiveProfile:
    """A resolved profile: expanded entries, network state and an O(depth) lookup index."""

    profile_id: str
    unrestricted: bool
    entries: tuple[Entry, ...]
    network_enabled: bool
    workspace_roots: tuple[str, ...]
    warnings: tuple[str, ...]
    #: `filesystem.glob_scan_max_depth` of the merged profile (None: uncapped scan).
    glob_scan_max_depth: int | None = None
    #: Absolute scoped-table keys Codex refuses at sandbox start ("unsupported configuration
    #: path ... using POSIX path syntax"): see `_unsupported_syntax`.
    syntax_errors: tuple[str, ...] = ()
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
        for depth, anc in enumerate(reversed(ancestors(p))):
            for e in self._exact.get(anc, ()):
                matches.append((depth, e))
        if self._globs:
            chain = ancestors(p)  # most specific first
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
        best_depth, winner = max(matches, key=lambda m: (m[0], RANK[m[1].access]))
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
                        if RANK[e.access] > RANK[top.access]:
                            top = e
                    return top.access, top
                if cur == "/":
                    return None, None
                cur = cur[: cur.rfind("/")] or "/"
        best: tuple[int, int] | None = None
        found: Entry | None = None
        for depth, e in self._matches(p):
            key = (depth, RANK[e.access])
            if best is None or key > best:  # first of equals wins, as max() picks
                best, found = key, e
        return (found.access, found) if found is not None else (None, None)


def _access(value: object) -> Access:
    if value == "read" or value == "write" or value == "deny":
        return value
    if value == "none":  # legacy alias Codex still accepts
        return "deny"
    raise EvaluationError(_ENUM_ERROR)


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """TOML deep merge (Codex's, for `extends` and for config layers): tables merge key by
    key, anything else in `over` replaces."""
    out = dict(base)
    for k, v in over.items():
        cur = out.get(k)
        # `cur is not None` first: most keys are new, and isinstance against the Mapping ABC
        # is the slow part of this loop
        if cur is not None and isinstance(v, Mapping) and isinstance(cur, Mapping):
            out[k] = merge(cur, v)
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
            if parent not in EXTENSIBLE_PARENTS:
                raise EvaluationError(
                    f"permissions profile `{cur}` cannot extend unsupported built-in "
                    f"profile `{parent}`"
                )
            base = EXTENSIBLE_PARENTS[parent]
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
        merged = merge(merged, table)
    return merged


def follows_cwd(permissions: Mapping[str, Any], profile_id: str) -> bool:
    """True when `profile_id` (a user profile) resolves differently per session cwd: its merged
    filesystem names `:workspace_roots` (or `:project_roots`; `extends = ":workspace"` brings
    one), or its `workspace_roots` table holds a relative key (resolved against the cwd). Else
    every cwd yields the same entries: `resolve()` reads the cwd for nothing else."""
    merged = _merged_table(permissions, profile_id)
    fs = merged.get("filesystem")
    if isinstance(fs, Mapping) and not SCOPABLE_SPECIALS.isdisjoint(fs):
        return True
    roots = merged.get("workspace_roots")
    return isinstance(roots, Mapping) and any(
        not str(k).startswith("/") and roots[k] is True for k in roots
    )


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
        self.syntax_errors: list[str] = []

    def add(self, base: str, sub: str, access: Access, source: str, key: str) -> None:
        """Add base/sub, turning glob subpaths into deny globs or `/**` subtree rules.

        Only the text the user wrote can make a glob: a special's expansion (the cwd, TMPDIR,
        HOME) is literal even when it holds `*?[]` (measured: a cwd named `q?` stays a root).
        """
        full = base if not sub else base.rstrip("/") + "/" + sub
        lit = self._literal_prefix(key, base, sub)
        if has_glob(full[lit:]):
            if access == "deny":
                # Codex joins base and subpath unescaped (what prompt-input prints).
                self.entries.append(Entry("glob", _norm_glob(full), "deny", source))
                return
            stem = full[: -len("/**")] if full.endswith("/**") else None
            if stem is None or has_glob(stem[lit:]):
                raise EvaluationError(_glob_error(key, access))
            full = stem
        self.entries.append(Entry("path", normalize_abs(full), access, source))

    def _literal_prefix(self, key: str, base: str, sub: str) -> int:
        """How many leading characters of base/sub came from an expansion, not from the key."""
        top = key.split("/", 1)[0] if key.startswith(":") else key
        if sub:
            return len(base)  # a scoped table's base is literal (measured: `/d/x*y`={m=read})
        if key.startswith("/"):
            return 0
        if top == "~" or key.startswith("~/"):
            return len((self.ctx.home or "").rstrip("/"))
        return len(base)

    def bases(self, key: str) -> list[str] | None:
        """Absolute bases a top-level key stands for; None = ignored (warned)."""
        if key in SCOPABLE_SPECIALS:
            return list(self.roots)
        if key == SPECIAL_ROOT:
            return ["/"]
        if key == SPECIAL_MINIMAL:
            return list(MINIMAL_LINUX)
        if key == SPECIAL_SLASH_TMP:
            return ["/tmp"]
        if key == SPECIAL_TMPDIR:
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
            # a string is never a table: asking the Mapping ABC about one is the slow path
            if type(value) is dict or (type(value) is not str and isinstance(value, Mapping)):
                # Codex accepts a table holding only "." (the special itself), nothing else.
                if key in _NO_NESTING and set(value) != {"."}:
                    raise EvaluationError(
                        f"filesystem path `{key}` does not support nested entries"
                    )
                subs = [(_subpath(s), _access(a), s) for s, a in sorted(value.items())]
                bases = self.bases(key)
                if not key.startswith(":"):
                    pairs = [(sub, access) for sub, access, _r in subs]
                    self.syntax_errors += [b for b in bases or [] if _unsupported_syntax(b, pairs)]
                if bases is None:
                    # Unknown special: no base to anchor a glob on, so Codex refuses any glob
                    # subpath (even a deny) except a plain trailing `/**`.
                    for sub, access, raw in subs:
                        stem = sub[: -len("/**")] if sub.endswith("/**") else sub
                        if has_glob(stem):
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


#: In a scoped table's absolute key, these make Codex treat the key as a pattern base.
_SCOPED_BASE_SPECIAL = frozenset("*?[]{}\\")
#: In a deny subpath of such a table, these make the subpath a pattern.
_SCOPED_SUB_PATTERN = frozenset("*?[]{}")
_BRACES = frozenset("{}")


def _unsupported_syntax(base: str, subs: list[tuple[str, Access]]) -> bool:
    """Codex 0.171.0 refuses to start (`Error: unsupported configuration path "<base>" using
    POSIX path syntax`) on a scoped table under a path key (absolute, or `~`/`~/...` expanded
    with HOME: `base`) that holds one of `* ? [ ] { } \\` and that has a `deny` subpath holding
    one of `* ? [ ] { }`, or any subpath holding `{` or `}` (measured grid: keys `]z x*y q?
    [br] {c,d} z} w{ back\\slash` refuse, also `~/x*y`, and `~` or `~/sub` with HOME
    `.../x*y`, the message naming the expanded path;
    `a b`, `x!y`, `c,d` start; subpaths `* ? [ ] { } {c,d}.t f/** **/f` refuse, `b\\s`, `f`
    and a `read` `f/**` start; a special key such as `:workspace_roots` over a cwd named `x*y`
    starts)."""
    if _SCOPED_BASE_SPECIAL.isdisjoint(base):
        return False
    # a `read`/`write` subpath with `{` or `}` too (7:701 `{"w{" = "read"}`; by hand `a}`,
    # `{c,d}` read or write); with `* ? [ ]` it is a config error first, or a `/**` subtree
    return any(
        not (_SCOPED_SUB_PATTERN if a == "deny" else _BRACES).isdisjoint(sub) for sub, a in subs
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


def _with_carve_outs(entries: tuple[Entry, ...]) -> tuple[Entry, ...]:
    """`entries` (resolved, de-duplicated) sorted, with the run-time read-only carve-outs inside
    every root that resolves to write.

    A write entry's own path has entries, so the walk up from it stops there: without a glob
    it resolves to write unless a deny sits on that same path (deny > write), and no index is
    needed. A glob can mask it from an ancestor: then `winner()` decides.
    """
    top: dict[str, Access] = {}
    reads: set[str] = set()
    globs = False
    for e in entries:
        if e.kind == "glob":
            globs = True
            continue
        if e.access == "read":
            reads.add(e.path)
        if RANK[e.access] > RANK[top.get(e.path, "read")]:
            top[e.path] = e.access
    indexed = EffectiveProfile("", False, entries, False, (), ()) if globs else None
    extra: list[Entry] = []
    for e in entries:
        if e.kind != "path" or e.access != "write":
            continue
        if (indexed.winner(e.path)[0] if indexed else top[e.path]) != "write":
            continue
        # An entry's path is normal already (`add`), and a carve-out name is one plain
        # component: the joined path is normal too.
        stem = "" if e.path == "/" else e.path
        for name in CARVE_OUTS:
            p = f"{stem}/{name}"
            if p in reads:
                continue  # already listed (built-in :workspace prints its own)
            extra.append(Entry("path", p, "read", f"carve-out {name} of writable root {e.path}"))
    # Two write entries on one path (`:slash_tmp` and `:tmpdir`) add equal carve-outs.
    return tuple(sorted(dict.fromkeys([*entries, *extra]), key=_sort_key))


def _check_shapes(permissions: Mapping[str, Any]) -> None:
    """Codex deserializes every profile, selected or not: a bad access value anywhere fails."""
    for table in permissions.values():
        fs = table.get("filesystem") if isinstance(table, Mapping) else None
        if not isinstance(fs, Mapping):
            continue
        for key, value in fs.items():
            if key == "glob_scan_max_depth":
                continue
            table_value = type(value) is dict or (
                type(value) is not str and isinstance(value, Mapping)  # ABC check: slow
            )
            values = value.values() if table_value else (value,)
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
        b.table(EXTENSIBLE_PARENTS[profile_id]["filesystem"])
        if profile_id == BUILTIN_WORKSPACE:
            # Selected directly (not extended), Codex also lists the carve-outs of each
            # workspace root in the compiled profile.
            for r in roots:
                for name in CARVE_OUTS:
                    b.add(r, name, "read", f":workspace carve-out {name}", name)
        entries = _with_carve_outs(tuple(dict.fromkeys(b.entries)))
        return EffectiveProfile(profile_id, False, entries, False, roots, ())
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
    depth = fs.get("glob_scan_max_depth") if isinstance(fs, Mapping) else None
    gdepth = depth if isinstance(depth, int) and not isinstance(depth, bool) else None
    return EffectiveProfile(
        profile_id,
        False,
        _with_carve_outs(entries),
        network,
        roots,
        tuple(b.warnings),
        gdepth,
        tuple(dict.fromkeys(b.syntax_errors)),
    )
