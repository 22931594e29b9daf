"""`profilec watch`: each drift kind, no false positive (unchanged tree, trusted rename save),
detection on the first poll after a change (fake clock), lstat/readlink only, CLI contract."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from profilec.api import load_and_compile
from profilec.models.compiled import CompiledBundle
from profilec.watch import (
    DEFAULT_INTERVAL,
    Drift,
    Watcher,
    denies_writer_lock,
    run,
    watch_bundle,
    watch_set,
)
from tests.helpers import Layout, make_layout, write_manifest

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "schemas" / "watch-event.schema.json").read_text(encoding="utf-8"))


def _lay(base: Path, **kw: bool) -> Layout:
    """make_layout, which leaves the writer's lock CODEX_HOME/auth.lock as a login would."""
    lay = make_layout(base, **kw)
    assert (lay.codex_home / "auth.lock").is_file()
    return lay


def _bundle(lay: Layout) -> CompiledBundle:
    return load_and_compile(
        str(lay.manifest),
        workspace_roots=(str(lay.workspace),),
        codex_home=str(lay.codex_home),
    )


def _watcher(lay: Layout) -> Watcher:
    w = watch_bundle(_bundle(lay))
    assert w.begin() is None
    return w


@pytest.fixture
def lay(tmp_path: Path) -> Layout:
    return _lay(tmp_path / "l", relative_link=True)


def _trusted_save(lay: Layout, text: str) -> None:
    """What Codex does (research §1, strace): lock beside the real file, temp file, rename."""
    vault = lay.host_target.parent
    (lay.codex_home / "auth.lock").touch()
    (vault / "auth.json.lock").touch()
    tmp = vault / ".auth-Ab12Cd"
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.rename(tmp, lay.host_target)


def test_an_unchanged_tree_is_never_drift(lay: Layout) -> None:
    w = _watcher(lay)
    for _ in range(5):
        assert w.poll() is None


def test_a_trusted_rename_save_is_not_drift(lay: Layout) -> None:
    w = _watcher(lay)
    before = os.lstat(lay.host_target).st_ino
    _trusted_save(lay, '{"tokens": "new"}\n')
    assert os.lstat(lay.host_target).st_ino != before  # the inode really changed
    assert w.poll() is None
    _trusted_save(lay, '{"tokens": "newer"}\n')
    assert w.poll() is None


def _expect(w: Watcher, kind: str, path: Path | str, role: str) -> Drift:
    found = w.poll()
    assert found is not None, "no drift reported"
    assert (found.kind, found.path, found.role) == (kind, str(path), role), found
    jsonschema.validate(found.document(), SCHEMA)
    assert "\n" not in json.dumps(found.document())
    return found


def test_a_re_pointed_link_is_drift(lay: Layout) -> None:
    w = _watcher(lay)
    other = lay.base / "elsewhere"
    other.mkdir()
    (other / "auth.json").write_text("{}", encoding="utf-8")
    tmp = lay.codex_home / "auth.json.new"
    tmp.symlink_to("../elsewhere/auth.json")
    os.rename(tmp, lay.link)
    found = _expect(w, "link-retargeted", lay.link, "hop")
    assert found.expected == "symlink -> ../host/auth.json"
    assert found.observed == "symlink -> ../elsewhere/auth.json"
    assert found.root_ids == ("codex-auth",)


def test_a_middle_link_replaced_by_a_directory_is_drift(tmp_path: Path) -> None:
    lay = _lay(tmp_path / "l", hop_dir=True)
    w = _watcher(lay)
    hop = lay.base / "hostlink"
    hop.unlink()
    hop.mkdir()
    _expect(w, "link-replaced", hop, "hop")


def test_the_private_auth_json_turned_plain_file_is_drift(lay: Layout) -> None:
    """`codex logout` deletes the link; the next login writes a plain auth.json there."""
    w = _watcher(lay)
    lay.link.unlink()
    found = _expect(w, "removed", lay.link, "hop")
    assert found.observed == "missing"
    lay.link.write_text("{}", encoding="utf-8")
    _expect(w, "private-auth-plain-file", lay.link, "hop")


