"""Ancestors of protected paths: the rename rule and the fewest entries that defeat it. Pure.

Measured on codex 0.171.0 (docs/paths.md): every exact filesystem entry inside a writable root
becomes its own bind mount in the sandbox, and `rename(2)` of a mount point fails with EBUSY.
A directory that is not a mount point and whose parent is writable can be renamed, carrying
every mount inside it along: the next command gets its denies at the *old* paths (where the
model may have planted a fake `auth.json` or `config.toml` that the trusted parent reads
next) and reads the real credential under the new name. So:

    renamable(A)  <=>  A != "/"  and  A is no exact entry path  and  parent(A) is writable

A protected path is safe in a mode when neither it nor any ancestor is renamable there. The fix
chosen here is a *pin*: an exact `write` entry on each renamable ancestor. Its parent being
writable, the ancestor is writable already, so the pin changes no access; it only makes the
directory a mount point (EBUSY on rename, measured in agent mode inside a workspace root and
in agent-full-access under `":root" = "write"`). Making the topmost such ancestor read-only
also holds (measured) but takes away writes below it; under `:root = write` that would be a
whole top-level directory such as `/srv` or `/home`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from .paths import ancestors, parent

if TYPE_CHECKING:
    from .codex.resolve import EffectiveProfile


class Protected(NamedTuple):
    """A path whose every ancestor must stay in place, and why it is protected."""

    path: str
    reason: str  # "vault", "holder-dir", "codex-home", "trusted-base"
    root_id: str | None = None


class Pin(NamedTuple):
    """One ancestor that must become a mount point: what it guards and which root made it
    renamable (the entry that makes its parent writable)."""

    path: str
    guards: tuple[Protected, ...]
    writable_root: str


def mount_points(eff: EffectiveProfile) -> frozenset[str]:
    """Paths that are mount points in the sandbox: every exact entry (specials expanded)."""
    return frozenset(e.path for e in eff.entries if e.kind == "path")


def renamable(eff: EffectiveProfile, path: str, mounts: frozenset[str]) -> str | None:
    """The writable root (the path of the entry that makes the parent writable) that lets a
    model command rename `path`, or None when it cannot be renamed."""
    if path == "/" or path in mounts:
        return None
    if eff.unrestricted:
        return "/"
    access, won = eff.winner(parent(path))
    if access != "write":
        return None
    return won.path if won is not None else "/"


def renamable_ancestors(
    eff: EffectiveProfile, path: str, mounts: frozenset[str]
) -> list[tuple[str, str]]:
    """(ancestor, writable root) for every renamable ancestor of `path` (itself included)."""
    out: list[tuple[str, str]] = []
    for a in ancestors(path):
        why = renamable(eff, a, mounts)
        if why is not None:
            out.append((a, why))
    return out


def pins_for(eff: EffectiveProfile, protected: Iterable[Protected]) -> list[Pin]:
    """The fewest pins that leave no protected path or ancestor renamable under `eff`.

    Each renamable ancestor needs its own mount point (a pin on one directory does not stop a
    rename of another), so the pins are exactly the renamable ancestors, shared between the
    protected paths that lie below them. Sorted by path.
    """
    mounts = mount_points(eff)
    found: dict[str, tuple[list[Protected], str]] = {}
    for p in protected:
        for a, why in renamable_ancestors(eff, p.path, mounts):
            slot = found.setdefault(a, ([], why))
            if p not in slot[0]:
                slot[0].append(p)
    return [
        Pin(path=a, guards=tuple(found[a][0]), writable_root=found[a][1]) for a in sorted(found)
    ]


def unsafe_ancestors(
    eff: EffectiveProfile, protected: Sequence[Protected]
) -> list[tuple[Protected, str, str]]:
    """(protected, ancestor, writable root) for every ancestor a model command could rename."""
    mounts = mount_points(eff)
    out: list[tuple[Protected, str, str]] = []
    for p in protected:
        for a, why in renamable_ancestors(eff, p.path, mounts):
            out.append((p, a, why))
    return out
