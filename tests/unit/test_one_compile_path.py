"""One compile path: every command that takes `--plan-layout` compiles through
`compiled.compile_step`, so `check --plan-layout L` judges the bundle `compile --format bundle
--plan-layout L` writes, and a missing layout file is one input error (exit 2) everywhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from profilec.bundle.load import bundle_from_document
from profilec.check.checker import Checker
from profilec.models.compiled import CompiledBundle
from tests.audit_helpers import plan_layout, run, setup


def _judged(monkeypatch: pytest.MonkeyPatch) -> list[CompiledBundle | None]:
    """The bundles `check` hands its checker, in order."""
    seen: list[CompiledBundle | None] = []
    real = Checker.run

    def spy(self: Checker, bundle: CompiledBundle | None = None, canary: Any = None) -> Any:
        seen.append(bundle)
        return real(self, bundle, canary)

    monkeypatch.setattr(Checker, "run", spy)
    return seen


def test_check_judges_the_bundle_compile_writes_under_the_same_plan_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lay, flags = setup(tmp_path / "l")
    layout = plan_layout(lay)
    rc, out, err = run(
        capsys, "compile", *flags, "--plan-layout", str(layout), "--format", "bundle"
    )
    assert rc == 0, err
    written = bundle_from_document(json.loads(out), "compile")
    seen = _judged(monkeypatch)
    rc, out, err = run(
        capsys, "check", *flags, "--plan-layout", str(layout), "--format", "json", "--exit-zero"
    )
    assert rc == 0, err
    assert seen == [written]
    # The launch context check reports is the plan's too (HOME and TMPDIR of the session).
    report = json.loads(out)
    context = [line for line in report["inputs"] if line.startswith("launch context:")]
    assert context and f"HOME {written.layout.home};" in context[0]
    assert f"TMPDIR {written.layout.tmpdir}" in context[0]
    # Control: the same check without the plan layout (its TMPDIR given, so it compiles) judges
    # another bundle: the plan's HOME is what the two differ by.
    assert written.layout.tmpdir is not None
    rc, _, err = run(capsys, "check", *flags, "--tmpdir", written.layout.tmpdir, "--exit-zero")
    assert rc == 0, err
    assert seen[1] is not None and seen[1] != written
    assert seen[1].layout.home != written.layout.home


@pytest.mark.parametrize(
    "command",
    [
        ["compile", "--format", "bundle"],
        ["compile", "--format", "launch", "--run-as", "65534"],
        ["check"],
        ["requirements", "verify"],
        ["watch"],
        ["lock", "--out", "-"],
        ["audit"],
        ["explain", "--mode", "agent", "/etc"],
    ],
    ids=lambda c: "-".join(c[:2]),
)
def test_a_missing_plan_layout_is_one_input_error_naming_the_file_and_the_fix(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    missing = tmp_path / "no-layout.toml"
    rc, out, err = run(capsys, *command, *flags, "--plan-layout", str(missing))
    assert rc == 2 and out == ""
    assert err == (
        f"profilec: input: --plan-layout {missing}: the plan layout file does not exist (pass "
        "the daemon's plan layout (the file `profilec plan --layout` reads), or drop "
        "--plan-layout)\n"
    )


def test_requirements_takes_the_plan_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    layout = plan_layout(lay)
    target = tmp_path / "requirements.toml"
    args = ["requirements", "install", *flags, "--plan-layout", str(layout)]
    rc, _, err = run(capsys, *args, "--path", str(target))
    assert rc == 0, err
    assert "installed" in err and target.is_file()


@pytest.mark.parametrize(
    ("command", "instead"),
    [
        (["check", "--overrides", "{ovr}"], "--config/--overrides/--acp-json"),
        (["explain", "--mode", "agent", "/etc", "--bundle", "{ovr}"], "--bundle"),
        (["audit", "--bundle", "{ovr}"], "--bundle"),
    ],
    ids=["check-overrides", "explain-bundle", "audit-bundle"],
)
def test_a_run_that_compiles_nothing_refuses_the_plan_layout_instead_of_dropping_it(
    command: list[str], instead: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    layout = plan_layout(lay)
    ovr = tmp_path / "overrides.txt"
    ovr.write_text('default_permissions="x"\n', encoding="utf-8")
    argv = [a.replace("{ovr}", str(ovr)) for a in command]
    rc, _, err = run(capsys, *argv, *flags, "--plan-layout", str(layout))
    assert rc == 2
    assert err.startswith(f"profilec: usage: --plan-layout {layout} goes with a compile, not ")
    assert f"(drop --plan-layout: {instead} is read as it is, not compiled)\n" in err
