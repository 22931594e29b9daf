"""The enforcement model (profilec.codex.enforce): one test per class, each a minimized case
from the differential tester or the measurements in docs/codex-semantics.md (Codex 0.171.0)."""

from __future__ import annotations

from typing import Any

from profilec.codex.enforce import enforce
from profilec.codex.fsview import FsKind, FsSnapshot
from profilec.codex.globs import escape_literal, glob_regex
from profilec.codex.resolve import EvalContext, resolve

B = "/b"


def _fs(kinds: dict[str, FsKind], links: dict[str, str] | None = None) -> FsSnapshot:
    base: dict[str, FsKind] = {"/": "dir", B: "dir"}
    base.update(kinds)
    for p, _v in (links or {}).items():
        base[p] = "link"
    return FsSnapshot(base, links or {})


def _enf(fs_table: dict[str, Any], fs: FsSnapshot, cwd: str = f"{B}/ws", **kw: Any) -> Any:
    perms = {"p": {"filesystem": fs_table, **kw}}
    return enforce(resolve(perms, "p", EvalContext(cwd=cwd, tmpdir=f"{B}/tmp")), fs)


TREE = _fs(
    {
        f"{B}/ws": "dir",
        f"{B}/tmp": "dir",
        f"{B}/real": "dir",
        f"{B}/real/d": "dir",
        f"{B}/real/d/f": "file",
        f"{B}/real/e": "dir",
    },
    {f"{B}/lnk": "real"},
)


def test_symlinked_cwd_drops_denies_spelled_by_the_real_path() -> None:
    # measured: -C <link> with :workspace, deny on <real>/d/f -> `cat` read the file
    enf = _enf(
        {":workspace_roots": "write", ":root": "read", f"{B}/real/d/f": "deny"},
        TREE,
        cwd=f"{B}/lnk",
    )
    assert enf.decide(f"{B}/real/d/f").readable
    assert enf.decide(f"{B}/lnk/d/f").readable
    # the policy still says deny: only enforcement differs
    assert enf.profile.decide(f"{B}/real/d/f").access == "deny"
    # the same deny with the cwd spelled by its real path is enforced
    ok = _enf(
        {":workspace_roots": "write", ":root": "read", f"{B}/real/d/f": "deny"},
        TREE,
        cwd=f"{B}/real",
    )
    assert ok.decide(f"{B}/real/d/f").access == "deny"


def test_symlinked_writable_root_keeps_denies_spelled_through_the_link() -> None:
    enf = _enf(
        {":workspace_roots": "write", ":root": "read", f"{B}/lnk/d/f": "deny"}, TREE, cwd=f"{B}/lnk"
    )
    assert enf.decide(f"{B}/real/d/f").access == "deny"


def test_symlinked_write_key_makes_read_entries_under_the_real_dir_writable() -> None:
    enf = _enf({":root": "read", f"{B}/lnk": "write", f"{B}/real/e": "read"}, TREE)
    assert enf.decide(f"{B}/real/e/new").writable
    assert enf.decide(f"{B}/real/.git/x").access == "read"  # carve-out still applies


def test_deny_glob_masks_existing_files_only() -> None:
    fs = _fs(
        {
            f"{B}/g": "dir",
            f"{B}/g/dd": "dir",
            f"{B}/g/dd/in": "file",
            f"{B}/g/f": "file",
            f"{B}/ws": "dir",
        }
    )
    enf = _enf({":root": "read", f"{B}/g/*": "deny"}, fs)
    assert enf.decide(f"{B}/g/f").access == "deny"
    assert enf.decide(f"{B}/g/dd").readable  # a matched directory stays readable
    assert enf.decide(f"{B}/g/dd/in").readable
    assert enf.decide(f"{B}/g/later").readable  # created after start: not masked
    # without filesystem facts no glob counts as enforced (the proof stays on the safe side)
    assert enforce(enf.profile, None).decide(f"{B}/g/f").readable


def test_backslash_escapes_in_globs_and_literal_keys_with_metacharacters_are_patterns() -> None:
    names = ["a*b", "aXb", "ab", "a?b"]
    fs = _fs({f"{B}/g": "dir", f"{B}/ws": "dir", **{f"{B}/g/{n}": "file" for n in names}})
    pattern = _enf({":root": "read", f"{B}/g/a*b": "deny"}, fs)
    assert all(pattern.decide(f"{B}/g/{n}").access == "deny" for n in names)
    escaped = _enf({":root": "read", f"{B}/g/a\\*b": "deny"}, fs)
    assert [n for n in names if escaped.decide(f"{B}/g/{n}").access == "deny"] == ["a*b"]


