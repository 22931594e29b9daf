"""`github`: GitHub Actions workflow commands, one `::error file=...,title=...::msg` per finding."""

from __future__ import annotations

from datetime import datetime

from ..check.result import CheckReport
from . import display_path

_KIND = {"note": "notice", "warning": "warning", "error": "error"}


def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def render(report: CheckReport, now: datetime) -> str:
    """One annotation line per finding, LF-terminated; nothing when clean."""
    del now
    out: list[str] = []
    for f in report.findings:
        props: list[str] = []
        if f.file:
            props.append(f"file={_prop(display_path(f.file))}")
            if f.line:
                props.append(f"line={f.line}")
        props.append(f"title={_prop(f.rule + ' ' + report.rule(f.rule).name)}")
        msg = f"{f.message} (fix: {report.rule(f.rule).fix})"
        out.append(f"::{_KIND[f.severity]} {','.join(props)}::{_data(msg)}")
    return "".join(line + "\n" for line in out)
