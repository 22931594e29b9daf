"""Project config layers below a workspace root: every `<dir>/.codex` strictly below one.

Codex loads the `.codex` folder (config.toml, rules) of every directory from the project root
down to the session cwd when that directory is trusted, above `$CODEX_HOME/config.toml`, and
codex-acp 2.6.0 marks every session cwd trusted in the thread config (`projects.<cwd>`). Codex
keeps only a writable root's *own* `.codex` read-only, so a model command can create
`<root>/sub/.codex/config.toml`; measured through codex-acp 2.6.0 on 0.171.0, a later session
opened in `<root>/sub` loaded it: its `[permissions.profilec-agent.filesystem]` entry made
CODEX_HOME writable, and its `shell_environment_policy.set` reached model commands (its
re-grant of a vault was refused by the managed requirements). No config or requirements key
turns that trust off for a cwd the client picks, so profilec keeps such folders from existing
when a session starts: `profilec check` refuses them (PC064) and `profilec watch` reports one
that appears, or one that changes, while a session runs (role `project-config`).

One scanner for both, which must see every folder Codex could load from a directory a session
can be opened in (measured on 0.171.0 and 0.166.0: each of these loaded in a session opened
there while the scan before this one said nothing):
* a link to a directory (`<root>/lib -> /elsewhere` holding `.codex/config.toml`): every link
  is resolved as the kernel resolves it (`..` after a link is its target's parent), with
  lstat/readlink from the link's real directory, each directory the walk listed taken as real
  without another look. One that leads inside a workspace root needs no walk of its own: its
  target is a real directory of that root's tree, which the walk enters anyway (so no link loop
  can form, and nothing is seen twice). One that leads outside every workspace root is reported
  on its own (`Scan.outside`): a session opened there loads whatever lies at or above its
  target, which no scan of the roots covers;
* a `.git` directory (`<root>/g/.git/.codex/config.toml`, the `.git` not a repository): entered
  like any other, as is every `.codex` folder (a session opened inside one loads the `.codex`
  below it);
* a directory the scanner cannot list (`mkdir -m 0311` hid one from a scanner running as the
  run-as uid; root lists everything), or a link it cannot resolve: the scan is incomplete
  (`Scan.unlisted`), as is one that stops at SCAN_LIMIT directories per root. Neither command
  vouches for a tree it did not see: `check` fails, `watch` reports `scan-incomplete`. A
  directory gone while it was scanned (ENOENT, ENOTDIR) is not an error: nothing of it loads.

scandir, lstat and readlink only: nothing is opened but the directories listed.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass

#: How many directories below each workspace root one scan visits at most.
SCAN_LIMIT = 100_000
#: How many entries inside one `.codex` folder its fingerprint records at most.
FOLDER_LIMIT = 256
#: What Codex reads from a trusted project's folder (a folder holding neither is inert).
LOADED = ("config.toml", "rules")
#: An error that means the entry went away while it was scanned (not an incomplete scan).
_GONE = (errno.ENOENT, errno.ENOTDIR)


@dataclass(frozen=True, slots=True)
class Outside:
    """A link below a workspace root that leads to a directory outside every root."""

    link: str
    target: str


@dataclass(frozen=True, slots=True)
class Scan:
    """One scan of a workspace root: every `.codex` strictly below it (sorted), the links that
    lead outside every root, the directories it could not list, and whether it stopped at its
    limit."""

    root: str
    found: tuple[str, ...]
    outside: tuple[Outside, ...] = ()
    unlisted: tuple[str, ...] = ()
    overflow: bool = False

    @property
    def complete(self) -> bool:
        """Whether the scan saw every directory below the root."""
        return not self.overflow and not self.unlisted


def scan(root: str, limit: int = SCAN_LIMIT, roots: Sequence[str] = ()) -> Scan:
    """Every `.codex` entry (folder, link or anything else) in a directory strictly below
    `root`; the root's own `.codex` is not listed (Codex keeps it read-only in every compiled
    mode, and the workspace-config lints read it). `roots`: every workspace root, so that a
    link into another one is not reported as outside (that root's scan covers it)."""
    within = tuple(sorted({os.path.realpath(r) for r in (root, *roots)}))
    real_root = os.path.realpath(root)
    #: Directories known to be real (walked, or above the root's real path): no lstat needed.
    real = {real_root, *_ancestors(real_root)}
    found: list[str] = []
    links: list[str] = []
    unlisted: list[str] = []
    stack = [root]
    visited = 0
    overflow = False
    while stack:
        d = stack.pop()
        visited += 1
        if visited > limit:
            overflow = True
            break
        real.add(real_root + d[len(root) :])
        prefix = d.rstrip("/") + "/"
        try:
            with os.scandir(d) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(prefix + e.name)
                    elif e.is_symlink() and e.name != ".codex":
                        links.append(prefix + e.name)
                    if e.name == ".codex" and d != root:
                        found.append(prefix + e.name)
        except OSError as exc:
            if exc.errno not in _GONE:
                unlisted.append(d)  # cannot be listed: what it holds cannot be seen
    outside: list[Outside] = []
    prefixes = tuple(w.rstrip("/") + "/" for w in within)
    for link in links:
        try:
            target = _resolve(real_root + os.path.dirname(link)[len(root) :], link, real)
        except OSError as exc:
            if exc.errno not in (*_GONE, errno.ELOOP):
                unlisted.append(link)  # cannot tell where it leads
            continue  # dangling or looping: no session opens there
        if target is not None and not (target + "/").startswith(prefixes):
            outside.append(Outside(link, target))
    return Scan(root, tuple(sorted(found)), tuple(outside), tuple(unlisted), overflow)


def _ancestors(path: str) -> list[str]:
    out = []
    while path != "/":
        path = os.path.dirname(path)
        out.append(path)
    return out


#: How many links one resolution follows before it is a loop (the kernel's limit).
_MAX_HOPS = 40


def _resolve(start: str, link: str, real: set[str]) -> str | None:
    """The real path of the directory the link `link` (an entry of the real directory `start`)
    leads to, resolved as the kernel does, with lstat and readlink only (`real`: directories
    known to be real, not looked at again); None when it leads to anything but a directory.
    OSError: missing (ENOENT, ENOTDIR), a loop (ELOOP), or not looked at (EACCES)."""
    cur = start
    parts = [os.path.basename(link)]
    hops = 0
    while parts:
        name = parts.pop()
        if name in ("", "."):
            continue
        if name == "..":
            cur = os.path.dirname(cur)  # `cur` is real: its parent is its lexical parent
            continue
        nxt = cur.rstrip("/") + "/" + name
        if nxt in real:
            cur = nxt
            continue
        st = os.lstat(nxt)
        if stat.S_ISLNK(st.st_mode):
            hops += 1
            if hops > _MAX_HOPS:
                raise OSError(errno.ELOOP, "too many levels of symbolic links", link)
            text = os.readlink(nxt)
            if text.startswith("/"):
                cur = "/"
            parts.extend(reversed(text.split("/")))
            continue
        if not stat.S_ISDIR(st.st_mode):
            if parts:
                raise OSError(errno.ENOTDIR, "not a directory", nxt)
            return None  # a link to a file: no session opens there
        cur = nxt
    return cur


def loads(folder: str) -> bool:
    """Whether Codex would load something from this `.codex` entry: a link (whatever it leads
    to), or a folder holding `config.toml` or `rules` (lstat only)."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode):
        return True
    if not stat.S_ISDIR(st.st_mode):
        return False
    return any(os.path.lexists(os.path.join(folder, name)) for name in LOADED)


Mark = tuple[str, int, int, int, int, int]


def fingerprint(folder: str) -> tuple[Mark, ...]:
    """What a `.codex` entry is now, to tell any change: (relative path, kind, device, inode,
    size, mtime) of the entry and, for a folder, of everything inside it (at most FOLDER_LIMIT
    entries; lstat only, never opened, no link followed)."""
    out: list[Mark] = []
    stack = [folder]
    while stack and len(out) < FOLDER_LIMIT:
        path = stack.pop()
        try:
            st = os.lstat(path)
        except OSError:
            continue
        rel = os.path.relpath(path, folder)
        out.append((rel, stat.S_IFMT(st.st_mode), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
        if stat.S_ISDIR(st.st_mode):
            try:
                stack.extend(
                    sorted((os.path.join(path, n) for n in os.listdir(path)), reverse=True)
                )
            except OSError:
                continue
    return tuple(sorted(out))