def test_globset_syntax_measured() -> None:
    assert glob_regex("/g/a{X,x}*").fullmatch("/g/ax")
    assert glob_regex("/g/a[!X]b").fullmatch("/g/aYb") and not glob_regex("/g/a[!X]b").fullmatch(
        "/g/aXb"
    )
    assert glob_regex("/g/a[b*").fullmatch("/g/a[b")  # an unclosed `[` is literal
    assert not glob_regex("/g/d*n").fullmatch("/g/dd/in")  # `*` stays in one component
    assert glob_regex("/g/a\\\\*").fullmatch("/g/a\\b")


def test_the_literal_prefix_of_a_glob_is_a_plain_name() -> None:
    # measured: `/h/{dd,x}/in` and `/h/d\{z/f*` masked nothing (no directory of that name);
    # difftest 20261204:97: `/o/back\slash/m*` masked `/o/back\slash/m6`
    fs = _fs(
        {
            f"{B}/h": "dir",
            f"{B}/h/dd": "dir",
            f"{B}/h/dd/in": "file",
            f"{B}/ws": "dir",
            f"{B}/o": "dir",
            f"{B}/o/back\\slash": "dir",
            f"{B}/o/back\\slash/m6": "file",
        }
    )
    enf = _enf({":root": "read", f"{B}/h/{{dd,x}}/in": "deny", f"{B}/o/back\\slash/m*": "deny"}, fs)
    assert enf.decide(f"{B}/h/dd/in").readable
    assert enf.decide(f"{B}/o/back\\slash/m6").access == "deny"


def test_minimal_deny_is_not_enforced() -> None:
    enf = _enf({":root": "read", ":minimal": "deny"}, TREE)
    assert enf.profile.decide("/etc/hostname").access == "deny"
    assert enf.decide("/etc/hostname").readable


def test_root_write_without_restrictions_lifts_nested_carve_outs() -> None:
    enf = _enf({":root": "write", ":workspace_roots": "write"}, TREE)
    assert enf.profile.decide(f"{B}/ws/.git/x").access == "read"
    assert enf.decide(f"{B}/ws/.git/x").writable
    kept = _enf({":root": "write", ":workspace_roots": "write", f"{B}/real/d/f": "deny"}, TREE)
    assert kept.decide(f"{B}/ws/.git/x").access == "read"


def test_read_entry_inside_a_denied_directory_is_unreachable_but_write_is_not() -> None:
    fs = _fs({f"{B}/d": "dir", f"{B}/d/x": "dir", f"{B}/d/x/s": "file", f"{B}/ws": "dir"})
    enf = _enf({":root": "read", f"{B}/d": "deny", f"{B}/d/x": "read"}, fs)
    assert enf.profile.decide(f"{B}/d/x/s").access == "read"
    assert enf.decide(f"{B}/d/x/s").access == "deny"
    w = _enf({":root": "read", f"{B}/d": "deny", f"{B}/d/x": "write"}, fs)
    assert w.decide(f"{B}/d/x/s").writable


def test_cwd_with_glob_characters_is_a_literal_root() -> None:
    # difftest 20261203:13: a cwd named `q?` made resolve() refuse; Codex runs it
    fs = _fs({f"{B}/q?": "dir"})
    perms = {"p": {"extends": ":workspace", "filesystem": {}}}
    eff = resolve(perms, "p", EvalContext(cwd=f"{B}/q?"))
    assert enforce(eff, fs).decide(f"{B}/q?/x").writable
    # and a scoped table under a literal path holding `*` (20261203:59)
    scoped = {"p": {"filesystem": {":root": "read", f"{B}/x*y": {"m": "read"}}}}
    assert resolve(scoped, "p", EvalContext(cwd=f"{B}/ws")).decide(f"{B}/x*y/m").access == "read"


def test_refusals_measured() -> None:
    fs = _fs(
        {f"{B}/ws": "dir", f"{B}/d": "dir", f"{B}/d/file": "file", f"{B}/tgt": "dir"},
        {f"{B}/ws/dl": f"{B}/tgt"},
    )

    def codes(t: dict[str, Any]) -> set[str]:
        return {r.code for r in _enf(t, fs).refusals}

    assert codes({":root": "read", f"{B}/d/file": "write"}) == {"write-on-file"}
    assert codes({":root": "read", f"{B}/d": "deny", f"{B}/d/file": "deny"}) == {
        "deny-inside-denied-dir"
    }
    assert codes({":root": "read", f"{B}/d": "deny", f"{B}/d/nofile": "deny"}) == set()
    assert codes({":root": "read", ":workspace_roots": "write", f"{B}/ws/dl": "read"}) == {
        "crosses-writable-symlink"
    }
    assert codes(
        {
            ":root": "read",
            ":workspace_roots": "write",
            f"{B}/ws/m1/a": "read",
            f"{B}/ws/m1/b": "deny",
        }
    ) == {"missing-nested-entries"}
    assert codes({":root": "read", ":workspace_roots": "write", f"{B}/ws/m2/a": "read"}) == set()


