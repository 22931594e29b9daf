"""File I/O at the edge: the one reader of input files (one clear line on any error) and atomic
output (write to a temp file in the target directory, fsync, rename)."""

from __future__ import annotations

import contextlib
import os
import pwd
import stat
import tempfile

from .errors import InputError, OutputError


def read_input(
    path: str,
    what: str | None = None,
    *,
    error: type[InputError] = InputError,
    limit: int | None = None,
) -> bytes:
    """The bytes of one input file (at most `limit`), or `error` with one clear line: "<what>
    does not exist" / "cannot read <what>: <reason>" ("file ..." without `what`)."""
    try:
        with open(path, "rb") as fh:
            return fh.read() if limit is None else fh.read(limit)
    except FileNotFoundError:
        raise error(f"{what or 'file'} does not exist", where=path) from None
    except OSError as exc:
        name = f" {what}" if what else ""
        raise error(f"cannot read{name}: {exc.strerror or exc}", where=path) from None


def write_atomic(path: str, data: bytes, *, mode: int = 0o644, owner: int | None = None) -> None:
    """Replace `path` with `data` all at once; on any error nothing is left behind.

    `owner`: a uid to give the new file to (and its primary group) before it is renamed into
    place; only root may give a file away, anyone else gets an OutputError.

    A target that already exists as a device, FIFO or socket (`--out /dev/null`,
    `/dev/stdout`) is written in place: renaming a file over it would replace the device
    node itself, which as root turns the host's /dev/null into a regular file.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"cannot inspect the target: {exc.strerror}", where=path) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError("the target is a directory", where=path)
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        _write_in_place(path, data)
        return
    directory = os.path.dirname(os.path.abspath(path)) or "."
    try:
        fd, tmp = tempfile.mkstemp(prefix=".profilec-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputError(
            f"cannot create a file in {directory}: {exc.strerror}", where=path
        ) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if owner is not None and owner != os.geteuid():
            os.chown(tmp, owner, primary_gid(owner))
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"cannot write: {exc.strerror}", where=path) from None


def _write_in_place(path: str, data: bytes) -> None:
    """Write to an existing special file without creating, truncating or replacing it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise OutputError(f"cannot open the target: {exc.strerror}", where=path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror}", where=path) from None


def primary_gid(uid: int) -> int:
    """The primary group of `uid` (its own number when no passwd entry names it, as the
    launch plan's `65534:65534`)."""
    try:
        return pwd.getpwuid(uid).pw_gid
    except KeyError:
        return uid


def ensure_private_dir(path: str, *, owner: int | None = None) -> None:
    """Create `path` as a 0700 directory, or tighten an existing one we own to 0700.

    `owner`: the uid the directory is for (`compile --run-as`), when it is not ours. Run as
    root, a directory created here, or an existing one root owns, is given to `owner`; one
    `owner` already holds is kept. A directory anyone else owns is refused with the fix.
    """
    me = os.geteuid()
    for_other = owner is not None and owner != me
    if for_other and me != 0:
        raise OutputError(
            f"only root can write a directory for uid {owner} (--run-as): run compile as root, "
            f"or as uid {owner}",
            where=path,
        )
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise OutputError("is not a directory", where=path)
        if for_other and owner is not None:
            if st.st_uid not in (me, owner):
                raise OutputError(
                    f"directory is owned by uid {st.st_uid}, neither uid {owner} (--run-as) "
                    f"nor uid {me}: `chown {owner}:{primary_gid(owner)} {path}`, or choose "
                    "another directory",
                    where=path,
                )
            if st.st_uid == me:
                os.chown(path, owner, primary_gid(owner), follow_symlinks=False)
        elif st.st_uid != me:
            raise OutputError(
                f"directory is owned by uid {st.st_uid}: compile for it with --run-as "
                f"{st.st_uid} (as root), or choose another directory",
                where=path,
            )
        os.chmod(path, 0o700)
    except OSError as exc:
        raise OutputError(f"cannot prepare directory: {exc.strerror}", where=path) from None
