"""Suite-wide setup: hold the shared ancestors of every test layout still.

Compile reads the host: each `.git` above a workspace root is a parent input and decides the
untrusted project (compiler/pipeline.py). The real-Codex tests run compiled profiles whose
writable roots include the ancestors of their layouts (/, /tmp, pytest's base directories);
as root, bubblewrap creates the read-only carve-outs' mount points (`.git`, `.agents`,
`.codex`) as empty directories in each writable root that lacks them, and nothing removes them
(seen here: /.git, /tmp/.git and <basetemp>/.git appearing mid-run). A unit test that compiles
the same layout twice then saw the host change between its two compiles (a different untrusted
project; a lock that drifted). So before any test runs, each process of the run creates those
mount points in the ancestors every layout shares, as the first sandbox would: the host then
stays the same for the whole run. Only where the user may create them (root, as in CI).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The launch temp dir the unit tests model (created in each process's basetemp at session start).
LAUNCH_TMPDIR = "launch-tmp"

#: The carve-out names bubblewrap creates (Codex 0.171.0 as root; `.aws` was never seen made).
CARVE_OUT_MOUNT_POINTS = (".git", ".agents", ".codex")


def shared_ancestors(basetemp: Path) -> list[Path]:
    """`/`, /tmp and every directory from the system temp dir down to `basetemp`."""
    out = [Path("/")]
    for p in reversed(basetemp.resolve().parents):
        if p != Path("/"):
            out.append(p)
    out.append(basetemp.resolve())
    return out


def launch_tmpdir(basetemp: Path) -> None:
    """Every test layout lives in pytest's basetemp, under the system temp dir, and compile
    refuses a CODEX_HOME under the temp dir the launch gives Codex (`--tmpdir`, else $TMPDIR,
    else /tmp: Codex then runs no command). The launch the tests model gives Codex a TMPDIR of
    its own, as a launcher must: `<basetemp>/launch-tmp`, which holds no test's CODEX_HOME.
    Set for this process (and the CLIs it starts) once basetemp exists; a test about the temp
    dir itself passes `--tmpdir` or sets TMPDIR (monkeypatch)."""
    tmp = basetemp / LAUNCH_TMPDIR
    tmp.mkdir(mode=0o700, exist_ok=True)
    os.environ["TMPDIR"] = str(tmp)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    factory = session.config._tmp_path_factory  # type: ignore[attr-defined]
    basetemp = Path(factory.getbasetemp())
    launch_tmpdir(basetemp)
    if os.geteuid() != 0:
        return  # bubblewrap as non-root cannot create them either
    for d in shared_ancestors(basetemp):
        for name in CARVE_OUT_MOUNT_POINTS:
            try:
                os.makedirs(d / name, exist_ok=True)
            except OSError:
                continue  # a read-only or foreign ancestor: nothing can be created there


@pytest.fixture(autouse=True)
def _signal_handlers() -> Iterator[None]:
    """A test that runs `profilec watch` in-process gets watch's SIGTERM/SIGINT handlers
    installed (before it compiles): pytest gets its own back after every test."""
    handlers = {n: signal.getsignal(n) for n in (signal.SIGTERM, signal.SIGINT)}
    yield
    for signum, handler in handlers.items():
        signal.signal(signum, handler)
