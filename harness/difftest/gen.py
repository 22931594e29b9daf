"""Seeded random cases for the differential tester: pure data, no I/O.

A case is a temp tree (dirs, marker files, absolute/relative/chained/dangling symlinks, names with
glob metacharacters and spaces), one profile (extends, 0-6 entries on tree paths and specials,
workspace_roots, deny globs, scoped tables), a cwd/HOME/TMPDIR, ~40 probes, and in about two
cases of five a managed requirements `deny_read` list (1-2 directories), which
the runner binds over /etc/codex as a session would see it. Every path in a
case is relative to the case's base directory, spelled `@/...` until the runner places it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Literal

NodeKind = Literal["dir", "file", "link"]
ProbeKind = Literal["read", "list", "write"]

#: Names that exercise Codex's key parsing: glob metacharacters, escapes, spaces, carve-outs.
AWKWARD = ("a b", "x*y", "q?", "[br]", "{c,d}", "back\\slash", "s p*", "]z", "w{", ".git", ".codex")
PLAIN = ("src", "lib", "docs", "data", "cfg", "k1", "k2", "n3", "vault", "inner")
PROFILE_ID = "dt"
PARENT_ID = "dtbase"


@dataclass(frozen=True, slots=True)
class Node:
    """One tree node: `rel` below the base; `target` is a link's value (`@/` = the base)."""

    rel: str
    kind: NodeKind
    target: str = ""
    marker: str = ""


@dataclass(frozen=True, slots=True)
class Probe:
    """One access tried from inside the sandbox, at a spelling relative to the base."""

    idx: int
    kind: ProbeKind
    rel: str


@dataclass(frozen=True, slots=True)
class Case:
    """One generated case: tree, permissions table, launch context and probes."""

    seed: int
    index: int
    nodes: tuple[Node, ...]
    permissions: dict[str, Any]
    cwd: str  # relative spelling of the cwd (may go through a link)
    home: str
    tmpdir: str | None
    probes: tuple[Probe, ...]
    tags: tuple[str, ...] = field(default=())
    #: Paths (`@/` spellings) of the managed requirements' `[permissions.filesystem] deny_read`.
    managed: tuple[str, ...] = field(default=())

    @property
    def case_id(self) -> str:
        """`<seed>:<index>`, what `--case` replays."""
        return f"{self.seed}:{self.index}"


def _name(rng: random.Random, awkward: float) -> str:
    return rng.choice(AWKWARD) if rng.random() < awkward else rng.choice(PLAIN)


def _tree(rng: random.Random, tag: str) -> list[Node]:
    nodes: list[Node] = []
    dirs = ["ws", "home", "tmp", "o"]
    for d in dirs:
        nodes.append(Node(d, "dir"))
    n_dirs = rng.randint(3, 8)
    for _ in range(n_dirs):
        parent = rng.choice(dirs)
        rel = f"{parent}/{_name(rng, 0.35)}"
        if rel in dirs or parent.count("/") >= 3:
            continue
        dirs.append(rel)
        nodes.append(Node(rel, "dir"))
    files: list[str] = []
    for i, d in enumerate(dirs):
        # Every directory holds a marker file, so listing it shows a known child.
        rel = f"{d}/m{i}"
        files.append(rel)
        nodes.append(Node(rel, "file", marker=f"PCM{tag}f{i}"))
    for j in range(rng.randint(2, 6)):
        d = rng.choice(dirs)
        rel = f"{d}/{_name(rng, 0.5)}.t{j}" if rng.random() < 0.7 else f"{d}/{_name(rng, 0.6)}"
        if any(n.rel == rel for n in nodes):
            continue
        files.append(rel)
        nodes.append(Node(rel, "file", marker=f"PCM{tag}g{j}"))
    taken = {n.rel for n in nodes}
    links: list[str] = []
    for k in range(rng.randint(1, 5)):
        d = rng.choice(dirs)
        rel = f"{d}/l{k}" if rng.random() < 0.7 else f"{d}/{_name(rng, 0.5)}l{k}"
        if rel in taken:
            continue
        style = rng.choice(("abs-dir", "rel-dir", "abs-file", "rel-file", "chain", "dangling"))
        if style == "dangling":
            target = f"@/{rng.choice(dirs)}/missing{k}"
        elif style == "chain" and links:
            target = "@/" + rng.choice(links)
        else:
            pool = dirs if style.endswith("dir") or style == "chain" else files
            target = "@/" + rng.choice(pool)
        if style.startswith("rel") and target.startswith("@/"):
            target = _relative(rel, target[2:])
        taken.add(rel)
        links.append(rel)
        nodes.append(Node(rel, "link", target=target))
    return nodes


