"""Run the whole end-to-end matrix: ACP adapter rows (here) plus app-server rows (appserver.py).

`acp_rows` runs every adapter x launch method (`acp.run_adapter_method`), two at a time; an
adapter that cannot run here, or a method it has no knob for, becomes `not-supported` rows with
the reason. A method with an undecided (`error`) cell is run once more before its cells are
final (`acp.merge_retry`); the progress line marks the cells the retry decided or left `error`.
`run_matrix` merges them with the app-server rows when `profilec.e2e.appserver` exposes
`run_appserver_rows`. `adapter_verdicts` reads the matrix the way profiles/adapters.toml
records it: per adapter, which launch methods keep the deny for a new session, a loaded and a
resumed one and every `permission-profile:*` mode, and which built-in modes lose it (modes a
launcher must not forward).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..compat_matrix import excerpt, merge, rows_from
from ..models.compat import CompatibilityMatrix, MatrixRow
from ..models.launch import AdapterCatalog
from ..rule_ids import LEGACY_SANDBOX_REQUEST, PROFILE_ONLY_IN_SESSION_CONFIG
from ..settings import codex_binary
from . import appserver
from .acp import Observation, run_adapter_method
from .adapters import (
    METHOD_CODEX_CONFIG,
    METHOD_NONE,
    METHODS,
    TS_PACKAGE,
    Adapter,
    all_adapters,
    ts_adapter,
)
from .agentconfig import run_agent_config_rows, ts_agent_config_rows
from .approvals import appserver_approval_rows, ts_approval_rows

PROFILE_MODE_PREFIX = "mode:permission-profile:"

Progress = Callable[[str], None]


#: `profilec check` rules that flag the launcher pattern behind a lost ACP cell.
LINT_SESSION_ONLY = PROFILE_ONLY_IN_SESSION_CONFIG  # profiles only in CODEX_CONFIG (thread config)
LINT_LEGACY_SANDBOX = LEGACY_SANDBOX_REQUEST  # a mode that sends a legacy sandboxPolicy


def lint_for(r: MatrixRow) -> str | None:
    """The check rule naming why a TS-adapter cell was lost, when one does (None otherwise).

    zed's loss (a sandbox that keeps capabilities as root) is no config pattern a lint can see.
    """
    if r.result != "lost" or r.adapter != TS_PACKAGE:
        return None
    if _is_builtin_mode(r.session_event):
        return LINT_LEGACY_SANDBOX
    if r.launch_method == METHOD_CODEX_CONFIG:
        return LINT_SESSION_ONLY
    return None


def _row(o: Observation) -> MatrixRow:
    return o.row.model_copy(update={"lint": lint_for(o.row)})


def _unsupported(adapter: Adapter, method: str, reason: str) -> MatrixRow:
    return MatrixRow(
        adapter=adapter.name,
        adapter_version=adapter.version,
        codex_version=adapter.codex_version,
        launch_method=method,
        session_event="new",
        result="not-supported",
        evidence=excerpt(reason, []),
    )


def matrix_adapters(*, bundled_codex: bool = True) -> tuple[Adapter, ...]:
    """The adapters the matrix covers: the TS one with the pinned codex (and, when
    `bundled_codex`, with the codex its npm package depends on), and zed's."""
    found = list(all_adapters())
    if bundled_codex:
        found.insert(1, ts_adapter(bundled_codex=True))
    return tuple(found)


def acp_rows(
    adapters: Sequence[Adapter] | None = None,
    methods: Sequence[str] | None = None,
    *,
    workers: int = 2,
    progress: Progress | None = None,
) -> list[MatrixRow]:
    """Every adapter x method, as matrix rows (not-supported where it cannot run)."""
    chosen = tuple(adapters) if adapters is not None else matrix_adapters()
    rows: list[MatrixRow] = []
    jobs: list[tuple[Adapter, str]] = []
    for ad in chosen:
        wanted = (
            tuple(methods)
            if methods is not None
            else tuple(dict.fromkeys((*METHODS, *ad.methods())))
        )
        for method in wanted:
            if ad.missing is not None:
                rows.append(_unsupported(ad, method, f"adapter cannot run here: {ad.missing}"))
                continue
            reason = ad.unsupported_reason(method)
            if reason is not None:
                rows.append(_unsupported(ad, method, reason))
                continue
            jobs.append((ad, method))

    def one(job: tuple[Adapter, str]) -> list[Observation]:
        ad, method = job
        t0 = time.monotonic()
        out = run_adapter_method(ad, method)
        if progress is not None:
            summary = ", ".join(
                f"{o.row.session_event}={o.row.result}{' (retried)' if o.retried else ''}"
                for o in out
            )
            progress(
                f"{ad.name} {ad.version} (codex {ad.codex_version}) {method}: "
                f"{time.monotonic() - t0:.1f}s {summary}"
            )
        return out

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for observations in pool.map(one, jobs):
            rows.extend(_row(o) for o in observations)
    return rows


def appserver_rows(progress: Progress | None = None) -> list[MatrixRow]:
    """The app-server helper's rows (pinned codex), then the agent-config rows."""
    rows = list(appserver.run_appserver_rows())
    rows += run_agent_config_rows()
    if progress is not None:
        progress(f"codex app-server: {len(rows)} rows")
    return rows


