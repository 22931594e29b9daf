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

import os
import posixpath
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, Protocol

from .codex import (
    BUILTIN_FULL,
    BUILTIN_READ_ONLY,
    BUILTIN_WORKSPACE,
    CARVE_OUTS,
    DIRECTORY_GLOB_FIXED,
    ENFORCEMENT_VERSION,
    MINIMAL_LINUX,
    SCOPABLE_SPECIALS,
    SPECIAL_MINIMAL,
    SPECIAL_ROOT,
    SPECIAL_SLASH_TMP,
    SPECIAL_TMPDIR,
    SPECIAL_WORKSPACE_ROOTS,
    SPECIALS,
    Access,
    parse_version,
)
from .errors import InputError

#: The TOML projection Codex uses when a user profile `extends` a built-in.
_EXTENSIBLE_PARENTS: dict[str, dict[str, Any]] = {
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
_GLOB_CHARS = frozenset("*?[]")
_RANK: dict[str, int] = {"read": 0, "write": 1, "deny": 2}
EQUAL_PATH_RULE = "deny > write > read at equal path"
MORE_SPECIFIC_RULE = "more specific"
_ENUM_ERROR = "data did not match any variant of untagged enum FilesystemPermissionToml"


class EvaluationError(InputError):
    """A profile that Codex itself rejects (message mirrors Codex's own)."""

    kind = "codex-profile"


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
    return [
        EvalContext(
            cwd=c,
            workspace_roots=tuple(r for r in workspace_roots if r != c),
            tmpdir=tmpdir,
            home=home,
        )
        for c in cwds
    ]


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
    if path == "/" or (
        "//" not in path
        and not path.endswith(("/", "/.", "/.."))
        and ("/." not in path or ("/./" not in path and "/../" not in path))
    ):
        return path  # already normal: no empty, `.` or `..` segment (`/.git` is), no trailing /
    n = posixpath.normpath(path)
    # POSIX keeps a leading `//`; Codex does not.
    return "/" + n.lstrip("/")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Codex deny glob as the Linux sandbox matches it (measured on 0.171.0).

    `*`/`?` stay inside one component, `**/` spans zero or more components, `\\` escapes the
    next character (`\\x` is `x`), `[...]` is a class (`!`/`^` negate, a leading `]` is literal,
    an unclosed `[` is a literal `[`), `{a,b}` is an alternation.
    """
    return re.compile(_glob_body(pattern))


def _glob_body(pattern: str, *, in_brace: bool = False) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 < n:
                out.append(re.escape(pattern[i + 1]))
                i += 2
            else:
                out.append(re.escape(c))
                i += 1
        elif pattern.startswith("**/", i):
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
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1  # a leading `]` is part of the class
            k = pattern.find("]", j)
            if k < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : k]
            neg = body[:1] in ("!", "^")
            if neg:
                body = body[1:]
            cls = "".join("\\" + ch if ch in "\\^[]" else ch for ch in body)
            out.append("[" + ("^/" if neg else "") + cls + "]")
            i = k + 1
        elif c == "{" and not in_brace:
            k = _brace_end(pattern, i)
            if k < 0:
                out.append(re.escape(c))
                i += 1
                continue
            alts = _split_top(pattern[i + 1 : k])
            out.append("(?:" + "|".join(_glob_body(a, in_brace=True) for a in alts) + ")")
            i = k + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def enforced_glob_regex(pattern: str) -> re.Pattern[str]:
    """A deny glob as the sandbox's scan matches it: the literal prefix (the components before
    the first one holding `* ? [ ]`) is a plain directory name, `\\`, `{` and `}` included
    (measured: `/o/back\\slash/m*` masked `/o/back\\slash/m6`); the rest is a globset pattern.
    """
    start = _glob_static_prefix(pattern)
    if start == "/":
        return glob_regex(pattern)
    return re.compile(re.escape(start) + _glob_body(pattern[len(start) :]))


def _brace_end(pattern: str, i: int) -> int:
    j = i + 1
    while j < len(pattern):
        if pattern[j] == "\\":
            j += 2
            continue
        if pattern[j] == "}":
            return j
        j += 1
    return -1


def _split_top(body: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    j = 0
    while j < len(body):
        ch = body[j]
        if ch == "\\" and j + 1 < len(body):
            cur.append(body[j : j + 2])
            j += 2
            continue
        if ch == ",":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        j += 1
    parts.append("".join(cur))
    return parts


def _has_glob(s: str) -> bool:
    return not _GLOB_CHARS.isdisjoint(s)


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
        if _has_glob(full[lit:]):
            if access == "deny":
                # Codex joins base and subpath unescaped (what prompt-input prints).
                self.entries.append(Entry("glob", _norm_glob(full), "deny", source))
                return
            stem = full[: -len("/**")] if full.endswith("/**") else None
            if stem is None or _has_glob(stem[lit:]):
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
        if _RANK[e.access] > _RANK[top.get(e.path, "read")]:
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
        b.table(_EXTENSIBLE_PARENTS[profile_id]["filesystem"])
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


# ---------------------------------------------------------------------------------------------
# Enforcement: what the Linux sandbox really does with a resolved profile (docs/codex-semantics.md
# "Enforcement"). `decide()` above answers what the compiled policy says; `enforce()` answers what
# a sandboxed command sees, given the filesystem as it is when the sandbox starts. Rule: this
# model may be stricter than the sandbox only where the docs say so, never looser.

FsKind = Literal["file", "dir", "link", "other"]
#: Symlinks followed per resolution before the kernel gives up (ELOOP).
_MAX_LINKS = 40


class FsView(Protocol):
    """The filesystem at sandbox start, as lstat/readlink see it (never opened)."""

    def kind(self, path: str) -> FsKind | None:
        """lstat's file type of `path` (links not followed), None when it does not exist."""
        ...

    def readlink(self, path: str) -> str | None:
        """The value of the symlink `path`, None when it is not a link."""
        ...


