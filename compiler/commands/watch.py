"""`profilec watch`: the request and its run (poll the chain until the profile goes stale)."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bundle.load import bundle_from_document
from ..bundle.lock import read_lock
from ..compiled import compile_step
from ..emit.requirements_install import read_requirements
from ..emit.requirements_verify import requirements_problems
from ..errors import LockDriftError, UsageError
from ..flags import CompileFlags
from ..inputs import Inputs
from ..watch import Drift, watch_bundle
from ..watch import run as run_watch
from . import Outcome

if TYPE_CHECKING:
    from ..models.compiled import CompiledBundle

MIN_INTERVAL = 0.05
MAX_INTERVAL = 0.5


@dataclass(frozen=True, slots=True)
class WatchRequest(CompileFlags):
    """The flags of one `profilec watch` run: the compile inputs, or the --lock to watch."""

    lock: Path | None = None
    interval: float = 0.25
    requirements: str | None = None


def run(request: WatchRequest, started: Callable[[str], None]) -> Outcome:
    """Watch every hop, vault and the private auth.json; `started` gets the one line saying
    what is watched. On a change that makes the compiled profile stale: its JSON line and a
    LockDriftError (exit 9). SIGTERM or SIGINT: nothing, exit 0."""
    if not MIN_INTERVAL <= request.interval <= MAX_INTERVAL:
        raise UsageError(f"--interval must be between {MIN_INTERVAL} and {MAX_INTERVAL} seconds")
    # A plain flag, not a threading.Event: Event.set() in a signal handler deadlocks when the
    # signal lands while the main thread holds the Event's lock inside Event.wait() (seen as a
    # watch that never exited after SIGTERM on a loaded CI machine). time.sleep resumes after
    # the handler, so the loop notices the flag within one interval (at most 0.5 s).
    stop: list[bool] = []

    def on_signal(signum: int, frame: Any) -> None:
        stop.append(True)

    def go_on(seconds: float) -> bool:
        if not stop:
            time.sleep(seconds)
        return not stop

    # Installed before the compile, so a launcher that stops the session early still gets 0.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    bundle = _bundle(request)
    stale = _requirements_drift(request, bundle)
    if stale is not None:
        text = json.dumps(stale.document(), sort_keys=True) + "\n"
        return Outcome(text=text, error=LockDriftError(stale.message, where="watch"))
    watcher = watch_bundle(bundle, requirements=request.requirements)
    if stop:
        return Outcome()
    line = f"profilec: watch: watching {len(watcher.watched)} paths every {request.interval:g} s"
    found = run_watch(
        watcher, interval=request.interval, sleep=go_on, watching=lambda: started(line)
    )
    if found is None:
        return Outcome()  # asked to stop: exit 0, nothing on stdout
    text = json.dumps(found.document(), sort_keys=True) + "\n"
    return Outcome(text=text, error=LockDriftError(found.message, where="watch"))


def _requirements_drift(request: WatchRequest, bundle: CompiledBundle) -> Drift | None:
    """At the start: the managed requirements file (`--requirements`) must be in place and at
    least as strict as what profilec compiles for this bundle (`requirements verify`'s test);
    else the drift to report. After the start, any change to it is drift (`watch_bundle`)."""
    path = request.requirements
    if path is None:
        return None
    if not os.path.isabs(path):
        raise UsageError(f"--requirements must be absolute: {path!r}")
    edge = Inputs.unrooted() if request.lock is not None else Inputs.of(request)
    text = read_requirements(edge, path)
    problems = ["missing"] if text is None else requirements_problems(text, bundle)
    if not problems:
        return None
    return Drift(
        "requirements-less-strict",
        "requirements",
        path,
        (),
        "the compiled managed requirements",
        "; ".join(problems),
    )


def _bundle(request: WatchRequest) -> CompiledBundle:
    """The bundle of the chain to watch: compiled from the inputs, or the --lock's."""
    if (request.roots is None) == (request.lock is None):
        raise UsageError("give either --roots (and the compile inputs) or --lock FILE")
    if request.lock is not None:
        if request.given():  # --roots is not among them: it and --lock exclude each other
            raise UsageError("--lock carries its own inputs; drop the compile flags")

        doc, _ = read_lock(str(request.lock), Inputs.unrooted())
        return bundle_from_document(doc, str(request.lock))

    return compile_step(Inputs.of(request)).bundle
