"""The outer boundary `profilec run` starts the adapter in: the mount plan, rendered for bwrap.

`build_boundary(compiled, run_as=U, extra_env=...)` returns the argv prefix (ending in `--`;
the adapter argv goes after it), the whole environment the adapter starts with, and a cleanup.
It reuses the one mount plan (compiler/mounts/plan.py, docs/mounts.md) and the launch
document's data (compiler/emit/launch.py: env, GIT_DIR, the writer lock) rather than deriving
either again. Inside it, whatever any config layer grants (docs/run-boundary.md):

* `/etc/codex` is the session's own managed requirements (compiler/emit/requirements.py),
  written to a temp dir this call creates and bound read-only; never the host file;
* CODEX_HOME is read-only except `HOME_WRITES`, the paths Codex writes there (measured with
  strace on 0.171.0 and 0.166.0); the SQLite files go to its `sqlite/` (`CODEX_SQLITE_HOME`);
* vouched MCP servers' cwd and the trusted base's read-only directories (profilec's
  installation, the pinned Codex, the system: what the profiles let commands read) are bound
  read-only;
* other identities' CODEX_HOME, HOME and vaults are hidden (never bound, proved so); what
  the profiles or the requirements deny is an empty private mount, and each writable root of
  the profiles that nothing shows an empty tmpfs, so every mode's inner sandbox starts;
* each workspace root is bound at the canonical path compile resolved, so swapping the host
  path later changes nothing inside; one that no longer resolves to itself is refused;
* bwrap runs as `run_as` (`setpriv` first when that is not us: bwrap started by root cannot
  read a 65534-owned CODEX_HOME or vault), with `--unshare-all` (pid included),
  `--die-with-parent` and `--new-session`; the network namespace is shared unless the layout
  says `network = false` (Codex must reach the model provider).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from ..codex.vocabulary import REQUIREMENTS_FILE, WRITER_LOCK
from ..compiled import Compiled
from ..emit.launch import codex_entries
from ..emit.requirements import deny_read_paths, render_requirements
from ..errors import OutputError, TrustError, UnsafeRootError, UsageError
from ..fsio import primary_gid, write_atomic
from ..models.mounts import MountPlan, PlanLayout
from ..mounts.api import plan_inputs
from ..mounts.plan import REQUIREMENTS_DIR
from ..mounts.render_bwrap import bwrap_argv
from ..paths import is_within


@dataclass(frozen=True, slots=True)
class HomeWrite:
    """A path in CODEX_HOME the trusted parent writes (measured), bound read-write."""

    path: str
    kind: Literal["dir", "file"]
    why: str


SQLITE_ENV = "CODEX_SQLITE_HOME"
#: Where CODEX_SQLITE_HOME points, in CODEX_HOME (one of HOME_WRITES).
SQLITE_DIR = "sqlite"

#: What Codex 0.171.0 and 0.166.0 write in CODEX_HOME, the SQLite files moved to `sqlite/`
#: (`codex exec`, app-server and ACP turns under strace; docs/run-boundary.md has the lists).
#: Each exists before the start (created for `run_as` when missing): bwrap binds only what is.
HOME_WRITES: tuple[HomeWrite, ...] = (
    HomeWrite("sessions", "dir", "rollout files, appended through the session"),
    HomeWrite("tmp", "dir", "the helper links tmp/arg0-linux/codex-arg0XXXXXX, made at start"),
    HomeWrite("thread-writer-locks", "dir", "a lock file per thread and .coordination.lock"),
    HomeWrite("skills", "dir", "skills/.system, removed and unpacked again at every start"),
    HomeWrite(WRITER_LOCK, "file", "the credential writer's lock (login, refresh)"),
    HomeWrite("installation_id", "file", "opened read-write at every start"),
    HomeWrite(
        SQLITE_DIR,
        "dir",
        "CODEX_SQLITE_HOME: the SQLite state, in CODEX_HOME, which every profile keeps from "
        "model commands (the plan's state dir: under the writable /tmp without a plan layout)",
    ),
)

#: The variables the boundary sets itself; `extra_env` may not name them.
OWNED_ENV = ("CODEX_HOME", "CODEX_SQLITE_HOME", "GIT_DIR", "HOME", "PATH", "TMPDIR")


@dataclass(frozen=True, slots=True)
class Boundary:
    """What `profilec run` starts the adapter with: `[*argv, *adapter_argv]` under `env`."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cleanup: Callable[[], None]


