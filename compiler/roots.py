"""The trusted-input edge: daemon-owned files and root link chains.

This is the only module that touches the filesystem for roots. It reads the manifest (after a
trust check on the open file descriptor) and walks each root's link chain with `lstat` and
`readlink` alone: a credential file or any hop is never opened.
"""

from __future__ import annotations

import os
import pwd
import shutil
import site
import stat
import sys
import sysconfig
import tempfile
import tomllib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import ValidationError

from .errors import InputError, RootChainError, TrustError, UnsafeRootError
from .models import Hop, ResolvedHome, ResolvedRoot, RootsManifest, TrustedPath
from .paths import check_absolute, is_within, parent
from .settings import cache_dir, codex_version

if TYPE_CHECKING:
    from .models import RootSpec


#: A hop as the caller builds it: models.Hop or a plain tuple.
H = TypeVar("H")
#: What a root's chain ends in (walk_chain_with).
ChainKind = Literal["file", "dir", "missing", "other"]

#: Like the kernel's ELOOP limit: more hops than this is treated as a loop.
MAX_HOPS = 40


# ---------------------------------------------------------------------------------------------
# Trust check and reading daemon-owned TOML


def _check_dir_chain(path: str, *, where: str) -> None:
    """Every ancestor directory must be owned by root/us and not writable by others."""
    uid = os.getuid()
    real = os.path.realpath(parent(path))
    cur = real
    while True:
        try:
            st = os.lstat(cur)
        except OSError as exc:
            raise TrustError(
                f"cannot inspect parent directory {cur}: {exc.strerror}", where=where
            ) from None
        sticky = bool(st.st_mode & stat.S_ISVTX)
        if st.st_uid not in (0, uid):
            raise TrustError(
                f"parent directory {cur} is owned by uid {st.st_uid}, not root or uid {uid}",
                where=where,
            )
        if not sticky and st.st_mode & stat.S_IWOTH:
            raise TrustError(f"parent directory {cur} is world-writable", where=where)
        if not sticky and st.st_mode & stat.S_IWGRP and st.st_gid != 0:
            raise TrustError(
                f"parent directory {cur} is writable by group {st.st_gid}", where=where
            )
        if cur == "/":
            return
        cur = parent(cur)


