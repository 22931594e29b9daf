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

One scanner for both. lstat/scandir only, no link followed, `.git` not entered; at most
SCAN_LIMIT directories per root (a scan that stops there says so: neither command can vouch for
a tree it did not see).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

#: How many directories below each workspace root one scan visits at most.
SCAN_LIMIT = 100_000
#: How many entries inside one `.codex` folder its fingerprint records at most.
FOLDER_LIMIT = 256
#: What Codex reads from a trusted project's folder (a folder holding neither is inert).
LOADED = ("config.toml", "rules")


@dataclass(frozen=True, slots=True)
class Scan:
    """One scan of a workspace root: every `.codex` strictly below it (sorted), and whether
    the scan saw every directory."""

    root: str
    found: tuple[str, ...]
    complete: bool


def scan(root: str, limit: int = SCAN_LIMIT) -> Scan:
    """Every `.codex` entry (folder, link or anything else) in a directory strictly below
    `root`; the root's own `.codex` is not listed (Codex keeps it read-only in every compiled
    mode, and the workspace-config lints read it)."""
    found: list[str] = []
    stack = [root]
    visited = 0
    while stack:
        d = stack.pop()
        visited += 1
        if visited > limit:
            return Scan(root, tuple(sorted(found)), False)
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue  # gone or unreadable since it was listed: nothing of it can load
        for e in entries:
            if e.name == ".codex":
                if d != root:
                    found.append(e.path)
            elif e.name != ".git" and e.is_dir(follow_symlinks=False):
                stack.append(e.path)
    return Scan(root, tuple(sorted(found)), True)


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
