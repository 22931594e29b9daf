"""`text`: the coverage matrix, then findings with why and fix, then one summary line."""

from __future__ import annotations

from datetime import datetime

from ..models.check import CheckReport


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
        rule = report.rule(f.rule)
        loc = f" [{f.file}{':' + str(f.line) if f.line else ''}]" if f.file else ""
        waived = f" [waived: {f.waiver.reason}; {f.waiver.source}]" if f.waiver else ""
        lines.append(f"  {f.severity:<7} {f.rule} {rule.name}: {f.message}{loc}{waived}")
        lines += [f"          affects: {a}" for a in f.affects]
        lines.append(f"          why: {rule.why}")
        lines.append(f"          fix: {rule.fix}")
    if report.canary is not None:
        lines.append("")
        lines.append(f"canary: {'pass' if report.canary.get('passed') else 'FAIL'}")
    s = report.summary
    lines.append("")
    lines.append(
        f"{'PASS' if report.passed else 'FAIL'}: {s.cells} cells ({s.failed_cells} not denied), "
        f"{s.errors} errors, {s.warnings} warnings, {s.notes} notes"
        + (f", {s.suppressed} waived" if s.suppressed else "")
    )
    return "\n".join(lines) + "\n"