def run_matrix(
    *,
    include_appserver: bool = True,
    include_acp: bool = True,
    progress: Progress | None = None,
) -> CompatibilityMatrix:
    """The whole matrix."""
    parts: list[CompatibilityMatrix] = []
    if include_appserver:
        parts.append(rows_from(appserver_rows(progress)))
    if include_acp:
        parts.append(rows_from(acp_rows(progress=progress)))
    parts.append(
        rows_from(
            approval_rows(
                include_appserver=include_appserver, include_acp=include_acp, progress=progress
            )
        )
    )
    return merge(*parts)


def approval_rows(
    *, include_appserver: bool = True, include_acp: bool = True, progress: Progress | None = None
) -> list[MatrixRow]:
    """Per mode, whether the approval behaviour of profiles/modes.toml holds (approvals.py),
    and the TS adapter's agent-config rows (agentconfig.py)."""
    rows: list[MatrixRow] = []
    codex = codex_binary()
    if include_appserver and codex is not None and codex.is_file():
        rows += appserver_approval_rows(codex)
    if include_acp:
        rows += ts_approval_rows()
        rows += ts_approval_rows(bundled_codex=True)
        if not ts_adapter().missing:
            rows += ts_agent_config_rows()
    if progress is not None:
        progress(f"approvals: {len(rows)} rows")
    return rows


@dataclass(frozen=True)
class AdapterVerdict:
    """What the matrix shows for one adapter build (package, version, codex core)."""

    adapter: str
    adapter_version: str
    codex_version: str
    holding: tuple[str, ...]  # methods that hold (given the blocked modes are not forwarded)
    blocked_modes: dict[str, tuple[str, ...]]  # per holding method: built-in modes that lose it
    failing: dict[str, str]  # per tested, non-holding method: the first failing event and result
    unsupported: tuple[str, ...]


def _is_builtin_mode(event: str) -> bool:
    return event.startswith("mode:") and not event.startswith(PROFILE_MODE_PREFIX)


def adapter_verdicts(matrix: CompatibilityMatrix | Iterable[MatrixRow]) -> list[AdapterVerdict]:
    """Per adapter build: holding methods, the modes each one must block, why others fail.

    A method holds when it has a `held` new session, every core event (new, loaded, resumed) and
    every `permission-profile:*` mode held or is not-supported, and any other (built-in) mode
    either held or was lost: a lost built-in mode is a mode the launcher must not forward. Any
    `error` makes the method undecided, hence not holding. The `none` control never holds.
    """
    rows = matrix.rows if isinstance(matrix, CompatibilityMatrix) else list(matrix)
    groups: dict[tuple[str, str, str], dict[str, list[MatrixRow]]] = {}
    for r in rows:
        key = (r.adapter, r.adapter_version, r.codex_version)
        groups.setdefault(key, {}).setdefault(r.launch_method, []).append(r)
    out: list[AdapterVerdict] = []
    for key in sorted(groups):
        holding: list[str] = []
        blocked: dict[str, tuple[str, ...]] = {}
        failing: dict[str, str] = {}
        unsupported: list[str] = []
        for method, mrows in sorted(groups[key].items()):
            results = {r.session_event: r.result for r in mrows}
            if all(v == "not-supported" for v in results.values()):
                unsupported.append(method)
                continue
            bad = [
                f"{e}={v}"
                for e, v in sorted(results.items())
                if v == "error" or (not _is_builtin_mode(e) and v not in ("held", "not-supported"))
            ]
            if results.get("new") != "held" and not bad:
                bad.append(f"new={results.get('new', 'missing')}")
            if method == METHOD_NONE or bad:
                failing[method] = ", ".join(bad) if bad else "control: no profile"
                continue
            holding.append(method)
            blocked[method] = tuple(
                sorted(
                    e[len("mode:") :]
                    for e, v in results.items()
                    if _is_builtin_mode(e) and v == "lost"
                )
            )
        out.append(AdapterVerdict(*key, tuple(holding), blocked, failing, tuple(unsupported)))
    return out


def catalog_disagreements(verdicts: Sequence[AdapterVerdict], catalog: AdapterCatalog) -> list[str]:
    """Every way the reviewed catalog differs from what the matrix observed (empty: agrees)."""
    problems: list[str] = []
    by_key = {(v.adapter, v.adapter_version, v.codex_version): v for v in verdicts}
    listed = set()
    for entry in catalog.adapters:
        key = (entry.package, entry.version, entry.codex_version)
        listed.add(key)
        name = f"{entry.package} {entry.version} (codex {entry.codex_version})"
        v = by_key.get(key)
        if v is None:
            problems.append(f"{name}: in the catalog but not observed by this run")
            continue
        if sorted(entry.holding_methods) != sorted(v.holding):
            problems.append(
                f"{name}: catalog holding_methods {sorted(entry.holding_methods)} but observed "
                f"{sorted(v.holding)} (failing: {v.failing})"
            )
        method = entry.method
        if method is None:
            continue
        if method not in v.holding:
            problems.append(f"{name}: launch_method {method} did not hold ({v.failing})")
            continue
        if sorted(entry.blocked_modes) != sorted(v.blocked_modes.get(method, ())):
            problems.append(
                f"{name}: catalog blocked_modes {sorted(entry.blocked_modes)} but under {method} "
                f"these modes lost the deny: {sorted(v.blocked_modes.get(method, ()))}"
            )
    for key, v in sorted(by_key.items()):
        if key not in listed and key[0].startswith("@"):
            problems.append(
                f"{v.adapter} {v.adapter_version} (codex {v.codex_version}): observed but not in "
                f"the catalog (holding: {list(v.holding)})"
            )
    return problems
