"""`launch`: per ACP adapter, exactly what a launcher sets for the method the matrix shows holding.

The reviewed adapter catalog (`profiles/adapters.toml`, read by emit/catalog.py) records, per
adapter build, the launch method the end-to-end matrix (`profilec e2e`) observed holding the
credential deny, plus the built-in modes that lose it (a launcher must not forward a mode switch
to them, by any of MODE_METHODS). This renderer turns one entry and the compiled bundle into the
environment, arguments and files to set; where no method holds it says so and sets nothing. The
document also says how to run `profilec watch` beside the session (end the session on drift) and
which uid the trusted parent runs as inside the outer plan (never root).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import sys
import sysconfig
from typing import TYPE_CHECKING, Any, Literal

from ..codex.resolve import resolve, session_contexts
from ..codex.vocabulary import CARVE_OUTS, REQUIREMENTS_FILE, WRITER_LOCK
from ..errors import PolicyError
from ..flags import CompileFlags
from ..launchprobe import LaunchProbe
from ..models.compiled import CompiledBundle
from ..models.launch import AdapterCatalog, AdapterEntry
from ..paths import PARENT_GIT_DIR, is_within
from ..settings import codex_version
from .catalog import load_catalog
from .codex_toml import render_toml
from .extras import emitted_approvals, extra_tables, extra_top
from .overrides import override_lines
from .requirements import digest, render_requirements
from .tomltext import value

if TYPE_CHECKING:
    from ..models.mounts import PlanLayout

NON_ROOT = "+non-root"

#: Every ACP request that switches a session's mode, and the param carrying the id. codex-acp
#: 2.6.0 takes both (its `setSessionConfigOption` applies `configId: "mode"` as a mode change);
#: measured through `session/set_config_option`, a built-in mode read the credential without
#: the managed requirements (tests/integration/test_requirements_acp.py). A launcher forwards
#: either only with an id in forward_mode_ids.
MODE_METHODS: tuple[dict[str, Any], ...] = (
    {"method": "session/set_mode", "match": {}, "id_param": "modeId"},
    {"method": "session/set_config_option", "match": {"configId": "mode"}, "id_param": "value"},
)
#: How the statements name them.
MODE_SWITCH = 'session/set_mode or session/set_config_option (configId "mode")'
#: Every entry's statement starts here: the environment is part of the recipe. GIT_DIR turns
#: the trusted parent's own git off, and no Codex config key sets the parent's environment, so
#: the `-c` lines and CODEX_HOME alone leave it on (check PC052).
ENV_STATEMENT = (
    f"start it with env as given (GIT_DIR={PARENT_GIT_DIR} turns the trusted parent's own git "
    "off, which no config key can; `profilec check --launch-env FILE` refuses an environment "
    "without it, PC052)"
)


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


def launch_entry(
    bundle: CompiledBundle, entry: AdapterEntry, flags: CompileFlags | None = None
) -> dict[str, Any]:
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
        "mode_methods": [{**m, "match": dict(m["match"])} for m in MODE_METHODS],
    }
    chosen = entry.method
    doc["requirements"] = requirements_item(bundle, flags)
    if chosen is None:
        doc.update(
            command=[],
            env={},
            args=[],
            files=[],
            mode_ids={},
            blocked_modes=[],
            enforced_by="launcher",
            forward_mode_ids=[],
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
    doc["run_as"] = run_as_of(flags)
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
    env.update(_session_env(bundle, supplies))
    files += _lock_files(bundle)
    command_prefix, command_supplies = _adapter_command(entry)
    supplies.update(command_supplies)
    mode_ids = _acp_mode_ids(bundle)
    # Which permission-profile modes the adapter offers: a profile in a config layer
    # permissionProfile/list sees (CODEX_HOME/config.toml or the -c lines) makes the TS adapter
    # offer them; CODEX_CONFIG does not, and the zed build offers none with a custom profile
    # (docs/e2e-acp.md): the launcher then forwards no mode switch at all.
    offered = entry.codex_source != "embedded" and method != "codex-config"
    forward = sorted(mode_ids.values()) if offered else []
    enforced = _enforced_by(entry.codex_version)
    doc.update(
        command=[*command_prefix, *args],
        env=env,
        args=args,
        files=files,
        mode_ids=mode_ids,
        blocked_modes=list(entry.blocked_modes),
        enforced_by=enforced,
        forward_mode_ids=forward,
    )
    doc["launcher_supplies"] = supplies
    doc["statement"] = _mode_statement(bundle, entry, forward, enforced)
    return doc


def _mode_statement(
    bundle: CompiledBundle,
    entry: AdapterEntry,
    forward: list[str],
    enforced: Literal["managed-requirements", "launcher"],
) -> str:
    """The statement of an entry whose method holds: which session modes to forward, which
    never to offer, and what stops a blocked mode (the managed requirements or the launcher)."""
    only = (
        f"forward a mode switch ({MODE_SWITCH}, mode_methods) only to " + ", ".join(forward)
        if forward
        else f"forward no mode switch ({MODE_SWITCH}; this build offers no permission-profile "
        f"mode; the session runs permission-profile:{bundle.default_profile_id})"
    )
    only = f"{ENV_STATEMENT}; {only}"
    only += (
        "; open sessions (session/new, load, resume) only with a cwd that is one of "
        "workspace_roots and additionalDirectories among them: the adapter marks both trusted "
        "projects, and a .codex/config.toml the model planted in a subdirectory would load as a "
        "config layer above profilec's in a session opened there (watch reports one that "
        "appears: end the session; check refuses the tree until it is removed)"
    )
    if not entry.blocked_modes:
        return f"{only}; every mode the adapter offers keeps the credential deny"
    how = (
        "under the managed requirements (install `requirements` first) such a mode cannot "
        "run a turn: Codex refuses its approval policy or its sandbox mode"
        if enforced == "managed-requirements"
        else "nothing but the launcher stops it for this build (the managed requirements "
        "were not measured on its Codex core)"
    )
    return (
        f"{only}; never offer {', '.join(entry.blocked_modes)}: without the managed "
        f"requirements that mode drops the credential deny; {how}"
    )


#: Codex versions the managed requirements were measured to hold on (docs/e2e-acp.md,
#: tests/integration/test_requirements_codex.py): a session asking for a built-in mode or a
#: legacy sandbox_mode ran "sandbox: custom permissions", the default profile.
REQUIREMENTS_MEASURED = ("0.171.0", "0.166.0")


def _enforced_by(version: str) -> Literal["managed-requirements", "launcher"]:
    return "managed-requirements" if version in REQUIREMENTS_MEASURED else "launcher"


def _acp_mode_ids(bundle: CompiledBundle) -> dict[str, str]:
    """Mode name -> the ACP session mode id of its profile (`permission-profile:<id>`)."""
    return {mode: f"permission-profile:{pid}" for mode, pid in sorted(_mode_ids(bundle).items())}


def _session_env(bundle: CompiledBundle, supplies: dict[str, str]) -> dict[str, str]:
    """HOME and TMPDIR as compiled (--home, --tmpdir); one the compile was not given goes to
    `supplies` with what the launcher must set it to. GIT_DIR turns the parent's own git off
    (paths.PARENT_GIT_DIR)."""
    env: dict[str, str] = {"GIT_DIR": PARENT_GIT_DIR}
    lay = bundle.layout
    if lay.home is not None:
        env["HOME"] = lay.home
    else:
        supplies["HOME"] = (
            "the session's HOME, a directory the run-as user owns outside every vault and "
            "CODEX_HOME; recompile with --home DIR so the profiles protect its login-shell and "
            "git config files and this document sets it"
        )
    if lay.tmpdir is not None:
        env["TMPDIR"] = lay.tmpdir
    else:
        supplies["TMPDIR"] = (
            "the session's TMPDIR, a directory the run-as user owns outside every vault; "
            "recompile with --tmpdir DIR so the agent modes get it as a writable root and this "
            "document sets it"
        )
    return env


def _lock_files(bundle: CompiledBundle) -> list[dict[str, str]]:
    """The credential writer's lock, created empty (0600) before the start when missing: every
    profile denies it, and a deny masks only a file that exists when a sandbox starts; Codex
    creates it at its first login save otherwise (emit/codex_home.ensure_writer_lock)."""
    home = _codex_home(bundle)
    if home is None:
        return []
    path = os.path.join(os.path.abspath(home), WRITER_LOCK)
    return [{"path": path, "mode": "0600", "content": "", "if_exists": "keep"}]


def _adapter_command(entry: AdapterEntry) -> tuple[list[str], dict[str, str]]:
    """The argv prefix that starts the adapter (before `args`), with `${NAME}` tokens the
    launcher substitutes (named in launcher_supplies)."""
    if entry.codex_source == "embedded":
        return ["${ADAPTER_BINARY}"], {
            "ADAPTER_BINARY": (
                f"path of {entry.package} {entry.version}'s native binary "
                "(node_modules/@zed-industries/codex-acp-linux-<arch>/bin/codex-acp); "
                "substitute it in command"
            )
        }
    return ["${NODE}", "${ADAPTER_SCRIPT}"], {
        "NODE": "path of node >= 20; substitute it in command",
        "ADAPTER_SCRIPT": (
            f"path of {entry.package} {entry.version}'s dist/index.js "
            f"(node_modules/{entry.package}/dist/index.js); substitute it in command"
        ),
    }


def requirements_item(bundle: CompiledBundle, flags: CompileFlags | None = None) -> dict[str, Any]:
    """The managed requirements the session must run under: where, which (sha256 of the text
    `--format requirements` prints) and the argv that installs them."""
    prefix, env = profilec_argv()
    text = render_requirements(bundle)
    return {
        "path": REQUIREMENTS_FILE,
        "digest": digest(text),
        "install_argv": [*prefix, "requirements", "install", *compile_flags(bundle, flags)],
        "install_env": env,
        "statement": (
            f"before the session starts, {REQUIREMENTS_FILE} must hold this document (as root: "
            "run install_argv, or merge `profilec compile --format requirements` into a host "
            "file by hand and verify it with `profilec check --requirements`); it pins "
            "allowed_permission_profiles to profilec's profiles, so a built-in mode or a legacy "
            "sandbox_mode runs the default profile, allows only the approval policies and "
            "reviewers profilec's modes send, so an adapter's built-in mode cannot run a turn, "
            "and denies every vault; install refuses a file compiled from another manifest: a "
            "host with several daemons binds each session's own file over /etc/codex in a "
            "private mount namespace instead (docs/requirements.md)"
        ),
    }


#: The uid the trusted parent runs as inside the outer plan unless the plan layout names one
#: (compiler/mounts/plan.py DEFAULT_RUN_AS; research §7).
TRUSTED_UID = 65534
#: Who runs every launcher entry (adapter, app-server, exec): one answer, the trusted parent's.
RUN_AS = (
    f"uid {TRUSTED_UID} (trusted_parent.uid) or another non-root user that owns CODEX_HOME and "
    "the vaults (non_root_prerequisites); never root"
)


def run_as_of(flags: CompileFlags | None) -> str:
    """Who runs each launcher entry, as compiled: the `--run-as` uid when the compile named one
    (the profiles were modelled for it), else RUN_AS."""
    uid = flags.run_as if flags is not None else None
    if uid is None:
        return RUN_AS
    if uid == 0:
        return (
            "uid 0 (--run-as 0): the profiles are modelled for Codex running as root, which "
            "trusted_parent.never_root advises against; recompile with --run-as 65534 and "
            "run it as that uid"
        )
    return (
        f"uid {uid} (--run-as {uid}): the adapter or Codex and everything it starts; the "
        "launcher (root) writes `files` owned by this uid, runs requirements.install_argv and "
        "watch.argv itself, and drops to this uid only to exec `command`"
    )


def _trusted_uid(flags: CompileFlags | None) -> int:
    uid = flags.run_as if flags is not None else None
    return uid if uid else TRUSTED_UID


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
    with `-P -m profilec`, and PYTHONPATH when the package is not installed in it (a checkout).

    `-P` (Python 3.11 safe path): `-m` would put the working directory first on sys.path, so a
    `profilec/` (or any module profilec imports) in the directory the launcher starts it from
    would run instead; with `-P` only the installed package or the PYTHONPATH named here is.
    Not `-I`: that drops PYTHONPATH too, which a checkout's watcher needs."""
    argv = [sys.executable, "-P", "-m", "profilec"]
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