def test_escape_literal() -> None:
    assert escape_literal("/x/a b/{c,d}/back\\slash") == "/x/a b/{c,d}/back\\slash"
    assert escape_literal("/x/auth\\*.json") == "/x/auth\\\\\\*.json"
    assert escape_literal("/x/a[b]/q?") == "/x/a\\[b\\]/q\\?"
    assert escape_literal("/x/a*b", access="read") is None
    assert escape_literal("/x/a*b", is_dir=True) is None
    assert escape_literal("/x/w{/a*") == "/x/w{/a\\*"  # the literal prefix stays as written
    assert escape_literal("/x/a*/w{/f") is None  # `{` in a directory component of the pattern
    assert escape_literal("/x/back\\slash/a*") == "/x/back\\slash/a\\*"
    # every escaped key matches exactly its own name
    for name in ("a*b", "a\\*b", "q?", "[br]", "s p*", "]z", "w{*", "x}?"):
        key = escape_literal(f"/g/{name}")
        assert key is not None
        rx = glob_regex(key)
        assert rx.fullmatch(f"/g/{name}")
        assert not any(rx.fullmatch(f"/g/{o}") for o in ("aXb", "ab", "q", "b", "s p", "z"))


def test_a_link_inside_a_denied_directory_is_followed() -> None:
    # difftest 20261204:269: `<tmp>` denied, `<tmp>/l0 -> <ws>/docs/m4`, ws writable: written
    fs = _fs(
        {f"{B}/tmp": "dir", f"{B}/ws": "dir", f"{B}/ws/docs": "dir", f"{B}/ws/docs/m4": "file"},
        {f"{B}/tmp/l0": f"{B}/ws/docs/m4"},
    )
    enf = _enf({":root": "read", ":workspace_roots": "write", f"{B}/tmp": "deny"}, fs)
    assert enf.decide(f"{B}/tmp/l0").writable


def test_a_deny_key_that_is_a_link_under_a_symlinked_cwd_is_dropped() -> None:
    # difftest 20261204:567: cwd `<tmp>/src/l2 -> <home>`, deny `<home>/vaultl0 -> <tmp>/src/.git`
    fs = _fs(
        {
            f"{B}/tmp": "dir",
            f"{B}/tmp/src": "dir",
            f"{B}/tmp/src/.git": "dir",
            f"{B}/tmp/src/.git/m7": "file",
            f"{B}/home": "dir",
        },
        {f"{B}/tmp/src/l2": f"{B}/home", f"{B}/home/vaultl0": f"{B}/tmp/src/.git"},
    )
    perms = {"p": {"extends": ":workspace", "filesystem": {f"{B}/home/vaultl0": "deny"}}}
    eff = resolve(perms, "p", EvalContext(cwd=f"{B}/tmp/src/l2"))
    enf = enforce(eff, fs)
    assert enf.decide(f"{B}/tmp/src/.git/m7").readable
    assert [d.entry.path for d in enf.dropped] == [f"{B}/home/vaultl0"]


def test_link_keys_refuse_by_target_kind_and_spelling() -> None:
    # the measured grid (docs/codex-semantics.md): absolute link to an existing file or dir
    # refuses, to nothing starts; a relative link starts unless it points at its own dir
    fs = _fs(
        {f"{B}/ws": "dir", f"{B}/o": "dir", f"{B}/o/d": "dir", f"{B}/o/f": "file"},
        {
            f"{B}/o/absdir": f"{B}/o/d",
            f"{B}/o/absfile": f"{B}/o/f",
            f"{B}/o/absparent": f"{B}/o",
            f"{B}/o/absmissing": f"{B}/o/missing",
            f"{B}/o/reldir": "d",
            f"{B}/o/relfile": "f",
            f"{B}/o/reldot": ".",
            f"{B}/o/relmissing": "missing",
        },
    )

    def refused(key: str) -> bool:
        return bool(_enf({":root": "read", f"{B}/o/{key}": "deny"}, fs).refusals)

    assert [k for k in ("absdir", "absfile", "absparent", "absmissing") if refused(k)] == [
        "absdir",
        "absfile",
        "absparent",
    ]
    assert [k for k in ("reldir", "relfile", "reldot", "relmissing") if refused(k)] == ["reldot"]


