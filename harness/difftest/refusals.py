"""Refusal classes on both sides of the differential tester, and the accepted one-sided list.

A case is refused when no command runs. The sandbox's stderr and the evaluator's predicted
message are classed by the same patterns (the evaluator's messages quote bwrap's and Codex's
measured text), so the table shows, per class, how often both sides refused and how often only
one did. A one-sided refusal is either a launcher-visible failure the model misses (sandbox
only: compile would emit a profile Codex will not start) or a profile compile refuses that would
have started (evaluator only). `ACCEPTED` lists the one-sided (class, side) pairs we know and
accept, with the reason; the tester and CI fail on any other (docs/codex-semantics.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar


class _Managed(Protocol):
    @property
    def managed(self) -> tuple[str, ...]: ...


class Refused(Protocol):
    """What this module reads of a compared case (compare.CaseResult has it; typed by shape so
    that `compare`, which imports this module, is not imported back: no cycle, not even a
    type-level one)."""

    @property
    def case(self) -> _Managed: ...
    @property
    def case_class(self) -> str: ...
    @property
    def refusal_evaluator(self) -> str: ...
    @property
    def refusal_sandbox(self) -> str: ...


CaseResult = TypeVar("CaseResult", bound=Refused)

Side = Literal["sandbox-only", "evaluator-only"]

#: (class code, pattern on the refusal text). First match wins; codes are evaluate.Refusal's.
CLASS_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("unsupported-path-syntax", re.compile(r"unsupported configuration path .* POSIX path syntax")),
    ("managed-deny-regrant", re.compile(r"not in the allowed set all managed deny_read")),
    ("invalid-glob", re.compile(r"glob pattern is invalid|error parsing glob")),
    ("crosses-writable-symlink", re.compile(r"crosses writable symlink")),
    # 0.166.0's marker directory beside a synthetic mount target (not modelled, ACCEPTED)
    ("synthetic-mount-target", re.compile(r"codex-bwrap-synthetic-mount-targets")),
    ("cwd-denied", re.compile(r"Can't chdir to ")),
    # a deny at a missing carve-out name (or below one): the mask is a file where the
    # carve-out's directory goes
    (
        "missing-nested-entries",
        re.compile(r"Can't bind mount /bindfile|Can't create file at .*: Is a directory"),
    ),
    (
        "write-on-file",
        re.compile(r"Not a directory|synthetic bubblewrap mount target"),
    ),
    ("deny-inside-denied-dir", re.compile(r"Read-only file system")),
    (
        "entry-on-symlink",
        re.compile(
            r"Can't mount tmpfs on .*: No such file|Can't create file at .*: No such file"
            r"|Can't remount readonly on .*realpath"
        ),
    ),
)

UNCLASSIFIED = "unclassified"


def classify(message: str) -> str:
    """The refusal class of a refusal message (sandbox stderr or evaluator prediction)."""
    if not message:
        return ""
    for code, rx in CLASS_PATTERNS:
        if rx.search(message):
            return code
    return UNCLASSIFIED


@dataclass(frozen=True, slots=True)
class Accepted:
    """A one-sided refusal class we measured, understand and accept, on the releases named."""

    code: str
    side: Side
    versions: tuple[str, ...]
    reason: str
    cases: tuple[str, ...]  # the seed:index cases that showed it (replay with --case)
    #: Accepted only in a case run under managed requirements (`Case.managed`).
    managed_only: bool = False


#: The documented list (docs/codex-semantics.md "One-sided refusals"); nothing else may appear.
ACCEPTED: tuple[Accepted, ...] = (
    Accepted(
        "synthetic-mount-target",
        "sandbox-only",
        ("0.166.0",),
        "0.166.0 makes a marker directory `codex-bwrap-synthetic-mount-targets-0/lock` beside "
        "a synthetic mount target; in a denied directory (a deny glob matching a link whose "
        "chain ends at a missing path there) that fails. Not modelled: the measured shapes "
        "(a dangling link in a writable root, a denied TMPDIR) start; 0.171.0 starts",
        ("20261203:165",),
    ),
    Accepted(
        "managed-deny-regrant",
        "evaluator-only",
        ("0.171.0", "0.166.0"),
        "an explicit `write` entry on a link below a managed directory that is also TMPDIR "
        "started; the model refuses every read or write entry at or below a managed path as "
        "spelled (the stricter side: profilec's profiles never hold an entry inside a vault)",
        ("7:275",),
        managed_only=True,
    ),
    Accepted(
        "deny-inside-denied-dir",
        "evaluator-only",
        ("0.171.0", "0.166.0"),
        "a profile deny on a file inside a managed directory started; the model expects the "
        "nested mask to fail as it does for two profile denies (the stricter side)",
        ("7:482",),
        managed_only=True,
    ),
    Accepted(
        "deny-inside-denied-dir",
        "sandbox-only",
        ("0.171.0", "0.166.0"),
        "a profile deny on a directory whose name holds `*` inside a managed directory made "
        "bwrap fail (`Can't mkdir parents ... Read-only file system`); not modelled: profilec "
        "denies a vault whole and names nothing inside it",
        ("20261203:389",),
        managed_only=True,
    ),
)


def refusal_class(r: CaseResult) -> str:
    """The class of a refused case: the sandbox's when it refused, else the evaluator's."""
    if r.case_class in ("refused-by-both", "refused-sandbox-only"):
        return classify(r.refusal_sandbox)
    if r.case_class == "refused-evaluator-only":
        return classify(r.refusal_evaluator)
    return ""


def is_accepted(code: str, side: str, version: str, *, managed: bool = False) -> bool:
    """True when the (class, side) pair is on the documented list for Codex `version` (for a
    case run under managed requirements, `managed`, the managed-only entries count too)."""
    return any(
        a.code == code
        and a.side == side
        and version in a.versions
        and (managed or not a.managed_only)
        for a in ACCEPTED
    )


def outside_list(results: Sequence[CaseResult], version: str) -> list[tuple[CaseResult, str]]:
    """Every one-sided refusal whose (class, side) is not on the documented list of `version`."""
    out: list[tuple[CaseResult, str]] = []
    for r in results:
        if r.case_class in ("refused-sandbox-only", "refused-evaluator-only"):
            code = refusal_class(r)
            side = r.case_class.removeprefix("refused-")
            if not is_accepted(code, side, version, managed=bool(r.case.managed)):
                out.append((r, code))
    return out


def refusal_table(results: Sequence[CaseResult], version: str) -> str:
    """Markdown: per refusal class, refused by both / by one side (outside the list in bold)."""
    cols = ("refused-by-both", "refused-sandbox-only", "refused-evaluator-only")
    counts: Counter[tuple[str, str]] = Counter()
    loose: Counter[tuple[str, str]] = Counter()
    for r in results:
        if r.case_class in cols:
            code = refusal_class(r)
            counts[(code, r.case_class)] += 1
            side = r.case_class.removeprefix("refused-")
            if r.case_class != "refused-by-both" and not is_accepted(
                code, side, version, managed=bool(r.case.managed)
            ):
                loose[(code, r.case_class)] += 1
    codes = sorted({c for c, _ in counts})
    lines = [
        "| refusal class | refused-by-both | refused-sandbox-only | refused-evaluator-only |",
        "|---|---|---|---|",
    ]
    for code in codes:
        cells = []
        for col in cols:
            n = counts[(code, col)]
            bad = loose[(code, col)]
            if bad == n and n:
                cells.append(f"**{n}** (not on the list)")
            else:
                cells.append(f"{n} (**{bad}** not on the list)" if bad else str(n))
        lines.append(f"| {code} | " + " | ".join(cells) + " |")
    if not codes:
        lines.append("| (none) | 0 | 0 | 0 |")
    return "\n".join(lines)


def accepted_markdown() -> str:
    """The documented list as the table docs/codex-semantics.md carries (a test compares)."""
    lines = [
        "| class | side | Codex | cases | why it is accepted |",
        "|---|---|---|---|---|",
    ]
    for a in ACCEPTED:
        where = " (under managed requirements only)" if a.managed_only else ""
        lines.append(
            f"| {a.code} | {a.side}{where} | {', '.join(a.versions)} | {', '.join(a.cases)} | "
            f"{a.reason} |"
        )
    if not ACCEPTED:
        lines.append("| (none) | | | | every one-sided refusal fails the tester |")
    return "\n".join(lines)
