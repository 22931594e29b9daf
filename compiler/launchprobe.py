"""Whether a writable root can start: Codex's synthetic mount targets (issue 22).

`LaunchProbe` asks the host, as the launch user, whether Codex could create its mount targets
(`.git`, `.agents`, `.codex`, ...) in a directory. lstat, statvfs and scandir only.
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Iterable, Sequence


def _may_create(st: os.stat_result, uid: int, gids: frozenset[int]) -> bool:
    """Whether `uid` (with `gids`) may create a name in the directory `st` describes."""
    if uid == 0:
        return True
    if st.st_uid == uid:
        bits = stat.S_IWUSR | stat.S_IXUSR
    elif st.st_gid in gids:
        bits = stat.S_IWGRP | stat.S_IXGRP
    else:
        bits = stat.S_IWOTH | stat.S_IXOTH
    return st.st_mode & bits == bits


class LaunchProbe:
    """What compile asks the host about the user the session is launched as.

    Codex 0.171.0 keeps `.git`, `.agents`, `.codex` (and `.aws`) read-only inside every writable
    root; a missing one it creates as a mount target (bwrap mkdir) as the launch user, and the
    sandbox never starts when it cannot (measured: `bwrap: Can't mkdir /farm/.git: Permission
    denied` as uid 65534; `bwrap: Can't mkdir /opt/.git: Read-only file system` and `Error
    building bubblewrap command: Read-only file system (os error 30)` in a `--read-only`
    container). lstat and statvfs only: nothing is opened.

    Whether those names exist when compile looks says nothing about launch time: a running
    Codex session creates the missing ones in each of its writable roots and removes them when
    it ends (measured on 0.171.0 as root: empty `/work/.git`, `/opt/.agents`, ... present only
    while a full-access command ran; a killed session leaves them behind). So a directory
    counts as startable only when the launch user could create them, present or not.
    """

    def __init__(self, uid: int | None = None, gids: Iterable[int] | None = None) -> None:
        self.uid = os.geteuid() if uid is None else uid
        if gids is None:
            gids = _launch_gids(self.uid)
        self.gids = frozenset(gids)

    def blocker(self, path: str, names: Sequence[str]) -> str | None:
        """Why the launch user could not create `names` (Codex's mount targets) in `path`, or
        None (the path does not exist, is no directory, or the user may create them)."""
        try:
            st = os.lstat(path)
            ro = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
        except OSError:
            return None  # a missing launch directory is check_launch_dirs' to report
        if not stat.S_ISDIR(st.st_mode):
            return None
        what = ", ".join(names)
        if ro:
            return f"is on a read-only file system, where Codex creates {what}"
        if not _may_create(st, self.uid, self.gids):
            return (
                f"is not writable for uid {self.uid} (owner {st.st_uid}, mode "
                f"{stat.S_IMODE(st.st_mode):04o}), where Codex creates {what}"
            )
        return None

    def subdirs(self, path: str) -> tuple[str, ...]:
        """The real directories directly in `path` the launch user can enter (lstat), sorted."""
        found: list[str] = []
        try:
            with os.scandir(path) as it:
                for ent in it:
                    if not ent.is_dir(follow_symlinks=False):
                        continue
                    st = ent.stat(follow_symlinks=False)
                    if _may_enter(st, self.uid, self.gids):
                        found.append(os.path.join(path, ent.name))
        except OSError:
            return ()
        return tuple(sorted(found))


def _may_enter(st: os.stat_result, uid: int, gids: frozenset[int]) -> bool:
    if uid == 0:
        return True
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid in gids:
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def _launch_gids(uid: int) -> tuple[int, ...]:
    """The launch user's groups: ours when it is us, else only its primary group (as
    `setpriv --clear-groups` leaves it; fewer groups can only make compile more careful)."""
    if uid == os.geteuid():
        return (os.getegid(), *os.getgroups())

    try:
        return (pwd.getpwuid(uid).pw_gid,)
    except KeyError:
        return (uid,)
