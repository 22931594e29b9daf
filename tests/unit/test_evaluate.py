"""Fast unit tests for profilec.evaluate: one test per Codex rule, plus hypothesis properties."""

from __future__ import annotations

import itertools
import posixpath
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profilec.codex.globs import glob_regex
from profilec.codex.lexical import EvaluationError, normalize_abs
from profilec.codex.resolve import EQUAL_PATH_RULE, MORE_SPECIFIC_RULE, EvalContext, resolve
from profilec.codex.vocabulary import MINIMAL_LINUX
from profilec.errors import InputError

CTX = EvalContext(cwd="/w", tmpdir="/t", home="/h")


def prof(fs: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """A one-profile `[permissions]` table named p."""
    table: dict[str, Any] = dict(kw)
    if fs is not None:
        table["filesystem"] = fs
    return {"p": table}


def access(perms: dict[str, Any], path: str, ctx: EvalContext = CTX, pid: str = "p") -> str | None:
    return resolve(perms, pid, ctx).decide(path).access


def test_read_only_builtin_reads_everything_writes_nothing() -> None:
    eff = resolve({}, ":read-only", CTX)
    assert eff.decide("/etc/passwd").access == "read"
    assert not eff.decide("/w/x").writable
    assert not eff.network_enabled


def test_workspace_builtin_writes_roots_and_tmp_with_carve_outs() -> None:
    eff = resolve({}, ":workspace", CTX)
    assert eff.decide("/w/src").writable and eff.decide("/tmp/x").writable
    assert eff.decide("/t/x").writable
    for name in (".git", ".agents", ".codex", ".aws"):
        assert eff.decide(f"/w/{name}/f").access == "read"
        assert eff.decide(f"/tmp/{name}").access == "read"  # run-time carve-out in /tmp too


def test_carve_outs_apply_to_user_write_entries_without_extends() -> None:
    perms = prof({":root": "read", ":workspace_roots": "write", "/o": "write"})
    assert access(perms, "/w/.git/HEAD") == "read"
    assert access(perms, "/o/.codex") == "read"


def test_explicit_write_beats_carve_out_at_equal_path() -> None:
    perms = prof({":root": "read", ":workspace_roots": {".": "write", ".git": "write"}})
    assert access(perms, "/w/.git/x") == "write"


def test_no_carve_out_inside_write_entry_that_loses_to_deny() -> None:
    perms = prof({":root": "read", "/o": "write", "/o/": "deny"})
    assert access(perms, "/o/.git") == "deny"


def test_danger_full_access_is_unrestricted() -> None:
    eff = resolve({}, ":danger-full-access", CTX)
    assert eff.unrestricted and eff.network_enabled and eff.decide("/anything").writable


def test_most_specific_entry_wins() -> None:
    perms = prof({":root": "read", "/d": "deny", "/d/sub": "write"})
    assert access(perms, "/d/sub/f") == "write"
    assert access(perms, "/d/other") == "deny"
    d = resolve(perms, "p", CTX).decide("/d/sub/f")
    assert (d.winner is not None) and d.winner.path == "/d/sub"
    assert {r for _, r in d.beaten} == {MORE_SPECIFIC_RULE}


def test_equal_path_deny_beats_write() -> None:
    perms = prof({"/w": "deny", ":workspace_roots": "write", ":root": "read"})
    d = resolve(perms, "p", CTX).decide("/w/f")
    assert d.access == "deny"
    assert any(r == EQUAL_PATH_RULE and e.access == "write" for e, r in d.beaten)


def test_equal_path_write_beats_read() -> None:
    assert access(prof({"/w": "read", ":workspace_roots": "write"}), "/w") == "write"


def test_prefix_is_by_component_not_by_string() -> None:
    perms = prof({":root": "read", "/a/b": "deny"})
    assert access(perms, "/a/bc") == "read"


def test_root_write_keeps_a_deny() -> None:
    assert access(prof({":root": "write", "/o": "deny"}), "/o/x") == "deny"


def test_no_filesystem_section_means_nothing_readable() -> None:
    eff = resolve(prof(), "p", CTX)
    assert eff.entries == () and eff.decide("/etc").access is None
    assert any("remain restricted" in w for w in eff.warnings)


def test_network_enabled_only_when_true() -> None:
    assert resolve(prof({":root": "read"}, network={"enabled": True}), "p", CTX).network_enabled
    assert not resolve(prof({":root": "read"}, network={}), "p", CTX).network_enabled


def test_extends_deep_merges_parent_first() -> None:
    perms = {
        "q": {"filesystem": {":root": "read", ":workspace_roots": {".": "write", "t": "read"}}},
        "p": {"extends": "q", "filesystem": {":workspace_roots": {"s": "deny"}}},
    }
    eff = resolve(perms, "p", CTX)
    assert eff.decide("/w/x").writable and eff.decide("/w/t").access == "read"
    assert eff.decide("/w/s").access == "deny"


def test_child_table_replaces_parent_string() -> None:
    perms = {
        "q": {"filesystem": {":root": "read", ":workspace_roots": "write"}},
        "p": {"extends": "q", "filesystem": {":workspace_roots": {"s": "deny"}}},
    }
    assert access(perms, "/w/x") == "read"


def test_extending_workspace_merges_into_its_workspace_roots_table() -> None:
    perms = prof({":workspace_roots": {"k": "read"}}, extends=":workspace")
    assert access(perms, "/w/x") == "write" and access(perms, "/w/k") == "read"


def test_minimal_special_expands_to_linux_list() -> None:
    eff = resolve(prof({":minimal": "read"}), "p", CTX)
    assert {e.path for e in eff.entries} == set(MINIMAL_LINUX)


def test_tmpdir_unset_covers_nothing() -> None:
    ctx = EvalContext(cwd="/w")
    assert access(prof({":tmpdir": "write"}), "/t", ctx) is None


def test_slash_tmp_and_project_roots_alias() -> None:
    perms = prof({":slash_tmp": "write", ":project_roots": "read"})
    assert access(perms, "/tmp/a") == "write" and access(perms, "/w/a") == "read"


def test_workspace_roots_table_adds_roots_relative_to_cwd() -> None:
    perms = prof(
        {":workspace_roots": "write"}, workspace_roots={"/e": True, "rel": True, "/n": False}
    )
    eff = resolve(perms, "p", EvalContext(cwd="/w", workspace_roots=("/add",)))
    assert eff.workspace_roots == ("/w", "/add", "/e", "/w/rel")
    assert eff.decide("/e/x").writable and eff.decide("/n").access is None


def test_home_keys_expand_and_unset_home_matches_nothing() -> None:
    perms = prof({"~/s": "deny", "~": "read"})
    assert access(perms, "/h/s/k") == "deny" and access(perms, "/h/x") == "read"
    eff = resolve(perms, "p", EvalContext(cwd="/w"))
    assert eff.entries == () and eff.warnings


def test_unknown_special_ignored_with_warning() -> None:
    eff = resolve(prof({":cwd": "write", ":root": "read"}), "p", CTX)
    assert not eff.decide("/w").writable and any(":cwd" in w for w in eff.warnings)


def test_scoped_table_dot_means_root_itself() -> None:
    perms = prof({"/o": {".": "write", "s": "deny"}})
    assert access(perms, "/o/x") == "write" and access(perms, "/o/s") == "deny"


def test_absolute_keys_normalized_lexically() -> None:
    eff = resolve(prof({"/x/../z": "deny", "//w2/": "deny", "/a/./b": "deny"}), "p", CTX)
    assert {e.path for e in eff.entries} == {"/z", "/w2", "/a/b"}


def test_deny_glob_matches_path_or_ancestor() -> None:
    perms = prof({":root": "read", ":workspace_roots": {"**/*.env": "deny"}})
    assert access(perms, "/w/.env") == "deny"
    assert access(perms, "/w/a/b/c.env") == "deny"
    assert access(perms, "/w/d.env/inner") == "deny"
    assert access(perms, "/w/a/env") == "read"


def test_glob_star_does_not_cross_slash() -> None:
    rx = glob_regex("/a/*.txt")
    assert rx.fullmatch("/a/x.txt") and not rx.fullmatch("/a/b/x.txt")
    assert glob_regex("/a/?.t").fullmatch("/a/x.t") and not glob_regex("/a/?.t").fullmatch(
        "/a/xy.t"
    )


def test_trailing_double_star_read_is_subtree() -> None:
    eff = resolve(prof({"/a/**": "read"}), "p", CTX)
    assert [(e.kind, e.path) for e in eff.entries] == [("path", "/a")]


def test_double_star_glob_without_scan_depth_warns() -> None:
    eff = resolve(prof({":root": "read", "/a/**/*.k": "deny"}), "p", CTX)
    assert any("glob_scan_max_depth" in w for w in eff.warnings)
    eff2 = resolve(prof({":root": "read", "/a/**/*.k": "deny", "glob_scan_max_depth": 2}), "p", CTX)
    assert eff2.warnings == ()


def test_special_table_with_only_dot_is_accepted() -> None:
    assert access(prof({":root": {".": "read"}}), "/x") == "read"


def test_none_is_a_deny_alias() -> None:
    assert access(prof({":root": "none"}), "/x") == "deny"


@pytest.mark.parametrize(
    ("perms", "pid", "message"),
    [
        (prof({"rel/x": "deny"}), "p", "must be absolute, use `~/...`, or start with `:`"),
        (prof({"/a/*.txt": "read"}), "p", "only supports `deny` access"),
        (prof({":tmpdir": {"x": "deny"}}), "p", "does not support nested entries"),
        (prof({":root": {".": "read", "x": "deny"}}), "p", "does not support nested entries"),
        (prof({":workspace_roots": {"../x": "deny"}}), "p", "must be a descendant path"),
        (prof({":workspace_roots": {"/abs": "deny"}}), "p", "must be a descendant path"),
        (prof({":bogus": {"*.txt": "deny"}}), "p", "only supports `deny` access"),
        (prof(extends="zzz"), "p", "extends undefined profile `zzz`"),
        (prof(extends=":danger-full-access"), "p", "cannot extend unsupported built-in"),
        ({"p": {"extends": "q"}, "q": {"extends": "p"}}, "p", "cycle detected: p -> q -> p"),
        (prof({":root": "hide"}), "p", "did not match any variant"),
        ({"p": {}, "q": {"filesystem": {"/x": "hide"}}}, ":workspace", "did not match any variant"),
        ({":mine": {}}, ":mine", "reserved built-in profile prefix"),
        ({}, "nope", "undefined profile `nope`"),
        ({}, ":nope", "unknown built-in profile `:nope`"),
    ],
)
def test_codex_refusals_raise_evaluation_error(
    perms: dict[str, Any], pid: str, message: str
) -> None:
    with pytest.raises(EvaluationError, match=None) as info:
        resolve(perms, pid, CTX)
    assert message in info.value.message
    assert isinstance(info.value, InputError)


def test_entries_sorted_deterministically() -> None:
    a = resolve(prof({"/b": "read", "/a": "deny", ":root": "read"}), "p", CTX).entries
    b = resolve(prof({":root": "read", "/a": "deny", "/b": "read"}), "p", CTX).entries
    assert a == b and [e.path for e in a] == sorted(e.path for e in a)


_SEG = st.sampled_from(["a", "b", "c", ".git", "x.env"])
_PATH = st.lists(_SEG, min_size=1, max_size=4).map(lambda xs: "/w/" + "/".join(xs))
_ACC = st.sampled_from(["read", "write", "deny"])


@st.composite
def _profiles(draw: st.DrawFn) -> dict[str, Any]:
    fs: dict[str, Any] = draw(st.dictionaries(_PATH, _ACC, max_size=6))
    if draw(st.booleans()):
        fs[":root"] = draw(_ACC)
    if draw(st.booleans()):
        fs[":workspace_roots"] = draw(_ACC)
    ext = draw(st.sampled_from([None, ":read-only", ":workspace"]))
    return prof(fs) if ext is None else prof(fs, extends=ext)


@settings(max_examples=150, deadline=None)
@given(_profiles(), _PATH)
def test_property_deny_at_exact_query_path_always_denies(perms: dict[str, Any], path: str) -> None:
    perms["p"]["filesystem"][path] = "deny"
    assert access(perms, path) == "deny"
    assert access(perms, path + "/child") == "deny" or path + "/child" in perms["p"]["filesystem"]


@settings(max_examples=150, deadline=None)
@given(_profiles(), _PATH)
def test_property_decide_matches_linear_scan(perms: dict[str, Any], path: str) -> None:
    eff = resolve(perms, "p", CTX)
    rank = {"read": 0, "write": 1, "deny": 2}
    covering = [
        e for e in eff.entries if path == e.path or path.startswith(e.path.rstrip("/") + "/")
    ]
    want = max(covering, key=lambda e: (len(e.path.rstrip("/")), rank[e.access]), default=None)
    assert eff.decide(path).access == (want.access if want else None)


@settings(max_examples=150, deadline=None)
@given(_profiles(), _PATH, st.booleans())
def test_property_winner_is_decides_access_and_winner(
    perms: dict[str, Any], path: str, with_glob: bool
) -> None:
    """winner() (what resolve's carve-out pass and compile's proof ask) gives decide()'s access
    and winning entry, with exact entries only and with a deny glob among them."""
    if with_glob:
        perms["p"].setdefault("filesystem", {})["/w/*/x.env"] = "deny"
    eff = resolve(perms, "p", CTX)
    for query in (path, path + "/child", "/w", "/"):
        d = eff.decide(query)
        assert eff.winner(query) == (d.access, d.winner), query


def test_normalize_abs_equals_lexical_normalization_on_every_segment_shape() -> None:
    """The fast path (a path already normal is returned as is) agrees with the lexical
    normalization for empty, `.`, `..` and dot-named segments (`/.git` is already normal)."""
    segments = ["", ".", "..", "a", ".git", "..x", "x.", "..."]
    count = 0
    for n in range(1, 5):
        for combo in itertools.product(segments, repeat=n):
            for path in ("/" + "/".join(combo), "//" + "/".join(combo)):
                want = "/" + posixpath.normpath(path).lstrip("/")
                assert normalize_abs(path) == want, path
                count += 1
    assert count == 2 * sum(len(segments) ** n for n in range(1, 5))
    assert normalize_abs("/w/.git") == "/w/.git" and normalize_abs("/w/./.git/..") == "/w"
