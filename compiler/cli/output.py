"""Printing a run's outcome: the output to `--out` or stdout, the stderr lines, the exit."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..commands import to_stdout
from ..fsio import write_atomic
from . import console

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from ..commands import Outcome

R = TypeVar("R", bound="DataclassInstance")


def request_of(cls: type[R], params: dict[str, Any]) -> R:
    """A command's frozen request from its parsed options (typer's `ctx.params`): every option
    named like a field of `cls`, lists as tuples; an option left unset (None) takes the field's
    default, and an option that is no field (`--out`) stays with the CLI."""
    names = {f.name for f in dataclasses.fields(cls)}
    values = {
        k: tuple(v) if isinstance(v, list) else v
        for k, v in params.items()
        if k in names and v is not None
    }
    return cls(**values)


__all__ = ["emit", "exit_with", "finish", "request_of", "show", "to_stdout"]


def emit(text: str, out: Path | None) -> None:
    """Write `text` atomically to `out`, or to stdout (`out` None or `-`)."""
    if to_stdout(out):
        sys.stdout.write(text)
        sys.stdout.flush()
        return

    write_atomic(str(out), text.encode("utf-8"))


def show(outcome: Outcome, out: Path | None = None) -> None:
    """Print what the run says, in the order Outcome documents (raises nothing of its own
    but an OutputError from writing `out`)."""
    for line in outcome.verbose:
        console.verbose(line)
    if outcome.text is not None:
        emit(outcome.text, out)
    for line in outcome.warnings:
        console.warn(line)
    for line in outcome.notes:
        console.note(line)
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
        sys.stderr.flush()


def exit_with(outcome: Outcome) -> int:
    """The run's error raised (one line and its exit code, compiler/errors.py), else its code."""
    if outcome.error is not None:
        raise outcome.error
    return outcome.exit_code


def finish(outcome: Outcome, out: Path | None = None) -> int:
    """`show` then `exit_with`: what almost every command does with its outcome."""
    show(outcome, out)
    return exit_with(outcome)
