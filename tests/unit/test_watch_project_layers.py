"""`profilec watch`: a project config folder planted below a workspace root while a session runs
is drift (role `project-config`), a tree too large to scan whole is drift at the start, and the
scan runs at most one part in ten of the time (compiler/watch.py ProjectLayers)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import jsonschema
import pytest

from profilec import projectlayers, watch
from profilec.api import load_and_compile
from profilec.models.compiled import CompiledBundle
from profilec.watch import ProjectLayers, watch_bundle
from tests.helpers import Layout, make_layout
from tests.unit.test_projectlayers import RUN_AS, as_run_as_uid, reachable_dir
from tests.unit.test_watch import _cli, _started

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "schemas" / "watch-event.schema.json").read_text(encoding="utf-8"))


@pytest.fixture
def shared() -> Iterator[Path]:
    with reachable_dir() as base:
        yield base


@pytest.fixture
def lay(tmp_path: Path) -> Layout:
    return make_layout(tmp_path / "l")


def _bundle(lay: Layout) -> CompiledBundle:
    return load_and_compile(
        str(lay.manifest), workspace_roots=(str(lay.workspace),), codex_home=str(lay.codex_home)
    )


def _config(d: Path, text: str = '[shell_environment_policy.set]\nX = "1"\n') -> Path:
    (d / ".codex").mkdir(parents=True, exist_ok=True)
    path = d / ".codex" / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _watcher(lay: Layout) -> watch.Watcher:
    """watch_bundle's watcher whose tree scan is due at every poll: a clock whose every reading
    is ten times the last, so the wait after a scan (nine times its duration) has always passed
    at the next poll."""
    w = watch_bundle(_bundle(lay))
    assert w.layers is not None
    ticks = iter(10.0**n for n in range(300))
    w.layers.clock = lambda: next(ticks)
    return w


class Clock:
    """A clock a test moves; each reading of a scan's start and end can be told apart."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_planted_config_is_drift_and_a_clean_tree_is_not(lay: Layout) -> None:
    w = _watcher(lay)
    assert w.layers is not None and w.layers.roots == (str(lay.workspace),)
    assert w.begin() is None
    assert w.poll() is None  # control: nothing planted, nothing reported
    (lay.workspace / "sub" / ".codex").mkdir(parents=True)
    assert w.poll() is None  # an empty folder loads nothing (yet)
    _config(lay.workspace / "sub")
    found = w.poll()
    assert found is not None
    assert (found.kind, found.role) == ("project-config-planted", "project-config")
    assert found.path == str(lay.workspace / "sub" / ".codex")
    doc = found.document()
    jsonschema.validate(doc, SCHEMA)
    assert "remove it before the next" in doc["message"]


def test_a_folder_there_at_the_start_is_the_baseline_and_its_change_is_drift(lay: Layout) -> None:
    shipped = _config(lay.workspace / "pkg")  # check refused it or a reviewed waiver accepted it
    w = _watcher(lay)
    assert w.begin() is None
    assert w.poll() is None
    shipped.write_text('[permissions.profilec-agent.filesystem]\n"/" = "write"\n', "utf-8")
    found = w.poll()
    assert found is not None and found.kind == "project-config-planted"
    assert (found.expected, found.observed) == ("unchanged since the session started", "changed")


def test_a_planted_rules_folder_or_link_is_drift(lay: Layout, tmp_path: Path) -> None:
    w = _watcher(lay)
    assert w.begin() is None
    (lay.workspace / "a" / ".codex" / "rules").mkdir(parents=True)
    found = w.poll()
    assert found is not None and found.path == str(lay.workspace / "a" / ".codex")
    w = _watcher(lay)
    assert w.begin() is None
    (lay.workspace / "b").mkdir()
    (lay.workspace / "b" / ".codex").symlink_to(tmp_path)
    found = w.poll()
    assert found is not None and found.path == str(lay.workspace / "b" / ".codex")


