"""The coverage proof: every mode x root x spelling is deny, and it fails on broken profiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from profilec.api import load_and_compile
from profilec.check.build import from_bundle
from profilec.check.check_inputs import CheckInputs
from profilec.check.checker import run_check
from profilec.check.configstack import ConfigStack, Layer, parse_override_lines
from profilec.check.coverage import CHILD_PROBE, real_path, spellings
from profilec.emit.overrides import render_overrides
from profilec.models.check import CheckReport
from profilec.models.compiled import CompiledBundle
from tests.helpers import Layout, make_layout, write_manifest


def _bundle(tmp_path: Path, **kw: bool) -> tuple[Layout, CompiledBundle]:
    lay = make_layout(tmp_path / "l", **kw)
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    return lay, bundle


def _config(bundle: CompiledBundle) -> dict[str, Any]:
    return parse_override_lines(render_overrides(bundle), where="test")


def _check(bundle: CompiledBundle, cfg: dict[str, Any], **kw: Any) -> CheckReport:
    base = from_bundle(bundle, bundle.mode_profiles)
    inp = CheckInputs(
        stack=ConfigStack((Layer("config.toml", "config-toml", cfg),)),
        mode_map=kw.pop("mode_map", bundle.mode_profiles),
        roots=base.roots,
        workspace_roots=kw.pop("workspace_roots", base.workspace_roots),
        codex_home=base.codex_home,
        codex_home_holders=base.codex_home_holders,
        tmpdir=base.tmpdir,  # the launch's TMPDIR (tests/conftest.py), not /tmp above CODEX_HOME
    )
    return run_check(inp, **kw)


def test_shipped_policy_denies_every_spelling_in_every_mode(tmp_path: Path) -> None:
    lay, bundle = _bundle(tmp_path, hop_dir=True)
    report = run_check(from_bundle(bundle, bundle.mode_profiles))
    assert report.passed and not report.findings
    assert {c.mode for c in report.cells} == {"read-only", "agent", "agent-full-access"}
    names = {c.spelling for c in report.cells}
    assert {str(lay.link), str(lay.host_target), str(lay.base / "hostlink" / "auth.json")} <= names
    assert all(c.access == "deny" for c in report.cells)


def test_every_spelling_maps_to_the_canonical_target(tmp_path: Path) -> None:
    _, bundle = _bundle(tmp_path, hop_dir=True)
    (root,) = bundle.roots
    for spelling, _kind in spellings(root):
        assert real_path(root, spelling) == root.target


def test_removing_the_deny_fails_coverage_naming_mode_root_spelling_winner(tmp_path: Path) -> None:
    lay, bundle = _bundle(tmp_path)
    cfg = _config(bundle)
    del cfg["permissions"]["profilec-agent"]["filesystem"][str(lay.host_target.parent)]
    report = _check(bundle, cfg)
    assert not report.passed
    bad = [c for c in report.cells if not c.ok]
    assert {c.mode for c in bad} == {"agent"}
    assert {c.spelling for c in bad} == {str(lay.link), str(lay.host_target)}
    msgs = [f.message for f in report.findings if f.rule == "PC000"]
    assert any(
        "mode agent" in m and "'codex-auth'" in m and str(lay.link) in m and "winner: " in m
        for m in msgs
    )


def test_denying_the_link_instead_of_the_target_fails_cell_and_symlink_lint(
    tmp_path: Path,
) -> None:
    lay, bundle = _bundle(tmp_path)
    cfg = _config(bundle)
    for prof in cfg["permissions"].values():
        prof["filesystem"].pop(str(lay.host_target.parent))
        prof["filesystem"][str(lay.link)] = "deny"
    report = _check(bundle, cfg)
    link_cells = [c for c in report.cells if c.spelling == str(lay.link)]
    assert link_cells and all(c.lexical == "deny" and c.access != "deny" for c in link_cells)
    rules = {f.rule for f in report.findings}
    assert {"PC000", "PC004"} <= rules


def test_directory_root_children_are_probed_under_every_spelling(tmp_path: Path) -> None:
    base = tmp_path / "d"
    (base / "host" / "creds").mkdir(parents=True)
    (base / "home").mkdir()
    (base / "home" / "creds").symlink_to(base / "host" / "creds")
    (base / "ws").mkdir()
    m = write_manifest(
        base / "roots.toml", [{"id": "dir-root", "path": str(base / "home" / "creds")}]
    )
    (base / "ch").mkdir()
    bundle = load_and_compile(
        str(m), workspace_roots=[str(base / "ws")], codex_home=str(base / "ch")
    )
    report = run_check(from_bundle(bundle, bundle.mode_profiles))
    children = [c for c in report.cells if c.kind == "child"]
    assert {c.spelling for c in children} == {
        f"{base}/home/creds/{CHILD_PROBE}",
        f"{base}/host/creds/{CHILD_PROBE}",
    }
    assert report.passed
    cfg = _config(bundle)
    prof = cfg["permissions"]["profilec-read-only"]
    prof["filesystem"].pop(str(base / "host" / "creds"))
    prof["filesystem"][str(base / "host" / "creds" / "only-this")] = "deny"
    broken = _check(bundle, cfg)
    assert any(c.kind == "child" and not c.ok for c in broken.cells)


def test_danger_full_access_mode_makes_every_cell_writable(tmp_path: Path) -> None:
    _, bundle = _bundle(tmp_path)
    modes = dict(bundle.mode_profiles, **{"agent-full-access": ":danger-full-access"})
    report = _check(bundle, _config(bundle), mode_map=modes)
    cells = [c for c in report.cells if c.mode == "agent-full-access"]
    assert cells and all(c.access == "write" for c in cells)
    assert "PC003" in {f.rule for f in report.findings}


def test_a_root_nothing_covers_is_an_unlisted_warning(tmp_path: Path) -> None:
    lay, bundle = _bundle(tmp_path)
    cfg = _config(bundle)
    cfg["permissions"]["profilec-read-only"] = {"filesystem": {str(lay.workspace): "read"}}
    report = _check(bundle, cfg)
    cells = [c for c in report.cells if c.mode == "read-only"]
    assert cells and all(c.access == "unlisted" for c in cells)
    assert {f.severity for f in report.findings if f.rule == "PC016"} == {"warning"}
    assert report.passed  # a warning is below the default --fail-on error
