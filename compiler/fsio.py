"""File I/O at the edge: the one reader of input files (one clear line on any error) and atomic
output (write to a temp file in the target directory, fsync, rename)."""

from __future__ import annotations

import contextlib
import os
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


def write_atomic(path: str, data: bytes, *, mode: int = 0o644) -> None:
    """Replace `path` with `data` all at once; on any error nothing is left behind.

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


def ensure_private_dir(path: str) -> None:
    """Create `path` as a 0700 directory, or tighten an existing one we own to 0700."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if st.st_uid != os.getuid():
            raise OutputError(f"directory is owned by uid {st.st_uid}", where=path)
        os.chmod(path, 0o700)
    except OSError as exc:
        raise OutputError(f"cannot prepare directory: {exc.strerror}", where=path) from None
