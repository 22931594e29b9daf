"""The canary report is its model (compiler/models/canary.py): what a run's verdict follows from,
and the JSON `profilec canary --format json` writes of it (the real runs:
tests/integration/test_canary_*.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from profilec.audit.evidence import bind
from profilec.models.canary import (
    CanaryMode,
    CanaryReport,
    CanaryReportDocument,
    ControlOutcome,
    Probe,
)
from profilec.resources import validator


def _probe(name: str, *failures: str, **kw: Any) -> Probe:
    fields: dict[str, Any] = {
        "name": name,
        "kind": "model",
        "command": ("sh", "-c", "cat /x"),
        "exit_code": 1,
        "output": "denied",
        "expected": "deny",
        "predicted": "deny",
        "observed": "deny",
        "ok": not failures,
        "failures": failures,
    }
    return Probe(**{**fields, **kw})


def test_a_mode_fails_with_its_probes_classes_and_its_error_sorted_once() -> None:
    probes = (_probe("a", "mismatch", "leak"), _probe("b"), _probe("c", "leak"))
    mode = CanaryMode.of("agent", "p", probes, 1.0)
    assert mode.failures == ("leak", "mismatch") and not mode.passed
    assert CanaryMode.of("agent", "p", (_probe("b"),), 1.0).passed
    broken = CanaryMode.of("agent", "p", (_probe("a", "tamper"),), 1.0, error="gone")
    assert broken.failures == ("error", "tamper") and not broken.passed
    # Appending probes (the parent probes after the containers) judges the mode again.
    more = CanaryMode.of("agent", "p", (_probe("b"),), 1.0).with_probes((_probe("z", "parent"),), 2)
    assert (more.failures, more.passed, more.seconds) == (("parent",), False, 3.0)
    assert [p.name for p in more.probes] == ["b", "z"]


def test_a_run_passes_only_when_it_probed_a_mode_and_every_mode_passed() -> None:
    good = CanaryMode.of("agent", "p", (_probe("b"),), 1.0)
    assert CanaryReport.of("r", (good,), 1.0).passed
    assert not CanaryReport.of("r", (), 1.0).passed
    off = CanaryMode.of("read-only", "q", (_probe("a", "mismatch"),), 1.0)
    report = CanaryReport.of("r", (good, off), 1.0)
    assert (report.passed, report.failures, report.mismatch_only) == (False, ("mismatch",), True)
    worse = CanaryMode.of("x", "q", (_probe("a", "leak"),), 1.0)
    assert not CanaryReport.of("r", (off, worse), 1.0).mismatch_only


def test_the_json_rounds_run_and_mode_times_and_writes_a_control_only_where_there_is_one() -> None:
    ctl = ControlOutcome(observed="allow", ok=True, output="leaked", seconds=2.25)
    parent = _probe("parent-env", kind="parent", predicted=None, seconds=0.123456, control=ctl)
    mode = CanaryMode.of("agent", "p", (_probe("cat"), parent), 1.2345678)
    report = CanaryReport.of("r", (mode,), 2.0004999, "img:1", ("a note",))
    doc = report.model_dump(mode="json")
    assert (doc["seconds"], doc["modes"][0]["seconds"]) == (2.0, 1.235)
    assert report.seconds == 2.0004999  # the model keeps the wall time it was given
    cat, env = doc["modes"][0]["probes"]
    assert "control" not in cat and cat["seconds"] is None and cat["predicted"] == "deny"
    assert env["control"] == {"observed": "allow", "ok": True, "output": "leaked", "seconds": 2.25}
    assert env["seconds"] == 0.123456
    assert doc["notes"] == ["a note"]
    assert json.dumps(doc, sort_keys=True) == json.dumps(
        {
            "failures": [],
            "image": "img:1",
            "modes": [
                {
                    "error": None,
                    "failures": [],
                    "mode": "agent",
                    "passed": True,
                    "probes": [
                        {
                            "command": ["sh", "-c", "cat /x"],
                            "exit_code": 1,
                            "expected": "deny",
                            "failures": [],
                            "kind": "model",
                            "name": "cat",
                            "observed": "deny",
                            "ok": True,
                            "output": "denied",
                            "predicted": "deny",
                            "seconds": None,
                        },
                        env,
                    ],
                    "profile_id": "p",
                    "seconds": 1.235,
                }
            ],
            "notes": ["a note"],
            "passed": True,
            "run_id": "r",
            "seconds": 2.0,
        },
        sort_keys=True,
    )


def test_the_bound_document_validates_and_reads_back_as_the_same_report() -> None:
    mode = CanaryMode.of("agent", "p", (_probe("cat", "leak"),), 1.5, error=None)
    report = CanaryReport.of("r", (mode,), 2.0, "img", ("pre-check (PC051): x",))
    bundle = {"content_hash": "sha256:" + "1" * 64, "compiled": {}, "codex_version": "0.171.0"}
    doc = json.loads(json.dumps(bind(report.model_dump(mode="json"), bundle, datetime.now(UTC))))
    validator("canary-report.schema.json").validate(doc)
    back = CanaryReportDocument.model_validate(doc, strict=False)
    assert back.model_dump(mode="json", exclude={"evidence"}) == report.model_dump(mode="json")
    # A document written before the report carried its notes still reads.
    del doc["notes"]
    validator("canary-report.schema.json").validate(doc)
    assert CanaryReportDocument.model_validate(doc, strict=False).notes == ()
