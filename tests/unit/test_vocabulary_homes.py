"""Rule ids and Codex's words each have one home, and the package spells them nowhere else.

A lint rule's id ("PCnnn") lives in compiler/rule_ids.py; Codex's specials, built-in profiles,
writer's lock, approval policies, legacy sandbox modes and trust levels live in
compiler/codex/vocabulary.py. Every other module of compiler/ (the differential tester and the
prompt-input oracle aside: they are leaving the package) imports the constant. The scan reads
the AST, so comments and docstrings may name an id or a word; a `Literal[...]` type must spell
its values and is held to codex/vocabulary.py by a test here instead.

Words with a second meaning ("never" is also `--color never`, "read-only" an ACP mode,
"danger-full-access" a rule's name) count only where Codex reads them: as the value of an
approval, sandbox or trust key, or compared with one.
"""

from __future__ import annotations

import ast
import re
import typing
from collections.abc import Iterator
from pathlib import Path

from profilec import rule_ids
from profilec.check.rules import all_rules
from profilec.codex import vocabulary as codex
from profilec.models.policy import ApprovalPolicy

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "compiler"
#: Leaving the package (another change moves them out); not scanned.
LEAVING = ("difftest", "codex_oracle.py")

RULE_ID = re.compile(r"PC\d{3}")
#: Codex words with no other meaning in the package: banned outside codex/vocabulary.py wherever
#: they occur.
CODEX_ONLY = frozenset(
    {
        *codex.SPECIALS,
        *codex.BUILTIN_PROFILES,
        codex.WRITER_LOCK,
        codex.APPROVAL_ON_FAILURE,
        codex.APPROVAL_ON_REQUEST,
        codex.SANDBOX_POLICY_READ_ONLY,
        codex.SANDBOX_POLICY_WORKSPACE_WRITE,
        codex.SANDBOX_POLICY_DANGER_FULL_ACCESS,
        codex.SANDBOX_POLICY_EXTERNAL,
    }
)
#: Codex words that also mean something else: banned where Codex reads them (see `_codex_use`).
CONTEXTUAL = frozenset(
    {
        codex.APPROVAL_UNTRUSTED,
        codex.APPROVAL_NEVER,
        *codex.SANDBOX_MODES,
        codex.TRUST_TRUSTED,
        codex.TRUST_UNTRUSTED,
    }
)
#: The config keys and request fields whose values are those words.
CODEX_KEYS = frozenset(
    {"approval_policy", "approvalPolicy", "sandbox", "sandbox_mode", "trust_level"}
)
#: A variable compared with one of those words holds a Codex value when its name says so.
CODEX_NAME_PARTS = ("policy", "sandbox", "trust")


def _key_of(node: ast.AST) -> str | None:
    """The Codex key a `.get(KEY)` call or a `[KEY]` subscript reads, if it reads one."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
    ):
        node = node.args[0]
    elif isinstance(node, ast.Subscript):
        node = node.slice
    else:
        return None
    if isinstance(node, ast.Constant) and node.value in CODEX_KEYS:
        return str(node.value)
    return None


def _holds_codex_value(node: ast.AST) -> bool:
    if _key_of(node) is not None:
        return True
    name = (
        node.id
        if isinstance(node, ast.Name)
        else node.attr
        if isinstance(node, ast.Attribute)
        else ""
    )
    return any(part in name.lower() for part in CODEX_NAME_PARTS)


def _codex_use(tree: ast.AST) -> set[int]:
    """ids of the string constants in a place where Codex reads them: a Codex key's value in a
    dict or keyword, the default of `.get(KEY, ...)`, or a side of a comparison with a Codex
    value."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if isinstance(k, ast.Constant) and k.value in CODEX_KEYS:
                    out.add(id(v))
        elif isinstance(node, ast.keyword) and node.arg in CODEX_KEYS:
            out.add(id(node.value))
        elif isinstance(node, ast.Call) and _key_of(node) is not None and len(node.args) > 1:
            out.add(id(node.args[1]))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_holds_codex_value(s) for s in sides):
                out |= {id(s) for s in sides}
    return out


