"""The run of each CLI command: one frozen request and one `run(request)` per command.

The CLI (compiler/cli/) parses the flags into a request, calls the run and prints its
`Outcome`; everything a command does besides parsing and printing is here or below. Each
module imports what its run needs at its top; the CLI imports a command's module only when
that command runs (the registry in compiler/cli/__init__.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import EXIT_CLEAN, ProfilecError, UsageError

#: A progress reporter factory, as the CLI's console.progress: `with progress(what, total) as
#: step: step(text)`.
Progress = Callable[[str, int | None], AbstractContextManager[Callable[[str], None]]]


def absolute(*, cwd: str | None, home: str | None, tmpdir: str | None) -> None:
    """--cwd, --home and --tmpdir, when given, are absolute paths (a UsageError names the
    first that is not)."""
    for name, value in (("--cwd", cwd), ("--home", home), ("--tmpdir", tmpdir)):
        if value is not None and not value.startswith("/"):
            raise UsageError(f"{name} {value!r} must be an absolute path")


def to_stdout(out: Path | str | None) -> bool:
    """`--out -` (or no --out) means standard output, as everywhere on a command line."""
    return out is None or str(out) == "-"


@contextmanager
def no_progress(what: str, total: int | None = None) -> Iterator[Callable[[str], None]]:
    """A progress reporter that reports nothing (a run called without the CLI's)."""

    def step(text: str) -> None:
        return None

    yield step


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a run hands back for the CLI to print, in this order: `verbose` lines (with -v),
    `text` (to --out or stdout; None: the run wrote its output itself), `warnings` and `notes`
    (not with -q), `stderr` (written as is, always); then `error` is raised when set, else
    the run exits with `exit_code` (compiler/errors.py)."""

    text: str | None = None
    exit_code: int = EXIT_CLEAN
    verbose: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    stderr: str = ""
    error: ProfilecError | None = None