def test_a_moved_vault_is_drift(lay: Layout) -> None:
    w = _watcher(lay)
    os.rename(lay.host_target.parent, lay.base / "moved")
    _expect(w, "removed", lay.host_target.parent, "vault")


def test_a_vault_replaced_under_the_same_name_is_drift(lay: Layout) -> None:
    w = _watcher(lay)
    vault = lay.host_target.parent
    os.rename(vault, lay.base / "moved")
    vault.mkdir()
    (vault / "auth.json").write_text("{}", encoding="utf-8")
    _expect(w, "replaced", vault, "vault")


def test_a_new_hard_link_on_the_target_is_drift(lay: Layout) -> None:
    w = _watcher(lay)
    os.link(lay.host_target, lay.workspace / "copy.json")
    found = _expect(w, "nlink-changed", lay.host_target, "target")
    assert (found.expected, found.observed) == ("file (nlink 1)", "file (nlink 2)")


def test_a_replaced_codex_home_is_drift(lay: Layout) -> None:
    w = _watcher(lay)
    os.rename(lay.codex_home, lay.base / "oldhome")
    lay.codex_home.mkdir()
    (lay.codex_home / "auth.json").symlink_to("../host/auth.json")
    _expect(w, "replaced", lay.codex_home, "codex-home")


def test_a_private_auth_json_appearing_in_a_home_without_one_is_drift(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    other_home = lay.base / "home2"
    other_home.mkdir()
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=(str(lay.workspace),), codex_home=str(other_home)
    )
    w = watch_bundle(bundle)
    assert w.begin() is None
    (other_home / "auth.json").write_text("{}", encoding="utf-8")
    _expect(w, "private-auth-plain-file", other_home / "auth.json", "private-auth")


def test_a_link_appearing_as_the_private_auth_json_is_drift(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    other_home = lay.base / "home2"
    other_home.mkdir()
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=(str(lay.workspace),), codex_home=str(other_home)
    )
    w = watch_bundle(bundle)
    assert w.begin() is None
    (other_home / "auth.json").symlink_to(lay.host_target)
    _expect(w, "appeared", other_home / "auth.json", "private-auth")


def test_a_missing_root_that_appears_is_drift(tmp_path: Path) -> None:
    lay = _lay(tmp_path / "l")
    later = lay.base / "later"
    later.mkdir(mode=0o700)
    write_manifest(
        lay.manifest,
        [
            {"id": "codex-auth", "path": str(lay.link), "backend": "codex"},
            {"id": "later", "path": str(later / "token.json"), "allow_missing": True},
        ],
    )
    w = _watcher(lay)
    (later / "token.json").write_text("{}", encoding="utf-8")
    _expect(w, "appeared", later / "token.json", "missing-root")


def test_a_replaced_writer_lock_is_drift(lay: Layout) -> None:
    """The deny on auth.lock masks the file that existed at sandbox start; a new one is open."""
    w = _watcher(lay)
    lock = lay.codex_home / "auth.lock"
    new = lay.codex_home / "auth.lock.new"
    new.touch()
    os.rename(new, lock)
    _expect(w, "replaced", lock, "writer-lock")


def _lockless(tmp_path: Path) -> tuple[Layout, CompiledBundle, Path]:
    lay = make_layout(tmp_path / "l")
    lock = lay.codex_home / "auth.lock"
    lock.unlink()  # no lock yet (check warns: PC007)
    bundle = _bundle(lay)
    assert denies_writer_lock(bundle)
    return lay, bundle, lock


