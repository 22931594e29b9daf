"""The trusted side's own state stays read-only in every compiled mode (issue 40, items 1, 2, 4
and 6): each vouched MCP server's cwd (its wrapper's CODEX_HOME), the launch PATH's directories
before the system ones, the directory holding each workspace root, and every other identity's
declared workspace directories and TMPDIR; and `check`'s PC070/PC071 outside the sandbox.
The real-binary cells are tests/integration/test_trusted_state_codex.py."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.check.lints.ownership import identity_findings, trusted_state_findings
from profilec.cli import main
from profilec.codex.resolve import session_contexts
from profilec.compile import resolve_emitted
from profilec.errors import UnsafeRootError
from profilec.flags import CompileFlags
from profilec.inputs import Inputs
from profilec.models.compiled import CompiledBundle, TrustedPath
from profilec.rule_ids import IDENTITY_DIRS_UNDECLARED, TRUSTED_STATE_WRITABLE
from profilec.trustedbase import (
    LAUNCH_PATH_DIR,
    MCP_SERVER_CWD,
    WORKSPACE_HOLDER,
    launch_path_dirs,
)
from tests.audit_helpers import setup
from tests.helpers import make_layout

NOBODY = 65534
#: chown needs root; and as another uid the directories this test makes are that uid's own.
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")


@pytest.fixture
def base() -> Iterator[Path]:
    """A 0755 scratch directory under /var/tmp: a CODEX_HOME may not lie under /tmp, and a
    vouched MCP server's cwd may not either."""
    d = Path(tempfile.mkdtemp(prefix="profilec-trusted-state-", dir="/var/tmp"))
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _access(bundle: CompiledBundle, mode: str, path: str) -> str | None:
    """The access of the entry exactly at `path` in `mode`'s profile (None: no entry)."""
    for e in bundle.profile_for(mode).entries:
        if e.path == path:
            return e.access
    return None


def _winner(bundle: CompiledBundle, mode: str, path: str) -> str | None:
    """What the emitted profile of `mode` gives `path` (Codex's rules, cwd at the workspace)."""
    profile = bundle.profile_for(mode)
    ctx = session_contexts(list(profile.workspace_roots), tmpdir=bundle.layout.tmpdir)
    return resolve_emitted(profile, ctx[:1])[0].winner(path)[0]


def _mcp(base: Path, cwd: Path) -> Path:
    f = base / "mcp.toml"
    f.write_text(
        'schema_version = 2\ncodex = "/usr/bin/true"\n'
        f'[servers.files]\ncommand = "/usr/bin/python3"\nargs = ["-V"]\ncwd = "{cwd}"\n'
    )
    os.chmod(f, 0o600)
    return f


def test_launch_path_dirs_are_those_before_the_system_ones() -> None:
    assert launch_path_dirs("/a/bin:/b//bin/:/usr/bin:/c/bin") == ("/a/bin", "/b/bin")
    assert launch_path_dirs("/usr/local/bin:/x") == ()
    assert launch_path_dirs("/a:/a:/bin") == ("/a",)


@pytest.mark.parametrize("path", ["bin:/usr/bin", ":/usr/bin", "/a::/usr/bin", ".:/bin"])
def test_a_relative_launch_path_entry_is_refused(path: str) -> None:
    with pytest.raises(UnsafeRootError, match="is relative") as exc:
        launch_path_dirs(path)
    assert exc.value.exit_code == 5


