"""Hypothesis strategies shared by the property tests: random symlink trees and root sets."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

NAMES = st.sampled_from(["a", "b", "c", "auth.json", "x y", "d.json", "ü", "q#=", "tok"])


@dataclass(frozen=True)
class TreeSpec:
    """A random tree: directories, files, and symlinks (relative or absolute, to dirs or files)."""

    dirs: tuple[str, ...]
    files: tuple[str, ...]
    links: tuple[tuple[str, str, bool], ...]  # (link relpath, target relpath, absolute?)


@st.composite
def trees(draw: st.DrawFn) -> TreeSpec:
    """Draw a tree of up to depth 3 with a few symlinks between its nodes."""
    dirs: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        depth = draw(st.integers(1, 3))
        parts = [draw(NAMES) for _ in range(depth)]
        dirs.append("/".join(parts))
    files = []
    for _ in range(draw(st.integers(1, 4))):
        d = draw(st.sampled_from(dirs))
        files.append(d + "/f-" + draw(NAMES))
    links = []
    for i in range(draw(st.integers(0, 4))):
        holder = draw(st.sampled_from(["", *dirs]))
        name = f"l{i}-" + draw(NAMES)
        target = draw(st.sampled_from([*dirs, *files]))
        links.append(((holder + "/" + name).lstrip("/"), target, draw(st.booleans())))
    return TreeSpec(tuple(dirs), tuple(files), tuple(links))


def build(base: Path, spec: TreeSpec) -> list[Path]:
    """Create the tree under base; return every path that names an existing regular file."""
    for d in spec.dirs:
        p = base / d
        if p.exists() and not p.is_dir():
            continue
        try:
            p.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            continue
    for f in spec.files:
        p = base / f
        try:
            if not p.exists():
                p.write_text("marker", encoding="utf-8")
        except (IsADirectoryError, NotADirectoryError, FileNotFoundError):
            continue
    for link, target, absolute in spec.links:
        lp = base / link
        if os.path.lexists(lp) or not lp.parent.is_dir():
            continue
        tp = base / target
        value = str(tp) if absolute else os.path.relpath(tp, lp.parent)
        lp.symlink_to(value)
    found: list[Path] = []
    for root, dirnames, filenames in os.walk(base, followlinks=False):
        for name in [*filenames, *dirnames]:
            p = Path(root) / name
            try:
                real = Path(os.path.realpath(p))
                if real.is_file() and str(real).startswith(str(base)):
                    found.append(p)
            except OSError:
                continue
    return sorted(found)