def test_crossing_is_checked_below_every_containing_writable_root() -> None:
    # 20261204:148: cwd `<tmp>/k1/innerl0 -> .` plus workspace root `<tmp>/k1`: a deny under the
    # cwd spelling crosses the link below `<tmp>/k1`; with the cwd alone it does not (by hand)
    fs = _fs({f"{B}/k1": "dir", f"{B}/k1/m0": "file"}, {f"{B}/k1/innerl0": "."})
    both = {
        "p": {
            "extends": ":workspace",
            "workspace_roots": {f"{B}/k1": True},
            "filesystem": {":workspace_roots": {"m0": "deny"}},
        }
    }
    eff = resolve(both, "p", EvalContext(cwd=f"{B}/k1/innerl0"))
    assert {r.code for r in enforce(eff, fs).refusals} == {"crosses-writable-symlink"}
    alone = {"p": {"extends": ":workspace", "filesystem": {f"{B}/k1/innerl0/m0": "deny"}}}
    eff = resolve(alone, "p", EvalContext(cwd=f"{B}/k1/innerl0"))
    assert not enforce(eff, fs).refusals


def test_a_writable_root_below_an_inner_deny_shields_the_refusal() -> None:
    # 20261204:204: deny <tmp> and <tmp>/.codex (a dir) start when a writable root lies below
    fs = _fs(
        {f"{B}/tmp": "dir", f"{B}/tmp/.codex": "dir", f"{B}/tmp/.codex/w": "dir", f"{B}/ws": "dir"}
    )
    base = {":root": "read", f"{B}/tmp": "deny", f"{B}/tmp/.codex": "deny"}
    assert {r.code for r in _enf(base, fs).refusals} == {"deny-inside-denied-dir"}
    assert not _enf({**base, f"{B}/tmp/.codex/w": "write"}, fs).refusals


def test_before_0_171_a_glob_in_a_directory_component_masks_nothing() -> None:
    # difftest on 0.165.0 (20261204:38, 522, ...): `/o/x*y/m7` = deny left m7 readable
    fs = _fs({f"{B}/o": "dir", f"{B}/o/x*y": "dir", f"{B}/o/x*y/m7": "file", f"{B}/ws": "dir"})
    perms = {"p": {"filesystem": {":root": "read", f"{B}/o/x*y/m7": "deny"}}}
    eff = resolve(perms, "p", EvalContext(cwd=f"{B}/ws"))
    assert enforce(eff, fs).decide(f"{B}/o/x*y/m7").access == "deny"
    assert enforce(eff, fs, codex_version="0.165.0").decide(f"{B}/o/x*y/m7").readable


def test_a_lookup_in_a_denied_directory_fails_unless_the_target_is_writable() -> None:
    # difftest 20261204:67: `<o>` denied, `<o>/l1 -> <ws>` (read only): `cat <o>/l1/m0` fails
    fs = _fs(
        {f"{B}/o": "dir", f"{B}/ws": "dir", f"{B}/ws/m0": "file", f"{B}/tmp": "dir"},
        {f"{B}/o/l1": f"{B}/ws"},
    )
    enf = _enf({":root": "read", f"{B}/o": "deny"}, fs, cwd=f"{B}/tmp")
    assert enf.decide(f"{B}/o/l1/m0").access == "deny"
    assert enf.decide(f"{B}/ws/m0").readable


def test_a_read_key_that_is_a_link_does_not_make_its_target_read_only() -> None:
    # difftest 7:161: `<home>/l3 -> <tmp>/cfg/v` (a file under the writable TMPDIR) = read:
    # the sandbox started and the write through the link landed
    fs = _fs(
        {
            f"{B}/home": "dir",
            f"{B}/tmp": "dir",
            f"{B}/tmp/cfg": "dir",
            f"{B}/tmp/cfg/v": "file",
            f"{B}/ws": "dir",
        },
        {f"{B}/home/l3": f"{B}/tmp/cfg/v"},
    )
    enf = _enf({":root": "read", ":tmpdir": "write", f"{B}/home/l3": "read"}, fs)
    assert not enf.refusals
    assert enf.decide(f"{B}/home/l3").writable


