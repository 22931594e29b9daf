"""`profilec check`: the coverage proof fails on broken configs, each lint fires and is quiet."""

from __future__ import annotations

import copy
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from compiler.api import load_and_compile
from compiler.checker import bundle_config, check, parse_override_lines
from compiler.cli import main
from compiler.emit.overrides import render_overrides
from compiler.models import CompiledBundle
from compiler.reports import FORMATTERS
from tests.helpers import Layout, make_layout


def _setup(tmp_path: Path) -> tuple[Layout, CompiledBundle]:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    return lay, bundle


def _rules(cfg: dict[str, Any], bundle: CompiledBundle, **kw: Any) -> set[str]:
    res = check(cfg, bundle.mode_profiles, bundle.roots, bundle.layout.workspace_roots, **kw)
    return {f.rule for f in res.findings}


def test_shipped_policy_is_clean(tmp_path: Path) -> None:
    _, bundle = _setup(tmp_path)
    res = check(bundle_config(bundle), bundle.mode_profiles, bundle.roots,
                bundle.layout.workspace_roots,
                codex_home=bundle.codex_home.canonical if bundle.codex_home else None)
    assert res.findings == []
    assert len(res.cells) == 3 * 4  # modes x spellings (link, hop dir, hop spelling, target)
    assert all(c.access == "deny" for c in res.cells)


def test_removed_deny_fails_coverage_in_every_mode(tmp_path: Path) -> None:
    lay, bundle = _setup(tmp_path)
    cfg = bundle_config(bundle)
    for table in cfg["permissions"].values():
        table["filesystem"].pop(str(lay.host_target))
    res = check(cfg, bundle.mode_profiles, bundle.roots, bundle.layout.workspace_roots)
    failing = {(f.mode, f.rule) for f in res.findings}
    assert {("read-only", "PC000"), ("agent", "PC000"), ("agent-full-access", "PC000")} <= failing
    assert res.failed("error")


def test_deny_on_link_instead_of_target_fails_and_lints(tmp_path: Path) -> None:
    lay, bundle = _setup(tmp_path)
    cfg = bundle_config(bundle)
    for table in cfg["permissions"].values():
        table["filesystem"].pop(str(lay.host_target))
        table["filesystem"][str(lay.link)] = "deny"
    assert {"PC000", "PC004"} <= _rules(cfg, bundle)


def test_builtin_profile_for_a_mode_fails(tmp_path: Path) -> None:
    _, bundle = _setup(tmp_path)
    modes = dict(bundle.mode_profiles, agent=":workspace")
    res = check(bundle_config(bundle), modes, bundle.roots, bundle.layout.workspace_roots)
    assert any(f.rule == "PC000" and f.mode == "agent" for f in res.findings)


@pytest.mark.parametrize(
    ("mutate", "rule"),
    [
        (lambda c, lay: c.__setitem__("sandbox_mode", "workspace-write"), "PC001"),
        (lambda c, lay: c["permissions"]["profilec-agent"]["filesystem"].__setitem__(
            "/etc/shadow", "none"), "PC002"),
        (lambda c, lay: c["permissions"]["profilec-agent"].__setitem__(
            "extends", ":danger-full-access"), "PC003"),
        (lambda c, lay: c["permissions"]["profilec-agent"].__setitem__("bogus", 1), "PC005"),
        (lambda c, lay: c["permissions"]["profilec-agent"]["filesystem"].__setitem__(
            ":bogus", "read"), "PC006"),
        (lambda c, lay: c["permissions"]["profilec-agent"]["filesystem"].__setitem__(
            "/nonexistent/profilec/x", "deny"), "PC007"),
        (lambda c, lay: c["permissions"]["profilec-agent"]["filesystem"].__setitem__(
            ":workspace_roots", {"**/*.env": "deny"}), "PC008"),
        (lambda c, lay: c.pop("default_permissions"), "PC009"),
        (lambda c, lay: c["permissions"]["profilec-agent"]["filesystem"].__setitem__(
            str(lay.codex_home), "deny"), "PC010"),
        (lambda c, lay: c["permissions"]["profilec-agent"]["filesystem"].__setitem__(
            str(lay.codex_home), "write"), "PC014"),
    ],
)
def test_each_config_lint_fires(tmp_path: Path, mutate: Any, rule: str) -> None:
    lay, bundle = _setup(tmp_path)
    cfg = copy.deepcopy(bundle_config(bundle))
    assert rule not in _rules(cfg, bundle, codex_home=str(lay.codex_home))  # quiet when shipped
    mutate(cfg, lay)
    assert rule in _rules(cfg, bundle, codex_home=str(lay.codex_home))


def test_hardlink_and_stripped_session_keys_fire(tmp_path: Path) -> None:
    lay, _ = _setup(tmp_path)
    os.link(lay.host_target, tmp_path / "l" / "hard.json")
    bundle = load_and_compile(str(lay.manifest))
    assert "PC011" in _rules(bundle_config(bundle), bundle)
    assert "PC012" in _rules(bundle_config(bundle), bundle, stripped=("sandbox_mode",))


def test_unmapped_mode_fires(tmp_path: Path) -> None:
    _, bundle = _setup(tmp_path)
    modes = {k: v for k, v in bundle.mode_profiles.items() if k != "read-only"}
    res = check(bundle_config(bundle), modes, bundle.roots)
    assert any(f.rule == "PC013" for f in res.findings)


def test_override_lines_parse_like_codex_and_check_clean(tmp_path: Path) -> None:
    _, bundle = _setup(tmp_path)
    cfg = parse_override_lines(render_overrides(bundle), where="x")
    assert cfg == bundle_config(bundle)


def test_cli_exit_codes_and_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lay, _ = _setup(tmp_path)
    base = ["check", "--roots", str(lay.manifest), "--workspace-root", str(lay.workspace),
            "--codex-home", str(lay.codex_home)]
    for fmt in FORMATTERS:
        assert main([*base, "--format", fmt]) == 0
        out = capsys.readouterr().out
        if fmt in ("json", "sarif"):
            json.loads(out)
        if fmt == "junit":
            assert ET.fromstring(out).tag == "testsuite"
    broken = tmp_path / "broken.txt"
    broken.write_text('default_permissions="profilec-agent"\n'
                      'permissions.profilec-agent={extends=":workspace"}\n')
    assert main([*base, "--overrides", str(broken)]) == 1
    sarif = capsys.readouterr().out
    assert "PC000" in sarif or "PC013" in sarif
    assert main([*base, "--format", "yaml"]) == 2
