"""`codex-home DIR`: a dedicated CODEX_HOME whose config.toml holds the compiled profiles.

For adapters that list only profiles found in a config layer (agentclientprotocol/codex-acp's
`permission-profile:<id>` modes come from `permissionProfile/list`). Directory 0700, file 0600.
It also creates the credential writer's lock `auth.lock` (empty, 0600) when it is missing: every
compiled profile denies it, and a deny masks only a file that exists when a sandbox starts
(docs/vaults.md).

`owner` (`compile --run-as UID`, run as root): the directory, config.toml and auth.lock belong
to that uid, so a root daemon can write the CODEX_HOME of the unprivileged Codex it launches. A
directory owned by anyone but that uid or us is refused with the fix (compiler/fsio.py).
"""

from __future__ import annotations

import os
import stat

from ..codex.vocabulary import WRITER_LOCK
from ..errors import OutputError
from ..fsio import ensure_private_dir, primary_gid, write_atomic
from ..models.compiled import CompiledBundle
from .codex_toml import render_toml


def write_codex_home(bundle: CompiledBundle, directory: str, *, owner: int | None = None) -> str:
    """Write DIR/config.toml atomically; returns its path. `owner`: the uid the CODEX_HOME is
    for (`--run-as`), when it is not ours (root only)."""
    text = render_toml(bundle)  # render first: an error leaves no directory behind
    ensure_private_dir(directory, owner=owner)
    path = os.path.join(directory, "config.toml")
    write_atomic(path, text.encode("utf-8"), mode=0o600, owner=owner)
    ensure_writer_lock(directory, owner=owner)
    return path


def ensure_writer_lock(directory: str, *, owner: int | None = None) -> str:
    """Create DIR/auth.lock (empty, 0600) unless it is already a regular file; never follow a link.

    An existing lock is left as it is (Codex may hold it right now), except that one we own is
    given to `owner` (the run-as uid must open it); one owned by anyone else is refused. A link
    or anything else there is refused, because Codex would refuse to start a sandbox that
    denies a link.
    """
    path = os.path.join(directory, WRITER_LOCK)
    me = os.geteuid()
    give = owner is not None and owner != me
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            fd = -1
        try:
            st = os.fstat(fd) if fd >= 0 else os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                raise OutputError(
                    "the credential writer's lock is not a regular file (remove it)", where=path
                ) from None
            if give and owner is not None and st.st_uid != owner:
                if st.st_uid != me:
                    raise OutputError(
                        f"the credential writer's lock is owned by uid {st.st_uid}, not uid "
                        f"{owner} (--run-as): `chown {owner}:{primary_gid(owner)} {path}`",
                        where=path,
                    ) from None
                _hand_over(fd, owner, path)
        except OSError as exc:
            raise _not_handed(owner, exc, path) from None
        finally:
            if fd >= 0:
                os.close(fd)
        return path
    except OSError as exc:
        raise OutputError(f"cannot create the writer lock: {exc.strerror}", where=path) from None
    try:
        if give and owner is not None:
            _hand_over(fd, owner, path)
    finally:
        os.close(fd)
    return path


def _hand_over(fd: int, owner: int, path: str) -> None:
    """Give the open writer lock `fd` to `owner` (and its primary group)."""
    try:
        os.fchown(fd, owner, primary_gid(owner))
    except OSError as exc:
        raise _not_handed(owner, exc, path) from None


def _not_handed(owner: int | None, exc: OSError, path: str) -> OutputError:
    return OutputError(f"cannot hand the writer lock to uid {owner}: {exc.strerror}", where=path)