class FsSnapshot(NamedTuple):
    """A pure FsView from recorded facts (absolute normalized path -> kind / link value).

    Paths outside `scope` (when set) are asked of `outside` (e.g. a live lstat view).
    """

    kinds: Mapping[str, FsKind]
    links: Mapping[str, str] = MappingProxyType({})
    scope: str | None = None
    outside: FsView | None = None

    def _out(self, path: str) -> bool:
        return self.outside is not None and self.scope is not None and not _under(path, self.scope)

    def kind(self, path: str) -> FsKind | None:
        """The recorded kind; unknown paths are missing."""
        if path not in self.kinds and self._out(path):
            assert self.outside is not None
            return self.outside.kind(path)
        return self.kinds.get(path)

    def readlink(self, path: str) -> str | None:
        """The recorded link value."""
        if path not in self.kinds and self._out(path):
            assert self.outside is not None
            return self.outside.readlink(path)
        return self.links.get(path)


class Resolution(NamedTuple):
    """Where a spelling lands: its real path and every directory a lookup happened in."""

    real: str
    searched: tuple[str, ...]
    loop: bool = False
    #: (directory, the path looked up in it), in order.
    lookups: tuple[tuple[str, str], ...] = ()


def resolve_path(fs: FsView | None, path: str) -> Resolution:
    """Follow symlinks component by component as the kernel does (`..` after a link is physical).

    A LiveFs answers each lstat once, so a path resolves the same every time on it: the
    resolution is kept there too (the startup self-check asks ~400 times for ~90 paths)."""
    if type(fs) is LiveFs:
        got = fs.resolved.get(path)
        if got is None:
            got = fs.resolved[path] = _resolve_path(fs, path)
        return got
    return _resolve_path(fs, path)


def _resolve_path(fs: FsView | None, path: str) -> Resolution:
    p = normalize_abs(path, what="path")
    if fs is None or p == "/":
        return Resolution(p, tuple(_ancestors(p)[1:][::-1]))
    todo = [c for c in p.split("/") if c]
    cur = "/"
    searched: list[str] = []
    lookups: list[tuple[str, str]] = []
    hops = 0
    while todo:
        comp = todo.pop(0)
        if comp == ".":
            continue
        if comp == "..":
            cur = posixpath.dirname(cur) if cur != "/" else "/"
            continue
        searched.append(cur)
        cand = (cur.rstrip("/") + "/" + comp) if cur != "/" else "/" + comp
        lookups.append((cur, cand))
        if fs.kind(cand) == "link":
            value = fs.readlink(cand) or ""
            hops += 1
            if hops > _MAX_LINKS or not value:
                return Resolution(cand, tuple(dict.fromkeys(searched)), True, tuple(lookups))
            if value.startswith("/"):
                cur = "/"
            todo = [c for c in value.split("/") if c] + todo
            continue
        cur = cand
    return Resolution(cur, tuple(dict.fromkeys(searched)), False, tuple(lookups))


def _under(path: str, base: str) -> bool:
    return base == "/" or path == base or path.startswith(base.rstrip("/") + "/")


def _is_carve_out(e: Entry) -> bool:
    return e.source.startswith(("carve-out ", ":workspace carve-out "))


class Refusal(NamedTuple):
    """A configuration the sandbox refuses to start with (no command runs)."""

    code: str
    path: str
    message: str


