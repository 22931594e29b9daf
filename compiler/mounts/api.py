"""The edge for plans: read and check every input, then call the pure builder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..flags import CompileFlags
from ..inputs import Inputs
from ..models.compiled import ResolvedRoot
from ..models.mounts import MountPlan, PlanLayout
from ..models.roots import RootSpec
from ..pipeline import foreign_spec
from ..roots import resolve_roots
from .backends import catalog_of
from .layout import parse_layout, probe_host
from .plan import build_plan


def load_and_plan(
    roots_path: str, layout_path: str, *, catalog_path: str | None = None
) -> MountPlan:
    """Trust-check the manifest and layout, resolve roots, lstat the host, build the plan."""
    inp = Inputs(CompileFlags(roots=Path(roots_path)))
    return plan_inputs(inp, layout_of(inp, layout_path), catalog_path=catalog_path)


def plan_inputs(
    inp: Inputs,
    layout: PlanLayout,
    *,
    catalog_path: str | None = None,
    home_writes: Sequence[str] | None = None,
    scratch: Sequence[str] = (),
    empty: Sequence[tuple[str, bool]] = (),
) -> MountPlan:
    """`load_and_plan` over an `Inputs` a caller holds (each file read once per run) and the
    plan layout it read through it (`layout_of`); `home_writes`, `scratch` and `empty` as
    `build_plan`'s."""
    manifest = inp.manifest()
    catalog = catalog_of(inp, catalog_path)
    host = probe_host(layout)
    # One identity per plan: the layout's agent_home is the session's CODEX_HOME. Another
    # identity's roots are neither bound nor recreated here (measured on main 93d1cee: a1's plan
    # bound a2's vault read-write, readable as uid 65534), and their broken chains never block
    # this plan.
    foreign = foreign_spec(layout.agent_home, manifest) if "codex" in layout.backends else None
    everything = resolve_roots(manifest, layout.workspace_roots, foreign=foreign, skipped=[])
    roots = tuple(r for r in everything if foreign is None or not foreign(_spec_of(r)))
    return build_plan(
        roots, layout, catalog, host, home_writes=home_writes, scratch=scratch, empty=empty
    )


def _spec_of(root: ResolvedRoot) -> RootSpec:
    return RootSpec(id=root.id, path=root.path, backend=root.backend)


def layout_of(inp: Inputs, path: str) -> PlanLayout:
    """A plan layout read through the edge (trust-checked like the manifest) and parsed: a run
    reads it once and hands the layout on (compiler/bundle/load.py `Compiled.layout`)."""
    return parse_layout(inp.trusted(path).data, where=path)
