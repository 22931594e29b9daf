"""The pure plan builder: resolved roots + layout + catalog + host facts -> MountPlan. No I/O.

Rules:
  * every mount sits at a host path's real (canonical) place; a plan never mounts onto a
    symlink: a link is either present through a bound directory that holds it or recreated
    with the same text (`symlink`);
  * the trusted parent gets each credential's vault (the directory holding the target; a
    directory root is its own vault) read-write at its real path, never the file alone: the
    trusted save renames a temp file over the target and locks `auth.json.lock` beside it;
    every link on the way is bound through its directory or recreated;
  * a vault that is or contains a grant or a hidden path is refused (UnsafeRootError);
  * the trusted parent runs as an unprivileged uid (`run_as`, default 65534); root is refused;
  * order is by path components, parents first, so a later mount always covers an earlier one;
  * a granted path that contains a hidden path is a LayoutError unless the layout opts in to
    masking it (`mask_hidden_in_grants`), and a grant equal to a hidden path always is;
  * the result is re-checked (`_prove`): hidden paths are not visible, targets are read-write,
    no mount crosses a link.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..codex.vocabulary import REQUIREMENTS_FILE
from ..errors import LayoutError, UnsafeRootError
from ..models.compiled import ResolvedRoot
from ..models.mounts import (
    DEFAULT_READONLY,
    BackendCatalog,
    CredentialAccess,
    Dev,
    Directory,
    EnvSetting,
    FileMask,
    HiddenPath,
    HostFacts,
    LinkPresentation,
    MountPlan,
    PlanLayout,
    PlanMount,
    PlanWarning,
    Proc,
    Purpose,
    ResidueNote,
    RoBind,
    RunAs,
    RwBind,
    Symlink,
    Tmpfs,
)
from ..paths import PARENT_GIT_DIR, ancestors, codex_home_temp_dir, is_within, join, parent
from .layout import check_relative, hidden_paths, validate_layout

_BINDS = (RoBind, RwBind)
_TYPE_RANK = {
    "proc": 0,
    "dev": 0,
    "ro-bind": 1,
    "rw-bind": 2,
    "tmpfs": 3,
    "file-mask": 3,
    "symlink": 4,
}


def _segments(path: str) -> tuple[str, ...]:
    return tuple(s for s in path.split("/") if s)


def mirror_dirs(mirror_base: str, remote_roots: Sequence[str]) -> tuple[str, ...]:
    """One exact directory per remote root under the unscoped base (seed 004).

    A base that already ends with one of the roots was joined by its caller: that suffix is
    stripped first (the longest matching root wins), so no root is ever joined twice.
    """
    for i, r in enumerate(remote_roots):
        check_relative(r, what=f"remote.roots[{i}]")
    base_segs = _segments(mirror_base)
    best: tuple[str, ...] = ()
    for r in remote_roots:
        rs = _segments(r)
        if len(rs) <= len(base_segs) and base_segs[len(base_segs) - len(rs) :] == rs:
            best = max(best, rs, key=len)
    kept = base_segs[: len(base_segs) - len(best)]
    unscoped = "/" + "/".join(kept)
    return tuple(join(unscoped, r, what=f"remote root {r!r}") for r in remote_roots)


def covering(mounts: Iterable[PlanMount], path: str) -> PlanMount | None:
    """The mount that decides what `path` shows: the last one at or above it, in plan order."""
    found: PlanMount | None = None
    for m in mounts:
        if m.path == path or (not isinstance(m, Symlink) and is_within(path, m.path)):
            found = m
    return found


def _sorted(mounts: Iterable[PlanMount]) -> tuple[PlanMount, ...]:
    return tuple(sorted(mounts, key=lambda m: (_segments(m.path), _TYPE_RANK[m.type])))


def _grant(
    kind: type[RoBind] | type[RwBind], path: str, purpose: Purpose, reason: str
) -> RoBind | RwBind:
    return kind(path=path, source=path, purpose=purpose, reason=reason)  # at its real path


def _system_mounts(layout: PlanLayout, host: HostFacts) -> list[PlanMount]:
    out: list[PlanMount] = [
        Proc(path="/proc", purpose="system", reason="a fresh procfs of the sandbox"),
        Dev(path="/dev", purpose="system", reason="a minimal private /dev"),
        Tmpfs(path="/tmp", purpose="private-tmp", reason="private temp, not shared"),
    ]
    facts = {s.path: s for s in host.system}
    bound: set[str] = set()
    links: list[tuple[str, str, str]] = []
    purpose: Purpose
    for path in sorted(set(layout.readonly_paths)):
        purpose = "system" if path in DEFAULT_READONLY else "readonly"
        fact = facts.get(path)
        if fact is None or fact.kind == "missing":
            continue  # not on this host: nothing to show
        if fact.kind == "link":
            assert fact.link_value is not None and fact.canonical is not None
            links.append((path, fact.link_value, fact.canonical))
            continue
        out.append(_grant(RoBind, path, purpose, "read-only path of the layout"))
        bound.add(path)
    for path in host.launch_binaries:
        if not any(is_within(path, b) for b in bound):
            out.append(_grant(RoBind, path, "readonly", "what the launch runs (Codex, adapter)"))
            bound.add(path)
    for path, value, canonical in links:
        purpose = "system" if path in DEFAULT_READONLY else "readonly"
        out.append(
            Symlink(
                path=path,
                link_value=value,
                purpose=purpose,
                reason=f"host link to {canonical}, recreated rather than bound onto",
            )
        )
        if not any(is_within(canonical, b) for b in bound):
            out.append(_grant(RoBind, canonical, purpose, f"real path behind {path}"))
            bound.add(canonical)
    return out


def _fold(roots: Sequence[ResolvedRoot]) -> dict[str, list[ResolvedRoot]]:
    """Group roots by target; a target inside a directory root's target joins that group."""
    by_target: dict[str, list[ResolvedRoot]] = {}
    for r in roots:
        by_target.setdefault(r.target, []).append(r)
    dirs = {r.target for r in roots if r.kind == "dir"}
    kept: dict[str, list[ResolvedRoot]] = {}
    for target in sorted(by_target):
        cover = next((a for a in ancestors(target) if a != target and a in dirs), None)
        if cover is None:
            kept.setdefault(target, []).extend(by_target[target])
    for target in sorted(by_target):
        cover = next((a for a in ancestors(target) if a != target and a in dirs), None)
        if cover is not None:
            top = next(a for a in reversed(list(ancestors(target))) if a in kept)
            kept[top].extend(by_target[target])
    return kept