class Dropped(NamedTuple):
    """An entry of the compiled policy that the sandbox does not enforce, and why."""

    entry: Entry
    reason: str


_NESTED = " (inside a denied directory)"


def _glob_static_prefix(pattern: str) -> str:
    """The directory a glob scan starts from: the components before the first glob character."""
    parts = pattern.split("/")
    keep: list[str] = []
    for part in parts[1:]:
        if not _GLOB_CHARS.isdisjoint(part):
            break
        keep.append(part)
    return "/" + "/".join(keep)


def _glob_scan_ok(pattern: str) -> bool:
    """False when a `{`/`}` sits in a directory component of the pattern part (after the
    literal prefix): such a scan found nothing (measured `/h/x*/{dd,x}/in` shape)."""
    tail = _glob_tail(pattern).split("/")
    return not any("{" in part or "}" in part for part in tail[1:-1])


class Enforced(NamedTuple):
    """A resolved profile as the Linux sandbox applies it on one filesystem."""

    profile: EffectiveProfile
    fs: FsView | None
    exact: tuple[tuple[Entry, str], ...]  # (entry, real path) that the sandbox mounts
    globs: tuple[tuple[Entry, re.Pattern[str], str], ...]  # (entry, regex, scan start)
    dropped: tuple[Dropped, ...]
    refusals: tuple[Refusal, ...]
    #: (writable root as spelled, its real location): mounts under the real location that are
    #: not spelled under the root are hidden by the root's bind.
    shadows: tuple[tuple[str, str], ...]
    #: `exact` by real path: the strongest entry there (first of equals) and its rank, so a
    #: lookup walks the path's ancestors instead of scanning every entry (`_index_exact`).
    by_real: Mapping[str, tuple[int, Entry]] = MappingProxyType({})

    def _base(self, real: str) -> tuple[Access | None, Entry | None, int]:
        """Most specific enforced entry covering `real`; depth of the winner (components)."""
        best: tuple[int, int] | None = None
        found: Entry | None = None
        if self.by_real and normalize_abs(real) == real:
            # The ancestors of a normal path are exactly the real paths `_under` accepts, and
            # the deepest one listed wins before any rank is compared.
            p = real
            while True:
                hit = self.by_real.get(p)
                if hit is not None:
                    best, found = (0 if p == "/" else p.count("/"), hit[0]), hit[1]
                    break
                if p == "/":
                    break
                p = p[: p.rfind("/")] or "/"
        else:
            for e, rp in self.exact:
                if _under(real, rp):
                    key = (0 if rp == "/" else rp.count("/"), _RANK[e.access])
                    if best is None or key > best:
                        best, found = key, e
        depth = 0 if real == "/" else real.count("/")
        for e, rx, start in self.globs:
            if rx.fullmatch(real) and self._glob_masks(e, real, start):
                key = (depth, _RANK["deny"])
                if best is None or key > best:
                    best, found = key, e
        if found is None or best is None:
            return None, None, -1
        return found.access, found, best[0]

    def _glob_masks(self, e: Entry, real: str, start: str) -> bool:
        if self.fs is None:
            return False  # a glob masks only files that exist at start: unknown, so nothing
        if self.fs.kind(real) not in ("file", "other"):
            return False
        depth = self.profile.glob_scan_max_depth
        if (
            depth is not None
            and real.count("/") - (0 if start == "/" else start.count("/")) > depth
        ):
            return False
        return not any(_under(real, r) and not _under(start, w) for w, r in self.shadows)

    def decide(self, spelling: str) -> Decision:
        """The access a sandboxed command gets at `spelling` (links followed, mounts applied)."""
        if self.profile.unrestricted:
            return Decision(normalize_abs(spelling, what="query path"), "write", None, ())
        res = resolve_path(self.fs, spelling)
        access, winner, _depth = self._base(res.real)
        if res.loop:
            return Decision(res.real, "deny", winner, ())
        # A lookup inside a denied directory fails (difftest 20261204:67: `<denied>/l1 -> ws`
        # read nothing), except on the way to a writable target (20261204:269 wrote through
        # `<denied>/l0`; a cwd below a denied HOME works).
        # A name that leads to a writable root's mount point is found (20261204:1308: TMPDIR
        # below a denied `<tmp>`, then a link in it).
        if access != "write":
            writes = [r for e, r in self.exact if e.access == "write"]
            for d, cand in res.lookups:
                a, w, _wd = self._base(d)
                if a == "deny" and w is not None and w.kind == "path":
                    if any(_under(wr, cand) for wr in writes):
                        continue
                    return Decision(res.real, "deny", w, ())
        return Decision(res.real, access, winner, ())


