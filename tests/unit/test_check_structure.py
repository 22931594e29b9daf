"""compiler/check/ has no import circle, type-level included, and its lints are found by family.

lint-imports (pyproject.toml) leaves `if TYPE_CHECKING:` imports out of its graph; inside
compiler/check/ they count too (issue 34: the private lint collector its siblings imported under
TYPE_CHECKING was such a circle). The negative control puts one back in a copy of the tree.
"""

from __future__ import annotations

import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Prints every module of profilec.check on a circle of imports among them (TYPE_CHECKING
#: imports included), one per line; nothing when there is none.
_CYCLES = """
import grimp
graph = grimp.build_graph("profilec", exclude_type_checking_imports=False, cache_dir=None)
mods = sorted(m for m in graph.modules if m == "profilec.check" or m.startswith("profilec.check."))
edges = {m: {t for t in graph.find_modules_directly_imported_by(m) if t in mods} for m in mods}
def reaches(a, b):
    seen, todo = set(), [a]
    while todo:
        cur = todo.pop()
        for nxt in edges[cur]:
            if nxt == b:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False
for m in mods:
    if reaches(m, m):
        print(m)
"""


def _cycles(root: Path) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _CYCLES],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": str(root)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [line for line in proc.stdout.split("\n") if line]


def test_no_import_circle_in_check_type_level_included(tmp_path: Path) -> None:
    assert _cycles(REPO) == []
    # Negative control: a TYPE_CHECKING import of the checker from the lint context closes a
    # circle (checker -> lints -> context -> checker) that lint-imports would not see.
    root = tmp_path / "copy"
    shutil.copytree(
        REPO / "compiler", root / "compiler", ignore=shutil.ignore_patterns("__pycache__", "data")
    )
    (root / "profilec").symlink_to("compiler")
    ctx = root / "compiler" / "check" / "context.py"
    text = ctx.read_text(encoding="utf-8")
    anchor = "if TYPE_CHECKING:\n"
    assert anchor in text
    ctx.write_text(text.replace(anchor, anchor + "    from .checker import Checker\n", 1))
    found = _cycles(root)
    assert {"profilec.check.checker", "profilec.check.context"} <= set(found), found


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
