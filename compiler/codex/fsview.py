"""The filesystem as the sandbox sees it at start: the Codex wing's only I/O.

`FsView` is what enforcement asks (lstat's kind, readlink's value; never open()); `FsSnapshot`
answers from recorded facts (tests, the differential tester), `LiveFs` from the host.
`resolve_path` follows links component by component as the kernel does.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple, Protocol

from .lexical import ancestors, normalize_abs, under

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

    def below(self, path: str) -> tuple[tuple[str, FsKind], ...]:
        """Every (path, kind) strictly below the directory `path`, links not followed, sorted:
        what a deny glob's scan from `path` sees (names listed, nothing opened)."""
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
        return self.outside is not None and self.scope is not None and not under(path, self.scope)

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

    def below(self, path: str) -> tuple[tuple[str, FsKind], ...]:
        """The recorded paths strictly below `path` (asked of `outside` beyond the scope)."""
        if self._out(path):
            assert self.outside is not None
            return self.outside.below(path)
        return tuple(sorted((p, k) for p, k in self.kinds.items() if p != path and under(p, path)))


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
        return Resolution(p, tuple(ancestors(p)[1:][::-1]))
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


def real_path(fs: FsView | None, path: str) -> str:
    return resolve_path(fs, path).real


# ---------------------------------------------------------------------------------------------
# The live filesystem as an FsView: lstat and readlink only, never open().


#: The most entries `LiveFs.below` lists for one scan.
MAX_BELOW = 20_000


class LiveFs:
    """Answers FsView questions from the host, caching each lstat (and, for resolve_path,
    each path's resolution)."""

    def __init__(self) -> None:
        self._kinds: dict[str, FsKind | None] = {}
        self._below: dict[str, tuple[tuple[str, FsKind], ...]] = {}
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

    def below(self, path: str) -> tuple[tuple[str, FsKind], ...]:
        """Every entry strictly below the directory `path` (scandir, links not followed), at
        most `MAX_BELOW` of them: a scan that large is cut short (the glob refusal classes then
        see only its first part). Cached per path."""
        got = self._below.get(path)
        if got is None:
            found: list[tuple[str, FsKind]] = []
            todo = [path] if self.kind(path) == "dir" else []
            while todo and len(found) < MAX_BELOW:
                d = todo.pop()
                try:
                    with os.scandir(d) as it:
                        names = sorted(ent.name for ent in it)
                except OSError:
                    continue
                for name in names:
                    p = f"{d.rstrip('/')}/{name}"
                    k = self.kind(p)
                    if k is None:
                        continue
                    found.append((p, k))
                    if k == "dir":
                        todo.append(p)
            got = self._below[path] = tuple(sorted(found))
        return got
