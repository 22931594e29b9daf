"""Supervision: the adapter's whole process tree, started and ended as one, and the session's
end on whichever comes first: the client's input ends, the adapter exits, a signal, or drift.

`Child` starts the argv (the boundary's prefix and the adapter) in a session and process group
of its own, its stdin and stdout piped for the relay, its stderr ours. `Child.end` ends the
whole tree: the process group, every descendant (listed before and after the first signal:
what a process spawns while shutting down), every member of its session (what was re-parented
to init but did not leave the session) and, with `subreaper`, everything re-parented to this
process (a grandchild that called `setsid`): SIGTERM, then SIGKILL after the grace, until none
is left. The boundary adds a pid namespace with `--die-with-parent`: when bwrap goes, the
kernel ends everything inside it.

`supervise` waits for the first end and returns the session's `Ending`: the adapter's exit
code (128 + the signal when a signal ended it), or 9 with the drift.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, Protocol

from ..errors import LockDriftError
from ..procs import descendants, end_processes, session_members, start_time

#: prctl(2) option: orphaned descendants are re-parented to this process instead of init.
PR_SET_CHILD_SUBREAPER = 36
#: Seconds the adapter gets to exit on its own after its input ends, and after SIGTERM.
GRACE = 3.0
#: At most this long between two looks at the session's state (the signal flag is a list, not
#: an Event: an Event set from a signal handler can deadlock the thread waiting on it).
TICK = 0.1


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux); False where it cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


class Child:
    """The adapter (under its boundary), in a session of its own; stdin/stdout piped."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        cwd: str | None = None,
        subreaper: bool = False,
    ) -> None:
        self.subreaper = subreaper and become_subreaper()
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
        self.pid = self.proc.pid
        self.started = start_time(self.pid) or 0
        self._ended = threading.Lock()

    @property
    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    @property
    def stdout(self) -> IO[bytes]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def tree(self) -> list[tuple[int, int]]:
        """Every live process of the session: the child, its descendants, its session's and
        process group's members, and (as subreaper) every descendant of this process."""
        found: dict[int, int] = {}
        if self.proc.poll() is None:
            found[self.pid] = self.started
        for pid, start in [
            *descendants(self.pid),
            *session_members(self.pid, not_before=self.started),
            *(descendants(os.getpid()) if self.subreaper else ()),
        ]:
            found.setdefault(pid, start)
        return sorted(found.items())

    def end(self, grace: float = GRACE) -> int:
        """End the whole tree (SIGTERM, SIGKILL after `grace`, until nothing is left) and
        return the child's exit code (128 + signal when a signal ended it)."""
        with self._ended:
            first = self.tree()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGTERM)
            # Closed after the signal: the adapter does not take the end of its input for a
            # client that left and exit with its own code first.
            with contextlib.suppress(OSError):
                self.stdin.close()
            end_processes(first, grace)
            for _ in range(50):  # what was spawned meanwhile, or is still there: again
                left = self.tree()
                if not left:
                    break
                end_processes(left, min(grace, 0.5))
            code = self.proc.wait()
            self._reap()
            with contextlib.suppress(OSError):
                self.stdout.close()
        return 128 - code if code < 0 else code

    def _reap(self) -> None:
        """Collect the exit status of orphans re-parented to this subreaper."""
        if not self.subreaper:
            return
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return


class Watching(Protocol):
    """A running in-process watch (api.WatchHandle): stopped when the session ends."""

    def stop(self, timeout: float | None = 5.0) -> None: ...


class Drifted(Protocol):
    """What the watch found (watch.Drift): its message and its watch-event document."""

    @property
    def message(self) -> str: ...

    def document(self) -> dict[str, Any]: ...


#: Starts the in-process watch with its on-drift callback (api.start_watch over the bundle).
StartWatch = Callable[[Callable[[Drifted], None]], Watching]


@dataclass(frozen=True, slots=True)
class Ending:
    """How the session ended: `reason` (client-eof, adapter-exit, stopped, drift), the exit
    code (the adapter's, or 9 on drift) and the drift, when that was it."""

    reason: str
    exit_code: int
    drift: Drifted | None = None


class Session(Protocol):
    """What `supervise` waits on and tells the client (compiler/run/relay.py's Relay)."""

    client_done: threading.Event
    agent_done: threading.Event

    def send_client(self, msg: dict[str, Any]) -> bool: ...
    def fail_pending(self, why: str) -> None: ...


#: The ACP extension notification telling the client the session was ended (and why).
ENDED_METHOD = "_profilec/session_ended"


def supervise(
    child: Child,
    session: Session,
    *,
    start_watch: StartWatch | None = None,
    stopped: Callable[[], bool] = lambda: False,
) -> Ending:
    """Wait for the first end, end the whole tree, return the `Ending`.

    `stopped`: true once the caller wants the session ended (a signal handler's flag: it is
    looked at every TICK); `start_watch`: the in-process watch (none: no drift check)."""
    drift: list[Drifted] = []
    woke = threading.Event()

    def on_drift(found: Drifted) -> None:
        drift.append(found)
        woke.set()

    try:
        # Started beside the adapter's own start-up; a chain that already differs from the
        # bundle raises here (LockDriftError): the tree is ended before it propagates.
        handle = start_watch(on_drift) if start_watch is not None else None
    except BaseException:
        session.fail_pending("profilec run: the watch could not start; the session was ended")
        child.end()
        raise
    try:
        reason = _first_end(child, session, woke, drift, stopped)
    finally:
        if handle is not None:
            handle.stop()
    if reason == "drift":
        found = drift[0]
        why = f"profilec run: drift: {found.message}; the session was ended"
        session.fail_pending(why)
        session.send_client(
            {
                "jsonrpc": "2.0",
                "method": ENDED_METHOD,
                "params": {"reason": "drift", "message": why, "drift": found.document()},
            }
        )
        child.end()
        return Ending("drift", LockDriftError.exit_code, found)
    if reason == "client-eof":
        # The adapter's stdin is closed: it may end on its own first.
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.proc.wait(GRACE)
    code = child.end()
    if reason == "stopped":
        session.fail_pending("profilec run: the session was stopped")
    return Ending(reason, code)


def _first_end(
    child: Child,
    session: Session,
    woke: threading.Event,
    drift: list[Drifted],
    stopped: Callable[[], bool],
) -> str:
    for event in (session.client_done, session.agent_done):
        threading.Thread(target=_forward, args=(event, woke), daemon=True).start()
    threading.Thread(target=_forward_exit, args=(child, woke), daemon=True).start()
    while True:
        if drift:
            return "drift"
        if stopped():
            return "stopped"
        if session.agent_done.is_set() or child.proc.poll() is not None:
            return "adapter-exit"
        if session.client_done.is_set():
            return "client-eof"
        woke.wait(TICK)
        woke.clear()


def _forward(event: threading.Event, woke: threading.Event) -> None:
    event.wait()
    woke.set()


def _forward_exit(child: Child, woke: threading.Event) -> None:
    with contextlib.suppress(Exception):
        child.proc.wait()
    woke.set()
