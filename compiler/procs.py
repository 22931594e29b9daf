"""Ending what we start, by pid: descendants and session members of a child, via /proc (Linux).

    descendants(pid)                 live descendants as (pid, start time), parents first
    session_members(sid)             live members of session `sid` (other than its leader)
    end_processes(procs, grace)      SIGTERM, then SIGKILL after `grace` s (same process only)
    start_time(pid)                  a live pid's start time (clock ticks), to guard recycled pids
    cmdline_matches(match)           pids (not ours) whose command line `match` accepts

Codex leaves sandbox helpers (`bwrap ... --codex-run-as-fs-helper`) running after it exits,
re-parented to init but still in the session of the child we started; a caller that starts Codex
with start_new_session=True ends them with `end_processes(session_members(child.pid), ...)`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence


def _stat3(pid: int) -> tuple[int, int, int] | None:
    """(ppid, session id, start time in clock ticks) of a live pid; None if gone (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split(" ")  # comm may hold spaces and parentheses
    try:
        if fields[0] == "Z":
            return None  # a zombie is already ended; only its reaper can remove it
        return int(fields[1]), int(fields[3]), int(fields[19])
    except (IndexError, ValueError):
        return None


def _stat(pid: int) -> tuple[int, int] | None:
    st = _stat3(pid)
    return None if st is None else (st[0], st[2])


def session_members(sid: int, *, not_before: int = 0) -> list[tuple[int, int]]:
    """Live processes of session `sid` (other than its leader), as (pid, start time).

    A child started with start_new_session leads a session whose id is its pid; what it spawns
    stays in that session even after being re-parented to init, unless it calls setsid itself.
    `not_before` (a start time) skips processes older than the leader (a recycled id).
    """
    out: list[tuple[int, int]] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit() and int(name) != sid:
            st = _stat3(int(name))
            if st is not None and st[1] == sid and st[2] >= not_before:
                out.append((int(name), st[2]))
    return out


def descendants(pid: int) -> list[tuple[int, int]]:
    """Every live descendant of `pid` as (pid, start time), parents before children (Linux)."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        st = _stat(int(name))
        if st is not None:
            children.setdefault(st[0], []).append(int(name))
            starts[int(name)] = st[1]
    out: list[tuple[int, int]] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append((p, starts[p]))
        todo.extend(children.get(p, []))
    return out


def end_processes(procs: Sequence[tuple[int, int]], grace: float) -> None:
    """SIGTERM each (pid, start time) still alive as that same process; SIGKILL after `grace`.

    The start time guards against a recycled pid: a pid whose process changed is left alone.
    """

    def same(pid: int, start: int) -> bool:
        st = _stat(pid)
        return st is not None and st[1] == start

    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = [(p, t) for p, t in procs if same(p, t)]
        for p, _ in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, sig)
        deadline = time.monotonic() + grace
        while alive and time.monotonic() < deadline:
            time.sleep(0.05)
            alive = [(p, t) for p, t in alive if same(p, t)]
        if not alive:
            return


def start_time(pid: int) -> int | None:
    """The start time (clock ticks since boot) of a live pid, or None once it is gone."""
    st = _stat3(pid)
    return None if st is None else st[2]


def cmdline_matches(match: Callable[[bytes], bool]) -> list[int]:
    """Pids (not this one) whose command line (/proc/PID/cmdline, NUL-separated) `match`
    accepts; a process that is gone before it is read is passed over."""
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if match(cmdline):
            found.append(int(name))
    return found
