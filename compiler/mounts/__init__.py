"""Sandbox mount plans for the outer boundary the trusted Codex parent runs in.

`load_layout` + `probe_host` (edge) -> `build_plan` (pure) -> `RENDERERS[fmt]` (format only).
"""

from __future__ import annotations

from .backends import load_catalog
from .layout import load_layout, parse_layout, probe_host
from .models import BackendCatalog, HostFacts, MountPlan, PlanLayout
from .plan import build_plan, covering, mirror_dirs
from .render import FORMATS, RENDERERS

__all__ = [
    "FORMATS",
    "RENDERERS",
    "BackendCatalog",
    "HostFacts",
    "MountPlan",
    "PlanLayout",
    "build_plan",
    "covering",
    "load_catalog",
    "load_layout",
    "mirror_dirs",
    "parse_layout",
    "probe_host",
]
