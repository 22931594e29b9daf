"""The pure compile step: resolved roots + policy + layout -> CompiledBundle. No I/O.

Per ACP mode: the mode's base profile, plus
  * a `deny` for every vault: the directory that holds a canonical credential target (a
    directory root is its own vault; an allowed-missing root's is the intended parent), nested
    vaults minimized under a denied one. A deny on the file alone does not survive the trusted
    writer's save (temp file + rename detaches the mask in running sandboxes), and the writer's
    temp and lock files live in the vault;
  * a `read` entry for every directory that holds a hop or a target, and for the private
    CODEX_HOME, whenever the mode can write anywhere, so no model command can re-point a link,
    move a directory away, plant a file or edit the private config.
Then every result is re-evaluated with Codex's rules; a root that still is not denied, or a
holder directory that still is writable, fails compilation for that root, hop and mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from .ancestry import Protected, unsafe_ancestors
from .codex.resolve import (
    EffectiveProfile,
    EvalContext,
    cwd_contexts,
    follows_cwd,
    session_contexts,
)
from .codex.vocabulary import SPECIAL_ROOT, WRITER_LOCK
from .errors import PolicyError, UnsafeRootError
from .launchprobe import LaunchProbe
from .models.compiled import CompiledBundle, CompiledEntry, CompiledProfile, Finding, Provenance
from .models.policy import ACP_MODES
from .paths import ancestors, is_within, parent
from .roots import check_hard_links, check_possible_roots
from .trustedbase import root_directories
from .wholepath import (
    Probe,
    Resolutions,
    check_literal,
    check_startable,
    drop_unneeded_masks,
    pin_entries,
    protected_paths,
    root_split,
    trusted_entries,
)

if TYPE_CHECKING:
    from .codex.resolve import Entry
    from .models.compiled import ForeignDir, ResolvedHome, ResolvedRoot, TrustedPath
    from .models.mcp import VouchedMcpServers
    from .models.policy import ModeProfilePolicy
    from .models.roots import LaunchLayout
    from .policy import Policy


class _ProbeOnce:
    """A probe that asks the host once per path and bundle: every mode sees one snapshot of
    the host (and the same directories are not lstat'ed and statvfs'ed once per mode)."""

    __slots__ = ("_blocked", "_probe", "_subdirs")

    def __init__(self, probe: Probe) -> None:
        self._probe = probe
        self._blocked: dict[tuple[str, tuple[str, ...]], str | None] = {}
        self._subdirs: dict[str, tuple[str, ...]] = {}

    def blocker(self, path: str, names: Sequence[str]) -> str | None:
        key = (path, tuple(names))
        if key not in self._blocked:
            self._blocked[key] = self._probe.blocker(path, names)
        return self._blocked[key]

    def subdirs(self, path: str) -> tuple[str, ...]:
        if path not in self._subdirs:
            self._subdirs[path] = self._probe.subdirs(path)
        return self._subdirs[path]


class Shared:
    """What compile_mode computes once per bundle: the mode-independent entries, the protected
    paths, the host probe's answers, and the entry paths already checked against the symlink
    rule. (A plain class: a mutable per-bundle cache needs none of a dataclass's generated
    methods, which each process would compile.)"""

    __slots__ = ("deny", "holder", "passed", "probe", "protected")

    def __init__(self) -> None:
        self.deny: list[Any] | None = None
        self.holder: list[Any] | None = None
        self.passed: set[str] = set()
        self.protected: list[Protected] | None = None
        self.probe: _ProbeOnce | None = None


def _base_table(base: ModeProfilePolicy, workspace_roots: Sequence[str]) -> dict[str, Any]:
    table: dict[str, Any] = {"description": base.description}
    if base.extends:
        table["extends"] = base.extends
    if workspace_roots:
        table["workspace_roots"] = {r: True for r in workspace_roots}
    table["filesystem"] = {
        k: (dict(v) if isinstance(v, dict) else v) for k, v in base.filesystem.items()
    }
    table["network"] = {"enabled": base.network.enabled}
    return table


def _check_policy_names_no_root(
    base: ModeProfilePolicy, roots: Sequence[ResolvedRoot], where: str
) -> None:
    keys = [key for key in base.filesystem if key.startswith("/")]
    if not keys:
        return
    protected: list[str] = []
    for root in roots:
        protected.extend(root.spellings)
    for key in keys:
        for p in protected:
            if is_within(key, p):
                raise PolicyError(
                    f"policy key {key!r} names protected path {p!r}; policy must not name "
                    "credential paths",
                    where=where,
                )


def _deny_entries(
    roots: Sequence[ResolvedRoot], foreign: Sequence[ForeignDir] = ()
) -> list[CompiledEntry]:
    """One deny per vault (the directory holding a canonical target; a directory root is its own
    vault); a vault inside another denied vault is folded into it.

    The target file itself gets no entry of its own: its vault's deny covers it, a file deny
    does not survive the trusted writer's rename, and Codex refuses to start a sandbox that
    denies a directory and also an existing file inside it.
    """
    by_vault: dict[str, list[Provenance]] = {}
    for root in roots:
        by_vault.setdefault(root.vault, []).append(
            Provenance(reason="vault", root_id=root.id, detail=root.target)
        )
    for f in foreign:
        # Another identity's whole CODEX_HOME (transcripts, snapshots, its writer's lock), HOME,
        # workspace directory or TMPDIR (one run-as uid reads them all outside the sandbox).
        what = {
            "codex-home": "CODEX_HOME",
            "home": "HOME",
            "workspace": "workspace directory",
            "tmpdir": "TMPDIR",
        }.get(f.what)
        detail = f"{what} of identity {f.identity}" if what else "credential store of the manifest"
        by_vault.setdefault(f.path, []).append(Provenance(reason="other-identity", detail=detail))
    kept: list[str] = []
    for vault in sorted(by_vault):  # a parent sorts before its children
        cover = next((v for v in kept if is_within(vault, v)), None)
        if cover is not None:
            # Minimized: the covering vault's entry carries this root's provenance too.
            by_vault[cover].extend(by_vault[vault])
            continue
        kept.append(vault)
    return [CompiledEntry(path=v, access="deny", provenance=tuple(by_vault[v])) for v in kept]


#: Where Codex keeps MCP servers' OAuth tokens without a keyring (CODEX_HOME).
MCP_TOKENS = ".credentials.json"


def writer_lock_path(home: ResolvedHome) -> str:
    """`$CODEX_HOME/auth.lock` (codex.WRITER_LOCK) at the canonical CODEX_HOME (a deny key must
    cross no link): every mode denies it, and `--format codex-home` creates it, so the deny masks
    the lock from sandbox start."""
    return f"{home.canonical.rstrip('/')}/{WRITER_LOCK}"


def _lock_entries(home: ResolvedHome | None, *, secret_config: bool = False) -> list[CompiledEntry]:
    """The writer's lock, the MCP OAuth token file; and CODEX_HOME/config.toml when it carries a
    vouched MCP server's per-launch credential (the trusted parent reads each outside the
    sandbox; no model command needs them)."""
    if home is None:
        return []
    prov = Provenance(reason="writer-lock", detail=home.path)
    out = [CompiledEntry(path=writer_lock_path(home), access="deny", provenance=(prov,))]
    # MCP OAuth tokens: Codex 0.171.0 stores them here when mcp_oauth_credentials_store is
    # `file` (or `auto` without a keyring); the parent reads them, no model command needs them.
    # A missing one gets no entry: CODEX_HOME is never writable, so no command creates it, and
    # the next compile after the parent writes it denies it.
    if home.mcp_tokens:
        tokens = Provenance(reason="private-config", detail="MCP OAuth tokens")
        out.append(
            CompiledEntry(
                path=f"{home.canonical.rstrip('/')}/{MCP_TOKENS}",
                access="deny",
                provenance=(tokens,),
            )
        )
    if secret_config:
        cfg = f"{home.canonical.rstrip('/')}/config.toml"
        why = Provenance(reason="private-config", detail="vouched MCP server credentials")
        out.append(CompiledEntry(path=cfg, access="deny", provenance=(why,)))
    return out


def _check_vaults(
    roots: Sequence[ResolvedRoot], layout: LaunchLayout, home: ResolvedHome | None
) -> None:
    """A vault is denied whole, so it must hold nothing a model command or Codex itself needs."""
    needed: list[tuple[str, str]] = [(w, "workspace root") for w in layout.workspace_roots]
    if home is not None:
        needed.append((home.canonical, "the private CODEX_HOME"))
        if home.path != home.canonical:
            needed.append((home.path, "the private CODEX_HOME"))
    elif layout.codex_home:
        needed.append((layout.codex_home, "the private CODEX_HOME"))
    if layout.home:
        needed.append((layout.home, "HOME"))
    for root in roots:
        what = f"the directory holding {root.target}" if root.vault != root.target else "itself"
        where = f"root {root.id!r}"
        fix = "put the credential in a directory of its own and point the link there"
        if root.vault == "/":
            raise UnsafeRootError(
                f"vault / ({what}) would deny the whole filesystem", where=where, hint=fix
            )
        for path, name in needed:
            if not is_within(path, root.vault):
                continue
            if name == "the private CODEX_HOME" and not root.hops and root.vault == path:
                msg = (
                    f"credential {root.target} is a plain file directly in {name} {path}; "
                    "CODEX_HOME must stay readable for Codex's own helper, so it cannot be "
                    "its vault"
                )
            else:
                rel = "is" if path == root.vault else "contains"
                msg = f"vault {root.vault} ({what}) {rel} {name} {path}"
            raise UnsafeRootError(msg, where=where, hint=fix)


def _check_foreign(
    foreign: Sequence[ForeignDir], layout: LaunchLayout, home: ResolvedHome | None
) -> None:
    """Another identity's directory is denied whole: it must hold nothing this session needs."""
    needed: list[tuple[str, str]] = [(w, "workspace root") for w in layout.workspace_roots]
    if home is not None:
        needed += [(home.canonical, "the private CODEX_HOME")]
        needed += [(d, "a directory holding the private CODEX_HOME") for d in home.holder_dirs]
    if layout.home:
        needed.append((layout.home, "HOME"))
    if layout.tmpdir:
        needed.append((layout.tmpdir, "TMPDIR"))
    for f in foreign:
        for path, name in needed:
            if is_within(path, f.path):
                raise UnsafeRootError(
                    f"{f.what} {f.path} of identity {f.identity} holds this session's {name} "
                    f"{path}",
                    where="roots manifest: identities",
                    hint="give every identity its own directories, or pass this identity's "
                    "--codex-home",
                )