def build_boundary(
    compiled: Compiled,
    *,
    run_as: int,
    extra_env: Mapping[str, str],
    network: bool | None = None,
) -> Boundary:
    """The boundary for one session of `compiled` as uid `run_as` (never root). Raises a
    ProfilecError (one line) when it cannot be built; nothing is left behind then."""
    if run_as == 0:
        raise UsageError(
            "the session cannot run as uid 0 inside the boundary: Codex's inner sandbox fails "
            "there (bwrap: setting up uid map: Operation not permitted)",
            where="run",
            hint="pass --run-as 65534, or another unprivileged uid",
        )
    taken = sorted(set(extra_env) & set(OWNED_ENV))
    if taken:
        raise UsageError(
            f"{', '.join(taken)} is set by the boundary itself", where="run", hint="drop it"
        )
    if run_as != os.geteuid() and os.geteuid() != 0:
        raise UsageError(
            f"only root can start the session as uid {run_as}",
            where="run",
            hint=f"run profilec as root, or as uid {run_as}",
        )
    bundle = compiled.bundle
    if bundle.codex_home is None:
        raise UsageError("the boundary binds CODEX_HOME: compile with --codex-home", where="run")
    _check_workspaces(bundle.layout.workspace_roots)
    made = ""
    try:
        made = tempfile.mkdtemp(prefix="profilec-run-", dir=_state_base(run_as))
        os.chmod(made, 0o711)  # run_as (bwrap) passes through to the requirements and state
        plan, env = _prepare(compiled, bundle.codex_home.path, made, run_as, extra_env, network)
    except OSError as exc:
        _remove(made)
        where = exc.filename if isinstance(exc.filename, str) else "run"
        raise OutputError(f"cannot prepare the boundary: {exc.strerror}", where=where) from None
    except BaseException:
        _remove(made)
        raise
    argv = [*_drop_to(run_as), *bwrap_argv(plan, env=False)]
    return Boundary(tuple(argv), env, lambda: _remove(made))


def _prepare(
    compiled: Compiled,
    home: str,
    made: str,
    run_as: int,
    extra_env: Mapping[str, str],
    network: bool | None,
) -> tuple[MountPlan, dict[str, str]]:
    """The plan and the environment; on disk: the write paths in CODEX_HOME, the plan's
    directories and the requirements file in `made`."""
    layout = _layout(compiled, home, made, run_as, network)
    _ensure_home_writes(home, run_as)
    plan = plan_inputs(
        compiled.inputs,
        layout,
        home_writes=[w.path for w in HOME_WRITES],
        scratch=_profile_paths(compiled, "write"),
        empty=_denied(compiled),
    )
    target = os.path.dirname(REQUIREMENTS_FILE)
    for d in plan.directories:
        if d.path != target:  # the host's /etc/codex is never made: see _layout
            _ensure_dir(d.path, int(d.mode, 8), None if d.purpose == "requirements" else run_as)
    req = os.path.join(layout.requirements_dir or "", os.path.basename(REQUIREMENTS_FILE))
    write_atomic(req, render_requirements(compiled.bundle).encode("utf-8"), mode=0o644)
    return plan, _environment(compiled, plan, extra_env)


#: Where root keeps each boundary's own directory (requirements, state) when the session runs as
#: another uid: the temp dir may sit below a directory that uid cannot search (pytest's 0700
#: base, a root daemon's private TMPDIR), and bwrap, run as that uid, must reach its sources.
RUN_BASE = "/run/profilec"


def _state_base(run_as: int) -> str | None:
    """The directory the boundary's own directory is made in: the temp dir when the session
    runs as the caller; for another uid, RUN_BASE (root's, 0711: searchable, not listable),
    made when missing and refused when it is anything else (a link, not root's, writable by
    others)."""
    if run_as == os.geteuid():
        return None
    try:
        os.mkdir(RUN_BASE, 0o711)
        os.chmod(RUN_BASE, 0o711)
    except FileExistsError:
        pass
    st = os.lstat(RUN_BASE)
    if (
        not stat.S_ISDIR(st.st_mode)
        or st.st_uid != 0
        or st.st_mode & 0o022
        or st.st_mode & 0o001 == 0
    ):
        raise TrustError(
            "not a root-owned directory others can search but not write",
            where=RUN_BASE,
            hint=f"remove it (profilec run makes it, 0711) or `chown root: {RUN_BASE}` and "
            f"`chmod 0711 {RUN_BASE}`",
        )
    return RUN_BASE


def _remove(made: str) -> None:
    if made:
        shutil.rmtree(made, ignore_errors=True)


