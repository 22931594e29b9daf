"""Report formats: SARIF 2.1.0 valid by the OASIS schema, JUnit parseable, annotations, JSON."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from profilec.api import load_and_compile
from profilec.check.build import from_bundle
from profilec.check.checker import run_check
from profilec.check.lints.canary import canary_findings
from profilec.formats import CHECK_FORMATS
from profilec.models.check import CheckReport
from profilec.settings import now_utc
from tests.helpers import make_layout

ROOT = Path(__file__).resolve().parents[2]
#: Vendored from oasis-tcs/sarif-spec sarif-2.1/schema/sarif-schema-2.1.0.json (errata01), see
#: tests/data/README.md.
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)
FORMATS = CHECK_FORMATS.names


def render(name: str, report: CheckReport, now: datetime | None = None) -> str:
    """Report `report` in format `name` as check does (`now` or the clock / SOURCE_DATE_EPOCH)."""
    return CHECK_FORMATS.renderer(name)(report, now or now_utc())


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
    assert render("github", clean, NOW) == (
        "profilec check: PASS: 0 errors, 0 warnings, 0 notes, 0 waived; 0 of 6 cells not denied "
        "(fail-on error)\n"
    )
    out = render("github", broken, NOW).split("\n")[:-1]
    assert out[-1].startswith("profilec check: FAIL: ")
    groups = [x for x in out if x.startswith("::group::")]
    assert len(groups) == len({f.rule for f in broken.findings})
    assert out.count("::endgroup::") == len(groups)
    lines = [x for x in out if not x.startswith(("::group::", "::endgroup::", "profilec check:"))]
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


# ---------------------------------------------------------------------------------------------
# Canary results: one PC022 finding / testcase per failed probe, never the probe's output.

OUTPUT_MARK = "PROFILEC-CANARY-SECRET-0123456789abcdef01234567"


def _probe(name: str, failures: list[str], observed: str = "deny") -> dict[str, object]:
    return {
        "name": name,
        "kind": "model",
        "command": ["codex", "sandbox", "--", "sh", "-c", f"cat /x/{name}"],
        "exit_code": 0 if observed == "allow" else 1,
        "output": f"{OUTPUT_MARK} printed by {name}\n",
        "expected": "deny",
        "predicted": "deny",
        "observed": observed,
        "ok": not failures,
        "failures": failures,
        "seconds": 0.25,
    }


def _canary_doc(failing: bool) -> dict[str, object]:
    agent = [_probe("control-read", []), _probe("cat-codex-auth-0", [])]
    full = [_probe("net-loopback", []), _probe("tamper-relink-codex-auth", [])]
    if failing:
        agent[1] = _probe("cat-codex-auth-0", ["leak", "mismatch"], "allow")
        full[1] = _probe("tamper-relink-codex-auth", ["tamper"], "allow")
    modes = [
        ("agent", agent, None),
        ("agent-full-access", full, None),
        ("read-only", [], "APIError: boom" if failing else None),
    ]
    classes = sorted({c for _, ps, _ in modes for p in ps for c in p["failures"]})  # type: ignore[attr-defined]
    return {
        "run_id": "r1",
        "passed": not failing,
        "failures": classes + (["error"] if failing else []),
        "seconds": 1.0,
        "image": "profilec-canary:test",
        "modes": [
            {
                "mode": m,
                "profile_id": f"profilec-{m}",
                "passed": not any(not p["ok"] for p in ps) and err is None,
                "failures": [],
                "seconds": 0.5,
                "error": err,
                "probes": ps,
            }
            for m, ps, err in modes
        ],
    }


def _canary_report(tmp_path: Path, failing: bool) -> CheckReport:
    lay = make_layout(tmp_path / "c")
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    doc = _canary_doc(failing)
    inputs = from_bundle(bundle, bundle.mode_profiles, manifest_file=str(lay.manifest))
    return run_check(inputs, canary=doc, extra=canary_findings(doc))


def test_canary_findings_one_per_failed_probe_and_mode_error() -> None:
    assert canary_findings(_canary_doc(False)) == []
    found = canary_findings(_canary_doc(True))
    assert [(f.rule, f.mode) for f in found] == [
        ("PC022", "agent"),
        ("PC022", "agent-full-access"),
        ("PC022", "read-only"),
    ]
    assert "probe cat-codex-auth-0: leak,mismatch" in found[0].message
    assert "observed allow" in found[0].message
    assert "probe tamper-relink-codex-auth: tamper" in found[1].message
    assert "error" in found[2].message and "boom" in found[2].message
    assert all(OUTPUT_MARK not in f.message for f in found)
    # A failed run with nothing to pin on a probe still yields one finding.
    bare = canary_findings({"passed": False, "failures": ["error"], "modes": []})
    assert len(bare) == 1 and "error" in bare[0].message


def test_junit_has_a_testcase_per_canary_probe(tmp_path: Path) -> None:
    clean = ET.fromstring(render("junit", _canary_report(tmp_path / "a", False), NOW))
    cases = [
        c for c in clean.findall("testcase") if (c.get("classname") or "").startswith("canary.")
    ]
    assert len(cases) == 4 and all(c.find("failure") is None for c in cases)
    assert {c.get("time") for c in cases} == {"0.250"}  # each probe's measured wall time
    text = render("junit", _canary_report(tmp_path / "b", True), NOW)
    assert OUTPUT_MARK not in text
    bad = ET.fromstring(text)
    failed = {
        (c.get("classname"), c.get("name")): c.find("failure")
        for c in bad.findall("testcase")
        if (c.get("classname") or "").startswith("canary.") and c.find("failure") is not None
    }
    assert set(failed) == {
        ("canary.agent", "cat-codex-auth-0"),
        ("canary.agent-full-access", "tamper-relink-codex-auth"),
        ("canary.read-only", "run"),
    }
    leak = failed[("canary.agent", "cat-codex-auth-0")]
    assert leak is not None and leak.get("type") == "PC022"
    assert (leak.get("message") or "").startswith("leak,mismatch (expected deny")
    assert int(bad.get("failures") or 0) == len(bad.findall("testcase/failure"))
    # The PC022 lint testcase (stable rule id) still fails alongside the per-probe cases.
    lint = [c for c in bad.findall("testcase") if c.get("name", "").startswith("PC022 ")]
    assert len(lint) == 1 and lint[0].find("failure") is not None


def test_sarif_has_a_result_per_failed_canary_probe(tmp_path: Path) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    text = render("sarif", _canary_report(tmp_path, True), NOW)
    assert OUTPUT_MARK not in text
    doc = json.loads(text)
    jsonschema.Draft4Validator(schema).validate(doc)
    run = doc["runs"][0]
    results = [r for r in run["results"] if r["ruleId"] == "PC022"]
    assert len(results) == 3
    assert {r["properties"]["mode"] for r in results} == {"agent", "agent-full-access", "read-only"}
    assert len({r["partialFingerprints"]["profilecFinding/v1"] for r in results}) == 3
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert all(rule_ids[r["ruleIndex"]] == "PC022" for r in results)
    clean = json.loads(render("sarif", _canary_report(tmp_path / "ok", False), NOW))
    assert not [r for r in clean["runs"][0]["results"] if r["ruleId"] == "PC022"]