def watch_argv(
    bundle: CompiledBundle,
    flags: CompileFlags | None = None,
    requirements: str = REQUIREMENTS_FILE,
) -> list[str]:
    """`profilec watch` with every input the compile had that decides what is watched (the
    session config does not: it changes config keys, never a root, vault or CODEX_HOME), and
    the managed requirements file the session runs under (`watched_requirements`)."""
    prefix, _ = profilec_argv()
    return [
        *prefix,
        "watch",
        "--requirements",
        requirements,
        *compile_flags(bundle, flags),
    ]


def watched_requirements(layout: PlanLayout | None) -> str:
    """The host file of the managed requirements the session runs under: the one the mount
    plan binds over /etc/codex when the compile had a plan layout, else the host's own."""
    if layout is None:
        return REQUIREMENTS_FILE
    from ..mounts.plan import requirements_source

    source = requirements_source(layout)
    return os.path.join(source, os.path.basename(REQUIREMENTS_FILE))


def compile_flags(bundle: CompiledBundle, flags: CompileFlags | None = None) -> list[str]:
    """The compile's flags that decide the roots, vaults, profiles and CODEX_HOME (absolute),
    for `watch` and `requirements install` (not the session config: it changes config keys)."""
    argv: list[str] = []
    roots = flags.roots if flags is not None else _input_of(bundle, "roots manifest")
    if roots is None:
        raise PolicyError("the launch document's argvs need the roots manifest path")
    argv += ["--roots", os.path.abspath(roots)]
    profiles = flags.profiles if flags is not None else _input_of(bundle, "policy directory")
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
    vouched = flags.vouched_mcp if flags is not None else _input_of(bundle, "vouched MCP servers")
    if vouched is not None:
        argv += ["--vouched-mcp", os.path.abspath(vouched)]
    if flags is not None and flags.run_as is not None:
        argv += ["--run-as", str(flags.run_as)]
    return argv


