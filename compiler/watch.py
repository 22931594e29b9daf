"""`profilec watch`: notice, while a session runs, that its compiled profile went stale.

A compiled profile is true of the chain it was compiled from: each hop link with its text, the
real target's kind and link count, the vault directory and the private CODEX_HOME. When any of
them changes underneath a running session (a link re-pointed or replaced by a plain file, a
vault moved or replaced, a new hard link on the target, the private `auth.json` turned into a
plain file by `codex logout` + login, the writer's lock `$CODEX_HOME/auth.lock` replaced,
removed, or created after the session started as anything but a regular file) the deny entries
the sandbox applied at start no longer cover what the trusted parent reads. `watch` reports the
first such change as one JSON line (schemas/watch-event.schema.json) and the CLI exits 9, like
`check --lock`.

What is NOT drift: the trusted save itself. Codex writes `.auth-XXXXXX` in the vault and renames
it over the real file (research §1), so the target's inode changes while its path, kind and
link count stay; files that come and go inside the vault (temp files, `auth.json.lock`) are
not watched. Nor is the writer's lock appearing as a regular file at the first login save
when every profile denies it (`watch_bundle`); it is the baseline from then on. A target whose
link count changes is drift, whatever did it.

How: polling with lstat/readlink only (never open(): the credential is never read), every
`interval` seconds (default 0.25, so a change is reported well within 1 s). Polling was chosen
over inotify on numbers (docs/watch.md): a poll of the chain of 1,000 roots costs a few
milliseconds, and inotify would need a dependency and would still have to re-lstat to tell a
trusted rename from a re-pointed link. Directories are compared by (device, inode) against
the state seen when watching started; links, kinds and link counts against the bundle.

Beside the chain (`watch_bundle`): the trusted inputs, each workspace root itself (swapped for a
link after Codex started, a writable root at the vault's path beats the managed deny), its
project docs, the project config folders and outward links below it (compiler/projectlayers.py),
the managed requirements, and each vouched MCP server's wrapper `.env` and `config.toml`.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from . import projectlayers
from .compile import writer_lock_path
from .models.compiled import CompiledBundle, ResolvedHome, ResolvedRoot
from .models.watch import DriftKind, Role, WatchEvent
from .paths import parent
from .projectdocs import bundle_protected_dirs, doc_paths, link_target, reaches

#: Order in which one path's roles are kept when several roots or roles name it.
_ROLE_RANK: dict[str, int] = {
    "hop": 0,
    "target": 1,
    "missing-root": 2,
    "vault": 3,
    "codex-home": 4,
    "holder": 5,
    "private-auth": 6,
    "writer-lock": 7,
    "trusted-input": 8,
    "project-doc": 9,
    "requirements": 10,
    "project-config": 11,
    "workspace-root": 12,
    "mcp-config": 13,
}
DEFAULT_INTERVAL = 0.25
#: The drift exit code (the same as `check --lock`; compiler/errors.py LockDriftError).
DRIFT_EXIT: Final = 9


@dataclass(frozen=True, slots=True)
class Seen:
    """What one lstat (and readlink, for a link) saw; never the file's content."""

    kind: Literal["file", "dir", "link", "missing", "other"]
    dev: int = 0
    ino: int = 0
    nlink: int = 0
    link: str | None = None
    #: Size and modification time (files and directories): a trusted input edited in place
    #: keeps its inode.
    size: int = 0
    mtime_ns: int = 0

    def describe(self) -> str:
        if self.kind == "link":
            return f"symlink -> {self.link}"
        if self.kind == "file":
            return f"file (nlink {self.nlink})"
        if self.kind == "dir":
            return f"directory (inode {self.dev}:{self.ino})"
        return self.kind


Observe = Callable[[str], Seen]


