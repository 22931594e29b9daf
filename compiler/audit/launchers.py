"""The audit report's "Launchers (end-to-end)" section, from a `profilec e2e` matrix.

`load_e2e_matrix(path, inp)` reads `profilec e2e --format json` output through the run's edge
and validates it against schemas/compat-matrix.schema.json and the model (InputError, exit 2,
on any mismatch).
`launcher_section(matrix, catalog)` turns it into what the renderers show: every row (adapter x
version x launch method x session event -> held / lost / not-supported / error, lint, evidence)
in the matrix's own stable order, and per adapter build a summary: the launch methods that held
for every tested session event (`holding_methods`), those that held except in events only a
launcher's own request causes (a built-in mode, a legacy sandboxPolicy), what each other
method lost, and the method the reviewed catalog (profiles/adapters.toml) names, with a note when
this matrix contradicts it.
Evidence is shown as recorded (the matrix never holds the marker; `excerpt` saw to that); the
renderers escape every string.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ..compat_matrix import holding_methods, matrix_json, sorted_rows
from ..errors import InputError
from ..models.compat import CompatibilityMatrix
from ..resources import validator

if TYPE_CHECKING:
    from ..inputs import Inputs
    from ..models.compat import MatrixRow
    from ..models.launch import AdapterCatalog

#: What the report says when no matrix was given.
NOT_TESTED_E2E = (
    "not tested end-to-end (run `profilec e2e --out matrix.json` and pass --e2e-matrix)"
)
SCHEMA_FILE = "compat-matrix.schema.json"


@dataclass(frozen=True, slots=True)
class AdapterSummary:
    """One adapter build: which launch methods held everywhere, and why the others did not."""

    adapter: str
    adapter_version: str
    codex_version: str
    #: Methods with at least one `held` and nothing but held / not-supported.
    held_every_event: tuple[str, ...]
    #: (method, events to avoid): methods that held every event except launcher-chosen ones
    #: (a built-in mode switch, a legacy sandboxPolicy request) which lost the deny.
    held_unless: tuple[tuple[str, tuple[str, ...]], ...]
    #: (method, "lost: ev (PC023), ev; error: ev") for each tested method that did not.
    not_holding: tuple[tuple[str, str], ...]
    #: Methods this build cannot express at all (every row not-supported).
    not_supported: tuple[str, ...]
    #: The catalog's reviewed method ("none" when it says none holds); None: not in the catalog.
    reviewed: str | None
    reviewed_blocked_modes: tuple[str, ...]
    #: False when the reviewed method has no row in this matrix.
    reviewed_tested: bool
    #: When the matrix contradicts the reviewed method: what it shows instead; "" otherwise.
    contradiction: str


@dataclass(frozen=True, slots=True)
class LauncherSection:
    """The whole section."""

    digest: str  # sha256 of the canonical matrix JSON (what `profilec e2e` writes)
    rows: tuple[MatrixRow, ...]
    summaries: tuple[AdapterSummary, ...]


def load_e2e_matrix(path: str, inp: Inputs) -> CompatibilityMatrix:
    """A `profilec e2e --format json` document, validated on read (one InputError line)."""
    import jsonschema

    doc = inp.json_object(path, "e2e matrix")
    err = jsonschema.exceptions.best_match(validator(SCHEMA_FILE).iter_errors(doc))
    if err is not None:
        loc = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        message = " ".join(err.message.split())[:300]
        raise InputError(
            f"not a compatibility matrix (schemas/{SCHEMA_FILE}): {loc}: {message}", where=path
        )
    try:
        return CompatibilityMatrix.model_validate(doc)
    except ValidationError as exc:  # the schema and the model agree; belt and braces
        first = exc.errors()[0]
        loc = "/".join(str(p) for p in first["loc"]) or "(top level)"
        raise InputError(
            f"not a compatibility matrix (schemas/{SCHEMA_FILE}): {loc}: {first['msg']}",
            where=path,
        ) from None


PROFILE_MODE_PREFIX = "mode:permission-profile:"


def launcher_chosen(event: str) -> bool:
    """An event only a launcher's own request causes: a built-in mode or a legacy sandboxPolicy.

    Both are flagged by `profilec check` (PC023); a launcher that never sends them avoids them.
    """
    if event.startswith("legacy-"):
        return True
    return event.startswith("mode:") and not event.startswith(PROFILE_MODE_PREFIX)


def _failures(rows: list[MatrixRow], skip: frozenset[str] = frozenset()) -> str:
    """'lost: a (PC023), b; error: c' over rows not held (events in `skip` left out)."""
    parts: list[str] = []
    for result in ("lost", "error"):
        events = [
            r.session_event + (f" ({r.lint})" if r.lint else "")
            for r in rows
            if r.result == result and r.session_event not in skip
        ]
        if events:
            parts.append(f"{result}: {', '.join(events)}")
    return "; ".join(parts)


def _summary(
    key: tuple[str, str, str], rows: list[MatrixRow], catalog: AdapterCatalog | None
) -> AdapterSummary:
    ordered = sorted_rows(CompatibilityMatrix(rows=rows))
    held = tuple(holding_methods(CompatibilityMatrix(rows=ordered)).get(key[0], []))
    by_method: dict[str, list[MatrixRow]] = {}
    for r in ordered:
        by_method.setdefault(r.launch_method, []).append(r)
    not_holding: list[tuple[str, str]] = []
    unless: list[tuple[str, tuple[str, ...]]] = []
    unsupported: list[str] = []
    for method, mrows in sorted(by_method.items()):
        if method in held:
            continue
        if all(r.result == "not-supported" for r in mrows):
            unsupported.append(method)
            continue
        core = [r for r in mrows if not launcher_chosen(r.session_event)]
        chosen = [r for r in mrows if launcher_chosen(r.session_event)]
        if (
            any(r.result == "held" for r in core)
            and all(r.result in ("held", "not-supported") for r in core)
            and all(r.result != "error" for r in chosen)
        ):
            unless.append((method, tuple(r.session_event for r in chosen if r.result == "lost")))
            continue
        not_holding.append((method, _failures(mrows) or "nothing held"))
    reviewed: str | None = None
    blocked: tuple[str, ...] = ()
    contradiction = ""
    tested = False
    for entry in catalog.adapters if catalog is not None else []:
        if (entry.package, entry.version, entry.codex_version) != key:
            continue
        reviewed = entry.launch_method
        blocked = tuple(sorted(entry.blocked_modes))
        if entry.method is None:
            if held:
                contradiction = f"the catalog says no method holds, this matrix: {', '.join(held)}"
            break
        reviewed_rows = by_method.get(entry.method)
        if reviewed_rows is None:
            break
        tested = True
        skip = frozenset(f"mode:{m}" for m in blocked)
        bad = _failures(reviewed_rows, skip)
        if bad:
            contradiction = f"{entry.method} here: {bad}"
        elif not any(r.result == "held" for r in reviewed_rows):
            contradiction = f"{entry.method} held nothing here"
        break
    return AdapterSummary(
        adapter=key[0],
        adapter_version=key[1],
        codex_version=key[2],
        held_every_event=held,
        held_unless=tuple(unless),
        not_holding=tuple(not_holding),
        not_supported=tuple(unsupported),
        reviewed=reviewed,
        reviewed_blocked_modes=blocked,
        reviewed_tested=tested or reviewed == "none",
        contradiction=contradiction,
    )


def launcher_section(
    matrix: CompatibilityMatrix, catalog: AdapterCatalog | None
) -> LauncherSection:
    """Rows in the matrix's stable order, and one summary per adapter build."""
    ordered = sorted_rows(matrix)
    builds: dict[tuple[str, str, str], list[MatrixRow]] = {}
    for r in ordered:
        builds.setdefault((r.adapter, r.adapter_version, r.codex_version), []).append(r)
    return LauncherSection(
        digest="sha256:" + hashlib.sha256(matrix_json(matrix).encode("utf-8")).hexdigest(),
        rows=tuple(ordered),
        summaries=tuple(_summary(k, v, catalog) for k, v in sorted(builds.items())),
    )


