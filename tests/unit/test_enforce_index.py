"""`Enforced._base` looks the winner up by walking the path's ancestors in an index of the
exact entries (`by_real`); the scan over every entry it replaced is kept for a path that is not
normal. Property: on random profiles, symlink trees and query paths, both give the same
(access, entry, depth), and so `decide` the same decision. Likewise `_with_carve_outs`, which
reads a writable root's access off the entries on its own path unless a glob is present, agrees
with the index's `winner()` on random entry sets."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from profilec.codex.enforce import enforce
from profilec.codex.fsview import FsSnapshot
from profilec.codex.resolve import EffectiveProfile, Entry, EvalContext, _with_carve_outs, resolve
from profilec.codex.vocabulary import CARVE_OUTS

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


@st.composite
def entry_sets(draw: st.DrawFn) -> tuple[Entry, ...]:
    out = []
    for _ in range(draw(st.integers(min_value=0, max_value=10))):
        if draw(st.integers(min_value=0, max_value=5)) == 0:
            out.append(Entry("glob", draw(paths()).rstrip("/") + "/*", "deny", "g"))
        else:
            out.append(Entry("path", draw(paths()), draw(st.sampled_from(ACCESS)), "p"))
    return tuple(dict.fromkeys(out))


@settings(max_examples=400, deadline=None)
@given(entry_sets())
def test_carve_outs_follow_the_indexed_winner(entries: tuple[Entry, ...]) -> None:
    """`_with_carve_outs` decides "resolves to write" from the entries on the root's own path
    (no index) unless a glob is present; the index's `winner()` must agree on every set."""
    indexed = EffectiveProfile("p", False, entries, False, (), ())
    want: list[Entry] = []
    reads = {e.path for e in entries if e.kind == "path" and e.access == "read"}
    for e in entries:
        if e.kind == "path" and e.access == "write" and indexed.winner(e.path)[0] == "write":
            stem = "" if e.path == "/" else e.path
            want += [
                Entry("path", f"{stem}/{n}", "read", f"carve-out {n} of writable root {e.path}")
                for n in CARVE_OUTS
                if f"{stem}/{n}" not in reads
            ]
    assert set(_with_carve_outs(entries)) == set(entries) | set(want)
