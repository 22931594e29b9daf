"""Report formats for `profilec check`, one module per format, looked up by name.

A renderer only formats a CheckReport. Formats that carry a time (junit, sarif) take `now`;
SOURCE_DATE_EPOCH, when set, fixes it so CI output is reproducible.
"""

from __future__ import annotations

import importlib
import os
from datetime import datetime
from typing import Protocol

from ..check.result import CheckReport
from ..settings import now_utc

FORMATS: tuple[str, ...] = ("text", "json", "junit", "sarif", "github")


class Renderer(Protocol):
    """`render(report, now)` -> the whole report text."""

    def __call__(self, report: CheckReport, now: datetime) -> str: ...


def renderer(name: str) -> Renderer:
    """The renderer for a format name; KeyError for an unknown one."""
    if name not in FORMATS:
        raise KeyError(name)
    module = importlib.import_module(f"{__name__}.{name}")
    fn: Renderer = module.render
    return fn


def render(name: str, report: CheckReport, now: datetime | None = None) -> str:
    """Render `report` in format `name`."""
    return renderer(name)(report, now or now_utc())


def display_path(path: str) -> str:
    """A path relative to the working directory when inside it (what CI annotations want)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
