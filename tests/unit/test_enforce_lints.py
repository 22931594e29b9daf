"""PC030-PC039, PC055: each enforcement lint fires on its minimized case (lstat only)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from profilec.check.build import from_bundle
from profilec.check.check_inputs import CheckInputs
from profilec.check.checker import run_check
from profilec.check.configstack import ConfigStack
from profilec.models.check import CheckReport
from profilec.models.compiled import CompiledBundle
from tests.helpers import Layout
from tests.unit.test_lints import AGENT, _bundle, _cfg, _run, _toml


def _cwd_link(lay: Layout, b: CompiledBundle) -> CheckReport:
    link = lay.base / "wslink"
    link.symlink_to(lay.workspace)
    base = from_bundle(b, b.mode_profiles)
    inp = CheckInputs(
        stack=ConfigStack((_toml(_cfg(b)),)),
        mode_map=b.mode_profiles,
        roots=base.roots,
        workspace_roots=(str(link),),
        codex_home=base.codex_home,
    )
    return run_check(inp)


def _write_on_file(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][str(lay.control)] = "write"
    return _run(b, [_toml(cfg)])


def _deny_in_denied(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][str(lay.workspace)] = "deny"
    cfg["permissions"][AGENT]["filesystem"][str(lay.control)] = "deny"
    return _run(b, [_toml(cfg)])


def _read_link(lay: Layout, b: CompiledBundle) -> CheckReport:
    (lay.workspace / "dl").symlink_to(lay.base / "host")
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][str(lay.workspace / "dl")] = "read"
    return _run(b, [_toml(cfg)])


def _missing_nested(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    fs = cfg["permissions"][AGENT]["filesystem"]
    fs[str(lay.workspace / "m1" / "a")] = "read"
    fs[str(lay.workspace / "m1" / "b")] = "deny"
    return _run(b, [_toml(cfg)])


def _home_in_tmp(lay: Layout, b: CompiledBundle) -> CheckReport:
    base = from_bundle(b, b.mode_profiles)
    inp = CheckInputs(
        stack=ConfigStack((_toml(_cfg(b)),)),
        mode_map=b.mode_profiles,
        roots=base.roots,
        workspace_roots=base.workspace_roots,
        codex_home=base.codex_home,
        tmpdir=str(lay.base),
    )
    return run_check(inp)


def _minimal_deny(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][":minimal"] = "deny"
    return _run(b, [_toml(cfg)])


def _key_is_link(lay: Layout, b: CompiledBundle) -> CheckReport:
    # read-only mode: no writable root holds the link (else it is PC033's crossing)
    (lay.base / "ctl").symlink_to(lay.control)
    cfg = _cfg(b)
    ro = b.mode_profiles["read-only"]
    cfg["permissions"][ro]["filesystem"][str(lay.base / "ctl")] = "deny"
    return _run(b, [_toml(cfg)])


def _bad_glob(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][f"{lay.base}/*}}"] = "deny"
    return _run(b, [_toml(cfg)])


def _cwd_link_denied(lay: Layout, b: CompiledBundle) -> CheckReport:
    link = lay.base / "vaultcwd"
    link.symlink_to(lay.host_target.parent)
    base = from_bundle(b, b.mode_profiles)
    cfg = _cfg(b)
    ro = b.mode_profiles["read-only"]  # the cwd is no writable root there
    cfg["permissions"][ro]["filesystem"][str(lay.host_target.parent)] = "deny"
    inp = CheckInputs(
        stack=ConfigStack((_toml(cfg),)),
        mode_map=b.mode_profiles,
        roots=base.roots,
        workspace_roots=base.workspace_roots,
        codex_home=base.codex_home,
        cwd=str(link),
    )
    return run_check(inp)


def _scoped_pattern_key(lay: Layout, b: CompiledBundle) -> CheckReport:
    cfg = _cfg(b)
    cfg["permissions"][AGENT]["filesystem"][f"{lay.base}/x*y"] = {"*.pem": "deny"}
    return _run(b, [_toml(cfg)])


ENFORCE_FIRING: list[tuple[str, Callable[[Layout, CompiledBundle], CheckReport]]] = [
    ("PC030", _cwd_link),
    ("PC031", _write_on_file),
    ("PC032", _deny_in_denied),
    ("PC033", _read_link),
    ("PC034", _missing_nested),
    ("PC035", _home_in_tmp),
    ("PC036", _minimal_deny),
    ("PC037", _key_is_link),
    ("PC038", _bad_glob),
    ("PC039", _cwd_link_denied),
    ("PC055", _scoped_pattern_key),
]


@pytest.mark.parametrize(
    ("rule", "case"), ENFORCE_FIRING, ids=[f"{r}-{c.__name__}" for r, c in ENFORCE_FIRING]
)
def test_enforcement_rule_fires(
    tmp_path: Path, rule: str, case: Callable[..., CheckReport]
) -> None:
    lay, bundle = _bundle(tmp_path)
    report = case(lay, bundle)
    hits = [f for f in report.findings if f.rule == rule]
    assert hits, [f.rule for f in report.findings]
    assert all(f.severity == report.rule(rule).severity for f in hits)


@pytest.mark.parametrize("extends", [":read-only", ":workspace"], ids=["compiled", "control"])
def test_symlinked_cwd_makes_the_proof_count_the_deny_as_not_enforced(
    tmp_path: Path, extends: str
) -> None:
    """check must not PASS when the cwd is a link to the dir that holds the credential.

    Under :workspace (the control: profilec's agent modes before they extended :read-only) the
    cwd is a writable root, the sandbox drops the vault's deny and the cells say so; profilec's
    modes name their writable roots explicitly, so the cwd is none and the deny holds."""
    lay, bundle = _bundle(tmp_path)
    # the credential's holder made the session cwd through a link
    link = lay.base / "hostcwd"
    link.symlink_to(lay.host_target.parent)
    base = from_bundle(bundle, bundle.mode_profiles)
    cfg = _cfg(bundle)
    writing = {"agent", "agent-full-access"}
    for mode in writing:
        cfg["permissions"][bundle.mode_profiles[mode]]["extends"] = extends
    inp = CheckInputs(
        stack=ConfigStack((_toml(cfg),)),
        mode_map=bundle.mode_profiles,
        roots=base.roots,
        workspace_roots=(str(link),),
        codex_home=base.codex_home,
    )
    report = run_check(inp)
    assert not report.passed
    cells = [c for c in report.cells if c.spelling == str(lay.host_target)]
    assert {c.mode for c in cells} == {"read-only", *writing}
    lost = [c for c in cells if c.access != "deny"]
    if extends == ":workspace":
        assert {c.mode for c in lost} == writing
        assert all("not enforced" in (c.winner or "") for c in lost)
    else:
        assert lost == []


def _foreign_check(b: CompiledBundle, cfg: dict[str, object]) -> CheckReport:
    base = from_bundle(b, b.mode_profiles)
    inp = CheckInputs(
        stack=ConfigStack((_toml(cfg),)),
        mode_map=b.mode_profiles,
        roots=base.roots,
        workspace_roots=base.workspace_roots,
        codex_home=base.codex_home,
    )
    return run_check(inp)


def test_a_glob_deny_on_the_credential_directory_is_not_counted(tmp_path: Path) -> None:
    """Minimized looser class: a glob that matches the holder directory hides nothing."""
    lay, b = _bundle(tmp_path)
    cfg = _cfg(b)
    holder = str(lay.host_target.parent)
    for prof in cfg["permissions"].values():
        fs = prof.get("filesystem", {})
        for key in [k for k, v in fs.items() if v == "deny"]:
            del fs[key]
        fs[holder[:-1] + "?"] = "deny"  # `/.../hos?` matches the directory `host`
    report = _foreign_check(b, cfg)
    assert not report.passed
    bad = [c for c in report.cells if c.spelling == str(lay.host_target)]
    assert bad and all(c.access != "deny" for c in bad)
    # the same glob on the file itself is enforced (an existing non-directory)
    for prof in cfg["permissions"].values():
        fs = prof.get("filesystem", {})
        del fs[holder[:-1] + "?"]
        fs[str(lay.host_target)[:-1] + "?"] = "deny"
    report = _foreign_check(b, cfg)
    cells = [c for c in report.cells if c.spelling == str(lay.host_target)]
    assert cells and all(c.access == "deny" for c in cells)
