"""Root link chains: each root's chain walked with `lstat` and `readlink` alone (a credential
file or any hop is never opened), HOME and the workspace roots resolved, and the roots that
cannot be protected at all refused. Reading the manifest is `readers`; the trusted base is
`trustedbase`; the launch user's mount targets are `launchprobe`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .errors import InputError, RootChainError, UnsafeRootError
from .models.compiled import Hop, ResolvedHome, ResolvedRoot
from .models.roots import RootsManifest
from .paths import check_absolute, is_within, parent

if TYPE_CHECKING:
    from .models.roots import RootSpec


#: A hop as the caller builds it: models.Hop or a plain tuple.
H = TypeVar("H")
#: What a root's chain ends in (walk_chain_with).
ChainKind = Literal["file", "dir", "missing", "other"]

#: Like the kernel's ELOOP limit: more hops than this is treated as a loop.
MAX_HOPS = 40


# ---------------------------------------------------------------------------------------------
# Link chains


def _components(path: str) -> list[str]:
    return [c for c in path.split("/") if c not in ("", ".")]


def _join(base: str, comp: str) -> str:
    return "/" + comp if base == "/" else base + "/" + comp


def walk_chain(
    path: str, *, allow_missing: bool = False, what: str = "path"
) -> tuple[str, tuple[Hop, ...], str, os.stat_result | None]:
    """`walk_chain_with` building models.Hop for each hop."""

    def hop(index: int, link: str, value: str, spelling: str) -> Hop:
        return Hop(index=index, link=link, value=value, spelling=spelling)

    return walk_chain_with(path, hop, allow_missing=allow_missing, what=what)


def tuple_hop(index: int, link: str, value: str, spelling: str) -> tuple[int, str, str, str]:
    return (index, link, value, spelling)


def walk_chain_with(
    path: str,
    make_hop: Callable[[int, str, str, str], H],
    *,
    allow_missing: bool = False,
    what: str = "path",
    dir_cache: dict[str, os.stat_result] | None = None,
) -> tuple[str, tuple[H, ...], ChainKind, os.stat_result | None]:
    """Resolve `path` component by component with lstat/readlink only.

    Returns (canonical target, hops, kind, lstat of the target or None when missing). Relative
    link values resolve against the link's own (canonical) directory; symlinked directories in
    the middle of the path are hops too. `dir_cache` (one per resolve_roots call) keeps the
    lstat of every directory met, so roots sharing parents do not lstat them again; links and
    final components are always lstat'ed afresh.
    """
    pending = list(reversed(_components(path)))
    current = "/"
    hops: list[H] = []
    seen_states: set[tuple[str, tuple[str, ...]]] = set()
    st: os.stat_result | None = os.lstat("/")
    while pending:
        comp = pending.pop()
        if comp == "..":
            current = parent(current)
            continue
        cand = _join(current, comp)
        cached = dir_cache.get(cand) if dir_cache is not None and pending else None
        try:
            st = cached if cached is not None else os.lstat(cand)
        except FileNotFoundError:
            rest = [cand, *reversed(pending)]
            intended = "/".join([rest[0], *rest[1:]]) if len(rest) > 1 else cand
            if allow_missing:
                return os.path.normpath(intended), tuple(hops), "missing", None
            hint = "create it, fix the link, or set allow_missing = true for this root"
            raise RootChainError(
                f"dangling chain: {cand} does not exist (reached from {path})",
                where=what,
                hint=hint,
            ) from None
        except NotADirectoryError:
            raise RootChainError(
                f"{current} is not a directory (reached from {path})", where=what
            ) from None
        except OSError as exc:
            raise RootChainError(f"cannot lstat {cand}: {exc.strerror}", where=what) from None
        if stat.S_ISLNK(st.st_mode):
            state = (cand, tuple(pending))
            if state in seen_states:
                raise RootChainError(f"symlink loop at {cand} (reached from {path})", where=what)
            seen_states.add(state)
            if len(hops) >= MAX_HOPS:
                raise RootChainError(
                    f"link chain longer than {MAX_HOPS} hops at {cand} (reached from {path})",
                    where=what,
                )
            try:
                value = os.readlink(cand)
            except OSError as exc:
                raise RootChainError(
                    f"cannot readlink {cand}: {exc.strerror}", where=what
                ) from None
            remaining = list(reversed(pending))
            spelling = "/".join([cand, *remaining]) if remaining else cand
            hops.append(make_hop(len(hops), cand, value, spelling))
            if value.startswith("/"):
                current = "/"
            pending.extend(reversed(_components(value)))
            continue
        if pending and not stat.S_ISDIR(st.st_mode):
            raise RootChainError(
                f"{cand} is not a directory but the path continues (reached from {path})",
                where=what,
            )
        if dir_cache is not None and cached is None and stat.S_ISDIR(st.st_mode):
            dir_cache[cand] = st
        current = cand
    kind: ChainKind = "other"
    if st is not None and stat.S_ISREG(st.st_mode):
        kind = "file"
    elif st is not None and stat.S_ISDIR(st.st_mode):
        kind = "dir"
    return current, tuple(hops), kind, st


def _holder_dirs(
    target: str, links: Iterable[str], kind: str, last_existing: str
) -> tuple[str, ...]:
    dirs: dict[str, None] = {}
    for link in links:
        dirs.setdefault(parent(link), None)
    dirs.setdefault(last_existing if kind == "missing" else parent(target), None)
    return tuple(sorted(dirs))


def _last_existing(target: str) -> str:
    cur = parent(target)
    while cur != "/":
        try:
            os.lstat(cur)
            return cur
        except OSError:
            cur = parent(cur)
    return "/"


def resolve_root(
    spec: RootSpec,
    workspace_roots: Sequence[str] = (),
    dir_cache: dict[str, os.stat_result] | None = None,
) -> ResolvedRoot:
    """Walk one root's chain and record what the checker needs (paths only)."""

    def hop(index: int, link: str, value: str, spelling: str) -> Hop:
        return Hop(index=index, link=link, value=value, spelling=spelling)

    target, hops, kind, st = walk_chain_with(
        spec.path,
        hop,
        allow_missing=spec.allow_missing,
        what=f"root {spec.id!r}",
        dir_cache=dir_cache,
    )
    links = [h.link for h in hops]
    nlink = st.st_nlink if (st is not None and kind == "file") else None
    check_hard_links(spec.id, target, kind, nlink)
    last = _last_existing(target) if kind == "missing" else parent(target)
    under = tuple(sorted({link for link in links for w in workspace_roots if is_within(link, w)}))
    return ResolvedRoot(
        id=spec.id,
        path=spec.path,
        backend=spec.backend,
        kind=kind,
        target=target,
        hops=hops,
        nlink=nlink,
        vault=target if kind == "dir" else parent(target),
        holder_dirs=_holder_dirs(target, links, kind, last),
        hops_under_workspace=under,
    )


