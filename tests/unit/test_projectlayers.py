"""The project-config scanner (compiler/projectlayers.py) sees what Codex loads: behind a link to
a directory, inside `.git`, and it says so when it cannot list a directory.

Measured on 0.171.0 and 0.166.0 (issue 40): `<ws>/lib -> /tmp/x` holding `.codex/config.toml`,
`<ws>/g/.git/.codex/config.toml`, and a `.codex` below a `mkdir -m 0311` directory each loaded
in a session opened there while the old scan (no link followed, `.git` skipped, unreadable
directories skipped) said nothing. The real-binary cells are in
tests/integration/test_requirements_acp.py.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from profilec import projectlayers
from profilec.cli import main
from profilec.projectlayers import Outside, Scan
from tests.helpers import Layout, make_layout

#: The run-as uid of the launch documents and the e2e harness (nobody).
RUN_AS = 65534
T = TypeVar("T")


def as_run_as_uid(fn: Callable[[], T]) -> T:
    """`fn()` as a non-root uid: as root, in a forked child that drops to RUN_AS (groups,
    gid, uid) and pickles the result back; as any other uid, in-process (it is one already)."""
    if os.geteuid() != 0:
        return fn()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its result is asserted by the parent
        code = 1
        try:
            os.close(r)
            os.setgroups([])
            os.setresgid(RUN_AS, RUN_AS, RUN_AS)
            os.setresuid(RUN_AS, RUN_AS, RUN_AS)
            data = pickle.dumps((True, fn()))
            code = 0
        except BaseException as exc:  # reported to the parent
            data = pickle.dumps((False, repr(exc)))
        with os.fdopen(w, "wb") as out:
            out.write(data)
        os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as inp:
        ok, value = pickle.loads(inp.read())
    os.waitpid(pid, 0)
    assert ok, value
    return value  # type: ignore[no-any-return]


@contextmanager
def reachable_dir() -> Iterator[Path]:
    """A directory the run-as uid can reach (pytest's tmp_path is root's own 0700)."""
    base = Path(tempfile.mkdtemp(prefix="profilec-scan-", dir="/var/tmp"))
    os.chmod(base, 0o755)
    try:
        yield base
    finally:
        for d, _, _ in os.walk(base):
            os.chmod(d, 0o755)
        shutil.rmtree(base)


@pytest.fixture
def shared() -> Iterator[Path]:
    with reachable_dir() as base:
        yield base


def _plant(d: Path) -> Path:
    (d / ".codex").mkdir(parents=True)
    (d / ".codex" / "config.toml").write_text('[shell_environment_policy.set]\nX = "1"\n', "utf-8")
    return d / ".codex"


def _check(capsys: pytest.CaptureFixture[str], lay: Layout) -> tuple[int, list[dict[str, str]]]:
    flags = ["--roots", str(lay.manifest), "--workspace-root", str(lay.workspace)]
    code = main(["check", *flags, "--codex-home", str(lay.codex_home), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    return code, [f for f in doc["findings"] if f["rule"] in ("PC064", "PC065")]


def test_a_link_into_a_root_is_covered_by_that_roots_walk(tmp_path: Path) -> None:
    """A link to a directory inside a workspace root leads to a real directory of that root's
    tree, which the walk enters under its real name: found once, not reported as outside."""
    root = tmp_path / "ws"
    real = root / "real"
    planted = _plant(real / "sub")
    (root / "lnk").symlink_to(real)  # the same tree under a second name
    (root / "rel").symlink_to("real/sub")
    assert projectlayers.scan(str(root)) == Scan(str(root), (str(planted),))
    other = tmp_path / "ws2"
    other.mkdir()
    (other / "lib").symlink_to(real)
    # Into another workspace root: that root's scan reports the plant ...
    assert projectlayers.scan(str(other), roots=(str(other), str(root))) == Scan(str(other), ())
    # ... and with that root not among the roots, the link leads outside.
    alone = projectlayers.scan(str(other))
    assert alone.outside == (Outside(str(other / "lib"), str(real)),)


def test_a_link_loop_or_a_dangling_link_ends_and_the_plant_is_still_found(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    planted = _plant(root / "a" / "b")
    (root / "a" / "loop").symlink_to(root / "a")
    (root / "a" / "b" / "up").symlink_to("..")
    (root / "self").symlink_to(".")
    (root / "x").symlink_to("y")  # a link loop that is no directory at all
    (root / "y").symlink_to("x")
    (root / "dangling").symlink_to(root / "nowhere")
    (root / "file").symlink_to(root / "a" / "b" / ".codex" / "config.toml")
    seen = projectlayers.scan(str(root))
    assert seen == Scan(str(root), (str(planted),))


def test_a_link_outside_every_root_is_reported_not_entered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    elsewhere = tmp_path / "elsewhere"
    _plant(elsewhere)  # what the measured plant held: <ws>/lib -> /tmp/x/.codex/config.toml
    assert _check(capsys, lay) == (0, [])  # control: the same tree without the link passes
    (lay.workspace / "lib").symlink_to(elsewhere)
    seen = projectlayers.scan(str(lay.workspace))
    assert seen.outside == (Outside(str(lay.workspace / "lib"), str(elsewhere)),)
    assert seen.found == () and seen.complete
    code, found = _check(capsys, lay)
    assert code != 0 and [(f["rule"], f["severity"]) for f in found] == [("PC065", "error")]
    assert found[0]["path"] == str(lay.workspace / "lib") and str(elsewhere) in found[0]["message"]
    # A link above the root leads outside too (a session there sees the whole parent).
    (lay.workspace / "lib").unlink()
    (lay.workspace / "up").symlink_to("..")
    assert [o.link for o in projectlayers.scan(str(lay.workspace)).outside] == [
        str(lay.workspace / "up")
    ]


def test_a_link_is_resolved_as_the_kernel_does_not_by_its_text(tmp_path: Path) -> None:
    """`..` after a link is the link target's parent: `lnk -> a/../out` with `a -> .` (the root)
    leads to the root's parent, outside, though its text reads as inside."""
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "out").mkdir()
    (root / "a").symlink_to(root)
    (root / "lnk").symlink_to("a/../out")
    (root / "abs").symlink_to(str(root / "a" / ".." / "out"))
    (root / "in").symlink_to("a/a/a/.")
    seen = projectlayers.scan(str(root))
    assert sorted(seen.outside, key=lambda o: o.link) == [
        Outside(str(root / "abs"), str(tmp_path / "out")),
        Outside(str(root / "lnk"), str(tmp_path / "out")),
    ]
    assert seen.complete


