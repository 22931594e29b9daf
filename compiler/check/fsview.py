"""The live filesystem as the evaluator's FsView: lstat and readlink only, never open()."""

from __future__ import annotations

import os
import stat

from ..evaluate import FsKind


class LiveFs:
    """Answers FsView questions from the host, caching each lstat."""

    def __init__(self) -> None:
        self._kinds: dict[str, FsKind | None] = {}

    def kind(self, path: str) -> FsKind | None:
        """lstat's type of `path`; None when it does not exist or cannot be looked up."""
        if path in self._kinds:
            return self._kinds[path]
        try:
            st = os.lstat(path)
        except OSError:
            k: FsKind | None = None
        else:
            if stat.S_ISLNK(st.st_mode):
                k = "link"
            elif stat.S_ISDIR(st.st_mode):
                k = "dir"
            elif stat.S_ISREG(st.st_mode):
                k = "file"
            else:
                k = "other"
        self._kinds[path] = k
        return k

    def readlink(self, path: str) -> str | None:
        """The link's value, or None."""
        if self.kind(path) != "link":
            return None
        try:
            return os.readlink(path)
        except OSError:
            return None
