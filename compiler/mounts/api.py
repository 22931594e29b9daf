"""The edge for plans: read and check every input, then call the pure builder."""

from __future__ import annotations

from ..roots import load_manifest, resolve_roots
from .backends import load_catalog
from .layout import load_layout, probe_host
from .models import MountPlan
from .plan import build_plan


def load_and_plan(
    roots_path: str, layout_path: str, *, catalog_path: str | None = None
) -> MountPlan:
    """Trust-check the manifest and layout, resolve roots, lstat the host, build the plan."""
    layout = load_layout(layout_path)
    manifest = load_manifest(roots_path)
    catalog = load_catalog(catalog_path)
    host = probe_host(layout)
    roots = resolve_roots(manifest, layout.workspace_roots)
    return build_plan(roots, layout, catalog, host)
