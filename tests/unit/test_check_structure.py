"""compiler/check/'s lints are found by family, and a rule id is named by one module.

(Import circles, type-level included, are lint-imports' job: `exclude_type_checking_imports =
false` in pyproject.toml; tests/unit/test_layers.py puts a TYPE_CHECKING circle back in a copy
of the tree and sees the contract break.)
"""

from __future__ import annotations

import pkgutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


#: Prints every module of profilec.check on a circle of imports among them (TYPE_CHECKING
#: imports included), one per line; nothing when there is none.
def test_every_lint_module_is_a_family_and_every_lint_is_registered() -> None:
    from profilec.check import context, lints

    names = lints.families()
    on_disk = sorted(p.stem for p in (REPO / "compiler" / "check" / "lints").glob("*.py"))
    assert [n.rsplit(".", 1)[1] for n in names] == [n for n in on_disk if n != "__init__"]
    assert names == tuple(
        f"profilec.check.lints.{m.name}" for m in pkgutil.iter_modules(lints.__path__)
    )
    # Every `@lint` in the sources is run (registered under its family, found by the walk).
    declared = sum(
        p.read_text(encoding="utf-8").count("\n@lint\n")
        for p in (REPO / "compiler" / "check" / "lints").glob("*.py")
    )
    assert declared >= 10
    assert sum(len(context.lints_of(n)) for n in names) == declared


def _foreign_ids(source: str) -> set[str]:
    """The rule-id constants `source` uses without declaring them with `rule(...)`."""
    import ast

    import profilec.rule_ids as ids

    known = {k for k in dir(ids) if k.isupper()}
    tree = ast.parse(source)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in known}
    declared = {
        c.args[0].id
        for c in ast.walk(tree)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Name)
        and c.func.id == "rule"
        and c.args
        and isinstance(c.args[0], ast.Name)
    }
    return used - declared


def test_a_rule_id_is_named_by_the_one_check_module_that_declares_it() -> None:
    """So a lint's findings keep one order whatever its family is called, and a rule is found
    in one file."""
    for path in sorted((REPO / "compiler" / "check").rglob("*.py")):
        assert _foreign_ids(path.read_text(encoding="utf-8")) == set(), path
    # Negative control: a lint firing a rule another family declares is caught.
    planted = "rule(DENY_ON_SYMLINK, 'x')\ndef f(o):\n    o.add(TRUSTED_BASE_WRITABLE, 'm')\n"
    assert _foreign_ids(planted) == {"TRUSTED_BASE_WRITABLE"}
