"""`text`: the coverage matrix, then findings with why and fix, then one summary line; under
`check -q`, the failing findings with their fix and the summary line alone (`render_quiet`)."""

from __future__ import annotations

from datetime import datetime

from ..models.check import CheckFinding, CheckReport, at_or_above


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]


def render(report: CheckReport, now: datetime) -> str:
    """Human-readable, deterministic (no time)."""
    del now
    lines = [f"profilec check (codex {report.codex_version}, fail-on {report.fail_on})"]
    lines += [f"  input: {i}" for i in report.inputs]
    lines.append("modes: " + ", ".join(f"{m} -> {p}" for m, p in report.modes.items()))
    lines.append("")
    lines.append("coverage: mode x root x spelling -> effective access (must be deny)")
    if report.cells:
        rows: list[tuple[str, ...]] = [
            ("", "mode", "root", "kind", "access", "lexical", "spelling", "winner")
        ]
        for c in report.cells:
            rows.append(
                (
                    "ok" if c.ok else "FAIL",
                    c.mode,
                    c.root,
                    c.kind,
                    c.access,
                    c.lexical,
                    c.spelling + (f" -> {c.real_path}" if c.real_path != c.spelling else ""),
                    c.winner or "no entry",
                )
            )
        lines += _table(rows)
    else:
        lines.append("  (no cells: no mode could be evaluated)")
    lines.append("")
    lines.append(f"findings: {len(report.findings)}")
    for f in report.findings:
        lines += _finding(report, f)
    if report.canary is not None:
        lines.append("")
        lines.append(f"canary: {'pass' if report.canary.get('passed') else 'FAIL'}")
    lines.append("")
    lines.append(_verdict(report))
    return "\n".join(lines) + "\n"


def render_quiet(report: CheckReport) -> str:
    """`check -q`: only what fails the run (unwaived findings at or above --fail-on, each with
    its fix), then the summary line."""
    lines: list[str] = []
    for f in report.findings:
        if f.waiver is None and at_or_above(f.severity, report.fail_on):
            lines += _finding(report, f, why=False)
    return "\n".join([*lines, _verdict(report)]) + "\n"


def _finding(report: CheckReport, f: CheckFinding, *, why: bool = True) -> list[str]:
    rule = report.rule(f.rule)
    loc = f" [{f.file}{':' + str(f.line) if f.line else ''}]" if f.file else ""
    waived = f" [waived: {f.waiver.reason}; {f.waiver.source}]" if f.waiver else ""
    lines = [f"  {f.severity:<7} {f.rule} {rule.name}: {f.message}{loc}{waived}"]
    lines += [f"          affects: {a}" for a in f.affects]
    if why:
        lines.append(f"          why: {rule.why}")
    lines.append(f"          fix: {rule.fix}")
    return lines


def _verdict(report: CheckReport) -> str:
    s = report.summary
    return (
        f"{'PASS' if report.passed else 'FAIL'}: {s.cells} cells ({s.failed_cells} not denied), "
        f"{s.errors} errors, {s.warnings} warnings, {s.notes} notes"
        + (f", {s.suppressed} waived" if s.suppressed else "")
    )