def _real(fs: FsView | None, path: str) -> str:
    return resolve_path(fs, path).real


def _glob_in_directory(pattern: str) -> bool:
    """True when a glob character sits in a directory component after the literal prefix."""
    tail = _glob_tail(pattern)
    return "/" in tail[1:]


def enforce(
    profile: EffectiveProfile, fs: FsView | None = None, *, codex_version: str | None = None
) -> Enforced:
    """Model the sandbox: which entries it mounts, where, and whether it starts at all.

    `codex_version` (default: the measured 0.171.0) selects version differences seen by the
    differential tester: before 0.171.0 (0.165.0 measured) a deny glob with a glob character
    in a directory component after its literal prefix masks nothing.
    """
    old = parse_version(codex_version or ENFORCEMENT_VERSION)[:3] < DIRECTORY_GLOB_FIXED
    if profile.unrestricted:
        return Enforced(profile, fs, (), (), (), (), ())
    entries = list(profile.entries)
    dropped: list[Dropped] = []
    keep: list[Entry] = []
    full_write = profile.winner("/")[0] == "write" and not any(
        e.access != "write" and not _is_carve_out(e) for e in entries
    )
    for e in entries:
        if e.source == SPECIAL_MINIMAL and e.access == "deny":
            dropped.append(Dropped(e, '":minimal" = "deny" is not enforced'))
        elif full_write and _is_carve_out(e):
            dropped.append(
                Dropped(e, 'a write-only profile with ":root" = "write" mounts no carve-outs')
            )
        else:
            keep.append(e)
    shadows: list[tuple[str, str]] = []
    for e in keep:
        if e.kind == "path" and e.access == "write":
            r = _real(fs, e.path)
            if r != e.path:
                shadows.append((e.path, r))
    exact: list[tuple[Entry, str]] = []
    globs: list[tuple[Entry, re.Pattern[str], str]] = []
    for e in keep:
        if e.kind == "glob":
            if not _glob_scan_ok(e.path):
                dropped.append(
                    Dropped(e, "a `{` or `}` in a directory component: the scan finds nothing")
                )
                continue
            if old and _glob_in_directory(e.path):
                dropped.append(
                    Dropped(
                        e,
                        "Codex < 0.171.0 masks nothing for a glob character in a directory "
                        "component (measured on 0.165.0)",
                    )
                )
                continue
            start = _glob_static_prefix(e.path)
            if _real(fs, start) != start:
                dropped.append(
                    Dropped(e, "the glob's scan starts at a symlinked path (not modelled)")
                )
                continue
            globs.append((e, enforced_glob_regex(e.path), start))
            continue
        r = _real(fs, e.path)
        if e.access == "read" and fs is not None and fs.kind(e.path) == "link":
            # difftest 7:161: a read key that is a link to a file in a writable root left the
            # file writable; the read-only mount is not modelled at the target
            dropped.append(Dropped(e, "a read key that is a symlink is not applied at its target"))
            continue
        if e.access != "write":
            parent = _real(fs, posixpath.dirname(e.path)) if e.path != "/" else "/"
            hidden = next(
                (
                    w
                    for w, wr in shadows
                    if (_under(r, wr) or _under(e.path, wr) or _under(parent, wr))
                    and not _under(e.path, w)
                ),
                None,
            )
            if hidden is not None:
                dropped.append(
                    Dropped(e, f"under writable root {hidden}, spelled through a symlink")
                )
                continue
        exact.append((e, r))
    # A read entry nested in a denied directory is unreachable (mode-000 tmpfs above it),
    # unless a write entry lies between them.
    deny_reals = [orp for o, orp in exact if o.access == "deny"]
    write_reals = [wrp for w, wrp in exact if w.access == "write"]
    adjusted: list[tuple[Entry, str]] = []
    for e, r in exact:
        if e.access == "read":
            outer = [orp for orp in deny_reals if orp != r and _under(r, orp)]
            if outer and not any(
                _under(r, wrp) and any(_under(wrp, orp) and wrp != orp for orp in outer)
                for wrp in write_reals
            ):
                adjusted.append((Entry(e.kind, e.path, "deny", e.source + _NESTED), r))
                continue
        adjusted.append((e, r))
    exact_t = tuple(adjusted)
    enf = Enforced(
        profile,
        fs,
        exact_t,
        tuple(globs),
        tuple(dropped),
        (),
        tuple(shadows),
        _index_exact(exact_t),
    )
    return Enforced(
        profile,
        fs,
        enf.exact,
        enf.globs,
        enf.dropped,
        tuple(_refusals(enf, full_write)),
        enf.shadows,
        enf.by_real,
    )


