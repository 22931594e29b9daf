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
from pathlib import Path

import pytest

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


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    if os.geteuid() != 0:
        return  # bubblewrap as non-root cannot create them either
    factory = session.config._tmp_path_factory  # type: ignore[attr-defined]
    basetemp = Path(factory.getbasetemp())
    for d in shared_ancestors(basetemp):
        for name in CARVE_OUT_MOUNT_POINTS:
            try:
                os.makedirs(d / name, exist_ok=True)
            except OSError:
                continue  # a read-only or foreign ancestor: nothing can be created there
