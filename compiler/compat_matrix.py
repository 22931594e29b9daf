"""The compatibility matrix: adapter x version x launch method x session event -> deny held or not.

Public API:

    row = MatrixRow(adapter="codex app-server", adapter_version="0.171.0", codex_version="0.171.0",
                    launch_method="app-server -c", session_event="new", result="held",
                    evidence="cat target: Permission denied; control read", lint=None)
    matrix = CompatibilityMatrix(rows=[row, ...])   # schema_version defaults to 1
    matrix_json(matrix)        # deterministic JSON text (rows sorted, keys sorted, "\\n"-ended)
    matrix_markdown(matrix)    # a markdown table, same order
    merge(a, b)                # one matrix from several (a later row with the same key replaces)
    holding_methods(matrix)    # {adapter: [launch methods whose every tested event held]}
    excerpt(text, secrets)     # a short, marker-free evidence excerpt (secrets -> "<marker>")

Results: `held` (the probe ran, the control file was read, the marker never reached the model),
`lost` (the marker reached the model), `not-supported` (the launcher cannot express this method or
event), `error` (the run could not decide, and a retry could not either: the probe did not run,
a timeout; the evidence says why and that it was retried). Evidence must never
hold the marker: build it with `excerpt`. `lint` names the `profilec check` rule that flags the
launcher pattern behind a `lost` row, when one does. The models are in compiler/models/compat.py;
the JSON Schema is schemas/compat-matrix.schema.json (python -m profilec.schemagen).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import get_args

from .models.compat import CompatibilityMatrix, MatrixRow, Result

RESULTS: tuple[str, ...] = get_args(Result)


#: Evidence longer than this is cut (with an ellipsis) by `excerpt`.
EVIDENCE_LIMIT = 500


def sorted_rows(matrix: CompatibilityMatrix) -> list[MatrixRow]:
    """Rows in the stable order every renderer uses."""
    return sorted(matrix.rows, key=lambda r: (*r.key(), r.result, r.evidence, r.lint or ""))


def matrix_json(matrix: CompatibilityMatrix) -> str:
    """Deterministic JSON: sorted rows, sorted keys, two-space indent, one final newline."""
    doc = {
        "schema_version": matrix.schema_version,
        "rows": [r.model_dump(mode="json") for r in sorted_rows(matrix)],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


#: The columns of a matrix table, one row per observation (the audit report adds "why").
MATRIX_COLUMNS = (
    "adapter",
    "adapter version",
    "codex",
    "launch method",
    "session event",
    "result",
    "lint",
    "evidence",
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|") if text else "-"


def matrix_markdown(matrix: CompatibilityMatrix) -> str:
    """A markdown table of the matrix, one row per observation."""
    head = MATRIX_COLUMNS
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sorted_rows(matrix):
        cells = [
            r.adapter,
            r.adapter_version,
            r.codex_version,
            r.launch_method,
            r.session_event,
            f"**{r.result}**",
            r.lint or "",
            r.evidence,
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def merge(*matrices: CompatibilityMatrix) -> CompatibilityMatrix:
    """One matrix holding every row; a later row with the same key replaces an earlier one."""
    rows: dict[tuple[str, str, str, str, str], MatrixRow] = {}
    for m in matrices:
        for r in m.rows:
            rows[r.key()] = r
    return CompatibilityMatrix(rows=list(rows.values()))


def holding_methods(
    matrix: CompatibilityMatrix, *, skip_events: tuple[str, ...] = ()
) -> dict[str, list[str]]:
    """Per adapter, the launch methods tested at least once with every tested event `held`.

    `not-supported` rows of a method don't count against it (an event it cannot express); any
    `lost` or `error` row does. Adapters with no holding method map to an empty list. Rows whose
    session_event starts with one of `skip_events` are left out (e.g. "legacy-":
    for the bare app-server that is the launcher's own request, which PC023 flags, not a
    property of the launch method).
    """
    seen: dict[str, dict[str, list[str]]] = {}
    for r in matrix.rows:
        if skip_events and r.session_event.startswith(skip_events):
            continue
        seen.setdefault(r.adapter, {}).setdefault(r.launch_method, []).append(r.result)
    out: dict[str, list[str]] = {}
    for adapter, methods in sorted(seen.items()):
        out[adapter] = sorted(
            m
            for m, results in methods.items()
            if "held" in results and all(x in ("held", "not-supported") for x in results)
        )
    return out


def excerpt(text: str, secrets: Iterable[str], limit: int = EVIDENCE_LIMIT) -> str:
    """A one-line evidence excerpt with every secret replaced by `<marker>`, cut to `limit`."""

    def redact(value: str) -> str:
        for s in secrets:
            if s:
                value = value.replace(s, "<marker>")
        return value

    # Redact before and after folding whitespace: folding could join a secret back together.
    out = redact(" ".join(redact(text).split()))
    if len(out) > limit:
        out = out[: max(0, limit - 3)] + "..."
    if any(s and s in out for s in secrets):
        # Only when redaction itself composes a secret (e.g. a secret containing "<marker>").
        raise ValueError("evidence still holds a secret after redaction")
    return out


def rows_from(rows: Iterable[MatrixRow]) -> CompatibilityMatrix:
    """A matrix from rows (convenience for drivers that yield rows)."""
    return CompatibilityMatrix(rows=list(rows))
