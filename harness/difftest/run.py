"""Materialize a case, run its ONE sandboxed probe script, judge, and compare with the evaluator.

Reads and lists are judged from the script's output (the marker of the file the spelling really
reaches, a known child of the directory); writes are judged from outside afterwards (the write
marker in the file, or the new file, on the host). The expected marker and child come from the
host kernel (os.path.realpath), never from the evaluator.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harness.codex_oracle import run_in_session, toml_inline
from profilec.codex.enforce import enforce
from profilec.codex.fsview import FsKind, FsSnapshot
from profilec.codex.globs import brace_error, glob_regex
from profilec.codex.lexical import EvaluationError
from profilec.codex.resolve import EvalContext, resolve
from profilec.e2e.layout import requirements_prefix

from .gen import PROFILE_ID, Case, Probe

Outcome = Literal["allow", "deny"]
#: A predictor: (case, placed permissions, context, fs snapshot) -> (refused?, per-probe outcome).
Predictor = Callable[
    [Case, Mapping[str, Any], EvalContext, FsSnapshot, str],
    tuple[bool, dict[int, Outcome], str],
]
_BEGIN = "@@BEGIN@@"


def place(value: Any, base: str) -> Any:
    """Replace the `@/` spelling with the real base, in keys and values, recursively."""
    if isinstance(value, str):
        return base + value[1:] if value.startswith("@/") else value
    if isinstance(value, dict):
        return {place(k, base): place(v, base) for k, v in value.items()}
    return value


def overrides(perms: Mapping[str, Any]) -> list[str]:
    """The exact `-c` arguments of a case."""
    return [
        "-c",
        f"default_permissions={toml_inline(PROFILE_ID)}",
        "-c",
        f"permissions={toml_inline(perms)}",
    ]


def materialize(case: Case, base: Path) -> Case:
    """Create the tree under `base` (fresh); returns the case with a usable cwd."""
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    for n in case.nodes:
        p = base / n.rel
        if n.kind == "dir":
            p.mkdir(parents=True, exist_ok=True)
        elif n.kind == "file":
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(n.marker + "\n")
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            t = n.target
            os.symlink(str(base) + t[1:] if t.startswith("@/") else t, p)
    if not (base / case.cwd).is_dir():
        case = dataclasses.replace(case, cwd="ws", tags=tuple(sorted({*case.tags} - {"cwd-link"})))
    return case


def snapshot(base: Path) -> FsSnapshot:
    """lstat/readlink facts for the base, its ancestors and everything below (never opened)."""
    kinds: dict[str, FsKind] = {}
    links: dict[str, str] = {}

    def note(p: str) -> None:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            kinds[p] = "link"
            links[p] = os.readlink(p)
        elif stat.S_ISDIR(st.st_mode):
            kinds[p] = "dir"
        elif stat.S_ISREG(st.st_mode):
            kinds[p] = "file"
        else:
            kinds[p] = "other"

    b = str(base)
    cur = b
    while True:
        note(cur)
        if cur == "/":
            break
        cur = posixpath.dirname(cur)
    for root, dnames, fnames in os.walk(b):
        for name in dnames + fnames:
            note(posixpath.join(root, name))
    from profilec.codex.fsview import LiveFs

    return FsSnapshot(kinds, links, scope=b, outside=LiveFs())


def context(case: Case, perms: Mapping[str, Any], base: str) -> EvalContext:
    """The launch context the sandbox gets: spelled cwd, HOME, TMPDIR."""
    return EvalContext(
        cwd=f"{base}/{case.cwd}",
        tmpdir=f"{base}/{case.tmpdir}" if case.tmpdir else None,
        home=f"{base}/{case.home}",
    )


def predict(
    case: Case, perms: Mapping[str, Any], ctx: EvalContext, fs: FsSnapshot, base: str
) -> tuple[bool, dict[int, Outcome], str]:
    """The evaluator's prediction for the target Codex (`settings.codex_version()`)."""
    from profilec.settings import codex_version

    return predict_as(codex_version(), case, perms, ctx, fs, base)


def predictor_for(version: str) -> Predictor:
    """The evaluator's prediction with the enforcement model of Codex `version`."""
    return lambda case, perms, ctx, fs, base: predict_as(version, case, perms, ctx, fs, base)


