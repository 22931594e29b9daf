"""CLI habits: `profilec rules`, -q/-v after the command, `check --exit-zero`, `watch --run-as`,
a repeated single-valued option refused, the `[canary]` extra named where canaries are
introduced, and PC051's text about what Codex 0.171.0 loads."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from profilec.check import rules as registry
from profilec.check.rules import all_rules
from profilec.cli import COMMANDS, main
from profilec.errors import UsageError
from profilec.models.check import Rule, RuleCatalogue
from profilec.resources import validator
from profilec.rule_ids import COVERAGE_READABLE, PROJECT_DOC_LINK, TRUSTED_BASE_WRITABLE
from tests.helpers import Layout, make_layout

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
    # The listing is the registry's own `waivable` field (compiler/check/waivers.py refuses
    # exactly these); the reachable and trusted-side rules are among them.
    assert fixed == {r.id for r in all_rules() if not r.waivable}
    assert {COVERAGE_READABLE, TRUSTED_BASE_WRITABLE} <= fixed
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


# -- -q / -v after the command -----------------------------------------------------------------


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    return make_layout(tmp_path_factory.mktemp("habits") / "l", hop_dir=True)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _stripping_session(tmp_path: Path) -> Path:
    """A session config compile strips a key of (a warning on stderr unless -q)."""
    session = tmp_path / "session.json"
    session.write_text('{"model": "m", "sandbox_mode": "danger-full-access"}')
    return session


def test_verbose_works_before_and_after_the_command(
    layout: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["compile", "--roots", str(layout.manifest)]
    code, plain_out, plain_err = _run(capsys, *args)
    assert code == 0 and "profilec: compile: " not in plain_err  # negative control
    before = _run(capsys, "-v", *args)
    after = _run(capsys, *args, "-v")
    middle = _run(capsys, "compile", "--verbose", "--roots", str(layout.manifest))
    for code, out, err in (before, after, middle):
        assert code == 0 and out == plain_out
        assert "profilec: compile: 1 roots" in err, err
    assert after[2] == before[2] == middle[2]


def test_quiet_works_before_and_after_the_command(
    layout: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["compile", "--roots", str(layout.manifest)]
    args += ["--session-config", str(_stripping_session(tmp_path))]
    code, out, err = _run(capsys, *args)
    assert code == 0 and "profilec: warning: " in err  # negative control
    assert _run(capsys, "-q", *args) == (0, out, "")
    assert _run(capsys, *args, "-q") == (0, out, "")
    assert _run(capsys, "compile", "--quiet", *args[1:]) == (0, out, "")
    # The level is the run's: the next run without -q warns again.
    assert _run(capsys, *args) == (0, out, err)


@pytest.mark.parametrize(
    "args",
    [
        ["-q", "compile", "ROOTS", "-v"],
        ["-v", "compile", "ROOTS", "-q"],
        ["compile", "ROOTS", "-q", "-v"],
        ["compile", "-v", "ROOTS", "--quiet"],
    ],
)
def test_quiet_and_verbose_together_are_refused_wherever_given(
    layout: Layout, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    argv = [a for x in args for a in (["--roots", str(layout.manifest)] if x == "ROOTS" else [x])]
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err == "profilec: usage: give -q or -v, not both\n"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_takes_the_level_flags_after_its_name(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, command, "-q", "-h")[0] == 0
    code, out, _ = _run(capsys, command, "--verbose", "-h")
    assert code == 0 and "--quiet" in out and "--verbose" in out
    assert _run(capsys, command, "-x", "-h")[0] == 2  # negative control: an unknown flag


def test_a_value_that_looks_like_a_flag_stays_the_option_value(
    layout: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    """The parser, not an argv rewrite, decides what -v is: here it is --cwd's value."""
    code, _, err = _run(capsys, "check", "--roots", str(layout.manifest), "--cwd", "-v")
    assert code == 2
    assert err == "profilec: usage: --cwd '-v' must be an absolute path\n"