def _check_hidden(
    grants: Sequence[PlanMount], layout: PlanLayout, host: HostFacts
) -> tuple[list[PlanMount], list[HiddenPath]]:
    """Masks for hidden paths inside grants (opt-in) and the hidden list, or a LayoutError."""
    h = layout.hidden
    entries: list[tuple[str, str]] = [(layout.daemon_root, "daemon-root")]
    if h.host_home:
        entries.append((h.host_home, "host-home"))
    entries += [(p, "sibling-home") for p in h.sibling_homes]
    entries += [(p, "shared-temp") for p in h.shared_temp]
    entries += [(p, "extra") for p in h.extra]
    files = {s.path for s in host.hidden if s.kind == "file"}
    masks: list[PlanMount] = []
    hidden: dict[str, HiddenPath] = {}
    for path, reason in entries:
        if path in hidden:
            continue
        covering_grants = [g for g in grants if isinstance(g, _BINDS) and is_within(path, g.path)]
        masked = any(isinstance(g, Tmpfs) and is_within(path, g.path) for g in grants)
        for g in covering_grants:
            if g.path == path:
                raise LayoutError(
                    f"{g.purpose} {g.path} is the hidden {reason} {path}; a grant cannot also "
                    "be hidden",
                    where="layout",
                )
        if covering_grants and not layout.mask_hidden_in_grants:
            g = covering_grants[-1]
            raise LayoutError(
                f"{g.purpose} {g.path} contains the hidden {reason} {path} and would show it",
                where="layout",
                hint="grant a narrower path, or set mask_hidden_in_grants = true to mask it",
            )
        if covering_grants:
            mask = FileMask if path in files else Tmpfs
            masks.append(
                mask(
                    path=path,
                    purpose="mask",
                    reason=f"hides {reason} inside {covering_grants[-1].path}",
                )
            )
        how = "masked" if covering_grants or masked else "absent"
        hidden[path] = HiddenPath(path=path, reason=reason, how=how)  # type: ignore[arg-type]
    return masks, [hidden[p] for p in sorted(hidden)]


