"""The trusted base: the paths of the trusted side a session must not write (profiles/
trusted-base.toml plus the manifest's [trusted_base]), and their discovery on the host
(the interpreter, profilec's installation, Codex's install directories, the top directories).
lstat/readlink only.
"""

from __future__ import annotations

import os
import shutil
import site
import stat
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from typing import Any, Literal

from .errors import InputError, RootChainError, UnsafeRootError
from .models.compiled import TrustedPath
from .paths import check_absolute
from .roots import tuple_hop, walk_chain_with
from .settings import cache_dir, codex_version

#: Pseudo file systems the sandbox sets up itself (bubblewrap's own /dev and /proc; /sys stays
#: read-only): never a write entry. Measured on codex 0.171.0 with `:root` = read: `/dev/null`
#: is writable and /proc readable without any entry.
PSEUDO_TOP_DIRS = frozenset({"/dev", "/proc", "/sys"})


def root_directories(root: str = "/") -> tuple[str, ...]:
    """The real directories directly under `/` that other users can enter (lstat: a symlink
    such as `/lib64 -> usr/lib64` is not one, nor is a file), without the pseudo file systems;
    sorted.

    Full access writes each of them instead of `/` itself (compiler/wholepath.py `root_split`),
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


#: The role of the directory that holds a workspace root (a trusted-side input): read-only in
#: every mode so no command, of this session or of an earlier one left running, can replace
#: the workspace root with a link (measured on 0.171.0 and 0.166.0: a background terminal of an
#: earlier full-access session swapped the next session's root for a link to the vault after
#: Codex started; a `read` entry on the directory made the swap fail, "Read-only file system").
#: The workspace root inside keeps its own `write` entry (the more specific entry wins).
WORKSPACE_HOLDER = "directory holding a workspace root"
#: The role of a vouched MCP server's cwd, which is also the CODEX_HOME of the `codex sandbox`
#: wrapping it: the wrapper runs as the parent and reads `<cwd>/.env` and `<cwd>/config.toml`
#: (measured: a planted `.env` with a PATH to a planted `bwrap` ran outside every sandbox).
MCP_SERVER_CWD = "vouched MCP server cwd (its wrapper's CODEX_HOME)"
#: The role of a launch PATH directory before the system ones: the Codex parent resolves
#: `bwrap` and the helpers it execs there, outside every sandbox (measured: a `bwrap` planted
#: in a writable `~/.local/bin` ahead of /usr/bin ran as root).
LAUNCH_PATH_DIR = "launch PATH directory"

#: The system binary directories: a launch PATH directory before the first of these is the
#: launcher's own and joins the trusted base; those from here on are the host's.
SYSTEM_PATH_DIRS = frozenset(
    {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}
)


def launch_path_dirs(path_value: str) -> tuple[str, ...]:
    """The directories of a launch PATH (`PATH`'s value) before the first system directory
    (`SYSTEM_PATH_DIRS`), each once, in order. An empty or relative entry there (the cwd: the
    workspace) is refused (exit 5): the parent would run a `bwrap` a model command planted."""
    out: list[str] = []
    for entry in path_value.split(":"):
        if os.path.normpath(entry) in SYSTEM_PATH_DIRS:
            break
        if not entry.startswith("/"):
            raise UnsafeRootError(
                f"launch PATH entry {entry!r} is relative: the Codex parent would look for "
                "`bwrap` in the session cwd, which a model command can write",
                where="PATH",
                hint="launch Codex (and compile) with a PATH of absolute directories only",
            )
        norm = os.path.normpath(entry)
        if norm not in out:
            out.append(norm)
    return tuple(out)


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
                declared, tuple_hop, allow_missing=True, what=what
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
                declared, tuple_hop, allow_missing=True, what=role
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