def _relative(link_rel: str, dest_rel: str) -> str:
    import posixpath

    return posixpath.relpath(dest_rel, posixpath.dirname(link_rel) or ".")


def _profile(rng: random.Random, nodes: list[Node], tags: list[str]) -> dict[str, Any]:
    paths = [n.rel for n in nodes]
    dirs = [n.rel for n in nodes if n.kind == "dir"]
    files = [n.rel for n in nodes if n.kind == "file"]
    fs: dict[str, Any] = {}
    ext = rng.choice((":read-only", ":workspace", ":workspace", None, "parent"))
    if ext is None:
        fs[":root"] = rng.choice(("read", "read", "write"))
        if rng.random() < 0.5:
            fs[":workspace_roots"] = "write"
    access = ("read", "write", "deny", "deny")
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        if r < 0.45:
            p = rng.choice(paths)
            acc = rng.choice(access)
            if acc == "write" and p in files:
                acc = rng.choice(("read", "deny"))  # a write file entry only refuses
            fs[f"@/{p}"] = acc
        elif r < 0.55:
            fs[rng.choice((":tmpdir", ":slash_tmp", ":minimal"))] = rng.choice(access)
            tags.append("special")
        elif r < 0.62:
            fs[":root"] = rng.choice(("read", "write"))
            tags.append("root")
        elif r < 0.78:
            p = rng.choice(files + dirs)
            stem, _, last = p.rpartition("/")
            pat = rng.choice(("*", "?" * len(last), last[:1] + "*", "*" + last[-1:], last))
            fs[f"@/{stem}/{pat}"] = "deny"
            tags.append("glob")
        elif r < 0.9:
            sub = rng.choice([p for p in paths if p.startswith("ws/")] or ["ws/m0"])[3:]
            table = fs.setdefault(":workspace_roots", {})
            if isinstance(table, dict):
                table[sub] = rng.choice(access)
            tags.append("scoped")
        else:
            d = rng.choice(dirs)
            kids = [p[len(d) + 1 :] for p in paths if p.startswith(d + "/")]
            if kids:
                fs[f"@/{d}"] = {rng.choice(kids): rng.choice(access)}
                tags.append("scoped")
    prof: dict[str, Any] = {"filesystem": fs}
    if rng.random() < 0.25:
        prof["workspace_roots"] = {f"@/{rng.choice(dirs)}": True}
        tags.append("workspace_roots")
    perms: dict[str, Any] = {PROFILE_ID: prof}
    if ext == "parent":
        base_fs: dict[str, Any] = {":root": "read"}
        if rng.random() < 0.6:
            base_fs[":workspace_roots"] = "write"
        if rng.random() < 0.5:
            base_fs[f"@/{rng.choice(paths)}"] = rng.choice(access)
        perms[PARENT_ID] = {"extends": ":workspace", "filesystem": base_fs}
        prof["extends"] = PARENT_ID
        tags.append("extends-user")
    elif ext is not None:
        prof["extends"] = ext
    return perms


def _probes(rng: random.Random, nodes: list[Node], n: int) -> list[Probe]:
    cands: list[tuple[ProbeKind, str]] = []
    for node in nodes:
        if node.kind == "file":
            cands += [("read", node.rel), ("write", node.rel)]
        elif node.kind == "dir":
            cands += [("list", node.rel), ("write", node.rel)]
        else:
            cands += [("read", node.rel), ("list", node.rel), ("write", node.rel)]
    # Spellings through links: each link to a directory, one level below.
    for link in (x for x in nodes if x.kind == "link"):
        for node in nodes:
            if node.kind == "file" and "/" in node.rel:
                cands.append(("read", f"{link.rel}/{node.rel.rsplit('/', 1)[1]}"))
    rng.shuffle(cands)
    seen: set[tuple[str, str]] = set()
    out: list[Probe] = []
    for kind, rel in cands:
        if (kind, rel) in seen:
            continue
        seen.add((kind, rel))
        out.append(Probe(len(out), kind, rel))
        if len(out) >= n:
            break
    return out