def _check_vault(vault: str, ids: str, grants: Sequence[PlanMount], layout: PlanLayout) -> None:
    """A vault that is or holds a grant or a hidden path would bind too much: refuse it."""
    fix = "put the credential in a directory of its own and point the link there"
    hidden = [layout.daemon_root, *hidden_paths(layout)[1:]]
    for g in grants:
        if isinstance(g, _BINDS) and g.purpose != "system" and is_within(g.path, vault):
            what = "is" if g.path == vault else "contains"
            raise UnsafeRootError(
                f"vault {vault} of {ids} {what} the {g.purpose} grant {g.path}; the plan binds "
                "the whole vault read-write",
                where="plan",
                hint=fix,
            )
    for h in hidden:
        if is_within(h, vault):
            what = "is" if h == vault else "contains"
            raise UnsafeRootError(
                f"vault {vault} of {ids} {what} the hidden path {h}; the plan binds the whole "
                "vault read-write",
                where="plan",
                hint=fix,
            )


def _credentials(
    roots: Sequence[ResolvedRoot], mounts: Sequence[PlanMount], layout: PlanLayout
) -> tuple[list[PlanMount], list[CredentialAccess], list[PlanWarning]]:
    """rw binds for each vault directory at its real path, and each link bound-through or
    recreated. Never a single file: a rename over a bound file fails (EROFS/EBUSY)."""
    ordered = list(_sorted(mounts))
    extra: list[PlanMount] = []
    access: list[CredentialAccess] = []
    warnings: list[PlanWarning] = []
    symlinks: dict[str, str] = {}
    folded = _fold(roots)
    vault_ids: dict[str, set[str]] = {}
    own_vault: dict[str, str] = {}
    for target, group in folded.items():
        kinds = {r.kind for r in group if r.target == target}
        kind = next(iter(sorted(kinds))) if kinds else group[0].kind
        if kind != "missing":
            # The roots' own vault (compiler/roots.py): the directory holding the target, or a
            # directory root itself; a rename-based save puts its temp file and lock there.
            own = next(r.vault for r in group if r.target == target)
            own_vault[target] = own
            vault_ids.setdefault(own, set()).update(r.id for r in group)
    # A vault inside another vault (a file next to a directory root) is covered by the outer one.
    vaults = [
        v for v in sorted(vault_ids) if not any(o != v and is_within(v, o) for o in vault_ids)
    ]
    bound: set[str] = set()
    for v in vaults:
        ids = ", ".join(sorted(vault_ids[v]))
        _check_vault(v, ids, ordered, layout)
        cover = covering(ordered, v)
        if cover is None or not isinstance(cover, RwBind):
            extra.append(_grant(RwBind, v, "credential", f"vault of {ids}"))
            bound.add(v)
    for target, group in folded.items():
        kinds = {r.kind for r in group if r.target == target}
        kind = next(iter(sorted(kinds))) if kinds else group[0].kind
        how: Literal["bind", "covered", "absent"]
        vault: str | None = None
        if kind == "missing":
            how = "absent"
            for r in group:
                warnings.append(
                    PlanWarning(
                        backend=r.backend or "-",
                        source="roots",
                        message=f"root {r.id!r} is missing at {target}; nothing is mounted for it",
                    )
                )
        else:
            vault = own_vault[target]
            how = "bind" if any(is_within(vault, b) for b in bound) else "covered"
        links: dict[str, LinkPresentation] = {}
        for r in group:
            for hop in r.hops:
                holder = covering([*ordered, *extra], parent(hop.link))
                present: Literal["bind", "symlink"]
                if holder is not None and isinstance(holder, _BINDS):
                    present = "bind"
                else:
                    present = "symlink"
                    if symlinks.setdefault(hop.link, hop.value) != hop.value:
                        raise LayoutError(f"link {hop.link} read two ways", where="roots")
                links.setdefault(
                    hop.link, LinkPresentation(link=hop.link, value=hop.value, how=present)
                )
        access.append(
            CredentialAccess(
                target=target,
                root_ids=tuple(sorted({r.id for r in group})),
                kind=kind,
                vault=vault,
                links=tuple(links[k] for k in sorted(links)),
                how=how,
            )
        )
    for link, value in sorted(symlinks.items()):
        extra.append(
            Symlink(
                path=link,
                link_value=value,
                purpose="hop",
                reason="credential link recreated with its own text",
            )
        )
    return extra, access, warnings


