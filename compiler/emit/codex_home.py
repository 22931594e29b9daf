"""`codex-home DIR`: a dedicated CODEX_HOME whose config.toml holds the compiled profiles.

For adapters that list only profiles found in a config layer (agentclientprotocol/codex-acp's
`permission-profile:<id>` modes come from `permissionProfile/list`). Directory 0700, file 0600.
It also creates the credential writer's lock `auth.lock` (empty, 0600) when it is missing: every
compiled profile denies it, and a deny masks only a file that exists when a sandbox starts
(docs/vaults.md).
"""

from __future__ import annotations

import os
import stat

from ..codex import WRITER_LOCK
from ..errors import OutputError
from ..fsio import ensure_private_dir, write_atomic
from ..models import CompiledBundle
from .codex_toml import render_toml


def write_codex_home(bundle: CompiledBundle, directory: str) -> str:
    """Write DIR/config.toml atomically; returns its path."""
    text = render_toml(bundle)  # render first: an error leaves no directory behind
    ensure_private_dir(directory)
    path = os.path.join(directory, "config.toml")
    write_atomic(path, text.encode("utf-8"), mode=0o600)
    ensure_writer_lock(directory)
    return path


def ensure_writer_lock(directory: str) -> str:
    """Create DIR/auth.lock (empty, 0600) unless it is already a regular file; never follow a link.

    An existing lock is left as it is (Codex may hold it right now); a link or anything else
    there is refused, because Codex would refuse to start a sandbox that denies a link.
    """
    path = os.path.join(directory, WRITER_LOCK)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(
                "the credential writer's lock is not a regular file (remove it)", where=path
            ) from None
        return path
    except OSError as exc:
        raise OutputError(f"cannot create the writer lock: {exc.strerror}", where=path) from None
    os.close(fd)
    return path
