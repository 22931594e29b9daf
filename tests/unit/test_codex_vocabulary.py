"""Codex's vocabulary is written once (compiler/codex/vocabulary.py): no module keeps its own
copy."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from profilec.codex import vocabulary as codex
from profilec.errors import PolicyError
from profilec.models.compiled import CompiledProfile
from profilec.models.policy import ModeProfilePolicy
from profilec.policy import _check_key

ROOT = Path(__file__).resolve().parents[2]
VOCAB = frozenset(
    {
        *codex.SPECIALS,
        *codex.BUILTIN_PROFILES,
        *codex.SESSION_FORBIDDEN_KEYS,
        *codex.CARVE_OUTS,
    }
)
#: compiler/lite.py is being deleted by another change; it only re-spells model field types.
EXEMPT = {"vocabulary.py"}


def _collections(tree: ast.AST) -> list[tuple[int, set[str]]]:
    """Every tuple/list/set literal of two or more strings, with its line.

    `Literal[...]` types are left out: a type must spell its values, and a test below holds the
    model's Literal to the vocabulary.
    """
    typed = {
        id(n.slice)
        for n in ast.walk(tree)
        if isinstance(n, ast.Subscript)
        and isinstance(n.value, ast.Name)
        and n.value.id == "Literal"
    }
    out: list[tuple[int, set[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and id(node) not in typed:
            items = {
                e.value
                for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            }
            if len(items) >= 2:
                out.append((node.lineno, items))
    return out


def test_no_module_repeats_a_vocabulary_list() -> None:
    repeats = []
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        if path.name in EXEMPT:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, items in _collections(tree):
            if len(items & VOCAB) >= 2:
                repeats.append(f"{path.relative_to(ROOT)}:{line}: {sorted(items & VOCAB)}")
    assert repeats == [], "import these from profilec.codex.vocabulary instead"


def test_the_repetition_check_sees_a_copy() -> None:
    copy = 'KNOWN_SPECIALS = (":root", ":minimal", ":tmpdir")\n'
    assert any(len(i & VOCAB) >= 2 for _, i in _collections(ast.parse(copy)))


@pytest.mark.parametrize("model", [ModeProfilePolicy, CompiledProfile])
def test_extends_names_exactly_the_extensible_builtins(model: type) -> None:
    hint = typing.get_type_hints(model)["extends"]
    literal = next(a for a in typing.get_args(hint) if a is not type(None))
    assert typing.get_args(literal) == codex.EXTENSIBLE_BUILTINS


@pytest.mark.parametrize("key", sorted(codex.SPECIALS - set(codex.SPECIAL_ALIASES)))
def test_policy_accepts_every_current_special(key: str) -> None:
    _check_key(key, "read", "p.toml")


def test_policy_names_the_current_spelling_of_a_legacy_special() -> None:
    with pytest.raises(PolicyError, match=":workspace_roots"):
        _check_key(":project_roots", "write", "p.toml")
    with pytest.raises(PolicyError, match="unknown special"):
        _check_key(":bogus", "read", "p.toml")


def test_version_ranges_parse() -> None:
    for spec in (
        codex.MEASURED_RANGE,
        codex.PROFILES_RANGE,
        codex.EXTENDS_RANGE,
        codex.NESTED_WORKSPACE_ROOTS_RANGE,
    ):
        codex.in_range(codex.DEFAULT_CODEX_VERSION, spec)
    assert codex.in_range(codex.ENFORCEMENT_VERSION, codex.MEASURED_RANGE)
