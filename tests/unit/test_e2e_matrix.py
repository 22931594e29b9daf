"""The compatibility-matrix model, its schema and renderers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from profilec.compat_matrix import (
    RESULTS,
    excerpt,
    holding_methods,
    matrix_json,
    matrix_markdown,
    merge,
)
from profilec.models.compat import CompatibilityMatrix, MatrixRow

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "compat-matrix.schema.json").read_text()
)


def row(**kw: Any) -> MatrixRow:
    base: dict[str, Any] = {
        "adapter": "codex app-server",
        "adapter_version": "0.171.0",
        "codex_version": "0.171.0",
        "launch_method": "app-server -c",
        "session_event": "new",
        "result": "held",
        "evidence": "cat: Permission denied",
    }
    base.update(kw)
    return MatrixRow(**base)


rows_st = st.lists(
    st.builds(
        row,
        launch_method=st.sampled_from(["app-server -c", "codex-home", "thread config"]),
        session_event=st.sampled_from(
            ["new", "resumed", "mode-switched:agent", "legacy-sandboxPolicy"]
        ),
        result=st.sampled_from(RESULTS),
    ),
    max_size=12,
)


@settings(deadline=None)  # a property of the output, not of its speed (it timed out under load)
@given(rows_st)
def test_json_is_deterministic_whatever_the_row_order(rows: list[MatrixRow]) -> None:
    a = matrix_json(CompatibilityMatrix(rows=rows))
    b = matrix_json(CompatibilityMatrix(rows=list(reversed(rows))))
    assert a == b
    assert a.endswith("\n")
    doc = json.loads(a)
    jsonschema.validate(doc, SCHEMA)
    assert CompatibilityMatrix.model_validate(doc) == CompatibilityMatrix(
        rows=sorted(rows, key=lambda r: (*r.key(), r.result, r.evidence, r.lint or ""))
    )


def test_row_rejects_unknown_result_extra_keys_and_newlines() -> None:
    with pytest.raises(ValidationError):
        row(result="maybe")
    with pytest.raises(ValidationError):
        MatrixRow.model_validate({**row().model_dump(), "extra": 1})
    with pytest.raises(ValidationError):
        row(evidence="two\nlines")
    with pytest.raises(ValidationError):
        row(lint="X1")
    bad = {**row().model_dump(), "result": "maybe"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema_version": 1, "rows": [bad]}, SCHEMA)


def test_markdown_has_one_line_per_row_and_escapes_pipes() -> None:
    rows = [row(evidence="a|b"), row(session_event="resumed")]
    md = matrix_markdown(CompatibilityMatrix(rows=rows))
    lines = md.split("\n")
    assert lines[0].startswith("| adapter |")
    assert len([x for x in lines if x.startswith("| codex app-server")]) == 2
    assert "a\\|b" in md
    assert "**held**" in md


def test_merge_replaces_same_key_and_keeps_others() -> None:
    a = CompatibilityMatrix(rows=[row(result="error"), row(session_event="resumed")])
    b = CompatibilityMatrix(rows=[row(result="held")])
    merged = merge(a, b)
    assert sorted((r.session_event, r.result) for r in merged.rows) == [
        ("new", "held"),
        ("resumed", "held"),
    ]


def test_holding_methods_needs_every_event_held() -> None:
    m = CompatibilityMatrix(
        rows=[
            row(launch_method="a", session_event="new"),
            row(launch_method="a", session_event="legacy-sandboxPolicy", result="not-supported"),
            row(launch_method="b", session_event="new"),
            row(launch_method="b", session_event="resumed", result="lost"),
            row(launch_method="c", session_event="new", result="not-supported"),
            row(adapter="x", launch_method="d", result="error"),
        ]
    )
    assert holding_methods(m) == {"codex app-server": ["a"], "x": []}


def test_excerpt_removes_every_secret_and_stays_one_short_line() -> None:
    text = "line1 SECRET-1\nline2 SECRET-2 " + "x" * 1000
    out = excerpt(text, ["SECRET-1", "SECRET-2"], limit=80)
    assert "SECRET" not in out
    assert "<marker>" in out
    assert "\n" not in out and len(out) <= 80


def test_holding_methods_can_leave_out_launcher_side_events() -> None:
    m = CompatibilityMatrix(
        rows=[
            row(launch_method="a", session_event="new"),
            row(launch_method="a", session_event="legacy-sandboxPolicy:readOnly", result="lost"),
        ]
    )
    assert holding_methods(m) == {"codex app-server": []}
    assert holding_methods(m, skip_events=("legacy-sandboxPolicy",)) == {"codex app-server": ["a"]}


@given(st.text(), st.lists(st.text(min_size=1, max_size=8), max_size=3), st.integers(8, 200))
def test_excerpt_never_returns_a_secret(text: str, secrets: list[str], limit: int) -> None:
    try:
        out = excerpt(text, secrets, limit=limit)
    except ValueError:
        return  # fail closed: only when redaction itself composes a secret
    assert not any(s in out for s in secrets)
    assert "\n" not in out and "\r" not in out
    assert len(out) <= limit
