"""The check result: rules, findings, coverage cells and the report document (pure data), and
the rule catalogue `profilec rules --format json` prints (schemas/rules.schema.json).

Every model is frozen; `CheckReport` is the JSON the `json` format prints and
`schemas/check-report.schema.json` publishes. Reports only format a `CheckReport`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from .base import Frozen

Severity = Literal["note", "warning", "error"]
SEVERITY_RANK: dict[str, int] = {"note": 0, "warning": 1, "error": 2}
CellAccess = Literal["read", "write", "deny", "unlisted"]
SpellingKind = Literal["declared", "hop-link", "hop-spelling", "target", "child"]


class Rule(Frozen):
    """A lint rule: stable id, one-line message, why it matters, how to fix it."""

    id: str
    name: str
    severity: Severity
    message: str
    why: str
    fix: str
    #: Codex versions the rule applies to (PEP 440-like, e.g. "<0.133.0"); None = all.
    codex_versions: str | None = None
    #: Where the rule is documented: `docs/check.md#pcNNN` (compiler/check/rules.py).
    doc_anchor: str
    #: False for a rule whose finding means a protected root is reachable or the trusted side
    #: is writable (or a mode's coverage could not be proven): no project config, baseline or
    #: `--ignore` may waive it; the config is fixed instead (compiler/check/waivers.py).
    waivable: bool = True


class Waiver(Frozen):
    """Why a finding is accepted: `--ignore`, a config-file waiver or a baseline entry."""

    rule: str
    reason: str
    #: `--ignore`, `baseline FILE` or the config file that holds the waiver.
    source: str
    expires: str | None = None
    path: str | None = None
    mode: str | None = None


class CheckFinding(Frozen):
    """One reported problem, tied to a rule and to where it was found."""

    rule: str
    severity: Severity
    message: str
    mode: str | None = None
    profile: str | None = None
    root: str | None = None
    path: str | None = None
    #: The input file the finding is about (config, overrides, roots manifest, session config).
    file: str | None = None
    line: int | None = None
    #: Grouped by cause (compiler/check/triage.py): every cell or path this one cause affects.
    affects: tuple[str, ...] = ()
    #: The waiver that suppresses this finding (it no longer fails the check), if any.
    waiver: Waiver | None = None


class Cell(Frozen):
    """One coverage cell: mode x root x spelling, what Codex masks for it and the access it gets."""

    mode: str
    profile: str
    root: str
    spelling: str
    kind: SpellingKind
    #: The real path the kernel reaches for this spelling (Codex masks by real path).
    real_path: str
    access: CellAccess
    #: What the spelling gets read lexically (informational: a deny on a link shows here only).
    lexical: CellAccess
    winner: str | None
    cwd: str

    @property
    def ok(self) -> bool:
        """True when the cell is denied."""
        return self.access == "deny"


class Summary(Frozen):
    """Counts a CI log line needs."""

    cells: int
    failed_cells: int
    errors: int
    warnings: int
    notes: int
    #: Findings a waiver or the baseline suppresses (not counted above).
    suppressed: int = 0

    @classmethod
    def counting(
        cls,
        findings: Sequence[CheckFinding],
        *,
        cells: int,
        failed_cells: int,
        suppressed: int = 0,
    ) -> Summary:
        """The counts of `findings` (those that count: no waiver) beside the cell counts."""
        return cls(
            cells=cells,
            failed_cells=failed_cells,
            errors=sum(1 for f in findings if f.severity == "error"),
            warnings=sum(1 for f in findings if f.severity == "warning"),
            notes=sum(1 for f in findings if f.severity == "note"),
            suppressed=suppressed,
        )


class CheckReport(Frozen):
    """Everything one `profilec check` run found; deterministic for the same inputs."""

    schema_version: Literal[1] = 1
    tool: Literal["profilec"] = "profilec"
    codex_version: str
    fail_on: Severity
    passed: bool
    inputs: tuple[str, ...]
    modes: dict[str, str]
    summary: Summary
    cells: tuple[Cell, ...]
    findings: tuple[CheckFinding, ...]
    rules: tuple[Rule, ...]
    canary: dict[str, Any] | None = None

    def rule(self, rule_id: str) -> Rule:
        """The rule with this id."""
        for r in self.rules:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)


def at_or_above(severity: str, fail_on: str) -> bool:
    """True when `severity` is at least `fail_on`."""
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[fail_on]


def finding_sort_key(f: CheckFinding) -> tuple[int, str, str, str, str, str, str]:
    """Errors first, then by rule, mode, root, path, message (deterministic order)."""
    return (
        -SEVERITY_RANK[f.severity],
        f.rule,
        f.mode or "",
        f.root or "",
        f.path or "",
        f.profile or "",
        f.message,
    )


class RuleCatalogue(Frozen):
    """`profilec rules --format json`: every lint rule the registry declares, sorted by id
    (`schemas/rules.schema.json`; a rule is the same object a check report's `rules` holds)."""

    schema_version: Literal[1] = 1
    tool: Literal["profilec"] = "profilec"
    #: The Codex version profilec pins (a rule's `codex_versions` says where it applies).
    codex_version: str
    rules: tuple[Rule, ...]
