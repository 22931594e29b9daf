"""Nothing a pull request, a model or a typo controls turns a readable vault into a PASS.

The attacks, each measured against profilec before this change (exit 1 became exit 0 and PASS,
the SARIF result marked suppressed): a project-file waiver of PC000, one scoped to the vault's
path, a baseline that lists the finding, `--ignore PC000`. Each is now refused, exit 2, one line
naming the rule, nothing on stdout. A project config is trust-checked as the roots manifest is
(exit 3). The negative control: a waivable lint is still waived, and the verdict follows it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from profilec.check.rules import all_rules
from profilec.check.waivers import config_waivers, ignore_waivers, load_baseline
from profilec.cli import main
from profilec.errors import UsageError
from profilec.models.check import Waiver
from tests.helpers import Layout, make_layout

#: The rules whose finding means a protected root may be reachable, a secret readable, the
#: trusted side writable or steerable, or a mode's coverage unproven (compiler/check/rules.py).
UNWAIVABLE = {
    "PC000", "PC001", "PC003", "PC009", "PC011", "PC013", "PC014", "PC015", "PC018", "PC019",
    "PC020", "PC022", "PC023", "PC024", "PC025", "PC030", "PC036", "PC040", "PC042", "PC043",
    "PC046", "PC047", "PC048", "PC049", "PC050", "PC052", "PC056", "PC060", "PC061", "PC062",
    "PC063", "PC070", "PC071",
}  # fmt: skip


def _flags(lay: Layout) -> list[str]:
    return [
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]


@pytest.fixture
def attack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Layout, list[str], Path]:
    """A reviewed config (profilec's own) with the vault's deny removed, as a pull request
    would leave it: (layout, check argv, the project directory the run starts in)."""
    lay = make_layout(tmp_path / "l", hop_dir=True)
    cfg = tmp_path / "config.toml"
    assert main(["compile", *_flags(lay), "--format", "toml", "--out", str(cfg)]) == 0
    deny = f'"{lay.host_target.parent}" = "deny"\n'
    text = cfg.read_text(encoding="utf-8")
    assert deny in text
    cfg.write_text(text.replace(deny, ""), encoding="utf-8")
    project = tmp_path / "proj"
    project.mkdir(mode=0o755)
    monkeypatch.chdir(project)
    return lay, ["check", *_flags(lay), "--config", str(cfg)], project


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _refused(rc: int, out: str, err: str, rule: str = "PC000") -> str:
    """Exit 2, nothing on stdout, one line on stderr naming the rule, no traceback."""
    assert rc == 2 and out == "", (rc, err)
    lines = err.split("\n")
    assert len(lines) == 2 and lines[1] == "" and "Traceback" not in err, err
    assert lines[0].startswith("profilec: usage: ") and f"{rule} (" in lines[0], err
    assert "cannot be waived" in lines[0]
    return lines[0]


def test_the_declared_unwaivable_set_is_the_reachable_or_writable_class() -> None:
    assert {r.id for r in all_rules() if not r.waivable} == UNWAIVABLE
    # The catalogue says so row by row (docs/check.md is generated from the registry).
    doc = (Path(__file__).resolve().parents[2] / "docs" / "check.md").read_text(encoding="utf-8")
    for r in all_rules():
        row = next(x for x in doc.split("\n") if x.startswith(f'| <a id="{r.id.lower()}">'))
        assert row.split(" | ")[3] == ("yes" if r.waivable else "**no**"), r.id
    # And the prose that explains why lists the same set.
    para = doc.split("**What cannot be waived.**", 1)[1].split("\n\n", 1)[0]
    listed = para.split("): ", 1)[1].split(". A waiver", 1)[0]
    assert set(re.findall(r"PC\d{3}", listed)) == UNWAIVABLE


def test_no_source_of_waivers_accepts_an_unwaivable_rule(tmp_path: Path) -> None:
    for r in all_rules():
        table = {"waiver": [{"rule": r.id, "reason": "r", "path": "/srv", "mode": "agent"}]}
        if r.waivable:
            assert ignore_waivers([r.id])[0].rule == r.id
            assert config_waivers(table, "p.toml")[0].rule == r.id
            continue
        with pytest.raises(UsageError, match=rf"{r.id} \({r.name}\) cannot be waived"):
            ignore_waivers([r.id])
        with pytest.raises(UsageError, match=rf"^profilec: usage: p.toml: {r.id} "):
            config_waivers(table, "p.toml")
    # A rule id no rule declares waives nothing and is let through as before.
    assert ignore_waivers(["PC999"]) == [
        Waiver(rule="PC999", reason="--ignore on the command line", source="--ignore")
    ]


def test_project_file_waiver_of_pc000_is_refused(
    attack: tuple[Layout, list[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, argv, project = attack
    rc, out, _ = _run(capsys, *argv, "--format", "sarif")
    assert rc == 1 and '"ruleId": "PC000"' in out and "suppressions" not in out
    (project / "profilec.toml").write_text(
        '[[waiver]]\nrule = "PC000"\nreason = "reviewed"\n', encoding="utf-8"
    )
    line = _refused(*_run(capsys, *argv, "--format", "sarif"))
    assert str(project / "profilec.toml") in line
    # The same table in pyproject.toml, and the same file named with --project-config.
    (project / "profilec.toml").rename(project / "waivers.toml")
    (project / "pyproject.toml").write_text(
        '[tool.profilec]\nwaiver = [{rule = "PC000", reason = "reviewed"}]\n', encoding="utf-8"
    )
    _refused(*_run(capsys, *argv))
    _refused(*_run(capsys, *argv, "--project-config", str(project / "waivers.toml")))


def test_path_scoped_waiver_on_the_vault_is_refused(
    attack: tuple[Layout, list[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    lay, argv, project = attack
    vault = lay.host_target.parent
    (project / "profilec.toml").write_text(
        f'[[waiver]]\nrule = "PC000"\nreason = "only the vault"\npath = "{vault}"\n'
        'mode = "agent"\nexpires = 2999-01-01\n',
        encoding="utf-8",
    )
    _refused(*_run(capsys, *argv))


def test_baseline_listing_the_finding_is_refused(
    attack: tuple[Layout, list[str], Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, argv, _ = attack
    rc, out, _ = _run(capsys, *argv, "--format", "json")
    assert rc == 1 and any(f["rule"] == "PC000" for f in json.loads(out)["findings"])
    baseline = tmp_path / "baseline.json"
    baseline.write_text(out, encoding="utf-8")
    line = _refused(*_run(capsys, *argv, "--baseline", str(baseline)))
    assert str(baseline) in line
    # The report's own rule table cannot say otherwise: the registry decides.
    doc = json.loads(out)
    for r in doc["rules"]:
        r["waivable"] = True
    with pytest.raises(UsageError, match="PC000"):
        load_baseline(str(baseline), json.dumps(doc).encode("utf-8"))


def test_ignore_pc000_is_refused(
    attack: tuple[Layout, list[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, argv, _ = attack
    line = _refused(*_run(capsys, *argv, "--ignore", "PC044", "--ignore", "PC000"))
    assert line.startswith("profilec: usage: --ignore: PC000 (coverage-readable)")


@pytest.mark.parametrize("how", ["group-writable", "dir-world-writable", "other-owned"])
def test_untrusted_project_config_is_refused(
    how: str,
    attack: tuple[Layout, list[str], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, argv, project = attack
    cfg = project / "profilec.toml"
    cfg.write_text('[[waiver]]\nrule = "PC044"\nreason = "r"\n', encoding="utf-8")
    cfg.chmod(0o644)
    if how == "group-writable":
        cfg.chmod(0o664)
    elif how == "dir-world-writable":
        project.chmod(0o777)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to give the file to another uid")
        os.chown(cfg, 65534, -1)
    rc, out, err = _run(capsys, *argv)
    assert rc == 3 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"profilec: untrusted: {cfg}") or str(project) in err, err
    assert "--no-project-config" in err
    # A pyproject.toml without [tool.profilec] is no project config: its trust is moot.
    cfg.rename(project / "pyproject.toml")
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    if how == "dir-world-writable":
        project.chmod(0o755)
    rc, _, err = _run(capsys, *argv)
    assert rc == 1 and "project config: none (no profilec.toml" in err.split("\n")[0]


def test_project_config_and_no_project_config_are_exclusive(
    attack: tuple[Layout, list[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, argv, project = attack
    cfg = project / "waivers.toml"
    cfg.write_text("", encoding="utf-8")
    rc, out, err = _run(capsys, *argv, "--project-config", str(cfg), "--no-project-config")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "not both" in err


def test_a_waivable_lint_is_still_waived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The negative control: PC044 (apps left on) fails at --fail-on warning; a trusted
    project-file waiver, --ignore or a baseline turns that into a PASS."""
    lay = make_layout(tmp_path / "l", hop_dir=True)
    cfg = tmp_path / "config.toml"
    assert main(["compile", *_flags(lay), "--format", "toml", "--out", str(cfg)]) == 0
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("\napps = false\n", "\n"))
    project = tmp_path / "proj"
    project.mkdir(mode=0o755)
    monkeypatch.chdir(project)
    argv = ["check", *_flags(lay), "--config", str(cfg), "--fail-on", "warning"]
    rc, out, _ = _run(capsys, *argv, "--format", "json")
    assert rc == 1 and {f["rule"] for f in json.loads(out)["findings"]} == {"PC044"}
    baseline = tmp_path / "baseline.json"
    baseline.write_text(out, encoding="utf-8")
    (project / "profilec.toml").write_text(
        '[[waiver]]\nrule = "PC044"\nreason = "apps are vetted"\n', encoding="utf-8"
    )
    (project / "profilec.toml").chmod(0o644)
    rc, out, err = _run(capsys, *argv)
    assert rc == 0 and "PASS" in out and "1 waived" in out
    assert err == f"profilec: check: project config: {project / 'profilec.toml'} (waivers: 1)\n"
    rc, out, _ = _run(capsys, *argv, "--no-project-config", "--ignore", "PC044")
    assert rc == 0 and "PASS" in out
    rc, out, _ = _run(capsys, *argv, "--no-project-config", "--baseline", str(baseline))
    assert rc == 0 and "PASS" in out
