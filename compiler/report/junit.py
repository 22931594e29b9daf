"""`junit`: JUnit XML, one suite of coverage cells (one testcase each) and one suite of rules."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime

from ..check.result import CheckReport, at_or_above


def _suite(parent: ET.Element, name: str, stamp: str) -> ET.Element:
    return ET.SubElement(parent, "testsuite", {"name": name, "timestamp": stamp})


def _close(suite: ET.Element) -> tuple[int, int]:
    cases = suite.findall("testcase")
    failures = sum(1 for c in cases if c.find("failure") is not None)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    return len(cases), failures


def render(report: CheckReport, now: datetime) -> str:
    """A <testsuites> document; a failure is anything at or above --fail-on."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", {"name": "profilec check"})
    cov = _suite(root, "profilec.coverage", stamp)
    for c in report.cells:
        case = ET.SubElement(
            cov,
            "testcase",
            {
                "classname": f"coverage.{c.mode}",
                "name": f"{c.root} {c.kind} {c.spelling}",
            },
        )
        severity = "warning" if c.access == "unlisted" else "error"
        if not c.ok and at_or_above(severity, report.fail_on):
            ET.SubElement(
                case,
                "failure",
                {
                    "type": "PC002" if c.access == "unlisted" else "PC001",
                    "message": f"{c.access} via {c.winner or 'no entry'} (real path {c.real_path})",
                },
            )
    lints = _suite(root, "profilec.lint", stamp)
    for rule in report.rules:
        case = ET.SubElement(
            lints, "testcase", {"classname": "lint", "name": f"{rule.id} {rule.name}"}
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
    totals = [_close(cov), _close(lints)]
    root.set("tests", str(sum(t for t, _ in totals)))
    root.set("failures", str(sum(f for _, f in totals)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