#: The uid the trusted parent runs as when the layout names none (nobody on Debian).
DEFAULT_RUN_AS = (65534, 65534)
RUN_AS_REASON = (
    "the trusted parent runs unprivileged inside the plan: as root (uid 0) Codex's inner "
    "sandbox fails (bwrap: setting up uid map: Operation not permitted); bwrap maps this uid to "
    "the user that starts it, docker runs the container as it (the vault, CODEX_HOME and state "
    "must then be owned by it)"
)


def run_as(layout: PlanLayout) -> RunAs:
    """The uid/gid of the trusted parent inside the plan; root is refused."""
    if layout.user is None:
        uid, gid = DEFAULT_RUN_AS
        return RunAs(uid=uid, gid=gid, source="default", reason=RUN_AS_REASON)
    uid_text, _, gid_text = layout.user.partition(":")
    uid = int(uid_text)
    gid = int(gid_text) if gid_text else uid
    if uid == 0:
        raise LayoutError(
            "user 0 (root) cannot run the trusted parent inside the plan: Codex's inner sandbox "
            "fails there (bwrap: setting up uid map: Operation not permitted)",
            where="layout: user",
            hint='set an unprivileged uid, e.g. user = "65534:65534", or drop the key',
        )
    return RunAs(uid=uid, gid=gid, source="layout", reason=RUN_AS_REASON)


REQUIREMENTS_DIR = "codex-requirements"


def requirements_source(layout: PlanLayout) -> str:
    """The host directory whose `requirements.toml` the plan binds over /etc/codex."""
    return layout.requirements_dir or join(
        layout.daemon_root, REQUIREMENTS_DIR, what="requirements dir"
    )


def _requirements(layout: PlanLayout) -> tuple[RoBind, list[Directory]]:
    """The managed requirements, bound read-only over Codex's directory: the layer no client,
    mode or cwd loosens (compiler/emit/requirements.py). The source sits under the daemon root,
    which the plan never mounts, so nothing inside can rewrite the bound file in place. The
    host's /etc/codex must exist as the mount point (bwrap cannot create it inside the
    read-only /etc: "Can't create file at /etc/codex/requirements.toml: Read-only file
    system"); the launcher creates both directories."""
    source = requirements_source(layout)
    target = parent(REQUIREMENTS_FILE)
    bind = RoBind(
        path=target,
        source=source,
        purpose="requirements",
        reason="managed requirements (profilec compile --format requirements), read-only",
    )
    dirs = [
        Directory(path=source, mode="0755", purpose="requirements"),
        Directory(path=target, mode="0755", purpose="requirements"),
    ]
    return bind, dirs