def summary_text(s: AdapterSummary) -> tuple[str, str]:
    """(build name, the rest of its one summary line), both plain text for the renderers."""
    name = f"{s.adapter} {s.adapter_version} (codex {s.codex_version})"
    parts = [
        "Held for every session event: "
        + (", ".join(s.held_every_event) if s.held_every_event else "no launch method")
    ]
    if s.held_unless:
        parts.append(
            "Held unless the launcher switches to a built-in mode or sends a legacy sandboxPolicy: "
            + "; ".join(f"{m} (avoid {', '.join(ev)})" for m, ev in s.held_unless)
        )
    if s.not_holding:
        parts.append("Did not hold: " + "; ".join(f"{m} ({why})" for m, why in s.not_holding))
    if s.not_supported:
        parts.append("Not supported: " + ", ".join(s.not_supported))
    if s.reviewed is None:
        parts.append("Reviewed method: not in profiles/adapters.toml")
    elif s.reviewed == "none":
        parts.append("Reviewed method (profiles/adapters.toml): none holds")
    else:
        blocked = (
            f", with modes {', '.join(s.reviewed_blocked_modes)} not forwarded"
            if s.reviewed_blocked_modes
            else ""
        )
        untested = "" if s.reviewed_tested else " (not tested in this matrix)"
        parts.append(f"Reviewed method (profiles/adapters.toml): {s.reviewed}{blocked}{untested}")
    if s.contradiction:
        parts.append(f"THIS MATRIX DISAGREES: {s.contradiction}")
    return name, ". ".join(parts) + "."
