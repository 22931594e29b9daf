"""`junit`: one JUnit <testsuite>: a testcase per coverage cell, a testcase per lint rule, then
(with --canary) a testcase per canary probe and mode (classname `canary.<mode>`; a failed probe's
failure carries rule PC022, its failure classes and decisions, never its output)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime

from ..check.lints.canary import RULE as CANARY_RULE
from ..check.lints.canary import mode_error, probe_failure
from ..models.check import CheckReport, at_or_above
from ..rule_ids import COVERAGE_READABLE, COVERAGE_UNLISTED


def render(report: CheckReport, now: datetime) -> str:
    """A <testsuite> document; a failure is anything at or above --fail-on."""
    suite = ET.Element(
        "testsuite",
        {"name": "profilec check", "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S")},
    )
    seen: dict[tuple[str, str, str], int] = {}
    for c in report.cells:
        # Stable names (no temp paths): root, spelling kind, and its index among that kind.
        n = seen[(c.mode, c.root, c.kind)] = seen.get((c.mode, c.root, c.kind), 0) + 1
        case = ET.SubElement(
            suite,
            "testcase",
            {"classname": f"coverage.{c.mode}", "name": f"{c.root} {c.kind} {n}", "time": "0"},
        )
        ET.SubElement(case, "system-out").text = f"{c.spelling} -> {c.real_path}: {c.access}"
        severity = "warning" if c.access == "unlisted" else "error"
        if not c.ok and at_or_above(severity, report.fail_on):
            ET.SubElement(
                case,
                "failure",
                {
                    "type": COVERAGE_UNLISTED if c.access == "unlisted" else COVERAGE_READABLE,
                    "message": f"{c.access} via {c.winner or 'no entry'} (real path {c.real_path})",
                },
            )
    for rule in report.rules:
        case = ET.SubElement(
            suite, "testcase", {"classname": "lint", "name": f"{rule.id} {rule.name}"}
        )
        hits = [f for f in report.findings if f.rule == rule.id and f.waiver is None]
        failing = [f for f in hits if at_or_above(f.severity, report.fail_on)]
        if failing:
            fail = ET.SubElement(case, "failure", {"type": rule.id, "message": failing[0].message})
            fail.text = "\n".join(f.message for f in failing) + f"\nfix: {rule.fix}"
        below = [f for f in hits if f not in failing]
        if below:
            ET.SubElement(case, "system-out").text = "\n".join(
                f"{f.severity}: {f.message}" for f in below
            )
    total = 0.0
    for mode in (report.canary or {}).get("modes") or ():
        classname = f"canary.{mode.get('mode')}"
        total += float(mode.get("seconds") or 0)
        for probe in mode.get("probes") or ():
            attrs = {"classname": classname, "name": str(probe.get("name"))}
            if probe.get("seconds") is not None:  # measured per command (canary/run.py _timed)
                attrs["time"] = f"{float(probe['seconds']):.3f}"
            case = ET.SubElement(suite, "testcase", attrs)
            if not probe.get("ok"):
                ET.SubElement(
                    case, "failure", {"type": CANARY_RULE, "message": probe_failure(probe)}
                )
        if mode.get("error"):
            case = ET.SubElement(
                suite,
                "testcase",
                {
                    "classname": classname,
                    "name": "run",
                    "time": f"{float(mode.get('seconds') or 0):.3f}",
                },
            )
            ET.SubElement(case, "failure", {"type": CANARY_RULE, "message": mode_error(mode)})
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    suite.set("time", f"{total:.3f}")  # measured: the canary modes (static cells take ~0)
    ET.indent(suite)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
    )