def _state(
    layout: PlanLayout, catalog: BackendCatalog
) -> tuple[list[EnvSetting], list[str], list[Directory], list[PlanWarning], list[ResidueNote]]:
    env: list[EnvSetting] = []
    args: list[str] = []
    dirs = [Directory(path=layout.state_dir, mode="0700", purpose="state")]
    warnings: list[PlanWarning] = []
    residue: list[ResidueNote] = []
    for name in layout.backends:
        backend = catalog.backends.get(name)
        if backend is None:
            known = ", ".join(sorted(catalog.backends))
            raise LayoutError(f"unknown backend {name!r}; known: {known}", where="backends")
        knob = backend.state_knob
        if knob is None:
            warnings.append(
                PlanWarning(
                    backend=name,
                    source="catalog",
                    message=f"{name}: state is not relocated: {backend.not_relocated_reason}",
                )
            )
        else:
            home = join(layout.state_dir, name, what=f"{name} state dir")
            dirs.append(Directory(path=home, mode="0700", purpose="state"))
            value = join(home, knob.subpath, what=f"{name} state knob") if knob.subpath else home
            if knob.kind == "env":
                env.append(EnvSetting(name=knob.name, value=value, source=f"backend:{name}"))
            else:
                # -c splits its key on '.', so the path sits in a TOML string value.
                args += ["-c", f"{knob.name}={json.dumps(value)}"]
        for rej in backend.rejected_knobs:
            if rej.kind != "env":
                continue
            for source, names in (("env", layout.env), ("passthrough_env", layout.passthrough_env)):
                if rej.name in names:
                    warnings.append(
                        PlanWarning(
                            backend=name,
                            knob=rej.name,
                            source=source,
                            message=f"{name}: {rej.name} set via {source} is a rejected knob: "
                            f"{rej.reason}",
                        )
                    )
        residue += [
            ResidueNote(backend=name, path=x.path, reason=x.reason) for x in backend.residue
        ]
    return env, args, dirs, warnings, residue


#: PATH when the layout neither sets nor passes one through: the system directories
#: (docker's default PATH); the plan clears the environment, and Codex needs a PATH to run
#: its helpers and the model's commands.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: The private temp dir inside the plan (a fresh tmpfs).
PRIVATE_TMP = "/tmp"
CODEX_TMP_REASON = (
    "Codex refuses to create its sandbox helper (codex-linux-sandbox) under the temp dir, so "
    "with TMPDIR above CODEX_HOME every model command fails (bwrap: execvp "
    "codex-linux-sandbox; measured on 0.171.0)"
)


@dataclass(frozen=True)
class SessionDirs:
    """HOME and TMPDIR of the session a plan layout launches: one answer for `plan`, for
    `compile --plan-layout` (the profiles' `--home`/`--tmpdir`) and for the launch document."""

    home: str
    tmpdir: str
    #: Why TMPDIR is not the private /tmp (CODEX_HOME lies under it), or None.
    moved: str | None = None


def session_dirs(layout: PlanLayout) -> SessionDirs:
    """HOME is `<state_dir>/home`: per candidate, bound read-write with the state dir, created
    0700 by the launcher; never the agent home (the shared login home that holds the
    credential link) and never a host HOME (hidden). TMPDIR is the private /tmp, unless
    CODEX_HOME lies under it (`CODEX_TMP_REASON`): then `<state_dir>/tmp`, which cannot
    hold the agent home (validate_layout keeps the two apart)."""
    home = join(layout.state_dir, "home", what="HOME")
    if "codex" in layout.backends and codex_home_temp_dir(layout.agent_home, PRIVATE_TMP):
        tmp = join(layout.state_dir, "tmp", what="TMPDIR")
        return SessionDirs(home, tmp, CODEX_TMP_REASON)
    return SessionDirs(home, PRIVATE_TMP)


def _launch_env(layout: PlanLayout) -> tuple[list[EnvSetting], list[Directory], list[PlanWarning]]:
    """TMPDIR, HOME (`session_dirs`) and PATH of the trusted parent (the plan clears the
    environment). PATH is the layout's (`env` or `passthrough_env`), else DEFAULT_PATH."""
    dirs = session_dirs(layout)
    env = [EnvSetting(name="HOME", value=dirs.home, source="plan")]
    made = [Directory(path=dirs.home, mode="0700", purpose="home")]
    warnings: list[PlanWarning] = []
    if dirs.moved is not None:
        made.append(Directory(path=dirs.tmpdir, mode="0700", purpose="tmp"))
        warnings.append(
            PlanWarning(
                backend="codex",
                source="plan",
                message=f"codex: agent_home {layout.agent_home} lies under {PRIVATE_TMP}, so "
                f"TMPDIR is {dirs.tmpdir}, not {PRIVATE_TMP}: {dirs.moved}; compile the "
                f"profile with --tmpdir {dirs.tmpdir}, or move agent_home out of {PRIVATE_TMP}",
            )
        )
    env.append(EnvSetting(name="TMPDIR", value=dirs.tmpdir, source="plan"))
    if "codex" in layout.backends:
        env.append(EnvSetting(name="GIT_DIR", value=PARENT_GIT_DIR, source="plan"))
    if "PATH" not in layout.env and "PATH" not in layout.passthrough_env:
        env.append(EnvSetting(name="PATH", value=DEFAULT_PATH, source="plan"))
    return env, made, warnings