def make_case(seed: int, index: int, *, probes: int = 40, held_out: bool = False) -> Case:
    """The case `index` of the run seeded `seed` (same inputs, same case). `held_out` adds the
    shapes of `_held_out` (from a generator of their own: the rest of the case is unchanged)."""
    rng = random.Random(f"{seed}:{index}")
    tag = f"{seed % 100000}x{index}"
    nodes = _tree(rng, tag)
    tags: list[str] = []
    perms = _profile(rng, nodes, tags)
    if held_out:
        _held_out(seed, index, nodes, perms, tags)
    dirs = [n.rel for n in nodes if n.kind == "dir"]
    dir_links = [n.rel for n in nodes if n.kind == "link"]
    if dir_links and rng.random() < 0.25:
        cwd = rng.choice(dir_links)
        tags.append("cwd-link")
    else:
        cwd = rng.choice(["ws", "ws", *dirs])
    home = rng.choice(["home", *dirs])
    tmpdir = rng.choice(["tmp", "tmp", None, *dirs])
    if any(n.kind == "link" for n in nodes):
        tags.append("links")
    managed = _managed(seed, index, nodes, perms)
    if managed:
        tags.append("managed")
    return Case(
        seed,
        index,
        tuple(nodes),
        perms,
        cwd,
        home,
        tmpdir,
        tuple(_probes(rng, nodes, probes)),
        tuple(sorted(set(tags))),
        managed,
    )


def _managed(seed: int, index: int, nodes: list[Node], perms: dict[str, Any]) -> tuple[str, ...]:
    """The case's managed `deny_read` paths, from a generator of its own (so the rest of every
    case is what it was before managed requirements were added). A path the profile holds a
    scoped table at is skipped: Codex merges the two, a table key cannot hold both."""
    rng = random.Random(f"{seed}:{index}:managed")
    if rng.random() >= 0.4:
        return ()
    fs = perms[PROFILE_ID].get("filesystem", {})
    # Directories only, as profilec's requirements name them (canonical vaults and credential
    # stores). Measured beyond that: a managed path through a link is applied as written (a
    # managed deny on a link in a writable root refused to start as the same profile entry
    # does), and a managed file with a profile deny on a link to it made bwrap refuse.
    pool = [n.rel for n in nodes if n.kind == "dir" and not isinstance(fs.get(f"@/{n.rel}"), dict)]
    if not pool:
        return ()
    return tuple(sorted({f"@/{p}" for p in rng.sample(pool, min(len(pool), rng.randint(1, 2)))}))


#: The carve-out names Codex binds read-only in every writable root (codex.vocabulary).
CARVE_NAMES = (".git", ".codex", ".agents")


def _held_out(
    seed: int, index: int, nodes: list[Node], perms: dict[str, Any], tags: list[str]
) -> None:
    """Add the shapes the first generator never made (issue 41's held-out cases), each from a
    generator of its own, in place: a carve-out name that is a link in a directory that may be
    a writable root (`carve-link`); a deny on a missing carve-out name (`carve-deny`); a
    CODEX_HOME-like directory, read, with a deny on its missing writer's lock (`lock-missing`);
    a deny on a directory holding the cwd or a writable entry (`under-denied`)."""
    rng = random.Random(f"{seed}:{index}:held-out")
    fs = perms[PROFILE_ID]["filesystem"]
    dirs = [n.rel for n in nodes if n.kind == "dir"]
    taken = {n.rel for n in nodes}
    pool = ["ws", "ws", *dirs]
    if rng.random() < 0.35:
        rel = f"{rng.choice(pool)}/{rng.choice(CARVE_NAMES)}"
        if rel not in taken:
            files = [n.rel for n in nodes if n.kind == "file"]
            dest = rng.choice([*dirs, *files, f"{rng.choice(dirs)}/missing-c"])
            target = _relative(rel, dest) if rng.random() < 0.5 else f"@/{dest}"
            nodes.append(Node(rel, "link", target=target))
            taken.add(rel)
            tags.append("carve-link")
    if rng.random() < 0.3:
        rel = f"{rng.choice(pool)}/{rng.choice(CARVE_NAMES)}"
        if rel not in taken and f"@/{rel}" not in fs:
            fs[f"@/{rel}"] = "deny"
            tags.append("carve-deny")
    if rng.random() < 0.3:
        rel = f"{rng.choice(pool)}/ch"
        if rel not in taken:
            nodes += [Node(rel, "dir"), Node(f"{rel}/config.toml", "file", marker=f"PCH{index}")]
            fs.setdefault(f"@/{rel}", rng.choice(("read", "read", "deny")))
            fs.setdefault(f"@/{rel}/auth.lock", "deny")
            tags.append("lock-missing")
    if rng.random() < 0.3:
        holders = [d for d in dirs if "/" in d]
        if holders:
            inner = rng.choice(holders)
            outer = inner.rsplit("/", 1)[0]
            fs.setdefault(f"@/{outer}", "deny")
            fs.setdefault(f"@/{inner}", rng.choice(("read", "write", "write")))
            tags.append("under-denied")


