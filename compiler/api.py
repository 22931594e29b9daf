"""The library path: what the CLI and an embedding daemon call (docs/embedding.md).

The supported API is `__all__` below; everything else in the package may change. A daemon calls
`load_and_compile` (the session config as a path or as data), renders what its launcher needs
(`render`, `launch_document`, `write_codex_home`, `override_lines`), pins the result with
`write_lock` / `verify_lock`, and watches the chain in-process with `start_watch` while the
session runs. Every failure is a `ProfilecError` subclass carrying the CLI's exit code.

`load_and_compile` does the edge work (trust check, lstat/readlink, policy read: each input
file read once into compiler/inputs.py's `Inputs`) and then calls the pure `compile_bundle`;
`compile_inputs` compiles an `Inputs` a caller already holds (check, lock, audit share one), and
a daemon that already holds validated models calls `compile_bundle` directly.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .audit.drift import verify
from .bundle.load import compile_document
from .bundle.lock import render_lock
from .emit.codex_home import write_codex_home
from .emit.launch import adapters_of, render_launch_with
from .emit.overrides import override_lines
from .errors import (
    CanaryMismatchError,
    EnvironmentMissingError,
    InputError,
    LayoutError,
    LockDriftError,
    OutputError,
    PolicyError,
    ProfilecError,
    RootChainError,
    SandboxRefusesError,
    TrustError,
    UnsafeRootError,
    UsageError,
)
from .formats import renderer
from .fsio import write_atomic
from .inputs import Inputs
from .models import CompiledBundle
from .pipeline import InputOptions, SessionConfig, compile_inputs, load_and_compile, make_inputs
from .watch import watch_bundle

if TYPE_CHECKING:
    from .audit.drift import Drift as LockDrift
    from .watch import Drift as WatchDrift

__all__ = [
    "CanaryMismatchError",
    "CompiledBundle",
    "EnvironmentMissingError",
    "InputError",
    "InputOptions",
    "Inputs",
    "LayoutError",
    "LockDriftError",
    "OutputError",
    "PolicyError",
    "ProfilecError",
    "RootChainError",
    "SandboxRefusesError",
    "SessionConfig",
    "TrustError",
    "UnsafeRootError",
    "UsageError",
    "WatchHandle",
    "compile_inputs",
    "launch_document",
    "load_and_compile",
    "make_inputs",
    "override_lines",
    "render",
    "start_watch",
    "verify_lock",
    "write_codex_home",
    "write_lock",
]


def render(bundle: CompiledBundle, fmt: str) -> str:
    """The text `profilec compile --format FMT` prints: toml, overrides, acp-json,
    session-config, bundle or launch (codex-home is a directory: `write_codex_home`)."""
    try:
        return renderer(fmt)(bundle)
    except KeyError:
        raise UsageError(
            f"unknown format {fmt!r}; choose one of toml, overrides, acp-json, "
            "session-config, bundle, launch"
        ) from None


def launch_document(bundle: CompiledBundle, inputs: Inputs | None = None) -> dict[str, Any]:
    """`--format launch` as data (schemas/launch.schema.json), against the adapter catalog of
    the compile's policy directory. With `inputs` the watch argv names exactly those inputs."""
    catalog = adapters_of(inputs if inputs is not None else Inputs.unrooted())
    doc: dict[str, Any] = json.loads(render_launch_with(bundle, catalog, inputs))
    return doc


def write_lock(path: str, inputs: Inputs) -> str:
    """Compile `inputs` and write the lock file (as `profilec lock --out PATH`, atomically);
    returns its content hash. Keep it where no mode writes (beside the roots manifest)."""
    _, doc = compile_document(inputs)
    write_atomic(path, render_lock(doc, inputs.plan_layout).encode("utf-8"))
    return str(doc["content_hash"])


def verify_lock(path: str, inputs: Inputs) -> LockDrift | None:
    """Recompile `inputs` and compare with the lock (as `profilec check --lock`): None when
    nothing changed, else the drift (`.report`: the readable diff; `.error`: the
    LockDriftError, exit 9, to raise or log)."""
    return verify(path, inputs)


@dataclass
class WatchHandle:
    """A running in-process watch (`start_watch`): `stop()` ends it; `drift` is the change
    found (None while the chain holds)."""

    thread: threading.Thread
    watched: int
    _stop: threading.Event = field(default_factory=threading.Event)
    drift: WatchDrift | None = None

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop polling and wait for the thread (at most `timeout` seconds)."""
        self._stop.set()
        self.thread.join(timeout)


def start_watch(
    bundle: CompiledBundle,
    on_drift: Callable[[WatchDrift], None],
    *,
    interval: float = 0.25,
) -> WatchHandle:
    """Watch the bundle's chain, private CODEX_HOME, trusted inputs and project docs in a
    daemon thread, as `profilec watch` does (lstat/readlink only). The starting state is taken
    now: a chain that already differs from the bundle raises LockDriftError (exit 9) here.
    Later drift calls `on_drift(drift)` once from the watch thread (`drift.document()` is the
    watch event JSON); the session must then end. Call `handle.stop()` when the session ends."""
    if not 0.05 <= interval <= 0.5:
        raise UsageError("interval must be between 0.05 and 0.5 seconds")
    watcher = watch_bundle(bundle)
    first = watcher.begin()
    if first is not None:
        raise LockDriftError(first.message, where="watch")
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval):
            found = watcher.poll()
            if found is not None:
                handle.drift = found
                on_drift(found)
                return

    thread = threading.Thread(target=loop, name="profilec-watch", daemon=True)
    handle = WatchHandle(thread, len(watcher.watched), stop)
    thread.start()
    return handle
