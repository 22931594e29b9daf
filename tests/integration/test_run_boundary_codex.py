"""`profilec run`'s outer boundary with the real bwrap and Codex, as uid 65534 (needs root).

Per Codex core (0.171.0 and the 0.166.0 codex-acp bundles): a `codex exec` turn against the
scripted model starts and completes inside the boundary (CODEX_HOME read-only but for the
measured write paths, the session's requirements over /etc/codex), writes its rollout under
sessions/ on the host, and its model command cannot plant CODEX_HOME/.env; a login saves
through the read-only CODEX_HOME. Each ACP adapter (the TypeScript one on its bundled 0.166.0,
zed's with its embedded core) completes a prompt's turn inside the boundary.

Without Codex (the parent's own uid is the strongest position inside: no config layer grants
more): a `.env` and config.toml plant in CODEX_HOME fails inside and succeeds without the
boundary; /etc/codex inside is the session's document, on the host it is not; a workspace root
swapped for a link to the vault after the start is unchanged inside, while a process outside
the boundary follows the link to the credential; another identity's CODEX_HOME and HOME are
not there (readable without the boundary); a vouched MCP server's cwd cannot be planted.
"""

from __future__ import annotations

import os
import re
import selectors
import shlex
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from profilec.compiled import Compiled
from profilec.e2e.acp import acp_process
from profilec.e2e.adapters import ts_adapter, zed_adapter
from profilec.emit.codex_home import write_codex_home
from profilec.emit.overrides import override_lines
from profilec.emit.requirements import HEADER, render_requirements
from profilec.run.boundary import HOME_WRITES, Boundary, build_boundary
from profilec.scripted_model import ScriptedModelServer
from tests.helpers import give
from tests.integration.conftest import missing
from tests.integration.test_identities_codex import two_identities
from tests.unit.test_run_boundary import compile_a1

pytestmark = [pytest.mark.bwrap, pytest.mark.codex]

UID = 65534
SETPRIV = ("setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--")


@dataclass
class Session:
    lay: dict[str, Any]
    compiled: Compiled
    boundary: Boundary
    requirements: str

    @property
    def home(self) -> Path:
        return Path(self.lay["a1"]) / "codex-home"

    @property
    def ws(self) -> Path:
        return Path(self.lay["a1"]) / "ws"

    @property
    def vault(self) -> Path:
        return Path(self.lay["manifest"]).parent / "vaults" / "a1"

    @property
    def key(self) -> str:
        return (self.vault / "auth.json").read_text(encoding="utf-8").split('"')[3]


@pytest.fixture
def session(var_tmp_base: Path) -> Iterator[Session]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        missing("the boundary runs the session as uid 65534: needs root and setpriv")
    if shutil.which("bwrap") is None:
        missing("bwrap is not installed (apt-get install -y bubblewrap; see .ci/tools.sh)")
    lay = two_identities(var_tmp_base)
    a1: Path = lay["a1"]
    (a1 / "tmp").mkdir()
    give(UID, a1, lay["manifest"].parent / "vaults" / "a1")
    compiled = compile_a1(lay, run_as=UID)
    write_codex_home(compiled.bundle, str(a1 / "codex-home"), owner=UID)
    b = build_boundary(compiled, run_as=UID, extra_env={"OPENAI_API_KEY": "sk-profilec-test"})
    try:
        yield Session(lay, compiled, b, render_requirements(compiled.bundle))
    finally:
        b.cleanup()


