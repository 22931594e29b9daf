"""The runs below the CLI (compiler/commands/): a frozen request in, an Outcome out.

A run called directly gives what the command prints and the exit code it returns; the CLI
maps parsed options onto the request (lists as tuples, unset options at the field default,
`--out` kept by the CLI); check's foreign-config path and compile resolve roots through the
one pipeline.resolve_layout.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import profilec.pipeline
from profilec.cli import main
from profilec.cli.output import request_of
from profilec.commands import Outcome
from profilec.commands.check import CheckRequest
from profilec.commands.check import run as run_check
from profilec.commands.diff import DiffRequest
from profilec.commands.diff import run as run_diff
from profilec.errors import EXIT_CLEAN, EXIT_FOUND, UsageError
from tests.helpers import Layout, make_layout, patch_everywhere


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return make_layout(tmp_path / "l", hop_dir=True)


def _flags(lay: Layout) -> list[str]:
    return [
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]


def _request(lay: Layout, **extra: Any) -> CheckRequest:
    return CheckRequest(
        roots=lay.manifest,
        workspace_roots=(str(lay.workspace),),
        codex_home=str(lay.codex_home),
        no_project_config=True,
        **extra,
    )


def test_check_run_gives_what_the_cli_prints_and_its_exit_code(
    layout: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["check", *_flags(layout), "--no-project-config", "--format", "json"])
    printed = capsys.readouterr().out
    outcome = run_check(_request(layout, fmt="json"))
    assert (outcome.exit_code, outcome.text) == (rc, printed)
    assert rc == EXIT_CLEAN and outcome.error is None and outcome.report is not None
    assert outcome.report.passed


def test_a_failing_check_says_so_in_its_outcome_not_in_the_cli(
    layout: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["compile", *_flags(layout), "--format", "acp-json", "--out", str(tmp_path / "a.json")])
    outcome = run_check(_request(layout, acp_json=tmp_path / "a.json", fmt="json"))
    assert outcome.exit_code == EXIT_FOUND
    assert outcome.report is not None and not outcome.report.passed
    # Which project config gave waivers (the request says --no-project-config), then the count.
    assert len(outcome.notes) == 2 and all(n.startswith("check: ") for n in outcome.notes)
    assert outcome.notes[0] == "check: project config: none (--no-project-config)"
    assert outcome.notes[1].endswith(" findings at or above error")
    capsys.readouterr()
    cli_rc = main(["check", *_flags(layout), "--no-project-config", "--acp-json",
                   str(tmp_path / "a.json")])  # fmt: skip
    assert cli_rc == EXIT_FOUND
    assert capsys.readouterr().err == "".join(f"profilec: {n}\n" for n in outcome.notes)


def test_a_bad_flag_is_a_usage_error_from_the_run(layout: Layout) -> None:
    with pytest.raises(UsageError, match="--fail-on"):
        run_check(_request(layout, fail_on="fatal"))
    with pytest.raises(UsageError, match="--cwd 'rel' must be an absolute path"):
        run_check(_request(layout, cwd="rel"))


def test_requests_and_outcomes_are_frozen(layout: Layout) -> None:
    request = _request(layout)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.fmt = "sarif"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Outcome(text="x").exit_code = 3  # type: ignore[misc]


def test_request_of_maps_parsed_options_onto_the_request() -> None:
    params: dict[str, Any] = {
        "roots": Path("/r.toml"),
        "workspace_roots": ["/w1", "/w2"],
        "ignore": None,
        "group": False,
        "out": Path("/report.json"),  # the CLI's: no field of the request
    }
    request = request_of(CheckRequest, params)
    assert request.workspace_roots == ("/w1", "/w2")
    assert request.ignore == () and request.fmt == "text"  # unset: the field default
    assert request.group is False
    assert "out" not in {f.name for f in dataclasses.fields(CheckRequest)}


def test_diff_run_exits_found_on_a_widening(
    layout: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.toml"
    main(["compile", *_flags(layout), "--format", "toml", "--out", str(old)])
    new = tmp_path / "new.toml"
    new.write_text(
        old.read_text(encoding="utf-8").replace('= "deny"', '= "read"', 1), encoding="utf-8"
    )
    same = run_diff(DiffRequest(old=old, new=old))
    wider = run_diff(DiffRequest(old=old, new=new))
    assert same.exit_code == EXIT_CLEAN
    assert wider.exit_code == EXIT_FOUND and wider.text is not None and "!" in wider.text
    assert main(["diff", str(old), str(new)]) == EXIT_FOUND
    assert capsys.readouterr().out == wider.text


def test_check_of_a_foreign_config_resolves_roots_as_compile_does(
    layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, ...]] = []
    real = profilec.pipeline.resolve_layout

    def spy(inputs: Any, **kw: Any) -> Any:
        calls.append(inputs.flags.workspace_roots)
        return real(inputs, **kw)

    patch_everywhere(monkeypatch, real, spy)
    toml = tmp_path / "c.toml"
    assert main(["compile", *_flags(layout), "--format", "toml", "--out", str(toml)]) == 0
    assert calls == [(str(layout.workspace),)]
    assert run_check(_request(layout, config=toml)).exit_code == EXIT_CLEAN
    assert calls == [(str(layout.workspace),)] * 2