def _holder_entries(
    roots: Sequence[ResolvedRoot], home: ResolvedHome | None, denied_dirs: Iterable[str]
) -> list[CompiledEntry]:
    """`read` entries for directories that hold a hop, a target, or the private CODEX_HOME."""
    denied = set(denied_dirs)
    holders: dict[str, list[Provenance]] = {}
    for root in roots:
        for d in root.holder_dirs:
            hop_index = next((h.index for h in root.hops if h.link.rsplit("/", 1)[0] == d), None)
            holders.setdefault(d, []).append(
                Provenance(reason="holder-dir", root_id=root.id, hop_index=hop_index)
            )
    if home is not None:
        holders.setdefault(home.canonical, []).append(
            Provenance(reason="codex-home", detail=home.path)
        )
        for d in home.holder_dirs:
            holders.setdefault(d, []).append(Provenance(reason="codex-home", detail=home.path))
    out: list[CompiledEntry] = []
    for d in sorted(holders):
        if any(a in denied for a in ancestors(d)):
            continue  # already denied: neither readable nor writable
        out.append(CompiledEntry(path=d, access="read", provenance=tuple(holders[d])))
    return out


def _workspace_entries(
    layout: LaunchLayout, entries: Sequence[CompiledEntry], mode: str
) -> list[CompiledEntry]:
    """A `write` entry on each compiled (canonical) workspace root: the mode's writable
    workspace, named explicitly instead of through `:workspace` (`:workspace_roots` = write),
    which also makes the session cwd writable, wherever the client starts the session
    (measured on codex 0.171.0 and 0.166.0: with the cwd at CODEX_HOME, `touch ./x` succeeded
    under `:workspace` despite a `read` entry on CODEX_HOME; under `:read-only` with these
    entries it failed, "Read-only file system", from every cwd).

    A workspace root that already carries an entry (a holder directory, the private
    CODEX_HOME) must stay read-only: refused (exit 5), as the proof refused it before."""
    have = {e.path: e for e in entries}
    out: list[CompiledEntry] = []
    # one provenance for every workspace root (a frozen model: shared, not copied)
    why = (Provenance(reason="workspace-root", detail="--workspace-root (never the session cwd)"),)
    for ws in dict.fromkeys(layout.workspace_roots):
        if ws in have:
            e = have[ws]
            reasons = ", ".join(sorted({p.reason for p in e.provenance}))
            raise UnsafeRootError(
                f"workspace root {ws} is also a {e.access} entry ({reasons}); writing it would "
                "let a model command replace what it holds",
                where=f"mode {mode}",
                hint="choose a workspace root that holds no credential link or CODEX_HOME",
            )
        out.append(CompiledEntry(path=ws, access="write", provenance=why))
    return out