def test_the_trusted_state_is_read_only_where_a_mode_writes(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lay = make_layout(base / "l")
    cwd = base / "daemon" / "files"
    cwd.mkdir(parents=True)
    evil = base / "home" / ".local" / "bin"  # missing: a command must not create it either
    monkeypatch.setenv("PATH", f"{evil}:/usr/bin:/bin")
    bundle = load_and_compile(
        str(lay.manifest),
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
        vouched_mcp_path=str(_mcp(base, cwd)),
    )
    roles = {t.path: t.role for t in bundle.trusted_base}
    assert roles[str(cwd)] == MCP_SERVER_CWD
    assert roles[str(evil)] == LAUNCH_PATH_DIR
    assert roles[str(base / "l")] == WORKSPACE_HOLDER
    # agent-full-access writes /var: each is read-only there (a `read` entry on it or on the
    # directory above it; the missing PATH directory is masked), the workspace root inside its
    # holder keeps its `write`; agent writes only the workspace and temp: no entry needed.
    for path in (cwd, evil, base / "l"):
        assert _winner(bundle, "agent-full-access", str(path)) == "read", path
        assert _winner(bundle, "agent", str(path)) == "read", path
        assert _access(bundle, "agent", str(path)) is None, path
    assert _access(bundle, "agent-full-access", str(base / "l")) == "read"
    assert _winner(bundle, "agent-full-access", str(lay.workspace)) == "write"


def test_a_workspace_root_directly_in_a_writable_root_is_refused(
    base: Path, tmp_path: Path
) -> None:
    lay = make_layout(base / "l")
    tmp = base / "tmp"
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    with pytest.raises(UnsafeRootError, match="lies directly in writable root") as exc:
        load_and_compile(
            str(lay.manifest),
            workspace_roots=[str(ws)],
            codex_home=str(lay.codex_home),
            tmpdir=str(tmp),
        )
    assert exc.value.exit_code == 5
    assert f"writable root {tmp}" in exc.value.message
    # One level down (a directory of its own in TMPDIR) compiles: the holder is read-only.
    (tmp / "s1" / "ws").mkdir(parents=True)
    bundle = load_and_compile(
        str(lay.manifest),
        workspace_roots=[str(tmp / "s1" / "ws")],
        codex_home=str(lay.codex_home),
        tmpdir=str(tmp),
    )
    assert _access(bundle, "agent", str(tmp / "s1")) == "read"
    assert _access(bundle, "agent", str(tmp / "s1" / "ws")) == "write"


def _identities(base: Path, *, declare: bool) -> tuple[Path, dict[str, Path]]:
    lay = make_layout(base / "a")
    other = {n: base / "b" / n for n in ("codex-home", "ws", "tmp")}
    for p in other.values():
        p.mkdir(parents=True)
    extra = f'\n[[identities]]\nid = "b"\ncodex_home = "{other["codex-home"]}"\n'
    if declare:
        extra += f'workspace_roots = ["{other["ws"]}"]\ntmpdir = "{other["tmp"]}"\n'
    lay.manifest.write_text(lay.manifest.read_text() + extra)
    return lay.manifest, {
        "ws": lay.workspace,
        "codex-home": lay.codex_home,
        **{f"b-{k}": v for k, v in other.items()},
    }


def test_every_other_identity_s_workspace_and_tmpdir_are_denied(base: Path) -> None:
    manifest, d = _identities(base, declare=True)
    bundle = load_and_compile(
        str(manifest), workspace_roots=[str(d["ws"])], codex_home=str(d["codex-home"])
    )
    whats = {f.path: f.what for f in bundle.other_identities}
    assert whats[str(base / "b" / "ws")] == "workspace"
    assert whats[str(base / "b" / "tmp")] == "tmpdir"
    for p in bundle.profiles:
        for path in (base / "b" / "ws", base / "b" / "tmp"):
            assert _access(bundle, p.mode, str(path)) == "deny", (p.mode, path)


def test_a_session_inside_another_identity_s_workspace_is_refused(base: Path) -> None:
    manifest, d = _identities(base, declare=True)
    inside = d["b-ws"] / "mine"
    inside.mkdir()
    with pytest.raises(UnsafeRootError, match="holds this session's workspace root"):
        load_and_compile(
            str(manifest), workspace_roots=[str(inside)], codex_home=str(d["codex-home"])
        )


def _trusted(path: Path, role: str) -> TrustedPath:
    return TrustedPath(
        path=str(path), declared=str(path), access="read", kind="dir", source="input", role=role
    )


@root_only
def test_pc070_a_trusted_state_directory_the_run_as_uid_can_write(base: Path) -> None:
    cwd = base / "daemon" / "files"
    cwd.mkdir(parents=True)
    t = [_trusted(cwd, MCP_SERVER_CWD), _trusted(base / "home" / "bin", LAUNCH_PATH_DIR)]
    assert trusted_state_findings(t, NOBODY) == []
    assert trusted_state_findings(t, 0) == []
    os.chown(cwd, NOBODY, NOBODY)  # the run-as uid owns the wrapper's CODEX_HOME
    found = trusted_state_findings(t, NOBODY)
    assert [f.rule for f in found] == [TRUSTED_STATE_WRITABLE]
    assert f"{MCP_SERVER_CWD} {cwd}: uid {NOBODY}" in found[0].message
    # as root, a directory another user owns is theirs to plant in
    assert [f.path for f in trusted_state_findings(t, 0)] == [str(cwd)]
    os.chown(cwd, 0, 0)
    # a missing PATH directory in a directory the uid owns can be created
    (base / "home").mkdir()
    os.chown(base / "home", NOBODY, NOBODY)
    found = trusted_state_findings(t, NOBODY)
    assert [f.path for f in found] == [str(base / "home" / "bin")]
    assert "can create" in found[0].message
    # an ancestor the uid can write lets it rename the directory away
    os.chown(base / "home", 0, 0)
    os.chown(base / "daemon", NOBODY, NOBODY)
    found = trusted_state_findings(t, NOBODY)
    assert [f.path for f in found] == [str(cwd)] and "rename" in found[0].message
    # a world-writable sticky directory (like /tmp) lets only owners rename
    os.chown(base / "daemon", 0, 0)
    os.chmod(base / "daemon", 0o1777)
    assert trusted_state_findings(t, NOBODY) == []
    os.chown(cwd, NOBODY, NOBODY)
    assert [f.path for f in trusted_state_findings(t, NOBODY)] == [str(cwd)]


@root_only
def test_pc071_identities_sharing_the_run_as_uid_declare_their_directories(base: Path) -> None:
    manifest, d = _identities(base, declare=False)
    idents = Inputs(CompileFlags.from_text(roots=str(manifest))).manifest().identities
    assert len(idents) == 1
    # one declared identity alone, or identities on different uids: nothing to say
    assert identity_findings(idents, str(d["codex-home"]), [str(d["ws"])], None, 0) == []
    a = type(idents[0])(id="a", codex_home=str(d["codex-home"]), workspace_roots=[str(base / "a")])
    both = [a, idents[0]]
    found = identity_findings(both, str(d["codex-home"]), [str(d["ws"])], None, 0)
    assert [f.rule for f in found] == [IDENTITY_DIRS_UNDECLARED] * 2
    assert "identity a shares run-as uid 0 with b and declares no tmpdir" in found[0].message
    assert "identity b" in found[1].message and "workspace_roots or tmpdir" in found[1].message
    os.chown(d["b-codex-home"], NOBODY, NOBODY)  # b runs as another uid now
    assert identity_findings(both, str(d["codex-home"]), [str(d["ws"])], None, 0) == []
    os.chown(d["b-codex-home"], 0, 0)
    a = a.model_copy(update={"tmpdir": str(base / "a-tmp")})
    b = idents[0].model_copy(
        update={"workspace_roots": [str(d["b-ws"])], "tmpdir": str(d["b-tmp"])}
    )
    ok = identity_findings([a, b], str(d["codex-home"]), [str(d["ws"])], str(base / "a-tmp"), 0)
    assert ok == []
    # the session's own TMPDIR outside what its identity declares
    out = identity_findings([a, b], str(d["codex-home"]), [str(d["ws"])], "/var/tmp/x", 0)
    assert [f.path for f in out] == ["/var/tmp/x"]


@root_only
def test_check_cli_refuses_a_launch_path_directory_another_user_can_write(
    base: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(base / "l")
    bindir = base / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    argv = ["check", *flags, "--no-project-config", "--format", "json"]
    assert main(argv) == 0, capsys.readouterr().out
    capsys.readouterr()
    os.chmod(bindir, 0o777)
    assert main(argv) == 1
    found = [
        (f["rule"], f["path"])
        for f in json.loads(capsys.readouterr().out)["findings"]
        if f["severity"] == "error"
    ]
    assert found == [(TRUSTED_STATE_WRITABLE, str(bindir))]
    assert main([*argv, "--ignore", TRUSTED_STATE_WRITABLE]) == 2  # not waivable


def test_a_workspace_root_directly_in_slash_tmp_is_refused(base: Path) -> None:
    lay = make_layout(base / "l")
    ws = Path(tempfile.mkdtemp(prefix="profilec-ws-", dir="/tmp"))
    try:
        with pytest.raises(UnsafeRootError, match="lies directly in writable root /tmp") as exc:
            load_and_compile(
                str(lay.manifest), workspace_roots=[str(ws)], codex_home=str(lay.codex_home)
            )
        assert exc.value.where == "mode agent"
    finally:
        ws.rmdir()