def _index_exact(exact: Sequence[tuple[Entry, str]]) -> dict[str, tuple[int, Entry]]:
    """Per real path, the (rank, entry) `_base`'s scan would pick there: the highest rank, the
    first of equals. Empty when a real path is not normal (the scan then decides)."""
    out: dict[str, tuple[int, Entry]] = {}
    for e, rp in exact:
        if normalize_abs(rp) != rp:
            return {}
        rank = _RANK[e.access]
        have = out.get(rp)
        if have is None or rank > have[0]:
            out[rp] = (rank, e)
    return out


def _wins(prof: EffectiveProfile, e: Entry) -> bool:
    """True when `e` decides its own path among the exact entries (an equal-path stronger exact
    entry beats it). A deny glob matching the same path does not: the sandbox still mounts the
    entry (20261203:520 `<ws>/*` deny plus a read on the link `<ws>/l0` refused as a crossing;
    20261203:571 `<ws>/*` deny plus a write on the file link `<ws>/l0` refused as write-on-file).
    """
    here = prof._exact.get(e.path, ())
    return bool(here) and max(_RANK[x.access] for x in here) == _RANK[e.access]


def _containing_roots(prof: EffectiveProfile, path: str) -> list[str]:
    """Every write entry that lexically contains `path`, deepest first."""
    roots = {
        w.path
        for w in prof.entries
        if w.kind == "path" and w.access == "write" and _under(path, w.path)
    }
    return sorted(roots, key=len, reverse=True)


def _crossed_link(fs: FsView, root: str, path: str) -> str | None:
    """The first symlink among `path`'s components strictly below `root` (spelled)."""
    if path == root:
        return None
    rest = path[len(root.rstrip("/")) + 1 :].split("/")
    spelled = root.rstrip("/")
    parent_real = resolve_path(fs, root).real
    for comp in rest:
        spelled = f"{spelled}/{comp}"
        cand = f"{parent_real.rstrip('/')}/{comp}"
        k = fs.kind(cand)
        if k == "link":
            return spelled
        if k is None:
            return None
        parent_real = cand
    return None


def _link_key_refusal(fs: FsView, key: str) -> str | None:
    """bwrap's error for a read/deny key that is itself a symlink (measured grid, 0.171.0).

    An absolute link whose target exists (file, directory, its own parent) refuses; an
    absolute link to nothing starts; a relative link starts unless it points at its own
    directory (`.`). An absolute link to a chain refuses by the kind at the chain's end
    (difftest 20261203:105, :729, :918, 7:868, 7:951); a relative link to a chain is not
    modelled.
    """
    value = fs.readlink(key) if fs.kind(key) == "link" else None
    if value is None:
        return None
    holder = posixpath.dirname(key)
    first = value if value.startswith("/") else posixpath.join(holder, value)
    first = "/" + posixpath.normpath(first).lstrip("/")
    kind = fs.kind(first)
    if kind == "link":
        if not value.startswith("/"):
            return None
        end = resolve_path(fs, key)
        if end.loop:
            return None
        kind = fs.kind(end.real)
    if value.startswith("/"):
        if kind is None:
            return None
        if kind == "dir":
            return f"bwrap: Can't mount tmpfs on /newroot{key}: No such file or directory"
        return f"bwrap: Can't create file at {key}: No such file or directory"
    if _under(holder, first):
        return (
            f"bwrap: Can't remount readonly on /newroot{key}: realpath(destination): "
            "No such file or directory"
        )
    return None


def _glob_tail(pattern: str) -> str:
    """The part of a glob after its static prefix (components without `* ? [ ]`)."""
    parts = pattern.split("/")
    for i, part in enumerate(parts[1:], start=1):
        if any(c in part for c in "*?[]"):
            return "/" + "/".join(parts[i:])
    return ""


