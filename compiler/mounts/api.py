"""The edge for plans: read and check every input, then call the pure builder."""

from __future__ import annotations

from ..inputs import Inputs
from ..roots import resolve_roots
from .backends import default_catalog_path, parse_catalog
from .layout import probe_host
from .models import MountPlan
from .plan import build_plan


def load_and_plan(
    roots_path: str, layout_path: str, *, catalog_path: str | None = None
) -> MountPlan:
    """Trust-check the manifest and layout, resolve roots, lstat the host, build the plan."""
    return plan_inputs(Inputs(roots=roots_path), layout_path, catalog_path=catalog_path)


def plan_inputs(inp: Inputs, layout_path: str, *, catalog_path: str | None = None) -> MountPlan:
    """`load_and_plan` over an `Inputs` a caller holds (each file read once per run)."""
    layout = inp.layout(layout_path)
    manifest = inp.manifest()
    where = catalog_path or default_catalog_path()
    catalog = parse_catalog(inp.policy_file(where).data, where=where)
    host = probe_host(layout)
    roots = resolve_roots(manifest, layout.workspace_roots)
    return build_plan(roots, layout, catalog, host)
