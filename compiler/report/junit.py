"""`junit`: one JUnit <testsuite>: a testcase per coverage cell, then a testcase per lint rule."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime

from ..check.result import CheckReport, at_or_above


def render(report: CheckReport, now: datetime) -> str:
    """A <testsuite> document; a failure is anything at or above --fail-on."""
    suite = ET.Element(
        "testsuite",
        {"name": "profilec check", "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S")},
    )
    for c in report.cells:
        case = ET.SubElement(
            suite,
            "testcase",
            {"classname": f"coverage.{c.mode}", "name": f"{c.root} {c.kind} {c.spelling}"},
        )
        severity = "warning" if c.access == "unlisted" else "error"
        if not c.ok and at_or_above(severity, report.fail_on):
            ET.SubElement(
                case,
                "failure",
                {
                    "type": "PC016" if c.access == "unlisted" else "PC000",
                    "message": f"{c.access} via {c.winner or 'no entry'} (real path {c.real_path})",
                },
            )
    for rule in report.rules:
        case = ET.SubElement(
            suite, "testcase", {"classname": "lint", "name": f"{rule.id} {rule.name}"}
        )
        hits = [f for f in report.findings if f.rule == rule.id]
        failing = [f for f in hits if at_or_above(f.severity, report.fail_on)]
        if failing:
            fail = ET.SubElement(case, "failure", {"type": rule.id, "message": failing[0].message})
            fail.text = "\n".join(f.message for f in failing) + f"\nfix: {rule.fix}"
        below = [f for f in hits if f not in failing]
        if below:
            ET.SubElement(case, "system-out").text = "\n".join(
                f"{f.severity}: {f.message}" for f in below
            )
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    ET.indent(suite)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
    )
