"""The enforcement model per Codex release (codex.enforce.model_for): each test a minimized
case measured on the real 0.166.0 and 0.171.0 binaries (docs/codex-semantics.md "Per Codex
version"), with the other release's model as the control where the releases differ."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from profilec.codex.enforce import enforce, model_for
from profilec.codex.enforced import MODEL_0_166, MODEL_0_171, Enforced
from profilec.codex.fsview import FsKind, FsSnapshot, LiveFs
from profilec.codex.resolve import EvalContext, resolve

B = "/b"
H = f"{B}/home"
FILES = ("ab", "abc", "a", "src/m5", "src/inner/m8", "xy/z", "q/r")


def _fs(files: tuple[str, ...] = FILES, links: dict[str, str] | None = None) -> FsSnapshot:
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", H: "dir", f"{B}/ws": "dir"}
    for f in files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            kinds[f"{H}/" + "/".join(parts[:i])] = "dir"
        kinds[f"{H}/{f}"] = "file"
    for p in links or {}:
        kinds[p] = "link"
    return FsSnapshot(kinds, links or {})


def _enf(table: dict[str, Any], fs: FsSnapshot, version: str) -> Enforced:
    perms = {"p": {"filesystem": table, "extends": ":workspace"}}
    eff = resolve(perms, "p", EvalContext(cwd=f"{B}/ws"))
    return enforce(eff, fs, codex_version=version)


def _masked(enf: Enforced) -> list[str]:
    return [f for f in FILES if enf.decide(f"{H}/{f}").access == "deny"]


def test_the_release_picks_the_model() -> None:
    assert model_for(None) is MODEL_0_171
    assert model_for("0.171.0") is MODEL_0_171
    assert model_for("0.172.0-alpha.1") is MODEL_0_171
    assert model_for("0.166.0") is MODEL_0_166
    assert model_for("0.170.2") is MODEL_0_166


@pytest.mark.parametrize(
    ("glob", "on_0_171", "on_0_166"),
    [
        # measured with `:root` = read, one deny glob at a time
        ("?", ["a"], ["a", "xy/z", "q/r"]),
        ("??", ["ab"], ["ab", "src/m5", "src/inner/m8"]),
        ("*", ["ab", "abc", "a"], list(FILES)),
        ("src/*", ["src/m5"], ["src/m5", "src/inner/m8"]),
        ("s*/m5", ["src/m5"], []),
        ("**/m8", ["src/inner/m8"], ["src/inner/m8"]),
    ],
)
def test_before_0_171_a_deny_glob_matches_file_names(
    glob: str, on_0_171: list[str], on_0_166: list[str]
) -> None:
    table = {":root": "read", f"{H}/{glob}": "deny"}
    assert _masked(_enf(table, _fs(), "0.171.0")) == on_0_171
    assert _masked(_enf(table, _fs(), "0.166.0")) == on_0_166


def test_with_root_writable_0_166_matches_paths_as_0_171_does() -> None:
    # difftest 1:108 (0.166.0): `:root` = write, `<h>/vault/*` left `<h>/vault/src/m8` readable
    table = {":root": "write", f"{H}/*": "deny"}
    assert _masked(_enf(table, _fs(), "0.166.0")) == ["ab", "abc", "a"]
    assert _masked(_enf({**table, ":root": "read"}, _fs(), "0.166.0")) == list(FILES)


def test_a_name_matched_file_inside_a_denied_directory_refuses_on_0_166() -> None:
    # measured: `<h>/??` plus deny `<h>/src/inner` -> 0.166.0 "bwrap: Can't create file at
    # <h>/src/inner/m8: Read-only file system"; 0.171.0 starts
    table = {":root": "read", f"{H}/??": "deny", f"{H}/src/inner": "deny"}
    old = _enf(table, _fs(), "0.166.0").refusals
    assert [(r.code, r.path) for r in old] == [("deny-inside-denied-dir", f"{H}/src/inner/m8")]
    assert "Read-only file system" in old[0].message
    assert not _enf(table, _fs(), "0.171.0").refusals


@pytest.mark.parametrize("target", [f"{H}/src", f"{H}/a", f"{H}/missing"])
def test_a_deny_glob_on_a_link_under_root_write_refuses_on_0_166(target: str) -> None:
    # measured: `<ws>/l0*` with `<ws>/l0` -> a directory, a file or nothing, `:root` = write:
    # 0.166.0 "cannot enforce sandbox deny-read path <ws>/l0 because it crosses writable symlink
    # <ws>/l0"; 0.171.0 starts, and 0.166.0 starts with `:root` = read
    link = f"{B}/ws/l0"
    fs = _fs(links={link: target})
    table = {":root": "write", f"{link}*": "deny"}
    old = _enf(table, fs, "0.166.0").refusals
    assert [(r.code, r.path) for r in old] == [("crosses-writable-symlink", link)]
    assert old[0].message.endswith(f"crosses writable symlink {link}")
    assert not _enf(table, fs, "0.171.0").refusals
    assert not _enf({**table, ":root": "read"}, fs, "0.166.0").refusals


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_minimal_deny_keeps_a_write_only_profile(version: str) -> None:
    # difftest 1:236 and 3:264 (both releases): `:root` = write, `:minimal` = deny and a write
    # entry on a file started, and the carve-outs were writable
    fs = _fs(files=("f",))
    table = {":root": "write", ":minimal": "deny", f"{H}/f": "write"}
    enf = _enf(table, fs, version)
    assert not enf.refusals
    assert enf.decide(f"{B}/ws/.git/x").writable
    # control: a real deny brings the carve-outs, and the write on the file refuses
    denied = _enf({**table, f"{H}/ab": "deny"}, fs, version)
    assert [r.code for r in denied.refusals] == ["write-on-file"]
    assert not denied.decide(f"{B}/ws/.git/x").writable


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_a_denied_write_entry_is_no_writable_root_for_link_crossing(version: str) -> None:
    # difftest 2:293 (both releases): cwd `<h>` writable and denied, deny on the dangling link
    # `<h>/l3` started
    fs = _fs(files=(), links={f"{H}/l3": f"{B}/ws/missing"})
    table = {f"{H}": "deny", f"{H}/l3": "deny"}
    perms = {"p": {"filesystem": table, "extends": ":workspace"}}
    eff = resolve(perms, "p", EvalContext(cwd=H))
    assert not enforce(eff, fs, codex_version=version).refusals
    # control: with the cwd writable (no deny on it), the same link key crosses it
    open_cwd = resolve(
        {"p": {"filesystem": {f"{H}/l3": "deny"}, "extends": ":workspace"}},
        "p",
        EvalContext(cwd=H),
    )
    codes = [r.code for r in enforce(open_cwd, fs, codex_version=version).refusals]
    assert codes == ["crosses-writable-symlink"]


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_a_writable_root_below_the_inner_deny_shields_under_root_write(version: str) -> None:
    # difftest 1:23, by hand on both: `<t>` and `<t>/lib` denied, `:root` = write: the cwd at
    # `<t>/lib/lib/a b` starts; the cwd at `<t>/x` refuses "Can't mkdir <t>/lib: Read-only"
    t = f"{B}/t"
    kinds: dict[str, FsKind] = {
        "/": "dir",
        B: "dir",
        t: "dir",
        f"{t}/lib": "dir",
        f"{t}/lib/lib": "dir",
        f"{t}/lib/lib/a b": "dir",
        f"{t}/x": "dir",
    }
    fs = FsSnapshot(kinds)
    table = {":root": "write", t: "deny", f"{t}/lib": "deny"}
    perms: dict[str, Any] = {"p": {"filesystem": table, "extends": ":workspace"}}
    inside = resolve(perms, "p", EvalContext(cwd=f"{t}/lib/lib/a b"))
    assert not enforce(inside, fs, codex_version=version).refusals
    beside = resolve(perms, "p", EvalContext(cwd=f"{t}/x"))
    codes = [r.code for r in enforce(beside, fs, codex_version=version).refusals]
    assert codes == ["deny-inside-denied-dir"]


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
@pytest.mark.parametrize(
    ("deny", "mount_point"),
    [("zz", "zz"), ("br/lib/zz", "br/lib/zz"), ("q/zz", "q"), ("br/zz", "br/zz")],
)
def test_root_write_deny_on_a_missing_path_under_a_read_entry_refuses(
    version: str, deny: str, mount_point: str
) -> None:
    # by hand on both releases (difftest 2:110): `:root` = write, `<o>` read, a deny on a
    # missing path below it refuses "Can't create file at <M>: Read-only file system", also
    # with `<o>/br` writable; `:root` = read, or the path present, starts
    o = f"{B}/o"
    kinds: dict[str, FsKind] = {
        "/": "dir",
        B: "dir",
        o: "dir",
        f"{o}/br": "dir",
        f"{o}/br/lib": "dir",
        f"{B}/ws": "dir",
    }
    table = {":root": "write", o: "read", f"{o}/br": "write", f"{o}/{deny}": "deny"}
    got = _enf(table, FsSnapshot(kinds), version).refusals
    assert [(r.code, r.path) for r in got] == [("missing-nested-entries", f"{o}/{mount_point}")]
    assert got[0].message.endswith("Read-only file system")
    assert not _enf({**table, ":root": "read"}, FsSnapshot(kinds), version).refusals
    present = {**kinds, f"{o}/{deny}": "file"}
    if mount_point == deny:
        assert not _enf(table, FsSnapshot(present), version).refusals


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
@pytest.mark.parametrize("carve", [".git", ".agents", ".codex"])
def test_a_deny_below_a_missing_carve_out_refuses_a_read_starts(version: str, carve: str) -> None:
    # difftest 4:0; by hand on both releases: cwd `<ws>` with `:workspace_roots` =
    # {"<carve>/m4" = "deny"} refuses "Can't create file at <ws>/<carve>: Is a directory"; the
    # same key = "read" starts
    fs = FsSnapshot({"/": "dir", B: "dir", f"{B}/ws": "dir"})

    def refusals(access: str) -> list[tuple[str, str]]:
        perms = {
            "p": {
                "filesystem": {":root": "read", ":workspace_roots": {f"{carve}/m4": access}},
                "extends": ":workspace",
            }
        }
        eff = resolve(perms, "p", EvalContext(cwd=f"{B}/ws"))
        return [(r.code, r.path) for r in enforce(eff, fs, codex_version=version).refusals]

    assert refusals("deny") == [("missing-nested-entries", f"{B}/ws/{carve}")]
    assert refusals("read") == []


@pytest.mark.parametrize(
    ("root", "refuses_on"),
    [("b\\s", {"0.166.0", "0.171.0"}), ("x*y", {"0.171.0"}), ("plain", set())],
)
def test_a_scoped_glob_over_a_root_with_pattern_characters_and_an_exact_deny(
    root: str, refuses_on: set[str]
) -> None:
    # difftest 3:271; by hand: cwd `<h>/b\s` with {"cd/q?/k1" = "deny"} and a deny on the file
    # `<h>/b\s/m5` refuses "Can't create file at <h>/b\s/m5: Read-only file system" on both;
    # `<h>/x*y` on 0.171.0 only; a plain root, or no scoped glob, starts
    cwd = f"{H}/{root}"
    fs = FsSnapshot({"/": "dir", B: "dir", H: "dir", cwd: "dir", f"{cwd}/m5": "file"})
    table: dict[str, Any] = {":root": "read", ":workspace_roots": {"cd/q?/k1": "deny"}}
    table[f"{cwd}/m5"] = "deny"
    for version in ("0.166.0", "0.171.0"):
        eff = resolve({"p": {"filesystem": table, "extends": ":workspace"}}, "p", EvalContext(cwd))
        got = [(r.code, r.path) for r in enforce(eff, fs, codex_version=version).refusals]
        want = [("deny-inside-denied-dir", f"{cwd}/m5")] if version in refuses_on else []
        assert got == want, version
        alone = {":root": "read", f"{cwd}/m5": "deny"}
        eff = resolve({"p": {"filesystem": alone, "extends": ":workspace"}}, "p", EvalContext(cwd))
        assert not enforce(eff, fs, codex_version=version).refusals


def test_the_glob_classes_see_the_live_filesystem(tmp_path: Path) -> None:
    # compile and check enforce on LiveFs: a deny glob's scan is listed there too (scandir, no
    # open), so the 0.166.0 name-matched file inside a denied directory is found before launch
    h = str(tmp_path / "h")
    os.makedirs(f"{h}/src/inner")
    Path(f"{h}/src/inner/m8").write_text("x")
    table = {":root": "read", f"{h}/??": "deny", f"{h}/src/inner": "deny"}
    eff = resolve({"p": {"filesystem": table}}, "p", EvalContext(cwd=str(tmp_path)))
    old = enforce(eff, LiveFs(), codex_version="0.166.0").refusals
    assert [(r.code, r.path) for r in old] == [("deny-inside-denied-dir", f"{h}/src/inner/m8")]
    assert not enforce(eff, LiveFs(), codex_version="0.171.0").refusals
    os.unlink(f"{h}/src/inner/m8")
    assert not enforce(eff, LiveFs(), codex_version="0.166.0").refusals


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
@pytest.mark.parametrize(("name", "refuses"), [(".codex", False), (".git", False), ("data", True)])
def test_a_write_on_a_file_named_like_a_carve_out_starts(
    version: str, name: str, refuses: bool
) -> None:
    # difftest 5:263; by hand on both releases: cwd `<ws>` with `:workspace_roots` =
    # {".codex" = "write"} on a file started and wrote it; {"data" = "write"} refused
    fs = FsSnapshot({"/": "dir", B: "dir", f"{B}/ws": "dir", f"{B}/ws/{name}": "file"})
    table = {":root": "read", ":workspace_roots": {name: "write"}}
    eff = resolve(
        {"p": {"filesystem": table, "extends": ":workspace"}}, "p", EvalContext(f"{B}/ws")
    )
    enf = enforce(eff, fs, codex_version=version)
    assert [r.code for r in enf.refusals] == (["write-on-file"] if refuses else [])
    assert enf.decide(f"{B}/ws/{name}").writable


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
@pytest.mark.parametrize(
    ("link", "target", "glob", "named"),
    [("srcl0", "x*y.t3", "x*", "x*y.t3"), ("plainl", "plain", "p*", "plainl")],
)
def test_a_deny_on_a_link_to_a_file_a_glob_also_masks_refuses(
    version: str, link: str, target: str, glob: str, named: str
) -> None:
    # difftest 5:4; by hand on both releases (messages in refusals.deny_link_beside_a_glob);
    # the link deny alone, or the glob alone, starts
    o = f"{B}/o"
    fs = _fs(files=())
    fs = FsSnapshot(
        {**fs.kinds, o: "dir", f"{o}/{target}": "file", f"{o}/{link}": "link"},
        {f"{o}/{link}": target},
    )
    both = {":root": "read", f"{o}/{link}": "deny", f"{o}/{glob}": "deny"}
    got = _enf(both, fs, version).refusals
    assert [(r.code, r.path) for r in got] == [("missing-nested-entries", f"{o}/{named}")]
    assert not _enf({":root": "read", f"{o}/{link}": "deny"}, fs, version).refusals
    assert not _enf({":root": "read", f"{o}/{glob}": "deny"}, fs, version).refusals


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_a_deny_through_a_link_onto_a_writable_root_takes_its_glob(version: str) -> None:
    # difftest 8:133; by hand on both releases: deny `<h>/cfg/l0` -> `../v/cfg` (a workspace
    # root) with `<h>/v/cfg/*` starts; the deny spelled `<h>/v/cfg` refuses "Can't create file
    # at <h>/v/cfg/m7: Read-only file system"
    root = f"{H}/v/cfg"
    kinds: dict[str, FsKind] = {
        "/": "dir",
        B: "dir",
        H: "dir",
        f"{H}/v": "dir",
        root: "dir",
        f"{root}/m7": "file",
        f"{H}/cfg": "dir",
        f"{H}/cfg/l0": "link",
        f"{B}/tmp": "dir",
    }
    fs = FsSnapshot(kinds, {f"{H}/cfg/l0": "../v/cfg"})

    def codes(deny: str) -> list[str]:
        table = {":root": "read", ":workspace_roots": "write", deny: "deny", f"{root}/*": "deny"}
        perms = {"p": {"filesystem": table, "workspace_roots": {root: True}}}
        eff = resolve(perms, "p", EvalContext(cwd=f"{B}/tmp"))
        return [r.code for r in enforce(eff, fs, codex_version=version).refusals]

    assert codes(f"{H}/cfg/l0") == []
    assert codes(root) == ["deny-inside-denied-dir"]


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_a_denied_cwd_inside_a_denied_directory_shields_nothing(version: str) -> None:
    # difftest 9:143 (both releases): cwd and TMPDIR `<o>/d`, `:tmpdir` and `<o>` denied:
    # "bwrap: Can't mkdir <o>/d: Read-only file system" (the cwd is no writable root: its
    # own path is denied)
    o = f"{B}/o"
    fs = FsSnapshot({"/": "dir", B: "dir", o: "dir", f"{o}/d": "dir", f"{o}/d/f": "file"})
    table = {":root": "read", ":tmpdir": "deny", o: "deny"}
    perms = {"p": {"filesystem": table, "extends": ":workspace"}}
    eff = resolve(perms, "p", EvalContext(cwd=f"{o}/d", tmpdir=f"{o}/d"))
    got = [(r.code, r.path) for r in enforce(eff, fs, codex_version=version).refusals]
    assert got == [("deny-inside-denied-dir", f"{o}/d")]


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
@pytest.mark.parametrize("carve", [".git", ".codex", ".agents", ".aws"])
@pytest.mark.parametrize("target", ["real", f"{B}/o", f"{B}/o/f", f"{B}/missing"])
def test_a_carve_out_name_that_is_a_link_in_a_writable_root_refuses(
    version: str, carve: str, target: str
) -> None:
    # held-out difftest 4102:2, 4102:43; by hand on both releases: cwd `<ws>` under
    # `:workspace` with `<ws>/.codex` -> `real`, -> an outside directory, `<ws>/.git` -> a file
    # or nothing, `.agents`, `.aws`: "Fatal error: cannot enforce sandbox read-only path
    # <ws>/<carve> because it crosses writable symlink <ws>/<carve>"
    ws = f"{B}/ws"
    link = f"{ws}/{carve}"
    kinds: dict[str, FsKind] = {
        "/": "dir",
        B: "dir",
        ws: "dir",
        f"{ws}/real": "dir",
        f"{B}/o": "dir",
        f"{B}/o/f": "file",
        link: "link",
    }
    fs = FsSnapshot(kinds, {link: target})
    got = _enf({}, fs, version).refusals
    assert [(r.code, r.path) for r in got] == [("crosses-writable-symlink", link)]
    assert got[0].message == (
        f"Fatal error: cannot enforce sandbox read-only path {link} because it crosses "
        f"writable symlink {link}"
    )
    # controls (started on both releases): the profile writes the carve-out itself; a
    # write-only `:root` = write mounts no carve-outs; a real directory there
    assert not _enf({":workspace_roots": {carve: "write"}}, fs, version).refusals
    perms = {"p": {"filesystem": {":root": "write"}}}
    eff = resolve(perms, "p", EvalContext(cwd=ws))
    assert not enforce(eff, fs, codex_version=version).refusals
    assert not _enf({}, FsSnapshot({**kinds, link: "dir"}), version).refusals


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
@pytest.mark.parametrize(("holder", "read"), [("ch", True), (".codex", False)])
def test_a_deny_on_a_missing_lock_below_a_read_entry_in_a_writable_root_refuses(
    version: str, holder: str, read: bool
) -> None:
    # held-out difftest 4102:1 (a CODEX_HOME inside the workspace compiled before its lock
    # existed); by hand on both releases: cwd `<ws>` under `:workspace`, `<ws>/ch` read (or
    # the carve-out `<ws>/.codex`) and a deny on the missing `.../auth.lock`: "bwrap: Can't
    # create file at <ws>/ch/auth.lock: Read-only file system"
    ws = f"{B}/ws"
    home = f"{ws}/{holder}"
    lock = f"{home}/auth.lock"
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", ws: "dir", home: "dir", f"{B}/o": "dir"}
    table = {**({home: "read"} if read else {}), lock: "deny"}
    got = _enf(table, FsSnapshot(kinds), version).refusals
    assert [(r.code, r.path) for r in got] == [("missing-nested-entries", lock)]
    assert got[0].message == f"bwrap: Can't create file at {lock}: Read-only file system"
    # controls (started on both releases): the lock present; the read directory outside
    # every writable root; no read entry above the missing path
    assert not _enf(table, FsSnapshot({**kinds, lock: "file"}), version).refusals
    outside = {f"{B}/o": "read", f"{B}/o/auth.lock": "deny"}
    assert not _enf(outside, FsSnapshot(kinds), version).refusals
    assert not _enf({f"{ws}/x/auth.lock": "deny"}, FsSnapshot(kinds), version).refusals


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
@pytest.mark.parametrize(
    ("target", "kind", "message"),
    [
        ("../o/f", "file", "Can't create file at"),
        ("../o", "dir", "Can't mkdir"),
        ("../o/none", None, None),
    ],
)
def test_a_deny_on_a_link_key_inside_a_denied_directory(
    version: str, target: str, kind: FsKind | None, message: str | None
) -> None:
    # held-out 4141:25; by hand on both releases (`:workspace` and `:root` = read): `<h>` and
    # `<h>/l0` -> `../o/f` denied refuse "bwrap: Can't create file at <h>/l0: Read-only file
    # system", -> `../o` "Can't mkdir <h>/l0: ..."; a dangling link starts
    h, link = f"{B}/h", f"{B}/h/l0"
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", f"{B}/ws": "dir", h: "dir", link: "link"}
    kinds[f"{B}/o"] = "dir"
    if kind == "file":
        kinds[f"{B}/o/f"] = "file"
    fs = FsSnapshot(kinds, {link: target})
    got = _enf({h: "deny", link: "deny"}, fs, version).refusals
    if message is None:
        assert not got
        return
    assert [(r.code, r.path) for r in got] == [("deny-inside-denied-dir", link)]
    assert got[0].message == f"bwrap: {message} {link}: Read-only file system"
    # control: the link alone denied starts (a relative link key outside a denied directory)
    assert not _enf({link: "deny"}, fs, version).refusals


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_a_read_entry_on_the_writable_cwd_is_no_read_only_bind(version: str) -> None:
    # held-out 4141:260, 4141:266 (both releases): the cwd `<ws>/ch` itself read, a deny on
    # its missing `auth.lock`: started (the cwd's write beats the read at its path)
    ch = f"{B}/ws/ch"
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", f"{B}/ws": "dir", ch: "dir"}
    perms = {"p": {"filesystem": {ch: "read", f"{ch}/auth.lock": "deny"}, "extends": ":workspace"}}
    eff = resolve(perms, "p", EvalContext(cwd=ch))
    assert not enforce(eff, FsSnapshot(kinds), codex_version=version).refusals
    eff = resolve(perms, "p", EvalContext(cwd=f"{B}/ws"))  # control: the cwd above it
    assert enforce(eff, FsSnapshot(kinds), codex_version=version).refusals


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_root_write_mounts_no_carve_out_link_refusal(version: str) -> None:
    # held-out 4141:43; by hand on both: `:root` = write with `:minimal` = read (also
    # extending :workspace) and `<ws>/.agents` -> `v` started
    ws = f"{B}/ws"
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", ws: "dir", f"{ws}/v": "dir"}
    kinds[f"{ws}/.agents"] = "link"
    fs = FsSnapshot(kinds, {f"{ws}/.agents": "v"})
    assert not _enf({":root": "write", ":minimal": "read"}, fs, version).refusals
    assert _enf({":minimal": "read"}, fs, version).refusals  # control: `:root` = read


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
@pytest.mark.parametrize("outer", ["cwd", "tmpdir", None])
def test_a_writable_root_around_the_read_entry_shields_the_missing_lock(
    version: str, outer: str | None
) -> None:
    # held-out 4242:211; by hand on both releases: `<ws>/inner` written, `<ws>/inner/ch`
    # read, a deny on the missing `ch/auth.lock`: started with the cwd or TMPDIR at `<ws>`
    # (two writable roots around it), refused with the cwd elsewhere
    ws, inner = f"{B}/ws", f"{B}/ws/inner"
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", ws: "dir", inner: "dir", H: "dir"}
    kinds[f"{inner}/ch"] = "dir"
    table = {inner: "write", f"{inner}/ch": "read", f"{inner}/ch/auth.lock": "deny"}
    ctx = EvalContext(cwd=ws if outer == "cwd" else H, tmpdir=ws if outer == "tmpdir" else None)
    eff = resolve({"p": {"filesystem": table, "extends": ":workspace"}}, "p", ctx)
    got = enforce(eff, FsSnapshot(kinds), codex_version=version).refusals
    assert bool(got) == (outer is None), got


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_carve_out_links_of_a_root_a_deny_glob_matches_and_under_root_write(version: str) -> None:
    # held-out 4242:11 (TMPDIR `<ws>/br` with `<ws>/*` denied and `<ws>/br/.agents` a link)
    # and 4242:235 (`:root` = write with a deny, TMPDIR's `.codex` a link): both refused
    ws, tmp = f"{B}/ws", f"{B}/ws/br"
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", ws: "dir", tmp: "dir", H: "dir"}
    kinds[f"{tmp}/.agents"] = "link"
    fs = FsSnapshot(kinds, {f"{tmp}/.agents": f"{B}/ws"})
    want = [("crosses-writable-symlink", f"{tmp}/.agents")]
    for table in ({f"{ws}/*": "deny"}, {":root": "write", f"{H}/x": "deny"}):
        perms = {"p": {"filesystem": {**table, ":tmpdir": "write"}, "extends": ":workspace"}}
        eff = resolve(perms, "p", EvalContext(cwd=H, tmpdir=tmp))
        got = enforce(eff, fs, codex_version=version).refusals
        assert [(r.code, r.path) for r in got] == want, table


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_root_write_and_tmpdir_around_the_read_entry_shield_the_missing_lock(version: str) -> None:
    # held-out 4343:117; by hand on both: `:root` = write, `<t>/ch` read, its missing
    # `auth.lock` denied: started with TMPDIR `<t>` (a second writable root), refused without
    t = f"{B}/t"
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", f"{B}/ws": "dir", t: "dir"}
    kinds[f"{t}/ch"] = "dir"
    table = {":root": "write", f"{t}/ch": "read", f"{t}/ch/auth.lock": "deny"}
    perms = {"p": {"filesystem": table, "extends": ":workspace"}}
    for tmpdir, refuses in ((t, False), (None, True)):
        eff = resolve(perms, "p", EvalContext(cwd=f"{B}/ws", tmpdir=tmpdir))
        got = enforce(eff, FsSnapshot(kinds), codex_version=version).refusals
        assert bool(got) == refuses, tmpdir


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_a_link_key_inside_a_root_spelled_through_a_link_is_not_mounted(version: str) -> None:
    # held-out 4343:59; by hand on both: `<o>/l4` -> `../home/k1` written, a deny on the link
    # `<home>/k1/l2` -> an absolute directory started; without the linked root it refused
    k1, link = f"{H}/k1", f"{H}/k1/l2"
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", H: "dir", k1: "dir", f"{B}/o": "dir"}
    kinds |= {f"{B}/o/br": "dir", f"{B}/o/l4": "link", link: "link"}
    fs = FsSnapshot(kinds, {f"{B}/o/l4": "../home/k1", link: f"{B}/o/br"})

    def refusals(table: dict[str, Any]) -> list[str]:
        eff = resolve({"p": {"filesystem": table, "extends": ":read-only"}}, "p", EvalContext(H))
        return [r.code for r in enforce(eff, fs, codex_version=version).refusals]

    assert refusals({f"{B}/o/l4": "write", link: "deny"}) == []
    assert refusals({link: "deny"}) == ["entry-on-symlink"]


@pytest.mark.parametrize("version", ["0.166.0", "0.171.0"])
def test_a_deny_link_key_and_an_exact_deny_on_its_target_refuse(version: str) -> None:
    # held-out 4444:197; by hand on both: `<o>/l0` -> `../ws/f` and `<ws>/f` denied refuse
    # "bwrap: Can't bind mount /bindfileXXXXXX on /newroot<o>/l0: ..."; the link alone starts
    o, f = f"{B}/o", f"{B}/ws/f"
    kinds: dict[str, FsKind] = {"/": "dir", B: "dir", f"{B}/ws": "dir", o: "dir", f: "file"}
    kinds[f"{o}/l0"] = "link"
    fs = FsSnapshot(kinds, {f"{o}/l0": "../ws/f"})
    got = _enf({f: "deny", f"{o}/l0": "deny"}, fs, version).refusals
    assert [(r.code, r.path) for r in got] == [("missing-nested-entries", f"{o}/l0")]
    assert not _enf({f"{o}/l0": "deny"}, fs, version).refusals