def read_trusted_bytes(path: str) -> bytes:
    """Read a daemon-owned file after checking it cannot have been planted or edited by others.

    The file must be a regular file reached without following a final symlink, owned by root or
    the invoking uid, not group- or world-writable, and no parent directory writable by others.
    Checks run on the open descriptor, so the file read is the file checked.
    """
    where = path
    abspath = os.path.abspath(path)
    try:
        st_link = os.lstat(abspath)
    except FileNotFoundError:
        raise InputError("file does not exist", where=where) from None
    except OSError as exc:
        raise TrustError(f"cannot inspect: {exc.strerror}", where=where) from None
    if stat.S_ISLNK(st_link.st_mode):
        raise TrustError("is a symlink; a daemon-owned file must be a regular file", where=where)
    if not stat.S_ISREG(st_link.st_mode):
        raise TrustError("is not a regular file", where=where)
    _check_dir_chain(abspath, where=where)
    try:
        fd = os.open(abspath, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise TrustError(f"cannot open: {exc.strerror}", where=where) from None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (st_link.st_dev, st_link.st_ino):
            raise TrustError("changed while being checked", where=where)
        if st.st_uid not in (0, os.getuid()):
            raise TrustError(
                f"owned by uid {st.st_uid}, not root or uid {os.getuid()}", where=where
            )
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise TrustError(
                f"mode {stat.S_IMODE(st.st_mode):04o} is group- or world-writable", where=where
            )
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_toml(data: bytes, *, where: str) -> dict[str, Any]:
    """Parse TOML bytes; one clear line on any error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 at byte {exc.start}", where=where) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", where=where) from None


def validation_message(exc: ValidationError) -> str:
    """The first pydantic error as `key.path: message`, plus a count of the rest."""
    errors = exc.errors()
    first = errors[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    msg = f"{loc}: {first['msg']}"
    if first.get("type") == "extra_forbidden":
        msg = f"{loc}: unknown key"
    if len(errors) > 1:
        msg += f" (and {len(errors) - 1} more)"
    return msg


def _validate_manifest(data: dict[str, Any], path: str) -> RootsManifest:
    try:
        return RootsManifest.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"schema violation: {validation_message(exc)}", where=path) from None


def load_manifest(path: str, *, data: bytes) -> RootsManifest:
    """Parse and validate the roots manifest: `data` is the manifest as compiler/inputs.py read
    it (trust-checked there: Inputs.manifest)."""
    doc = parse_toml(data, where=path)
    manifest = _validate_manifest(doc, path)
    seen: set[str] = set()
    for i, root in enumerate(manifest.roots):
        where = f"{path}: roots[{i}]"
        if root.id in seen:
            raise InputError(f"duplicate root id {root.id!r}", where=where)
        seen.add(root.id)
        check_absolute(root.path, what=f"root {root.id!r} path", error=InputError)
    return manifest


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


def _tuple_hop(index: int, link: str, value: str, spelling: str) -> tuple[int, str, str, str]:
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
        path, _tuple_hop, allow_missing=True, what="codex home"
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
            canonical, _, kind, _ = walk_chain_with(path, _tuple_hop, allow_missing=True, what=flag)
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
                r, _tuple_hop, allow_missing=True, what="--workspace-root"
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


# ---------------------------------------------------------------------------------------------
# The trusted base (profiles/trusted-base.toml + the manifest's [trusted_base])


#: Pseudo file systems the sandbox sets up itself (bubblewrap's own /dev and /proc; /sys stays
#: read-only): never a write entry. Measured on codex 0.171.0 with `:root` = read: `/dev/null`
#: is writable and /proc readable without any entry.
PSEUDO_TOP_DIRS = frozenset({"/dev", "/proc", "/sys"})


def root_directories(root: str = "/") -> tuple[str, ...]:
    """The real directories directly under `/` that other users can enter (lstat: a symlink
    such as `/lib64 -> usr/lib64` is not one, nor is a file), without the pseudo file systems;
    sorted.

    Full access writes each of them instead of `/` itself (compiler/compile.py `_root_split`),
    so no top-level name can be created, renamed or replaced.
    """
    found: list[str] = []
    try:
        with os.scandir(root) as it:
            for ent in it:
                path = "/" + ent.name
                if path in PSEUDO_TOP_DIRS or not ent.is_dir(follow_symlinks=False):
                    continue
                # A directory others cannot enter (0700 /root, /lost+found) stays read-only:
                # Codex run as another user refuses to start over a writable root it cannot
                # look into ("failed to inspect synthetic bubblewrap mount target
                # /lost+found/.aws: Permission denied", measured on 0.171.0).
                if ent.stat(follow_symlinks=False).st_mode & stat.S_IXOTH:
                    found.append(path)
    except OSError as exc:
        raise InputError(
            f"cannot list the top-level directories: {exc.strerror}", where=root
        ) from None
    return tuple(sorted(found))


def site_packages() -> tuple[str, ...]:
    """This interpreter's site-packages directories (what profilec and its daemon import)."""
    paths = sysconfig.get_paths()
    found = [paths.get("purelib", ""), paths.get("platlib", "")]
    getter = getattr(site, "getsitepackages", None)  # some virtualenv builds lack it
    if getter is not None:
        found += getter()
    return tuple(sorted({os.path.normpath(p) for p in found if p.startswith("/")}))


def under_temp_dir(path: str) -> bool:
    """Whether `path` lies under the system temp dir (/tmp, or $TMPDIR's canonical form)."""
    tmp = {"/tmp", os.path.realpath(tempfile.gettempdir())}
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in tmp)


def profilec_installation() -> tuple[str, ...]:
    """The Python environment profilec runs from (bin/ included) and the package directory.

    An installation under the system temp dir (a scratch checkout) is left out: an outer
    sandbox (`profilec plan`) gives the session a private /tmp where it does not exist, and
    Codex refuses to start over an entry it cannot mount there (measured: `bwrap: Can't bind
    mount ... on /newroot/tmp/<checkout>: No such file or directory`)."""
    here = os.path.dirname(os.path.abspath(__file__))
    found = {os.path.normpath(sys.prefix), os.path.normpath(sys.base_prefix), here}
    found = {os.path.realpath(p) for p in found}
    return tuple(
        sorted(p for p in found if p.startswith("/") and p != "/" and not under_temp_dir(p))
    )


def codex_install_dirs() -> tuple[str, ...]:
    """The pinned Codex install (its npm prefix in the cache) and the directory of `codex` on
    PATH, where they exist."""
    found: set[str] = set()
    pinned = os.path.join(str(cache_dir()), f"codex-{codex_version()}")
    if os.path.isdir(pinned):
        found.add(os.path.realpath(pinned))
    on_path = shutil.which("codex")
    if on_path:
        found.add(os.path.dirname(os.path.realpath(on_path)))
    return tuple(sorted(p for p in found if p != "/" and not under_temp_dir(p)))


