"""The library path: what the CLI and an embedding daemon call (docs/embedding.md).

The supported API is `__all__` below; everything else in the package may change. A daemon calls
`load_and_compile` (the session config as a path or as data), renders what its launcher needs
(`render`, `launch_document`, `write_codex_home`, `override_lines`), pins the result with
`write_lock` / `verify_lock`, installs and verifies Codex's managed requirements
(`install_requirements` / `verify_requirements`), and watches the chain (and the requirements
file) in-process with `start_watch` while the session runs. Every failure is a `ProfilecError`
subclass carrying the CLI's exit code.

`load_and_compile` does the edge work (trust check, lstat/readlink, policy read: each input
file read once into compiler/inputs.py's `Inputs`) and then calls the pure `compile_bundle`;
`compile_inputs` compiles an `Inputs` a caller already holds (check, lock, audit share one); both
go through the one compile step every command takes (compiler/compiled.py `compile_step`). A
daemon that already holds validated models calls `compile_bundle` directly. `run_session` is
`profilec run` as a call: compile, check, and one supervised session under its boundary.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .audit.drift import verify
from .bundle.load import compile_document
from .bundle.lock import render_lock
from .codex.vocabulary import REQUIREMENTS_FILE
from .compiled import compile_step
from .emit.catalog import adapters_of
from .emit.codex_home import write_codex_home as _write_codex_home
from .emit.launch import render_launch_with
from .emit.overrides import override_lines as _override_lines
from .emit.requirements_install import install_requirements as _install_requirements
from .emit.requirements_install import requirements_gaps
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
from .flags import text as flag_text
from .formats import COMPILE_FORMATS
from .fsio import write_atomic
from .inputs import Inputs
from .library import (
    InputOptions,
    SessionConfig,
    StrPath,
    load_and_compile,
    make_inputs,
    path_arg,
)
from .models.compiled import CompiledBundle
from .run.session import CheckFailedError, prepare, read_provider_config
from .run.session import run_session as _run_session
from .watch import watch_bundle

if TYPE_CHECKING:
    from typing import BinaryIO

    from .run.supervise import Ending

if TYPE_CHECKING:
    from .audit.drift import Drift as LockDrift
    from .watch import Drift as WatchDrift

__all__ = [
    "CanaryMismatchError",
    "CheckFailedError",
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
    "StrPath",
    "TrustError",
    "UnsafeRootError",
    "UsageError",
    "WatchHandle",
    "compile_inputs",
    "install_requirements",
    "launch_document",
    "load_and_compile",
    "make_inputs",
    "override_lines",
    "render",
    "run_session",
    "start_watch",
    "verify_lock",
    "verify_requirements",
    "write_codex_home",
    "write_lock",
]


def _expect(name: str, value: object, kind: type[object]) -> None:
    """A UsageError naming parameter `name` unless `value` is a `kind`."""
    if not isinstance(value, kind):
        raise UsageError(
            f"expected {kind.__name__}, got {type(value).__name__}",
            where=name,
        )


def compile_inputs(inputs: Inputs) -> CompiledBundle:
    """Compile an `Inputs` (`make_inputs`) from the bytes it read: each call compiles (the
    roots are resolved afresh), so keep the bundle it returns and pass that on."""
    _expect("inputs", inputs, Inputs)
    return compile_step(inputs).bundle


def render(bundle: CompiledBundle, fmt: str) -> str:
    """The text `profilec compile --format FMT` prints, for each format of `COMPILE_FORMATS`
    that is text (codex-home is a directory: `write_codex_home`)."""
    _expect("bundle", bundle, CompiledBundle)
    _expect("fmt", fmt, str)
    return _TEXT_FORMATS.renderer(_TEXT_FORMATS.choose(fmt, where="fmt").name)(bundle)


#: The compile formats `render` gives as text: every one but those that write a directory.
_TEXT_FORMATS = dataclasses.replace(
    COMPILE_FORMATS, formats=tuple(f for f in COMPILE_FORMATS.formats if not f.directory)
)


def override_lines(bundle: CompiledBundle) -> list[str]:
    """The `-c` values in the order a launcher passes them (the default profile's selection
    first): pass each as `-c LINE`."""
    _expect("bundle", bundle, CompiledBundle)
    return _override_lines(bundle)


def write_codex_home(
    bundle: CompiledBundle, directory: StrPath, *, run_as: int | None = None
) -> str:
    """Write `directory/config.toml` (0600, the directory 0700) and the empty writer lock
    `auth.lock`; returns the config's path. `run_as`: the uid Codex runs as, when it is not
    ours (root only): the directory and both files are written owned by it."""
    _expect("bundle", bundle, CompiledBundle)
    if run_as is not None and (isinstance(run_as, bool) or not isinstance(run_as, int)):
        raise UsageError(f"expected an int uid, got {type(run_as).__name__}", where="run_as")
    if run_as is not None and run_as < 0:
        raise UsageError(f"a uid is 0 or more, got {run_as}", where="run_as")
    return _write_codex_home(bundle, path_arg("directory", directory), owner=run_as)


def launch_document(bundle: CompiledBundle, *, inputs: Inputs | None = None) -> dict[str, Any]:
    """`--format launch` as data (schemas/launch.schema.json), against the adapter catalog of
    the compile's policy directory. With `inputs` the watch argv names exactly those inputs."""
    _expect("bundle", bundle, CompiledBundle)
    if inputs is not None:
        _expect("inputs", inputs, Inputs)
    edge = inputs if inputs is not None else Inputs.unrooted()
    layout = None
    plan = flag_text(edge.flags.plan_layout)
    if plan is not None:
        from .mounts.api import layout_of

        layout = layout_of(edge, plan)
    flags = inputs.flags if inputs is not None else None
    doc: dict[str, Any] = json.loads(render_launch_with(bundle, adapters_of(edge), flags, layout))
    return doc