def _drop_to(uid: int) -> list[str]:
    """bwrap itself runs as the session's uid: started by root with `--uid`, it could not read
    the uid's 0700 CODEX_HOME and vault (measured)."""
    if uid == os.geteuid():
        return []
    gid = primary_gid(uid)
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]


def _check_workspaces(roots: tuple[str, ...]) -> None:
    """Each workspace root still is the directory compile resolved (no link on its path)."""
    for ws in roots:
        real = os.path.realpath(ws)
        if real != ws or not os.path.isdir(ws):
            raise UnsafeRootError(
                f"workspace root {ws} no longer resolves to itself ({real})",
                where="run",
                hint="something replaced it after compile: recompile before starting",
            )


def _layout(
    compiled: Compiled, home: str, made: str, run_as: int, network: bool | None
) -> PlanLayout:
    """The plan layout of this session: the compile's (`--plan-layout`), else one built from
    the bundle (daemon root and state in `made`, removed by cleanup), with the requirements
    in `made`, the trusted base and the vouched servers' cwd read-only, every other identity
    hidden, the session's uid and the network shared unless the layout turns it off."""
    bundle = compiled.bundle
    given = compiled.layout
    lay = bundle.layout
    if given is None:
        if lay.home is None:
            raise UsageError(
                "the boundary needs the session's HOME",
                where="run",
                hint="compile with --home DIR (a directory the run-as user owns, so the "
                "profiles protect its login files), or give a plan layout",
            )
        grants = [*lay.workspace_roots]
        for extra in (lay.home, lay.tmpdir):
            if extra is not None and not any(is_within(extra, g) for g in grants):
                grants.append(extra)  # the compiled HOME and TMPDIR, read-write like a root
        given = PlanLayout(
            schema_version=1,
            daemon_root=made,
            agent_home=home,
            workspace_roots=tuple(grants),
            state_dir=os.path.join(made, "state"),
            backends=("codex",),
        )
    elif given.agent_home != home:
        raise UsageError(
            f"the plan layout's agent_home {given.agent_home} is not the compiled CODEX_HOME "
            f"{home}",
            where="run",
        )
    elif given.workspace_roots != lay.workspace_roots:
        raise UsageError(
            f"the plan layout's workspace_roots {list(given.workspace_roots)} are not the "
            f"compiled ones {list(lay.workspace_roots)}",
            where="run",
            hint="name the same canonical roots, in the same order, in both",
        )
    user = f"{run_as}:{primary_gid(run_as)}"
    if given.user is not None and given.user.split(":")[0] != str(run_as):
        raise UsageError(f"the plan layout's user {given.user} is not uid {run_as}", where="run")
    if network is None:  # the layout's; left out, the provider must be reachable
        network = given.network or "network" not in given.model_fields_set
    readonly = [*given.readonly_paths, *_read_only_dirs(compiled)]
    if "/etc" in readonly and not os.path.lexists(os.path.dirname(REQUIREMENTS_FILE)):
        # The requirements need /etc/codex as a mount point, which a read-only /etc cannot
        # get without writing the host's /etc: bind /etc's entries one by one instead.
        readonly = [p for p in readonly if p != "/etc"] + _etc_entries()
    hidden = given.hidden
    others = [f.path for f in bundle.other_identities]
    return given.model_copy(
        update={
            "network": network,
            "user": user,
            "readonly_paths": tuple(dict.fromkeys(readonly)),
            "requirements_dir": os.path.join(made, REQUIREMENTS_DIR),
            "hidden": hidden.model_copy(
                update={"extra": tuple(dict.fromkeys([*hidden.extra, *others]))}
            ),
        }
    )


def _read_only_dirs(compiled: Compiled) -> list[str]:
    """What must be there, read-only: the trusted base's read-only directories (the system,
    profilec's installation, the pinned Codex: the profiles' `read` entries, which issue 39
    saw refused when missing, `bwrap: Can't find source path`) and each vouched MCP server's
    cwd (daemon-owned, read-only to the wrapper)."""
    bundle = compiled.bundle
    out = [
        t.path
        for t in bundle.trusted_base
        if t.access == "read" and t.kind == "dir" and t.source in ("policy", "discovered")
    ]
    out += [str(s["cwd"]) for s in bundle.vouched_mcp_servers.values() if s.get("cwd")]
    return out


