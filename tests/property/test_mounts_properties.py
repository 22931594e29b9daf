"""Properties of the mount plan: joining stays in its base, order is stable, every target is
read-write, and the outer plan protects exactly the targets the inner profiles deny."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profilec.errors import LayoutError, RootChainError
from profilec.models.compiled import ResolvedRoot
from profilec.models.mounts import HostFacts, PlanLayout
from profilec.models.roots import LaunchLayout, RootSpec
from profilec.mounts.backends import load_catalog
from profilec.mounts.plan import build_plan, covering, mirror_dirs
from profilec.mounts.render_json import render_json
from profilec.paths import is_within
from profilec.roots import resolve_root
from tests.strategies import TreeSpec, build, trees

CATALOG = load_catalog()
SEG = st.text(
    st.characters(exclude_characters="/\x00", exclude_categories=["Cs"]), min_size=1, max_size=6
).filter(lambda s: s not in (".", ".."))
REL = st.lists(SEG, min_size=1, max_size=4).map("/".join)
BASE = st.lists(SEG, min_size=0, max_size=3).map(lambda segs: "/" + "/".join(segs))
BAD_SEG = st.sampled_from(["..", ".", ""])


@given(base=BASE, roots=st.lists(REL, min_size=1, max_size=4, unique=True))
def test_no_mirror_directory_escapes_its_base_and_each_ends_with_its_root(
    base: str, roots: list[str]
) -> None:
    try:
        dirs = mirror_dirs(base, roots)
    except LayoutError:
        return
    unscoped = os.path.commonpath([base, *dirs]) if dirs else base
    for d, r in zip(dirs, roots, strict=True):
        assert d.endswith("/" + r)
        assert is_within(d, unscoped)
        assert os.path.normpath(d) == d and "/../" not in d + "/"


@given(base=BASE, root=REL)
def test_joining_an_already_joined_base_is_idempotent(base: str, root: str) -> None:
    (once,) = mirror_dirs(base, [root])
    assert mirror_dirs(once, [root]) == (once,)


@given(
    base=BASE,
    pre=st.lists(SEG, max_size=2),
    bad=BAD_SEG,
    post=st.lists(SEG, max_size=2),
    absolute=st.booleans(),
)
def test_a_traversal_segment_anywhere_is_always_rejected(
    base: str, pre: list[str], bad: str, post: list[str], absolute: bool
) -> None:
    rel = "/".join([*pre, bad, *post])
    if absolute:
        rel = "/" + "/".join([*pre, "x"])
    with pytest.raises(LayoutError):
        mirror_dirs(base, ["fine", rel])


def _layout(home: str, ws: str, state: str, daemon: str, siblings: list[str]) -> PlanLayout:
    return PlanLayout.model_validate(
        {
            "schema_version": 1,
            "daemon_root": daemon,
            "agent_home": home,
            "workspace_roots": [ws],
            "state_dir": state,
            "backends": ["codex"],
            "hidden": {"sibling_homes": siblings},
        },
        strict=False,
    )


@given(
    siblings=st.permutations(["/d/agents/a2", "/d/agents/a3", "/d/agents/a4"]),
    ro=st.permutations(["/usr", "/etc", "/opt/tools"]),
)
def test_plan_bytes_do_not_depend_on_the_order_inputs_were_listed(
    siblings: list[str], ro: list[str]
) -> None:
    lay = _layout("/d/agents/a1", "/w", "/d/state/c1", "/d", sorted(siblings))
    a = build_plan((), lay.model_copy(update={"readonly_paths": tuple(sorted(ro))}), CATALOG)
    b = build_plan(
        (),
        lay.model_copy(
            update={
                "readonly_paths": tuple(ro),
                "hidden": lay.hidden.model_copy(update={"sibling_homes": tuple(siblings)}),
            }
        ),
        CATALOG,
    )
    assert render_json(a) == render_json(b)


def _roots_from_tree(base: Path, spec: TreeSpec, picks: list[int]) -> list[ResolvedRoot]:
    files = build(base, spec)
    if not files:
        return []
    out: list[ResolvedRoot] = []
    for i, p in enumerate(sorted({files[k % len(files)] for k in picks})):
        try:
            out.append(resolve_root(RootSpec(id=f"r{i}", path=str(p))))
        except RootChainError:
            continue
    return out


def _sandbox(tmp: str) -> tuple[Path, PlanLayout]:
    base = Path(tmp)
    for d in ("daemon/agents/a1", "ws", "tree"):
        (base / d).mkdir(parents=True)
    lay = _layout(
        str(base / "daemon/agents/a1"),
        str(base / "ws"),
        str(base / "daemon/state/c1"),
        str(base / "daemon"),
        [],
    )
    return base / "tree", lay


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=trees(), picks=st.lists(st.integers(0, 1000), min_size=1, max_size=4))
def test_every_root_target_is_read_write_for_random_symlink_trees(
    spec: TreeSpec, picks: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tree, lay = _sandbox(os.path.realpath(tmp))
        roots = _roots_from_tree(tree, spec, picks)
        plan = build_plan(roots, lay, CATALOG, HostFacts())
        links = {h.link for r in roots for h in r.hops}
        for r in roots:
            m = covering(plan.mounts, r.target)
            assert m is not None and m.type == "rw-bind", r.target
            if r.kind == "file":  # the vault directory, never the file alone (rename save)
                assert m.path != r.target and is_within(r.target, m.path), m.path
                v = covering(plan.mounts, os.path.dirname(r.target))
                assert v is not None and v.type == "rw-bind"
        for m in plan.mounts:  # never a mount onto or through a link
            assert m.type == "symlink" or not any(is_within(m.path, link) for link in links)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=trees(), picks=st.lists(st.integers(0, 1000), min_size=1, max_size=4))
def test_outer_plan_protects_exactly_the_targets_the_inner_profiles_deny(
    spec: TreeSpec, picks: list[int]
) -> None:
    from profilec.compile import compile_bundle
    from profilec.errors import UnsafeRootError
    from profilec.policy import load_policy

    with tempfile.TemporaryDirectory() as tmp:
        tree, lay = _sandbox(os.path.realpath(tmp))
        roots = _roots_from_tree(tree, spec, picks)
        if not roots:
            return
        try:
            bundle = compile_bundle(
                roots, load_policy(), LaunchLayout(workspace_roots=lay.workspace_roots)
            )
        except UnsafeRootError:
            return  # inner side refuses this tree; nothing to compare
        plan = build_plan(roots, lay, CATALOG, HostFacts())
        from profilec.paths import is_within

        for profile in bundle.profiles:
            denied = {e.path for e in profile.entries if e.access == "deny"}
            # Inner profiles deny each target's vault: every target the outer plan protects is
            # inside a denied vault, and every denied vault holds a protected target.
            for t in plan.protected_targets:
                assert any(is_within(t, v) for v in denied), (profile.mode, t)
            for v in denied:
                assert any(is_within(t, v) for t in plan.protected_targets), (profile.mode, v)