def outside_cwds(
    roots: Sequence[ResolvedRoot], layout: LaunchLayout, home: ResolvedHome | None
) -> list[str]:
    """Session cwds outside the compiled workspace the proof also considers: the client picks
    the cwd (ACP session/new, app-server thread/start), and a cwd at CODEX_HOME, HOME, a vault,
    a vault's parent or a holder directory is where a writable cwd would hand over a protected
    path. In that order (CODEX_HOME and its holders, HOME, then per root), each once, without
    the workspace roots themselves (the launch contexts cover those)."""
    found: list[str] = []
    if home is not None:
        found += (home.canonical, home.path, *home.holder_dirs)
    elif layout.codex_home:
        found.append(layout.codex_home)
    if layout.home:
        found.append(layout.home)
    for r in roots:
        found += (r.vault, parent(r.vault), *r.holder_dirs)
    ws = set(layout.workspace_roots)
    return [c for c in dict.fromkeys(found) if c not in ws]


def _link_paths(roots: Sequence[ResolvedRoot]) -> set[str]:
    return {h.link for r in roots for h in r.hops}


def compile_mode(
    mode: str,
    profile_id: str,
    base: ModeProfilePolicy,
    roots: Sequence[ResolvedRoot],
    layout: LaunchLayout,
    home: ResolvedHome | None,
    *,
    where: str = "profiles",
    shared: Shared | None = None,
    secret_config: bool = False,
    trusted: Sequence[TrustedPath] = (),
    root_dirs: Sequence[str] | None = None,
    foreign: Sequence[ForeignDir] = (),
    probe: Probe | None = None,
) -> CompiledProfile:
    """Compile one mode's profile and prove it protects every root, or raise UnsafeRootError.

    `root_dirs` are the host's real top-level directories (roots.root_directories, read from
    this host when not given and a mode needs them): a mode whose policy writes `:root` gets
    `:root` = read plus a `write` entry on each of them (`root_split`).

    `probe` answers whether the launch user can start Codex over a writable root (its `.git`,
    `.agents`, `.codex` mount targets): roots.LaunchProbe for the current user when not given.
    A top-level or pinned directory it cannot hold them in becomes read-only; a writable root
    the policy or layout names there is refused (`check_startable`).

    `shared` lets compile_bundle reuse the mode-independent deny and holder entries (computed
    on first use) across modes; they are immutable, so every mode gets equal values.
    """
    cache = Shared() if shared is None else shared
    _check_policy_names_no_root(base, roots, where)
    ws = list(layout.workspace_roots)
    base_table = _base_table(base, ws)
    # with the launcher's TMPDIR when it named one (`:tmpdir` then covers it, as at run time)
    contexts = session_contexts(ws, tmpdir=layout.tmpdir)
    resolved = Resolutions(profile_id)
    base_writes = False
    for ctx in contexts:
        eff = resolved(base_table, ctx)
        if eff.unrestricted or any(e.access == "write" for e in eff.entries):
            base_writes = True
    if cache.deny is None:
        _check_vaults(roots, layout, home)
        _check_foreign(foreign, layout, home)
        cache.deny = _deny_entries(roots, foreign)
    denies = cache.deny
    entries = [*denies, *_lock_entries(home, secret_config=secret_config)]
    if base_writes or base.write_workspace_roots:
        if cache.holder is None:
            cache.holder = _holder_entries(roots, home, [e.path for e in denies])
        entries.extend(cache.holder)
    if base.write_workspace_roots:
        entries.extend(_workspace_entries(layout, entries, mode))
    if cache.probe is None:
        if probe is None:
            probe = LaunchProbe()
        cache.probe = _ProbeOnce(probe)
    probe = cache.probe
    if base.filesystem.get(SPECIAL_ROOT) == "write":
        dirs = root_directories() if root_dirs is None else root_dirs
        entries.extend(root_split(base_table, entries, dirs, trusted, probe))
    # Before any evaluation: a glob character would make the evaluator (and Codex) read an
    # entry as a pattern. Pins are ancestors of checked paths, so they hold none either.
    check_literal(entries, roots, trusted)
    check_literal(trusted, roots, trusted)
    entries.extend(trusted_entries(resolved, base_table, entries, contexts, trusted, mode))
    if cache.protected is None:
        cache.protected = protected_paths(roots, home, trusted)
    protected = cache.protected
    entries.extend(pin_entries(resolved, base_table, entries, contexts, protected, mode, probe))
    entries = drop_unneeded_masks(resolved, base_table, entries, contexts, trusted)
    entries.sort(key=lambda e: (e.path, e.access))

    # Entries are canonical by construction; this guards the construction itself, because a
    # deny or read entry through a symlink makes Codex refuse to start every command.
    # (An entry that passed for an earlier mode passes again: same path, same links.)
    links = _link_paths(roots)
    for e in entries:
        if e.path in cache.passed or not e.path.startswith("/"):
            continue
        for a in ancestors(e.path):
            if a in links:
                raise UnsafeRootError(
                    f"entry {e.path} would cross symlink {a}; Codex refuses to start",
                    where=f"mode {mode}",
                )
    cache.passed.update(e.path for e in entries)

    profile: CompiledProfile = CompiledProfile(
        mode=mode,
        profile_id=profile_id,
        description=base.description,
        extends=base.extends,
        workspace_roots=tuple(ws),
        policy_filesystem=dict(base.filesystem),
        entries=tuple(entries),
        glob_scan_max_depth=base.glob_scan_max_depth,
        network_enabled=base.network.enabled,
    )
    # One resolution of what is emitted serves both checks below.
    effs = resolve_emitted(profile, contexts, resolved)
    check_startable(effs, probe, mode)
    # The proof also runs with the session cwd outside the workspace: the client picks it. A
    # profile that does not follow the cwd resolves the same entries at every cwd, so the first
    # (CODEX_HOME) stands for all of them; one that does is proved at each (roots x cwds).
    outside = cwd_contexts(outside_cwds(roots, layout, home), ws, tmpdir=layout.tmpdir)
    if not follows_cwd({profile_id: profile.codex_table()}, profile_id):
        outside = outside[:1]
    _prove(
        profile,
        roots,
        home,
        [*contexts, *outside],
        trusted,
        [*effs, *resolve_emitted(profile, outside, resolved)],
        protected,
    )
    return profile


