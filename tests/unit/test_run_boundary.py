"""`build_boundary`'s argv and environment, property by property (no process is started; the
real bwrap and Codex runs are tests/integration/test_run_boundary_codex.py)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from profilec.compiled import Compiled, compile_step
from profilec.emit.requirements import render_requirements
from profilec.errors import TrustError, UnsafeRootError, UsageError
from profilec.flags import CompileFlags
from profilec.inputs import Inputs
from profilec.models.mounts import PlanLayout
from profilec.paths import PARENT_GIT_DIR
from profilec.run import boundary as run_boundary
from profilec.run.boundary import HOME_WRITES, OWNED_ENV, Boundary, build_boundary
from tests.integration.test_identities_codex import two_identities

#: The session's uid: another one when we are root (the setpriv prefix), else ourselves.
RUN_AS = 65534 if os.geteuid() == 0 else os.geteuid()


def compile_a1(lay: dict[str, Any], **extra: Any) -> Compiled:
    """Identity a1 of `two_identities`, compiled with its HOME and a TMPDIR of its own
    (`home=None`: without a HOME)."""
    a1: Path = lay["a1"]
    (a1 / "tmp").mkdir(exist_ok=True)
    flags = CompileFlags(
        roots=lay["manifest"],
        workspace_roots=(str(a1 / "ws"),),
        codex_home=str(a1 / "codex-home"),
        tmpdir=str(a1 / "tmp"),
        **{"home": str(a1 / "home"), **extra},
    )
    return compile_step(Inputs.of(flags))


@pytest.fixture
def lay(tmp_path: Path) -> dict[str, Any]:
    base = tmp_path / "b"
    base.mkdir()
    os.chmod(base, 0o755)
    return two_identities(base)


@pytest.fixture
def built(lay: dict[str, Any]) -> Iterator[tuple[Compiled, Boundary]]:
    compiled = compile_a1(lay)
    b = build_boundary(compiled, run_as=RUN_AS, extra_env={"OPENAI_API_KEY": "sk-unit-secret"})
    try:
        yield compiled, b
    finally:
        b.cleanup()


def _binds(argv: tuple[str, ...], flag: str) -> dict[str, str]:
    """dest -> source of every `flag SRC DEST` in argv."""
    return {argv[i + 2]: argv[i + 1] for i, a in enumerate(argv) if a == flag}


def _bwrap(argv: tuple[str, ...]) -> tuple[str, ...]:
    return argv[argv.index("bwrap") :]


def test_bwrap_runs_as_the_session_uid(built: tuple[Compiled, Boundary]) -> None:
    _, b = built
    if os.geteuid() != RUN_AS:
        head = ("setpriv", f"--reuid={RUN_AS}", f"--regid={RUN_AS}", "--clear-groups", "--")
        assert b.argv[:5] == head and b.argv[5] == "bwrap"
    else:
        assert b.argv[0] == "bwrap"
    argv = _bwrap(b.argv)
    assert argv[argv.index("--uid") + 1] == str(RUN_AS)
    assert argv[-1] == "--"
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session"):
        assert flag in argv  # --unshare-all holds the pid namespace


def test_uid_0_is_refused(lay: dict[str, Any]) -> None:
    with pytest.raises(UsageError, match="uid 0"):
        build_boundary(compile_a1(lay), run_as=0, extra_env={})


def test_only_root_starts_another_uid(lay: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_a1(lay)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UsageError, match="only root can start the session as uid 1001"):
        build_boundary(compiled, run_as=1001, extra_env={})


def test_the_requirements_are_the_sessions_own_read_only_file(
    built: tuple[Compiled, Boundary],
) -> None:
    compiled, b = built
    source = _binds(b.argv, "--ro-bind")["/etc/codex"]
    assert not source.startswith("/etc")  # never the host's file
    text = (Path(source) / "requirements.toml").read_text(encoding="utf-8")
    assert text == render_requirements(compiled.bundle)
    assert "/etc/codex" not in _binds(b.argv, "--bind")
    b.cleanup()
    assert not Path(source).exists()  # cleanup removes what it made


def test_codex_home_is_read_only_but_the_paths_codex_writes(
    built: tuple[Compiled, Boundary], lay: dict[str, Any]
) -> None:
    _, b = built
    home = str(lay["a1"] / "codex-home")
    ro, rw = _binds(b.argv, "--ro-bind"), _binds(b.argv, "--bind")
    assert ro[home] == home and home not in rw
    writes = {f"{home}/{w.path}" for w in HOME_WRITES}
    assert writes <= set(rw)
    argv = list(b.argv)
    assert argv.index(home) < min(argv.index(w) for w in writes)  # the writes come after
    assert not any(p.startswith(home) for p in set(rw) - writes)
    made = {w.path for w in HOME_WRITES} - {"sessions", "auth.lock"}  # two_identities has those
    for name in made:  # made for the session's uid, so that bwrap can bind them
        assert os.lstat(f"{home}/{name}").st_uid == RUN_AS
    assert b.env["CODEX_SQLITE_HOME"] == f"{home}/sqlite"  # a write path: kept from commands


def test_a_link_at_a_write_path_is_refused(lay: dict[str, Any]) -> None:
    compiled = compile_a1(lay)
    sessions = lay["a1"] / "codex-home" / "sessions"
    sessions.rename(sessions.with_name("old-sessions"))
    sessions.symlink_to(lay["manifest"].parent / "vaults" / "a1")
    with pytest.raises(UnsafeRootError, match="not a directory"):
        build_boundary(compiled, run_as=RUN_AS, extra_env={})


def test_other_identities_are_not_there(
    built: tuple[Compiled, Boundary], lay: dict[str, Any]
) -> None:
    _, b = built
    a2 = str(lay["a2"])
    sources = [*_binds(b.argv, "--ro-bind").values(), *_binds(b.argv, "--bind").values()]
    vault2 = str(lay["manifest"].parent / "vaults" / "a2")
    assert not any(s.startswith(a2) or s.startswith(vault2) for s in sources)
    assert not any(a2 in v for v in b.env.values())


def test_the_trusted_base_and_vouched_cwd_are_read_only(
    lay: dict[str, Any], tmp_path: Path
) -> None:
    compiled = compile_a1(lay)
    cwd = tmp_path / "mcp-cwd"
    cwd.mkdir()
    servers = {"files": {"cwd": str(cwd), "command": "/bin/true", "args": [], "env": {}}}
    update = {"vouched_mcp_servers": servers, "vouched_mcp_codex": "/bin/true"}
    bundle = compiled.bundle.model_copy(update=update)
    b = build_boundary(compiled._replace(bundle=bundle), run_as=RUN_AS, extra_env={})
    try:
        ro, rw = _binds(b.argv, "--ro-bind"), _binds(b.argv, "--bind")
        assert ro[str(cwd)] == str(cwd) and str(cwd) not in rw
        read = [
            t.path
            for t in bundle.trusted_base
            if t.access == "read" and t.kind == "dir" and t.source in ("policy", "discovered")
        ]
        assert read  # the system, profilec's package directory, the pinned Codex when cached
        for path in read:
            assert path in ro or path == "/etc", path  # /etc: bound entry by entry
        package = os.path.dirname(os.path.realpath(run_boundary.__file__))
        assert any(package.startswith(p) for p in ro), package
    finally:
        b.cleanup()


def test_each_workspace_root_is_bound_as_compiled(
    built: tuple[Compiled, Boundary], lay: dict[str, Any]
) -> None:
    _, b = built
    ws = str(lay["a1"] / "ws")
    assert _binds(b.argv, "--bind")[ws] == ws
    argv = _bwrap(b.argv)
    assert argv[argv.index("--chdir") + 1] == ws


def test_a_workspace_root_swapped_after_compile_is_refused(
    lay: dict[str, Any], tmp_path: Path
) -> None:
    compiled = compile_a1(lay)
    ws = lay["a1"] / "ws"
    ws.rename(ws.with_name("ws-old"))
    ws.symlink_to(lay["manifest"].parent / "vaults" / "a1")
    bases = ("/tmp", run_boundary.RUN_BASE)

    def listed() -> set[str]:
        return {f"{b}/{n}" for b in bases if os.path.isdir(b) for n in os.listdir(b)}

    before = listed()
    with pytest.raises(UnsafeRootError, match="no longer resolves to itself"):
        build_boundary(compiled, run_as=RUN_AS, extra_env={})
    assert not {n for n in listed() - before if "/profilec-run-" in n}


def test_the_environment_is_the_launch_documents_and_no_value_is_on_the_command_line(
    built: tuple[Compiled, Boundary], lay: dict[str, Any]
) -> None:
    _, b = built
    a1 = lay["a1"]
    assert b.env["CODEX_HOME"] == str(a1 / "codex-home")
    assert b.env["GIT_DIR"] == PARENT_GIT_DIR
    assert b.env["HOME"] == str(a1 / "home")
    assert b.env["TMPDIR"] == str(a1 / "tmp")
    assert b.env["PATH"].split(":")[0].startswith("/usr")
    assert b.env["OPENAI_API_KEY"] == "sk-unit-secret"
    assert "--setenv" not in b.argv and "--clearenv" not in b.argv
    assert not any("sk-unit-secret" in a for a in b.argv)
    rw = _binds(b.argv, "--bind")
    for d in (b.env["HOME"], b.env["TMPDIR"]):
        assert rw[d] == d


@pytest.mark.parametrize("name", OWNED_ENV)
def test_extra_env_cannot_set_what_the_boundary_owns(lay: dict[str, Any], name: str) -> None:
    with pytest.raises(UsageError, match=name):
        build_boundary(compile_a1(lay), run_as=RUN_AS, extra_env={name: "/x"})


def test_network_is_shared_by_default_and_off_when_asked(lay: dict[str, Any]) -> None:
    compiled = compile_a1(lay)
    for network, shared in ((None, True), (True, True), (False, False)):
        b = build_boundary(compiled, run_as=RUN_AS, extra_env={}, network=network)
        b.cleanup()
        assert ("--share-net" in b.argv) is shared, network


def test_etc_gets_a_mount_point_for_the_requirements_without_writing_the_host(
    built: tuple[Compiled, Boundary],
) -> None:
    """A read-only /etc cannot get /etc/codex made in it: without a host /etc/codex, /etc's
    entries are bound one by one (a link into /proc left out), else /etc whole."""
    _, b = built
    ro = _binds(b.argv, "--ro-bind")
    if os.path.lexists("/etc/codex"):
        assert ro["/etc"] == "/etc"
    else:
        assert "/etc" not in ro and ro["/etc/passwd"] == "/etc/passwd"
        links = _binds(b.argv, "--symlink")
        into_proc = [p for p in links if os.path.realpath(p).startswith("/proc/")]
        assert not into_proc and not any(s.startswith("/proc/") for s in ro.values())
        assert not os.path.lexists("/etc/codex")


def _with_layout(compiled: Compiled, lay: dict[str, Any], **keys: Any) -> Compiled:
    """`compiled` as if compiled with a plan layout (`--plan-layout`) of these keys."""
    a1: Path = lay["a1"]
    doc = {
        "schema_version": 1,
        "daemon_root": str(lay["manifest"].parent / "daemon"),
        "agent_home": str(a1 / "codex-home"),
        "workspace_roots": [str(a1 / "ws")],
        "state_dir": str(lay["manifest"].parent / "daemon" / "state"),
        "backends": ["codex"],
        **keys,
    }
    return compiled._replace(layout=PlanLayout.model_validate(doc, strict=False))


def test_a_plan_layouts_network_and_roots(lay: dict[str, Any]) -> None:
    """The layout's `network` when it sets one, shared when it leaves it out; its workspace
    roots must be the compiled ones (those are what is bound)."""
    compiled = compile_a1(lay)
    for keys, shared in (({}, True), ({"network": False}, False), ({"network": True}, True)):
        b = build_boundary(_with_layout(compiled, lay, **keys), run_as=RUN_AS, extra_env={})
        b.cleanup()
        assert ("--share-net" in b.argv) is shared, keys
    other = {"workspace_roots": [str(lay["a1"] / "home")]}
    with pytest.raises(UsageError, match="not the compiled ones"):
        build_boundary(_with_layout(compiled, lay, **other), run_as=RUN_AS, extra_env={})


def test_without_a_plan_layout_the_home_must_be_compiled(lay: dict[str, Any]) -> None:
    with pytest.raises(UsageError, match="--home"):
        build_boundary(compile_a1(lay, home=None), run_as=RUN_AS, extra_env={})


def test_denied_paths_and_writable_roots_exist_inside_as_empty_mounts(
    built: tuple[Compiled, Boundary], lay: dict[str, Any]
) -> None:
    """Codex's inner sandbox needs a mount point at each denied path and its mount targets in
    each writable root: another identity's vault and homes are empty tmpfs, never binds; every
    profile's writable root is under a read-write bind or a tmpfs."""
    compiled, b = built
    argv = b.argv
    tmpfs = {argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"}
    rw = set(_binds(argv, "--bind"))
    a2: Path = lay["a2"]
    for path in (lay["manifest"].parent / "vaults" / "a2", a2 / "codex-home", a2 / "home"):
        assert str(path) in tmpfs, path
    writable = [
        k
        for p in compiled.bundle.profiles
        for k, v in p.codex_table()["filesystem"].items()
        if v == "write" and k.startswith("/")
    ]
    assert writable
    for path in writable:
        assert any(path == d or path.startswith(d + "/") for d in tmpfs | rw), path


def test_the_boundarys_own_directory_is_one_the_session_uid_can_reach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temp dir may sit below a directory the session's uid cannot search (pytest's 0700
    base, a daemon's private TMPDIR): for another uid the boundary's directory is made in a
    root-owned 0711 base, and a base others could write is refused (the control: the same
    check passes the base it made itself)."""
    if os.geteuid() != 0:
        pytest.skip("the base for another uid is root's: run as root")
    base = tmp_path / "run-profilec"
    monkeypatch.setattr(run_boundary, "RUN_BASE", str(base))
    assert run_boundary._state_base(os.geteuid()) is None  # the caller's own temp dir
    assert run_boundary._state_base(RUN_AS) == str(base)
    st = os.lstat(base)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o711)
    os.chmod(base, 0o777)
    with pytest.raises(TrustError, match="others can search but not write"):
        run_boundary._state_base(RUN_AS)