def _topmost_closed(path: str) -> str | None:
    """The shallowest directory above `path` that other users cannot search (no o+x), or None
    when every directory above it lets them through; lstat only."""
    parts = path.strip("/").split("/")[:-1]
    cur = ""
    for name in parts:
        cur += "/" + name
        try:
            if not os.lstat(cur).st_mode & stat.S_IXOTH:
                return cur
        except OSError:
            return cur
    return None


#: What lstat says a path is (a trusted-base path may be a socket).
PathKind = Literal["file", "dir", "socket", "other", "missing"]


def _kind_of(st: os.stat_result | None) -> PathKind:
    if st is None:
        return "missing"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISSOCK(st.st_mode):
        return "socket"
    if stat.S_ISREG(st.st_mode):
        return "file"
    return "other"


def resolve_trusted_base(policy_tb: Any, manifest_tb: Any) -> list[TrustedPath]:
    """Resolve every trusted-base path with lstat/readlink.

    Policy and discovered paths that do not exist on this host are skipped (no podman, no
    /lib32); a path the manifest declares must exist (the daemon named its own binaries and
    sockets). A read-only path must be a directory: a `read` entry pins a directory; name the
    directory that holds a binary. Canonical duplicates collapse (first declaration kept).
    """
    wanted: list[tuple[str, Literal["read", "deny"], Literal["policy", "manifest", "discovered"]]]
    wanted = []  # (declared, access, source)
    if policy_tb is not None:
        wanted += [(p, "read", "policy") for p in policy_tb.read_only]
        if "python-site-packages" in policy_tb.discover:
            wanted += [(p, "read", "discovered") for p in site_packages()]
        if "profilec-installation" in policy_tb.discover:
            wanted += [(p, "read", "discovered") for p in profilec_installation()]
        if "codex-binary" in policy_tb.discover:
            wanted += [(p, "read", "discovered") for p in codex_install_dirs()]
        wanted += [(p, "deny", "policy") for p in policy_tb.deny]
    if manifest_tb is not None:
        wanted += [(p, "read", "manifest") for p in manifest_tb.read_only]
        wanted += [(p, "deny", "manifest") for p in manifest_tb.deny]
    out: dict[tuple[str, str], TrustedPath] = {}
    for declared, access, source in wanted:
        what = f"trusted base {declared}"
        check_absolute(declared, what=what, error=InputError)
        try:
            canonical, _, ends, _ = walk_chain_with(
                declared, _tuple_hop, allow_missing=True, what=what
            )
        except RootChainError:
            if source == "manifest":
                raise
            continue
        if ends == "missing":
            if source == "manifest":
                raise InputError(
                    f"{declared} does not exist",
                    where="roots manifest: trusted_base",
                    hint="list only binaries and sockets present on this host",
                )
            continue
        closed = _topmost_closed(canonical) if source != "manifest" else None
        if closed is not None:
            # Only root can reach it (e.g. /run/docker/containerd/containerd.sock under the 0700
            # /run/docker). A sandbox run as root reaches it too, so it must be covered, but
            # Codex 0.171.0 run as another user refuses to start over an entry it cannot stat
            # ("failed to inspect synthetic bubblewrap mount target /run/docker/containerd:
            # Permission denied"). The shallowest closed directory can be stat'ed by anyone:
            # the entry goes there (denied whole, or read-only).
            canonical = closed
        st = os.lstat(canonical)
        kind = _kind_of(st)
        if access == "read" and kind != "dir":
            if source == "manifest":
                raise InputError(
                    f"read_only path {declared} is a {kind}, not a directory",
                    where="roots manifest: trusted_base",
                    hint="name the directory that holds it",
                )
            continue
        out.setdefault(
            (canonical, access),
            TrustedPath(path=canonical, declared=declared, access=access, kind=kind, source=source),
        )
    # A directory both denied and read-only (two paths behind one closed directory) is denied.
    return [out[k] for k in sorted(out) if not (k[1] == "read" and (k[0], "deny") in out)]


