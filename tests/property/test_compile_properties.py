"""Properties over random roots and symlink trees: deny every target, never a link, same bytes."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profilec.codex.resolve import EvalContext, resolve
from profilec.compile import compile_bundle
from profilec.errors import UnsafeRootError
from profilec.formats import COMPILE_FORMATS
from profilec.models.roots import LaunchLayout, RootSpec
from profilec.policy import load_policy
from profilec.roots import resolve_root
from tests.strategies import TreeSpec, build, trees

POLICY = load_policy()


def _crosses_symlink(path: str) -> str | None:
    cur = ""
    for seg in path.strip("/").split("/"):
        cur += "/" + seg
        try:
            if os.path.islink(cur):
                return cur
        except OSError:
            return None
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=trees(), picks=st.lists(st.integers(0, 1000), min_size=1, max_size=4))
def test_random_trees_every_mode_denies_every_target_and_never_a_link(
    spec: TreeSpec, picks: list[int]
) -> None:
    with tempfile.TemporaryDirectory(prefix="profilec-prop-") as tmp:
        base = Path(tmp)
        candidates = build(base, spec)
        if not candidates:
            return
        chosen = sorted({candidates[i % len(candidates)] for i in picks})
        roots = tuple(resolve_root(RootSpec(id=f"r{i}", path=str(p))) for i, p in enumerate(chosen))
        try:
            bundle = compile_bundle(roots, POLICY, LaunchLayout())
        except UnsafeRootError:
            # Fail closed is allowed; it must never produce a weaker artifact instead.
            return
        for profile in bundle.profiles:
            table = profile.codex_table()
            eff = resolve(
                {profile.profile_id: table}, profile.profile_id, EvalContext(cwd="/nonexistent/cwd")
            )
            for p in chosen:
                real = os.path.realpath(p)
                assert eff.decide(real).access == "deny", (profile.mode, p, real)
            for root in bundle.roots:
                # Every vault is denied as a whole, and no file inside a denied vault carries a
                # deny of its own (Codex refuses that shape).
                assert eff.decide(root.vault).access == "deny", (profile.mode, root.vault)
                want = real_dir = os.path.realpath(root.path)
                if root.kind != "dir":
                    real_dir = os.path.dirname(want)
                assert root.vault == real_dir, (root.vault, real_dir)
            denied = [e.path for e in profile.entries if e.access == "deny"]
            for d in denied:
                assert not any(o != d and o.startswith(d.rstrip("/") + "/") for o in denied)
            for key in table["filesystem"]:
                if key.startswith("/"):
                    assert _crosses_symlink(key) is None, (profile.mode, key)
        again = compile_bundle(roots, POLICY, LaunchLayout())
        for fmt in ("toml", "overrides", "acp-json"):
            assert COMPILE_FORMATS.renderer(fmt)(bundle) == COMPILE_FORMATS.renderer(fmt)(again)
