"""`Enforced._base` looks the winner up by walking the path's ancestors in an index of the
exact entries (`by_real`); the scan over every entry it replaced is kept for a path that is not
normal. Property: on random profiles, symlink trees and query paths, both give the same
(access, entry, depth), and so `decide` the same decision."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from profilec.evaluate import EvalContext, FsSnapshot, enforce, resolve

NAMES = ("a", "b", "c", ".git")
ACCESS = ("read", "write", "deny")


@st.composite
def paths(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(NAMES), min_size=0, max_size=4))
    return "/" + "/".join(parts)


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, str], FsSnapshot, list[str]]:
    table = {p: draw(st.sampled_from(ACCESS)) for p in draw(st.lists(paths(), max_size=8))}
    kinds: dict[str, str] = {}
    links: dict[str, str] = {}
    for p in draw(st.lists(paths(), max_size=6)):
        if p == "/":
            continue
        if draw(st.booleans()):
            kinds[p] = "link"
            links[p] = draw(paths())
        else:
            kinds[p] = "dir"
    snap = FsSnapshot(kinds, links)  # type: ignore[arg-type]
    queries = draw(st.lists(paths(), min_size=1, max_size=6))
    return table, snap, queries


@settings(max_examples=300, deadline=None)
@given(cases())
def test_indexed_base_equals_the_scan(case: tuple[dict[str, str], FsSnapshot, list[str]]) -> None:
    table, snap, queries = case
    perms = {"p": {"filesystem": table}}
    eff = resolve(perms, "p", EvalContext(cwd="/a"))
    enf = enforce(eff, snap)
    scan = enf._replace(by_real={})
    assert enf.by_real or not enf.exact
    for q in queries:
        assert enf._base(q) == scan._base(q), q
        assert enf.decide(q) == scan.decide(q), q