def test_a_git_directory_is_entered(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    inside = _plant(root / "g" / ".git")
    deeper = _plant(root / "h" / ".git" / "objects")
    nested = _plant(root / "k" / ".codex" / "x")  # inside another .codex folder
    seen = projectlayers.scan(str(root))
    assert seen.complete
    assert set(seen.found) == {str(inside), str(deeper), str(nested), str(root / "k" / ".codex")}


def test_an_unlistable_directory_makes_the_scan_incomplete_for_the_run_as_uid(
    shared: Path,
) -> None:
    root = shared / "ws"
    hidden = root / "hidden"
    planted = _plant(hidden / "sub")
    (root / "open").mkdir()
    os.chmod(root, 0o755)
    os.chown(hidden, RUN_AS, RUN_AS)  # what a model command running as the run-as uid made
    os.chmod(hidden, 0o311)
    if os.geteuid() == 0:  # control: a scanner that can list it sees the plant
        assert projectlayers.scan(str(root)) == Scan(str(root), (str(planted),))
    seen = as_run_as_uid(lambda: projectlayers.scan(str(root)))
    assert seen.unlisted == (str(hidden),) and not seen.complete and not seen.overflow
    assert seen.found == ()
    # A directory gone while the scan ran is not an incomplete scan (ENOENT).
    os.chmod(hidden, 0o755)
    gone = projectlayers.scan(str(root / "missing"))
    assert gone == Scan(str(root / "missing"), ())


def test_an_unlistable_directory_fails_check_run_as_the_run_as_uid(
    shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(shared / "l")
    os.chmod(lay.manifest, 0o644)  # the run-as uid's check reads it
    hidden = lay.workspace / "hidden"
    hidden.mkdir()
    if os.geteuid() == 0:
        os.chown(lay.workspace, RUN_AS, RUN_AS)  # its workspace (else check refuses at compile)
        os.chown(hidden, RUN_AS, RUN_AS)
    os.chmod(hidden, 0o311)
    if os.geteuid() == 0:
        assert _check(capsys, lay)[1] == []  # control: root lists it, nothing is there

    def check() -> tuple[int, list[dict[str, str]]]:
        return _check(capsys, lay)

    code, found = as_run_as_uid(check)
    assert code != 0 and [f["rule"] for f in found] == ["PC064"], found
    assert found[0]["path"] == str(hidden) and "cannot be listed" in found[0]["message"]


def test_a_link_the_run_as_uid_cannot_resolve_makes_the_scan_incomplete(shared: Path) -> None:
    root = shared / "ws"
    root.mkdir()
    private = shared / "private"
    (private / "d").mkdir(parents=True)
    os.chmod(private, 0o700 if os.geteuid() == 0 else 0o000)  # root's own, or nobody's
    (root / "lib").symlink_to(private / "d")
    if os.geteuid() == 0:  # control: root resolves it, and it leads outside
        assert projectlayers.scan(str(root)).outside == (
            Outside(str(root / "lib"), str(private / "d")),
        )
    seen = as_run_as_uid(lambda: projectlayers.scan(str(root)))
    assert seen.unlisted == (str(root / "lib"),) and not seen.complete and seen.outside == ()
