"""The compile pipeline: the edge (`Inputs`, each file read once) into the pure `compile_bundle`,
plus the checks only the edge can make (trusted-side inputs, other identities, the session
CODEX_HOME's login, and whether the sandbox would start what compile emits). `compile_edge` is
called by the compile step alone (compiler/compiled.py `compile_step`, which reads the plan
layout first): every command and the library (compiler/library.py) compile through that.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .codex.resolve import PLACEHOLDER_CWD
from .compile import compile_bundle
from .errors import InputError, LayoutError, SandboxRefusesError, UsageError
from .inputs import Inputs
from .launchprobe import LaunchProbe
from .models.compiled import CompiledBundle, ForeignDir, TrustedPath
from .models.roots import LaunchLayout
from .paths import (
    CODEX_HOME_UNDER_TEMP_REASON,
    check_absolute,
    codex_home_temp_dir,
    is_within,
    launch_temp_dir,
    parent,
)
from .projects import untrusted_project_paths
from .roots import check_launch_dirs, resolve_home, resolve_roots, resolve_workspace_roots
from .startup import startup_refusals
from .trustedbase import (
    LAUNCH_PATH_DIR,
    MCP_SERVER_CWD,
    WORKSPACE_HOLDER,
    launch_path_dirs,
    resolve_trusted_base,
    resolve_trusted_inputs,
    under_temp_dir,
)

if TYPE_CHECKING:
    from .models.compiled import ResolvedHome, ResolvedRoot
    from .models.roots import RootSpec


#: What a foreign directory is to its identity (models.compiled.ForeignDir.what).
ForeignKind: TypeAlias = Literal["codex-home", "home", "workspace", "tmpdir", "credential-store"]


def default_codex_home(roots: Sequence[ResolvedRoot]) -> str | None:
    """The directory holding a codex root's link (backend or id `codex`), if exactly one."""
    homes = sorted({parent(r.path) for r in roots if r.backend == "codex" or r.id == "codex"})
    if len(homes) > 1:
        raise UsageError(
            f"codex roots live in several directories ({', '.join(homes)}); pass --codex-home"
        )
    return homes[0] if homes else None


#: HOME files the Codex parent runs or reads as itself: the login-shell files (the shell
#: snapshot sources them; profiles/parent.toml turns it off, these stay read-only anyway) and
#: the user git config its turn-start `git status` reads (clean/smudge filters run as the
#: parent: measured on 0.171.0). A missing one is masked so it cannot be created.
HOME_LOGIN_FILES = (
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".bashrc",
    ".bash_logout",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
)
HOME_GIT_CONFIG = (".gitconfig", ".config/git")


def parent_input_paths(
    inputs: Inputs, workspace_roots: Sequence[str], home: str | None
) -> list[tuple[str, str]]:
    """(path, role) of every trusted-side input no mode may write: profilec's own inputs, each
    vouched MCP server's cwd (its wrapper's CODEX_HOME), the launch PATH's directories before
    the system ones (this process's PATH: the launcher starts Codex with it), the session HOME's
    login-shell and git config files, the directory holding each workspace root (so no command
    can swap the root for a link), and the `.git` name in each directory above a workspace root
    (the parent runs git there at every turn; a `.git` planted above a workspace, or an
    enclosing repository's config, would run a model-written filter as the parent). Paths
    only; nothing is opened."""
    out: list[tuple[str, str]] = [(os.path.abspath(inputs.roots_path), "roots manifest")]
    pdir = os.path.abspath(inputs.profiles_dir)
    if not under_temp_dir(os.path.realpath(pdir)):  # a scratch checkout: see roots.py
        out.append((pdir, "policy directory"))
    if inputs.flags.vouched_mcp:
        out.append((os.path.abspath(inputs.flags.vouched_mcp), "vouched MCP servers"))
    if home:
        out += [(f"{home.rstrip('/')}/{n}", "HOME login-shell file") for n in HOME_LOGIN_FILES]
        out += [(f"{home.rstrip('/')}/{n}", "HOME git config") for n in HOME_GIT_CONFIG]
    vouched = inputs.vouched()
    if vouched is not None:
        out += [(s.cwd, MCP_SERVER_CWD) for _, s in sorted(vouched.servers.items())]
    out += [(d, LAUNCH_PATH_DIR) for d in launch_path_dirs(os.environ.get("PATH", os.defpath))]
    for root in workspace_roots:
        if parent(root) != "/":
            out.append((parent(root), WORKSPACE_HOLDER))
        # Every directory up to /: git skips a `.git` that is not a valid repository (an empty
        # directory Codex leaves as a mount target) and goes on searching above it.
        cur = parent(root)
        while cur != "/":
            out.append((f"{cur}/.git", f"git repository above workspace root {root}"))
            cur = parent(cur)
    return out