def test_a_lookup_toward_a_nested_writable_root_passes_a_denied_directory() -> None:
    # difftest 20261204:1308: `<tmp>` denied, TMPDIR `<tmp>/vault` writable, `<tmp>/vault/l0 ->
    # <home>` (read only): `cat <tmp>/vault/l0/m1` read the file
    fs = _fs(
        {
            f"{B}/tmp": "dir",
            f"{B}/tmp/vault": "dir",
            f"{B}/home": "dir",
            f"{B}/home/m1": "file",
            f"{B}/ws": "dir",
        },
        {f"{B}/tmp/vault/l0": f"{B}/home"},
    )
    perms = {"p": {"extends": ":workspace", "filesystem": {f"{B}/tmp": "deny"}}}
    eff = resolve(perms, "p", EvalContext(cwd=f"{B}/ws", tmpdir=f"{B}/tmp/vault"))
    assert enforce(eff, fs).decide(f"{B}/tmp/vault/l0/m1").readable


def test_a_scoped_table_with_pattern_characters_in_its_key_and_a_deny_pattern_refuses() -> None:
    # 20261203:489/:504 and the measured grid (0.171.0): "unsupported configuration path
    # \"<key>\" using POSIX path syntax" needs both a key with `* ? [ ] { } \` and a deny
    # subpath with `* ? [ ] { }`; it does not depend on the filesystem
    fs = _fs({f"{B}/ws": "dir", f"{B}/o": "dir"})

    def refusals(key: str, sub: str, access: str = "deny") -> list[tuple[str, str, str]]:
        t = {":root": "read", f"{B}/o/{key}": {sub: access}}
        return [(r.code, r.path, r.message) for r in _enf(t, fs).refusals]

    for key in ("]z", "x*y", "q?", "[br]", "{c,d}", "z}", "w{", "back\\slash"):
        for sub in ("*", "{c,d}.t", "s p*/m6", "]", "f/**", "**/f"):
            assert refusals(key, sub) == [
                (
                    "unsupported-path-syntax",
                    f"{B}/o/{key}",
                    f'Error: unsupported configuration path "{B}/o/{key}" using POSIX path syntax',
                )
            ], (key, sub)
    for key in ("a b", "x!y", "c,d", "plain"):
        assert refusals(key, "*") == [], key
    assert refusals("x*y", "b\\s") == []
    assert refusals("x*y", "f") == []
    assert refusals("x*y", "f/**", "read") == []
    # braces refuse in a read or write subpath too (7:701; by hand)
    for access in ("read", "write"):
        for sub in ("w{", "a}", "{c,d}"):
            assert [c for c, _p, _m in refusals("x*y", sub, access)] == [
                "unsupported-path-syntax"
            ], (access, sub)
    assert refusals("plain", "w{", "read") == []
    # a special's expansion is no key: a cwd named x*y with a scoped :workspace_roots starts
    t = {":root": "read", ":workspace_roots": {"*": "deny"}}
    assert not _enf(t, _fs({f"{B}/x*y": "dir"}), cwd=f"{B}/x*y").refusals
    # a `~` key counts by its expansion, and the message names it (by hand, 0.171.0)
    perms = {"p": {"filesystem": {":root": "read", "~/x*y": {"*": "deny"}, "~": {"f": "deny"}}}}
    eff = resolve(perms, "p", EvalContext(cwd=f"{B}/ws", home=f"{B}/h"))
    assert [r.path for r in enforce(eff).refusals] == [f"{B}/h/x*y"]
    perms = {"p": {"filesystem": {":root": "read", "~": {"*": "deny"}}}}
    eff = resolve(perms, "p", EvalContext(cwd=f"{B}/ws", home=f"{B}/x*y"))
    assert [r.path for r in enforce(eff).refusals] == [f"{B}/x*y"]
    # configuration alone decides it: reported without a filesystem too
    perms = {"p": {"filesystem": {":root": "read", f"{B}/x*y": {"*": "deny"}}}}
    eff = resolve(perms, "p", EvalContext(cwd=f"{B}/ws"))
    assert [r.code for r in enforce(eff).refusals] == ["unsupported-path-syntax"]


def test_a_writable_root_between_shields_only_without_a_writable_root_above() -> None:
    # 20261203:190 and by hand (0.171.0): deny <d>, write <d>/inner, deny <d>/inner/f starts
    # with `:root` = read and refuses with `:root` = write
    fs = _fs({f"{B}/d": "dir", f"{B}/d/inner": "dir", f"{B}/d/inner/f": "file", f"{B}/c": "dir"})
    t = {f"{B}/d": "deny", f"{B}/d/inner": "write", f"{B}/d/inner/f": "deny"}
    assert not _enf({":root": "read", **t}, fs, cwd=f"{B}/c").refusals
    assert {r.code for r in _enf({":root": "write", **t}, fs, cwd=f"{B}/c").refusals} == {
        "deny-inside-denied-dir"
    }


