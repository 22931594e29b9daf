"""The session cwd is never a writable root: the client picks it (ACP session/new, app-server
thread/start), and under `:workspace` it becomes one, beating profilec's `read` entry at an equal
path (measured on codex 0.171.0 and 0.166.0). The writing modes extend `:read-only` and write
each compiled workspace root explicitly; the proof also runs with the cwd at CODEX_HOME, HOME,
each vault, its parent and each holder directory. The negative control runs the same proof over
the same profile under `:workspace`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.codex.resolve import cwd_contexts, follows_cwd, resolve, session_contexts
from profilec.compile import _prove, outside_cwds, resolve_emitted
from profilec.errors import UnsafeRootError
from profilec.models.compiled import CompiledBundle, CompiledProfile
from profilec.policy import default_profiles_dir
from profilec.wholepath import protected_paths
from tests.helpers import Layout, make_layout

WRITING = ("agent", "agent-full-access")


def _compile(tmp_path: Path, profiles_dir: str | None = None) -> tuple[Layout, CompiledBundle]:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    bundle = load_and_compile(
        str(lay.manifest),
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
        profiles_dir=profiles_dir,
    )
    return lay, bundle


def test_the_writing_modes_extend_read_only_and_write_each_workspace_root(
    tmp_path: Path,
) -> None:
    lay, bundle = _compile(tmp_path)
    ws = str(lay.workspace)
    for mode in WRITING:
        prof = bundle.profile_for(mode)
        table = prof.codex_table()
        assert table["extends"] == ":read-only", mode
        fs = table["filesystem"]
        assert (fs[":slash_tmp"], fs[":tmpdir"]) == ("write", "write"), mode
        assert ":workspace_roots" not in fs
        (entry,) = [e for e in prof.entries if e.path == ws]
        assert entry.access == "write"
        assert [p.reason for p in entry.provenance] == ["workspace-root"]
        assert table["workspace_roots"] == {ws: True}
    ro = bundle.profile_for("read-only")
    assert ro.codex_table()["extends"] == ":read-only"
    assert not any(p.reason == "workspace-root" for e in ro.entries for p in e.provenance)


def test_outside_cwds_name_codex_home_home_each_vault_its_parent_and_each_holder(
    tmp_path: Path,
) -> None:
    lay, bundle = _compile(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    layout = bundle.layout.model_copy(update={"home": str(home)})
    cwds = outside_cwds(bundle.roots, layout, bundle.codex_home)
    (root,) = bundle.roots
    vault = str(lay.host_target.parent)
    assert cwds[:2] == [str(lay.codex_home), str(home)]
    assert vault in cwds and str(lay.base) in cwds  # the vault and its parent
    assert set(root.holder_dirs) <= set(cwds)
    assert str(lay.workspace) not in cwds
    assert len(cwds) == len(set(cwds))


@pytest.mark.parametrize("mode", ["read-only", *WRITING])
def test_no_cwd_outside_the_workspace_is_writable_and_the_vault_stays_denied(
    tmp_path: Path, mode: str
) -> None:
    lay, bundle = _compile(tmp_path)
    prof = bundle.profile_for(mode)
    table = {prof.profile_id: prof.codex_table()}
    other = tmp_path / "elsewhere"
    other.mkdir()
    cwds = [*outside_cwds(bundle.roots, bundle.layout, bundle.codex_home), str(other)]
    ws = str(lay.workspace)
    (launch,) = session_contexts(bundle.layout.workspace_roots)
    at_ws = resolve(table, prof.profile_id, launch)
    for ctx in cwd_contexts(cwds, bundle.layout.workspace_roots):
        eff = resolve(table, prof.profile_id, ctx)
        # the cwd itself grants nothing: it gets what it gets with the cwd in the workspace
        # (`other` lies under /tmp, pytest's tmp_path, which the writing modes write anyway)
        assert eff.decide(ctx.cwd).access == at_ws.decide(ctx.cwd).access, (mode, ctx.cwd)
        if ctx.cwd != str(other):
            assert not eff.decide(ctx.cwd).writable, (mode, ctx.cwd)
        assert all(not e.source.startswith(":workspace_roots") for e in eff.entries)
        assert eff.decide(str(lay.host_target)).access == "deny"
        assert eff.decide(str(lay.codex_home / "x")).access == "read"
        assert eff.decide(f"{ws}/new.txt").writable == (mode != "read-only")
        # the run-time carve-outs of an explicit writable root, as under :workspace
        assert eff.decide(f"{ws}/.git/config").access == "read"
        carve = f"carve-out .git of writable root {ws}"
        assert any(e.source == carve for e in eff.entries) == (mode != "read-only")


def _under_workspace(prof: CompiledProfile) -> CompiledProfile:
    """The same compiled profile extending :workspace (profilec's writing modes before)."""
    return prof.model_copy(update={"extends": ":workspace"})


@pytest.mark.parametrize("mode", WRITING)
def test_the_proof_flags_a_codex_home_cwd_under_workspace(tmp_path: Path, mode: str) -> None:
    """Negative control: the same profile under :workspace passes the launch contexts (the old
    proof) and fails the cwd = CODEX_HOME context, naming it."""
    lay, bundle = _compile(tmp_path)
    home = bundle.codex_home
    assert home is not None
    protected = protected_paths(bundle.roots, home, ())
    launch = session_contexts(bundle.layout.workspace_roots)
    at_home = cwd_contexts([home.canonical], bundle.layout.workspace_roots)
    for prof in (bundle.profile_for(mode), _under_workspace(bundle.profile_for(mode))):
        _prove(prof, bundle.roots, home, launch, (), resolve_emitted(prof, launch), protected)
    # the compiled profile passes with the cwd at CODEX_HOME ...
    prof = bundle.profile_for(mode)
    _prove(prof, bundle.roots, home, at_home, (), resolve_emitted(prof, at_home), protected)
    # ... under :workspace the same proof flags that context
    bad = _under_workspace(prof)
    with pytest.raises(UnsafeRootError) as exc:
        _prove(bad, bundle.roots, home, at_home, (), resolve_emitted(bad, at_home), protected)
    msg = exc.value.one_line()
    assert f"cwd {lay.codex_home}:" in msg and "stays writable" in msg, msg
    assert "winner: :workspace_roots" in msg, msg


def test_compile_refuses_a_writing_mode_that_extends_workspace(tmp_path: Path) -> None:
    """A policy that goes back to :workspace fails compile (exit 5) on an outside cwd."""
    pdir = tmp_path / "profiles"
    shutil.copytree(default_profiles_dir(), pdir)
    agent = pdir / "agent.toml"
    text = agent.read_text(encoding="utf-8")
    old = 'extends = ":read-only"\nwrite_workspace_roots = true\n'
    assert old in text
    agent.write_text(text.replace(old, 'extends = ":workspace"\n'), encoding="utf-8")
    with pytest.raises(UnsafeRootError) as exc:
        _compile(tmp_path, profiles_dir=str(pdir))
    msg = exc.value.one_line()
    assert "mode agent, cwd " in msg and "winner: :workspace_roots" in msg, msg


def test_a_workspace_root_that_is_codex_home_is_refused(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    with pytest.raises(UnsafeRootError, match=r"workspace root \S+ is also a read entry"):
        load_and_compile(
            str(lay.manifest),
            workspace_roots=[str(lay.codex_home)],
            codex_home=str(lay.codex_home),
        )


def test_follows_cwd_is_true_exactly_when_the_cwd_can_change_an_entry(tmp_path: Path) -> None:
    _, bundle = _compile(tmp_path)
    for prof in bundle.profiles:
        assert not follows_cwd({prof.profile_id: prof.codex_table()}, prof.profile_id)
        moved = _under_workspace(prof)
        assert follows_cwd({prof.profile_id: moved.codex_table()}, prof.profile_id)
    scoped = {"p": {"extends": ":read-only", "filesystem": {":workspace_roots": {".git": "deny"}}}}
    assert follows_cwd(scoped, "p")
    relative = {"p": {"extends": ":read-only", "workspace_roots": {"sub": True}}}
    assert follows_cwd(relative, "p")
    absolute = {"p": {"extends": ":read-only", "workspace_roots": {"/srv/ws": True}}}
    assert not follows_cwd(absolute, "p")
    # the evaluator agrees: a profile that does not follow the cwd resolves the same entries
    prof = bundle.profile_for("agent")
    table = {prof.profile_id: prof.codex_table()}
    a, b = (resolve(table, prof.profile_id, c) for c in cwd_contexts(["/a", "/b"], ()))
    assert a.entries == b.entries