def resolve_roots(
    manifest: RootsManifest,
    workspace_roots: Sequence[str] = (),
    *,
    foreign: Callable[[RootSpec], bool] | None = None,
    skipped: list[RootSpec] | None = None,
) -> tuple[ResolvedRoot, ...]:
    """Resolve every root; all run, and the first failure (in manifest order) is raised after.

    A root for which `foreign(spec)` holds belongs to another identity of the manifest: its
    broken chain never blocks this session's compile (its CODEX_HOME is denied whole); it is
    appended to `skipped` instead of raised."""
    results: list[ResolvedRoot] = []
    failures: list[RootChainError] = []
    dir_cache: dict[str, os.stat_result] = {}
    for spec in manifest.roots:
        try:
            results.append(resolve_root(spec, workspace_roots, dir_cache))
        except RootChainError as exc:
            if foreign is not None and foreign(spec):
                if skipped is not None:
                    skipped.append(spec)
                continue
            failures.append(exc)
    if failures:
        first = failures[0]
        if len(failures) > 1:
            first.message += f" (and {len(failures) - 1} more failing roots)"
            first.args = (first.one_line(),)
        raise first
    return tuple(results)


def resolve_home(path: str) -> ResolvedHome:
    """Resolve the private CODEX_HOME: its canonical directory and the dirs holding its links.

    A CODEX_HOME that does not exist is an input error (exit 2) naming `--codex-home`: the
    daemon creates that directory; `allow_missing` (a root's key) cannot make it exist."""
    check_absolute(path, what="codex home", error=InputError)
    canonical, hops, kind, _ = walk_chain_with(
        path, tuple_hop, allow_missing=True, what="codex home"
    )
    if kind == "missing":
        via = f" (it resolves to {canonical})" if canonical != path else ""
        raise InputError(
            f"CODEX_HOME {path} does not exist{via}",
            where="--codex-home",
            hint="fix the spelling, or create the agent's private CODEX_HOME, a 0700 "
            "directory holding its auth.json link, before compiling",
        )
    if kind != "dir":
        raise RootChainError(f"codex home {path} is not a directory", where="codex home")
    holders = tuple(sorted({parent(h[1]) for h in hops}))
    try:
        os.lstat(os.path.join(canonical, ".credentials.json"))
        tokens = True
    except OSError:
        tokens = False

    return ResolvedHome(path=path, canonical=canonical, holder_dirs=holders, mcp_tokens=tokens)


