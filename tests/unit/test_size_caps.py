"""The size caps: no module of the package over 900 lines, no function over 120 (ast), so the
next feature cannot cross either silently. Each cap has a negative control: a synthetic module or
function one line over is caught."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "compiler"
MODULE_LINES = 900
FUNCTION_LINES = 120


def module_lines(source: str) -> int:
    """A module's length in lines, as an editor counts them."""
    return len(source.splitlines())


def long_functions(source: str, where: str) -> list[str]:
    """`where:NAME (N lines)` for every function or method longer than the cap, decorators
    included (its first decorator to its last line)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source, filename=where)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > FUNCTION_LINES:
                out.append(f"{where}:{node.lineno} {node.name} ({length} lines)")
    return out


def oversized(files: list[Path]) -> list[str]:
    """Every module over the module cap and every function over the function cap."""
    found: list[str] = []
    for path in files:
        source = path.read_text(encoding="utf-8")
        if module_lines(source) > MODULE_LINES:
            found.append(f"{path} ({module_lines(source)} lines)")
        found += long_functions(source, str(path))
    return found


def test_every_module_and_function_of_the_package_is_within_the_caps() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 100  # the package, not an empty directory
    assert oversized(files) == []


def _function(name: str, body_lines: int) -> str:
    return f"def {name}() -> int:\n" + "    x = 0\n" * (body_lines - 2) + "    return x\n"


def test_the_check_catches_an_oversized_module_and_function(tmp_path: Path) -> None:
    """Negative controls: one line over each cap is found; exactly at the cap is not."""
    at_cap = tmp_path / "at_cap.py"
    at_cap.write_text(_function("fits", FUNCTION_LINES) + "\n" * (MODULE_LINES - FUNCTION_LINES))
    assert module_lines(at_cap.read_text()) == MODULE_LINES
    assert oversized([at_cap]) == []

    long_module = tmp_path / "long_module.py"
    long_module.write_text(at_cap.read_text() + "y = 1\n")
    assert oversized([long_module]) == [f"{long_module} ({MODULE_LINES + 1} lines)"]

    long_function = tmp_path / "long_function.py"
    long_function.write_text("@staticmethod\n" + _function("sprawls", FUNCTION_LINES))
    assert oversized([long_function]) == [f"{long_function}:2 sprawls ({FUNCTION_LINES + 1} lines)"]