def test_denies_hidden_by_a_linked_writable_root_still_refuse_nested() -> None:
    # 7:451: write key <l0> -> <ws>/lib drops the denies on <ws>/lib and <ws>/lib/m6 from the
    # enforced view, but under `:root` = write the sandbox still mounts them and refuses
    fs = _fs(
        {f"{B}/ws": "dir", f"{B}/ws/lib": "dir", f"{B}/ws/lib/m6": "file", f"{B}/h": "dir"},
        {f"{B}/h/l0": f"{B}/ws/lib"},
    )
    t = {":root": "write", f"{B}/h/l0": "write", f"{B}/ws/lib": "deny", f"{B}/ws/lib/m6": "deny"}
    enf = _enf(t, fs, cwd=f"{B}/h")
    assert {r.code for r in enf.refusals} == {"deny-inside-denied-dir"}
    # with `:root` = read the linked writable root onto the denied directory shields (by hand)
    assert not _enf({**t, ":root": "read"}, fs, cwd=f"{B}/h").refusals
    # ... but a glob inside such a dropped deny starts (20261203:413)
    g = {":root": "read", f"{B}/h/l0": "write", f"{B}/ws/lib": "deny", f"{B}/ws/lib/*": "deny"}
    assert not _enf(g, fs, cwd=f"{B}/h").refusals


def test_a_writable_root_spelled_through_a_link_shields_by_its_spelling() -> None:
    # 20261203:413: cwd `<o>/s/l3` -> `<ws>`, denies on `<o>` and `<o>/s` (a dir) start
    fs = _fs(
        {f"{B}/ws": "dir", f"{B}/o": "dir", f"{B}/o/s": "dir"},
        {f"{B}/o/s/l3": "../../ws"},
    )
    t = {":root": "read", ":workspace_roots": "write", f"{B}/o": "deny", f"{B}/o/s": "deny"}
    assert not _enf(t, fs, cwd=f"{B}/o/s/l3").refusals
    assert {r.code for r in _enf(t, fs, cwd=f"{B}/ws").refusals} == {"deny-inside-denied-dir"}


def test_an_absolute_link_key_to_a_chain_refuses_by_the_kind_at_its_end() -> None:
    # 20261203:105/:918/7:868 (chain to a dir), :729/7:951 (chain to a file); a chain to
    # nothing starts like a dangling link (not measured as a chain: the plain rule)
    fs = _fs(
        {f"{B}/ws": "dir", f"{B}/o": "dir", f"{B}/o/d": "dir", f"{B}/o/f": "file"},
        {
            f"{B}/o/hopd": f"{B}/o/d",
            f"{B}/o/hopf": "f",
            f"{B}/o/hopm": f"{B}/o/missing",
            f"{B}/o/kd": f"{B}/o/hopd",
            f"{B}/o/kf": f"{B}/o/hopf",
            f"{B}/o/km": f"{B}/o/hopm",
            f"{B}/o/rel": "hopd",
        },
    )

    def msgs(key: str) -> list[str]:
        return [r.message for r in _enf({":root": "read", f"{B}/o/{key}": "deny"}, fs).refusals]

    assert msgs("kd") == [
        f"bwrap: Can't mount tmpfs on /newroot{B}/o/kd: No such file or directory"
    ]
    assert msgs("kf") == [f"bwrap: Can't create file at {B}/o/kf: No such file or directory"]
    assert msgs("km") == []
    assert msgs("rel") == []


def test_an_entry_beaten_only_by_a_deny_glob_still_refuses() -> None:
    # 20261203:520: `<ws>/*` deny and a read on the dangling link `<ws>/l0` in writable <ws>;
    # 20261203:571: `<ws>/*` deny and a write on `<ws>/l0` -> a file
    fs = _fs(
        {f"{B}/ws": "dir", f"{B}/o": "dir", f"{B}/o/f": "file"},
        {f"{B}/ws/l0": f"{B}/o/missing", f"{B}/ws/l1": "../o/f"},
    )
    t = {":root": "read", ":workspace_roots": "write", f"{B}/ws/*": "deny"}
    assert {r.code for r in _enf({**t, f"{B}/ws/l0": "read"}, fs).refusals} == {
        "crosses-writable-symlink"
    }
    w = {":root": "read", f"{B}/ws/*": "deny", f"{B}/ws/l1": "write"}
    assert [r.message for r in _enf(w, fs).refusals] == [
        f"bwrap: Can't mkdir parents for {B}/o/f/.git: Not a directory"
    ]