def check_launch_dirs(workspace_roots: Sequence[str], tmpdir: str | None) -> None:
    """Every `--workspace-root` and the `--tmpdir` name an existing directory.

    Compile grants these in agent mode and pins what lies below them; a misspelled one would
    compile silently into a profile for a directory no session uses (and the real one gets
    nothing). Refused with exit 2 (InputError), one line naming the flag and the fix."""
    named = [("--workspace-root", r) for r in workspace_roots]
    if tmpdir is not None:
        named.append(("--tmpdir", tmpdir))
    for flag, path in named:
        check_absolute(path, what=flag, error=InputError)
        try:
            canonical, _, kind, _ = walk_chain_with(path, tuple_hop, allow_missing=True, what=flag)
        except RootChainError as exc:
            raise InputError(
                exc.message, where=flag, hint="name an existing directory by its real path"
            ) from None
        via = f" (it resolves to {canonical})" if canonical != path else ""
        if kind == "missing":
            raise InputError(
                f"{path} does not exist{via}",
                where=flag,
                hint="fix the spelling, or create the directory before compiling",
            )
        if kind != "dir":
            raise InputError(f"{path} is not a directory{via}", where=flag, hint="name a directory")


def resolve_workspace_roots(roots: Sequence[str]) -> tuple[str, ...]:
    """Validate workspace roots (absolute, normalized) and return their canonical spellings.

    A writable root spelled through a symlink makes Codex drop every deny under its real
    location (measured on 0.171.0, research §4), so every root is walked with lstat/readlink
    and the real path is what compile emits and what `--format launch` gives as the cwd. A root
    that does not exist yet keeps its existing prefix resolved; one whose chain is broken or
    crosses a file stays as written (the layout check reports it elsewhere).
    """
    out: list[str] = []
    for r in roots:
        check_absolute(r, what="--workspace-root", error=InputError)
        try:
            canonical, _, kind, _ = walk_chain_with(
                r, tuple_hop, allow_missing=True, what="--workspace-root"
            )
        except RootChainError:
            canonical, kind = r, "other"
        out.append(canonical if kind in ("dir", "missing") else r)
    return tuple(dict.fromkeys(out))


# ---------------------------------------------------------------------------------------------
# Roots that cannot be protected at all (fail closed, exit 5)

#: How many directory entries a directory root may hold before the hard-link scan gives up
#: (fail closed): a credential directory is small; a huge one is a misdeclared root.
MAX_DIR_ROOT_ENTRIES = 10_000

_HARDLINK_FIX = (
    "give the credential a single name: copy it to a new file, then remove every other link; "
    "a path deny covers one name only"
)


def check_hard_links(root_id: str, target: str, kind: str, nlink: int | None) -> None:
    """Fail (exit 5) when the target, or a file inside a directory root, has another hard link.

    A deny covers a path, never an inode: a second name elsewhere stays readable in every
    mode. Directory roots are scanned with lstat only (no file is opened), depth first.
    """
    where = f"root {root_id!r}"
    if kind == "file" and nlink is not None and nlink > 1:
        raise UnsafeRootError(
            f"target {target} has {nlink} hard links; every other name stays readable",
            where=where,
            hint=_HARDLINK_FIX,
        )
    if kind != "dir":
        return
    seen = 0
    pending = [target]
    while pending:
        cur = pending.pop()
        try:
            with os.scandir(cur) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            raise UnsafeRootError(
                f"cannot list {cur} inside directory root: {exc.strerror}",
                where=where,
                hint="make the directory root listable by profilec, or declare its files",
            ) from None
        for item in items:
            seen += 1
            if seen > MAX_DIR_ROOT_ENTRIES:
                raise UnsafeRootError(
                    f"directory root {target} holds more than {MAX_DIR_ROOT_ENTRIES} entries; "
                    "its hard links cannot be checked",
                    where=where,
                    hint="declare the credential directory itself, not a large tree",
                )
            st = item.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                pending.append(item.path)
            elif stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                raise UnsafeRootError(
                    f"file {item.path} inside directory root {target} has {st.st_nlink} hard "
                    "links; every other name stays readable",
                    where=where,
                    hint=_HARDLINK_FIX,
                )


def check_possible_roots(
    roots: Sequence[Any], home: str | None, workspace_roots: Sequence[str]
) -> None:
    """Fail (exit 5) for a root that no profile can deny without breaking the session.

    A root whose canonical target is `/`, or is or contains the private CODEX_HOME or a
    workspace root: denying it would deny the whole machine, Codex's own home or the
    workspace the agent works in. Pure (paths only): compile calls it with resolved inputs.
    """
    for root in roots:
        target = root.target
        where = f"root {root.id!r}"
        if target == "/":
            raise UnsafeRootError(
                "target is / (the whole filesystem); no mode can deny it and still run",
                where=where,
                hint="declare the credential file or the directory that holds only it",
            )
        if home is not None and is_within(home, target):
            what = "is" if home == target else "contains"
            raise UnsafeRootError(
                f"target {target} {what} the private CODEX_HOME {home}; denying it would "
                "hide Codex's own home",
                where=where,
                hint="keep the credential in its own directory outside CODEX_HOME and link to it",
            )
        for ws in workspace_roots:
            if is_within(ws, target):
                what = "is" if ws == target else "contains"
                raise UnsafeRootError(
                    f"target {target} {what} workspace root {ws}; denying it would hide the "
                    "workspace",
                    where=where,
                    hint="move the credential out of the workspace tree",
                )