def _profile_paths(compiled: Compiled, access: str) -> list[str]:
    """Every literal absolute path a compiled profile gives `access` (`write`, or `none`: a
    deny); the specials (`:slash_tmp`, `:tmpdir`, ...) are /tmp and TMPDIR, which the plan
    shows anyway."""
    out: set[str] = set()
    for p in compiled.bundle.profiles:
        fs = p.codex_table().get("filesystem", {})
        if isinstance(fs, dict):
            out.update(
                k
                for k, v in fs.items()
                if v == access and k.startswith("/") and not any(c in k for c in "*?[")
            )
    return sorted(out)


def _denied(compiled: Compiled) -> list[tuple[str, bool]]:
    """What the profiles and the requirements deny, as the host has it (path, is a file):
    the plan shows each it does not bind as an empty mount (`build_plan` `empty`), so Codex's
    inner sandbox finds a mount point there. lstat only."""
    bundle = compiled.bundle
    paths = {
        *_profile_paths(compiled, "none"),
        *deny_read_paths(bundle),
        *(f.path for f in bundle.other_identities),
    }
    out: list[tuple[str, bool]] = []
    for path in sorted(paths):
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
            out.append((path, stat.S_ISREG(mode)))
    return out


#: Where a host link in /etc may point and still be recreated: the boundary's own /proc and
#: /dev are fresh (e.g. /etc/mtab -> /proc/mounts), never bound from the host.
_OWN_MOUNTS = ("/proc", "/dev")


def _etc_entries() -> list[str]:
    """/etc's files, directories and links but `codex`; a link into /proc or /dev (it would
    bind the host's /proc/<pid>), a dangling link and anything else are left out."""
    out = []
    for name in sorted(os.listdir("/etc")):
        path = os.path.join("/etc", name)
        mode = os.lstat(path).st_mode
        if name == "codex" or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            continue
        if stat.S_ISLNK(mode):
            real = os.path.realpath(path)
            if any(is_within(real, m) for m in _OWN_MOUNTS) or not os.path.exists(path):
                continue
        out.append(path)
    return out


def _ensure_home_writes(home: str, uid: int) -> None:
    """Each of HOME_WRITES exists (created for `uid` when missing) as what it must be: a bind
    follows a link, so a link there is refused."""
    for w in HOME_WRITES:
        path = os.path.join(home, w.path)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        if st is None:
            for d in _missing_parents(home, path):
                _ensure_dir(d, 0o700, uid)
            if w.kind == "dir":
                _ensure_dir(path, 0o700, uid)
            else:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
                try:
                    os.fchown(fd, uid, primary_gid(uid))
                finally:
                    os.close(fd)
            continue
        want = stat.S_ISDIR if w.kind == "dir" else stat.S_ISREG
        if not want(st.st_mode):
            raise UnsafeRootError(
                f"{path} is not a {'directory' if w.kind == 'dir' else 'regular file'} "
                "(the boundary binds it read-write for the parent)",
                where="run",
                hint="remove it; Codex makes it again",
            )


def _missing_parents(home: str, path: str) -> list[str]:
    out = []
    cur = os.path.dirname(path)
    while cur != home and not os.path.lexists(cur):
        out.append(cur)
        cur = os.path.dirname(cur)
    return out[::-1]


def _ensure_dir(path: str, mode: int, owner: int | None) -> None:
    """A directory at `path` (made with `mode`, given to `owner` when made)."""
    if os.path.lexists(path):
        if not os.path.isdir(path) or os.path.islink(path):
            raise UnsafeRootError(f"{path} is not a directory", where="run")
        return
    os.makedirs(path, mode=mode, exist_ok=True)
    os.chmod(path, mode)
    if owner is not None and owner != os.geteuid():
        os.chown(path, owner, primary_gid(owner))


def _environment(
    compiled: Compiled, plan: MountPlan, extra_env: Mapping[str, str]
) -> dict[str, str]:
    """The plan's environment (PATH, HOME, TMPDIR, GIT_DIR, CODEX_HOME, the layout's `env` and
    the launcher's values of `passthrough_env`), then the launch document's (the compiled
    HOME and TMPDIR, GIT_DIR), CODEX_SQLITE_HOME, then `extra_env`."""
    env = {e.name: e.value for e in plan.env}
    env.update({k: os.environ[k] for k in plan.passthrough_env if k in os.environ})
    launch = codex_entries(compiled.bundle, compiled.inputs.flags)[0]
    env.update(launch["env"])
    env[SQLITE_ENV] = os.path.join(env["CODEX_HOME"], SQLITE_DIR)
    env.update(extra_env)
    return env
