"""The renderer registry behind `profilec plan --format`; renderers only format a MountPlan."""

from __future__ import annotations

from collections.abc import Callable

from .models import MountPlan
from .render_bwrap import render_bwrap
from .render_docker import render_docker
from .render_json import render_json
from .render_srt import render_srt

RENDERERS: dict[str, Callable[[MountPlan], str]] = {
    "json": render_json,
    "docker": render_docker,
    "bwrap": render_bwrap,
    "srt": render_srt,
}
FORMATS: tuple[str, ...] = tuple(RENDERERS)
