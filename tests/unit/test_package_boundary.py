"""The wheel holds the product, not the dev harness.

The differential tester and the prompt-input oracle live in `harness/` beside `compiler/`: the
tests and `bench/` import them from a checkout, pyproject does not list them, and nothing that
ships imports them or `tests`. The shipped modules are read the way setuptools picks them: the
`.py` files directly inside each folder a listed package maps to. The checker runs on this tree
and, as negative controls, on synthetic sources and a planted copy, where it must object.
(`lint-imports` holds the same line with a forbidden contract; scripts/wheel-smoke.sh checks the
built wheel's file list.)
"""

from __future__ import annotations

import ast
import shutil
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: Top-level packages the shipped code must never import.
DEV_ROOTS = ("harness", "tests")
#: Module names that belong to the harness and must not exist (or be imported) in the package.
HARNESS_NAMES = ("difftest", "codex_oracle")


def _banned(module: str) -> bool:
    """Is `module` (a dotted absolute name) the harness, the tests, or a harness module?"""
    parts = module.split(".")
    if parts[0] in DEV_ROOTS:
        return True
    return parts[0] == "profilec" and len(parts) > 1 and parts[1] in HARNESS_NAMES


def banned_imports(source: str, package: str) -> list[str]:
    """`line: module` for every import in `source` that reaches the harness or the tests.

    `package` is the dotted package the module sits in (for `from . import x` and
    `from .. import x`). Imports inside functions and `if TYPE_CHECKING:` count too, as do
    `importlib.import_module("...")` and `__import__("...")` with a literal name.
    """
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Import, ast.ImportFrom, ast.Call)):
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                head = ".".join([*base, node.module] if node.module else base)
            else:
                head = node.module or ""
            names = [head, *(f"{head}.{alias.name}" for alias in node.names)]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "__import__")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            )
        ):
            names = [node.args[0].value]
        hits = sorted({n for n in names if _banned(n)})
        found += [f"{node.lineno}: {n}" for n in hits[:1]]
    return found


def shipped_modules(repo: Path) -> dict[str, Path]:
    """Dotted name -> file of each module the wheel holds, read from pyproject like setuptools."""
    tool = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    setup = tool["setuptools"]
    dirs: dict[str, str] = setup["package-dir"]
    out: dict[str, Path] = {}
    for package in setup["packages"]:
        top, _, rest = package.partition(".")
        folder = repo / dirs.get(top, top) / Path(*rest.split(".")) if rest else repo / dirs[top]
        for path in sorted(folder.glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            out[name] = path
    return out


def boundary_problems(repo: Path) -> list[str]:
    """Everything that puts harness or test code into what ships, as readable lines."""
    problems: list[str] = []
    tool = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    for package in tool["setuptools"]["packages"]:
        if _banned(package):
            problems.append(f"pyproject packages lists {package}")
    for path in sorted((repo / "compiler").rglob("*")):
        if path.stem in HARNESS_NAMES or path.name in DEV_ROOTS:
            problems.append(f"{path.relative_to(repo)} is harness code inside the package")
    for name, path in shipped_modules(repo).items():
        package = name if path.stem == "__init__" else name.rpartition(".")[0]
        text = path.read_text(encoding="utf-8")
        problems += [f"{path.relative_to(repo)}:{hit}" for hit in banned_imports(text, package)]
    return problems


def test_what_ships_holds_and_imports_no_harness() -> None:
    assert boundary_problems(REPO) == []


def test_the_shipped_modules_are_every_module_of_the_package() -> None:
    """The reading of pyproject the check relies on covers all of compiler/, and only it."""
    shipped = set(shipped_modules(REPO).values())
    assert shipped == set((REPO / "compiler").rglob("*.py"))
    assert {"profilec.pipeline", "profilec.cli", "profilec.e2e.run"} <= set(shipped_modules(REPO))


def test_the_harness_lives_beside_the_package_and_imports_from_a_checkout() -> None:
    from harness.codex_oracle import toml_inline
    from harness.difftest.gen import make_case

    assert (REPO / "harness" / "difftest" / "__main__.py").is_file()
    assert toml_inline({"a": "b"}) == '{a="b"}'
    assert make_case(1, 0).case_id == "1:0"


@pytest.mark.parametrize(
    ("source", "package", "hit"),
    [
        ("import harness.codex_oracle\n", "profilec", "1: harness.codex_oracle"),
        ("import os\nfrom harness.difftest import gen\n", "profilec.cli", "2: harness.difftest"),
        ("from harness import difftest\n", "profilec", "1: harness"),
        ("from tests.helpers import make_layout\n", "profilec", "1: tests.helpers"),
        ("import tests\n", "profilec.e2e", "1: tests"),
        ("import profilec.difftest.run\n", "profilec", "1: profilec.difftest.run"),
        ("from profilec import codex_oracle\n", "profilec.cli", "1: profilec.codex_oracle"),
        ("from .. import codex_oracle\n", "profilec.cli", "1: profilec.codex_oracle"),
        ("from .difftest.gen import make_case\n", "profilec", "1: profilec.difftest.gen"),
        ("def f():\n    import harness\n", "profilec", "2: harness"),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tests import helpers\n",
            "profilec",
            "3: tests",
        ),
        (
            "import importlib\nimportlib.import_module('harness.difftest')\n",
            "profilec",
            "2: harness.difftest",
        ),
        ("__import__('tests.helpers')\n", "profilec", "1: tests.helpers"),
    ],
)
def test_the_checker_sees_a_planted_import(source: str, package: str, hit: str) -> None:
    assert banned_imports(source, package) == [hit]