def _first_login_save(lock: Path) -> None:
    """What Codex does at its first save: open(O_RDWR|O_CREAT, 0666 & umask) + flock."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    os.close(fd)


def test_a_denied_writer_lock_created_by_the_first_login_save_is_not_drift(
    tmp_path: Path,
) -> None:
    """The first token refresh creates the lock every profile denies: expected, the session
    goes on; from then on it is the baseline (replaced or removed is drift)."""
    _, bundle, lock = _lockless(tmp_path)
    w = watch_bundle(bundle)
    assert w.begin() is None
    _first_login_save(lock)
    for _ in range(3):
        assert w.poll() is None
    assert w.start[str(lock)].kind == "file"  # the new baseline
    new = lock.with_name("auth.lock.new")
    new.touch()
    os.rename(new, lock)
    _expect(w, "replaced", lock, "writer-lock")


def test_a_denied_writer_lock_removed_after_it_appeared_is_drift(tmp_path: Path) -> None:
    _, bundle, lock = _lockless(tmp_path)
    w = watch_bundle(bundle)
    assert w.begin() is None
    _first_login_save(lock)
    assert w.poll() is None
    lock.unlink()
    _expect(w, "removed", lock, "writer-lock")


def test_a_late_writer_lock_was_drift_before_negative_control(tmp_path: Path) -> None:
    """Negative control: the watch set alone (the old watcher, no knowledge of the profiles'
    deny) reports the same first save as drift: what ended sessions at the first refresh."""
    _, bundle, lock = _lockless(tmp_path)
    w = Watcher(watch_set(bundle.roots, bundle.codex_home))
    assert w.begin() is None
    _first_login_save(lock)
    _expect(w, "appeared", lock, "writer-lock")


def test_a_late_writer_lock_no_profile_denies_is_drift(tmp_path: Path) -> None:
    """Only the lock every profile denies may appear: without the deny it stays drift."""
    _, bundle, lock = _lockless(tmp_path)
    stripped = bundle.model_copy(
        update={
            "profiles": tuple(
                p.model_copy(update={"entries": tuple(e for e in p.entries if e.path != str(lock))})
                for p in bundle.profiles
            )
        }
    )
    assert not denies_writer_lock(stripped)
    w = watch_bundle(stripped)
    assert w.begin() is None
    _first_login_save(lock)
    _expect(w, "appeared", lock, "writer-lock")


@pytest.mark.parametrize("kind", ["symlink", "dir"])
def test_a_writer_lock_appearing_as_a_link_or_dir_is_drift(tmp_path: Path, kind: str) -> None:
    lay, bundle, lock = _lockless(tmp_path)
    w = watch_bundle(bundle)
    assert w.begin() is None
    if kind == "symlink":
        lock.symlink_to(lay.host_target)
    else:
        lock.mkdir()
    _expect(w, "appeared", lock, "writer-lock")


def test_a_chain_that_already_differs_from_the_bundle_is_drift_at_start(lay: Layout) -> None:
    bundle = _bundle(lay)  # e.g. a lock file pinned before the link moved
    lay.link.unlink()
    lay.link.symlink_to(lay.host_target)  # absolute now
    found = watch_bundle(bundle).begin()
    assert found is not None and found.kind == "link-retargeted"


class FakeClock:
    """sleep() advances fake time; a change is applied once the clock passes `at`."""

    def __init__(self, change: Callable[[], None], at: float, limit: float = 10.0) -> None:
        self.now = 0.0
        self.change = change
        self.at = at
        self.changed_at: float | None = None
        self.limit = limit
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> bool:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.changed_at is None and self.now >= self.at:
            self.change()
            self.changed_at = self.now
            self.now += 0.01  # the change happens between two polls
        return self.now < self.limit


def test_drift_is_found_on_the_first_poll_after_the_change(lay: Layout) -> None:
    clock = FakeClock(lambda: lay.link.unlink(), at=3.0)
    found = run(watch_bundle(_bundle(lay)), sleep=clock.sleep)
    assert found is not None and found.kind == "removed"
    assert clock.changed_at is not None
    assert clock.now - clock.changed_at <= DEFAULT_INTERVAL < 1.0
    assert set(clock.sleeps) == {DEFAULT_INTERVAL}


def test_a_trusted_save_during_the_run_never_ends_it(lay: Layout) -> None:
    clock = FakeClock(lambda: _trusted_save(lay, "{}\n"), at=1.0, limit=5.0)
    assert run(watch_bundle(_bundle(lay)), sleep=clock.sleep) is None  # stopped by the limit
    assert clock.changed_at is not None


_OPENED: list[str] = []
_RECORDING = [False]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _RECORDING[0] and event == "open" and args and isinstance(args[0], (str, bytes)):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_hook)  # cannot be removed; records only while enabled


def test_watching_never_opens_the_link_hops_or_target(tmp_path: Path) -> None:
    lay = _lay(tmp_path / "l", hop_dir=True)
    w = watch_bundle(_bundle(lay))
    _OPENED.clear()
    _RECORDING[0] = True
    try:
        assert w.begin() is None
        _trusted_save(lay, "{}\n")
        assert w.poll() is None
        lay.link.unlink()
        assert w.poll() is not None
    finally:
        _RECORDING[0] = False
    watched = {x.path for x in w.watched}
    assert str(lay.host_target) in watched and str(lay.link) in watched
    assert not {p for p in _OPENED if p in watched or p.endswith("auth.json")}, _OPENED
    assert any(p.endswith(".auth-Ab12Cd") for p in _OPENED)  # the hook records opens


# ---------------------------------------------------------------------------------------------
# The CLI (a real process: signals, exit codes, stdout)


def _cli(lay: Layout, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "profilec.cli",
            "watch",
            "--roots",
            str(lay.manifest),
            "--workspace-root",
            str(lay.workspace),
            "--codex-home",
            str(lay.codex_home),
            *extra,
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _started(proc: subprocess.Popen[str]) -> None:
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line.startswith("profilec: watch: watching "), line


def test_cli_prints_one_json_line_and_exits_9_on_drift(lay: Layout) -> None:
    proc = _cli(lay, "--interval", "0.05")
    _started(proc)
    lay.link.unlink()
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 9, err
    lines = out.split("\n")
    assert len(lines) == 2 and lines[1] == ""
    doc = json.loads(lines[0])
    jsonschema.validate(doc, SCHEMA)
    assert doc["kind"] == "removed" and doc["path"] == str(lay.link)
    assert err.startswith("profilec: lock-drift: watch: hop ") and err.count("\n") == 1
    assert lay.marker not in out + err


def test_cli_stops_cleanly_on_sigterm(lay: Layout) -> None:
    proc = _cli(lay)
    _started(proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert (proc.returncode, out, err) == (0, "", "")


def test_cli_watches_the_chain_pinned_in_a_lock(lay: Layout, tmp_path: Path) -> None:
    from profilec.cli import main

    lock = tmp_path / "profilec.lock"
    rc = main(
        [
            "lock",
            "--roots",
            str(lay.manifest),
            "--workspace-root",
            str(lay.workspace),
            "--codex-home",
            str(lay.codex_home),
            "--out",
            str(lock),
        ]
    )
    assert rc == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "profilec.cli", "watch", "--lock", str(lock), "--interval", "0.05"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _started(proc)
    os.link(lay.host_target, lay.workspace / "second-name")
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 9 and json.loads(out)["kind"] == "nlink-changed"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "either --roots"),
        (["--roots", "r.toml", "--lock", "l.json"], "either --roots"),
        (["--lock", "l.json", "--codex-home", "/x"], "drop the compile flags"),
        (["--roots", "r.toml", "--interval", "2"], "--interval must be between"),
    ],
)
def test_cli_usage_errors_are_one_line_exit_2(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from profilec.cli import main

    assert main(["watch", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_a_link_removed_between_lstat_and_readlink_is_missing_not_retargeted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race a loaded machine hits: `observe` lstats the link, the link is deleted, then
    readlink fails. That is a removal (`missing`), never a link re-pointed to nothing."""
    import profilec.watch as watch_mod

    link = tmp_path / "auth.json"
    link.symlink_to("target")
    assert watch_mod.observe(str(link)).kind == "link"
    real_readlink = os.readlink

    def racing_readlink(path: str) -> str:
        if path == str(link):  # only this link: realpath elsewhere calls readlink too
            os.unlink(path)  # the removal lands between the two calls
        return real_readlink(path)

    monkeypatch.setattr(os, "readlink", racing_readlink)
    assert watch_mod.observe(str(link)).kind == "missing"


