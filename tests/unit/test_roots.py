"""The trusted-input edge: manifest trust check, validation, and link-chain walking."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from profilec.errors import InputError, RootChainError, TrustError, UnsafeRootError
from profilec.flags import CompileFlags
from profilec.inputs import Inputs
from profilec.models.roots import RootSpec
from profilec.roots import check_possible_roots, resolve_root, resolve_workspace_roots, walk_chain
from tests.helpers import make_layout, write_manifest


def test_absolute_link_resolves_to_canonical_target(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    root = resolve_root(RootSpec(id="a", path=str(lay.link)))
    assert root.target == str(lay.host_target)
    assert [h.link for h in root.hops] == [str(lay.link)]
    assert root.kind == "file"
    assert str(lay.codex_home) in root.holder_dirs
    assert str(lay.host_target.parent) in root.holder_dirs


def test_relative_link_resolves_against_the_links_directory(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l", relative_link=True)
    root = resolve_root(RootSpec(id="a", path=str(lay.link)))
    assert root.target == str(lay.host_target)
    assert root.hops[0].value == "../host/auth.json"


def test_intermediate_symlinked_directory_is_a_hop(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    root = resolve_root(RootSpec(id="a", path=str(lay.link)))
    assert root.target == str(lay.host_target)
    links = [h.link for h in root.hops]
    assert links == [str(lay.link), str(tmp_path / "l" / "hostlink")]
    assert root.hops[1].spelling == str(tmp_path / "l" / "hostlink" / "auth.json")
    assert set(root.spellings) >= {str(lay.link), root.hops[1].spelling, str(lay.host_target)}


def test_symlinked_parent_directory_in_declared_path(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    alias = tmp_path / "alias"
    alias.symlink_to(lay.codex_home)
    root = resolve_root(RootSpec(id="a", path=str(alias / "auth.json")))
    assert root.target == str(lay.host_target)
    assert root.hops[0].link == str(alias)
    assert root.hops[1].link == str(lay.link)


def test_loop_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(RootChainError, match=r"loop|longer than"):
        walk_chain(str(tmp_path / "a"))


def test_self_loop_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("a")
    with pytest.raises(RootChainError):
        walk_chain(str(tmp_path / "a"))


def test_over_long_chain_is_an_error(tmp_path: Path) -> None:
    prev = tmp_path / "end"
    prev.write_text("x")
    for i in range(45):
        cur = tmp_path / f"l{i}"
        cur.symlink_to(prev)
        prev = cur
    with pytest.raises(RootChainError, match="longer than 40"):
        walk_chain(str(prev))


def test_dangling_chain_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "gone" / "auth.json")
    with pytest.raises(RootChainError, match="dangling"):
        resolve_root(RootSpec(id="a", path=str(tmp_path / "link")))


def test_dangling_chain_allowed_denies_intended_path(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "gone" / "auth.json")
    root = resolve_root(RootSpec(id="a", path=str(tmp_path / "link"), allow_missing=True))
    assert root.kind == "missing"
    assert root.target == str(tmp_path / "gone" / "auth.json")


def test_file_in_middle_of_path_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(RootChainError, match="not a directory"):
        walk_chain(str(tmp_path / "f" / "auth.json"))


def test_hardlinked_target_fails_with_the_fix(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    assert resolve_root(RootSpec(id="a", path=str(lay.link))).nlink == 1
    os.link(lay.host_target, tmp_path / "l" / "ws" / "hard.json")
    with pytest.raises(UnsafeRootError, match="2 hard links") as exc:
        resolve_root(RootSpec(id="a", path=str(lay.link)))
    assert exc.value.exit_code == 5
    assert "single name" in exc.value.one_line()


def test_hardlinked_file_inside_directory_root_fails(tmp_path: Path) -> None:
    cred = tmp_path / "cred"
    (cred / "sub").mkdir(parents=True)
    (cred / "sub" / "token").write_text("x")
    (tmp_path / "other").write_text("y")
    os.symlink(tmp_path / "other", cred / "link-is-not-a-hardlink")
    assert resolve_root(RootSpec(id="d", path=str(cred))).kind == "dir"
    os.link(cred / "sub" / "token", tmp_path / "second-name")
    with pytest.raises(UnsafeRootError, match="sub/token inside directory root"):
        resolve_root(RootSpec(id="d", path=str(cred)))


@pytest.mark.parametrize("case", ["slash", "is-home", "contains-home", "is-ws", "contains-ws"])
def test_impossible_roots_fail(tmp_path: Path, case: str) -> None:
    home, ws = "/srv/a1/codex-home", "/srv/a1/ws"
    target = {
        "slash": "/",
        "is-home": home,
        "contains-home": "/srv/a1",
        "is-ws": ws,
        "contains-ws": "/srv",
    }[case]
    root = SimpleNamespace(id="r", target=target)
    with pytest.raises(UnsafeRootError) as exc:
        check_possible_roots([root], home, [ws])
    assert exc.value.exit_code == 5


def test_possible_roots_pass() -> None:
    roots = [SimpleNamespace(id="r", target="/srv/a1/cred/auth.json")]
    check_possible_roots(roots, "/srv/a1/codex-home", ["/srv/a1/ws"])
    # A sibling whose name merely starts with the root's name is not inside it.
    check_possible_roots([SimpleNamespace(id="r", target="/srv/a1/ws2")], None, ["/srv/a1/ws"])


def test_workspace_roots_come_back_canonical(tmp_path: Path) -> None:
    real = tmp_path / "real" / "ws"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    spelled = str(tmp_path / "link" / "ws")
    assert resolve_workspace_roots([spelled]) == (str(real),)
    # Not created yet: the existing prefix is still resolved.
    assert resolve_workspace_roots([spelled + "/new"]) == (str(real / "new"),)


def test_hop_under_workspace_is_reported(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    ws_link = lay.workspace / "auth.json"
    ws_link.symlink_to(lay.host_target)
    root = resolve_root(RootSpec(id="a", path=str(ws_link)), [str(lay.workspace)])
    assert root.hops_under_workspace == (str(ws_link),)


# --- manifest --------------------------------------------------------------------------------


def test_manifest_loads(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    m = Inputs(CompileFlags.from_text(roots=str(lay.manifest))).manifest()
    assert m.roots[0].id == "codex-auth"


def test_world_writable_manifest_is_untrusted(tmp_path: Path) -> None:
    p = write_manifest(tmp_path / "r.toml", [{"id": "a", "path": "/x"}], mode=0o666)
    with pytest.raises(TrustError, match="writable"):
        Inputs(CompileFlags.from_text(roots=str(p))).manifest()


def test_group_writable_manifest_is_untrusted(tmp_path: Path) -> None:
    p = write_manifest(tmp_path / "r.toml", [{"id": "a", "path": "/x"}], mode=0o620)
    with pytest.raises(TrustError):
        Inputs(CompileFlags.from_text(roots=str(p))).manifest()


def test_symlinked_manifest_is_untrusted(tmp_path: Path) -> None:
    p = write_manifest(tmp_path / "r.toml", [{"id": "a", "path": "/x"}])
    (tmp_path / "link.toml").symlink_to(p)
    with pytest.raises(TrustError, match="symlink"):
        Inputs(CompileFlags.from_text(roots=str(tmp_path / "link.toml"))).manifest()


def test_manifest_in_world_writable_dir_is_untrusted(tmp_path: Path) -> None:
    d = tmp_path / "open"
    d.mkdir()
    os.chmod(d, 0o777)
    p = write_manifest(d / "r.toml", [{"id": "a", "path": "/x"}])
    with pytest.raises(TrustError, match="world-writable"):
        Inputs(CompileFlags.from_text(roots=str(p))).manifest()


def test_manifest_owned_by_someone_else_is_untrusted(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to chown")
    p = write_manifest(tmp_path / "r.toml", [{"id": "a", "path": "/x"}])
    os.chown(p, 12345, 12345)
    with pytest.raises(TrustError, match="owned by uid 12345"):
        Inputs(CompileFlags.from_text(roots=str(p))).manifest()


@pytest.mark.parametrize(
    ("roots", "match"),
    [
        ([{"id": "a", "path": "rel/auth.json"}], "path"),
        ([{"id": "a", "path": "/x/../auth.json"}], "traversal"),
        ([{"id": "a", "path": "/x/./auth.json"}], "traversal"),
        ([{"id": "a", "path": "/x//auth.json"}], "empty segment"),
        ([{"id": "a", "path": "/x/auth.json/"}], "trailing slash"),
        ([{"id": "a", "path": "/x"}, {"id": "a", "path": "/y"}], "duplicate"),
        ([{"id": "A", "path": "/x"}], "id"),
        ([{"id": "a", "path": "/x", "surprise": 1}], "unknown key"),
    ],
)
def test_bad_manifest_is_one_clear_input_error(
    tmp_path: Path, roots: list[dict[str, object]], match: str
) -> None:
    p = write_manifest(tmp_path / "r.toml", roots)
    with pytest.raises(InputError, match=match) as info:
        Inputs(CompileFlags.from_text(roots=str(p))).manifest()
    assert "\n" not in info.value.one_line()


def test_malformed_toml_is_an_input_error(tmp_path: Path) -> None:
    p = tmp_path / "r.toml"
    p.write_text("schema_version = [\n")
    os.chmod(p, 0o600)
    with pytest.raises(InputError, match="malformed TOML"):
        Inputs(CompileFlags.from_text(roots=str(p))).manifest()


def test_nul_in_path_is_rejected(tmp_path: Path) -> None:
    p = tmp_path / "r.toml"
    p.write_text('schema_version = 1\n[[roots]]\nid = "a"\npath = "/x\\u0000y"\n')
    os.chmod(p, 0o600)
    with pytest.raises(InputError, match="NUL"):
        Inputs(CompileFlags.from_text(roots=str(p))).manifest()