@pytest.mark.parametrize(
    "source",
    [
        "from __future__ import annotations\nimport os\nfrom . import codex\n",
        "from .e2e import run\nfrom ..procs import start_time\nimport testsuite\n",
        "from profilec.evaluate import enforce\nimport harnessing\n",
        "import importlib\nimportlib.import_module('profilec.cli.check_cmd')\n",
    ],
)
def test_the_checker_passes_clean_imports(source: str) -> None:
    assert banned_imports(source, "profilec.cli") == []


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    root.mkdir()
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    shutil.copytree(REPO / "compiler", root / "compiler", symlinks=True)
    assert boundary_problems(root) == []  # the copy starts clean
    return root


def test_a_planted_import_in_a_copy_of_the_package_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    path = root / "compiler" / "e2e" / "run.py"
    anchor = "from __future__ import annotations\n"
    text = path.read_text(encoding="utf-8")
    assert anchor in text
    path.write_text(text.replace(anchor, anchor + "from tests.helpers import make_layout\n", 1))
    assert boundary_problems(root) == [f"compiler/e2e/run.py:{_line(path)}: tests.helpers"]


def test_harness_modules_moved_back_into_a_copy_are_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    shutil.copytree(REPO / "harness" / "difftest", root / "compiler" / "difftest")
    shutil.copy(REPO / "harness" / "codex_oracle.py", root / "compiler" / "codex_oracle.py")
    meta = root / "pyproject.toml"
    text = meta.read_text(encoding="utf-8")
    listed = '"profilec.cli", '
    assert text.count(listed) == 1
    meta.write_text(text.replace(listed, listed + '"profilec.difftest", ', 1))
    problems = boundary_problems(root)
    assert "pyproject packages lists profilec.difftest" in problems
    assert "compiler/difftest is harness code inside the package" in problems
    assert "compiler/codex_oracle.py is harness code inside the package" in problems
    # The copied tester imports the oracle from `harness`: shipped, that import is caught too.
    assert any(
        p.startswith("compiler/difftest/run.py:") and p.endswith(": harness.codex_oracle")
        for p in problems
    ), problems


def _line(path: Path) -> int:
    """The 1-based line of the planted `from tests...` import in `path`."""
    lines = path.read_text(encoding="utf-8").split("\n")
    return next(i for i, line in enumerate(lines, 1) if line.startswith("from tests."))