def resolve_trusted_inputs(wanted: Sequence[tuple[str, str]]) -> list[TrustedPath]:
    """Resolve trusted-side inputs `(path, role)` with lstat/readlink: each an `input`
    TrustedPath, canonical (a `read` entry must not cross a link a mode can rewrite).

    They stay read-only in every mode: profilec's own inputs (the roots manifest, the policy
    directory, the vouched-MCP file) and what the Codex parent reads because of the model
    (HOME's login-shell and git config files, each `.git` above a workspace root). A path that
    does not exist yet is kept (`missing`): Codex masks its first missing component, so a model
    command cannot create it. A path whose chain is broken or crosses a file is skipped: no
    name can be created below a file.
    """
    out: dict[str, TrustedPath] = {}
    for declared, role in wanted:
        try:
            canonical, _, _ends, st = walk_chain_with(
                declared, _tuple_hop, allow_missing=True, what=role
            )
        except RootChainError:
            continue
        kind = _kind_of(st)  # "missing" when st is None
        if kind in ("socket", "other"):
            continue
        out.setdefault(
            canonical,
            TrustedPath(
                path=canonical,
                declared=declared,
                access="read",
                kind=kind,
                source="input",
                role=role,
            ),
        )
    return [out[k] for k in sorted(out)]


# ---------------------------------------------------------------------------------------------
# Whether a writable root can start: Codex's synthetic mount targets (issue 22)


def _may_create(st: os.stat_result, uid: int, gids: frozenset[int]) -> bool:
    """Whether `uid` (with `gids`) may create a name in the directory `st` describes."""
    if uid == 0:
        return True
    if st.st_uid == uid:
        bits = stat.S_IWUSR | stat.S_IXUSR
    elif st.st_gid in gids:
        bits = stat.S_IWGRP | stat.S_IXGRP
    else:
        bits = stat.S_IWOTH | stat.S_IXOTH
    return st.st_mode & bits == bits


class LaunchProbe:
    """What compile asks the host about the user the session is launched as.

    Codex 0.171.0 keeps `.git`, `.agents`, `.codex` (and `.aws`) read-only inside every writable
    root; a missing one it creates as a mount target (bwrap mkdir) as the launch user, and the
    sandbox never starts when it cannot (measured: `bwrap: Can't mkdir /farm/.git: Permission
    denied` as uid 65534; `bwrap: Can't mkdir /opt/.git: Read-only file system` and `Error
    building bubblewrap command: Read-only file system (os error 30)` in a `--read-only`
    container). lstat and statvfs only: nothing is opened.

    Whether those names exist when compile looks says nothing about launch time: a running
    Codex session creates the missing ones in each of its writable roots and removes them when
    it ends (measured on 0.171.0 as root: empty `/work/.git`, `/opt/.agents`, ... present only
    while a full-access command ran; a killed session leaves them behind). So a directory
    counts as startable only when the launch user could create them, present or not.
    """

    def __init__(self, uid: int | None = None, gids: Iterable[int] | None = None) -> None:
        self.uid = os.geteuid() if uid is None else uid
        if gids is None:
            gids = _launch_gids(self.uid)
        self.gids = frozenset(gids)

    def blocker(self, path: str, names: Sequence[str]) -> str | None:
        """Why the launch user could not create `names` (Codex's mount targets) in `path`, or
        None (the path does not exist, is no directory, or the user may create them)."""
        try:
            st = os.lstat(path)
            ro = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
        except OSError:
            return None  # a missing launch directory is check_launch_dirs' to report
        if not stat.S_ISDIR(st.st_mode):
            return None
        what = ", ".join(names)
        if ro:
            return f"is on a read-only file system, where Codex creates {what}"
        if not _may_create(st, self.uid, self.gids):
            return (
                f"is not writable for uid {self.uid} (owner {st.st_uid}, mode "
                f"{stat.S_IMODE(st.st_mode):04o}), where Codex creates {what}"
            )
        return None

    def subdirs(self, path: str) -> tuple[str, ...]:
        """The real directories directly in `path` the launch user can enter (lstat), sorted."""
        found: list[str] = []
        try:
            with os.scandir(path) as it:
                for ent in it:
                    if not ent.is_dir(follow_symlinks=False):
                        continue
                    st = ent.stat(follow_symlinks=False)
                    if _may_enter(st, self.uid, self.gids):
                        found.append(os.path.join(path, ent.name))
        except OSError:
            return ()
        return tuple(sorted(found))


def _may_enter(st: os.stat_result, uid: int, gids: frozenset[int]) -> bool:
    if uid == 0:
        return True
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid in gids:
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def _launch_gids(uid: int) -> tuple[int, ...]:
    """The launch user's groups: ours when it is us, else only its primary group (as
    `setpriv --clear-groups` leaves it; fewer groups can only make compile more careful)."""
    if uid == os.geteuid():
        return (os.getegid(), *os.getgroups())

    try:
        return (pwd.getpwuid(uid).pw_gid,)
    except KeyError:
        return (uid,)