def resolve_emitted(
    profile: CompiledProfile,
    contexts: Sequence[EvalContext],
    resolved: Resolutions | None = None,
) -> list[EffectiveProfile]:
    """The emitted `[permissions]` table of `profile`, resolved in each session context: what
    the proof and the startability check judge (exactly what Codex is given). `resolved`: the
    mode's Resolutions, when compile_mode already resolved tables for it."""
    resolve_one = resolved or Resolutions(profile.profile_id)
    table = profile.codex_table()
    return [resolve_one(table, ctx) for ctx in contexts]


Verdict = tuple[str | None, "Entry | None"]


def _decide_once(eff: EffectiveProfile, decided: dict[str, Verdict], path: str) -> Verdict:
    d = decided.get(path)
    if d is None:
        d = decided[path] = eff.winner(path)
    return d


def _require_deny(decide: Callable[[str], Verdict], path: str, what: str, where: str) -> None:
    """Raise UnsafeRootError unless `path` is denied, naming what it is and the winning entry."""
    access, won = decide(path)
    if access != "deny":
        winner = won.source if won else "no entry"
        raise UnsafeRootError(
            f"{what} {path} is {access or 'unlisted'} (winner: {winner}), not denied",
            where=where,
        )


def _prove(
    profile: CompiledProfile,
    roots: Sequence[ResolvedRoot],
    home: ResolvedHome | None,
    contexts: Sequence[EvalContext],
    trusted: Sequence[TrustedPath],
    effs: Sequence[EffectiveProfile],
    protected: Sequence[Protected],
) -> None:
    """Re-evaluate the compiled profile: targets denied, holder dirs and home not writable,
    no ancestor of a protected path renamable, the trusted base read-only or denied.

    `effs`: the emitted table resolved in each of `contexts` (`resolve_emitted`, shared with
    `check_startable`); `protected`: `protected_paths` of the bundle (computed once per bundle)."""
    for ctx, eff in zip(contexts, effs, strict=True):
        # Many roots share holder directories; a decision depends on the path alone.
        decided: dict[str, Verdict] = {}
        decide = partial(_decide_once, eff, decided)

        if eff.unrestricted:
            raise UnsafeRootError(
                "profile is unrestricted and cannot carry a deny", where=f"mode {profile.mode}"
            )
        where = f"mode {profile.mode}, cwd {ctx.cwd}"
        root_access, root_won = decide("/")
        if root_access == "write":
            raise UnsafeRootError(
                "/ is writable (winner: "
                f"{root_won.source if root_won else 'no entry'}); a model command could replace "
                "a top-level name such as the /lib64 or /bin symlink",
                where=where,
                hint="write top-level directories, never `:root` or `/` itself",
            )
        for p, anc, wroot in unsafe_ancestors(eff, protected):
            raise UnsafeRootError(
                f"{p.reason} {p.path}: directory {anc} can be renamed (its parent is writable "
                f"through {wroot}); a model command could move it and plant files at the old path",
                where=where,
                hint="move the vault out of the writable area",
            )
        for t in trusted:
            t_access, t_won = eff.winner(t.path)
            bad = t_access != "deny" if t.access == "deny" else t_access == "write"
            if bad:
                winner = t_won.source if t_won else "no entry"
                raise UnsafeRootError(
                    f"trusted-base path {t.path} is {t_access or 'unlisted'} (winner: {winner}), "
                    f"not {'denied' if t.access == 'deny' else 'read-only'}",
                    where=where,
                    hint="remove the policy entry that makes it writable",
                )
        for root in roots:
            _require_deny(decide, root.vault, f"root {root.id!r} vault", where)
            _require_deny(decide, root.target, f"root {root.id!r} target", where)
            for hd in root.holder_dirs:
                access, won = decide(hd)
                if access == "write":
                    hop = next((h for h in root.hops if h.link.rsplit("/", 1)[0] == hd), None)
                    what = f"hop {hop.link}" if hop else f"target {root.target}"
                    winner = won.source if won else "no entry"
                    raise UnsafeRootError(
                        f"root {root.id!r}: directory {hd} holding {what} stays writable "
                        f"(winner: {winner}); a model command could replace it",
                        where=f"mode {profile.mode}, cwd {ctx.cwd}",
                        hint="move the credential out of a writable root or out of the workspace",
                    )
        if home is not None:
            _require_deny(decide, writer_lock_path(home), "the credential writer's lock", where)
            for hd in (home.canonical, *home.holder_dirs):
                access, won = decide(hd)
                if access == "write":
                    winner = won.source if won else "no entry"
                    raise UnsafeRootError(
                        f"private CODEX_HOME directory {hd} stays writable (winner: {winner})",
                        where=f"mode {profile.mode}, cwd {ctx.cwd}",
                        hint="put CODEX_HOME outside writable roots",
                    )