def _prove(plan: MountPlan, roots: Sequence[ResolvedRoot]) -> None:
    """Re-derive from the mounts: hidden paths not shown, targets rw, nothing onto a link."""
    for h in plan.hidden:
        m = covering(plan.mounts, h.path)
        if isinstance(m, _BINDS):
            raise LayoutError(f"hidden path {h.path} stays visible through {m.path}", where="plan")
    for c in plan.credentials:
        if c.how == "absent":
            continue
        m = covering(plan.mounts, c.target)
        if not isinstance(m, RwBind):
            raise LayoutError(f"credential {c.target} is not read-write in the plan", where="plan")
        if c.kind != "dir" and m.path == c.target:
            raise LayoutError(
                f"credential {c.target} is bound as a single file; a rename-based save fails there",
                where="plan",
            )
    links = {h.link for r in roots for h in r.hops}
    for m in plan.mounts:
        for a in ancestors(m.path):
            if a in links and not (isinstance(m, Symlink) and a == m.path):
                raise LayoutError(f"mount {m.path} would cross symlink {a}", where="plan")


def _agent_home(layout: PlanLayout, home_writes: Sequence[str] | None) -> list[PlanMount]:
    """The login home: read-write whole, or (`home_writes`, `profilec run`'s boundary) read-only
    with only the listed paths in it (relative, each must exist) read-write: then no config
    layer the parent loads can make CODEX_HOME's config files writable (docs/run-boundary.md)."""
    home = layout.agent_home
    if home_writes is None:
        return [_grant(RwBind, home, "agent-home", "private login home")]
    out: list[PlanMount] = [_grant(RoBind, home, "agent-home", "private login home, read-only")]
    for rel in home_writes:
        check_relative(rel, what="home_writes")
        path = join(home, rel, what=f"home write {rel!r}")
        out.append(_grant(RwBind, path, "agent-home", "a path Codex writes in its home"))
    return out


def _scratch(
    mounts: Sequence[PlanMount], paths: Sequence[str], empty: Sequence[tuple[str, bool]]
) -> list[PlanMount]:
    """Empty private mounts for what Codex's inner sandbox must find inside:

    * a tmpfs at each of `paths` (the profiles' writable roots) that no mount shows: Codex
      makes its mount targets (`.git`, ...) in each, or does not start (`bwrap: Can't mkdir
      /var/tmp/.git: Read-only file system`, measured inside `profilec run`'s boundary);
    * at each of `empty` (path, is a file) that no bind shows, an empty tmpfs or /dev/null:
      a path the profiles deny must exist to be masked, and one in a directory Codex pins
      read-only cannot be made (`bwrap: Can't create file at <other vault>: Read-only file
      system`, measured in full access, whose profile pins the vaults' parent)."""
    ordered = _sorted(mounts)
    out: list[PlanMount] = [
        Tmpfs(path=p, purpose="private-tmp", reason="a writable root of the profiles, empty here")
        for p in sorted(set(paths))
        if covering(ordered, p) is None
    ]
    shown = _sorted([*ordered, *out])
    why = "a denied path, shown empty so that the profiles' mask has a mount point"
    for path, is_file in sorted(set(empty)):
        if not isinstance(covering(shown, path), _BINDS):
            mask = FileMask if is_file else Tmpfs
            out.append(mask(path=path, purpose="mask", reason=why))
    return out


