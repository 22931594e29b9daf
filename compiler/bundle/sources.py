"""Where each entry came from: the policy file line and the roots-manifest line, as data.

The compiled bundle says *why* an entry exists (a root's target, a holder directory, a policy
key); this module adds *where* that was written: the base-profile file of the mode and the line
of the key, and the manifest line that declares the root. Lines are searched in the text that
was read (LF-split), from the bytes compiler/inputs.py read once for the whole run: the hashes
and lines are those of what was compiled. No other file is read.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field

from ..inputs import Inputs
from ..policy import MODE_MAP_FILE, TRUSTED_BASE_FILE, Policy


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One input file: its name as reported, its sha256 and its lines."""

    name: str
    sha256: str
    lines: tuple[str, ...]
    #: root id -> 1-based line of its `id = "..."` (built once: lookups are O(1) per root).
    root_lines: dict[str, int] = field(default_factory=dict)

    def key_line(self, key: str) -> int | None:
        """The 1-based line that assigns `key` (bare, "quoted" or 'quoted'), if any."""
        esc = re.escape(key)
        rx = re.compile(rf"""^\s*(?:"{esc}"|'{esc}'|{esc})\s*=""")
        for n, line in enumerate(self.lines, start=1):
            if rx.match(line):
                return n
        for n, line in enumerate(self.lines, start=1):  # e.g. a [filesystem.":key"] header
            if f'"{key}"' in line or f"'{key}'" in line:
                return n
        return None

    def root_line(self, root_id: str) -> int | None:
        """The 1-based line holding `id = "<root_id>"`."""
        return self.root_lines.get(root_id)


_ID_LINE = re.compile(r"""^\s*id\s*=\s*(["'])([^"']*)\1\s*(?:#.*)?$""")


def _source(name: str, data: bytes) -> SourceFile:
    text = data.decode("utf-8", errors="replace")
    lines = tuple(text.split("\n"))
    ids: dict[str, int] = {}
    for n, line in enumerate(lines, start=1):
        m = _ID_LINE.match(line)
        if m:
            ids.setdefault(m.group(2), n)
    return SourceFile(name, "sha256:" + hashlib.sha256(data).hexdigest(), lines, ids)


@dataclass(frozen=True, slots=True)
class Sources:
    """The policy files (by mode) and the roots manifest, for provenance lines and hashes."""

    manifest: SourceFile | None
    policy: dict[str, SourceFile] = field(default_factory=dict)  # mode -> base profile file
    mode_map: SourceFile | None = None
    trusted_base: SourceFile | None = None  # profiles/trusted-base.toml

    def line_of_value(self, src: SourceFile | None, value: str) -> int | None:
        """The 1-based line holding the quoted string `value` (a list item), if any."""
        if src is None:
            return None
        for n, line in enumerate(src.lines, start=1):
            if f'"{value}"' in line or f"'{value}'" in line:
                return n
        return None


def sources_of(inp: Inputs, *, with_manifest: bool = True) -> Sources:
    """The sources of a run, from the bytes `inp` read (the same bytes compile parsed)."""
    manifest = (
        _source("roots-manifest", inp.trusted(inp.roots_path).data) if with_manifest else None
    )
    pdir = inp.profiles_dir
    policy: Policy = inp.policy()
    files: dict[str, SourceFile] = {}
    for mode, entry in sorted(policy.mode_map.modes.items()):
        files[mode] = _source(entry.base, inp.policy_file(os.path.join(pdir, entry.base)).data)
    mode_map = _source(MODE_MAP_FILE, inp.policy_file(os.path.join(pdir, MODE_MAP_FILE)).data)
    trusted = _source(
        TRUSTED_BASE_FILE, inp.policy_file(os.path.join(pdir, TRUSTED_BASE_FILE)).data
    )
    return Sources(manifest, files, mode_map, trusted)