@dataclass(frozen=True, slots=True)
class Cell:
    """One measured refusal class as a fixed pair: a case Codex refuses (with `fragment` in its
    message, on 0.166.0 and 0.171.0) and a control that starts."""

    name: str
    fragment: str
    refused: Case
    control: Case


def _cell_case(index: int, nodes: tuple[Node, ...], fs: dict[str, Any], tag: str) -> Case:
    """A fixed case (seed 0) with cwd and HOME `ws`, no TMPDIR and no probes: only whether the
    sandbox starts is compared."""
    perms = {PROFILE_ID: {"filesystem": fs, **({} if ":root" in fs else {"extends": ":workspace"})}}
    return Case(0, index, (Node("ws", "dir"), *nodes), perms, "ws", "ws", None, (), (tag,))


def _pair(
    index: int,
    name: str,
    fragment: str,
    refused: tuple[tuple[Node, ...], dict[str, Any]],
    control: tuple[tuple[Node, ...], dict[str, Any]],
) -> Cell:
    return Cell(
        name,
        fragment,
        _cell_case(2 * index, *refused, name),
        _cell_case(2 * index + 1, *control, name),
    )


def cells() -> list[Cell]:
    """The held-out classes of issue 41, each measured by hand on both releases: (a) a carve-out
    name that is a symlink in a writable root; (b) a deny under a denied directory inside a
    writable root; (c) a deny on a missing carve-out name; (d) a CODEX_HOME-like directory
    inside the workspace, read, with a deny on its missing writer's lock; and from the fresh
    held-out seed 4141, a deny on a link key inside a denied directory."""
    real = Node("ws/real", "dir")
    outside = (Node("o", "dir"), Node("o/f", "file", marker="PCcell"))
    home = (Node("ws/ch", "dir"), Node("ws/ch/config.toml", "file", marker="PCcell"))
    lock = Node("ws/ch/auth.lock", "file", marker="")
    crosses = "crosses writable symlink"
    read_only = "Read-only file system"
    denied_link = {"@/h": "deny", "@/h/l0": "deny"}
    return [
        _pair(
            0,
            "carve-out-link-dir",
            crosses,
            ((real, Node("ws/.codex", "link", target="real")), {}),
            (
                (real, Node("ws/.codex", "link", target="real")),
                {":workspace_roots": {".codex": "write"}},
            ),
        ),
        _pair(
            1,
            "carve-out-link-file",
            crosses,
            ((*outside, Node("ws/.git", "link", target="@/o/f")), {}),
            ((*outside, Node("ws/.git", "link", target="@/o/f")), {":root": "write"}),
        ),
        _pair(
            2,
            "deny-under-denied-dir",
            read_only,
            (home, {"@/ws/ch": "deny", "@/ws/ch/auth.lock": "deny"}),
            # outside every writable root the missing inner deny is not mounted
            (
                (Node("o", "dir"), Node("o/ch", "dir")),
                {"@/o/ch": "deny", "@/o/ch/auth.lock": "deny"},
            ),
        ),
        _pair(
            3,
            "deny-missing-carve-out",
            "Is a directory",
            ((), {":workspace_roots": {".agents": "deny"}}),
            ((Node("ws/.agents", "dir"),), {":workspace_roots": {".agents": "deny"}}),
        ),
        _pair(
            4,
            "missing-writer-lock",
            read_only,
            (home, {"@/ws/ch": "read", "@/ws/ch/auth.lock": "deny"}),
            ((*home, lock), {"@/ws/ch": "read", "@/ws/ch/auth.lock": "deny"}),
        ),
        _pair(
            5,
            "missing-writer-lock-in-carve-out",
            read_only,
            ((Node("ws/.codex", "dir"),), {"@/ws/.codex/auth.lock": "deny"}),
            (
                (Node("ws/.codex", "dir"), Node("ws/.codex/auth.lock", "file")),
                {"@/ws/.codex/auth.lock": "deny"},
            ),
        ),
        _pair(
            6,
            "deny-link-in-denied-dir",
            read_only,
            ((*outside, Node("h", "dir"), Node("h/l0", "link", target="../o/f")), denied_link),
            ((*outside, Node("h", "dir"), Node("h/l0", "link", target="../o/none")), denied_link),
        ),
    ]
