"""The options before the command: `profilec [--version] [-q | -v] COMMAND ...`.

`-q` and `-v` are declared here once; every command takes them after its name too
(compiler/cli/parsing.py hands each a copy that calls `set_level`)."""

from __future__ import annotations

from importlib import metadata
from typing import Annotated, Any

import typer

from ..errors import EXIT_CLEAN, UsageError
from ..settings import codex_version
from . import console

#: Where one run's context keeps the level flags given so far (root and command share it).
_ASKED = "profilec.console-level"


def version_text() -> str:
    """`profilec --version`: the package version and the Codex version profilec pins."""
    try:
        mine = metadata.version("profilec")
    except metadata.PackageNotFoundError:
        mine = "unknown (not installed)"
    return f"profilec {mine} (codex {codex_version()})"


def _show_version(value: bool) -> None:
    if value:
        print(version_text())
        raise typer.Exit(EXIT_CLEAN)


def set_level(ctx: Any, quiet: bool = False, verbose: bool = False) -> None:
    """Record -q/-v wherever given (before or after the command) and set the console level;
    both given, in any places: a UsageError."""
    asked: set[str] = ctx.meta.setdefault(_ASKED, set())
    asked.update(flag for flag, on in (("-q", quiet), ("-v", verbose)) if on)
    if len(asked) == 2:
        raise UsageError("give -q or -v, not both")
    console.set_level(
        console.QUIET if "-q" in asked else console.VERBOSE if "-v" in asked else console.NORMAL
    )


def root_options(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_show_version,
            help="Print the profilec version and the pinned Codex version, and exit.",
        ),
    ] = False,
    quiet: Annotated[
        bool, typer.Option("-q", "--quiet", help="Errors only on stderr (no warnings or notes).")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Progress lines on stderr.")
    ] = False,
) -> None:
    """Compile daemon-owned credential roots into Codex permission profiles, and check them."""
    set_level(ctx, quiet, verbose)
