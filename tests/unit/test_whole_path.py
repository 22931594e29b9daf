"""Compile protects the whole path: pinned ancestors, the trusted base, literal names, hard links
and impossible roots (issue 13). Each boundary has its negative control beside it."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from profilec.ancestry import unsafe_ancestors
from profilec.api import load_and_compile
from profilec.codex.resolve import resolve, session_contexts
from profilec.compile import _prove, compile_bundle, resolve_emitted
from profilec.errors import UnsafeRootError
from profilec.models.compiled import ResolvedRoot, TrustedPath
from profilec.models.roots import LaunchLayout, RootSpec
from profilec.policy import load_policy
from profilec.roots import resolve_home, resolve_root
from profilec.wholepath import protected_paths
from tests.helpers import make_layout

POLICY = load_policy()


def _without_pins(profile: object) -> object:
    entries = tuple(
        e
        for e in profile.entries  # type: ignore[attr-defined]
        if all(p.reason != "ancestor" for p in e.provenance)
    )
    return profile.model_copy(update={"entries": entries})  # type: ignore[attr-defined]


def test_agent_pins_every_ancestor_of_a_layout_under_tmp(tmp_path: Path) -> None:
    # pytest's tmp_path lies under /tmp, which agent mode writes.
    lay = make_layout(tmp_path / "l", hop_dir=True)
    b = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    agent = b.profile_for("agent")
    pins = [e for e in agent.entries if e.provenance[0].reason == "ancestor"]
    assert pins and all(e.access == "write" for e in pins)
    assert str(tmp_path) in {e.path for e in pins}
    detail = pins[0].provenance[0].detail or ""
    assert "pinned below writable root /tmp" in detail
    # read-only writes nothing: nothing to pin there.
    assert not any(
        p.reason == "ancestor" for e in b.profile_for("read-only").entries for p in e.provenance
    )
    protected = protected_paths(b.roots, b.codex_home, ())
    for prof in b.profiles:
        table = {prof.profile_id: prof.codex_table()}
        for ctx in session_contexts(b.layout.workspace_roots):
            assert unsafe_ancestors(resolve(table, prof.profile_id, ctx), protected) == []


@pytest.mark.parametrize("mode", ["agent", "agent-full-access"])
def test_the_proof_rejects_holder_only_entries(tmp_path: Path, mode: str) -> None:
    # Negative control: today's entries without the pins must not pass the proof.
    lay = make_layout(tmp_path / "l")
    b = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    broken = _without_pins(b.profile_for(mode))
    with pytest.raises(UnsafeRootError, match="can be renamed") as exc:
        ctxs = session_contexts(b.layout.workspace_roots)
        effs = resolve_emitted(broken, ctxs)  # type: ignore[arg-type]
        protected = protected_paths(b.roots, b.codex_home, ())
        _prove(broken, b.roots, b.codex_home, ctxs, (), effs, protected)  # type: ignore[arg-type]
    assert "move the vault out of the writable area" in exc.value.one_line()


def test_full_access_keeps_the_trusted_base_read_only_and_denies_sockets(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    launcher = tmp_path / "launcher-bin"
    launcher.mkdir()
    sock = tmp_path / "engine.sock"
    sock.write_text("")  # kind does not matter for compile; the integration test binds one
    trusted = (
        TrustedPath(
            path=str(launcher), declared=str(launcher), access="read", kind="dir", source="manifest"
        ),
        TrustedPath(
            path=str(sock), declared=str(sock), access="deny", kind="file", source="manifest"
        ),
    )
    roots = (resolve_root(RootSpec(id="a", path=str(lay.link))),)
    b = compile_bundle(
        roots,
        POLICY,
        LaunchLayout(workspace_roots=(str(lay.workspace),)),
        resolve_home(str(lay.codex_home)),
        trusted_base=trusted,
    )
    for prof in b.profiles:
        got = {e.path: e.access for e in prof.entries}
        assert got[str(sock)] == "deny", prof.mode  # every mode denies the socket
        eff = resolve(
            {prof.profile_id: prof.codex_table()},
            prof.profile_id,
            session_contexts(b.layout.workspace_roots)[0],
        )
        assert eff.winner(str(launcher / "x"))[0] != "write", prof.mode
    full = {e.path: e.access for e in b.profile_for("agent-full-access").entries}
    assert full[str(launcher)] == "read"
    # Control: without the trusted base, full access writes the launcher's directory.
    plain = compile_bundle(
        roots,
        POLICY,
        LaunchLayout(workspace_roots=(str(lay.workspace),)),
        resolve_home(str(lay.codex_home)),
    )
    prof = plain.profile_for("agent-full-access")
    eff = resolve(
        {prof.profile_id: prof.codex_table()},
        prof.profile_id,
        session_contexts(plain.layout.workspace_roots)[0],
    )
    assert eff.winner(str(launcher / "x"))[0] == "write"
    assert b.trusted_base == trusted


def test_a_workspace_inside_the_trusted_base_fails(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    trusted = (
        TrustedPath(
            path=str(tmp_path / "l"),
            declared=str(tmp_path / "l"),
            access="read",
            kind="dir",
            source="policy",
        ),
    )
    roots = (resolve_root(RootSpec(id="a", path=str(lay.link))),)
    with pytest.raises(UnsafeRootError, match="lies inside trusted-base directory"):
        compile_bundle(
            roots, POLICY, LaunchLayout(workspace_roots=(str(lay.workspace),)), trusted_base=trusted
        )


@pytest.mark.parametrize("name", ["we{ir}d", "back\\slash", "sp ace", "comma,{a,b}"])
def test_names_without_glob_characters_are_emitted_literally(tmp_path: Path, name: str) -> None:
    lay = make_layout(tmp_path / name)
    b = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    for prof in b.profiles:
        keys = set(prof.codex_table()["filesystem"])
        for e in prof.entries:
            assert e.path in keys  # the key is the path itself, unescaped


@pytest.mark.parametrize("ch", ["*", "?", "[", "]"])
@pytest.mark.parametrize("where", ["home", "host", "base"])
def test_glob_characters_in_a_directory_are_refused_naming_the_character(
    tmp_path: Path, ch: str, where: str
) -> None:
    base = tmp_path / (f"b{ch}x" if where == "base" else "b")
    lay = make_layout(base)
    if where == "home":
        new = lay.codex_home.with_name(f"codex{ch}home")
        lay.codex_home.rename(new)
        home = str(new)
        manifest_path = str(new / "auth.json")
    else:
        home = str(lay.codex_home)
        manifest_path = str(lay.link)
    if where == "host":
        new_host = lay.host_target.parent.with_name(f"ho{ch}st")
        lay.host_target.parent.rename(new_host)
        os.unlink(lay.link)
        os.symlink(new_host / "auth.json", lay.link)
    root = resolve_root(RootSpec(id="a", path=manifest_path))
    with pytest.raises(UnsafeRootError, match=re.escape(f"holds {ch!r}")) as exc:
        compile_bundle(
            (root,), POLICY, LaunchLayout(workspace_roots=(str(lay.workspace),)), resolve_home(home)
        )
    assert exc.value.exit_code == 5


def test_hand_built_hardlinked_root_fails_in_compile(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    root: ResolvedRoot = resolve_root(RootSpec(id="a", path=str(lay.link)))
    with pytest.raises(UnsafeRootError, match="2 hard links"):
        compile_bundle((root.model_copy(update={"nlink": 2}),), POLICY, LaunchLayout())


@pytest.mark.parametrize("which", ["slash", "home", "workspace"])
def test_impossible_roots_fail_in_compile(tmp_path: Path, which: str) -> None:
    lay = make_layout(tmp_path / "l")
    root = resolve_root(RootSpec(id="a", path=str(lay.link)))
    target = {"slash": "/", "home": str(tmp_path / "l"), "workspace": str(lay.workspace)}[which]
    bad = root.model_copy(update={"target": target, "kind": "dir"})
    with pytest.raises(UnsafeRootError) as exc:
        compile_bundle(
            (bad,),
            POLICY,
            LaunchLayout(workspace_roots=(str(lay.workspace),)),
            resolve_home(str(lay.codex_home)),
        )
    assert exc.value.exit_code == 5


def test_a_layout_under_the_launchers_tmpdir_gets_its_ancestors_pinned(tmp_path: Path) -> None:
    # Under /var/tmp (not /tmp): agent mode writes it only because TMPDIR names it. CODEX_HOME
    # stays outside TMPDIR (under it compile refuses: Codex would run no command).
    import shutil
    import tempfile

    tmpdir = Path(tempfile.mkdtemp(prefix="profilec-tmpdir-", dir="/var/tmp"))
    try:
        lay = make_layout(tmpdir / "deep" / "l")
        home = tmp_path / "codexhome"
        shutil.move(str(lay.codex_home), home)  # its auth.json links to the vault absolutely
        text = lay.manifest.read_text(encoding="utf-8")
        lay.manifest.write_text(text.replace(str(lay.codex_home), str(home)), encoding="utf-8")
        ws = tmp_path / "ws"
        ws.mkdir()
        flags = {"workspace_roots": [str(ws)], "codex_home": str(home)}
        plain = load_and_compile(str(lay.manifest), **flags)  # type: ignore[arg-type]
        agent = {e.path: e.access for e in plain.profile_for("agent").entries}
        assert str(tmpdir / "deep") not in agent  # control: without TMPDIR nothing to pin
        b = load_and_compile(str(lay.manifest), tmpdir=str(tmpdir), **flags)  # type: ignore[arg-type]
        agent = {e.path: e.access for e in b.profile_for("agent").entries}
        assert agent[str(tmpdir / "deep")] == "write"
        assert b.layout.tmpdir == str(tmpdir)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def test_resolutions_answer_once_per_equal_table_and_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """wholepath.Resolutions resolves each distinct (table, context) once; an equal table (as
    data) in the same context is answered from memory, anything else is resolved afresh."""
    import profilec.wholepath as wholepath

    calls: list[str] = []

    def counted(perms: Any, profile_id: str, ctx: Any) -> Any:
        calls.append(profile_id)
        return resolve(perms, profile_id, ctx)

    monkeypatch.setattr(wholepath, "resolve", counted)
    memo = wholepath.Resolutions("p")
    a, b = session_contexts(["/w1", "/w2"])
    table = {"filesystem": {":minimal": "read", "/w1": "write", "/x": "deny"}}
    first = memo(table, a)
    assert memo({"filesystem": {"/x": "deny", "/w1": "write", ":minimal": "read"}}, a) is first
    assert len(calls) == 1
    assert memo(table, b) is not first  # another context
    changed = {"filesystem": {":minimal": "read", "/w1": "write", "/x": "read"}}
    assert memo(changed, a).decide("/x").access == "read"  # one access changed: resolved again
    assert len(calls) == 3


def test_a_compile_judges_exactly_what_a_fresh_resolve_of_its_output_gives(
    tmp_path: Path,
) -> None:
    """With the memo, every mode's emitted table, resolved afresh, still passes the proof and
    gives the profile a compile reports (the memo changes the work, never the answer)."""
    lay = make_layout(tmp_path / "l", hop_dir=True)
    b = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    protected = protected_paths(b.roots, b.codex_home, b.trusted_base)
    ctxs = session_contexts(b.layout.workspace_roots)
    for prof in b.profiles:
        table = {prof.profile_id: prof.codex_table()}
        fresh = [resolve(table, prof.profile_id, ctx) for ctx in ctxs]
        assert fresh == resolve_emitted(prof, ctxs)
        _prove(prof, b.roots, b.codex_home, ctxs, b.trusted_base, fresh, protected)