def _sh(prefix: tuple[str, ...], env: dict[str, str], script: str) -> str:
    proc = subprocess.run(
        [*prefix, "/bin/sh", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.stdout + proc.stderr


def _exec(
    b: Boundary, core: Path, probe: str, *args: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    """One `codex exec` session in boundary `b` against the scripted model running `probe`;
    the process and the tool outputs the model saw."""
    with ScriptedModelServer(probes=[probe]) as srv:
        argv = [str(core), "exec", "--skip-git-repo-check"]
        for o in [*srv.provider_overrides(), 'approval_policy="never"']:
            argv += ["-c", o]
        proc = subprocess.run(
            [*b.argv, *argv, *args],
            env=dict(b.env),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return proc, "\n".join(srv.tool_outputs().values())


def test_a_codex_turn_completes_inside_the_boundary(core: Path, session: Session) -> None:
    s = session
    before = set(s.home.joinpath("sessions").rglob("*.jsonl"))
    probe = (
        "id -u; head -1 /etc/codex/requirements.toml; "
        'echo PATH=/planted > "$CODEX_HOME/.env" && echo PLANTED'
    )
    proc, outputs = _exec(s.boundary, core, probe, "run the probe")
    cell = f"rc={proc.returncode}\n{outputs}\n--- stderr\n{proc.stderr[-2000:]}"
    assert proc.returncode == 0 and outputs, cell  # the turn ran its command and completed
    assert f"\n{UID}\n" in outputs and HEADER.strip() in outputs, cell
    assert "PLANTED" not in outputs and not (s.home / ".env").exists(), cell
    assert set(s.home.joinpath("sessions").rglob("*.jsonl")) - before, cell  # parent wrote
    assert "Read-only file system" not in proc.stderr.replace(".env: Read-only", ""), cell


PLANT = (
    'echo PATH=/planted > "$CODEX_HOME/.env" && echo ENV-PLANTED; '
    'echo "# x" >> "$CODEX_HOME/config.toml" && echo CONFIG-WRITTEN; '
    'echo x > "$CODEX_HOME/sessions/probe" && echo SESSIONS-WRITABLE'
)


def test_codex_home_cannot_be_planted_inside_and_can_without_the_boundary(
    session: Session,
) -> None:
    s = session
    config = (s.home / "config.toml").read_bytes()
    inside = _sh(s.boundary.argv, dict(s.boundary.env), PLANT)
    assert "ENV-PLANTED" not in inside and "CONFIG-WRITTEN" not in inside, inside
    assert "Read-only file system" in inside, inside
    assert "SESSIONS-WRITABLE" in inside, inside  # a measured write path stays writable
    assert not (s.home / ".env").exists() and (s.home / "config.toml").read_bytes() == config
    control = _sh(SETPRIV, dict(s.boundary.env), PLANT)  # the same uid, no boundary
    assert "ENV-PLANTED" in control and "CONFIG-WRITTEN" in control, control
    assert (s.home / ".env").exists()


def test_etc_codex_inside_is_the_sessions_document(session: Session) -> None:
    s = session
    script = "cat /etc/codex/requirements.toml; echo x >> /etc/codex/requirements.toml && echo W"
    inside = _sh(s.boundary.argv, dict(s.boundary.env), script)
    assert inside.startswith(s.requirements) and "\nW\n" not in inside, inside
    control = _sh(SETPRIV, dict(s.boundary.env), "cat /etc/codex/requirements.toml")
    assert s.requirements not in control, control  # the host's file is not the session's


def _line(out: IO[str], deadline: float) -> str:
    """The next line from `out`, waiting at most until `deadline`."""
    with selectors.DefaultSelector() as sel:
        sel.register(out, selectors.EVENT_READ)
        if not sel.select(max(0.0, deadline - time.monotonic())):
            raise AssertionError("no line before the deadline")
    return out.readline()


def _swap_seen(prefix: tuple[str, ...], s: Session) -> str:
    """Start a process in the workspace, swap the host path for a link to the vault once it
    runs, then let it read `auth.json` by the workspace's path."""
    script = f'echo READY; read go; cat "{s.ws}/auth.json"; ls "{s.ws}"; echo END'
    proc = subprocess.Popen(
        [*prefix, "/bin/sh", "-c", script],
        env=dict(s.boundary.env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert _line(proc.stdout, time.monotonic() + 60) == "READY\n"
        s.ws.rename(s.ws.with_name("ws-before"))
        s.ws.symlink_to(s.vault)
        proc.stdin.write("go\n")
        proc.stdin.close()
        out = proc.stdout.read()
    finally:
        proc.kill()
        proc.wait()
    s.ws.unlink()
    s.ws.with_name("ws-before").rename(s.ws)
    return out


def test_a_workspace_swapped_after_the_start_is_unchanged_inside(session: Session) -> None:
    s = session
    (s.ws / "kept.txt").write_text("kept\n")
    inside = _swap_seen(s.boundary.argv, s)
    assert s.key not in inside and "kept.txt" in inside and "END" in inside, inside
    control = _swap_seen(SETPRIV, s)  # the same uid, no boundary: it follows the link
    assert s.key in control, control


def test_a_login_saves_through_the_read_only_codex_home(core: Path, session: Session) -> None:
    """The writer's lock (a write path) and the vault (bound read-write by the plan) are all a
    login save needs, through the CODEX_HOME link (0.171.0 renames a new file over the
    credential; 0.166.0 kept the inode, measured here)."""
    s = session
    key = "sk-" + s.key.lower()
    proc = subprocess.run(
        [*s.boundary.argv, str(core), "login", "--with-api-key"],
        env=dict(s.boundary.env),
        input=key + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert key in (s.vault / "auth.json").read_text(encoding="utf-8")
    assert (s.home / "auth.json").is_symlink()


ADAPTERS = {"ts-0.166.0": lambda: ts_adapter(bundled_codex=True), "zed": zed_adapter}


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_each_acp_adapter_completes_a_turn_inside_the_boundary(session: Session, name: str) -> None:
    """Both adapters through ACP (initialize, session/new, one prompt) with CODEX_HOME
    read-only but the write paths; the provider is a config layer in CODEX_HOME/config.toml,
    written before the start as a launcher would (the boundary keeps it read-only after)."""
    s = session
    adapter = ADAPTERS[name]()
    if adapter.missing is not None:
        missing(adapter.missing)
    env = dict(s.boundary.env)
    if adapter.wrap_codex is not None:
        env["CODEX_PATH"] = adapter.wrap_codex
    config = s.home / "config.toml"
    with ScriptedModelServer(probes=["id -u"]) as srv:
        config.write_text("\n".join(srv.provider_overrides()) + "\n" + config.read_text())
        with acp_process([*s.boundary.argv, *adapter.argv], env, str(s.ws)) as client:
            sid = client.new_session()["sessionId"]
            stop = client.prompt(sid, "run the probe")
        outputs = "\n".join(srv.tool_outputs().values())
    assert stop == "end_turn" and f"\n{UID}\n" in outputs, (stop, outputs)


def test_a_session_resumes_in_a_new_boundary(core: Path, session: Session) -> None:
    """The next boundary (its own temp dir, its own requirements) resumes the thread: its
    rollout in sessions/ and its SQLite state in sqlite/ outlive the first boundary."""
    s = session
    proc, outputs = _exec(s.boundary, core, "echo first", "run the probe")
    found = re.search(r"session id: (\S+)", proc.stderr)
    assert proc.returncode == 0 and outputs and found, proc.stderr[-1500:]
    again = build_boundary(s.compiled, run_as=UID, extra_env={"OPENAI_API_KEY": "sk-test"})
    try:
        assert (s.home / "sqlite").is_dir() and any((s.home / "sqlite").iterdir())
        proc, outputs = _exec(again, core, "echo second", "resume", found.group(1), "again")
    finally:
        again.cleanup()
    assert proc.returncode == 0 and "second" in outputs, proc.stderr[-1500:]
    assert f"session id: {found.group(1)}" in proc.stderr, proc.stderr[-1500:]


def test_another_identity_is_not_there(session: Session) -> None:
    s = session
    a2: Path = s.lay["a2"]
    script = f'cat "{a2}/codex-home/sessions/rollout.jsonl" "{a2}/home/.bashrc"; ls -d "{a2}"'
    mark = s.lay["marks"]["a2"]
    inside = _sh(s.boundary.argv, dict(s.boundary.env), script)
    assert mark not in inside and "No such file or directory" in inside, inside
    control = _sh(SETPRIV, dict(s.boundary.env), script)  # the same uid, no boundary
    assert mark in control, control


def test_a_vouched_servers_cwd_cannot_be_planted_inside(
    session: Session, var_tmp_base: Path
) -> None:
    """The wrapper's CODEX_HOME is the server's cwd: a `.env` there would steer the next
    session's wrapper. Inside, even the parent's uid cannot write it; without the boundary the
    same uid can (a cwd it owns)."""
    s = session
    cwd = var_tmp_base / "mcp" / "files"
    cwd.mkdir(parents=True)
    os.chown(cwd, UID, UID)
    server = {"cwd": str(cwd), "command": "/bin/true", "args": [], "env": {}}
    update = {"vouched_mcp_servers": {"files": server}, "vouched_mcp_codex": "/bin/true"}
    compiled = s.compiled._replace(bundle=s.compiled.bundle.model_copy(update=update))
    b = build_boundary(compiled, run_as=UID, extra_env={})
    plant = f'echo PATH=/planted > "{cwd}/.env" && echo PLANTED'
    try:
        inside = _sh(b.argv, dict(b.env), plant)
    finally:
        b.cleanup()
    assert "PLANTED" not in inside and "Read-only file system" in inside, inside
    assert not (cwd / ".env").exists()
    control = _sh(SETPRIV, dict(b.env), plant)
    assert "PLANTED" in control, control


@pytest.mark.parametrize("mode", ["agent", "agent-full-access"])
def test_model_commands_run_and_cannot_write_the_parents_write_paths(
    core: Path, session: Session, mode: str
) -> None:
    """`codex sandbox` under each writing mode's profile, inside the boundary: the command
    runs (full access too: its writable roots and the denied paths it pins exist inside as
    empty private mounts) and cannot write one of the paths the boundary leaves writable for
    the parent (the parent itself can: test_codex_home_cannot_be_planted...)."""
    s = session
    targets = [s.home / w.path / ("probe" if w.kind == "dir" else "") for w in HOME_WRITES]
    script = "; ".join(f'echo x >> "{t}"' for t in targets) + "; echo RAN"
    args = [str(core), "sandbox"]
    for line in override_lines(s.compiled.bundle):
        args += ["-c", line]
    pid = s.compiled.bundle.profile_for(mode).profile_id
    args += ["-P", pid, "-C", str(s.ws), "--", "/bin/sh", "-c", script]
    out = _sh(s.boundary.argv, dict(s.boundary.env), shlex.join(args))
    assert "RAN" in out and "bwrap:" not in out, out
    for w, t in zip(HOME_WRITES, targets, strict=True):
        assert not t.exists() if w.kind == "dir" else b"x\n" not in t.read_bytes(), (t, out)


def test_bwrap_itself_runs_as_the_session_uid(session: Session) -> None:
    """Started by root (`--uid 65534` in its own user namespace) bwrap cannot even bind the
    0700 CODEX_HOME's files and vault that 65534 owns (measured: `bwrap: Can't find source
    path <CODEX_HOME>/auth.lock: Permission denied`); the boundary drops to the uid first."""
    s = session
    assert os.stat(s.home).st_mode & 0o777 == 0o700 and os.stat(s.home).st_uid == UID
    script = f'ls "{s.home}" >/dev/null && echo HOME-READ; cat "{s.vault}/auth.json"'
    inside = _sh(s.boundary.argv, dict(s.boundary.env), script)
    assert "HOME-READ" in inside and s.key in inside, inside
    argv = s.boundary.argv
    assert argv[0] == "setpriv"
    control = _sh(argv[argv.index("bwrap") :], dict(s.boundary.env), script)
    assert "HOME-READ" not in control and s.key not in control, control
    assert "Permission denied" in control, control


def test_the_network_is_shared_by_default_and_private_when_asked(session: Session) -> None:
    """The default reaches a loopback listener on the host (the model provider; the scripted
    model of the Codex tests is one); `network=False` does not."""
    s = session
    with socket.create_server(("127.0.0.1", 0)) as srv:
        port = srv.getsockname()[1]
        script = f"echo hi > /dev/tcp/127.0.0.1/{port} && echo CONNECTED"
        shared = _sh(s.boundary.argv, dict(s.boundary.env), f"exec bash -c '{script}'")
        private = build_boundary(s.compiled, run_as=UID, extra_env={}, network=False)
        try:
            alone = _sh(private.argv, dict(private.env), f"exec bash -c '{script}'")
        finally:
            private.cleanup()
    assert "CONNECTED" in shared, shared
    assert "CONNECTED" not in alone and "Connection refused" in alone, alone