def test_the_scan_waits_nine_times_its_own_duration(
    lay: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    scans: list[float] = []
    real = projectlayers.scan

    def timed(
        root: str, limit: int = projectlayers.SCAN_LIMIT, roots: Sequence[str] = ()
    ) -> projectlayers.Scan:
        scans.append(clock.now)
        clock.now += 0.1  # each scan takes 0.1 s of the clock
        return real(root, limit, roots)

    layers = ProjectLayers((str(lay.workspace),), clock=clock)
    monkeypatch.setattr(projectlayers, "scan", timed)
    assert layers.begin() is None
    assert layers.poll() is None  # due at once after the start
    assert clock.now == pytest.approx(0.2) and len(scans) == 2
    clock.now = 0.2 + 0.85
    assert layers.poll() is None and len(scans) == 2  # not yet: 0.9 s after the last end
    clock.now = 0.2 + 0.9
    assert layers.poll() is None and len(scans) == 3


def test_a_tree_too_large_to_scan_is_drift_at_the_start(
    lay: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(4):
        (lay.workspace / f"d{i}").mkdir()
    monkeypatch.setattr(projectlayers.scan, "__defaults__", (2, ()))
    found = watch_bundle(_bundle(lay)).begin()
    assert found is not None and (found.kind, found.path) == ("scan-incomplete", str(lay.workspace))
    assert str(projectlayers.SCAN_LIMIT) in found.message


def test_a_tree_grown_past_the_limit_is_drift(lay: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    w = _watcher(lay)
    assert w.begin() is None
    for i in range(4):
        (lay.workspace / f"d{i}").mkdir()
    monkeypatch.setattr(projectlayers.scan, "__defaults__", (2, ()))
    found = w.poll()
    assert found is not None and found.kind == "scan-incomplete"


def test_cli_reports_a_planted_project_config_and_exits_9(lay: Layout) -> None:
    proc = _cli(lay, "--interval", "0.05")
    _started(proc)
    planted = _config(lay.workspace / "deep" / "er")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 9, err
    doc = json.loads(out.split("\n")[0])
    jsonschema.validate(doc, SCHEMA)
    assert (doc["role"], doc["path"]) == ("project-config", str(planted.parent))
    assert err.startswith("profilec: lock-drift: watch: project-config ")
    assert err.count("\n") == 1


def test_a_plant_behind_a_link_or_inside_git_is_drift(lay: Layout, tmp_path: Path) -> None:
    """The measured roads (issue 40): `<ws>/lib -> <dir>` and `<ws>/g/.git/.codex`."""
    w = _watcher(lay)
    assert w.begin() is None
    _config(lay.workspace / "g" / ".git")
    found = w.poll()
    assert found is not None and found.kind == "project-config-planted"
    assert found.path == str(lay.workspace / "g" / ".git" / ".codex")
    w = _watcher(lay)
    assert w.begin() is None
    (lay.workspace / "real").mkdir()
    (lay.workspace / "lib").symlink_to(lay.workspace / "real")  # inside the root: followed
    assert w.poll() is None
    _config(lay.workspace / "real" / "deep")
    found = w.poll()
    assert found is not None and found.kind == "project-config-planted"
    assert found.path.endswith("/deep/.codex"), found


def test_a_link_outside_the_roots_is_drift_when_it_appears_or_moves(
    lay: Layout, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    _config(elsewhere)
    w = _watcher(lay)
    assert w.begin() is None
    (lay.workspace / "lib").symlink_to(elsewhere)
    found = w.poll()
    assert found is not None
    assert (found.kind, found.role) == ("project-config-link-outside", "project-config")
    assert (found.path, found.expected) == (str(lay.workspace / "lib"), "absent")
    assert found.observed == f"a link to {elsewhere}"
    jsonschema.validate(found.document(), SCHEMA)
    assert "outside every root" in found.message
    # One there at the start is the baseline (check refused it, or a waiver accepted it) ...
    w = _watcher(lay)
    assert w.begin() is None
    assert w.poll() is None
    # ... and re-pointing it is drift.
    (tmp_path / "other").mkdir()
    (lay.workspace / "lib").unlink()
    (lay.workspace / "lib").symlink_to(tmp_path / "other")
    found = w.poll()
    assert found is not None and found.kind == "project-config-link-outside"
    assert found.expected == f"a link to {elsewhere}"


def test_an_unlistable_directory_stops_the_run_as_uids_watch(shared: Path) -> None:
    """A watcher running as the run-as uid does not start on a tree it cannot list, and one
    that appears while it runs is drift (`scan-incomplete`, the unlistable directory's path).
    Root lists it (the control)."""
    root = shared / "ws"
    root.mkdir()
    hidden = root / "hidden"
    _config(hidden / "sub")
    if os.geteuid() == 0:
        os.chown(root, RUN_AS, RUN_AS)
        os.chown(hidden, RUN_AS, RUN_AS)
    os.chmod(hidden, 0o311)
    if os.geteuid() == 0:
        assert ProjectLayers((str(root),)).begin() is None  # control: root sees the tree

    def start() -> watch.Drift | None:
        return ProjectLayers((str(root),)).begin()

    found = as_run_as_uid(start)
    assert found is not None and (found.kind, found.path) == ("scan-incomplete", str(hidden))
    assert found.observed.startswith("cannot be listed by uid ")
    jsonschema.validate(found.document(), SCHEMA)
    os.chmod(hidden, 0o755)

    def appears() -> tuple[watch.Drift | None, watch.Drift | None]:
        layers = ProjectLayers((str(root),), clock=lambda: 0.0)
        began = layers.begin()
        os.mkdir(root / "later", 0o311)  # as the model would, as the run-as uid
        os.chmod(root / "later", 0o311)
        return began, layers.poll()

    began, later = as_run_as_uid(appears)
    assert began is None
    assert later is not None and (later.kind, later.path) == (
        "scan-incomplete",
        str(root / "later"),
    )
