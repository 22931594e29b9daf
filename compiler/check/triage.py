"""After the check: locate each finding's cause, group findings by cause, apply waivers.

* `locate` points a finding at the config line that causes it: the winning entry inside the
  profile's table when that layer has a file, else the profile's own header line.
* `group_by_cause` folds findings with one root cause (same rule, severity, profile and winner)
  into one finding that lists every cell or path it affects (`affects`).
* `apply_waivers` marks findings a waiver matches (`--ignore`, the project config, a baseline):
  they stay in the report with their waiver and stop counting. An expired waiver is a finding.

Rule metadata (name, severity, message, doc anchor) is the registry's `Rule`
(compiler/check/rules.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from ..models.check import CheckFinding, CheckReport, Rule, Summary, Waiver, at_or_above
from ..rule_ids import WAIVER_EXPIRED
from .configstack import ConfigStack
from .rules import rule, rule_by_id

#: Where every rule is documented (one anchor per rule in docs/check.md).
DOCS_URI = "https://github.com/profilec/profilec/blob/main/docs/check.md"
INFORMATION_URI = "https://github.com/profilec/profilec"

#: The finding an expired waiver raises (not a lint of the config: a lint of the waiver file).
WAIVER_RULE = rule_by_id(
    rule(
        WAIVER_EXPIRED,
        "waiver-expired",
        "error",
        "a waiver has passed its expiry date",
        "an accepted risk was accepted until a date; after it nobody has looked again",
        "fix the finding, or review the waiver and give it a new expiry date",
    )
)


def help_uri(rule: Rule) -> str:
    """The rule's section in docs/check.md (its `<a id="pcNNN">` in the catalogue)."""
    return f"{DOCS_URI}#{rule.doc_anchor.partition('#')[2]}"


_WINNER = re.compile(r"(?:winner:|writable root) ([^;)]+)")


def _winner(f: CheckFinding) -> str | None:
    m = _WINNER.search(f.message)
    return m.group(1).strip() if m else None


def _scoped_line(text: str, pid: str, key: str | None) -> int | None:
    """Line of `key` inside `[permissions.<pid>...]` tables of a TOML text, else the header."""
    header: int | None = None
    inside = False
    for n, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            name = stripped.strip("[]").strip()
            inside = name == f"permissions.{pid}" or name.startswith(f"permissions.{pid}.")
            if inside and header is None:
                header = n
            continue
        if inside and key and stripped.startswith((f'"{key}"', f"'{key}'", f"{key} ")):
            return n
    return header


def locate(findings: Sequence[CheckFinding], stack: ConfigStack) -> list[CheckFinding]:
    """Give each profile finding the file and line of its cause in the config that defines it."""
    out: list[CheckFinding] = []
    for f in findings:
        if f.line is None and f.profile:
            layer = stack.layer_defining(f.profile)
            if layer is not None and layer.file and layer.text is not None:
                line = _scoped_line(layer.text, f.profile, _winner(f))
                if line is not None:
                    f = f.model_copy(update={"file": layer.file, "line": line})
        out.append(f)
    return out


def _cause(f: CheckFinding) -> tuple[str, ...] | None:
    """Same rule in the same profile fixed at the same config line (else: the same winner)."""
    winner = _winner(f)
    if winner is None or not (f.profile or f.mode):
        return None
    where = (f.file or "", str(f.line)) if f.line else ("", winner)
    return (f.rule, f.severity, f.profile or "", f.mode or "", *where)


def group_by_cause(findings: Sequence[CheckFinding]) -> list[CheckFinding]:
    """One finding per root cause; the others it stands for are listed in `affects`."""
    groups: dict[tuple[str, ...], list[CheckFinding]] = {}
    out: list[CheckFinding | tuple[str, ...]] = []
    for f in findings:
        key = _cause(f)
        if key is None:
            out.append(f)
            continue
        if key not in groups:
            groups[key] = []
            out.append(key)
        groups[key].append(f)
    result: list[CheckFinding] = []
    for item in out:
        if isinstance(item, CheckFinding):
            result.append(item)
            continue
        members = groups[item]
        first = members[0]
        if len(members) == 1:
            result.append(first)
            continue
        affects = tuple(dict.fromkeys(m.path or m.message for m in members))
        result.append(
            first.model_copy(
                update={
                    "message": f"{first.message} (one cause, {len(members)} findings: see affects)",
                    "affects": affects,
                }
            )
        )
    return result


def waiver_matches(w: Waiver, f: CheckFinding) -> bool:
    """Rule equal; the optional path is a prefix of the finding's path or file; mode equal."""
    if w.rule != f.rule:
        return False
    if w.mode is not None and w.mode != f.mode:
        return False
    if w.path is not None:
        where = [p for p in (f.path, f.file, *f.affects) if p]
        if not any(p == w.path or p.startswith(w.path.rstrip("/") + "/") for p in where):
            return False
    return True


def fingerprint(f: CheckFinding) -> str:
    """What a baseline remembers of a finding: stable across runs of the same inputs."""
    return "|".join((f.rule, f.mode or "", f.profile or "", f.root or "", f.path or f.message))


def apply_waivers(
    report: CheckReport,
    waivers: Sequence[Waiver],
    *,
    baseline: set[str] | None = None,
    baseline_file: str | None = None,
    today: date,
) -> CheckReport:
    """Suppress what a live waiver or the baseline covers; an expired waiver is a PC090 finding."""
    live = [w for w in waivers if w.expires is None or date.fromisoformat(w.expires) >= today]
    expired = [w for w in waivers if w not in live]
    findings: list[CheckFinding] = []
    for f in report.findings:
        w = next((w for w in live if waiver_matches(w, f)), None)
        if w is None and baseline is not None and fingerprint(f) in baseline:
            w = Waiver(rule=f.rule, reason="in the baseline", source=f"baseline {baseline_file}")
        findings.append(f.model_copy(update={"waiver": w}) if w is not None else f)
    for w in expired:
        findings.append(
            CheckFinding(
                rule=WAIVER_RULE.id,
                severity="error",
                message=f"waiver for {w.rule} expired on {w.expires} (reason was: {w.reason})",
                path=w.path,
                mode=w.mode,
                file=w.source if w.source.startswith("/") else None,
            )
        )
    counted = [f for f in findings if f.waiver is None]
    rules = report.rules
    if expired and all(r.id != WAIVER_RULE.id for r in rules):
        rules = (*rules, WAIVER_RULE)
    return report.model_copy(
        update={
            "findings": tuple(findings),
            "rules": rules,
            "passed": not any(at_or_above(f.severity, report.fail_on) for f in counted),
            "summary": Summary.counting(
                counted,
                cells=report.summary.cells,
                failed_cells=report.summary.failed_cells,
                suppressed=len(findings) - len(counted),
            ),
        }
    )


def regroup(report: CheckReport, stack: ConfigStack) -> CheckReport:
    """`locate` then `group_by_cause` over a report's findings, counts recomputed."""
    findings = group_by_cause(locate(report.findings, stack))
    return report.model_copy(
        update={
            "findings": tuple(findings),
            "summary": Summary.counting(
                findings, cells=report.summary.cells, failed_cells=report.summary.failed_cells
            ),
        }
    )