def predict_as(
    version: str,
    case: Case,
    perms: Mapping[str, Any],
    ctx: EvalContext,
    fs: FsSnapshot,
    base: str,
) -> tuple[bool, dict[int, Outcome], str]:
    """The evaluator's prediction: refused?, and allow/deny per probe (even when refused). A
    case under managed requirements is predicted with them: a file Codex cannot parse starts
    nothing; otherwise the managed paths are deny entries, and a re-grant of one is a refusal
    whose probes are still predicted (`managed_refusal`)."""
    managed = managed_paths(case, base)
    denied: dict[int, Outcome] = {p.idx: "deny" for p in case.probes}
    why_managed: str | None = None
    try:
        eff = resolve(perms, PROFILE_ID, ctx)
        for m in managed:
            why_managed = why_managed or managed_syntax_error(m)
        if why_managed is not None:
            return True, denied, why_managed  # no session starts at all
        why_managed = managed_refusal(
            managed, eff.entries, eff.workspace_roots, declared_roots(perms, ctx)
        )
        if managed:
            eff = resolve(with_managed(perms, managed), PROFILE_ID, ctx)
    except EvaluationError as exc:
        return True, denied, f"config: {exc.message}"
    enf = enforce(eff, fs, codex_version=version)
    out: dict[int, Outcome] = {}
    for p in case.probes:
        spelled = f"{base}/{p.rel}"
        if p.kind == "write":
            target = (
                spelled
                if fs.kind(spelled) != "dir" and _follows_to_file(fs, spelled)
                else (f"{spelled}/pcw{p.idx}")
            )
            ok = enf.decide(target).writable
        else:
            ok = enf.decide(spelled).readable
        out[p.idx] = "allow" if ok else "deny"
    why = "; ".join([*([why_managed] if why_managed else []), *(r.message for r in enf.refusals)])
    return bool(enf.refusals) or why_managed is not None, out, why


def _has_glob(path: str) -> bool:
    return any(ch in path for ch in "*?[")


def managed_syntax_error(path: str) -> str | None:
    """Codex's refusal of a managed `deny_read` path it cannot parse, or None. Measured on
    0.171.0 and 0.166.0: the components before the first one holding `* ? [` are a path, and
    `\\`, `{`, `}` or `]` there is refused; the rest is a glob pattern, refused only when the
    glob is invalid (an unbalanced `{`/`}`; a stray `]` or a `\\` is fine there)."""
    parts = path.split("/")
    first = next((i for i, part in enumerate(parts) if _has_glob(part)), len(parts))
    prefix = "/".join(parts[:first])
    if any(ch in prefix for ch in "\\{}]"):
        return (
            "failed to parse requirements layer /etc/codex/requirements.toml: unsupported "
            f'configuration path "{path}" using POSIX path syntax'
        )
    if not _has_glob(path):
        return None
    why = brace_error(path)
    if why is not None:
        return f"invalid deny-read glob pattern `{path}`: error parsing glob '{path}': {why}"
    return None


def managed_refusal(
    managed: Sequence[str],
    entries: Sequence[Any],
    workspace_roots: Sequence[str],
    declared: Sequence[str],
) -> str | None:
    """Codex's refusal of a session under managed `deny_read` paths that parse, or None: a
    configured entry that grants `read` or `write` at or below a managed path (measured:
    "invalid value for `permissions.filesystem`: `<entry>` is not in the allowed set all
    managed deny_read restrictions"). What is checked is the config:
    an explicit entry as spelled (one on a link that leads below a managed path started), or
    `:workspace_roots` on a declared workspace root; not the session cwd
    (a cwd below a managed path ran), TMPDIR or /tmp (`:tmpdir` on a managed path ran), and not
    Codex's run-time carve-outs."""
    roots = sorted(workspace_roots, key=len, reverse=True)
    for e in entries:
        if e.kind != "path" or e.access not in ("read", "write"):
            continue
        if "carve-out" in e.source or e.source.startswith((":tmpdir", ":slash_tmp")):
            continue  # run-time paths (TMPDIR, /tmp) and carve-outs: measured, not checked
        if e.source.startswith(":workspace_roots"):
            root = next((r for r in roots if _under(r, e.path)), None)
            if root not in declared:
                continue  # the session cwd's, not declared: measured, not checked
        for m in managed:
            if _covers(m, e.path):  # as spelled (measured: a link leading below one ran)
                return (
                    f"invalid value for `permissions.filesystem`: `{e.path}` is not in the "
                    "allowed set all managed deny_read restrictions"
                )
    return None


