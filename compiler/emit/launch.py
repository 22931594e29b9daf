"""`launch`: per ACP adapter, exactly what a launcher sets for the method the matrix shows holding.

The reviewed catalog `profiles/adapters.toml` (schemas/adapters-catalog.schema.json) records, per
adapter build (npm package, version, Codex core), the launch method that the end-to-end matrix
(`profilec e2e`) observed keeping the credential deny for new, loaded and resumed sessions and
every `permission-profile:*` mode, plus the built-in modes that lose it (a launcher must not
forward `session/set_mode` to them). tests/integration/test_e2e_acp.py re-runs the matrix and
fails when the catalog disagrees. This renderer turns one entry and the compiled bundle into the
environment, arguments and files to set; where no method holds it says so and sets nothing. The
document also says how to run `profilec watch` beside the session (end the session on drift)
and which uid the trusted parent runs as inside the outer plan (never root).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import Field, StringConstraints, ValidationError

from ..errors import PolicyError
from ..models import CompiledBundle, Frozen
from ..paths import is_within
from .codex_toml import render_toml
from .overrides import override_lines

if TYPE_CHECKING:
    from ..inputs import Inputs

Method = Literal[
    "c-overrides",
    "codex-home",
    "codex-config",
    "codex-home+initial-mode",
    # The same, with the adapter run as a non-root user (required where, as root, a model
    # command can unmount the sandbox's deny mask).
    "c-overrides+non-root",
    "codex-home+non-root",
    "codex-config+non-root",
    "codex-home+initial-mode+non-root",
]
NON_ROOT = "+non-root"
NpmName = Annotated[str, StringConstraints(pattern=r"^@[a-z0-9-]+/[a-z0-9-]+$")]
Version = Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$|^embedded$")]
ModeId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9:-]{0,80}$")]
OneLine = Annotated[str, StringConstraints(min_length=1, pattern=r"^[^\n\r]+$")]

CATALOG_FILE = "adapters.toml"


class AdapterEntry(Frozen):
    """One adapter build and the launch method the matrix shows holding (or none)."""

    package: NpmName
    version: Version
    codex_version: Version
    #: How the Codex core is chosen: the TS adapter's CODEX_PATH, its bundled @openai/codex, or
    #: the core compiled into the adapter.
    codex_source: Literal["CODEX_PATH", "bundled", "embedded"]
    #: The chosen holding method, or "none" when no method holds (TOML has no null).
    launch_method: Method | Literal["none"]
    holding_methods: list[Method] = Field(default_factory=list)
    blocked_modes: list[ModeId] = Field(default_factory=list)
    reason: OneLine
    evidence: OneLine
    #: Modes whose approval behaviour (profiles/modes.toml) the approvals e2e observed holding,
    #: or not, under launch_method with profilec's config alone. Both empty: not measured.
    approval_modes_held: list[ModeId] = Field(default_factory=list)
    approval_modes_lost: list[ModeId] = Field(default_factory=list)
    approval_evidence: OneLine | None = None

    @property
    def method(self) -> Method | None:
        """The chosen method, None when no method holds."""
        return None if self.launch_method == "none" else self.launch_method


class AdapterCatalog(Frozen):
    """`profiles/adapters.toml`."""

    schema_version: Literal[1]
    adapters: Annotated[list[AdapterEntry], Field(min_length=1)]


def load_catalog(profiles_dir: str | None = None) -> AdapterCatalog:
    """Read and validate `<profiles_dir>/adapters.toml` (default: the shipped one)."""
    from ..policy import default_profiles_dir
    from ..roots import parse_toml, validation_message

    path = os.path.join(profiles_dir or default_profiles_dir(), CATALOG_FILE)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise PolicyError(f"cannot read: {exc.strerror or exc}", where=path) from None
    data = parse_toml(raw, where=path)
    try:
        catalog = AdapterCatalog.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(f"schema violation: {validation_message(exc)}", where=path) from None
    for entry in catalog.adapters:
        both = set(entry.approval_modes_held) & set(entry.approval_modes_lost)
        if both:
            raise PolicyError(
                f"{entry.package} {entry.version}: mode {sorted(both)[0]} both held and lost",
                where=path,
            )
        held = entry.method
        if held is not None and held not in entry.holding_methods:
            raise PolicyError(
                f"{entry.package} {entry.version}: launch_method {held} is not in holding_methods",
                where=path,
            )
        if held is None and entry.holding_methods:
            raise PolicyError(
                f"{entry.package} {entry.version}: methods hold but no launch_method is chosen",
                where=path,
            )
    return catalog


def _codex_home(bundle: CompiledBundle) -> str | None:
    if bundle.codex_home is not None:
        return bundle.codex_home.path
    return bundle.layout.codex_home


def _wrapper_text(lines: list[str]) -> str:
    flags = " ".join(f"-c {shlex.quote(line)}" for line in lines)
    return f'#!/bin/sh\nexec "$PROFILEC_REAL_CODEX" "$@" {flags}\n'


def approval_doc(bundle: CompiledBundle, entry: AdapterEntry) -> dict[str, Any]:
    """Per mode: the approval policy and reviewer modes.toml gives it, whether the approvals e2e
    saw it hold with this adapter build (null: not measured), and what a launcher must do."""
    measured = bool(entry.approval_modes_held or entry.approval_modes_lost)
    out: dict[str, Any] = {}
    for mode in sorted(bundle.mode_approvals):
        want = bundle.mode_approvals[mode]
        policy = want.get("approval_policy")
        holds: bool | None = None
        if mode in entry.approval_modes_held:
            holds = True
        elif mode in entry.approval_modes_lost:
            holds = False
        if holds is True:
            say = "holds with profilec's config"
        elif holds is False:
            say = (
                f"does not hold: the adapter applies one approval policy to every "
                f"permission-profile mode; this mode advertises {policy}; a launcher that "
                f"needs it must send approvalPolicy {policy} per turn (app-server) or use an "
                f"adapter that keeps approvals per mode"
            )
        else:
            say = "not measured for this adapter build; do not assume it holds"
        out[mode] = {**want, "holds": holds, "statement": say}
    return {"measured": measured, "evidence": entry.approval_evidence, "modes": out}


def launch_entry(bundle: CompiledBundle, entry: AdapterEntry) -> dict[str, Any]:
    """What to set for one adapter build (JSON-ready, deterministic)."""
    doc: dict[str, Any] = {
        "package": entry.package,
        "version": entry.version,
        "codex_version": entry.codex_version,
        "codex_source": entry.codex_source,
        "holds": entry.method is not None,
        "launch_method": entry.method,
        "reason": entry.reason,
        "evidence": entry.evidence,
        "approvals": approval_doc(bundle, entry),
    }
    chosen = entry.method
    if chosen is None:
        doc.update(
            env={},
            args=[],
            files=[],
            blocked_modes=[],
            launcher_supplies={},
            run_as="nothing holds",
            non_root_required=False,
        )
        doc["statement"] = (
            f"no launch method keeps the credential deny for {entry.package} {entry.version}; "
            "do not launch Codex through it"
        )
        return doc
    non_root = chosen.endswith(NON_ROOT)
    method = chosen[: -len(NON_ROOT)] if non_root else chosen
    doc["run_as"] = RUN_AS
    # Measured: this build keeps the deny only when it does not run as root (as root a model
    # command unmounts the deny mask). Without it the method also held as root, but a launcher
    # still runs it as RUN_AS: the trusted parent is never root (trusted_parent.never_root).
    doc["non_root_required"] = non_root
    home = _codex_home(bundle)
    env: dict[str, str] = {}
    args: list[str] = []
    files: list[dict[str, str]] = []
    lines = override_lines(bundle)
    if home is not None:
        env["CODEX_HOME"] = home
    if method in ("codex-home", "codex-home+initial-mode"):
        if home is None:
            raise PolicyError("the launch method writes CODEX_HOME/config.toml: pass --codex-home")
        path = os.path.join(home, "config.toml")
        files.append({"path": path, "mode": "0600", "content": render_toml(bundle)})
    if method == "codex-home+initial-mode":
        env["INITIAL_AGENT_MODE"] = f"permission-profile:{bundle.default_profile_id}"
    if method == "codex-config":
        from .extras import extra_tables, extra_top

        config = {
            "default_permissions": bundle.default_profile_id,
            "permissions": {p.profile_id: p.codex_table() for p in bundle.profiles},
            **extra_top(bundle),
            **extra_tables(bundle),
        }
        env["CODEX_CONFIG"] = json.dumps(config, sort_keys=True, separators=(",", ":"))
    supplies: dict[str, str] = {}
    if method == "c-overrides":
        if entry.codex_source == "embedded":
            for line in lines:
                args += ["-c", line]
        else:
            # The TS adapter runs `$CODEX_PATH app-server`: a wrapper appends the -c flags. It
            # lives in the private CODEX_HOME, which every compiled profile keeps read-only.
            if home is None:
                raise PolicyError("the -c wrapper lives in CODEX_HOME: pass --codex-home")
            wrapper = os.path.join(home, "profilec-codex-wrapper")
            files.append({"path": wrapper, "mode": "0700", "content": _wrapper_text(lines)})
            env["CODEX_PATH"] = wrapper
            supplies["PROFILEC_REAL_CODEX"] = f"path of a codex {entry.codex_version} binary"
    elif entry.codex_source == "CODEX_PATH":
        supplies["CODEX_PATH"] = f"path of a codex {entry.codex_version} binary"
    doc.update(env=env, args=args, files=files, blocked_modes=list(entry.blocked_modes))
    doc["launcher_supplies"] = supplies
    if entry.blocked_modes:
        doc["statement"] = (
            "never forward session/set_mode to "
            + ", ".join(entry.blocked_modes)
            + ": that mode drops the credential deny"
        )
    else:
        doc["statement"] = "every mode the adapter offers keeps the credential deny"
    return doc


#: The uid the trusted parent runs as inside the outer plan unless the plan layout names one
#: (compiler/mounts/plan.py DEFAULT_RUN_AS; research §7).
TRUSTED_UID = 65534
#: Who runs every launcher entry (adapter, app-server, exec): one answer, the trusted parent's.
RUN_AS = (
    f"uid {TRUSTED_UID} (trusted_parent.uid) or another non-root user that owns CODEX_HOME and "
    "the vaults (non_root_prerequisites); never root"
)


def _vaults(bundle: CompiledBundle) -> list[str]:
    """The session identity's vaults: a root whose link sits in another identity's CODEX_HOME
    or HOME is that identity's, never this launch's (its parent saves it)."""
    foreign = [f.path for f in bundle.other_identities]
    out = set()
    for r in bundle.roots:
        if r.kind == "missing":
            continue
        names = (r.path, *(h.link for h in r.hops))
        if any(is_within(n, f) for n in names for f in foreign):
            continue
        out.add(r.vault)
    return sorted(out)


def profilec_argv() -> tuple[list[str], dict[str, str]]:
    """An absolute argv prefix that runs this profilec, and the env it needs: this interpreter
    with `-m profilec`, and PYTHONPATH when the package is not installed in it (a checkout)."""
    import importlib.util
    import sysconfig

    argv = [sys.executable, "-m", "profilec"]
    spec = importlib.util.find_spec("profilec")
    origin = spec.origin if spec is not None else None
    if origin is None:
        return argv, {}
    top = os.path.dirname(os.path.dirname(os.path.abspath(origin)))
    installed = {os.path.realpath(sysconfig.get_path(k)) for k in ("purelib", "platlib")}
    return argv, ({} if os.path.realpath(top) in installed else {"PYTHONPATH": top})


def _input_of(bundle: CompiledBundle, role: str) -> str | None:
    for t in bundle.trusted_base:
        if t.source == "input" and t.role == role:
            return t.path
    return None


def watch_argv(bundle: CompiledBundle, inputs: Inputs | None = None) -> list[str]:
    """`profilec watch` with every input the compile had that decides what is watched (the
    session config does not: it changes config keys, never a root, vault or CODEX_HOME)."""
    prefix, _ = profilec_argv()
    argv = [*prefix, "watch"]
    roots = inputs.roots if inputs is not None else _input_of(bundle, "roots manifest")
    if roots is None:
        raise PolicyError("the launch document's watch argv needs the roots manifest path")
    argv += ["--roots", os.path.abspath(roots)]
    profiles = inputs.profiles if inputs is not None else _input_of(bundle, "policy directory")
    if profiles is not None:
        argv += ["--profiles", os.path.abspath(profiles)]
    for ws in bundle.layout.workspace_roots:
        argv += ["--workspace-root", ws]
    home = _codex_home(bundle)
    if home is not None:
        argv += ["--codex-home", os.path.abspath(home)]
    if bundle.layout.tmpdir is not None:
        argv += ["--tmpdir", bundle.layout.tmpdir]
    if bundle.layout.home is not None:
        argv += ["--home", bundle.layout.home]
    vouched = inputs.vouched_mcp if inputs is not None else _input_of(bundle, "vouched MCP servers")
    if vouched is not None:
        argv += ["--vouched-mcp", os.path.abspath(vouched)]
    return argv


def watch_entry(bundle: CompiledBundle, inputs: Inputs | None = None) -> dict[str, Any]:
    """How a launcher runs `profilec watch` beside the session, and what it does on drift."""
    _, env = profilec_argv()
    return {
        "argv": watch_argv(bundle, inputs),
        "env": env,
        "launcher_adds": (
            "nothing: argv is absolute and carries every compile input that decides what is "
            "watched (the session config does not); or run `profilec watch --lock <lock file>`"
        ),
        "start": (
            "before the session's first turn, beside it (outside the session's sandbox); it is "
            "watching once its stderr shows `profilec: watch: watching`"
        ),
        "on_drift": (
            "exit 9 with one JSON line on stdout (schemas/watch-event.schema.json): a link was "
            "re-pointed or replaced, a vault moved, a new hard link, the private auth.json "
            "turned plain file (codex logout + login) or the writer's lock auth.lock replaced or "
            "created late. End the session (the adapter and every "
            "process it started) and recompile before starting another"
        ),
        "on_other_exit": "the chain is no longer watched: end the session",
        "stop": "send SIGTERM when the session ends (exit 0, nothing printed)",
        "drift_exit_code": 9,
        "event_schema": "watch-event.schema.json",
    }


def trusted_parent_entry(bundle: CompiledBundle, inputs: Inputs | None = None) -> dict[str, Any]:
    """Which uid the trusted parent runs as inside the outer plan, the vaults it saves in and
    what the disk must look like for that user."""
    return {
        "uid": TRUSTED_UID,
        "gid": TRUSTED_UID,
        "never_root": True,
        "run_as": RUN_AS,
        "vaults": _vaults(bundle),
        "non_root_prerequisites": non_root_prerequisites(bundle, inputs),
        "statement": (
            f"inside the outer mount plan (`profilec plan`) run the adapter and its Codex as uid "
            f"{TRUSTED_UID} (or the plan's run_as; bwrap --uid/--gid), never root: as root "
            "Codex's inner sandbox fails (bwrap: setting up uid map: Operation not permitted). "
            "The plan binds each vault directory read-write, never the credential file alone: "
            "Codex saves by renaming .auth-XXXXXX over the real file and locks auth.json.lock "
            "beside it and $CODEX_HOME/auth.lock"
        ),
    }


def non_root_prerequisites(
    bundle: CompiledBundle, inputs: Inputs | None = None
) -> list[dict[str, str]]:
    """What must hold on disk before a session runs as the non-root RUN_AS user (paths from
    this compile): without it Codex as that user cannot start, save or refresh the login."""
    out: list[dict[str, str]] = []
    home = _codex_home(bundle)
    if home is not None:
        out.append(
            {
                "path": os.path.abspath(home),
                "need": (
                    "owned by the run-as user, mode 0700: the parent writes sessions, logs and "
                    "auth.lock there (every mode keeps it read-only to model commands)"
                ),
            }
        )
    for vault in _vaults(bundle):
        out.append(
            {
                "path": vault,
                "need": (
                    "owned by the run-as user, mode 0700, and so is the credential in it (0600): "
                    "the parent reads it and saves by renaming a temp file over it; a vault owned "
                    "by root (0700) stops Codex as any other user from starting"
                ),
            }
        )
    for ws in bundle.layout.workspace_roots:
        out.append(
            {
                "path": ws,
                "need": "writable by the run-as user (the session cwd and "
                "writable root of the agent modes)",
            }
        )
    for what, path in (("TMPDIR", bundle.layout.tmpdir), ("HOME", bundle.layout.home)):
        if path is not None:
            out.append({"path": path, "need": f"the session's {what}: owned by the run-as user"})
    roots = inputs.roots if inputs is not None else _input_of(bundle, "roots manifest")
    if roots is not None:
        out.append(
            {
                "path": os.path.abspath(roots),
                "need": (
                    "stays owned by root (or the daemon's user), and so does every directory above "
                    "it, never writable by the run-as user: the trust check refuses it otherwise "
                    "(exit 3), and a model command must not edit it"
                ),
            }
        )
    out += _carve_out_prerequisites(bundle)
    out.append(
        {
            "path": "<codex binary>",
            "need": (
                "readable and executable by the run-as user, with every directory above it "
                "(the default cache /var/cache/profilec is)"
            ),
        }
    )
    return out


def _carve_out_prerequisites(
    bundle: CompiledBundle, uid: int = TRUSTED_UID
) -> list[dict[str, str]]:
    """Writable roots (of any mode) where the sandbox would have to create the mount point of a
    missing read-only carve-out (`.git`, `.agents`, `.codex`, `.aws`) and the run-as user cannot:
    as that user every command of the mode then fails before it runs (measured, Codex 0.171.0
    as uid 65534 in agent-full-access: `bwrap: Can't mkdir /farm/.git: Permission denied`;
    as root bwrap creates the empty directory). lstat only; host state at compile time."""
    from ..codex import CARVE_OUTS
    from ..evaluate import resolve, session_contexts

    lay = bundle.layout
    ctx = session_contexts(lay.workspace_roots, tmpdir=lay.tmpdir, home=lay.home)[0]
    need: dict[str, tuple[list[str], list[str]]] = {}
    for p in bundle.profiles:
        eff = resolve({p.profile_id: p.codex_table()}, p.profile_id, ctx)
        for e in eff.entries:
            if e.kind != "path" or e.access != "write" or not eff.decide(e.path).writable:
                continue
            missing = [n for n in CARVE_OUTS if not os.path.lexists(os.path.join(e.path, n))]
            if not missing:
                continue
            try:
                st = os.stat(e.path)
            except OSError:
                continue
            if st.st_uid == uid or st.st_mode & 0o002:
                continue  # the run-as user (or anyone) can create the mount points
            _, modes = need.setdefault(e.path, (missing, []))
            if p.mode not in modes:
                modes.append(p.mode)
    return [
        {
            "path": path,
            "need": (
                f"writable root of mode {', '.join(modes)}: create {', '.join(names)} in it "
                "(empty directories, root's) or let the run-as user create them; the sandbox "
                "mounts each read-only and, as a non-root user, cannot make a missing one: every "
                "command of the mode then fails (bwrap: Can't mkdir)"
            ),
        }
        for path, (names, modes) in sorted(need.items())
    ]


def _mode_ids(bundle: CompiledBundle) -> dict[str, str]:
    return {p.mode: p.profile_id for p in bundle.profiles}


#: What a launcher of `codex app-server` must never send: each replaces the profile with a
#: legacy sandbox that drops the deny (docs/e2e.md; check rule PC023).
APP_SERVER_NEVER_SEND = (
    "`sandbox` on thread/start, thread/resume or thread/fork",
    "`sandboxPolicy` on turn/start",
    "a thread `config` that sets `permissions`, `default_permissions` or `sandbox_mode`",
)


def codex_entries(bundle: CompiledBundle) -> list[dict[str, Any]]:
    """Plain `codex app-server` and `codex exec` (no adapter): args after the codex binary,
    env, cwd and, per mode, how to select it."""
    from ..settings import codex_version

    home = _codex_home(bundle)
    env: dict[str, str] = {}
    if home is not None:
        env["CODEX_HOME"] = os.path.abspath(home)
    if bundle.layout.tmpdir is not None:
        env["TMPDIR"] = bundle.layout.tmpdir
    if bundle.layout.home is not None:
        env["HOME"] = bundle.layout.home
    roots = list(bundle.layout.workspace_roots)
    cwd = roots[0] if roots else None
    flags = [a for line in override_lines(bundle) for a in ("-c", line)]
    supplies = {"codex": f"path of a codex {codex_version()} binary: argv is [codex, *args]"}
    common = {
        "codex_version": codex_version(),
        "env": env,
        "cwd": cwd,
        "launcher_supplies": supplies,
        "run_as": RUN_AS,
        "non_root_required": False,
    }
    server_modes: dict[str, Any] = {}
    exec_modes: dict[str, Any] = {}
    for mode, pid in sorted(_mode_ids(bundle).items()):
        policy = bundle.mode_approvals.get(mode, {}).get("approval_policy")
        turn: dict[str, Any] = {"permissions": pid}
        extra = ["-c", f"default_permissions={json.dumps(pid)}"]
        if policy is not None:
            turn["approvalPolicy"] = policy
            extra += ["-c", f"approval_policy={json.dumps(policy)}"]
        server_modes[mode] = {"profile_id": pid, "select": turn}
        exec_modes[mode] = {"profile_id": pid, "select": extra}
    extra_roots = [a for r in roots[1:] for a in ("--add-dir", r)]
    # --skip-git-repo-check: a workspace need not be a git repository; profilec marks every
    # workspace root untrusted whatever Codex's own check would have said.
    exec_args = ["exec", "--skip-git-repo-check", *flags]
    if cwd is not None:
        exec_args += ["-C", cwd]
    exec_args += extra_roots
    return [
        {
            "launcher": "codex app-server",
            **common,
            "args": ["app-server", *flags],
            "initialize": {"capabilities": {"experimentalApi": True}},
            "thread_start": {"cwd": cwd} if cwd is not None else {},
            "modes": server_modes,
            "never_send": list(APP_SERVER_NEVER_SEND),
            "statement": (
                "start the process with args and env; thread/start with thread_start (the "
                f"default mode, {bundle.default_profile_id}, is selected by the -c lines); to "
                "run a turn in another mode send turn/start with that mode's `select` "
                "(experimentalApi); never send what never_send lists"
            ),
        },
        {
            "launcher": "codex exec",
            **common,
            "args": exec_args,
            "modes": exec_modes,
            "never_send": [
                "-s/--sandbox",
                "--full-auto",
                "--dangerously-bypass-approvals-and-sandbox",
            ],
            "statement": (
                "run [codex, *args, *modes[mode].select, prompt] (the default mode needs no "
                "select); never pass what never_send lists: each replaces the profile"
            ),
        },
    ]


def render_launch_with(
    bundle: CompiledBundle, catalog: AdapterCatalog, inputs: Inputs | None = None
) -> str:
    """The launch document: one entry per catalog adapter build, plain `codex app-server` and
    `codex exec`, the watch instructions and the trusted parent's uid, LF-terminated JSON.
    `inputs` (the compile's) makes the watch argv exact; without it the paths come from the
    bundle's trusted base."""
    roots = list(bundle.layout.workspace_roots)
    doc = {
        "schema_version": 1,
        "default_profile_id": bundle.default_profile_id,
        # Canonical (resolved at the edge): a cwd or writable root spelled through a symlink
        # makes Codex drop every deny under its real location. Pass `cwd` as the session cwd
        # (`-C`, ACP `cwd`) and the rest as additional workspace roots, exactly as spelled.
        "cwd": roots[0] if roots else None,
        "workspace_roots": roots,
        "adapters": [launch_entry(bundle, e) for e in catalog.adapters],
        "codex": codex_entries(bundle),
        "watch": watch_entry(bundle, inputs),
        "trusted_parent": trusted_parent_entry(bundle, inputs),
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_launch(bundle: CompiledBundle) -> str:
    """The launch document against the shipped catalog."""
    return render_launch_with(bundle, load_catalog())


LAUNCH_SCHEMA: dict[str, Any] = {
    "title": "LaunchDocument",
    "description": (
        "`compile --format launch`: per ACP adapter build, the environment, arguments and files a "
        "launcher sets for the launch method the end-to-end matrix shows holding, the modes it "
        "must not forward, or a statement that no method holds."
    ),
    "type": "object",
    "additionalProperties": False,
    "required": [
        "schema_version",
        "default_profile_id",
        "cwd",
        "workspace_roots",
        "adapters",
        "codex",
        "watch",
        "trusted_parent",
    ],
    "properties": {
        "schema_version": {"const": 1},
        "default_profile_id": {"type": "string"},
        "cwd": {
            "description": "The canonical session cwd to pass (-C, ACP session cwd); null when "
            "no workspace root was given.",
            "type": ["string", "null"],
            "pattern": "^/",
        },
        "workspace_roots": {
            "description": "Canonical workspace roots (the first is the cwd).",
            "type": "array",
            "items": {"type": "string", "pattern": "^/"},
        },
        "codex": {
            "description": "Plain `codex app-server` and `codex exec`, no adapter: argv is "
            "[codex, *args]; per mode how to select it.",
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "launcher",
                    "codex_version",
                    "args",
                    "env",
                    "cwd",
                    "launcher_supplies",
                    "run_as",
                    "non_root_required",
                    "modes",
                    "never_send",
                    "statement",
                ],
                "properties": {
                    "launcher": {"enum": ["codex app-server", "codex exec"]},
                    "codex_version": {"type": "string"},
                    "args": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}},
                    "cwd": {"type": ["string", "null"]},
                    "launcher_supplies": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                    },
                    "run_as": {"type": "string"},
                    "non_root_required": {"type": "boolean"},
                    "initialize": {"type": "object"},
                    "thread_start": {"type": "object"},
                    "modes": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["profile_id", "select"],
                            "properties": {
                                "profile_id": {"type": "string"},
                                "select": {"type": ["object", "array"]},
                            },
                        },
                    },
                    "never_send": {"type": "array", "items": {"type": "string"}},
                    "statement": {"type": "string"},
                },
            },
        },
        "watch": {
            "description": "Run `profilec watch` beside the session; end the session on drift.",
            "type": "object",
            "additionalProperties": False,
            "required": [
                "argv",
                "env",
                "launcher_adds",
                "start",
                "on_drift",
                "on_other_exit",
                "stop",
                "drift_exit_code",
                "event_schema",
            ],
            "properties": {
                "argv": {
                    "description": "Absolute: this interpreter, `-m profilec watch` and every "
                    "compile input that decides what is watched.",
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 6,
                    "prefixItems": [{"type": "string", "pattern": "^/"}],
                },
                "env": {
                    "description": "Added to the watcher's environment (PYTHONPATH when "
                    "profilec runs from a checkout).",
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                },
                "launcher_adds": {"type": "string"},
                "start": {"type": "string"},
                "on_drift": {"type": "string"},
                "on_other_exit": {"type": "string"},
                "stop": {"type": "string"},
                "drift_exit_code": {"const": 9},
                "event_schema": {"const": "watch-event.schema.json"},
            },
        },
        "trusted_parent": {
            "description": "The uid the trusted parent runs as inside the outer plan (never "
            "root) and the vault directories the plan binds read-write for its saves.",
            "type": "object",
            "additionalProperties": False,
            "required": [
                "uid",
                "gid",
                "never_root",
                "run_as",
                "vaults",
                "non_root_prerequisites",
                "statement",
            ],
            "properties": {
                "uid": {"type": "integer", "minimum": 1},
                "gid": {"type": "integer", "minimum": 0},
                "never_root": {"const": True},
                "run_as": {"type": "string"},
                "vaults": {"type": "array", "items": {"type": "string", "pattern": "^/"}},
                "non_root_prerequisites": {
                    "description": "Paths (from this compile) and what must hold for each "
                    "before a session runs as the non-root run_as user.",
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["path", "need"],
                        "properties": {"path": {"type": "string"}, "need": {"type": "string"}},
                    },
                },
                "statement": {"type": "string"},
            },
        },
        "adapters": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "package",
                    "version",
                    "codex_version",
                    "codex_source",
                    "holds",
                    "launch_method",
                    "reason",
                    "evidence",
                    "env",
                    "args",
                    "files",
                    "blocked_modes",
                    "launcher_supplies",
                    "run_as",
                    "non_root_required",
                    "statement",
                    "approvals",
                ],
                "properties": {
                    "package": {"type": "string"},
                    "version": {"type": "string"},
                    "codex_version": {"type": "string"},
                    "codex_source": {"enum": ["CODEX_PATH", "bundled", "embedded"]},
                    "holds": {"type": "boolean"},
                    "launch_method": {"enum": [*get_args(Method), None]},
                    "run_as": {"type": "string"},
                    "non_root_required": {
                        "description": "The matrix saw this build keep the deny only when not "
                        "root; every holding entry runs as run_as (never root) anyway.",
                        "type": "boolean",
                    },
                    "reason": {"type": "string"},
                    "evidence": {"type": "string"},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "files": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["path", "mode", "content"],
                            "properties": {
                                "path": {"type": "string"},
                                "mode": {"type": "string", "pattern": "^0[0-7]{3}$"},
                                "content": {"type": "string"},
                            },
                        },
                    },
                    "blocked_modes": {"type": "array", "items": {"type": "string"}},
                    "launcher_supplies": {
                        "description": "Env vars whose value only the launcher knows (e.g. a "
                        "codex binary's path), with what the value must be.",
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                    },
                    "statement": {"type": "string"},
                    "approvals": {
                        "description": "Per mode: the approval policy and reviewer from "
                        "profiles/modes.toml, whether the approvals e2e saw it hold (null: not "
                        "measured), and what a launcher must do.",
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["measured", "evidence", "modes"],
                        "properties": {
                            "measured": {"type": "boolean"},
                            "evidence": {"type": ["string", "null"]},
                            "modes": {
                                "type": "object",
                                "additionalProperties": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "required": ["holds", "statement"],
                                    "properties": {
                                        "approval_policy": {"type": "string"},
                                        "approvals_reviewer": {"type": "string"},
                                        "holds": {"type": ["boolean", "null"]},
                                        "statement": {"type": "string"},
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}
