"""`github`: GitHub Actions workflow commands, grouped, with one summary line.

One `::group::` per rule holds its annotations (`::error file=...,line=...,title=...::msg`);
waived findings are listed as plain lines in a last group, never annotated. The last line is
the summary. `write_step_summary` writes the same verdict as Markdown to $GITHUB_STEP_SUMMARY.
"""

from __future__ import annotations

import os
from datetime import datetime

from ..models.check import CheckReport
from . import display_path

_KIND = {"note": "notice", "warning": "warning", "error": "error"}


def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def summary_line(report: CheckReport) -> str:
    """`profilec check: PASS|FAIL: ...` (the one line a CI log needs)."""
    s = report.summary
    return (
        f"profilec check: {'PASS' if report.passed else 'FAIL'}: {s.errors} errors, "
        f"{s.warnings} warnings, {s.notes} notes, {s.suppressed} waived; "
        f"{s.failed_cells} of {s.cells} cells not denied (fail-on {report.fail_on})"
    )


def render(report: CheckReport, now: datetime) -> str:
    """Grouped annotations, LF-terminated, then the summary line."""
    del now
    out: list[str] = []
    live = [f for f in report.findings if f.waiver is None]
    for rule in dict.fromkeys(f.rule for f in live):
        meta = report.rule(rule)
        hits = [f for f in live if f.rule == rule]
        out.append(f"::group::{rule} {meta.name} ({len(hits)})")
        for f in hits:
            props: list[str] = []
            if f.file:
                props.append(f"file={_prop(display_path(f.file))}")
                if f.line:
                    props.append(f"line={f.line}")
            props.append(f"title={_prop(f.rule + ' ' + meta.name)}")
            msg = f.message
            if f.affects:
                msg += "\naffects: " + ", ".join(f.affects)
            msg += f"\nfix: {meta.fix}"
            out.append(f"::{_KIND[f.severity]} {','.join(props)}::{_data(msg)}")
        out.append("::endgroup::")
    waived = [f for f in report.findings if f.waiver is not None]
    if waived:
        out.append(f"::group::waived ({len(waived)})")
        for f in waived:
            assert f.waiver is not None
            out.append(
                _data(f"{f.rule}: {f.message} (waived: {f.waiver.reason}; {f.waiver.source})")
            )
        out.append("::endgroup::")
    out.append(summary_line(report))
    return "".join(line + "\n" for line in out)


def step_summary(report: CheckReport) -> str:
    """The Markdown job summary: verdict, counts, one row per finding."""
    lines = [
        f"## profilec check: {'PASS' if report.passed else 'FAIL'}",
        "",
        summary_line(report),
        "",
    ]
    if report.findings:
        lines += ["| severity | rule | finding | where | waived |", "|---|---|---|---|---|"]
        for f in report.findings:
            where = display_path(f.file) + (f":{f.line}" if f.line else "") if f.file else "-"
            cells = [
                f.severity,
                f"{f.rule} {report.rule(f.rule).name}",
                f.message,
                where,
                f.waiver.reason if f.waiver else "",
            ]
            lines.append(
                "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"
            )
    return "\n".join(lines) + "\n"


def write_step_summary(report: CheckReport) -> None:
    """Append the job summary to $GITHUB_STEP_SUMMARY when the variable names a file."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(step_summary(report))
