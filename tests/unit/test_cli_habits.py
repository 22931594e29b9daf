"""CLI habits: `profilec rules`, -q/-v after the command, `check --exit-zero`, `watch --run-as`,
a repeated single-valued option refused, the `[canary]` extra named where canaries are
introduced, and PC051's text about what Codex 0.171.0 loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profilec.check import rules as registry
from profilec.check.result import Rule
from profilec.check.rules import RuleCatalogue, all_rules
from profilec.cli import main
from profilec.resources import validator
from profilec.rule_ids import COVERAGE_READABLE, TRUSTED_BASE_WRITABLE

REPO = Path(__file__).resolve().parents[2]

# -- profilec rules ----------------------------------------------------------------------------


def _rules(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["rules", *args]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_rules_prints_one_line_per_registered_rule(capsys: pytest.CaptureFixture[str]) -> None:
    out = _rules(capsys)
    lines = out.split("\n")
    assert lines[-1] == ""  # every line ends in LF
    rows = [line.split(None, 3) for line in lines[:-1]]
    declared = all_rules()
    assert len(rows) == len(declared) > 40
    for row, r in zip(rows, declared, strict=True):
        assert row == [r.id, r.severity, "waivable" if r.waivable else "not-waivable", r.message]


def test_rules_marks_only_the_reachable_and_trusted_side_rules_not_waivable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = [line.split(None, 3) for line in _rules(capsys).split("\n")[:-1]]
    fixed = {row[0] for row in rows if row[2] == "not-waivable"}
    assert fixed == {COVERAGE_READABLE, TRUSTED_BASE_WRITABLE}
    assert {row[2] for row in rows} == {"waivable", "not-waivable"}


def test_rules_is_the_registry_not_a_second_list(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    all_rules()  # every declaring module imported
    extra = Rule.model_validate(
        {
            **registry.rule_by_id(COVERAGE_READABLE).model_dump(),
            "id": "PC998",
            "message": "a rule only this test declares",
            "doc_anchor": "docs/check.md#pc998",
            "waivable": True,
        }
    )
    monkeypatch.setitem(registry._REGISTRY, "PC998", extra)
    text = _rules(capsys)
    assert "PC998  error    waivable      a rule only this test declares\n" in text
    doc = json.loads(_rules(capsys, "--format", "json"))
    assert [r["id"] for r in doc["rules"]][-1] == "PC998"


def test_rules_json_validates_against_its_schema_and_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = json.loads(_rules(capsys, "--format", "json"))
    validator("rules.schema.json").validate(doc)
    catalogue = RuleCatalogue.model_validate(doc, strict=False)
    assert catalogue.rules == all_rules()
    assert {r["id"]: r["waivable"] for r in doc["rules"]}[COVERAGE_READABLE] is False
    # The schema holds the waivable flag to a boolean (a negative control for the validator).
    doc["rules"][0]["waivable"] = "no"
    with pytest.raises(Exception, match="is not of type 'boolean'"):
        validator("rules.schema.json").validate(doc)


def test_rules_refuses_an_unknown_format_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--format", "sarif"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("profilec: usage: unknown --format 'sarif'")


def test_rules_out_writes_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rules.txt"
    assert main(["rules", "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert out.read_text(encoding="utf-8") == _rules(capsys)