def trusted_paths(
    inputs: Inputs, workspace_roots: Sequence[str], home: str | None
) -> tuple[TrustedPath, ...]:
    """The trusted base for one compile or check: reviewed policy, the manifest's section,
    discovered installs, and the trusted-side inputs (`parent_input_paths`)."""
    policy = inputs.policy()
    found = resolve_trusted_base(policy.trusted_base, inputs.manifest().trusted_base)
    found += resolve_trusted_inputs(parent_input_paths(inputs, workspace_roots, home))
    seen: set[str] = set()
    out: list[TrustedPath] = []
    for t in found:
        if t.path in seen:
            continue  # the first declaration wins (a policy deny over an input read)
        seen.add(t.path)
        out.append(t)
    return tuple(out)


def foreign_spec(codex_home: str | None, manifest: Any) -> Any:
    """Whether a root spec belongs to another identity than the session's (`--codex-home`):
    a codex root whose link sits in another directory, or one inside another declared
    identity's CODEX_HOME or HOME. Without --codex-home no root is foreign."""
    if codex_home is None:
        return None
    mine = {codex_home, resolve_workspace_roots([codex_home])[0]}
    others = [
        d
        for ident in getattr(manifest, "identities", ()) or ()
        for d in (ident.codex_home, ident.home)
        if d and ident.codex_home not in mine
    ]

    def foreign(spec: Any) -> bool:
        if any(is_within(spec.path, d) for d in others):
            return True
        link_dir = parent(spec.path)
        if link_dir in mine or resolve_workspace_roots([link_dir])[0] in mine:
            return False
        return bool(spec.backend == "codex" or spec.id == "codex")

    return foreign


def other_identities(
    roots: Sequence[ResolvedRoot],
    manifest: Any,
    session: ResolvedHome | None,
    skipped: Sequence[Any] = (),
) -> tuple[ForeignDir, ...]:
    """Every other identity's CODEX_HOME, HOME, workspace directories and TMPDIR in the
    manifest (canonical): each codex root's link directory, and each declared identity, less
    the session's own.

    The session is the identity whose CODEX_HOME is `session` (--codex-home, or the one
    inferred). Without a session CODEX_HOME nothing is foreign (compile refuses that case)."""
    if session is None:
        return ()
    mine = {session.path, session.canonical}
    found: dict[str, ForeignDir] = {}

    def add(path: str, identity: str, what: ForeignKind) -> None:
        canonical = resolve_workspace_roots([path])[0]
        if path in mine or canonical in mine:
            return
        found.setdefault(canonical, ForeignDir(path=canonical, identity=identity, what=what))

    declared: dict[str, str] = {}
    for ident in getattr(manifest, "identities", ()) or ():
        canonical = resolve_workspace_roots([ident.codex_home])[0]
        declared[canonical] = ident.id
        if ident.codex_home in mine or canonical in mine:
            continue  # the session's own identity: today's behaviour
        add(ident.codex_home, ident.id, "codex-home")
        if ident.home:
            add(ident.home, ident.id, "home")
        for ws in ident.workspace_roots:
            add(ws, ident.id, "workspace")
        if ident.tmpdir:
            add(ident.tmpdir, ident.id, "tmpdir")
    for r in roots:
        if not (r.backend == "codex" or r.id == "codex") or not r.hops:
            continue
        link_dir = parent(r.hops[0].link)  # canonical directory of the declared link
        add(link_dir, declared.get(link_dir, f"of root {r.id}"), "codex-home")
    for spec in skipped:  # another identity's root whose chain is broken today
        if spec.backend == "codex" or spec.id == "codex":
            add(parent(spec.path), f"of root {spec.id}", "codex-home")
    for store in getattr(manifest, "credential_stores", ()) or ():
        add(store, "every identity", "credential-store")
    return tuple(found[p] for p in sorted(found))