def test_a_pass_that_races_a_change_reports_the_first_drift_in_path_order() -> None:
    """A pass is not atomic: `/a` is looked at before it changes and `/b` after. The first pass
    alone would report `/b`; the second pass decides, and reports `/a`."""
    from profilec.watch import Seen, Watched

    a = Watched(path="/a", role="target", root_ids=("r",), kind="file")
    b = Watched(path="/b", role="target", root_ids=("r",), kind="file")
    states = {"/a": Seen("file", 1, 1, 1), "/b": Seen("file", 1, 2, 1)}
    looks: list[str] = []

    def look(path: str) -> Seen:
        looks.append(path)
        seen = states[path]
        if path == "/a" and len(looks) == 3:  # the first poll's look at /a, then both change
            states["/a"] = Seen("missing")
            states["/b"] = Seen("missing")
        return seen

    w = Watcher((a, b), look)
    assert w.begin() is None
    found = w.poll()
    assert found is not None and found.path == "/a", found
    # Negative control: the first pass alone reports the later path.
    states.update({"/a": Seen("file", 1, 1, 1), "/b": Seen("file", 1, 2, 1)})
    looks.clear()
    w2 = Watcher((a, b), look)
    assert w2.begin() is None
    first = w2._pass()
    assert first is not None and first.path == "/b", first


