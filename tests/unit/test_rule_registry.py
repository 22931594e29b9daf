"""The lint rule registry is the one source of rule metadata (compiler/check/rules.py).

docs/check.md's catalogue, the report's rule table and every rule id the code emits must agree
with it: a rule missing from the docs, a documented rule that does not exist, or a finding under
an undeclared id fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from profilec import rule_ids
from profilec.check.rules import DOCS_PAGE, all_rules, catalogue_markdown, rule, rule_by_id
from profilec.models.check import Rule

ROOT = Path(__file__).resolve().parents[2]
HEADER = "| id | name | severity | waivable | Codex versions | message | why | fix |"


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


def _id_references(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The rule ids a module declares (`rule(CONST, ...)`) and the ones it emits.

    An id is named through `profilec.rule_ids`: a name imported from it (`from ..rule_ids import
    X [as Y]`) or an attribute of the module (`rule_ids.X`); tests/unit/test_vocabulary_homes.py
    bans typing "PCnnn", so these are all the references there are. The first argument of a
    `rule(...)` call is the declaration; a name bound to a declaration's result
    (`WAIVER_RULE = rule_by_id(rule(...))`) and used later is a use of that id.
    """
    local_to_id = {
        alias.asname or alias.name: getattr(rule_ids, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("rule_ids")
        for alias in node.names
    }

    def rid_of(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return local_to_id.get(node.id)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "rule_ids"
        ):
            return getattr(rule_ids, node.attr, None)
        return None

    declarations = {
        id(node.args[0]): node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "rule"
        and node.args
    }
    bound: dict[str, str] = {}  # a module name holding a declaration's result -> its id
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        for inner in ast.walk(node.value):
            if isinstance(inner, ast.Call) and inner.args and id(inner.args[0]) in declarations:
                rid = rid_of(inner.args[0])
                if rid is not None and isinstance(target, ast.Name):
                    bound[target.id] = rid
    declared: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        rid = rid_of(node)
        if rid is not None:
            (declared if id(node) in declarations else used).add(rid)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in bound:
            used.add(bound[node.id])
    return declared, used


def test_every_emitted_rule_id_is_declared_and_every_rule_is_emitted() -> None:
    registered = {r.id for r in all_rules()}
    declared: set[str] = set()
    used: set[str] = set()
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        if path.name == "rule_ids.py":
            continue
        d, u = _id_references(ast.parse(path.read_text(encoding="utf-8")))
        declared |= d
        used |= u
    assert declared == registered, "a rule declared without its rule_ids constant"
    assert used - registered == set(), "finding ids with no registry entry"
    assert registered - used == set(), "registry entries no code emits"


def test_the_reference_scan_tells_a_declaration_from_a_use() -> None:
    source = (
        "from ..rule_ids import CANARY_FAILED, WAIVER_EXPIRED as W\n"
        "RULE = rule(CANARY_FAILED, 'n', 'error', 'm', 'w', 'f')\n"
        "def f(o):\n"
        "    o.add(W, 'expired')\n"
    )
    declared, used = _id_references(ast.parse(source))
    assert declared == {rule_ids.CANARY_FAILED}
    assert used == {rule_ids.WAIVER_EXPIRED}
    # the declaration's result used later is a use of the id it declared
    declared, used = _id_references(ast.parse(source + "def g(o):\n    o.add(RULE, 'x')\n"))
    assert used == {rule_ids.WAIVER_EXPIRED, rule_ids.CANARY_FAILED}
