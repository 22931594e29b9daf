"""The rename rule over Codex's access rules, and the fewest pins that defeat it."""

from __future__ import annotations

from typing import Any

from profilec.ancestry import Protected, mount_points, pins_for, renamable, unsafe_ancestors
from profilec.codex.resolve import EvalContext, resolve

WS = "/srv/a1/ws"
VAULT = "/srv/a1/ws/data/cred/vault"


def _eff(fs: dict[str, Any], cwd: str = WS) -> Any:
    table = {"p": {"extends": ":workspace", "filesystem": fs}}
    return resolve(table, "p", EvalContext(cwd=cwd))


def test_holder_only_entries_leave_the_ancestor_renamable() -> None:
    # Negative control: today's entries (the vault denied, nothing above it) in agent mode.
    eff = _eff({VAULT: "deny"})
    got = unsafe_ancestors(eff, [Protected(VAULT, "vault")])
    assert [(a, w) for _, a, w in got] == [
        ("/srv/a1/ws/data/cred", WS),
        ("/srv/a1/ws/data", WS),
    ]


def test_pins_make_every_ancestor_a_mount_point() -> None:
    eff = _eff({VAULT: "deny"})
    pins = pins_for(eff, [Protected(VAULT, "vault", "r")])
    assert [p.path for p in pins] == ["/srv/a1/ws/data", "/srv/a1/ws/data/cred"]
    assert all(p.writable_root == WS for p in pins)
    fixed = _eff({VAULT: "deny", **{p.path: "write" for p in pins}})
    assert unsafe_ancestors(fixed, [Protected(VAULT, "vault")]) == []
    # The pins change no access: the pinned directories were writable and still are.
    for p in pins:
        assert eff.winner(p.path)[0] == fixed.winner(p.path)[0] == "write"


def test_full_access_pins_reach_up_to_the_top_level() -> None:
    vault = "/srv/a1/cred/vault"
    eff = _eff({":root": "write", vault: "deny"})
    pins = pins_for(eff, [Protected(vault, "vault")])
    assert [p.path for p in pins] == ["/srv", "/srv/a1", "/srv/a1/cred"]
    assert {p.writable_root for p in pins} == {"/"}


def test_nothing_to_pin_outside_writable_roots() -> None:
    eff = _eff({"/srv/a1/cred/vault": "deny"})
    assert pins_for(eff, [Protected("/srv/a1/cred/vault", "vault")]) == []


def test_writable_roots_and_slash_are_never_renamable() -> None:
    eff = _eff({":root": "write"})
    mounts = mount_points(eff)
    assert renamable(eff, "/", mounts) is None
    assert renamable(eff, WS, mounts) is None  # a workspace root is its own mount
    assert renamable(eff, "/tmp", mounts) is None
    assert renamable(eff, "/srv", mounts) == "/"


def test_a_read_only_ancestor_also_stops_the_rename() -> None:
    # The measured alternative: the topmost ancestor read-only (it is a mount, and nothing
    # below it is writable) -- it holds, at the price of every write below it.
    eff = _eff({VAULT: "deny", "/srv/a1/ws/data": "read"})
    assert unsafe_ancestors(eff, [Protected(VAULT, "vault")]) == []