def test_an_entry_on_a_missing_carve_out_name_refuses_even_when_a_glob_hid_the_carve_out() -> None:
    # by hand (0.171.0): cwd <o>/d writable, deny <o>/d/.codex (missing) refuses with
    # `:root` = write "Can't mkdir <o>/d/.codex: Not a directory", with `:root` = read "Can't
    # create file at <o>/d/.codex: Is a directory"; a deny glob `<o>/*` matching the root's
    # own path keeps the carve-outs out of the compiled list but not out of the sandbox
    # (20261203:950, 7:354)
    fs = _fs({f"{B}/o": "dir", f"{B}/o/d": "dir", f"{B}/o/d/f": "file"})
    for root, msg in (
        ("write", f"bwrap: Can't mkdir {B}/o/d/.codex: Not a directory"),
        ("read", f"bwrap: Can't create file at {B}/o/d/.codex: Is a directory"),
    ):
        t = {":root": root, ":workspace_roots": "write", f"{B}/o/d/.codex": "deny"}
        for table in (t, {**t, f"{B}/o/*": "deny"}):
            got = [(r.code, r.message) for r in _enf(table, fs, cwd=f"{B}/o/d").refusals]
            assert got == [("missing-nested-entries", msg)], (root, table)
    # a read entry at the carve-out's path stands for the carve-out (what compile emits)
    t = {":root": "read", ":workspace_roots": "write", f"{B}/o/d/.git": "read"}
    assert not _enf(t, fs, cwd=f"{B}/o/d").refusals


def test_one_entry_below_a_missing_carve_out_starts() -> None:
    # 20261203:189, :765, 7:332: `.git/m5` read in a writable root without `.git` started
    fs = _fs({f"{B}/ws": "dir"})
    t = {":root": "read", ":workspace_roots": {".": "write", ".git/m5": "read"}}
    assert not _enf(t, fs).refusals
    two = {":root": "read", ":workspace_roots": {".": "write", ".git/a": "read", ".git/b": "deny"}}
    assert {r.code for r in _enf(two, fs).refusals} == {"missing-nested-entries"}


def test_cwd_denied_is_decided_by_the_real_directory() -> None:
    # 20261203:45: cwd `<home>/l0` -> `<tmp>/cfg`, `<home>` denied: started (the real dir is
    # readable); the real directory denied refuses (PC039's measured case)
    fs = _fs(
        {f"{B}/home": "dir", f"{B}/tmp": "dir", f"{B}/tmp/cfg": "dir", f"{B}/ws": "dir"},
        {f"{B}/home/l0": f"{B}/tmp/cfg"},
    )
    cwd = f"{B}/home/l0"
    assert not _enf({":root": "read", f"{B}/home": "deny"}, fs, cwd=cwd).refusals
    denied = _enf({":root": "read", f"{B}/tmp/cfg": "deny"}, fs, cwd=cwd)
    assert {r.code for r in denied.refusals} == {"cwd-denied"}


def test_a_deny_glob_over_a_linked_cwd_spelled_with_a_backslash_refuses_the_chdir() -> None:
    # 7:564 and by hand: cwd `<h>/b\s/l0` -> `../k1`, `:workspace_roots` = {"[br].t3" = "deny"}
    # refuses "Can't chdir to <h>/k1: Permission denied"; an exact subpath, or no link, starts
    fs = _fs(
        {f"{B}/h": "dir", f"{B}/h/k1": "dir", f"{B}/h/b\\s": "dir"},
        {f"{B}/h/b\\s/l0": "../k1"},
    )
    cwd = f"{B}/h/b\\s/l0"
    got = _enf({":root": "read", ":workspace_roots": {"[br].t3": "deny"}}, fs, cwd=cwd).refusals
    assert [(r.code, r.message) for r in got] == [
        ("cwd-denied", f"bwrap: Can't chdir to {B}/h/k1: Permission denied")
    ]
    assert not _enf({":root": "read", ":workspace_roots": {"x.t3": "deny"}}, fs, cwd=cwd).refusals
    real = f"{B}/h/b\\s"
    t = {":root": "read", ":workspace_roots": {"[br].t3": "deny"}}
    assert not _enf(t, fs, cwd=real).refusals