# ---------------------------------------------------------------------------------------------
# The managed requirements the session runs under (`--requirements`)


def _requirements(lay: Layout, path: Path) -> None:
    from profilec.emit.requirements import render_requirements

    path.write_text(render_requirements(_bundle(lay)), encoding="utf-8")
    path.chmod(0o644)


def test_cli_reports_requirements_missing_or_less_strict_at_the_start(
    lay: Layout, tmp_path: Path
) -> None:
    req = tmp_path / "req" / "requirements.toml"
    req.parent.mkdir()
    for body in (None, '[permissions.filesystem]\ndeny_read = ["/nowhere"]\n'):
        if body is not None:
            req.write_text(body, encoding="utf-8")
        proc = _cli(lay, "--requirements", str(req))
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 9, err
        doc = json.loads(out.split("\n")[0])
        jsonschema.validate(doc, SCHEMA)
        assert doc["kind"] == "requirements-less-strict" and doc["path"] == str(req)
        assert ("missing" if body is None else "deny_read misses") in doc["observed"], doc


def test_cli_reports_an_edit_of_the_requirements_and_without_them_does_not(
    lay: Layout, tmp_path: Path
) -> None:
    req = tmp_path / "req" / "requirements.toml"
    req.parent.mkdir()
    _requirements(lay, req)
    # Control: not named, the file is not watched; an edit goes unnoticed until SIGTERM.
    proc = _cli(lay, "--interval", "0.05")
    _started(proc)
    with req.open("a", encoding="utf-8") as fh:
        fh.write("# an edit\n")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (0, ""), err
    _requirements(lay, req)
    proc = _cli(lay, "--interval", "0.05", "--requirements", str(req))
    _started(proc)
    with req.open("a", encoding="utf-8") as fh:
        fh.write("# an edit\n")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 9, err
    doc = json.loads(out.split("\n")[0])
    assert doc["role"] == "requirements" and doc["kind"] == "modified", doc