def _exempt(tree: ast.AST) -> set[int]:
    """ids of docstrings (string expression statements) and of everything inside `Literal[...]`."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            out.add(id(node.value))
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Literal"
        ):
            out |= {id(n) for n in ast.walk(node.slice)}
    return out


def misplaced(source: str, *, ids_home: bool = False, codex_home: bool = False) -> list[str]:
    """`line: 'literal'` for every rule id or Codex word the source spells outside its home."""
    tree = ast.parse(source)
    exempt = _exempt(tree)
    in_context = _codex_use(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if id(node) in exempt:
            continue
        text = node.value
        is_id = not ids_home and RULE_ID.fullmatch(text) is not None
        is_word = not codex_home and (
            text in CODEX_ONLY or (text in CONTEXTUAL and id(node) in in_context)
        )
        if is_id or is_word:
            found.append(f"{node.lineno}: {text!r}")
    return sorted(found)


def _modules() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] not in LEAVING:
            yield path


def test_the_package_spells_no_rule_id_or_codex_word_outside_its_home() -> None:
    found = []
    scanned = 0
    for path in _modules():
        scanned += 1
        rel = path.relative_to(PACKAGE)
        for hit in misplaced(
            path.read_text(encoding="utf-8"),
            ids_home=rel == Path("rule_ids.py"),
            codex_home=rel == Path("codex/vocabulary.py"),
        ):
            found.append(f"compiler/{rel}:{hit}")
    assert scanned > 50, "the scan found too few modules to mean anything"
    assert found == [], "import the constant from profilec.rule_ids / profilec.codex.vocabulary"


def test_the_homes_themselves_hold_what_the_scan_bans() -> None:
    # Without the exemptions the homes are full of hits: the scan looks at the right strings.
    ids_home = (PACKAGE / "rule_ids.py").read_text(encoding="utf-8")
    codex_home = (PACKAGE / "codex" / "vocabulary.py").read_text(encoding="utf-8")
    assert len(misplaced(ids_home)) == len(all_rules())
    assert {h.split(": ", 1)[1] for h in misplaced(codex_home)} >= {
        repr(codex.SPECIAL_ROOT),
        repr(codex.WRITER_LOCK),
        repr(codex.APPROVAL_ON_REQUEST),
        repr(codex.SANDBOX_POLICY_EXTERNAL),
    }


PLANTED = '''\
"""A module docstring may say PC031 and ":root"."""
from typing import Literal

Policy = Literal["never", "on-request"]


def f(o, cfg, policy):
    """So may a function's: "auth.lock"."""
    o.add("PC031", "write entry on a file")
    table = {":root": "read"}
    lock = cfg.home + "/auth.lock"
    params = {"cwd": "/w", "approvalPolicy": "never", "sandbox": "read-only"}
    start(sandbox="workspace-write")
    if policy == "untrusted" or cfg.get("trust_level") != "trusted":
        pass
    chosen = cfg.get("approval_policy", "on-failure")
    argv = ["codex", "--color", "never"]
    mode = "read-only"
    return table, lock, params, chosen, argv, mode
'''


def test_the_scan_reports_planted_literals_and_only_those() -> None:
    assert misplaced(PLANTED) == sorted(
        [
            "9: 'PC031'",
            "10: ':root'",
            "12: 'never'",
            "12: 'read-only'",
            "13: 'workspace-write'",
            "14: 'trusted'",
            "14: 'untrusted'",
            "16: 'on-failure'",
        ]
    )
    # "/auth.lock" is a path, not the name; "--color never" and an ACP mode "read-only" are not
    # Codex's words; docstrings and the Literal type are left alone.
    assert misplaced(PLANTED, ids_home=True, codex_home=True) == []
    assert misplaced(PLANTED, codex_home=True) == ["9: 'PC031'"]


def _id_constants() -> dict[str, str]:
    return {
        k: v
        for k, v in vars(rule_ids).items()
        if k.isupper() and isinstance(v, str) and k[0] != "_"
    }


def test_every_rule_has_exactly_one_constant_named_after_it() -> None:
    constants = _id_constants()
    by_id: dict[str, list[str]] = {}
    for name, rid in constants.items():
        by_id.setdefault(rid, []).append(name)
    registered = {r.id: r for r in all_rules()}
    assert set(by_id) - set(registered) == set(), "a constant for an id the registry lacks"
    assert set(registered) - set(by_id) == set(), "a registered rule with no constant"
    assert {rid: names for rid, names in by_id.items() if len(names) > 1} == {}
    for rid, (name,) in by_id.items():
        assert name == registered[rid].name.upper().replace("-", "_"), rid


def test_the_approval_policy_type_names_exactly_codex_policies() -> None:
    assert typing.get_args(ApprovalPolicy) == codex.APPROVAL_POLICIES