def resolve_layout(
    inputs: Inputs,
    *,
    foreign: Callable[[RootSpec], bool] | None = None,
    skipped: list[RootSpec] | None = None,
) -> tuple[tuple[str, ...], tuple[ResolvedRoot, ...], str | None]:
    """The root resolution of one run: (the workspace roots' canonical spellings, every root
    resolved under both spellings of each workspace root, the CODEX_HOME path: `--codex-home`,
    else the directory holding the codex root, else None). `foreign` and `skipped` as in
    roots.resolve_roots."""
    ws = inputs.flags.workspace_roots
    canonical_ws = resolve_workspace_roots(ws)
    check_ws = tuple(dict.fromkeys([*ws, *canonical_ws]))
    roots = resolve_roots(inputs.manifest(), check_ws, foreign=foreign, skipped=skipped)
    return canonical_ws, roots, inputs.flags.codex_home or default_codex_home(roots)


def _run_as(uid: int | None) -> int | None:
    if uid is not None and uid < 0:
        raise UsageError(f"--run-as {uid}: a uid is 0 or more")
    return uid


def compile_edge(inputs: Inputs, *, lock_created: bool = False) -> CompiledBundle:
    """Compile from the one edge (compiler/inputs.py): every file's bytes come from `inputs`.
    Each call compiles (roots are resolved afresh). Called by `compiled.compile_step` only,
    which hands the bundle on (`Compiled`); nothing else compiles. `lock_created`: see
    `refuse_unstartable`."""
    flags = inputs.flags
    manifest = inputs.manifest()
    policy = inputs.policy()
    ws = flags.workspace_roots
    check_launch_dirs(ws, flags.tmpdir)  # a misspelled one would compile silently
    skipped: list[Any] = []
    canonical_ws, roots, home_path = resolve_layout(
        inputs, foreign=foreign_spec(flags.codex_home, manifest), skipped=skipped
    )
    if home_path is None:
        raise UsageError(
            "no private CODEX_HOME: pass --codex-home (or declare the login as a root with "
            'backend = "codex" in it); without it the writer\'s lock CODEX_HOME/auth.lock '
            "stays open to model commands"
        )
    resolved_home = resolve_home(home_path)
    check_home_outside_temp(home_path, resolved_home.canonical, flags.tmpdir)
    check_home_login_is_declared(manifest, resolved_home)
    if flags.home is not None:
        check_absolute(flags.home, what="--home", error=InputError)
    session: dict[str, Any] | None = None
    stripped: tuple[str, ...] = ()
    classes: dict[str, str] = {}
    reasons: dict[str, str] = {}
    raw = inputs.session_raw()
    if raw is not None:
        from .session import sanitize_with

        session, cut = sanitize_with(raw, inputs.allowlist())
        stripped = tuple(s.path for s in cut)
        classes = {s.path: s.cls for s in cut}
        reasons = {s.path: s.why for s in cut if s.why is not None}
    # The canonical spellings: a writable root (or cwd) spelled through a symlink drops every
    # deny under its real location in Codex 0.171.0, so compile emits only real paths.
    # TMPDIR canonical too: `:tmpdir` is a writable root in agent mode.
    tmp = resolve_workspace_roots([flags.tmpdir])[0] if flags.tmpdir else None
    layout = LaunchLayout(
        workspace_roots=canonical_ws, codex_home=home_path, home=flags.home, tmpdir=tmp
    )
    vouched = inputs.vouched()
    if vouched is not None:  # its cwds' own refusals first: each cwd joins the trusted base
        vouched.server_tables(layout, sorted({r.vault for r in roots}))
    trusted = trusted_paths(inputs, canonical_ws, flags.home)
    bundle = compile_bundle(
        roots,
        policy,
        layout,
        resolved_home,
        session_config=session,
        stripped_session_keys=stripped,
        stripped_session_classes=classes,
        stripped_session_reasons=reasons,
        vouched_mcp=vouched,
        untrusted_projects=untrusted_project_paths(ws, canonical_ws),
        trusted_base=trusted,
        other_identities=other_identities(roots, manifest, resolved_home, skipped),
        probe=LaunchProbe(_run_as(flags.run_as)),
    )
    refuse_unstartable(bundle, lock_created=lock_created)
    return bundle


