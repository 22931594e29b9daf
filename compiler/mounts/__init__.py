"""Sandbox mount plans for the outer boundary the trusted Codex parent runs in.

`load_layout` + `probe_host` (edge) -> `build_plan` (pure) -> a renderer (format only; the
table naming them is compiler/formats.py's PLAN_FORMATS).
"""

from __future__ import annotations

from ..models.mounts import BackendCatalog, HostFacts, MountPlan, PlanLayout
from .backends import load_catalog
from .layout import load_layout, parse_layout, probe_host
from .plan import build_plan, covering, mirror_dirs

__all__ = [
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
