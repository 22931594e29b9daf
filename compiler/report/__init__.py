"""Report formats for `profilec check`, one module per format, each with its `render(report,
now)` (the table naming them is compiler/formats.py's CHECK_FORMATS).

A renderer only formats a CheckReport. Formats that carry a time (junit, sarif) take `now`;
SOURCE_DATE_EPOCH, when set, fixes it so CI output is reproducible.
"""

from __future__ import annotations

import os


def display_path(path: str) -> str:
    """A path relative to the working directory when inside it (what CI annotations want)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
