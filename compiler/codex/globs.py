"""The deny-glob language of Codex's Linux sandbox (measured on 0.171.0 and 0.166.0).

How a deny glob matches (`glob_regex`, `enforced_glob_regex`), where its scan starts
(`glob_static_prefix`), which patterns Codex refuses to parse (`brace_error`), and the key that
makes Codex match a literal name exactly (`escape_literal`). Pure (no I/O).
"""

from __future__ import annotations

import re

from .lexical import normalize_abs
from .vocabulary import Access

GLOB_CHARS = frozenset("*?[]")


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
    start = glob_static_prefix(pattern)
    if start == "/":
        return glob_regex(pattern)
    return re.compile(re.escape(start) + _glob_body(pattern[len(start) :]))


def name_glob_regex(pattern: str) -> re.Pattern[str]:
    """The pattern part of a deny glob (after its literal prefix) as Codex before 0.171.0
    matched it: against each file's name, anywhere below the prefix (`EnforcementModel`)."""
    return re.compile(_glob_body(glob_tail(pattern).lstrip("/")))


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


def has_glob(s: str) -> bool:
    return not GLOB_CHARS.isdisjoint(s)


def glob_static_prefix(pattern: str) -> str:
    """The directory a glob scan starts from: the components before the first glob character."""
    parts = pattern.split("/")
    keep: list[str] = []
    for part in parts[1:]:
        if not GLOB_CHARS.isdisjoint(part):
            break
        keep.append(part)
    return "/" + "/".join(keep)


def glob_scan_ok(pattern: str) -> bool:
    """False when a `{`/`}` sits in a directory component of the pattern part (after the
    literal prefix): such a scan found nothing (measured `/h/x*/{dd,x}/in` shape)."""
    tail = glob_tail(pattern).split("/")
    return not any("{" in part or "}" in part for part in tail[1:-1])


def glob_tail(pattern: str) -> str:
    """The part of a glob after its static prefix (components without `* ? [ ]`)."""
    parts = pattern.split("/")
    for i, part in enumerate(parts[1:], start=1):
        if any(c in part for c in "*?[]"):
            return "/" + "/".join(parts[i:])
    return ""


def brace_error(tail: str) -> str | None:
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
