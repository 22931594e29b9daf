"""What the CLI prints besides its output: warnings, notes, verbose lines and a progress line.

`-q` keeps stderr to errors (the one-line error and the exit code); `-v` adds progress lines
("profilec: <what>: <line>"). On a terminal (stderr a TTY, `NO_COLOR` unset, `TERM` not
`dumb`) the long runs show one status line that rewrites itself and is erased when done;
piped or under `NO_COLOR` nothing extra is written. Standard output never carries any of it.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager

QUIET, NORMAL, VERBOSE = 0, 1, 2
_LEVEL = [NORMAL]


def set_level(level: int) -> None:
    """Set by the `-q`/`-v` options of the `profilec` callback."""
    _LEVEL[0] = level


def level() -> int:
    return _LEVEL[0]


def warn(message: str) -> None:
    """`profilec: warning: ...` on stderr, unless -q."""
    if _LEVEL[0] > QUIET:
        print(f"profilec: warning: {message}", file=sys.stderr)


def note(message: str) -> None:
    """`profilec: ...` on stderr (a summary or a note), unless -q."""
    if _LEVEL[0] > QUIET:
        print(f"profilec: {message}", file=sys.stderr)


def verbose(message: str) -> None:
    """`profilec: ...` on stderr with -v only."""
    if _LEVEL[0] >= VERBOSE:
        print(f"profilec: {message}", file=sys.stderr)


def live_terminal() -> bool:
    """True when a rewritten status line is welcome: stderr is a TTY, no NO_COLOR, not dumb."""
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """A progress reporter: `step(text)` per event; lines with -v, one status line on a TTY."""

    def __init__(self, what: str, total: int | None, live: bool) -> None:
        self.what = what
        self.total = total
        self.done = 0
        self.live = live
        self._width = 0

    def __call__(self, text: str) -> None:
        self.step(text)

    def step(self, text: str, *, advance: bool = True) -> None:
        """Report one event (`advance`: it completes one of `total`)."""
        if advance:
            self.done += 1
        text = text.replace("\n", " ")
        if _LEVEL[0] >= VERBOSE:
            verbose(f"{self.what}: {text[:300]}")
        elif self.live:
            count = f"[{self.done}/{self.total}] " if self.total else ""
            cols = _columns()
            line = f"profilec: {self.what}: {count}{text}"[: max(cols - 1, 20)]
            sys.stderr.write("\r" + line + " " * max(self._width - len(line), 0))
            sys.stderr.flush()
            self._width = len(line)

    def close(self) -> None:
        if self.live and self._width:
            sys.stderr.write("\r" + " " * self._width + "\r")
            sys.stderr.flush()
            self._width = 0


def _columns() -> int:
    return shutil.get_terminal_size((80, 24)).columns


@contextmanager
def progress(what: str, total: int | None = None) -> Iterator[Progress]:
    """A Progress for one long run; the status line is erased when the run ends."""
    p = Progress(what, total, live=_LEVEL[0] == NORMAL and live_terminal())
    try:
        yield p
    finally:
        p.close()
