"""Report formats for `profilec check`: text, json, junit, sarif, github. Formatting only."""

from __future__ import annotations

import json
from xml.sax.saxutils import quoteattr

from .checker import RULES, CheckResult


def text(res: CheckResult) -> str:
    """Human-readable matrix and findings."""
    lines = ["coverage (mode x root x spelling -> access):"]
    for c in res.cells:
        mark = "ok  " if c.access == "deny" else "FAIL"
        lines.append(f"  {mark} {c.mode:<18} {c.root:<16} {c.access:<6} {c.spelling}")
    if res.canary is not None:
        lines.append(f"canary: {'pass' if res.canary.get('passed') else 'FAIL'}")
    lines.append(f"findings: {len(res.findings)}")
    for f in res.findings:
        where = " ".join(x for x in (f.mode, f.profile) if x)
        lines.append(f"  {f.severity:<7} {f.rule} {RULES[f.rule].name}: {f.message}"
                     + (f" [{where}]" if where else ""))
    return "\n".join(lines) + "\n"


def as_json(res: CheckResult) -> str:
    """The result as sorted JSON."""
    return json.dumps(res.to_json(), indent=2, sort_keys=True) + "\n"


def junit(res: CheckResult) -> str:
    """JUnit XML: one testcase per coverage cell and per rule."""
    cases: list[str] = []
    for c in res.cells:
        name = quoteattr(f"{c.mode} {c.root} {c.spelling}")
        body = "" if c.access == "deny" else (
            f"<failure message={quoteattr(f'{c.access} via {c.winner}')}/>")
        cases.append(f'  <testcase classname="coverage" name={name}>{body}</testcase>')
    for rid, rule in sorted(RULES.items()):
        hits = [f for f in res.findings if f.rule == rid]
        body = "".join(f"<failure message={quoteattr(f.message)}/>" for f in hits
                       if f.severity == "error")
        cases.append(f"  <testcase classname=\"lint\" name={quoteattr(rid + ' ' + rule.name)}>"
                     f"{body}</testcase>")
    failures = sum(1 for c in cases if "<failure" in c)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuite name="profilec-check" tests="{len(cases)}" failures="{failures}">\n'
            + "\n".join(cases) + "\n</testsuite>\n")


def sarif(res: CheckResult) -> str:
    """SARIF 2.1.0 log with one rule per lint id."""
    level = {"note": "note", "warning": "warning", "error": "error"}
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "profilec",
                "rules": [{"id": r.id, "name": r.name,
                           "shortDescription": {"text": r.why},
                           "help": {"text": r.fix},
                           "defaultConfiguration": {"level": level[r.severity]}}
                          for r in sorted(RULES.values(), key=lambda r: r.id)],
            }},
            "results": [{
                "ruleId": f.rule, "level": level[f.severity],
                "message": {"text": f.message},
                **({"locations": [{"physicalLocation": {"artifactLocation": {"uri": f.path}}}]}
                   if f.path and f.path.startswith("/") else {}),
            } for f in res.findings],
        }],
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def github(res: CheckResult) -> str:
    """GitHub Actions workflow annotations."""
    kind = {"note": "notice", "warning": "warning", "error": "error"}
    out = []
    for f in res.findings:
        msg = f.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        out.append(f"::{kind[f.severity]} title={f.rule} {RULES[f.rule].name}::{msg}")
    return "".join(line + "\n" for line in out)


FORMATTERS = {"text": text, "json": as_json, "junit": junit, "sarif": sarif, "github": github}
