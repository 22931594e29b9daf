"""Property: random trees with symlinked ancestors and writable roots; after compile, no
ancestor of a protected path (vault, holder directory, CODEX_HOME) is renamable in any mode,
by the evaluator's rules plus the rename rule of compiler/ancestry.py."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from profilec.ancestry import unsafe_ancestors
from profilec.codex.resolve import resolve, session_contexts
from profilec.compile import compile_bundle
from profilec.errors import UnsafeRootError
from profilec.models.roots import LaunchLayout, RootSpec
from profilec.policy import load_policy
from profilec.roots import resolve_home, resolve_root, resolve_workspace_roots
from profilec.wholepath import protected_paths
from tests.strategies import TreeSpec, build, trees

POLICY = load_policy()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=trees(),
    picks=st.lists(st.integers(0, 1000), min_size=1, max_size=3),
    ws_pick=st.integers(-1, 1000),
    home_pick=st.integers(-1, 1000),
    under_tmp=st.booleans(),
)
def test_no_ancestor_of_a_protected_path_is_renamable_in_any_mode(
    spec: TreeSpec, picks: list[int], ws_pick: int, home_pick: int, under_tmp: bool
) -> None:
    # Under /tmp every ancestor below /tmp is writable in agent mode; under /var/tmp only the
    # workspace is (and full access writes everywhere in both).
    with tempfile.TemporaryDirectory(
        prefix="profilec-anc-", dir="/tmp" if under_tmp else "/var/tmp"
    ) as tmp:
        base = Path(tmp)
        candidates = build(base, spec)
        if not candidates:
            return
        dirs = sorted({p.parent for p in candidates if p.parent.is_dir()} | {base})
        chosen = sorted({candidates[i % len(candidates)] for i in picks})
        ws = () if ws_pick < 0 else resolve_workspace_roots([str(dirs[ws_pick % len(dirs)])])
        home = None if home_pick < 0 else resolve_home(str(dirs[home_pick % len(dirs)]))
        roots = tuple(
            resolve_root(RootSpec(id=f"r{i}", path=str(p)), ws) for i, p in enumerate(chosen)
        )
        try:
            bundle = compile_bundle(roots, POLICY, LaunchLayout(workspace_roots=ws), home)
        except UnsafeRootError as exc:
            event(f"refused: {exc.message.split(' ', 1)[0]}")
            return  # fail closed is allowed (e.g. a credential in the workspace root itself)
        pinned = any(
            p.reason == "ancestor"
            for prof in bundle.profiles
            for e in prof.entries
            for p in e.provenance
        )
        event("compiled with pins" if pinned else "compiled, nothing to pin")
        protected = protected_paths(roots, home, ())
        for profile in bundle.profiles:
            table = {profile.profile_id: profile.codex_table()}
            for ctx in session_contexts(ws):
                eff = resolve(table, profile.profile_id, ctx)
                assert unsafe_ancestors(eff, protected) == [], (profile.mode, ctx.cwd)
                # No mode may create, rename or replace a name in / (the /lib64 symlink).
                assert not eff.decide("/").writable, (profile.mode, ctx.cwd)
