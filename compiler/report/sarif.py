"""`sarif`: a SARIF 2.1.0 log (validated against the OASIS schema in tests)."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from ..check.triage import INFORMATION_URI, help_uri
from ..models.check import CheckFinding, CheckReport
from . import display_path

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)


def _uri(path: str) -> str:
    shown = display_path(path)
    if shown.startswith("/"):
        return "file://" + shown
    return shown if os.sep == "/" else shown.replace(os.sep, "/")


def _result(f: CheckFinding, index: int) -> dict[str, Any]:
    key = "|".join([f.rule, f.mode or "", f.profile or "", f.root or "", f.path or f.message])
    res: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": f.severity,
        "message": {"text": f.message},
        "partialFingerprints": {"profilecFinding/v1": hashlib.sha256(key.encode()).hexdigest()},
        "properties": {
            k: v
            for k, v in (
                ("mode", f.mode),
                ("profile", f.profile),
                ("root", f.root),
                ("path", f.path),
            )
            if v is not None
        },
    }
    if f.affects:
        res["properties"]["affects"] = list(f.affects)
    if f.file:
        loc: dict[str, Any] = {"artifactLocation": {"uri": _uri(f.file)}}
        if f.line:
            loc["region"] = {"startLine": f.line}
        res["locations"] = [{"physicalLocation": loc}]
    if f.waiver is not None:
        w = f.waiver
        res["suppressions"] = [
            {
                "kind": "external",
                "status": "accepted",
                "justification": w.reason,
                "properties": {
                    k: v for k, v in (("source", w.source), ("expires", w.expires)) if v is not None
                },
            }
        ]
    return res


#: GitHub code scanning ranks security results by this (0.1-10): error high, warning medium.
SECURITY_SEVERITY = {"error": "8.0", "warning": "5.0", "note": "2.0"}


def render(report: CheckReport, now: datetime) -> str:
    """One run, every rule described, one result per finding."""
    try:
        tool_version = version("profilec")
    except PackageNotFoundError:
        tool_version = "0"
    index = {r.id: i for i, r in enumerate(report.rules)}
    rules = [
        {
            "id": r.id,
            "name": r.name,
            "shortDescription": {"text": r.message},
            "fullDescription": {"text": r.why},
            "help": {"text": f"{r.fix}"},
            "helpUri": help_uri(r),
            "defaultConfiguration": {"level": r.severity},
            "properties": {
                "codexVersions": r.codex_versions or "all",
                "security-severity": SECURITY_SEVERITY[r.severity],
                "tags": ["security"],
            },
        }
        for r in report.rules
    ]
    doc = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "profilec",
                        "version": tool_version,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "endTimeUtc": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "properties": {
                            "codexVersion": report.codex_version,
                            "failOn": report.fail_on,
                        },
                    }
                ],
                "results": [_result(f, index[f.rule]) for f in report.findings],
                "properties": {
                    "cells": report.summary.cells,
                    "failedCells": report.summary.failed_cells,
                },
            }
        ],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
