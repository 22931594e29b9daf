"""Imports sit at the top of their module; an import inside a function is one of the few kinds
listed here, each with its reason (docs/architecture.md, "Lazy imports").

An import inside a function hides an edge of the module graph from a reader, and a test that
patches the module it names patches nothing the caller sees once the import moves. So the
package imports at module top, and defers only what a registry picks at run time (the command
and the format registries), what a single optional input needs, and third-party libraries only
one path uses. Each rule must still match an import (a rule nothing needs is removed), and the
negative control adds a function-level import to a copy of a module and shows it refused.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path
from typing import NamedTuple

PACKAGE = Path(__file__).resolve().parents[2] / "compiler"


class Rule(NamedTuple):
    """Function-level imports of `modules` (a name or its submodules) allowed in `files`."""

    files: tuple[str, ...]
    modules: tuple[str, ...]
    reason: str


RULES: tuple[Rule, ...] = (
    Rule(
        ("cli/*_cmd.py",),
        ("profilec.commands",),
        "the command registry: a command's run (and what it imports) loads only when that "
        "command runs, so `compile` and `--help` never load check, canary or docker",
    ),
    Rule(
        ("cli/__init__.py",),
        ("typer", "click", "profilec.cli.root", "profilec.cli.parsing"),
        "the CLI app is built on first use: importing profilec.cli for `main` and its error "
        "mapping loads no typer (nor cli/root.py, which reads the installed metadata)",
    ),
    Rule(
        ("formats.py", "commands/compile.py"),
        ("profilec.emit", "profilec.bundle"),
        "the format registry: a format's renderer loads only when that format is asked for",
    ),
    Rule(
        ("inputs.py", "pipeline.py"),
        ("profilec.session", "profilec.mcp"),
        "an optional input's parser loads only with that input (--session-config, "
        "--vouched-mcp; test_import_minimal INPUT_ONLY)",
    ),
    Rule(
        ("compiled.py", "bundle/load.py", "emit/launch.py", "api.py"),
        ("profilec.mounts",),
        "the mount planner loads only for a bundle or launch document with --plan-layout",
    ),
    Rule(
        ("canary/engine.py", "canary/image.py"),
        ("docker",),
        "the Docker SDK: only a canary run talks to the engine",
    ),
    Rule(
        ("audit/launchers.py", "audit/report.py", "resources.py"),
        ("jsonschema", "referencing"),
        "schema validation of a document read back (canary JSON, e2e matrix, the registry)",
    ),
    Rule(
        ("commands/run.py",),
        ("profilec.api",),
        "`profilec run` starts its watch beside the adapter's own start-up: the api (and what "
        "it loads) is imported then, off the path to the adapter's first answer",
    ),
    Rule(
        ("mounts/layout.py",),
        ("tomlkit",),
        "writing a plan layout back as TOML (tests and embedders), never on a read",
    ),
)


class Lazy(NamedTuple):
    file: str
    function: str
    module: str
    line: int


def _absolute(file: str, node: ast.ImportFrom) -> str:
    """The absolute dotted name `node` imports from (`from ..x import y` in a/b.py: profilec.x)."""
    if node.level == 0:
        return node.module or ""
    package = ["profilec", *Path(file).parts[:-1]]  # the package `file` is in
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def lazy_imports(file: str, source: str) -> list[Lazy]:
    """Every import statement inside a function of `source` (`file` relative to compiler/)."""
    out: list[Lazy] = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom):
                out.append(Lazy(file, fn.name, _absolute(file, node), node.lineno))
            elif isinstance(node, ast.Import):
                out.extend(Lazy(file, fn.name, a.name, node.lineno) for a in node.names)
    return list(dict.fromkeys(out))


def _matches(rule: Rule, lazy: Lazy) -> bool:
    in_file = any(fnmatch.fnmatch(lazy.file, pattern) for pattern in rule.files)
    named = any(lazy.module == m or lazy.module.startswith(m + ".") for m in rule.modules)
    return in_file and named


def refused(lazies: list[Lazy]) -> list[Lazy]:
    """The function-level imports no rule allows."""
    return [lazy for lazy in lazies if not any(_matches(rule, lazy) for rule in RULES)]


def package_lazies() -> list[Lazy]:
    out: list[Lazy] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        out += lazy_imports(rel, path.read_text(encoding="utf-8"))
    return out


def test_every_function_level_import_has_a_listed_reason() -> None:
    bad = refused(package_lazies())
    assert bad == [], "\n".join(
        f"compiler/{b.file}:{b.line} {b.function}() imports {b.module}: move it to the "
        "module top, or add a rule with its reason"
        for b in bad
    )


def test_every_rule_is_still_needed() -> None:
    lazies = package_lazies()
    unused = [rule.reason for rule in RULES if not any(_matches(rule, lz) for lz in lazies)]
    assert unused == []


def test_an_added_function_level_import_is_refused() -> None:
    """Negative control: compile.py with one import moved into a function is refused, with
    the file, function and module named; the same import at the module top is not."""
    source = (PACKAGE / "compile.py").read_text(encoding="utf-8")
    assert refused(lazy_imports("compile.py", source)) == []
    marker = "\ndef compile_bundle("
    assert marker in source
    probe = "\ndef _probe() -> None:\n    from .codex.resolve import resolve\n\n"
    lazy = source.replace(marker, probe + marker, 1)
    (bad,) = refused(lazy_imports("compile.py", lazy))
    assert (bad.file, bad.function, bad.module) == (
        "compile.py",
        "_probe",
        "profilec.codex.resolve",
    )
    # A registry module may defer its commands, but nothing else.
    cmd = "def f() -> None:\n    from ..commands.check import run\n    from ..check import lint\n"
    assert [b.module for b in refused(lazy_imports("cli/check_cmd.py", cmd))] == ["profilec.check"]
