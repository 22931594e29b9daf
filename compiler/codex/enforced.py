"""A resolved profile as the Linux sandbox applies it: what it mounts, where, and what a
sandboxed command then gets at a path (`Enforced.decide`). Built by `codex.enforce.enforce()`;
the start-up failures are `Refusal`s (`codex.refusals`), the entries it does not apply `Dropped`.
Pure: the filesystem is an `FsView` argument.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from .fsview import FsView, resolve_path
from .lexical import normalize_abs, under
from .resolve import RANK, Decision, EffectiveProfile, Entry
from .vocabulary import Access


def is_carve_out(e: Entry) -> bool:
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


NESTED = " (inside a denied directory)"


class EnforcementModel(NamedTuple):
    """How one range of Codex releases enforces a profile where releases differ (measured with
    the differential tester and by hand on each release named; docs/codex-semantics.md
    "Per Codex version")."""

    #: The release this model was measured on.
    measured_on: str
    #: True: unless `:root` is writable, a deny glob masks every existing file below its literal
    #: prefix whose *name* matches the pattern part (0.166.0 with `:root` = read: `<h>/?` masked
    #: `<h>/xy/z`; `<h>/s*/m5` masked nothing; `<h>/**/m8` masked `<h>/src/inner/m8`; with
    #: `:root` = write `<h>/vault/*` masked `<h>/vault/a` only, as 0.171.0 does, difftest
    #: 1:108). False: the pattern part matches the path below the prefix, `*` and `?` within
    #: one component (0.171.0).
    glob_matches_name: bool
    #: A workspace root whose path holds one of these, with a `:workspace_roots` deny glob
    #: subpath, cannot take another deny mount inside it (`codex.refusals`; by hand: root
    #: `<h>/x*y` with an exact deny on a file in it refuses on 0.171.0 and starts on 0.166.0,
    #: root `<h>/b\s` refuses on both).
    scoped_glob_root_chars: frozenset[str]


#: Codex 0.171.0 and later (the default target).
MODEL_0_171 = EnforcementModel("0.171.0", False, frozenset("*?[]\\"))
#: Codex before 0.171.0: 0.166.0, the floor codex-acp 2.6.0 accepts (`@openai/codex ^0.166.0`).
MODEL_0_166 = EnforcementModel("0.166.0", True, frozenset("\\"))


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
    #: The Codex release range whose enforcement this is.
    model: EnforcementModel = MODEL_0_171
    #: Whether this profile's deny globs match file names (`EnforcementModel`); `globs` then
    #: holds the name patterns.
    glob_by_name: bool = False

    def glob_match(self, rx: re.Pattern[str], start: str, real: str) -> bool:
        """True when the deny glob (`rx` from `glob_pattern`, scan from `start`) matches the
        existing path `real`, as this model's release matches."""
        if self.glob_by_name:
            name = posixpath.basename(real)
            return real != start and under(real, start) and rx.fullmatch(name) is not None
        return rx.fullmatch(real) is not None

    def _base(self, real: str) -> tuple[Access | None, Entry | None, int]:
        """Most specific enforced entry covering `real`; depth of the winner (components)."""
        best: tuple[int, int] | None = None
        found: Entry | None = None
        if self.by_real and normalize_abs(real) == real:
            # The ancestors of a normal path are exactly the real paths `under` accepts, and
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
                if under(real, rp):
                    key = (0 if rp == "/" else rp.count("/"), RANK[e.access])
                    if best is None or key > best:
                        best, found = key, e
        depth = 0 if real == "/" else real.count("/")
        for e, rx, start in self.globs:
            if self.glob_match(rx, start, real) and self._glob_masks(e, real, start):
                key = (depth, RANK["deny"])
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
        return not any(under(real, r) and not under(start, w) for w, r in self.shadows)

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
                    if any(under(wr, cand) for wr in writes):
                        continue
                    return Decision(res.real, "deny", w, ())
        return Decision(res.real, access, winner, ())