def _findings(
    roots: Sequence[ResolvedRoot],
    stripped: Sequence[str],
    classes: Mapping[str, str] | None = None,
    reasons: Mapping[str, str] | None = None,
) -> tuple[Finding, ...]:
    out: list[Finding] = []
    for r in roots:
        if r.nlink is not None and r.nlink > 1:
            out.append(
                Finding(
                    code="hardlinked-target",
                    message=f"target has {r.nlink} hard links; a path deny covers no other",
                    root_id=r.id,
                    path=r.target,
                )
            )
        for h in r.hops_under_workspace:
            out.append(
                Finding(
                    code="hop-under-workspace",
                    message="a hop of this root lies under a workspace root",
                    root_id=r.id,
                    path=h,
                )
            )
        if r.kind == "missing":
            out.append(
                Finding(
                    code="missing-root",
                    message="root does not exist yet (allow_missing); its intended path is denied",
                    root_id=r.id,
                    path=r.target,
                )
            )
    for key in stripped:
        cls = (classes or {}).get(key)
        why = f" ({cls})" if cls else ""
        reason = (reasons or {}).get(key)
        message = (
            f"session config key {key!r} was stripped{why}: {reason}"
            if reason
            else f"session config key {key!r} was stripped{why}; agent config cannot set it"
        )
        out.append(Finding(code="session-config-stripped", message=message, path=None))
    return tuple(out)


