"""The lint rule registry is the one source of rule metadata (compiler/check/rules.py).

docs/check.md's catalogue, the report's rule table and every rule id the code emits must agree
with it: a rule missing from the docs, a documented rule that does not exist, or a finding under
an undeclared id fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from profilec.check.result import Rule
from profilec.check.rules import DOCS_PAGE, all_rules, catalogue_markdown, rule, rule_by_id

ROOT = Path(__file__).resolve().parents[2]
HEADER = "| id | name | severity | Codex versions | message | why | fix |"


def _doc_table(text: str) -> str:
    lines = text.split("\n")
    start = lines.index(HEADER)
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[start:end]) + "\n"


def test_docs_catalogue_is_the_registry() -> None:
    doc = (ROOT / DOCS_PAGE).read_text(encoding="utf-8")
    assert _doc_table(doc) == catalogue_markdown(), (
        "docs/check.md's lint catalogue differs from the registry; regenerate it with "
        "`python3 -c 'from profilec.check.rules import main; main()'`"
    )


def test_a_rule_missing_from_the_docs_is_caught() -> None:
    rules = all_rules()
    doc = catalogue_markdown(rules[:-1])  # the docs lack the last rule
    assert doc != catalogue_markdown()
    extra = Rule.model_validate(
        {**rules[0].model_dump(), "id": "PC999", "doc_anchor": "docs/check.md#pc999"}
    )
    assert catalogue_markdown((*rules, extra)) != catalogue_markdown()


def test_every_rule_has_its_anchor_and_severity() -> None:
    doc = (ROOT / DOCS_PAGE).read_text(encoding="utf-8")
    for r in all_rules():
        assert r.doc_anchor == f"{DOCS_PAGE}#{r.id.lower()}"
        assert f'<a id="{r.id.lower()}"></a>' in doc
        assert r.severity in ("note", "warning", "error")
        assert rule_by_id(r.id) is r


def test_a_rule_cannot_be_declared_twice() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        rule("PC000", "x", "error", "m", "w", "f")


_ID = re.compile(r"""["'](PC\d{3})["']""")


def test_every_emitted_rule_id_is_declared_and_every_rule_is_emitted() -> None:
    declared = {r.id for r in all_rules()}
    used: set[str] = set()
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for m in _ID.finditer(text):
            # `rule("PC0xx", ...)` is the declaration; everything else is a use.
            if not text[max(0, m.start() - 12) : m.start()].rstrip().endswith("rule("):
                used.add(m.group(1))
    assert used - declared == set(), "finding ids with no registry entry"
    assert declared - used == set(), "registry entries no code emits"
