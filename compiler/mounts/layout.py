"""The plan layout: daemon-owned TOML, trust-checked like the roots manifest, traversal first.

Order of checks (fail closed, first failure wins): trust check and read, TOML parse, a
traversal scan of every path-bearing key (before the schema, so nothing is joined or looked up
with a bad segment), the schema, then the rules between keys. `probe_host` is the only I/O
after loading: it lstat()s the read-only system paths and proves every grant is canonical.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from pydantic import ValidationError

from ..errors import LayoutError, RootChainError
from ..inputs import Inputs
from ..models.mounts import HostFacts, PlanLayout, SystemPath
from ..paths import check_absolute, check_segment, is_within
from ..readers import parse_toml, validation_message
from ..roots import walk_chain
from ..settings import cache_dir, codex_binary, codex_version

_ABS_KEYS = ("daemon_root", "agent_home", "state_dir")
_ABS_LIST_KEYS = ("workspace_roots", "readonly_paths")
_HIDDEN_KEYS = ("host_home",)
_HIDDEN_LIST_KEYS = ("sibling_homes", "shared_temp", "extra")


def check_relative(path: str, *, what: str) -> str:
    """A relative path of safe segments; absolute, empty, `.` and `..` fail closed."""
    if path.startswith("/"):
        raise LayoutError(f"{what} must be relative, got absolute {path!r}", where=what)
    for seg in path.split("/"):
        check_segment(seg, what=what)
    return path


def _scan_abs(value: Any, what: str) -> None:
    if isinstance(value, str):
        check_absolute(value, what=what)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                check_absolute(item, what=f"{what}[{i}]")


def scan_traversal(doc: dict[str, Any], *, where: str) -> None:
    """Reject any path with a traversal or empty segment, anywhere, before anything else."""
    try:
        for key in _ABS_KEYS + _ABS_LIST_KEYS:
            _scan_abs(doc.get(key), key)
        hidden = doc.get("hidden")
        if isinstance(hidden, dict):
            for key in _HIDDEN_KEYS + _HIDDEN_LIST_KEYS:
                _scan_abs(hidden.get(key), f"hidden.{key}")
        remote = doc.get("remote")
        if isinstance(remote, dict):
            _scan_abs(remote.get("mirror_base"), "remote.mirror_base")
            roots = remote.get("roots")
            if isinstance(roots, list):
                for i, r in enumerate(roots):
                    if isinstance(r, str):
                        check_relative(r, what=f"remote.roots[{i}]")
    except LayoutError as exc:
        exc.where = f"{where}: {exc.where}" if exc.where else where
        exc.args = (exc.one_line(),)
        raise


def hidden_paths(layout: PlanLayout) -> list[str]:
    """Every hidden host path of the layout, daemon root first."""
    h = layout.hidden
    out = [layout.daemon_root]
    if h.host_home:
        out.append(h.host_home)
    return [*out, *h.sibling_homes, *h.shared_temp, *h.extra]


def _overlap(a: str, b: str) -> bool:
    return is_within(a, b) or is_within(b, a)


def validate_layout(layout: PlanLayout, *, where: str = "layout") -> PlanLayout:
    """Rules between keys (pure): per-candidate state apart from the login home, no duplicates."""
    if _overlap(layout.state_dir, layout.agent_home):
        raise LayoutError(
            f"state_dir {layout.state_dir} overlaps agent_home {layout.agent_home}; per-candidate "
            "state must live outside the shared login home",
            where=where,
        )
    for ws in layout.workspace_roots:
        if _overlap(ws, layout.state_dir):
            raise LayoutError(
                f"workspace root {ws} overlaps state_dir {layout.state_dir}", where=where
            )
    if len(set(layout.workspace_roots)) != len(layout.workspace_roots):
        raise LayoutError("workspace_roots lists a path twice", where=where)
    if len(set(layout.backends)) != len(layout.backends):
        raise LayoutError("backends lists a backend twice", where=where)
    if layout.remote is not None:
        roots = layout.remote.roots
        for i, r in enumerate(roots):
            check_relative(r, what=f"remote.roots[{i}]")
        for i, a in enumerate(roots):
            for b in roots[i + 1 :]:
                if _overlap("/" + a, "/" + b):
                    raise LayoutError(
                        f"remote roots {a!r} and {b!r} overlap; each needs its own exact directory",
                        where=where,
                    )
    for name in layout.env:
        if name in layout.passthrough_env:
            raise LayoutError(f"env {name} is both set and passed through", where=where)
    return layout


def parse_layout(data: bytes, *, where: str) -> PlanLayout:
    """Parse, scan for traversal, validate against the schema and the cross-key rules."""
    doc = parse_toml(data, where=where)
    scan_traversal(doc, where=where)
    try:
        # JSON mode keeps strict typing while TOML arrays validate as tuples.
        layout = PlanLayout.model_validate_json(json.dumps(doc, default=str))
    except ValidationError as exc:
        raise LayoutError(
            f"schema violation: {validation_message(exc, PlanLayout)}", where=where
        ) from None
    return validate_layout(layout, where=where)


def load_layout(path: str) -> PlanLayout:
    """The plan layout outside a run: trust-checked (same rule as the roots manifest) and read
    through an edge of its own, then validated (a run: mounts.api.layout_of)."""
    return parse_layout(Inputs.unrooted().trusted(path).data, where=path)


# ---------------------------------------------------------------------------------------------
# The edge: lstat only, never opening anything


def _canonical_grant(path: str, what: str, *, must_exist: bool) -> None:
    try:
        canonical, hops, kind, _ = walk_chain(path, allow_missing=True, what=what)
    except RootChainError as exc:
        raise LayoutError(exc.message, where=what) from None
    if hops:
        raise LayoutError(
            f"{what} {path} crosses symlink {hops[0].link}; name the real path {canonical}",
            where=what,
        )
    if must_exist and kind != "dir":
        raise LayoutError(f"{what} {path} is not an existing directory", where=what)
    if kind not in ("dir", "missing"):
        raise LayoutError(f"{what} {path} is not a directory", where=what)


def probe_host(layout: PlanLayout) -> HostFacts:
    """lstat the read-only paths; prove every granted directory is canonical (no symlink)."""
    _canonical_grant(layout.agent_home, "agent_home", must_exist=True)
    for i, ws in enumerate(layout.workspace_roots):
        _canonical_grant(ws, f"workspace_roots[{i}]", must_exist=True)
    _canonical_grant(layout.state_dir, "state_dir", must_exist=False)
    if layout.remote is not None:
        _canonical_grant(layout.remote.mirror_base, "remote.mirror_base", must_exist=False)
    system: list[SystemPath] = []
    for path in sorted(set(layout.readonly_paths)):
        try:
            canonical, hops, kind, _ = walk_chain(path, allow_missing=True, what="readonly_paths")
        except RootChainError as exc:
            raise LayoutError(exc.message, where="readonly_paths") from None
        if kind == "missing":
            system.append(SystemPath(path=path, kind="missing"))
        elif hops and hops[0].link == path:
            # A top-level link such as /bin -> usr/bin: recreated as a link, never bound onto.
            system.append(
                SystemPath(path=path, kind="link", link_value=hops[0].value, canonical=canonical)
            )
        elif hops:
            raise LayoutError(
                f"read-only path {path} crosses symlink {hops[0].link}; name the real path",
                where="readonly_paths",
            )
        elif kind in ("dir", "file"):
            system.append(SystemPath(path=path, kind=kind))  # type: ignore[arg-type]
        else:
            raise LayoutError(f"{path} is neither a directory nor a file", where="readonly_paths")
    hidden: list[SystemPath] = []
    for path in sorted(set(hidden_paths(layout))):
        try:
            st = os.lstat(path)
        except OSError:
            continue  # absent now: a mask, if one is needed, is an empty directory
        if stat.S_ISREG(st.st_mode):
            hidden.append(SystemPath(path=path, kind="file"))
    return HostFacts(system=tuple(system), hidden=tuple(hidden), launch_binaries=launch_binaries())


def launch_binaries() -> tuple[str, ...]:
    """The directories of what a launch runs, as installed here (canonical, existing): the
    pinned Codex's install (`codex_binary`) and the ACP adapters' (`.ci/tools.d/acp.sh`)."""
    found: list[str] = []
    binary = codex_binary()
    if binary is not None:
        install = cache_dir() / f"codex-{codex_version()}"
        where = install if is_within(str(binary), str(install)) else binary.parent
        found.append(os.path.realpath(where))
    found.append(os.path.realpath(cache_dir() / "acp"))
    return tuple(sorted({d for d in found if os.path.isdir(d)}))


def layout_toml(layout: PlanLayout) -> str:
    """The TOML text of a layout (what a daemon writes; `parse_layout` reads it back equal)."""
    import tomlkit

    doc = layout.model_dump(mode="json", exclude_defaults=True)
    return tomlkit.dumps(doc)
