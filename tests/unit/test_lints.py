"""Each lint fires on the footgun it names and stays quiet on the shipped policy."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from profilec.api import load_and_compile
from profilec.check.build import from_bundle
from profilec.check.check_inputs import CheckInputs
from profilec.check.checker import run_check
from profilec.check.configstack import ConfigStack, Layer, parse_override_lines
from profilec.check.lints.launcher import argv_findings, launcher_findings, parse_launch_requests
from profilec.check.rules import all_rules
from profilec.codex.vocabulary import in_range
from profilec.emit.overrides import render_overrides
from profilec.errors import UnsafeRootError
from profilec.models.check import CheckReport
from profilec.models.compiled import CompiledBundle
from tests.helpers import Layout, make_layout

RULES = all_rules()
AGENT = "profilec-agent"


def _bundle(tmp_path: Path) -> tuple[Layout, CompiledBundle]:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    return lay, bundle


def _cfg(bundle: CompiledBundle) -> dict[str, Any]:
    return parse_override_lines(render_overrides(bundle), where="test")


def _run(
    bundle: CompiledBundle,
    layers: list[Layer],
    *,
    modes: dict[str, str] | None = None,
    session_raw: dict[str, Any] | None = None,
    version: str = "0.171.0",
) -> CheckReport:
    base = from_bundle(bundle, bundle.mode_profiles)
    inp = CheckInputs(
        stack=ConfigStack(tuple(layers)),
        mode_map=bundle.mode_profiles if modes is None else modes,
        roots=base.roots,
        workspace_roots=base.workspace_roots,
        codex_home=base.codex_home,
        codex_home_holders=base.codex_home_holders,
        session_raw=session_raw,
        parent=base.parent,
    )
    return run_check(inp, codex_version=version)


def _toml(cfg: dict[str, Any], text: str | None = None) -> Layer:
    return Layer("config.toml", "config-toml", cfg, "/cfg/config.toml", text)


Case = Callable[[Layout, CompiledBundle], CheckReport]


def _legacy_sandbox(lay: Layout, b: CompiledBundle) -> CheckReport:
    return _run(b, [_toml(_cfg(b)), Layer("-c", "cli-override", {"sandbox_mode": "read-only"})])


def _legacy_none(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][str(lay.host_target)] = "none"
    return _run(b, [_toml(cfg)])


def _danger(lay: Layout, b: CompiledBundle) -> CheckReport:
    return _run(b, [_toml(_cfg(b))], modes=dict(b.mode_profiles, agent=":danger-full-access"))


def _danger_extends(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"]["x"] = {"extends": ":danger-full-access"}
    return _run(b, [_toml(cfg)])


def _deny_link(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][str(lay.link)] = "deny"
    return _run(b, [_toml(cfg)])


def _unknown_key(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesytem"] = {}
    return _run(b, [_toml(cfg)])


def _unknown_special(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][":cwd"] = "write"
    return _run(b, [_toml(cfg)])


def _missing_deny(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][str(lay.base / "host" / "autj.json")] = "deny"
    return _run(b, [_toml(cfg)])


def _glob(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][":workspace_roots"] = {"**/*.env": "deny"}
    return _run(b, [_toml(cfg)])


def _no_default(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    del cfg["default_permissions"]
    return _run(b, [_toml(cfg)])


def _home_denied(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][str(lay.codex_home)] = "deny"
    return _run(b, [_toml(cfg)])


def _hardlink(lay: Layout, b: CompiledBundle) -> CheckReport:
    # compile now refuses a hard-linked target (exit 5); a bundle built elsewhere (an older
    # profilec, a daemon's own resolution) can still carry one, and the lint reports it.
    os.link(lay.host_target, lay.base / "hard.json")
    with pytest.raises(UnsafeRootError, match="hard links"):
        load_and_compile(
            str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
        )
    roots = tuple(r.model_copy(update={"nlink": 2}) for r in b.roots)
    b2 = b.model_copy(update={"roots": roots})
    return _run(b2, [_toml(_cfg(b2))])


def _session_keys(lay: Layout, b: CompiledBundle) -> CheckReport:
    raw = {"model": "o3", "profiles": {"x": {"sandbox_mode": "danger-full-access"}}}
    return _run(b, [_toml(_cfg(b))], session_raw=raw)


def _unmapped(lay: Layout, b: CompiledBundle) -> CheckReport:
    modes = {k: v for k, v in b.mode_profiles.items() if k != "read-only"}
    return _run(b, [_toml(_cfg(b))], modes=modes)


def _undefined(lay: Layout, b: CompiledBundle) -> CheckReport:
    return _run(b, [_toml(_cfg(b))], modes=dict(b.mode_profiles, agent="nope"))


def _holder_writable(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    fs = cfg["permissions"][AGENT]["filesystem"]
    for holder in (lay.codex_home, lay.base, lay.host_target.parent):
        fs.pop(str(holder))
    return _run(b, [_toml(cfg)])


def _rejected(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["extends"] = "missing-parent"
    return _run(b, [_toml(cfg)])


def _unlisted(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"]["profilec-read-only"] = {"filesystem": {str(lay.workspace): "read"}}
    return _run(b, [_toml(cfg)])


def _crosses_writable_link(lay: Layout, b: CompiledBundle) -> CheckReport:
    (lay.workspace / "hostdir").symlink_to(lay.host_target.parent)
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][str(lay.workspace / "hostdir" / "auth.json")] = "deny"
    return _run(b, [_toml(cfg)])


def _session_only(lay: Layout, b: CompiledBundle) -> CheckReport:
    return _run(b, [Layer("acp-json", "session", _cfg(b), "/cfg/acp.json")])


def _old_codex(lay: Layout, b: CompiledBundle) -> CheckReport:
    return _run(b, [_toml(_cfg(b))], version="0.112.0")


def _no_extends_codex(lay: Layout, b: CompiledBundle) -> CheckReport:
    return _run(b, [_toml(_cfg(b))], version="0.132.0")


def _nested_table(lay: Layout, b: CompiledBundle) -> CheckReport:
    # the footgun needs a profile under extends = ":workspace" (profilec's agent extends
    # :read-only): a hand-written one
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["extends"] = ":workspace"
    text = (
        f'[permissions.{AGENT}]\nextends = ":workspace"\n'
        f'[permissions.{AGENT}.filesystem.":workspace_roots"]\n"." = "write"\n'
    )
    return _run(b, [_toml(cfg, text)], version="0.148.0-alpha.9")


def _legacy_request(lay: Layout, b: CompiledBundle) -> CheckReport:
    line = '{"method":"turn/start","params":{"sandboxPolicy":{"type":"workspaceWrite"}}}\n'
    found = launcher_findings(parse_launch_requests(line, where="requests.jsonl"))
    return run_check(from_bundle(b, b.mode_profiles), extra=found)


def _listener(lay: Layout, b: CompiledBundle) -> CheckReport:
    argv = ["codex", "app-server", "--listen", "ws://127.0.0.1:4500"]
    return run_check(from_bundle(b, b.mode_profiles), extra=argv_findings([("argv", argv)]))


def _argv_secret(lay: Layout, b: CompiledBundle) -> CheckReport:
    argv = ["codex", "app-server", "-c", 'mcp_servers.x.env.API_TOKEN="s3cret"']
    return run_check(from_bundle(b, b.mode_profiles), extra=argv_findings([("argv", argv)]))


def _parent_git_on(lay: Layout, b: CompiledBundle) -> CheckReport:
    from profilec.check.lints.launcher import env_findings

    env = {"PATH": "/usr/bin:/bin", "CODEX_HOME": str(lay.codex_home)}
    return run_check(from_bundle(b, b.mode_profiles), extra=env_findings([("env", env)]))


def _lock_in_workspace(lay: Layout, b: CompiledBundle) -> CheckReport:
    from profilec.check.lints.parent import lock_findings

    found = lock_findings(b, str(lay.workspace / "profilec.lock"))
    assert lock_findings(b, str(lay.manifest)) == []  # the control: beside the manifest
    return run_check(from_bundle(b, b.mode_profiles), extra=found)


def _workspace_config(lay: Layout, b: CompiledBundle) -> CheckReport:
    (lay.workspace / ".codex").mkdir()
    (lay.workspace / ".codex" / "config.toml").write_text(
        f'notify = ["/bin/sh"]\n[permissions.{AGENT}.filesystem]\n"{lay.link}" = "read"\n'
    )
    return _run(b, [_toml(_cfg(b))])


def _workspace_config_link(lay: Layout, b: CompiledBundle) -> CheckReport:
    """A symlinked project config is not followed (it could name the credential)."""
    (lay.workspace / ".codex").mkdir()
    (lay.workspace / ".codex" / "config.toml").symlink_to(lay.link)
    return _run(b, [_toml(_cfg(b))])


def _session_reaching(lay: Layout, b: CompiledBundle) -> CheckReport:
    raw = {"model": "o3", "notify": ["/bin/true"]}
    session = Layer("session config", "session", raw, "/s.json", None)
    return _run(b, [_toml(_cfg(b)), session], session_raw=raw)


def _session_stripped(lay: Layout, b: CompiledBundle) -> CheckReport:
    raw = {"model": "o3", "chatgpt_base_url": "http://127.0.0.1:9/"}
    return _run(b, [_toml(_cfg(b))], session_raw=raw)


def _session_wrong_type_stripped(lay: Layout, b: CompiledBundle) -> CheckReport:
    return _run(b, [_toml(_cfg(b))], session_raw={"model": 5})


def _session_wrong_type_reaching(lay: Layout, b: CompiledBundle) -> CheckReport:
    raw = {"model": 5}
    session = Layer("session config", "session", raw, "/s.json", None)
    return _run(b, [_toml(_cfg(b)), session], session_raw=raw)


def test_an_allowed_key_of_the_wrong_type_is_a_finding_said_as_such(tmp_path: Path) -> None:
    lay, bundle = _bundle(tmp_path)
    why = "key 'model' is allowed but must be a string, got integer (wrong-type)"
    stripped = [
        (f.rule, f.message)
        for f in _session_wrong_type_stripped(lay, bundle).findings
        if f.rule in ("PC042", "PC045")
    ]
    assert stripped == [("PC045", f"session config asked for {why}; stripped")]
    reaching = [
        (f.rule, f.message)
        for f in _session_wrong_type_reaching(lay, bundle).findings
        if f.rule in ("PC042", "PC045")
    ]
    assert reaching == [("PC042", f"session config sets {why}")]
    dotted = _run(bundle, [_toml(_cfg(bundle))], session_raw={"model.x": "o3", "model": "o3"})
    assert [(f.rule, f.path) for f in dotted.findings if f.rule == "PC045"] == [
        ("PC045", "model.x")
    ]


def _trusted_subdir(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["projects"] = {str(lay.workspace / "sub"): {"trust_level": "trusted"}}
    return _run(b, [_toml(cfg)])


def _apps_on(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["features"] = {"apps": True}
    return _run(b, [_toml(cfg)])


def _snapshot_on(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["features"] = {**cfg["features"], "shell_snapshot": True}
    return _run(b, [_toml(cfg)])


def _env_unfiltered(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["shell_environment_policy"] = {"ignore_default_excludes": False, "exclude": ["FOO"]}
    return _run(b, [_toml(cfg)])


def _dotenv(lay: Layout, b: CompiledBundle) -> CheckReport:
    (lay.codex_home / ".env").write_text("GIT_CONFIG_GLOBAL=/x\n")
    return _run(b, [_toml(_cfg(b))])


def _doc_link(lay: Layout, b: CompiledBundle) -> CheckReport:
    (lay.workspace / "AGENTS.md").symlink_to(lay.link)  # through CODEX_HOME into the vault
    return _run(b, [_toml(_cfg(b))])


@pytest.mark.parametrize("name", ["AGENTS.md", "AGENTS.override.md"])
def test_a_planted_project_doc_link_is_named_and_a_harmless_one_is_not(
    tmp_path: Path, name: str
) -> None:
    lay, bundle = _bundle(tmp_path)
    harmless = lay.workspace / "AGENTS.md"
    harmless.symlink_to(lay.control)  # a link, but into the workspace: quiet
    assert [f for f in _run(bundle, [_toml(_cfg(bundle))]).findings if f.rule == "PC051"] == []
    harmless.unlink()
    doc = lay.workspace / name
    doc.symlink_to(os.path.relpath(lay.host_target, lay.workspace))
    hits = [f for f in _run(bundle, [_toml(_cfg(bundle))]).findings if f.rule == "PC051"]
    assert [(f.path, f.severity) for f in hits] == [(str(doc), "warning")]
    assert hits[0].message.startswith(f"{doc} is a symlink -> ")
    assert f"(reaches {os.path.realpath(lay.host_target)})" in hits[0].message


def _strip(b: CompiledBundle, reason: str) -> CompiledBundle:
    profiles = tuple(
        p.model_copy(
            update={
                "entries": tuple(
                    e for e in p.entries if all(x.reason != reason for x in e.provenance)
                )
            }
        )
        for p in b.profiles
    )
    return b.model_copy(update={"profiles": profiles})


def _ancestor_renamable(lay: Layout, b: CompiledBundle) -> CheckReport:
    # Today's holder-only entries: the layout lies under /tmp, which agent mode writes.
    return run_check(from_bundle(_strip(b, "ancestor"), b.mode_profiles))


def _trusted_writable(lay: Layout, b: CompiledBundle) -> CheckReport:
    # The bundle still names its trusted base, but no profile carries its entries.
    return run_check(from_bundle(_strip(b, "trusted-base"), b.mode_profiles))


FIRING: list[tuple[str, Case]] = [
    ("PC001", _legacy_sandbox),
    ("PC002", _legacy_none),
    ("PC003", _danger),
    ("PC003", _danger_extends),
    ("PC004", _deny_link),
    ("PC005", _unknown_key),
    ("PC006", _unknown_special),
    ("PC007", _missing_deny),
    ("PC008", _glob),
    ("PC009", _no_default),
    ("PC010", _home_denied),
    ("PC011", _hardlink),
    ("PC012", _session_keys),
    ("PC013", _unmapped),
    ("PC013", _undefined),
    ("PC014", _holder_writable),
    ("PC015", _rejected),
    ("PC016", _unlisted),
    ("PC017", _crosses_writable_link),
    ("PC018", _session_only),
    ("PC019", _old_codex),
    ("PC020", _no_extends_codex),
    ("PC021", _nested_table),
    ("PC023", _legacy_request),
    ("PC040", _workspace_config),
    ("PC040", _workspace_config_link),
    ("PC041", _workspace_config),
    ("PC042", _session_reaching),
    ("PC045", _session_stripped),
    ("PC045", _session_wrong_type_stripped),
    ("PC042", _session_wrong_type_reaching),
    ("PC043", _trusted_subdir),
    ("PC044", _apps_on),
    ("PC046", _snapshot_on),
    ("PC046", _env_unfiltered),
    ("PC047", _dotenv),
    ("PC048", _listener),
    ("PC049", _argv_secret),
    ("PC050", _lock_in_workspace),
    ("PC052", _parent_git_on),
    ("PC051", _doc_link),
    ("PC024", _ancestor_renamable),
    ("PC025", _trusted_writable),
]


@pytest.mark.parametrize(("rule", "case"), FIRING, ids=[f"{r}-{c.__name__}" for r, c in FIRING])
def test_rule_fires_on_its_footgun(tmp_path: Path, rule: str, case: Case) -> None:
    lay, bundle = _bundle(tmp_path)
    report = case(lay, bundle)
    hits = [f for f in report.findings if f.rule == rule]
    assert hits, [f.rule for f in report.findings]
    assert all(f.severity == report.rule(rule).severity for f in hits)


@pytest.mark.parametrize("rule", [r.id for r in RULES])
def test_rule_is_quiet_on_the_shipped_policy(tmp_path: Path, rule: str) -> None:
    _, bundle = _bundle(tmp_path)
    report = run_check(from_bundle(bundle, bundle.mode_profiles))
    assert report.passed
    assert [f for f in report.findings if f.rule == rule] == []


def test_every_rule_but_the_canary_has_a_firing_test() -> None:
    from tests.unit.test_enforce_lints import ENFORCE_FIRING

    covered = {r for r, _ in FIRING} | {r for r, _ in ENFORCE_FIRING}
    # PC000: test_coverage, PC022: cli, PC090 (an expired waiver): test_check_triage, PC056
    # and PC057 (managed requirements): test_requirements, PC060-PC062 (the run-as uid's
    # ownership prerequisites): test_check_ownership, PC063 (a profile that writes any cwd):
    # test_cwd_following_write, PC064 (a nested project config): test_nested_project_config,
    # PC070-PC071 (the trusted side's own state outside the sandbox): test_trusted_state,
    # PC091 and PC092 (the launch context): test_messages_name_the_fix.
    others = {"PC000", "PC022", "PC056", "PC057", "PC090", "PC060", "PC061", "PC062", "PC063"}
    others |= {"PC064", "PC070", "PC071", "PC091", "PC092"}
    others |= {"PC065"}  # a link outside the roots: test_projectlayers
    assert covered | others == {r.id for r in RULES}


def test_rules_have_stable_unique_ids_and_one_line_texts() -> None:
    ids = [r.id for r in RULES]
    assert ids == sorted(set(ids))
    for r in RULES:
        for text in (r.message, r.why, r.fix):
            assert text and "\n" not in text


def test_version_ranges_compare_pre_releases_before_releases() -> None:
    assert in_range("0.148.0-alpha.9", ">=0.148.0-alpha.0,<0.149.0")
    assert not in_range("0.171.0", ">=0.148.0-alpha.0,<0.149.0")
    assert in_range("0.132.0", "<0.133.0") and not in_range("0.133.0", "<0.133.0")


def test_symlink_lints_use_lstat_only_and_never_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lay, bundle = _bundle(tmp_path)
    opened: list[str] = []

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and args and isinstance(args[0], str) and str(lay.base) in args[0]:
            opened.append(args[0])

    import sys

    sys.addaudithook(hook)
    _deny_link(lay, bundle)
    _missing_deny(lay, bundle)
    assert [f.rule for f in _doc_link(lay, bundle).findings if f.rule == "PC051"] == ["PC051"]
    assert opened == []