# -- a repeated single-valued option -----------------------------------------------------------


@pytest.mark.parametrize("option", ["--roots", "--codex-home", "--home", "--tmpdir", "--out"])
def test_a_repeated_single_valued_option_is_refused(
    layout: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    values = {
        "--roots": str(layout.manifest),
        "--codex-home": str(layout.codex_home),
        "--home": str(layout.base),
        "--tmpdir": str(tmp_path),
        "--out": str(tmp_path / "out.toml"),
    }
    base = ["compile", *(a for k, v in values.items() for a in (k, v))]
    code, _, err = _run(capsys, *base)
    assert code == 0, err  # negative control: each once
    code, out, err = _run(capsys, *base, option, values[option])
    assert (code, out) == (2, "")
    assert (
        err == f"profilec: usage: {option} given more than once; it takes one value, give it once\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["check", "ROOTS", "--format", "json", "--format", "text"],
        ["check", "ROOTS", "--fail-on", "note", "--fail-on=error"],
        ["watch", "ROOTS", "--interval", "0.1", "--interval", "0.2"],
        ["rules", "--format", "json", "--format=text"],
        ["compile", "--roots=R", "ROOTS"],
    ],
)
def test_every_single_valued_option_is_refused_twice(
    layout: Layout, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    roots = str(layout.manifest)
    argv = [
        a
        for x in args
        for a in (["--roots", roots] if x == "ROOTS" else [x.replace("=R", f"={roots}")])
    ]
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and "given more than once" in err


def test_repeatable_options_and_flags_still_repeat(
    layout: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(layout.workspace)
    args = ["check", "--roots", str(layout.manifest), "--workspace-root", ws]
    code, _, err = _run(capsys, *args, "--workspace-root", ws, "--group", "--group")
    assert code == 0, err
    assert "given more than once" not in err
    assert _run(capsys, "-q", "-q", "rules")[0] == 0


# -- check --exit-zero -------------------------------------------------------------------------


def _flags(lay: Layout) -> list[str]:
    return ["--roots", str(lay.manifest), "--workspace-root", str(lay.workspace),
            "--codex-home", str(lay.codex_home), "--no-project-config"]  # fmt: skip


@pytest.fixture
def fresh(tmp_path: Path) -> Layout:
    return make_layout(tmp_path / "l", hop_dir=True)


def _failing_acp(lay: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """An acp-json launch document whose check fails (its profiles ride on CODEX_CONFIG)."""
    acp = tmp_path / "a.json"
    flags = _flags(lay)[:-1]
    assert main(["compile", *flags, "--format", "acp-json", "--out", str(acp)]) == 0
    capsys.readouterr()
    return acp


def test_exit_zero_reports_the_same_and_exits_0(
    fresh: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["check", *_flags(fresh), "--acp-json", str(_failing_acp(fresh, tmp_path, capsys))]
    code, out, err = _run(capsys, *args, "--format", "json")
    assert code == 1  # negative control: the findings fail the check
    assert json.loads(out)["passed"] is False
    code0, out0, err0 = _run(capsys, *args, "--format", "json", "--exit-zero")
    assert code0 == 0
    assert out0 == out  # the same report
    # The same notes (which project config was used, then the count), the count marked.
    first, count = err.split("\n")[:2]
    assert err0 == f"{first}\n{count} (--exit-zero: exit 0)\n"
    assert err0.startswith("profilec: check: ") and err0.count("\n") == 2
    # The text report still says FAIL.
    code_text, text, _ = _run(capsys, *args, "--exit-zero")
    assert code_text == 0 and "FAIL" in text


def test_exit_zero_keeps_usage_input_and_drift_codes(
    fresh: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = _flags(fresh)
    code, _, err = _run(capsys, "check", *flags, "--fail-on", "fatal", "--exit-zero")
    assert (code, err.count("\n")) == (2, 1) and err.startswith("profilec: usage: ")
    missing = ["--roots", str(tmp_path / "absent.toml")]
    code, _, err = _run(capsys, "check", *missing, "--exit-zero")
    assert code == 2 and err.startswith("profilec: ") and err.count("\n") == 1
    # A lock the recompile differs from is drift (exit 9), not a finding --exit-zero forgives.
    lock = tmp_path / "profilec.lock"
    assert main(["lock", *flags[:-1], "--out", str(lock)]) == 0
    (fresh.base / "host2").mkdir()
    (fresh.base / "host2" / "auth.json").write_text("{}\n", encoding="utf-8")
    (fresh.base / "hostlink").unlink()
    (fresh.base / "hostlink").symlink_to("host2")
    capsys.readouterr()
    assert _run(capsys, "check", *flags, "--lock", str(lock), "--exit-zero")[0] == 9


def test_exit_zero_also_forgives_a_canary_mismatch(
    fresh: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from profilec.commands.check import CheckRequest, _outcome, run

    acp = _failing_acp(fresh, tmp_path, capsys)
    request = CheckRequest(
        roots=fresh.manifest,
        workspace_roots=(str(fresh.workspace),),
        codex_home=str(fresh.codex_home),
        no_project_config=True,
        acp_json=acp,
    )
    report = run(request).report
    assert report is not None and not report.passed
    failing = report.model_copy(update={"findings": report.findings[:1]})
    mismatch = _outcome(request, failing, "t", mismatch_only=True, used="no project config")
    assert mismatch.error is not None and mismatch.error.exit_code == 8  # negative control
    forgiven = _outcome(
        dataclasses.replace(request, exit_zero=True), failing, "t", True, "no project config"
    )
    assert (forgiven.error, forgiven.exit_code, forgiven.text) == (None, 0, "t")


# -- watch --run-as ----------------------------------------------------------------------------


def test_watch_takes_run_as_and_compiles_for_that_uid(
    layout: Layout, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import profilec.commands.watch as watch_run

    seen: list[int | None] = []

    def compile_step(inputs: Any) -> Any:
        seen.append(inputs.flags.run_as)
        raise UsageError("stopped by the test")

    monkeypatch.setattr(watch_run, "compile_step", compile_step)
    args = ["watch", "--roots", str(layout.manifest)]
    # watch installs SIGTERM/SIGINT handlers before it compiles: pytest gets its own back.
    handlers = {n: signal.getsignal(n) for n in (signal.SIGTERM, signal.SIGINT)}
    try:
        assert _run(capsys, *args)[2] == "profilec: usage: stopped by the test\n"
        stopped = _run(capsys, *args, "--run-as", "65534")[2]
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert stopped == "profilec: usage: stopped by the test\n"
    assert seen == [None, 65534]  # the first run is the negative control
    code, _, err = _run(capsys, *args, "--run-as", "nobody")
    assert code == 2 and "--run-as" in err and err.count("\n") == 1


def test_watch_run_as_is_refused_beside_a_lock(
    layout: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "profilec.lock"
    assert main(["lock", "--roots", str(layout.manifest), "--out", str(lock)]) == 0
    capsys.readouterr()
    code, _, err = _run(capsys, "watch", "--lock", str(lock), "--run-as", "65534")
    assert (code, err) == (
        2,
        "profilec: usage: --lock carries its own inputs; drop the compile flags\n",
    )


def test_the_launch_documents_watch_argv_carries_run_as(
    layout: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["compile", "--roots", str(layout.manifest), "--format", "launch"]
    if os.geteuid() == 0:  # root names the uid Codex runs as: refused without it
        code, _, err = _run(capsys, *base)
        assert code == 2 and "compiled as root needs --run-as UID" in err
    else:
        plain = json.loads(_run(capsys, *base)[1])["watch"]["argv"]
        assert "--run-as" not in plain  # negative control
    argv = json.loads(_run(capsys, *base, "--run-as", "65534")[1])["watch"]["argv"]
    assert argv[-2:] == ["--run-as", "65534"]
    if os.geteuid() != 0:
        assert argv[:-2] == plain
    # watch parses it as written (only the deliberately bad interval is refused).
    code, _, err = _run(capsys, *argv[argv.index("watch") :], "--interval", "9")
    assert code == 2 and "--interval must be between" in err


# -- the [canary] extra named where canaries are introduced ------------------------------------


def _canary_extra() -> str:
    """The optional-dependencies group that installs the Docker SDK the canaries use."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    named = [k for k, deps in extras.items() if k != "dev" and any("docker" in d for d in deps)]
    assert len(named) == 1, extras
    return str(named[0])


def _paragraph(text: str, anchor: str) -> str:
    """The blank-line-separated paragraph of `text` that holds `anchor` (split on LF only)."""
    found = [p for p in text.split("\n\n") if anchor in p]
    assert len(found) == 1, (anchor, len(found))
    return found[0]


#: Where canaries are introduced to someone installing profilec: (file, a phrase of the paragraph).
CANARY_INTROS = (
    ("README.md", "the canaries (`check --canary`, `canary`) refuse to"),
    ("docs/check.md", "`--canary` also runs `profilec.canary.run.run_canaries"),
    ("canaries/README.md", "This directory holds the canary image"),
)


@pytest.mark.parametrize(("name", "anchor"), CANARY_INTROS)
def test_the_canary_extra_is_named_where_canaries_are_introduced(name: str, anchor: str) -> None:
    extra = _canary_extra()
    assert extra == "canary"
    text = (REPO / name).read_text(encoding="utf-8")
    assert f"pip install 'profilec[{extra}]'" in _paragraph(text, anchor)
    # Negative control: the same paragraph without the install line does not pass.
    stripped = text.replace(f"'profilec[{extra}]'", "profilec")
    assert f"'profilec[{extra}]'" not in _paragraph(stripped, anchor)


def test_the_missing_sdk_error_names_the_same_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from profilec.canary.engine import docker_client
    from profilec.errors import EnvironmentMissingError

    monkeypatch.setitem(sys.modules, "docker", None)  # `import docker` raises ImportError
    with pytest.raises(EnvironmentMissingError) as caught:
        docker_client()
    assert caught.value.exit_code == 7
    assert caught.value.one_line().endswith(f"(pip install 'profilec[{_canary_extra()}]')")


# -- PC051 says what Codex 0.171.0 loads -------------------------------------------------------

OLD_PC051_WHY_END = "untrusted `projects` entry; with it 0.171.0 loads no project doc"


def _unscoped_claims(text: str) -> list[str]:
    """Each 'loads no project doc' not scoped to the workspace root itself ('... doc there')."""
    out = []
    for m in re.finditer(r"loads no project doc(?:s)?(\s+at all|\b(?! there))", text):
        out.append(text[max(0, m.start() - 60) : m.end() + 20])
    return out


def test_pc051_says_a_subdirectory_cwd_still_loads_its_agents_md() -> None:
    r = registry.rule_by_id(PROJECT_DOC_LINK)
    assert "a subdirectory cwd loads its own AGENTS.md" in r.message
    assert "Measured on 0.171.0 with the cwd at the workspace root" in r.why
    assert "still loads that subdirectory's AGENTS.md" in r.why
    assert _unscoped_claims(r.message + r.why) == []
    # Negative control: the old text made the unscoped claim.
    assert _unscoped_claims(OLD_PC051_WHY_END) != []


@pytest.mark.parametrize(
    "name", ["docs/check.md", "docs/watch.md", "compiler/projectdocs.py", "README.md"]
)
def test_no_doc_says_an_untrusted_root_loads_no_project_doc_anywhere(name: str) -> None:
    text = (REPO / name).read_text(encoding="utf-8").replace("\n", " ")
    assert _unscoped_claims(re.sub(r"\s+", " ", text)) == []
