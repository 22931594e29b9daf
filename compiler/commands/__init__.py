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
from ..inputs import Inputs

#: A progress reporter factory, as the CLI's console.progress: `with progress(what, total) as
#: step: step(text)`.
Progress = Callable[[str, int | None], AbstractContextManager[Callable[[str], None]]]


def absolute(*, cwd: str | None, home: str | None, tmpdir: str | None) -> None:
    """--cwd, --home and --tmpdir, when given, are absolute paths (a UsageError names the
    first that is not)."""
    for name, value in (("--cwd", cwd), ("--home", home), ("--tmpdir", tmpdir)):
        if value is not None and not value.startswith("/"):
            raise UsageError(f"{name} {value!r} must be an absolute path")


def check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    """A UsageError unless `fmt` is one of `allowed`."""
    if fmt not in allowed:
        raise UsageError(f"unknown --format {fmt!r}; choose one of {', '.join(allowed)}")


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


def _text(path: Path | None) -> str | None:
    return str(path) if path else None


@dataclass(frozen=True, slots=True)
class CompileFlags:
    """The compile inputs a command takes (compile, check, lock, explain, audit, canary, watch
    each take some of them; the rest stay at their defaults)."""

    roots: Path | None = None
    profiles: Path | None = None
    workspace_root: tuple[str, ...] = ()
    codex_home: str | None = None
    session_config: Path | None = None
    plan_layout: Path | None = None
    vouched_mcp: Path | None = None
    tmpdir: str | None = None
    home: str | None = None
    run_as: int | None = None

    def unrooted(self) -> Inputs:
        """The run's read edge when it takes no --roots (a --bundle, a --lock, --e2e-matrix
        against the policy of --profiles)."""
        return Inputs.unrooted(_text(self.profiles))

    def inputs(
        self, missing: str = "give --roots (and the compile flags) or --bundle FILE"
    ) -> Inputs:
        """The run's one read edge (compiler/inputs.py); a UsageError `missing` without --roots."""
        if self.roots is None:
            raise UsageError(missing)
        return Inputs(
            roots=str(self.roots),
            profiles=_text(self.profiles),
            workspace_roots=self.workspace_root,
            codex_home=self.codex_home,
            session_config=_text(self.session_config),
            plan_layout=_text(self.plan_layout),
            vouched_mcp=_text(self.vouched_mcp),
            tmpdir=self.tmpdir,
            home=self.home,
            run_as=self.run_as,
        )