def _refusals(enf: Enforced, full_write: bool) -> list[Refusal]:
    """The start-up failures measured on 0.171.0 (research §5, difftest); without an fs only
    the ones the configuration alone decides."""
    fs = enf.fs
    prof = enf.profile
    out: list[Refusal] = [
        Refusal(
            "unsupported-path-syntax",
            key,
            f'Error: unsupported configuration path "{key}" using POSIX path syntax',
        )
        for key in prof.syntax_errors
    ]
    if fs is None:
        return out
    carve = not full_write
    for e in prof.entries:
        if e.kind != "path" or not _wins(prof, e):
            continue
        res = resolve_path(fs, e.path)
        if e.access == "write" and carve and fs.kind(res.real) in ("file", "other"):
            out.append(
                Refusal(
                    "write-on-file",
                    e.path,
                    f"bwrap: Can't mkdir parents for {res.real}/.git: Not a directory",
                )
            )
        if e.access == "write" or _is_carve_out(e) or e.source == SPECIAL_MINIMAL:
            continue
        link = next(
            (x for w in _containing_roots(prof, e.path) if (x := _crossed_link(fs, w, e.path))),
            None,
        )
        if link is not None:
            what = "read-only" if e.access == "read" else "deny-read"
            out.append(
                Refusal(
                    "crosses-writable-symlink",
                    e.path,
                    f"Fatal error: cannot enforce sandbox {what} path {e.path} because it "
                    f"crosses writable symlink {link}",
                )
            )
            continue
        refusal = _link_key_refusal(fs, e.path) if e.access == "deny" else None
        if refusal is not None:
            out.append(Refusal("entry-on-symlink", e.path, refusal))
    for g in prof.entries:
        if g.kind != "glob":
            continue
        tail = _glob_tail(g.path)
        bad = _brace_error(tail)
        if bad:
            out.append(
                Refusal(
                    "invalid-glob",
                    g.path,
                    "Fatal error: unreadable glob pattern is invalid for ...: error parsing glob "
                    f"'{tail}': {bad}",
                )
            )
    denies = [
        (e, r)
        for e, r in enf.exact
        if e.access == "deny" and e.kind == "path" and not e.source.endswith(_NESTED)
    ]
    exact_denies = list(denies)
    # A deny dropped because a writable root spelled through a link hides it is still mounted
    # at start-up (difftest 7:451: `<l0>` -> `<ws>/lib` write, `<ws>/lib` and `<ws>/lib/m6`
    # denied: "Can't create file at <ws>/lib/m6: Read-only file system").
    denies += [
        (d.entry, _real(fs, d.entry.path))
        for d in enf.dropped
        if d.entry.kind == "path"
        and d.entry.access == "deny"
        and d.reason.startswith("under writable root ")
    ]
    # A writable root shields by its real path and by its spelling (difftest 20261203:413: the
    # cwd `<o>/back\\slash/l3` -> `<ws>` under denied `<o>` and `<o>/back\\slash` starts).
    writes = [r for e, r in enf.exact if e.access == "write"]
    writes += [e.path for e, _r in enf.exact if e.access == "write"]
    linked = {r for e, r in enf.exact if e.access == "write" and r != e.path}

    def shielded(inner: str, outer: str) -> bool:
        # a writable root inside the denied directory, above or below the inner entry, has its
        # mount point (and the directories to it) made first -- unless a writable root strictly
        # above the denied directory holds it (difftest 20261203:190, by hand: `:root` = write
        # refuses where `:root` = read starts)
        if any(_under(outer, w) and w != outer for w in writes):
            return False
        if outer in linked:
            # a writable root spelled through a link onto the denied directory itself
            # (7:451 shape by hand: `:root` = read starts, `:root` = write refuses)
            return True
        return any(
            _under(w, outer) and w != outer and (_under(inner, w) or _under(w, inner))
            for w in writes
        )

    def mounted_first(outer: str, inner: str) -> bool:
        # bwrap gets the deny mounts ordered by the spelled path's depth, then by the path: an
        # inner mount made before the outer tmpfs is hidden by it instead of failing (bwrap
        # argv on 0.171.0: deny `<h>/l0` -> `../o` comes before `<o>/m3` and refuses; deny
        # `<h>/n/l0` -> `../../o` comes after it and starts; 20261203:391, :879)
        return (outer.count("/"), outer) < (inner.count("/"), inner)

    for e0, r in denies:
        if fs.kind(r) != "dir":
            continue
        for e2, r2 in denies:
            if r2 == r or not _under(r2, r) or shielded(r2, r):
                continue
            if not mounted_first(e0.path, e2.path):
                continue
            spelled = r2
            k = fs.kind(
                resolve_path(fs, posixpath.dirname(e2.path)).real
                + "/"
                + posixpath.basename(e2.path)
            )
            if k is not None:
                out.append(
                    Refusal(
                        "deny-inside-denied-dir",
                        spelled,
                        f"bwrap: Can't create file at {spelled}: Read-only file system "
                        "(a directory: Can't mkdir)",
                    )
                )
            elif any(_under(r, w) and w != r for w in writes):
                # A missing inner path refuses only below a writable root above the denied
                # directory (by hand, 0.171.0: `<o>` and `<o>/k1/vault` denied start under
                # :read-only, :workspace or `:root` = read, and refuse under `:root` = write or
                # a writable parent, also for a missing file in an existing directory;
                # 20261203:826 started, 7:848 refused)
                out.append(
                    Refusal(
                        "deny-inside-denied-dir",
                        spelled,
                        f"bwrap: Can't mkdir parents for {spelled}: Read-only file system",
                    )
                )
    if isinstance(fs, FsSnapshot) and enf.globs:
        # A deny glob is expanded to the existing files it matches; one inside a denied
        # directory refuses like an exact deny there.
        # (exact denies only: 20261203:413 started with a dropped `<ws>` deny and `<ws>/*`)
        dirs = [(e.path, r) for e, r in exact_denies if fs.kind(r) == "dir"]
        for path, kind in sorted(fs.kinds.items()):
            if kind not in ("file", "other") or not any(
                _under(path, d)
                and path != d
                and not shielded(path, d)
                and mounted_first(spelled_d, path)
                for spelled_d, d in dirs
            ):
                continue
            if any(rx.fullmatch(path) for _g, rx, _s in enf.globs):
                out.append(
                    Refusal(
                        "deny-inside-denied-dir",
                        path,
                        f"bwrap: Can't create file at {path}: Read-only file system",
                    )
                )
    if isinstance(fs, FsSnapshot) and enf.globs:
        # A `:workspace_roots` deny glob subpath over a workspace root whose path holds
        # `* ? [ ]`, plus another deny glob matching an existing file inside that root, refuses
        # (7:22; by hand: cwd `<ws>/s/x*y`, {"m*" = "deny"} or {"s/x*y/m8" = "deny"} plus
        # `<ws>/s/x*y/??` refuses "Can't create file at <ws>/s/x*y/m8: Read-only file system";
        # either alone, an exact subpath, or a cwd without glob characters starts).
        scoped = any(
            g.kind == "glob" and g.source.startswith(":workspace_roots/") for g in prof.entries
        )
        for root in prof.workspace_roots if scoped else ():
            if _GLOB_CHARS.isdisjoint(root):
                continue
            for path, kind in sorted(fs.kinds.items()):
                if kind not in ("file", "other") or path == root or not _under(path, root):
                    continue
                if any(
                    rx.fullmatch(path) and not e.source.startswith(":workspace_roots/")
                    for e, rx, _s in enf.globs
                ):
                    out.append(
                        Refusal(
                            "deny-inside-denied-dir",
                            path,
                            f"bwrap: Can't create file at {path}: Read-only file system",
                        )
                    )
    # The first missing component M of an entry inside a writable root becomes the mask's
    # mount point (a file); a second entry below M, an entry at M plus one below it, or a
    # carve-out directory at M then cannot be mounted.
    below: dict[str, set[str]] = {}
    at: set[str] = set()
    carve_missing: set[str] = set()
    hidden = [
        (d.entry, _real(fs, d.entry.path))
        for d in enf.dropped
        if d.entry.kind == "path" and d.reason.startswith("under writable root ")
    ]
    # The sandbox makes the carve-outs of every writable root it binds, also where a deny glob
    # matching the root's own path kept them out of the compiled list (20261203:950, 7:354, by
    # hand: `<o>/*` deny, cwd `<o>/d` writable, deny `<o>/d/.codex` missing refuses).
    # (a read entry at the carve-out's path stands for it, as in `_with_carve_outs`)
    have = {e.path for e, _r in enf.exact if _is_carve_out(e) or e.access == "read"}
    synthetic = (
        []
        if full_write
        else [
            (Entry("path", c, "read", f"carve-out {name} of writable root {w.path}"), c)
            for w, wr in enf.exact
            if w.access == "write" and wr == w.path and enf.decide(wr).writable
            for name in CARVE_OUTS
            if (c := f"{wr.rstrip('/')}/{name}") not in have
        ]
    )
    for e, r in [*enf.exact, *hidden, *synthetic]:
        if e.access == "write" or r != e.path:
            continue
        first = _first_missing(fs, r)
        if first is None or enf.decide(posixpath.dirname(first)).access != "write":
            continue
        if _is_carve_out(e):
            if first == r:
                carve_missing.add(r)
            continue
        if first == r:
            at.add(r)
        else:
            below.setdefault(first, set()).add(r)
    for m in sorted(set(below) | (at & carve_missing)):
        kids = below.get(m, set())
        # one entry below a missing carve-out starts (20261203:189, :765, 7:332)
        if len(kids) >= 2 or (kids and m in at) or (m in at and m in carve_missing):
            if m in at and m in carve_missing and not kids:
                # an entry on a missing carve-out name (measured by hand, 0.171.0)
                msg = (
                    f"bwrap: Can't mkdir {m}: Not a directory"
                    if prof.winner("/")[0] == "write"
                    else f"bwrap: Can't create file at {m}: Is a directory"
                )
            else:
                msg = (
                    f"bwrap: Can't bind mount /bindfileXXXXXX on /newroot{m}: Unable to mount "
                    "source on destination: No such file or directory"
                )
            out.append(Refusal("missing-nested-entries", m, msg))
    cwd = prof.workspace_roots[0] if prof.workspace_roots else None
    real_cwd = resolve_path(fs, cwd).real if cwd is not None else None
    # The real directory's own access decides, not the lookup through the link's directory
    # (20261203:45: cwd `<home>/l0` -> `<tmp>/cfg` with `<home>` denied started).
    if cwd is not None and real_cwd != cwd and enf._base(real_cwd or cwd)[0] == "deny":
        out.append(Refusal("cwd-denied", cwd, f"bwrap: Can't chdir to {cwd}: Permission denied"))
    elif cwd is not None and real_cwd is not None and real_cwd != cwd:
        # A deny glob whose literal prefix holds `\\` and is spelled through a link over the
        # real cwd (7:564; by hand: cwd `<h>/b\\s/l0` -> `../k1` with `:workspace_roots` =
        # {"[br].t3" = "deny"} refused "Can't chdir to <h>/k1: Permission denied"; `x.t3`, or the
        # cwd spelled without the link, started).
        for g in prof.entries:
            if g.kind != "glob" or g.access != "deny":
                continue
            start = _glob_static_prefix(g.path)
            if (
                "\\" in start
                and _under(real_cwd, resolve_path(fs, start).real)
                and (resolve_path(fs, start).real != start)
            ):
                out.append(
                    Refusal(
                        "cwd-denied",
                        cwd,
                        f"bwrap: Can't chdir to {real_cwd}: Permission denied",
                    )
                )
                break
    return sorted(set(out), key=lambda x: (x.code, x.path))