def watch_entry(
    bundle: CompiledBundle,
    flags: CompileFlags | None = None,
    requirements: str = REQUIREMENTS_FILE,
) -> dict[str, Any]:
    """How a launcher runs `profilec watch` beside the session, and what it does on drift."""
    _, env = profilec_argv()
    return {
        "argv": watch_argv(bundle, flags, requirements),
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
            "turned plain file (codex logout + login) or the writer's lock auth.lock replaced, "
            "removed or created late as anything but a plain file (created as one while every "
            "profile denies it, it is expected: Codex's first login save), or the managed "
            "requirements file missing, less strict, replaced or edited. End the session (the "
            "adapter and every process it started) and recompile before starting another"
        ),
        "on_other_exit": "the chain is no longer watched: end the session",
        "stop": "send SIGTERM when the session ends (exit 0, nothing printed)",
        "drift_exit_code": 9,
        "event_schema": "watch-event.schema.json",
    }


def trusted_parent_entry(
    bundle: CompiledBundle, flags: CompileFlags | None = None
) -> dict[str, Any]:
    """Which uid the trusted parent runs as inside the outer plan, the vaults it saves in and
    what the disk must look like for that user."""
    return {
        "uid": _trusted_uid(flags),
        "gid": _trusted_uid(flags),
        "never_root": True,
        "run_as": run_as_of(flags),
        "vaults": _vaults(bundle),
        "non_root_prerequisites": non_root_prerequisites(bundle, flags),
        "statement": (
            "inside the outer mount plan (`profilec plan`) run the adapter and its Codex as uid "
            f"{_trusted_uid(flags)} (or the plan's run_as; bwrap --uid/--gid), never root: as "
            "root Codex's inner sandbox fails (bwrap: setting up uid map: Operation not "
            "permitted). The plan binds each vault directory read-write, never the credential "
            "file alone: Codex saves by renaming .auth-XXXXXX over the real file and locks "
            "auth.json.lock beside it and $CODEX_HOME/auth.lock"
        ),
    }