def _approvals(policy: Policy) -> dict[str, dict[str, str]]:
    """Mode -> the approval keys profiles/modes.toml gives it (modes without any are left out)."""
    out: dict[str, dict[str, str]] = {}
    for mode, entry in policy.mode_map.modes.items():
        keys: dict[str, str] = {
            k: str(v)
            for k, v in (
                ("approval_policy", entry.approval_policy),
                ("approvals_reviewer", entry.approvals_reviewer),
            )
            if v is not None
        }
        if keys:
            out[mode] = keys
    return out


def compile_bundle(
    roots: Sequence[ResolvedRoot],
    policy: Policy,
    layout: LaunchLayout,
    home: ResolvedHome | None = None,
    *,
    session_config: dict[str, Any] | None = None,
    stripped_session_keys: Sequence[str] = (),
    stripped_session_classes: Mapping[str, str] | None = None,
    stripped_session_reasons: Mapping[str, str] | None = None,
    vouched_mcp: VouchedMcpServers | None = None,
    untrusted_projects: Sequence[str] = (),
    trusted_base: Sequence[TrustedPath] = (),
    root_dirs: Sequence[str] | None = None,
    other_identities: Sequence[ForeignDir] = (),
    probe: Probe | None = None,
) -> CompiledBundle:
    """Compile one profile per ACP mode (pure; the call a daemon makes per session launch).

    `probe`: the launch user's view of writable roots (compile_mode); the current user's when
    not given.
    """
    check_possible_roots(roots, home.canonical if home else None, layout.workspace_roots)
    for r in roots:
        if r.kind == "file":
            check_hard_links(r.id, r.target, r.kind, r.nlink)  # pure for a file: no I/O
    shared = Shared()
    profiles: list[CompiledProfile] = []
    order = [m for m in ACP_MODES if m in policy.mode_map.modes] + sorted(
        m for m in policy.mode_map.modes if m not in ACP_MODES
    )
    for mode in order:
        entry = policy.mode_map.modes[mode]
        profiles.append(
            compile_mode(
                mode,
                entry.profile_id,
                policy.bases[mode],
                roots,
                layout,
                home,
                where=f"{policy.source_dir}/{entry.base}",
                shared=shared,
                secret_config=bool(vouched_mcp and vouched_mcp.credentials()),
                trusted=trusted_base,
                root_dirs=root_dirs,
                foreign=other_identities,
                probe=probe,
            )
        )
    bundle: CompiledBundle = CompiledBundle(
        profiles=tuple(profiles),
        default_mode=policy.mode_map.default_mode,
        roots=tuple(roots),
        layout=layout,
        codex_home=home,
        findings=_findings(
            roots, stripped_session_keys, stripped_session_classes, stripped_session_reasons
        ),
        # a copy, as every mapping here: the bundle holds no dict its caller can still change
        session_config=None if session_config is None else dict(session_config),
        stripped_session_keys=tuple(stripped_session_keys),
        stripped_session_classes=dict(stripped_session_classes or {}),
        mode_approvals=_approvals(policy),
        account_apps=policy.mode_map.account_apps,
        untrusted_projects=tuple(sorted({*layout.workspace_roots, *untrusted_projects})),
        vouched_mcp_servers=vouched_mcp.server_tables(layout, sorted({r.vault for r in roots}))
        if vouched_mcp
        else {},
        vouched_mcp_codex=vouched_mcp.codex if vouched_mcp else None,
        vouched_mcp_credentials=vouched_mcp.credentials() if vouched_mcp else {},
        trusted_base=tuple(trusted_base),
        parent=tuple(policy.parent.settings) if policy.parent else (),
        other_identities=tuple(other_identities),
    )
    return bundle