def _brace_error(tail: str) -> str | None:
    depth = 0
    i = 0
    while i < len(tail):
        c = tail[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return "unopened alternate group; missing '{'"
            depth -= 1
        i += 1
    return "unclosed alternate group; missing '}'" if depth else None


def _first_missing(fs: FsView, real: str) -> str | None:
    for anc in reversed(_ancestors(real)):
        if fs.kind(anc) is None:
            return anc
    return None


# ---------------------------------------------------------------------------------------------
# Literal names in deny keys (docs/codex-semantics.md "Glob characters"; measured on 0.171.0).

_KEY_GLOB = frozenset("*?[]")
_ESCAPE = frozenset("\\*?[]{}")


def escape_literal(path: str, *, access: Access = "deny", is_dir: bool = False) -> str | None:
    """The key that makes Codex match exactly `path`, or None when no key can.

    A key without `* ? [ ]` is literal, whatever else it holds (`\\`, `{`, `}`, spaces). A key
    with one of them is a deny glob whose literal prefix (the components before the first one
    holding `* ? [ ]`) is taken as written; from that component on, `\\` escapes the next
    character, so each of `\\ * ? [ ] { }` there is escaped. A glob only supports `deny`, masks
    only an existing non-directory, and a `{` or `}` in a directory component of the pattern
    part makes its scan find nothing: those cases return None.
    """
    p = normalize_abs(path)
    if _KEY_GLOB.isdisjoint(p):
        return p
    if access != "deny" or is_dir:
        return None
    parts = p.split("/")
    first = next(i for i, part in enumerate(parts) if not _KEY_GLOB.isdisjoint(part))
    if any("{" in part or "}" in part for part in parts[first:-1]):
        return None
    tail = ["".join("\\" + c if c in _ESCAPE else c for c in part) for part in parts[first:]]
    return "/".join([*parts[:first], *tail])


# ---------------------------------------------------------------------------------------------
# The live filesystem as an FsView: lstat and readlink only, never open().


class LiveFs:
    """Answers FsView questions from the host, caching each lstat (and, for resolve_path,
    each path's resolution)."""

    def __init__(self) -> None:
        self._kinds: dict[str, FsKind | None] = {}
        self.resolved: dict[str, Resolution] = {}

    def kind(self, path: str) -> FsKind | None:
        """lstat's type of `path`; None when it does not exist or cannot be looked up."""
        if path in self._kinds:
            return self._kinds[path]
        try:
            st = os.lstat(path)
        except OSError:
            k: FsKind | None = None
        else:
            if stat.S_ISLNK(st.st_mode):
                k = "link"
            elif stat.S_ISDIR(st.st_mode):
                k = "dir"
            elif stat.S_ISREG(st.st_mode):
                k = "file"
            else:
                k = "other"
        self._kinds[path] = k
        return k

    def readlink(self, path: str) -> str | None:
        """The link's value, or None."""
        if self.kind(path) != "link":
            return None
        try:
            return os.readlink(path)
        except OSError:
            return None
