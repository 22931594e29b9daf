"""Path validation and builder-owned joining: every host path profilec emits passes through here.

Rules (seed 004): absolute, normalized, UTF-8, no NUL, no `.`/`..`/empty segment. Joining takes a
validated base and *relative segments*; a segment that is absolute, empty, `.` or `..` fails closed.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import InputError, LayoutError


def check_absolute(path: str, *, what: str, error: type[InputError] = LayoutError) -> str:
    """Return `path` unchanged if it is absolute and normalized, else raise `error`."""
    if not isinstance(path, str) or path == "":
        raise error(f"{what} is empty", where=what)
    if "\x00" in path:
        raise error(f"{what} contains a NUL byte", where=what)
    try:
        path.encode("utf-8", errors="strict")
    except UnicodeEncodeError:
        raise error(f"{what} is not valid UTF-8: {path!r}", where=what) from None
    if not path.startswith("/"):
        raise error(f"{what} must be absolute: {path!r}", where=what)
    if path == "/":
        return path
    if path.endswith("/"):
        raise error(f"{what} has a trailing slash (empty segment): {path!r}", where=what)
    for seg in path[1:].split("/"):
        if seg == "":
            raise error(f"{what} has an empty segment: {path!r}", where=what)
        if seg in (".", ".."):
            raise error(f"{what} has a traversal segment {seg!r}: {path!r}", where=what)
    return path


def check_segment(seg: str, *, what: str) -> str:
    """Return one relative path segment, or raise if it could traverse or is not one segment."""
    if seg in ("", ".", "..") or "/" in seg or "\x00" in seg:
        raise LayoutError(f"{what} is not a single safe path segment: {seg!r}", where=what)
    return seg


def join(base: str, relative: str, *, what: str) -> str:
    """Join a validated absolute base and a relative path; reject absolute or traversal input."""
    check_absolute(base, what=f"{what} base")
    if relative.startswith("/"):
        raise LayoutError(f"{what} must be relative, got absolute {relative!r}", where=what)
    if relative == "":
        raise LayoutError(f"{what} is empty", where=what)
    segs = [check_segment(s, what=what) for s in relative.split("/")]
    return "/".join([base.rstrip("/"), *segs]) if base != "/" else "/" + "/".join(segs)


def parent(path: str) -> str:
    """The parent of an absolute normalized path (`/` for `/x`, `/` for `/`)."""
    if path == "/":
        return "/"
    head = path.rsplit("/", 1)[0]
    return head or "/"


def is_within(path: str, ancestor: str) -> bool:
    """True when `path` equals `ancestor` or lies below it, by whole path components."""
    if ancestor == "/":
        return path.startswith("/")
    return path == ancestor or path.startswith(ancestor + "/")


def ancestors(path: str) -> Iterable[str]:
    """`path` itself, then each parent up to `/`."""
    cur = path
    while True:
        yield cur
        if cur == "/":
            return
        cur = parent(cur)


#: Codex's temp dir when the launch sets no TMPDIR (Rust's `std::env::temp_dir()` on Linux).
DEFAULT_TEMP_DIR = "/tmp"

#: Why a CODEX_HOME under the temp dir runs no command (measured on 0.165.0 and 0.171.0).
CODEX_HOME_UNDER_TEMP_REASON = (
    "Codex refuses to create its sandbox helper there ('Refusing to create helper binaries "
    "under temporary dir'), so no model command runs"
)


def launch_temp_dir(tmpdir: str | None) -> str:
    """The temp dir Codex uses: the TMPDIR the launch gives it (the caller's `--tmpdir`, else
    its `$TMPDIR`), else DEFAULT_TEMP_DIR. Without a trailing slash (`/` stays `/`)."""
    return (tmpdir or DEFAULT_TEMP_DIR).rstrip("/") or "/"


def codex_home_temp_dir(codex_home: str, tmpdir: str | None) -> str | None:
    """The launch temp dir (`launch_temp_dir(tmpdir)`) when `codex_home` lies in it, else
    None. The one definition behind check's PC035, compile's refusal and the mount plan's
    TMPDIR (docs/codex-semantics.md)."""
    temp = launch_temp_dir(tmpdir)
    return temp if is_within(codex_home, temp) else None


#: GIT_DIR of the trusted Codex parent (the launch document and the mount plan set it; the
#: parent policy keeps it out of model commands). At every turn start the parent runs `git` in
#: the session's cwd outside the sandbox, and `git status` runs the clean filters of whatever
#: repository it discovers there: one the model planted below a workspace root (`ws/proj/.git`)
#: ran as the parent when a later session opened in `ws/proj` (measured on 0.171.0 and 0.166.0).
#: A GIT_DIR below /dev/null can never exist, so the parent's git finds no repository at all
#: and reads no repository config; the model's own git is untouched.
PARENT_GIT_DIR = "/dev/null/profilec-parent-git-off"
