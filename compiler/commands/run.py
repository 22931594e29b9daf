"""`profilec run`: the request and its run (compile, check, then one supervised session).

The provider config is read (trust-checked), the run compiles through `compile_step` and checks
(`run.session.prepare`: nothing starts on a failing check, the check's report on stderr and its
exit code), then `run.session.run_session` starts the adapter under its boundary and relays
standard input and output (the ACP stream) until the first end. SIGTERM, SIGINT and SIGHUP
end the session; drift ends it with the watch event's JSON line on stderr and exit 9.
"""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..compiled import compile_step
from ..errors import LockDriftError, UsageError
from ..flags import CompileFlags
from ..inputs import Inputs
from ..run.session import CheckFailedError, prepare, read_provider_config, run_session
from ..run.supervise import Drifted, Watching
from . import Outcome


@dataclass(frozen=True, slots=True)
class RunRequest(CompileFlags):
    """The flags of one `profilec run` (compiler/cli/run_cmd.py lists their help)."""

    provider_config: Path | None = None
    network: bool | None = None
    adapter: tuple[str, ...] = ()


def run(request: RunRequest, *, client_in: BinaryIO, client_out: BinaryIO) -> Outcome:
    """Compile, check, run the session; the adapter's exit code, or 9 on drift."""
    if request.provider_config is None:
        raise UsageError("--provider-config FILE is required: the launcher's model provider")
    if not request.adapter:
        raise UsageError("give the adapter's command after --: profilec run ... -- ADAPTER ...")
    stop: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        stop.append(signum)

    # Installed before the compile: a launcher that stops the session early still ends it.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    provider = read_provider_config(str(request.provider_config))
    compiled = compile_step(Inputs.of(request))
    try:
        prepared = prepare(compiled, provider, request.adapter)
    except CheckFailedError as exc:
        return Outcome(stderr=exc.report_text, error=exc)
    if stop:
        return Outcome()

    def watch(on_drift: Any) -> Watching:
        # Imported here, while the adapter starts: api's imports stay off the start-up path.
        from ..api import start_watch

        return start_watch(compiled.bundle, on_drift)

    ending = run_session(
        prepared,
        request.adapter,
        client_in=client_in,
        client_out=client_out,
        start_watch=watch,
        stopped=lambda: bool(stop),
        network=request.network,
        subreaper=True,
    )
    if ending.drift is not None:
        return _drift(ending.drift)
    return Outcome(exit_code=ending.exit_code)


def _drift(found: Drifted) -> Outcome:
    line = json.dumps(found.document(), sort_keys=True) + "\n"
    return Outcome(stderr=line, error=LockDriftError(found.message, where="run"))