def check_home_outside_temp(codex_home: str, canonical: str, tmpdir: str | None) -> None:
    """CODEX_HOME (as given or canonical) must not lie under the temp dir the launch gives Codex
    (`--tmpdir`, else this process's $TMPDIR, else /tmp: paths.launch_temp_dir, as check's
    PC035): Codex refuses to create its sandbox helper there and no model command runs, so the
    profile would compile for a session that cannot work. A LayoutError (exit 2): the launch
    layout is what is wrong (two of its directories overlap), not a flag's spelling."""
    tmp = tmpdir if tmpdir is not None else os.environ.get("TMPDIR")
    temps = {launch_temp_dir(tmp)}
    temps |= {os.path.realpath(t) for t in temps}
    for home in dict.fromkeys((codex_home, canonical)):
        for temp in sorted(temps):
            if codex_home_temp_dir(home, temp):
                raise LayoutError(
                    f"CODEX_HOME {home} is under the temp dir {temp}: "
                    f"{CODEX_HOME_UNDER_TEMP_REASON}",
                    where="--codex-home",
                    hint="put CODEX_HOME under a persistent directory (e.g. /var/lib/<agent>), "
                    "or launch Codex with a TMPDIR outside it and compile with that --tmpdir",
                )


def check_home_login_is_declared(manifest: Any, home: ResolvedHome) -> None:
    """A login in the session CODEX_HOME (auth.json) must be a root the manifest declares,
    itself or by its link target: compile protects declared roots only, so another agent's
    CODEX_HOME (or a mistyped one) would leave that credential readable to model commands.
    lstat/readlink only. A CODEX_HOME without a login yet passes (watch reports one that
    appears: `private-auth-plain-file`, `appeared`)."""
    login = os.path.join(home.canonical, "auth.json")
    if not os.path.lexists(login):
        return
    declared: set[str] = set()
    vaults: set[str] = set()  # compile denies each root's vault: the canonical target's dir
    homes: set[str] = set()
    for spec in manifest.roots:
        declared |= {spec.path, os.path.realpath(spec.path)}
        vaults.add(parent(os.path.realpath(spec.path)))
        if spec.backend == "codex" or spec.id == "codex":
            homes.add(parent(spec.path))
    real = os.path.realpath(login)
    if login in declared or real in declared or any(is_within(real, v) for v in vaults):
        return
    where = f" (the manifest's: {', '.join(sorted(homes))})" if homes else ""
    raise UsageError(
        f"CODEX_HOME {home.path} holds a login (auth.json) that no root of the roots manifest "
        "declares: it would stay readable to model commands",
        hint=f"pass the CODEX_HOME whose auth.json the manifest declares{where}, or declare "
        f'{home.path}/auth.json as a root with backend = "codex"',
    )


def refuse_unstartable(bundle: CompiledBundle, *, lock_created: bool = False) -> None:
    """Fail closed when the sandbox would refuse a mode's profile on this filesystem: a
    launcher that trusts compile would get a session in which no command runs. `lock_created`:
    the output creates CODEX_HOME's writer's lock before any launch (`--format codex-home`
    writes it, a launch document's `files` create it), so it is judged present."""
    found = startup_refusals(bundle, PLACEHOLDER_CWD, lock_created=lock_created)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise SandboxRefusesError(found[0].line() + more, where=found[0].refusal.path)