def build_plan(
    roots: Sequence[ResolvedRoot],
    layout: PlanLayout,
    catalog: BackendCatalog,
    host: HostFacts | None = None,
    *,
    home_writes: Sequence[str] | None = None,
    scratch: Sequence[str] = (),
    empty: Sequence[tuple[str, bool]] = (),
) -> MountPlan:
    """Compile the outer sandbox plan (pure and deterministic; raises LayoutError).

    `home_writes`: bind the agent home read-only except these paths in it (`_agent_home`);
    `scratch` (writable roots) and `empty` (denied paths, each with whether it is a file):
    shown as empty private mounts where nothing else shows them (`_scratch`)."""
    validate_layout(layout)
    host = host or HostFacts()
    mounts = _system_mounts(layout, host)
    for ws in layout.workspace_roots:
        mounts.append(_grant(RwBind, ws, "workspace", "workspace root"))
    dirs_extra: list[Directory] = []
    if layout.remote is not None:
        for d in mirror_dirs(layout.remote.mirror_base, layout.remote.roots):
            dirs_extra.append(Directory(path=d, mode="0700", purpose="mirror"))
            if not any(isinstance(m, RwBind) and is_within(d, m.path) for m in mounts):
                mounts.append(_grant(RwBind, d, "mirror", "exact mirror of a remote root"))
    mounts += _agent_home(layout, home_writes)
    requirement_dirs: list[Directory] = []
    if "codex" in layout.backends:
        bind, requirement_dirs = _requirements(layout)
        mounts.append(bind)
    mounts.append(_grant(RwBind, layout.state_dir, "state", "per-candidate state (0700)"))
    seen: dict[str, PlanMount] = {}
    for m in mounts:
        if m.path in seen and not isinstance(m, Symlink):
            raise LayoutError(
                f"{m.path} is granted twice ({seen[m.path].purpose} and {m.purpose})",
                where="layout",
            )
        seen[m.path] = m
    # Masks first, so a credential inside a masked hidden path still gets its own bind; then
    # again with the credential binds, which are grants too.
    early_masks, _ = _check_hidden(mounts, layout, host)
    cred_mounts, credentials, cred_warnings = _credentials(roots, [*mounts, *early_masks], layout)
    for m in cred_mounts:
        other = seen.get(m.path)
        if other is not None:
            raise LayoutError(
                f"credential path {m.path} is also the {other.purpose} grant", where="layout"
            )
    extra = _scratch([*mounts, *cred_mounts, *early_masks], scratch, empty)
    masks, hidden = _check_hidden([*mounts, *cred_mounts, *extra], layout, host)
    env, codex_args, directories, warnings, residue = _state(layout, catalog)
    owned = {"TMPDIR", "HOME", *(e.name for e in env)}
    if "codex" in layout.backends:
        owned.add("CODEX_HOME")
    for key, names in (("env", layout.env), ("passthrough_env", layout.passthrough_env)):
        for name in sorted(names):
            if name in owned:
                raise LayoutError(f"{name} is set by the plan itself; remove it", where=key)
    launch_env, launch_dirs, launch_warnings = _launch_env(layout)
    taken = {d.path for d in directories}
    for own in launch_dirs:
        if own.path in taken:  # a backend named `home` or `tmp` in a custom catalog
            raise LayoutError(
                f"{own.path} is both a backend's state dir and the plan's {own.purpose} directory",
                where="backends",
            )
    env += launch_env
    directories += launch_dirs
    warnings += launch_warnings
    if "codex" in layout.backends:
        env.append(EnvSetting(name="CODEX_HOME", value=layout.agent_home, source="plan"))
    env += [EnvSetting(name=k, value=v, source="layout") for k, v in layout.env.items()]
    plan = MountPlan(
        schema_version=1,
        backends=layout.backends,
        network=layout.network,
        user=layout.user,
        run_as=run_as(layout),
        workdir=layout.workspace_roots[0],
        mounts=_sorted([*mounts, *cred_mounts, *masks, *extra]),
        env=tuple(sorted(env, key=lambda e: e.name)),
        passthrough_env=tuple(sorted(layout.passthrough_env)),
        codex_args=tuple(codex_args),
        directories=tuple(
            sorted([*directories, *dirs_extra, *requirement_dirs], key=lambda d: _segments(d.path))
        ),
        hidden=tuple(hidden),
        credentials=tuple(credentials),
        warnings=tuple([*cred_warnings, *warnings]),
        residue=tuple(residue),
    )
    _prove(plan, roots)
    return plan