def write_lock(path: StrPath, inputs: Inputs) -> str:
    """Compile `inputs` and write the lock file (as `profilec lock --out PATH`, atomically);
    returns its content hash. Keep it where no mode writes (beside the roots manifest)."""
    out = path_arg("path", path)
    _expect("inputs", inputs, Inputs)
    _, doc = compile_document(inputs)
    write_atomic(out, render_lock(doc, flag_text(inputs.flags.plan_layout)).encode("utf-8"))
    return str(doc["content_hash"])


def verify_lock(path: StrPath, inputs: Inputs) -> LockDrift | None:
    """Recompile `inputs` and compare with the lock (as `profilec check --lock`): None when
    nothing changed, else the drift (`.report`: the readable diff; `.error`: the
    LockDriftError, exit 9, to raise or log)."""
    lock = path_arg("path", path)
    _expect("inputs", inputs, Inputs)
    return verify(lock, inputs)


def install_requirements(inputs: Inputs, path: StrPath = REQUIREMENTS_FILE) -> bool:
    """Compile `inputs` and install Codex's managed requirements at `path` (as `profilec
    requirements install`): atomic, 0644, the header naming the roots manifest it comes from
    (path and sha256). False when the file was already current. Never replaces a file profilec
    did not write, nor one compiled from another manifest (another daemon's: a host with
    several daemons binds a per-session file instead, docs/requirements.md): OutputError, exit
    6, nothing written. The default path is the host's; run as root."""
    out = path_arg("path", path)
    _expect("inputs", inputs, Inputs)
    return _install_requirements(compile_step(inputs).bundle, inputs, out)


def verify_requirements(inputs: Inputs, path: StrPath = REQUIREMENTS_FILE) -> list[str]:
    """Why the managed requirements at `path` are less strict than what `inputs` compile to
    (as `profilec requirements verify`, one reason per gap); empty: they hold. A missing file
    is one gap; a file others can write raises TrustError (exit 3)."""
    file = path_arg("path", path)
    _expect("inputs", inputs, Inputs)
    return requirements_gaps(inputs, file, compile_step(inputs).bundle)


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
    requirements: StrPath | None = None,
) -> WatchHandle:
    """Watch the bundle's chain, private CODEX_HOME, trusted inputs, project docs and the
    project config folders below the workspace roots in a daemon thread, as `profilec watch`
    does (lstat/readlink/scandir only), and with `requirements` the managed requirements file
    the session runs under (as `watch --requirements`): replaced, removed or edited is drift.
    The starting state is taken now: a chain that already differs from the bundle, or
    requirements missing or less strict than the bundle's (`verify_requirements`), raise
    LockDriftError (exit 9) here.
    Later drift calls `on_drift(drift)` once from the watch thread (`drift.document()` is the
    watch event JSON); the session must then end. Call `handle.stop()` when the session ends."""
    _expect("bundle", bundle, CompiledBundle)
    if not callable(on_drift):
        raise UsageError(f"expected a callable, got {type(on_drift).__name__}", where="on_drift")
    if isinstance(interval, bool) or not isinstance(interval, int | float):
        raise UsageError(
            f"expected seconds as a float, got {type(interval).__name__}", where="interval"
        )
    if not 0.05 <= interval <= 0.5:
        raise UsageError(f"must be between 0.05 and 0.5 seconds, got {interval}", where="interval")
    req = None if requirements is None else path_arg("requirements", requirements)
    if req is not None:
        gaps = requirements_gaps(Inputs.unrooted(), req, bundle)
        if gaps:
            message = f"the managed requirements do not hold: {'; '.join(gaps)}"
            raise LockDriftError(message, where=req)
    watcher = watch_bundle(bundle, requirements=req)
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


def run_session(
    inputs: Inputs,
    adapter_argv: Sequence[str],
    *,
    provider_config: StrPath,
    client_in: BinaryIO,
    client_out: BinaryIO,
    stop: threading.Event | None = None,
    network: bool | None = None,
) -> Ending:
    """`profilec run` as a call (docs/run.md): read the provider config (trust-checked),
    compile `inputs` once, check (CheckFailedError, exit 1, `.report_text`: nothing starts),
    then run `adapter_argv` under its boundary, relaying the ACP stream between `client_in`/
    `client_out` (binary streams with a file descriptor) and the adapter, with the watch
    in-process. Returns when the client's input ends, the adapter exits, `stop` is set or the
    chain drifts (`ending.exit_code` 9, `ending.drift`); the adapter's whole tree is ended
    first. Run one session per call; a daemon runs each in a thread of its own."""
    _expect("inputs", inputs, Inputs)
    provider = read_provider_config(path_arg("provider_config", provider_config))
    compiled = compile_step(inputs)
    prepared = prepare(compiled, provider, list(adapter_argv))
    halt = stop if stop is not None else threading.Event()
    return _run_session(
        prepared,
        list(adapter_argv),
        client_in=client_in,
        client_out=client_out,
        start_watch=lambda on_drift: start_watch(compiled.bundle, on_drift),
        stopped=halt.is_set,
        network=network,
    )