def declared_roots(perms: Mapping[str, Any], ctx: EvalContext) -> tuple[str, ...]:
    """The workspace roots the config declares (the profile's `workspace_roots` table, the
    launch's), normalized as the evaluator's roots are; the session cwd is not one of them
    unless it is declared too."""
    table = perms[PROFILE_ID].get("workspace_roots") or {}
    keys = [k for k, v in table.items() if v is True] if isinstance(table, Mapping) else []
    return tuple(
        posixpath.normpath(posixpath.join(ctx.cwd, k)) for k in (*ctx.workspace_roots, *keys)
    )


def _under(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _covers(managed: str, path: str) -> bool:
    """Whether `path` is `managed` or below it (a glob: matched by it, or below a match). No
    link is resolved: Codex applies a managed path as written (measured: a managed deny on a
    link in a writable root refused to start as the same profile entry does, `crosses writable
    symlink`; resolving it first left those cases running in the model)."""
    if not _has_glob(managed):
        return _under(managed, path)
    rx = glob_regex(managed)
    cur = path
    while True:
        if rx.fullmatch(cur):
            return True
        if cur == "/":
            return False
        cur = posixpath.dirname(cur)


def managed_paths(case: Case, base: str) -> tuple[str, ...]:
    """The case's managed `deny_read` paths, placed under `base`."""
    return tuple(place(m, base) for m in case.managed)


def with_managed(perms: Mapping[str, Any], managed: Sequence[str]) -> dict[str, Any]:
    """What a session runs under managed requirements: Codex pushes every `deny_read` entry
    into the profile's filesystem policy as a deny entry (the strongest access at its path), so
    the evaluator sees the profile with a `deny` at each one."""
    out = dict(perms)
    if not managed:
        return out
    prof = dict(out[PROFILE_ID])
    fs = dict(prof.get("filesystem", {}))
    for path in managed:
        fs[path] = "deny"
    prof["filesystem"] = fs
    out[PROFILE_ID] = prof
    return out


def managed_dir(base: str) -> str:
    """Where a case's requirements file is written: beside its tree, outside it (the probes
    never see it, and the tree's snapshot does not hold it)."""
    return f"{base}.etc-codex"


def requirements_text(managed: Sequence[str]) -> str:
    """The managed requirements file of a case: its `deny_read` list only."""
    items = ", ".join(toml_inline(p) for p in managed)
    return f"[permissions.filesystem]\ndeny_read = [{items}]\n"


def _follows_to_file(fs: FsSnapshot, spelled: str) -> bool:
    from profilec.codex.fsview import resolve_path

    return fs.kind(resolve_path(fs, spelled).real) in ("file", "other")


def _q(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


@dataclass(frozen=True, slots=True)
class Plan:
    """What the script does per probe and how the host judges it."""

    probe: Probe
    spelled: str
    expect: str | None  # marker (read), child name (list), None = probe not judgeable
    write_path: str | None  # host path the write lands on when it succeeds


def plan(case: Case, base: str) -> list[Plan]:
    """Per probe: the expected marker/child from the host kernel, or why it cannot be judged."""
    markers = {f"{base}/{n.rel}": n.marker for n in case.nodes if n.kind == "file"}
    out: list[Plan] = []
    for p in case.probes:
        spelled = f"{base}/{p.rel}"
        real = os.path.realpath(spelled)
        expect: str | None = None
        write_path: str | None = None
        if p.kind == "read":
            expect = markers.get(real) if os.path.isfile(real) else None
        elif p.kind == "list":
            if os.path.isdir(real):
                # A regular file: a nested mount's skeleton directories show up in a masked
                # parent's listing without revealing its content.
                kids = sorted(k for k in os.listdir(real) if os.path.isfile(f"{real}/{k}"))
                expect = kids[0] if kids else None
        else:
            if os.path.isfile(real):
                write_path = real
            elif os.path.isdir(real):
                write_path = f"{real}/pcw{p.idx}"
        out.append(Plan(p, spelled, expect, write_path))
    return out


def script(plans: Sequence[Plan], wmark: str) -> str:
    """ONE shell script: reads and lists first, then writes."""
    lines = [f"echo {_BEGIN}"]
    for pl in plans:
        s = _q(pl.spelled)
        if pl.probe.kind == "read":
            lines.append(
                f"printf '@@R{pl.probe.idx}@@'; cat -- {s} 2>/dev/null | tr -d '\\n'; echo"
            )
        elif pl.probe.kind == "list":
            lines.append(
                f"printf '@@R{pl.probe.idx}@@/'; ls -A -- {s} 2>/dev/null | tr '\\n' '/'; echo"
            )
    for pl in plans:
        if pl.probe.kind == "write" and pl.write_path is not None:
            tgt = (
                pl.spelled
                if pl.write_path.rsplit("/", 1)[-1] != f"pcw{pl.probe.idx}"
                else (f"{pl.spelled}/pcw{pl.probe.idx}")
            )
            lines.append(f"printf %s {wmark} >> {_q(tgt)} 2>/dev/null")
    lines.append("exit 0")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Observed:
    """What one run showed: refused (no command ran) and allow/deny per judgeable probe."""

    refused: bool
    outcomes: dict[int, Outcome]
    stderr: str


def run_codex(
    codex: Path,
    case: Case,
    perms: Mapping[str, Any],
    base: str,
    codex_home: str,
    plans: Sequence[Plan],
    *,
    timeout: float = 60.0,
) -> Observed:
    """Run the case's script under `codex sandbox -P` and judge each probe. A case with managed
    `deny_read` paths runs under them as a session would: the requirements file is bound over
    /etc/codex in a private mount namespace (needs root; `e2e.layout.requirements_prefix`,
    which leaves the host's /etc as it was) and `--include-managed-config` makes `codex
    sandbox` read it."""
    wmark = f"PCW{case.seed % 100000}x{case.index}"
    managed = managed_paths(case, base)
    include = ["--include-managed-config"] if managed else []
    argv = [str(codex), "sandbox", *include, "-P", PROFILE_ID, *overrides(perms)]
    argv += ["-C", f"{base}/{case.cwd}", "--", "sh", "-c", script(plans, wmark)]
    if managed:
        # the shared binding: the file is bound over /etc/codex in a private mount namespace,
        # and with no host /etc/codex, /etc there is an overlay on a tmpfs (the host's /etc is
        # left as it was)
        argv = [*requirements_prefix(requirements_text(managed), managed_dir(base)), *argv]
    env = {"PATH": "/usr/bin:/bin", "HOME": f"{base}/{case.home}", "CODEX_HOME": codex_home}
    if case.tmpdir:
        env["TMPDIR"] = f"{base}/{case.tmpdir}"
    _rc, out, err = run_in_session(argv, cwd="/", env=env, timeout=timeout)
    return judge(out, err, plans, wmark)


def judge(out: str, err: str, plans: Sequence[Plan], wmark: str) -> Observed:
    """Turn the script's output (and the host after it) into allow/deny per judgeable probe."""
    lines = out.split("\n")
    if _BEGIN not in lines:
        return Observed(True, {}, err.strip())
    seen: dict[int, str] = {}
    for line in lines:
        if line.startswith("@@R"):
            head, _, rest = line[3:].partition("@@")
            if head.isdigit():
                seen[int(head)] = rest
    outcomes: dict[int, Outcome] = {}
    for pl in plans:
        i = pl.probe.idx
        if pl.probe.kind in ("read", "list"):
            if pl.expect is None:
                continue
            text = seen.get(i, "")
            hit = pl.expect in text if pl.probe.kind == "read" else f"/{pl.expect}/" in text
            outcomes[i] = "allow" if hit else "deny"
        elif pl.write_path is not None:
            try:
                st = os.lstat(pl.write_path)
                ok = stat.S_ISREG(st.st_mode) and wmark.encode() in Path(pl.write_path).read_bytes()
            except OSError:
                ok = False
            outcomes[i] = "allow" if ok else "deny"
    return Observed(False, outcomes, err.strip())
