"""`profilec check` in CI: findings located and grouped by cause, waivers, baseline, CI formats.

The fixture tests/data/bad-config/config.toml is "one bad config": three profiles with no deny
and a full-access profile writing `:root`. Ungrouped it gives one finding per cell and path
(34 with the layout under /var/tmp: 9 PC000, 15 PC025, 6 PC024, 3 PC014, 1 PC044); grouped
by cause, one per profile and rule (9: 3 PC000, 3 PC025, 1 PC024, 1 PC014, 1 PC044).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from profilec.check.rules import rule_by_id
from profilec.cli import main
from tests.helpers import make_layout

DATA = Path(__file__).resolve().parents[1] / "data"
ROOT = Path(__file__).resolve().parents[2]
BAD = DATA / "bad-config" / "config.toml"


def _base(tmp_path: Path) -> list[str]:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    return [
        "check",
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
        "--config",
        str(BAD),
        "--no-project-config",
    ]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    rc, out, err = _run(capsys, *argv, "--format", "json")
    assert rc in (0, 1), err
    return rc, json.loads(out)


def test_one_bad_config_gives_one_finding_per_cause_located_in_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _base(tmp_path)
    _, flat = _json(capsys, *base, "--no-group")
    _, grouped = _json(capsys, *base)
    before = Counter(f["rule"] for f in flat["findings"])
    after = Counter(f["rule"] for f in grouped["findings"])
    assert before["PC000"] == 9 and after["PC000"] == 3  # one per profile
    # One PC014 per profile however many holder directories it leaves writable.
    pc014 = {f["profile"] for f in flat["findings"] if f["rule"] == "PC014"}
    assert before["PC014"] >= 3 and after["PC014"] == len(pc014) < before["PC014"]

    # Grouping never merges two (rule, profile) pairs and never splits one entry's findings:
    # (a trusted-side input under /tmp is won by :slash_tmp, the trusted base by :root).
    def won(f: dict[str, Any]) -> str:
        return f["message"].split("(winner: ", 1)[-1].split(";", 1)[0] if f["profile"] else ""

    pairs = {(f["rule"], f["profile"] or f["message"]) for f in flat["findings"]}
    causes = {(f["rule"], f["profile"] or f["message"], won(f)) for f in flat["findings"]}
    assert len(flat["findings"]) >= 22
    assert len(pairs) <= len(grouped["findings"]) <= len(causes)
    # Nothing is lost: every ungrouped finding is one grouped finding or listed in one.
    assert sum(max(1, len(f["affects"])) for f in grouped["findings"]) == len(flat["findings"])
    # Every profile finding points at the profile's table in the config, with a line.
    lines = BAD.read_text(encoding="utf-8").split("\n")
    for f in grouped["findings"]:
        if f["profile"] is None:
            continue
        assert f["file"] == str(BAD) and f["line"], f
        assert f["profile"] in "\n".join(lines[: f["line"]]), f
    afa = next(
        f for f in grouped["findings"] if f["rule"] == "PC000" and f["mode"] == "agent-full-access"
    )
    # The winning entry itself when the profile's table holds it, else the profile's header
    # (under /tmp the winner is :slash_tmp, which the parent :workspace brings).
    expect = (
        '":root" = "write"'
        if "winner: :root;" in afa["message"]
        else "[permissions.profilec-agent-full-access]"
    )
    assert lines[afa["line"] - 1] == expect


def test_sarif_names_rules_with_help_severity_and_regions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = _run(capsys, *_base(tmp_path), "--format", "sarif")
    assert rc == 1
    log = json.loads(out)
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(log)
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"].startswith("https://")
    docs = (ROOT / "docs" / "check.md").read_text(encoding="utf-8")
    for rule in driver["rules"]:
        anchor = rule["helpUri"].split("#")[1]
        assert anchor == rule["id"].lower()
        assert f'<a id="{anchor}"></a>`{rule["id"]}` | {rule["name"]} |' in docs, rule["id"]
        assert float(rule["properties"]["security-severity"]) > 0
    results = log["runs"][0]["results"]
    with_profile = [r for r in results if "profile" in r["properties"]]
    assert with_profile and all(
        "region" in r["locations"][0]["physicalLocation"] for r in with_profile
    )


def test_ignore_waives_a_rule_but_keeps_it_visible_as_suppressed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _base(tmp_path)
    rc, doc = _json(capsys, *base)
    rules = sorted({f["rule"] for f in doc["findings"]})
    errors = doc["summary"]["errors"]
    # PC044 is the fixture's one waivable rule; the others say the vault is readable or the
    # trusted side writable (test_check_unwaivable.py).
    waivable = [r for r in rules if rule_by_id(r).waivable]
    assert waivable == ["PC044"] and "PC000" in rules
    rc, doc = _json(capsys, *base, "--ignore", "PC044")
    assert rc == 1 and doc["summary"]["errors"] == errors  # PC000 and the rest still count
    waived = [f for f in doc["findings"] if f["waiver"]]
    assert waived and {f["rule"] for f in waived} == {"PC044"}
    assert doc["summary"]["suppressed"] == len(waived)
    rc, out, _ = _run(capsys, *base, "--ignore", "PC044", "--format", "sarif")
    assert rc == 1
    results = json.loads(out)["runs"][0]["results"]
    suppressed = [r for r in results if r.get("suppressions")]
    assert {r["ruleId"] for r in suppressed} == {"PC044"}
    assert all(r["suppressions"][0]["kind"] == "external" for r in suppressed)
    rc, _, err = _run(capsys, *base, "--ignore", "bogus")
    assert rc == 2 and err.count("\n") == 1 and "--ignore" in err


def _waivers(rules: list[str], **extra: str) -> str:
    body = ""
    for r in rules:
        body += f'[[waiver]]\nrule = "{r}"\n'
        for k, v in extra.items():
            body += f'{k} = "{v}"\n' if k != "expires" else f"{k} = {v}\n"
    return body


def _warning_only(tmp_path: Path) -> list[str]:
    """check argv over a compiled config with `features.apps = false` dropped: one PC044
    warning (waivable), which fails the check at --fail-on warning."""
    lay = make_layout(tmp_path / "l", hop_dir=True)
    flags = [
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]
    cfg = tmp_path / "reviewed.toml"
    assert main(["compile", *flags, "--format", "toml", "--out", str(cfg)]) == 0
    text = cfg.read_text(encoding="utf-8")
    assert "\napps = false\n" in text
    cfg.write_text(text.replace("\napps = false\n", "\n"), encoding="utf-8")
    return ["check", *flags, "--config", str(cfg), "--fail-on", "warning"]


def test_project_config_is_found_upward_and_waives_with_reason_and_expiry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _warning_only(tmp_path)
    project = tmp_path / "proj"
    (project / "sub" / "dir").mkdir(parents=True)
    monkeypatch.chdir(project / "sub" / "dir")
    rc, doc = _json(capsys, *base)
    assert rc == 1 and {f["rule"] for f in doc["findings"]} == {"PC044"}
    rules = ["PC044"]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1800000000")  # 2027-01-15
    cfg = project / "profilec.toml"
    cfg.write_text(_waivers(rules, reason="accepted in review 42", expires="2027-06-30"))
    rc, out, err = _run(capsys, *base, "--format", "json")
    doc = json.loads(out)
    assert rc == 0 and all(f["waiver"]["source"] == str(cfg) for f in doc["findings"])
    assert {f["waiver"]["expires"] for f in doc["findings"]} == {"2027-06-30"}
    # The one note says which file gave the waivers.
    assert err == f"profilec: check: project config: {cfg} (waivers: 1)\n"
    # Expired: the waiver is itself a finding, and no longer waives.
    cfg.write_text(_waivers(rules, reason="accepted in review 42", expires="2026-12-31"))
    rc, doc = _json(capsys, *base)
    assert rc == 1
    expired = [f for f in doc["findings"] if f["rule"] == "PC090"]
    assert len(expired) == len(rules)
    assert "expired on 2026-12-31 (reason was: accepted in review 42)" in expired[0]["message"]
    # No reason: an input error, one line, nothing written.
    cfg.write_text(_waivers(rules))
    rc, out, err = _run(capsys, *base)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "has no reason" in err
    # pyproject.toml [tool.profilec] works the same, and profilec.toml wins over it.
    cfg.unlink()
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n"
        + _waivers(rules, reason="r").replace("[[waiver]]", "[[tool.profilec.waiver]]")
    )
    rc, doc = _json(capsys, *base)
    assert rc == 0 and doc["findings"][0]["waiver"]["source"] == str(project / "pyproject.toml")
    rc, out, err = _run(capsys, *base, "--no-project-config")
    assert rc == 1
    assert err.split("\n")[0] == "profilec: check: project config: none (--no-project-config)"


def test_baseline_counts_only_new_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = [*_warning_only(tmp_path), "--no-project-config"]
    rc, out, _ = _run(capsys, *base, "--format", "json")
    assert rc == 1
    baseline = tmp_path / "baseline.json"
    baseline.write_text(out, encoding="utf-8")
    rc, doc = _json(capsys, *base, "--baseline", str(baseline))
    assert rc == 0 and doc["summary"]["warnings"] == 0 and doc["summary"]["suppressed"] == 1
    assert all(f["waiver"]["reason"] == "in the baseline" for f in doc["findings"])
    # A new problem (the config no longer sets default_permissions) counts.
    cfg = Path(base[base.index("--config") + 1])
    worse = tmp_path / "worse.toml"
    worse.write_text(
        cfg.read_text(encoding="utf-8").replace('default_permissions = "profilec-agent"\n', "")
    )
    argv = [*base[: base.index("--config") + 1], str(worse), *base[base.index("--config") + 2 :]]
    rc, doc = _json(capsys, *argv, "--baseline", str(baseline))
    new = [f for f in doc["findings"] if not f["waiver"]]
    assert rc == 1 and new and {f["rule"] for f in new} == {"PC009"}
    (tmp_path / "nope.json").write_text("{}")
    rc, _, err = _run(capsys, *base, "--baseline", str(tmp_path / "nope.json"))
    assert rc == 2 and "baseline" in err and err.count("\n") == 1


def test_github_output_is_grouped_with_a_summary_and_a_job_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    rc, out, _ = _run(capsys, *_base(tmp_path), "--format", "github", "--ignore", "PC044")
    assert rc == 1
    lines = out.split("\n")[:-1]
    assert lines[0].startswith("::group::PC000 coverage-readable (3)")
    assert re.fullmatch(
        r"profilec check: FAIL: \d+ errors, 0 warnings, 0 notes, 1 waived; "
        r"9 of 9 cells not denied \(fail-on error\)",
        lines[-1],
    ), lines[-1]
    assert lines[-4:-1] == ["::group::waived (1)", lines[-3], "::endgroup::"]
    md = summary.read_text(encoding="utf-8")
    assert md.startswith("## profilec check: FAIL\n") and "| PC000 coverage-readable |" in md


def test_junit_names_carry_no_temp_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, *_base(tmp_path), "--format", "junit")
    assert rc == 1
    suite = ET.fromstring(out)
    names = [c.get("name") or "" for c in suite.findall("testcase")]
    assert names and not any(str(tmp_path) in n or "/" in n for n in names)
    assert suite.get("time") is not None
    assert "codex-auth declared 1" in names and "codex-auth hop-spelling 1" in names
