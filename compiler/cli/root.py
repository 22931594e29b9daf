"""The options before the command: `profilec [--version] [-q | -v] COMMAND ...`."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import EXIT_CLEAN, UsageError
from . import console, version_text


def _show_version(value: bool) -> None:
    if value:
        print(version_text())
        raise typer.Exit(EXIT_CLEAN)


def root_options(
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
    if quiet and verbose:
        raise UsageError("give -q or -v, not both")
    console.set_level(console.QUIET if quiet else console.VERBOSE if verbose else console.NORMAL)
