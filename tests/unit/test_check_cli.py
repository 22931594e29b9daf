"""`profilec check` from the command line: exit codes, inputs, one-line errors, canary hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import profilec.commands.check  # noqa: F401  (binds run_canaries where check calls it)
from profilec.canary import run as canary_run
from profilec.check.configstack import parse_override_lines
from profilec.cli import main
from profilec.models.canary import CanaryMode, CanaryReport, Probe
from tests.helpers import Layout, make_layout, patch_everywhere


def _base(tmp_path: Path) -> tuple[Layout, list[str]]:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    return lay, [
        "check",
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]


def _compile(base: list[str], fmt: str, out: Path) -> Path:
    assert main(["compile", *base[1:], "--format", fmt, "--out", str(out)]) == 0
    return out


def _one_line(err: str) -> str:
    lines = [x for x in err.split("\n") if x]
    assert len(lines) == 1 and lines[0].startswith("profilec: ") and "Traceback" not in err
    return lines[0]


def test_compiled_bundle_checks_clean_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, base = _base(tmp_path)
    for fmt in ("text", "json", "junit", "sarif", "github"):
        assert main([*base, "--format", fmt]) == 0, fmt
    assert "PASS" in capsys.readouterr().out


def test_foreign_config_overrides_and_acp_json_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, base = _base(tmp_path)
    toml = _compile(base, "toml", tmp_path / "c.toml")
    ov = _compile(base, "overrides", tmp_path / "o.txt")
    acp = _compile(base, "acp-json", tmp_path / "a.json")
    assert main([*base, "--config", str(toml)]) == 0
    assert main([*base, "--overrides", str(ov)]) == 0
    capsys.readouterr()
    assert main([*base, "--acp-json", str(acp), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {f["rule"] for f in doc["findings"]} == {"PC018"}
    # The same acp-json with the profiles also in a CODEX_HOME config.toml layer is fine.
    assert main([*base, "--acp-json", str(acp), "--config", str(toml)]) == 0


def test_broken_foreign_config_exits_one_and_names_the_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lay, base = _base(tmp_path)
    toml = _compile(base, "toml", tmp_path / "c.toml")
    text = toml.read_text(encoding="utf-8").replace(f'"{lay.host_target.parent}" = "deny"\n', "")
    toml.write_text(text, encoding="utf-8")
    monkeypatch.chdir(lay.workspace)  # no project config at or above it
    assert main([*base, "--config", str(toml)]) == 1
    cap = capsys.readouterr()
    assert "FAIL" in cap.out and "PC000" in cap.out and str(lay.link) in cap.out
    # Two notes: which project config gave waivers (none here), then the count.
    used, count = (x for x in cap.err.split("\n") if x)
    assert used.startswith("profilec: check: project config: none (no profilec.toml")
    assert count == "profilec: check: 3 findings at or above error"


def test_fail_on_warning_turns_warnings_into_exit_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, base = _base(tmp_path)
    ov = _compile(base, "overrides", tmp_path / "o.txt")
    with ov.open("a", encoding="utf-8") as fh:
        fh.write("permissions.profilec-agent.filesytem={}\n")  # PC005 warning only
    assert main([*base, "--overrides", str(ov)]) == 0
    assert main([*base, "--overrides", str(ov), "--fail-on", "warning"]) == 1
    assert main([*base, "--overrides", str(ov), "--fail-on", "note"]) == 1


def test_out_writes_the_report_file(tmp_path: Path) -> None:
    _, base = _base(tmp_path)
    out = tmp_path / "r.sarif"
    assert main([*base, "--format", "sarif", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["version"] == "2.1.0"


@pytest.mark.parametrize(
    "extra",
    [
        ["--format", "yaml"],
        ["--fail-on", "fatal"],
        ["--config", "/nonexistent/c.toml"],
        ["--config", "a.toml", "--overrides", "b.txt"],
    ],
)
def test_usage_and_input_errors_exit_two_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    _, base = _base(tmp_path)
    assert main([*base, *extra]) == 2
    _one_line(capsys.readouterr().err)


def test_malformed_override_line_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, base = _base(tmp_path)
    bad = tmp_path / "o.txt"
    bad.write_text("default_permissions\n", encoding="utf-8")
    assert main([*base, "--overrides", str(bad)]) == 2
    assert "line 1" in _one_line(capsys.readouterr().err)


def test_override_lines_split_on_lf_only_and_parse_values_like_codex() -> None:
    text = 'model=o3\r\nname="a\u2028b"\npermissions.p={filesystem={"/x/a.json"="deny"}}\n'
    cfg = parse_override_lines(text, where="t")
    assert cfg["model"] == "o3"  # not TOML: raw string, quotes stripped, \r trimmed
    assert cfg["name"] == "a\u2028b"  # U+2028 is not a line break for -c
    assert cfg["permissions"]["p"]["filesystem"] == {"/x/a.json": "deny"}
    # No key quoting: a quoted segment stays literal, dots split.
    assert parse_override_lines('a.":x".b=1', where="t") == {"a": {'":x"': {"b": 1}}}


def test_canary_without_the_codex_is_an_environment_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, base = _base(tmp_path)
    monkeypatch.setenv("PROFILEC_CODEX_BIN", str(tmp_path / "no-codex"))
    assert main([*base, "--canary"]) == 7
    assert "pinned codex" in _one_line(capsys.readouterr().err)


def test_canary_failures_merge_into_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, base = _base(tmp_path)
    codex = tmp_path / "codex"
    codex.write_text("", encoding="utf-8")
    monkeypatch.setenv("PROFILEC_CODEX_BIN", str(codex))

    leak = Probe(
        name="cat-codex-auth-0",
        kind="model",
        command=("cat", "/x"),
        exit_code=0,
        output="",
        expected="deny",
        predicted="deny",
        observed="allow",
        ok=False,
        failures=("leak", "mismatch"),
    )
    report = CanaryReport.of("r", (CanaryMode.of("agent", "p", (leak,), 1.0),), 1.0)
    patch_everywhere(monkeypatch, canary_run.run_canaries, lambda bundle, **kw: report)
    assert main([*base, "--canary", "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["canary"]["failures"] == ["leak", "mismatch"]
    assert "PC022" in {f["rule"] for f in doc["findings"]}


def test_check_canary_sarif_has_one_result_per_failed_probe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.test_reports import OUTPUT_MARK, _canary_doc

    _, base = _base(tmp_path)
    codex = tmp_path / "codex"
    codex.write_text("", encoding="utf-8")
    monkeypatch.setenv("PROFILEC_CODEX_BIN", str(codex))
    doc = _canary_doc(True)

    report = CanaryReport.model_validate(doc, strict=False)
    patch_everywhere(monkeypatch, canary_run.run_canaries, lambda bundle, **kw: report)
    assert main([*base, "--canary", "--format", "sarif"]) == 1
    out = capsys.readouterr().out
    assert OUTPUT_MARK not in out
    results = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "PC022"]
    assert sorted(r["properties"]["mode"] for r in results) == [
        "agent",
        "agent-full-access",
        "read-only",
    ]


def test_foreign_config_without_pins_or_trusted_base_fails_pc024_pc025(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, base = _base(tmp_path)
    toml = _compile(base, "toml", tmp_path / "c.toml")
    assert main([*base, "--config", str(toml)]) == 0  # control: the compiled config is clean
    lines = toml.read_text(encoding="utf-8").split("\n")
    # A config written by hand with yesterday's entries: `:root` = write in full access, no
    # pins or top-level write entries, no read entries on the trusted base.
    kept = [
        x.replace('":root" = "read"', '":root" = "write"')
        for x in lines
        if not (x.startswith('"/') and x.endswith('= "write"'))
        and not x.startswith(('"/etc"', '"/usr"'))
    ]
    toml.write_text("\n".join(kept), encoding="utf-8")
    capsys.readouterr()
    assert main([*base, "--config", str(toml), "--format", "json"]) == 1
    rules = {f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert {"PC024", "PC025"} <= rules, rules


@pytest.mark.parametrize("foreign", ["--config", "--overrides", "--acp-json"])
def test_vouched_mcp_with_a_foreign_config_is_refused_not_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], foreign: str
) -> None:
    # A foreign config is checked as written: the vouched MCP file was taken and never read.
    _, base = _base(tmp_path)
    fmt = {"--config": "toml", "--overrides": "overrides", "--acp-json": "acp-json"}[foreign]
    given = _compile(base, fmt, tmp_path / f"c.{fmt}")
    mcp = tmp_path / "mcp.toml"
    mcp.write_text(
        'schema_version = 2\ncodex = "/usr/bin/codex"\n'
        '[servers.bridge]\ncommand = "/usr/bin/true"\ncwd = "/srv/agentd/mcp"\n'
    )
    mcp.chmod(0o600)
    assert main([*base, foreign, str(given)]) in (0, 1)  # the same run without it is checked
    capsys.readouterr()
    assert main([*base, foreign, str(given), "--vouched-mcp", str(mcp)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "--vouched-mcp" in line and "drop --vouched-mcp" in line
