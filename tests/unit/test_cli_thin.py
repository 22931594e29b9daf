"""The CLI stays thin: every typer command function in compiler/cli/ fits in 40 lines.

A command parses its flags into a request, calls its run (compiler/commands/) and prints the
outcome; anything longer is logic that belongs below the CLI. The checker parses the modules
with ast; the negative controls feed it a synthetic 41-line command (caught) and a 40-line one
(passes), so the limit itself is what is tested.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMIT = 40


def _is_command(node: ast.FunctionDef) -> bool:
    """Decorated with `@app.command(...)` or `@app.callback(...)` (a typer registration)."""
    for deco in node.decorator_list:
        call = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(call, ast.Attribute) and call.attr in ("command", "callback"):
            return True
    return False


def command_lengths(source: str) -> dict[str, int]:
    """name -> lines of each typer command function in `source`, decorators included."""
    out: dict[str, int] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and _is_command(node):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            out[node.name] = node.end_lineno - first + 1
    return out


def too_long(source: str, limit: int = LIMIT) -> dict[str, int]:
    return {name: n for name, n in command_lengths(source).items() if n > limit}


def _synthetic(lines: int) -> str:
    """A typer command of exactly `lines` lines (decorator, def, body of `pass` lines)."""
    body = ["@app.command('x')", "def x_command() -> None:"]
    body += ["    pass"] * (lines - len(body))
    return "\n".join(body) + "\n"


def test_every_cli_command_function_fits_in_40_lines() -> None:
    found: dict[str, int] = {}
    for path in sorted((REPO / "compiler" / "cli").glob("*.py")):
        lengths = command_lengths(path.read_text(encoding="utf-8"))
        found |= {f"{path.name}:{name}": n for name, n in lengths.items()}
    # Every command of the registry is seen (a checker that finds nothing passes nothing).
    assert len(found) >= 10, found
    assert {name: n for name, n in found.items() if n > LIMIT} == {}


def test_the_checker_catches_a_41_line_command_and_passes_a_40_line_one() -> None:
    assert command_lengths(_synthetic(41)) == {"x_command": 41}
    assert too_long(_synthetic(41)) == {"x_command": 41}
    assert too_long(_synthetic(40)) == {}


def test_an_undecorated_helper_is_not_a_command() -> None:
    helper = _synthetic(60).replace("@app.command('x')\n", "")
    assert command_lengths(helper) == {}
