"""Report formats: SARIF 2.1.0 valid by the OASIS schema, JUnit parseable, annotations, JSON."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from compiler.api import load_and_compile
from compiler.check.checker import from_bundle, run_check
from compiler.check.result import CheckReport
from compiler.report import FORMATS, render
from tests.helpers import make_layout

ROOT = Path(__file__).resolve().parents[2]
#: Vendored from oasis-tcs/sarif-spec sarif-2.1/schema/sarif-schema-2.1.0.json (errata01), see
#: tests/data/README.md.
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)


def _reports(tmp_path: Path) -> tuple[CheckReport, CheckReport]:
    lay = make_layout(tmp_path / "l")
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    clean = run_check(from_bundle(bundle, bundle.mode_profiles, manifest_file=str(lay.manifest)))
    broken_modes = dict(bundle.mode_profiles, agent=":danger-full-access")
    broken = run_check(from_bundle(bundle, broken_modes, manifest_file=str(lay.manifest)))
    assert clean.passed and not broken.passed
    return clean, broken


def test_sarif_validates_against_the_official_2_1_0_schema(tmp_path: Path) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    for report in _reports(tmp_path):
        doc = json.loads(render("sarif", report, NOW))
        validator.validate(doc)
        assert doc["version"] == "2.1.0"
    doc = json.loads(render("sarif", _reports(tmp_path / "b")[1], NOW))
    results = doc["runs"][0]["results"]
    assert results and all(r["locations"] for r in results)
    assert {r["level"] for r in results} <= {"error", "warning", "note"}


def test_sarif_schema_rejects_a_broken_log() -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate({"version": "2.1.0", "runs": [{"x": 1}]})


def test_junit_has_a_suite_of_cases_with_failures(tmp_path: Path) -> None:
    clean, broken = _reports(tmp_path)
    suite = ET.fromstring(render("junit", clean, NOW))
    assert suite.tag == "testsuite" and suite.get("failures") == "0"
    assert int(suite.get("tests") or 0) == len(suite.findall("testcase")) > 0
    bad = ET.fromstring(render("junit", broken, NOW))
    failures = bad.findall("testcase/failure")
    assert failures and int(bad.get("failures") or 0) == len(failures)
    assert any(c.get("classname") == "coverage.agent" for c in bad.findall("testcase"))


def test_github_prints_one_error_annotation_per_finding(tmp_path: Path) -> None:
    clean, broken = _reports(tmp_path)
    assert render("github", clean, NOW) == ""
    lines = render("github", broken, NOW).split("\n")[:-1]
    assert len(lines) == len(broken.findings)
    assert all(
        line.startswith(("::error file=", "::warning file=", "::notice file=")) for line in lines
    )
    assert all(",title=PC" in line and "::" in line[2:] for line in lines)


def test_json_report_matches_its_published_schema(tmp_path: Path) -> None:
    schema = json.loads((ROOT / "schemas" / "check-report.schema.json").read_text(encoding="utf-8"))
    for report in _reports(tmp_path):
        doc = json.loads(render("json", report, NOW))
        jsonschema.Draft202012Validator(schema).validate(doc)
        assert CheckReport.model_validate_json(json.dumps(doc)) == report


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_deterministic_for_the_same_inputs(tmp_path: Path, fmt: str) -> None:
    clean, broken = _reports(tmp_path)
    for report in (clean, broken):
        assert render(fmt, report, NOW) == render(fmt, report, NOW)


def test_only_junit_and_sarif_carry_a_time(tmp_path: Path) -> None:
    _, broken = _reports(tmp_path)
    later = datetime(2027, 1, 1, tzinfo=UTC)
    for fmt in ("text", "json", "github"):
        assert render(fmt, broken, NOW) == render(fmt, broken, later)
    for fmt in ("junit", "sarif"):
        assert render(fmt, broken, NOW) != render(fmt, broken, later)


def test_source_date_epoch_fixes_the_report_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, broken = _reports(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert render("sarif", broken) == render("sarif", broken)
    assert "2023-11-14T22:13:20Z" in render("sarif", broken)