def observe(path: str) -> Seen:
    """lstat `path` (and readlink it when it is a link). Never opens it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return Seen("missing")
    except NotADirectoryError:
        return Seen("missing")
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        try:
            value = os.readlink(path)
        except (FileNotFoundError, NotADirectoryError):
            return Seen("missing")  # removed between the lstat and the readlink
        except OSError:
            value = None
        return Seen("link", st.st_dev, st.st_ino, st.st_nlink, value)
    if stat.S_ISDIR(mode):
        return Seen("dir", st.st_dev, st.st_ino, st.st_nlink, None, st.st_size, st.st_mtime_ns)
    if stat.S_ISREG(mode):
        return Seen("file", st.st_dev, st.st_ino, st.st_nlink, None, st.st_size, st.st_mtime_ns)
    return Seen("other", st.st_dev, st.st_ino, st.st_nlink)


@dataclass(frozen=True, slots=True)
class Watched:
    """One path and what must stay true of it."""

    path: str
    role: Role
    root_ids: tuple[str, ...]
    #: Expected kind from the bundle; None: whatever watching started with.
    kind: str | None = None
    #: Expected link text (hops) from the bundle.
    link: str | None = None
    #: Expected link count of a file target (None: not checked).
    nlink: int | None = None
    #: Compare (device, inode) with the start (directories).
    identity: bool = False
    #: The private CODEX_HOME/auth.json (a plain file there is reported by that name).
    private_auth: bool = False
    #: Missing at the start, it may appear as a regular file, which then is the new baseline:
    #: the writer's lock when every compiled profile denies it (Codex creates it at its first
    #: login save; see `watch_bundle`).
    may_appear: bool = False


@dataclass(frozen=True, slots=True)
class Drift:
    """The first change that made the compiled profile stale."""

    kind: DriftKind
    role: Role
    path: str
    root_ids: tuple[str, ...]
    expected: str
    observed: str

    @property
    def message(self) -> str:
        what = {
            "link-retargeted": "was re-pointed",
            "link-replaced": "is no longer a link",
            "removed": "is gone (moved, renamed or deleted)",
            "replaced": "was replaced by another file or directory",
            "nlink-changed": "gained or lost a hard link",
            "appeared": "appeared after the profile was compiled",
            "private-auth-plain-file": "is a plain file now (codex logout + login?), not the "
            "compiled link",
            "modified": "was modified (a trusted input the profile was compiled from)",
            "project-doc-link": "is a link into a vault or the private CODEX_HOME: every "
            "later session whose cwd holds it fails to start (Codex cannot read it)",
            "requirements-less-strict": "is missing or less strict than the compiled managed "
            "requirements (profilec requirements verify says why)",
            "project-config-planted": "is a project config folder below a workspace root that "
            "appeared or changed: a session opened in its directory would load it above "
            "profilec's config",
            "scan-incomplete": "could not be scanned whole (a directory the watcher cannot "
            f"list, or more than {projectlayers.SCAN_LIMIT} directories below a workspace root): "
            "a project config planted there cannot be seen",
            "project-config-link-outside": "is a link below a workspace root to a directory "
            "outside every root: a session opened there loads the project config at or above "
            "its target, which no scan of the roots covers",
        }[self.kind]
        if self.role == "project-config":
            return f"{self.role} {self.path} {what}; end the session and remove it before the next"
        if self.role == "requirements":
            # The profile is not stale: the file in place is. Installing puts it back.
            return (
                f"{self.role} {self.path} {what}: end the session and install the compiled "
                f"requirements (`profilec requirements install --path {self.path}` with the "
                "same compile flags) before the next"
            )
        if self.role == "mcp-config":
            return (
                f"{self.role} {self.path} {what}: the `codex sandbox` wrapping a vouched MCP "
                "server reads it from its CODEX_HOME before it sandboxes the server; end the "
                "session and restore it before the next"
            )
        return (
            f"{self.role} {self.path} {what}: the compiled profile is stale; end the session and "
            "recompile"
        )

    def document(self) -> dict[str, Any]:
        """The JSON event (schemas/watch-event.schema.json)."""
        event = WatchEvent(
            schema_version=1,
            event="drift",
            kind=self.kind,
            role=self.role,
            path=self.path,
            root_ids=self.root_ids,
            expected=self.expected,
            observed=self.observed,
            message=self.message,
            exit_code=DRIFT_EXIT,
        )
        return event.model_dump(mode="json")


def _add(out: dict[str, Watched], w: Watched) -> None:
    old = out.get(w.path)
    if old is None:
        out[w.path] = w
        return
    ids = tuple(sorted({*old.root_ids, *w.root_ids}))
    keep, other = (old, w) if _ROLE_RANK[old.role] <= _ROLE_RANK[w.role] else (w, old)
    out[w.path] = Watched(
        path=keep.path,
        role=keep.role,
        root_ids=ids,
        kind=keep.kind if keep.kind is not None else other.kind,
        link=keep.link if keep.link is not None else other.link,
        nlink=keep.nlink if keep.nlink is not None else other.nlink,
        identity=keep.identity or other.identity,
        private_auth=keep.private_auth or other.private_auth,
        may_appear=keep.may_appear and other.may_appear,
    )


def watch_set(
    roots: Iterable[ResolvedRoot], codex_home: ResolvedHome | None
) -> tuple[Watched, ...]:
    """Every path whose change makes the compiled profile stale, and what must stay true of it
    (pure; sorted by path)."""
    out: dict[str, Watched] = {}
    for r in roots:
        ids = (r.id,)
        if r.kind == "missing":
            _add(out, Watched(path=r.target, role="missing-root", root_ids=ids, kind="missing"))
            continue
        for hop in r.hops:
            _add(out, Watched(path=hop.link, role="hop", root_ids=ids, kind="link", link=hop.value))
            _add(
                out,
                Watched(
                    path=parent(hop.link), role="holder", root_ids=ids, kind="dir", identity=True
                ),
            )
        nlink = r.nlink if r.kind == "file" else None
        identity = r.kind == "dir"
        _add(
            out,
            Watched(
                path=r.target,
                role="target",
                root_ids=ids,
                kind=r.kind,
                nlink=nlink,
                identity=identity,
            ),
        )
        _add(out, Watched(path=r.vault, role="vault", root_ids=ids, kind="dir", identity=True))
        for d in r.holder_dirs:
            _add(out, Watched(path=d, role="holder", root_ids=ids, kind="dir", identity=True))
    if codex_home is not None:
        _add(out, Watched(path=codex_home.path, role="codex-home", root_ids=(), identity=True))
        if codex_home.canonical != codex_home.path:
            _add(
                out,
                Watched(
                    path=codex_home.canonical,
                    role="codex-home",
                    root_ids=(),
                    kind="dir",
                    identity=True,
                ),
            )
        auth = os.path.join(codex_home.canonical, "auth.json")
        _add(
            out,
            Watched(path=auth, role="private-auth", root_ids=(), identity=True, private_auth=True),
        )
        # The writer's lock is denied as an existing file (compile.writer_lock_path): replaced,
        # removed, or created only after the session started, the deny no longer masks it.
        _add(
            out,
            Watched(
                path=writer_lock_path(codex_home), role="writer-lock", root_ids=(), identity=True
            ),
        )
    return tuple(out[p] for p in sorted(out))


def _expected(w: Watched, start: Seen | None) -> str:
    if w.link is not None:
        return f"symlink -> {w.link}"
    if w.kind == "file" and w.nlink is not None:
        return f"file (nlink {w.nlink})"
    if start is not None:
        return start.describe()
    return w.kind or "unchanged"


def appeared_as_expected(w: Watched, now: Seen, start: Seen | None) -> bool:
    """A path allowed to appear (`may_appear`) that was missing at the start and is a regular
    file now: not drift (the watcher then takes it as the new baseline)."""
    return w.may_appear and start is not None and start.kind == "missing" and now.kind == "file"


def compare(w: Watched, now: Seen, start: Seen | None) -> Drift | None:
    """The drift of one path, or None. `start` is what watching started with (None while the
    baseline itself is being checked against the bundle)."""

    def drift(kind: DriftKind) -> Drift:
        return Drift(kind, w.role, w.path, w.root_ids, _expected(w, start), now.describe())

    if appeared_as_expected(w, now, start):
        return None

    want = w.kind if w.kind is not None else (start.kind if start is not None else None)
    if w.private_auth and now.kind == "file" and want != "file":
        return drift("private-auth-plain-file")
    if want is not None and now.kind != want:
        if want == "missing":
            return drift("appeared")
        if now.kind == "missing":
            return drift("removed")
        if want == "link":
            return drift("link-replaced")
        return drift("replaced")
    if now.kind == "link":
        want_link = w.link if w.link is not None else (start.link if start is not None else None)
        if want_link is not None and now.link != want_link:
            return drift("link-retargeted")
    if w.nlink is not None and now.kind == "file" and now.nlink != w.nlink:
        return drift("nlink-changed")
    if (
        w.identity
        and start is not None
        and now.kind in ("dir", "file")
        and (now.dev, now.ino) != (start.dev, start.ino)
    ):
        return drift("replaced")
    if (
        w.role in ("trusted-input", "requirements", "mcp-config")
        and start is not None
        and (now.size, now.mtime_ns) != (start.size, start.mtime_ns)
    ):
        return drift("modified")
    return None


@dataclass
class Watcher:
    """The watch set with the state watching started from."""

    watched: tuple[Watched, ...]
    look: Observe = observe
    start: dict[str, Seen] = field(default_factory=dict)
    #: Vaults and CODEX_HOMEs a project-doc link must not lead into.
    protected: tuple[str, ...] = ()
    #: The workspace roots whose trees are scanned for planted project config folders.
    layers: ProjectLayers | None = None

    def _check(self, w: Watched, now: Seen, start: Seen | None) -> Drift | None:
        if w.role != "project-doc":
            return compare(w, now, start)
        if now.kind != "link":
            return None
        target = link_target(w.path)
        if target is None or not reaches(target, self.protected):
            return None
        return Drift(
            "project-doc-link",
            w.role,
            w.path,
            (),
            "no link into a protected directory",
            f"symlink -> {now.link} (reaches {target})",
        )

    def begin(self) -> Drift | None:
        """Record the starting state; a chain that already differs from the bundle is drift."""
        self.start = {}
        for w in self.watched:
            now = self.look(w.path)
            found = self._check(w, now, None)
            if found is not None:
                return found
            self.start[w.path] = now
        return self.layers.begin() if self.layers is not None else None

    def poll(self) -> Drift | None:
        """One pass over every watched path (lstat/readlink only). When a pass finds drift, a
        second pass decides which one is reported: a pass is not atomic, so changes made while
        it ran can show a later path's drift before an earlier path's (seen under load: a
        planted project-doc link reported instead of the replaced credential link checked just
        before it changed). The second pass sees both, and reports the first in path order."""
        found = self._pass()
        if found is None:
            return self.layers.poll() if self.layers is not None else None
        return self._pass() or found

    def _pass(self) -> Drift | None:
        start = self.start
        for w in self.watched:
            now = self.look(w.path)
            before = start.get(w.path)
            if now == before:  # unchanged since a start that matched the bundle
                continue
            found = self._check(w, now, before)
            if found is not None:
                return found
            if appeared_as_expected(w, now, before):
                # From now on this file is what must stay: replaced or removed is drift.
                start[w.path] = now
        return None


#: A tree scan may take at most 1/(1+SCAN_DUTY) of the time: the next one starts no sooner than
#: SCAN_DUTY times the last one's duration after it ended.
SCAN_DUTY = 9.0


@dataclass
class ProjectLayers:
    """The `.codex` folders below the workspace roots (compiler/projectlayers.py): the ones
    there when watching started are the baseline (`profilec check` has refused or a reviewed
    waiver has accepted them), and so are the links that lead outside every root; one that
    appears and would load, or a baseline one that changes and would load, is drift, as is a
    link outside that appears or is re-pointed, and a tree that cannot be scanned whole (too
    large, or a directory the watcher cannot list: at the start too, so the watch does not
    start on a tree it cannot see). A scan costs far more than the chain's lstat pass (about
    0.2 s for 22,000 directories), so it runs at most one part in ten of the time
    (SCAN_DUTY), on `clock`."""

    roots: tuple[str, ...]
    clock: Callable[[], float] = time.monotonic
    start: dict[str, tuple[projectlayers.Mark, ...]] = field(default_factory=dict)
    #: Links outside every root when watching started: link -> the directory it led to.
    outside: dict[str, str] = field(default_factory=dict)
    next_scan: float = 0.0

    def begin(self) -> Drift | None:
        self.start = {}
        self.outside = {}
        for root in self.roots:
            seen = projectlayers.scan(root, roots=self.roots)
            if not seen.complete:
                return _incomplete(seen)
            for path in seen.found:
                self.start[path] = projectlayers.fingerprint(path)
            self.outside.update((o.link, o.target) for o in seen.outside)
        self.next_scan = self.clock()
        return None

    def poll(self) -> Drift | None:
        began = self.clock()
        if began < self.next_scan:
            return None
        found = self._scan()
        ended = self.clock()
        self.next_scan = ended + SCAN_DUTY * (ended - began)
        return found

    def _scan(self) -> Drift | None:
        for root in self.roots:
            seen = projectlayers.scan(root, roots=self.roots)
            for path in seen.found:
                mark = projectlayers.fingerprint(path)
                before = self.start.get(path)
                if mark == before or not projectlayers.loads(path):
                    continue
                return Drift(
                    "project-config-planted",
                    "project-config",
                    path,
                    (),
                    "absent" if before is None else "unchanged since the session started",
                    "present" if before is None else "changed",
                )
            for o in seen.outside:
                led = self.outside.get(o.link)
                if led == o.target:
                    continue
                return Drift(
                    "project-config-link-outside",
                    "project-config",
                    o.link,
                    (),
                    "absent" if led is None else f"a link to {led}",
                    f"a link to {o.target}",
                )
            if not seen.complete:
                return _incomplete(seen)
        return None


def _incomplete(seen: projectlayers.Scan) -> Drift:
    if seen.unlisted:
        return Drift(
            "scan-incomplete",
            "project-config",
            seen.unlisted[0],
            (),
            "a directory the watcher can list",
            f"cannot be listed by uid {os.geteuid()}",
        )
    return Drift(
        "scan-incomplete",
        "project-config",
        seen.root,
        (),
        f"at most {projectlayers.SCAN_LIMIT} directories",
        "more",
    )


def run(
    watcher: Watcher,
    *,
    interval: float = DEFAULT_INTERVAL,
    sleep: Callable[[float], bool],
    watching: Callable[[], None] = lambda: None,
) -> Drift | None:
    """Poll until drift (returned) or until `sleep` returns False (asked to stop: None).

    `sleep(seconds)` waits and returns whether to go on; the CLI's returns False once SIGTERM
    or SIGINT arrived, a test's advances a fake clock. `watching` is called once the starting
    state is recorded (a change from then on is reported; one before it may be the baseline).
    """
    found = watcher.begin()
    if found is None:
        watching()
    while found is None:
        if not sleep(interval):
            return None
        found = watcher.poll()
    return found


#: Trusted inputs whose edit changes what the next compile emits: profilec's own inputs.
_WATCHED_INPUTS = ("roots manifest", "policy directory", "vouched MCP servers")


def input_watch_set(bundle: CompiledBundle) -> tuple[Watched, ...]:
    """The roots manifest, the policy directory and each file in it, the vouched-MCP file: an
    edit (in place or by rename) is drift, as a model command that reached one would have cut
    a root out of the next compile (docs/parent.md). Lists the policy directory (names only)."""
    out: dict[str, Watched] = {}
    for t in bundle.trusted_base:
        if t.source != "input" or t.role not in _WATCHED_INPUTS or t.kind == "missing":
            continue
        _add(
            out, Watched(path=t.path, role="trusted-input", root_ids=(), kind=t.kind, identity=True)
        )
        if t.kind == "dir":
            try:
                names = sorted(e.name for e in os.scandir(t.path) if e.name.endswith(".toml"))
            except OSError:
                names = []
            for name in names:
                path = os.path.join(t.path, name)
                _add(out, Watched(path=path, role="trusted-input", root_ids=(), identity=True))
    return tuple(out[p] for p in sorted(out))


def project_doc_watch_set(bundle: CompiledBundle) -> tuple[Watched, ...]:
    """Each workspace root's project docs: a link planted there that resolves into a vault or
    the private CODEX_HOME makes every later session in that cwd fail to start (measured on
    0.171.0, compiler/projectdocs.py: `failed to load AGENTS.md instructions for environment
    `local`: Permission denied (os error 13)`)."""
    return tuple(
        Watched(path=p, role="project-doc", root_ids=())
        for p in doc_paths(bundle.layout.workspace_roots)
    )


def workspace_root_watch_set(bundle: CompiledBundle) -> tuple[Watched, ...]:
    """Each workspace root as it was when watching started (kind, device and inode): a root
    replaced after Codex started, by a link to a vault or by another directory, turns the
    writable root into a grant on whatever it leads to (measured through codex-acp 2.6.0 on
    0.171.0 and 0.166.0: a writable root at the vault's path beat the managed deny)."""
    return tuple(
        Watched(path=root, role="workspace-root", root_ids=(), identity=True)
        for root in dict.fromkeys(bundle.layout.workspace_roots)
    )


#: What the `codex sandbox` wrapping a vouched MCP server reads from its CODEX_HOME before it
#: sandboxes the server (`.env` sets the wrapper's own environment, PATH included).
MCP_HOME_FILES = (".env", "config.toml")


def mcp_watch_set(bundle: CompiledBundle) -> tuple[Watched, ...]:
    """Each vouched MCP server's wrapper home (`CODEX_HOME`, the server's cwd) `.env` and
    `config.toml`: one that appears, changes or goes is drift. Measured (issue 40): a model
    command planted `<cwd>/.env` with a PATH to its own `bwrap`, and the next session's
    wrapper ran it outside every sandbox."""
    homes: dict[str, None] = {}
    for server in bundle.vouched_mcp_servers.values():
        home = server.get("env", {}).get("CODEX_HOME") or server["cwd"]
        homes[str(home)] = None
    return tuple(
        Watched(path=os.path.join(home, name), role="mcp-config", root_ids=(), identity=True)
        for home in homes
        for name in MCP_HOME_FILES
    )


def denies_writer_lock(bundle: CompiledBundle) -> bool:
    """Every compiled profile denies the writer's lock `$CODEX_HOME/auth.lock` (compile does
    whenever it has a CODEX_HOME)."""
    home = bundle.codex_home
    if home is None or not bundle.profiles:
        return False
    lock = writer_lock_path(home)
    return all(
        any(e.path == lock and e.access == "deny" for e in p.entries) for p in bundle.profiles
    )


def watch_bundle(
    bundle: CompiledBundle, look: Observe = observe, *, requirements: str | None = None
) -> Watcher:
    """A watcher for a compiled bundle's roots, private CODEX_HOME, trusted inputs, the
    workspace roots themselves (`workspace_root_watch_set`), their project docs and the project
    config folders below them (`ProjectLayers`), the vouched MCP servers' wrapper homes
    (`mcp_watch_set`); `requirements`, when given, is the managed requirements file
    the session runs under (verified by the caller at the start): replaced, removed or edited is
    drift.

    The writer's lock appearing as a regular file after the start is not drift when every
    profile denies it: Codex creates it (O_CREAT, never replaced) at its first login save,
    e.g. the first token refresh, and a session reporting that as drift dies there. No
    command can have been running unmasked: CODEX_HOME is read-only in every mode, and with
    the denied lock missing no sandbox starts (bwrap cannot create it there; seen in full
    access, docs/paths.md);
    the next sandbox masks it. Appearing as anything else, or replaced or removed once there,
    is still drift. Launchers create it before the start anyway (`--format launch` files)."""
    watched = {w.path: w for w in watch_set(bundle.roots, bundle.codex_home)}
    if denies_writer_lock(bundle) and bundle.codex_home is not None:
        lock = writer_lock_path(bundle.codex_home)
        w = watched.get(lock)
        if w is not None and w.role == "writer-lock":
            watched[lock] = replace(w, may_appear=True)
    extra = (
        *input_watch_set(bundle),
        *project_doc_watch_set(bundle),
        *workspace_root_watch_set(bundle),
        *mcp_watch_set(bundle),
    )
    for w in extra:
        watched.setdefault(w.path, w)
    if requirements is not None:
        watched[requirements] = Watched(
            path=requirements, role="requirements", root_ids=(), kind="file", identity=True
        )
    return Watcher(
        tuple(watched[p] for p in sorted(watched)),
        look,
        protected=bundle_protected_dirs(bundle),
        layers=ProjectLayers(bundle.layout.workspace_roots),
    )
