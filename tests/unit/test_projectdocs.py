"""One helper (compiler/projectdocs.py) names a planted project-doc link for `watch`, `check`
(PC051) and the canary run's static pre-check; lstat/readlink only."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from profilec.api import load_and_compile
from profilec.canary.run import precheck_notes
from profilec.check.build import from_bundle
from profilec.check.checker import run_check
from profilec.models.canary import CanaryReport
from profilec.models.compiled import CompiledBundle
from profilec.projectdocs import bundle_planted_docs, doc_paths
from tests.helpers import Layout, make_layout


def _bundle(tmp_path: Path) -> tuple[Layout, CompiledBundle]:
    lay = make_layout(tmp_path / "l")
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    return lay, bundle


def test_doc_paths_are_each_roots_agents_files() -> None:
    assert doc_paths(["/w/", "/v", "/w/"]) == (
        "/w/AGENTS.md",
        "/w/AGENTS.override.md",
        "/v/AGENTS.md",
        "/v/AGENTS.override.md",
    )


def test_check_watch_and_canary_name_the_same_planted_link(tmp_path: Path) -> None:
    lay, bundle = _bundle(tmp_path)
    # Controls: a plain file, a harmless link, a broken link, a link into CODEX_HOME's parent.
    (lay.workspace / "AGENTS.md").write_text("be nice\n")
    (lay.workspace / "AGENTS.override.md").symlink_to("control.txt")
    assert bundle_planted_docs(bundle) == ()
    assert precheck_notes(bundle) == ()
    (lay.workspace / "AGENTS.override.md").unlink()
    (lay.workspace / "AGENTS.override.md").symlink_to("/nonexistent/x")
    assert bundle_planted_docs(bundle) == ()

    (lay.workspace / "AGENTS.override.md").unlink()
    (lay.workspace / "AGENTS.override.md").symlink_to(lay.link)  # CODEX_HOME/auth.json -> vault
    (found,) = bundle_planted_docs(bundle)
    path = str(lay.workspace / "AGENTS.override.md")
    assert (found.path, found.link, found.target) == (path, str(lay.link), str(lay.host_target))

    report = run_check(from_bundle(bundle, bundle.mode_profiles))
    assert [(f.rule, f.path, f.message) for f in report.findings if f.rule == "PC051"] == [
        ("PC051", path, found.message)
    ]

    from profilec.watch import watch_bundle

    drift = watch_bundle(bundle).begin()
    assert drift is not None and (drift.kind, drift.path) == ("project-doc-link", path)

    notes = precheck_notes(bundle)
    assert notes == (f"pre-check (PC051): {found.message}",)
    text = CanaryReport.of("r", (), 0.0, "img", notes).to_text()
    assert f"  note: pre-check (PC051): {path} is a symlink -> {lay.link}" in text


def test_the_helper_never_opens_a_doc_or_its_target(tmp_path: Path) -> None:
    lay, bundle = _bundle(tmp_path)
    (lay.workspace / "AGENTS.md").symlink_to(lay.host_target)
    opened: list[str] = []

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and args and isinstance(args[0], str) and str(lay.base) in args[0]:
            opened.append(args[0])

    sys.addaudithook(hook)
    assert len(bundle_planted_docs(bundle)) == 1
    assert len(precheck_notes(bundle)) == 1
    assert opened == []