def test_a_scoped_workspace_glob_over_a_glob_named_cwd_refuses_another_globs_mask() -> None:
    # 7:22 and by hand: cwd `<ws>/s/x*y`, `:workspace_roots` = {"m*" = "deny"} plus the glob
    # `<ws>/s/x*y/??` refuses; either alone, or a cwd without glob characters, starts
    root = f"{B}/ws/s/x*y"
    fs = _fs({f"{B}/ws": "dir", f"{B}/ws/s": "dir", root: "dir", f"{root}/m8": "file"})
    both = {":root": "read", ":workspace_roots": {".": "write", "m*": "deny"}, f"{root}/??": "deny"}
    got = [(r.code, r.path) for r in _enf(both, fs, cwd=root).refusals]
    assert got == [("deny-inside-denied-dir", f"{root}/m8")]
    alone = {":root": "read", ":workspace_roots": {".": "write", "m*": "deny"}}
    assert not _enf(alone, fs, cwd=root).refusals
    assert not _enf({":root": "read", f"{root}/??": "deny"}, fs, cwd=root).refusals
    plain = f"{B}/ws/s/d"
    fs2 = _fs({f"{B}/ws": "dir", f"{B}/ws/s": "dir", plain: "dir", f"{plain}/m8": "file"})
    t = {":root": "read", ":workspace_roots": {".": "write", "m*": "deny"}, f"{plain}/??": "deny"}
    assert not _enf(t, fs2, cwd=plain).refusals


def test_a_missing_deny_inside_a_denied_directory_refuses_only_below_a_writable_root() -> None:
    # by hand (0.171.0): `<o>` and `<o>/k1/vault` (k1 missing) denied start under `:root` = read
    # and refuse under `:root` = write; a missing file in an existing directory likewise
    # (20261203:826 started, 7:848 refused)
    fs = _fs({f"{B}/ws": "dir", f"{B}/o": "dir", f"{B}/o/src": "dir"})
    for inner in (f"{B}/o/k1/vault", f"{B}/o/src/g"):
        t = {f"{B}/o": "deny", inner: "deny"}
        assert not _enf({":root": "read", **t}, fs).refusals, inner
        got = {r.code for r in _enf({":root": "write", **t}, fs).refusals}
        assert got == {"deny-inside-denied-dir"}, inner


def test_an_inner_deny_mounted_before_the_outer_tmpfs_starts() -> None:
    # bwrap argv on 0.171.0: deny mounts go by spelled depth, then path. A relative link deny
    # key `<h>/l0` -> `../o` is mounted before `<o>/m3` (refuses); `<h>/n/l0` -> `../../o` after
    # it, so its tmpfs hides the inner mount (starts; 20261203:391, :879)
    kinds: dict[str, FsKind] = {f"{B}/ws": "dir", f"{B}/h": "dir", f"{B}/h/n": "dir"}
    kinds.update({f"{B}/o": "dir", f"{B}/o/m3": "file"})
    fs = _fs(kinds, {f"{B}/h/l0": "../o", f"{B}/h/n/l0": "../../o"})
    for inner in (f"{B}/o/m*", f"{B}/o/m3"):
        one = _enf({":root": "read", f"{B}/h/l0": "deny", inner: "deny"}, fs).refusals
        assert {r.code for r in one} == {"deny-inside-denied-dir"}, inner
        assert not _enf({":root": "read", f"{B}/h/n/l0": "deny", inner: "deny"}, fs).refusals


def test_read_entry_inside_a_denied_directory_is_denied_unless_a_write_lies_between() -> None:
    """A read entry below a deny is unreachable (mode-000 tmpfs above it) and enforced as a
    deny; a write entry between the two (below the deny, above the read) keeps it a read."""
    fs = _fs({f"{B}/d": "dir", f"{B}/d/w": "dir", f"{B}/d/w/r": "dir", f"{B}/d/r": "dir"})
    table = {":root": "read", f"{B}/d": "deny", f"{B}/d/r": "read"}
    enf = _enf(table, fs)
    got = {e.path: (e.access, e.source) for e, _r in enf.exact}
    assert got[f"{B}/d/r"] == ("deny", f"{B}/d/r (inside a denied directory)")
    assert enf.decide(f"{B}/d/r/x").access == "deny"
    enf = _enf({**table, f"{B}/d/w": "write", f"{B}/d/w/r": "read"}, fs)
    got = {e.path: (e.access, e.source) for e, _r in enf.exact}
    assert got[f"{B}/d/w/r"] == ("read", f"{B}/d/w/r")  # the write between keeps it a read
    assert got[f"{B}/d/r"][0] == "deny"  # no write between: still denied
    assert got[f"{B}/d"] == ("deny", f"{B}/d")  # the deny itself is not nested in anything