def non_root_prerequisites(
    bundle: CompiledBundle, flags: CompileFlags | None = None
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
    roots = flags.roots if flags is not None else _input_of(bundle, "roots manifest")
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
    out += _carve_out_prerequisites(bundle, _trusted_uid(flags))
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
    """Writable roots (of any mode) the run-as user could not hold the sandbox's read-only
    carve-outs (`.git`, `.agents`, `.codex`, `.aws`) in, as `roots.LaunchProbe` decides for
    compile: as that user every command of the mode fails before it runs (measured, Codex
    0.171.0 as uid 65534 in agent-full-access: `bwrap: Can't mkdir /farm/.git: Permission
    denied`). Names present now are no remedy: a running session makes and removes them."""
    probe = LaunchProbe(uid)
    lay = bundle.layout
    ctx = session_contexts(lay.workspace_roots, tmpdir=lay.tmpdir, home=lay.home)[0]
    need: dict[str, tuple[str, list[str]]] = {}
    for p in bundle.profiles:
        eff = resolve({p.profile_id: p.codex_table()}, p.profile_id, ctx)
        for e in eff.entries:
            if e.kind != "path" or e.access != "write" or not eff.decide(e.path).writable:
                continue
            why = probe.blocker(e.path, CARVE_OUTS)
            if why is None:
                continue
            _, modes = need.setdefault(e.path, (why, []))
            if p.mode not in modes:
                modes.append(p.mode)
    return [
        {
            "path": path,
            "need": (
                f"writable root of mode {', '.join(modes)}: it {why}; make it writable for the "
                "run-as user (its own directory, or a tmpfs or volume it owns), or compile with "
                "--run-as that uid: the sandbox creates those names there as that user, and every "
                "command of the mode fails when it cannot (bwrap: Can't mkdir)"
            ),
        }
        for path, (why, modes) in sorted(need.items())
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


def codex_entries(
    bundle: CompiledBundle, flags: CompileFlags | None = None
) -> list[dict[str, Any]]:
    """Plain `codex app-server` and `codex exec` (no adapter): args after the codex binary,
    env, cwd and, per mode, how to select it."""
    home = _codex_home(bundle)
    env: dict[str, str] = {}
    if home is not None:
        env["CODEX_HOME"] = os.path.abspath(home)
    supplies = {
        "codex": f"path of a codex {codex_version()} binary: argv is [codex, *args]; substitute "
        "it for ${codex} in command"
    }
    env.update(_session_env(bundle, supplies))
    roots = list(bundle.layout.workspace_roots)
    cwd = roots[0] if roots else None
    overrides = [a for line in override_lines(bundle) for a in ("-c", line)]
    common = {
        "codex_version": codex_version(),
        "env": env,
        "cwd": cwd,
        "files": _lock_files(bundle),
        "mode_ids": _acp_mode_ids(bundle),
        "requirements": requirements_item(bundle, flags),
        "launcher_supplies": supplies,
        "run_as": run_as_of(flags),
        "non_root_required": False,
    }
    server_modes: dict[str, Any] = {}
    exec_modes: dict[str, Any] = {}
    for mode, pid in sorted(_mode_ids(bundle).items()):
        policy = emitted_approvals(bundle, mode).get("approval_policy")
        turn: dict[str, Any] = {"permissions": pid}
        extra = ["-c", f"default_permissions={json.dumps(pid)}"]
        if policy is not None:
            turn["approvalPolicy"] = policy
            extra += ["-c", f"approval_policy={value(policy)}"]
        server_modes[mode] = {"profile_id": pid, "select": turn}
        exec_modes[mode] = {"profile_id": pid, "select": extra}
    extra_roots = [a for r in roots[1:] for a in ("--add-dir", r)]
    # --skip-git-repo-check: a workspace need not be a git repository; profilec marks every
    # workspace root untrusted whatever Codex's own check would have said.
    exec_args = ["exec", "--skip-git-repo-check", *overrides]
    if cwd is not None:
        exec_args += ["-C", cwd]
    exec_args += extra_roots
    return [
        {
            "launcher": "codex app-server",
            **common,
            "command": ["${codex}", "app-server", *overrides],
            "args": ["app-server", *overrides],
            "initialize": {"capabilities": {"experimentalApi": True}},
            "thread_start": {"cwd": cwd} if cwd is not None else {},
            "modes": server_modes,
            "never_send": list(APP_SERVER_NEVER_SEND),
            "statement": (
                f"{ENV_STATEMENT}; start the process with args; thread/start with thread_start "
                f"(the default mode, {bundle.default_profile_id}, is selected by the -c lines); to "
                "run a turn in another mode send turn/start with that mode's `select` "
                "(experimentalApi); never send what never_send lists"
            ),
        },
        {
            "launcher": "codex exec",
            **common,
            "command": ["${codex}", *exec_args],
            "args": exec_args,
            "modes": exec_modes,
            "never_send": [
                "-s/--sandbox",
                "--full-auto",
                "--dangerously-bypass-approvals-and-sandbox",
            ],
            "statement": (
                f"{ENV_STATEMENT}; run [codex, *args, *modes[mode].select, prompt] (the default "
                "mode needs no select); never pass what never_send lists: each replaces the profile"
            ),
        },
    ]


def render_launch_with(
    bundle: CompiledBundle,
    catalog: AdapterCatalog,
    flags: CompileFlags | None = None,
    layout: PlanLayout | None = None,
) -> str:
    """The launch document: one entry per catalog adapter build, plain `codex app-server` and
    `codex exec`, the watch instructions and the trusted parent's uid, LF-terminated JSON.
    `flags` (the compile's) makes the watch argv exact; without them the paths come from the
    bundle's trusted base. `layout` is the plan layout the compile read (--plan-layout): the
    watch then checks the requirements file the plan binds."""
    roots = list(bundle.layout.workspace_roots)
    doc = {
        "schema_version": 1,
        "default_profile_id": bundle.default_profile_id,
        # Canonical (resolved at the edge): a cwd or writable root spelled through a symlink
        # makes Codex drop every deny under its real location. Pass `cwd` as the session cwd
        # (`-C`, ACP `cwd`) and the rest as additional workspace roots, exactly as spelled.
        "cwd": roots[0] if roots else None,
        "workspace_roots": roots,
        "adapters": [launch_entry(bundle, e, flags) for e in catalog.adapters],
        "codex": codex_entries(bundle, flags),
        "watch": watch_entry(bundle, flags, watched_requirements(layout)),
        "trusted_parent": trusted_parent_entry(bundle, flags),
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_launch(bundle: CompiledBundle) -> str:
    """The launch document against the shipped catalog."""
    return render_launch_with(bundle, load_catalog())
