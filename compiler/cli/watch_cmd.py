"""`profilec watch`: run beside a session; exit 9 with one JSON line when its profile goes stale."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import app
from .compile_cmd import (
    HomeOpt,
    McpOpt,
    ProfilesOpt,
    SessionOpt,
    TmpdirOpt,
    UserHomeOpt,
    WorkspaceOpt,
)

if TYPE_CHECKING:
    from ..models import CompiledBundle

MIN_INTERVAL = 0.05
MAX_INTERVAL = 0.5


def _bundle(
    roots: Path | None,
    lock: Path | None,
    profiles: Path | None,
    workspace_root: list[str] | None,
    codex_home: str | None,
    session_config: Path | None,
    tmpdir: str | None = None,
    home: str | None = None,
    vouched_mcp: Path | None = None,
) -> CompiledBundle:
    from ..errors import UsageError

    if (roots is None) == (lock is None):
        raise UsageError("give either --roots (and the compile inputs) or --lock FILE")
    if lock is not None:
        if (
            profiles
            or workspace_root
            or codex_home
            or session_config
            or tmpdir
            or home
            or vouched_mcp
        ):
            raise UsageError("--lock carries its own inputs; drop the compile flags")
        from ..bundle.load import bundle_from_document
        from ..bundle.lock import read_lock

        doc, _ = read_lock(str(lock))
        return bundle_from_document(doc, str(lock))
    from ..api import load_and_compile

    assert roots is not None
    return load_and_compile(
        str(roots),
        profiles_dir=str(profiles) if profiles else None,
        workspace_roots=workspace_root or (),
        codex_home=codex_home,
        session_config_path=str(session_config) if session_config else None,
        tmpdir=tmpdir,
        home=home,
        vouched_mcp_path=str(vouched_mcp) if vouched_mcp else None,
    )


@app.command("watch")
def watch_command(
    roots: Annotated[
        Path | None,
        typer.Option(
            "--roots", help="Daemon-owned roots manifest (TOML), as for compile.", dir_okay=False
        ),
    ] = None,
    lock: Annotated[
        Path | None,
        typer.Option(
            "--lock", help="Watch the chain pinned in this lock file instead.", dir_okay=False
        ),
    ] = None,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    tmpdir: TmpdirOpt = None,
    home: UserHomeOpt = None,
    vouched_mcp: McpOpt = None,
    interval: Annotated[
        float,
        typer.Option("--interval", help=f"Seconds between polls ({MIN_INTERVAL}-{MAX_INTERVAL})."),
    ] = 0.25,
) -> None:
    """Watch every hop, vault and the private auth.json; on a change that makes the compiled
    profile stale print one JSON line and exit 9. SIGTERM or SIGINT: exit 0."""
    from ..errors import LockDriftError, UsageError
    from ..watch import run as run_watch
    from ..watch import watch_bundle

    if not MIN_INTERVAL <= interval <= MAX_INTERVAL:
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
    bundle = _bundle(
        roots, lock, profiles, workspace_root, codex_home, session_config, tmpdir, home, vouched_mcp
    )
    watcher = watch_bundle(bundle)
    print(
        f"profilec: watch: watching {len(watcher.watched)} paths every {interval:g} s",
        file=sys.stderr,
        flush=True,
    )
    if stop:
        return
    found = run_watch(watcher, interval=interval, sleep=go_on)
    if found is None:
        return  # asked to stop: exit 0, nothing on stdout
    sys.stdout.write(json.dumps(found.document(), sort_keys=True) + "\n")
    sys.stdout.flush()
    raise LockDriftError(found.message, where="watch")
