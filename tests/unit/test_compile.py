"""The pure compile step and its launcher outputs."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.codex.resolve import EvalContext, resolve
from profilec.compile import compile_bundle
from profilec.emit.overrides import override_lines
from profilec.errors import UnsafeRootError
from profilec.formats import COMPILE_FORMATS
from profilec.models.compiled import CompiledBundle
from profilec.models.policy import ACP_MODES
from profilec.models.roots import LaunchLayout, RootSpec
from profilec.policy import load_policy
from profilec.roots import resolve_root
from profilec.trustedbase import root_directories
from tests.helpers import Layout, make_layout


def _compile(tmp_path: Path, **kw: bool) -> tuple[Layout, CompiledBundle]:
    lay = make_layout(tmp_path / "l", **kw)
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    return lay, bundle


def test_every_mode_denies_the_vault_holding_the_canonical_target(tmp_path: Path) -> None:
    lay, bundle = _compile(tmp_path)
    assert [p.mode for p in bundle.profiles] == list(ACP_MODES)
    vault = str(lay.host_target.parent)
    assert [r.vault for r in bundle.roots] == [vault]
    for profile in bundle.profiles:
        fs = profile.codex_table()["filesystem"]
        assert fs[vault] == "deny"
        # No file deny inside the denied vault: it would not survive the writer's rename, and
        # Codex refuses a denied directory plus a deny on an existing file inside it.
        assert str(lay.host_target) not in fs
        eff = resolve(
            {profile.profile_id: profile.codex_table()},
            profile.profile_id,
            EvalContext(cwd=str(lay.workspace)),
        )
        assert eff.decide(str(lay.host_target)).access == "deny"


def test_no_deny_key_is_a_symlink_path(tmp_path: Path) -> None:
    _, bundle = _compile(tmp_path, hop_dir=True)
    links = {h.link for r in bundle.roots for h in r.hops}
    for profile in bundle.profiles:
        for key in profile.codex_table()["filesystem"]:
            assert key not in links
            assert not any(key.startswith(link + "/") for link in links)


def test_holder_dirs_are_read_only_in_writing_modes(tmp_path: Path) -> None:
    lay, bundle = _compile(tmp_path, hop_dir=True)
    for profile in bundle.profiles:
        fs = profile.codex_table()["filesystem"]
        holders = [str(lay.codex_home), str(lay.base)]
        # The target's own directory is its vault: denied, so not a read-only holder entry.
        assert fs[str(lay.host_target.parent)] == "deny"
        if profile.mode == "read-only":
            assert not any(h in fs for h in holders)
        else:
            for h in holders:
                assert fs[h] == "read", (profile.mode, h)


def test_agent_mode_keeps_workspace_writable(tmp_path: Path) -> None:
    lay, bundle = _compile(tmp_path)
    agent = bundle.profile_for("agent")
    eff = resolve(
        {agent.profile_id: agent.codex_table()},
        agent.profile_id,
        EvalContext(cwd=str(lay.workspace)),
    )
    assert eff.decide(str(lay.workspace / "new.txt")).writable
    ro = bundle.profile_for("read-only")
    eff_ro = resolve(
        {ro.profile_id: ro.codex_table()}, ro.profile_id, EvalContext(cwd=str(lay.workspace))
    )
    assert not eff_ro.decide(str(lay.workspace / "new.txt")).writable


def test_full_access_is_never_danger_full_access(tmp_path: Path) -> None:
    _, bundle = _compile(tmp_path)
    full = bundle.profile_for("agent-full-access")
    table = full.codex_table()
    assert table["extends"] != ":danger-full-access"
    assert table["network"] == {"enabled": True}
    # `:root` = write is lowered: / itself read-only, every real top-level directory written.
    fs = table["filesystem"]
    assert fs[":root"] == "read"
    frozen = {t.path for t in bundle.trusted_base if t.access == "read"}
    for d in root_directories():
        if (
            d in frozen
            or d in ("/.git", "/.codex", "/.agents", "/.aws")
            or fs.get(d)
            in (
                "deny",
                "read",
            )
        ):
            continue
        assert fs.get(d) == "write", d
    for name in os.listdir("/"):
        path = "/" + name
        if os.path.islink(path) or not os.path.isdir(path):
            assert path not in fs, path  # never an entry on a symlink such as /lib64
    assert "/proc" not in fs and "/dev" not in fs and "/sys" not in fs


def test_root_split_uses_the_given_top_level_directories_and_keeps_the_trusted_base(
    tmp_path: Path,
) -> None:
    lay = make_layout(tmp_path / "l")
    root = resolve_root(RootSpec(id="r", path=str(lay.link)))
    layout = LaunchLayout(workspace_roots=(str(lay.workspace),))
    policy = load_policy()
    tops = ("/.git", "/opt", "/srv", "/usr", "/var")
    from profilec.trustedbase import resolve_trusted_base

    trusted = tuple(resolve_trusted_base(policy.trusted_base, None))
    bundle = compile_bundle((root,), policy, layout, trusted_base=trusted, root_dirs=tops)
    full = bundle.profile_for("agent-full-access")
    split = {
        e.path: e.access
        for e in full.entries
        if any(p.reason == "root-split" for p in e.provenance)
    }
    assert split == {":root": "read", "/opt": "write", "/srv": "write", "/var": "write"}
    for mode in ("read-only", "agent"):  # modes that never wrote :root are untouched
        assert not any(
            p.reason == "root-split" for e in bundle.profile_for(mode).entries for p in e.provenance
        )
    eff = resolve(
        {full.profile_id: full.codex_table()}, full.profile_id, EvalContext(cwd=str(lay.workspace))
    )
    assert not eff.decide("/").writable and not eff.decide("/lib64").writable
    assert eff.decide("/srv/x").writable and not eff.decide("/usr/lib/x").writable


def test_a_writable_slash_fails_the_proof(tmp_path: Path) -> None:
    """Negative control for the split: a policy that writes `/` by path is refused (exit 5)."""
    import shutil

    from profilec.policy import default_profiles_dir

    pdir = tmp_path / "profiles"
    shutil.copytree(default_profiles_dir(), pdir)
    f = pdir / "agent-full-access.toml"
    f.write_text(f.read_text().replace('":root" = "write"', '":root" = "write"\n"/" = "write"'))
    lay = make_layout(tmp_path / "l")
    with pytest.raises(UnsafeRootError, match=r"/ is writable"):
        load_and_compile(
            str(lay.manifest),
            workspace_roots=[str(lay.workspace)],
            codex_home=str(lay.codex_home),
            profiles_dir=str(pdir),
        )


def test_nested_roots_are_minimized_with_provenance_kept(tmp_path: Path) -> None:
    d = tmp_path / "secrets"
    d.mkdir()
    (d / "a.json").write_text("x")
    roots = (
        resolve_root(RootSpec(id="dir", path=str(d))),
        resolve_root(RootSpec(id="inner", path=str(d / "a.json"))),
    )
    bundle = compile_bundle(roots, load_policy(), LaunchLayout())
    for profile in bundle.profiles:
        denies = [e for e in profile.entries if e.access == "deny"]
        assert [e.path for e in denies] == [str(d)]
        assert {p.root_id for p in denies[0].provenance} == {"dir", "inner"}


def test_credential_directly_under_workspace_root_fails_closed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "auth.json").write_text("x")
    roots = (resolve_root(RootSpec(id="a", path=str(ws / "auth.json"))),)
    with pytest.raises(UnsafeRootError, match=r"vault .*ws .* is workspace root") as info:
        compile_bundle(roots, load_policy(), LaunchLayout(workspace_roots=(str(ws),)))
    assert "put the credential in a directory of its own" in info.value.one_line()


@pytest.mark.parametrize("what", ["workspace", "codex-home", "home"])
def test_a_vault_that_contains_what_a_session_needs_is_refused(tmp_path: Path, what: str) -> None:
    vault = tmp_path / "v"
    inner = vault / "inner"
    inner.mkdir(parents=True)
    (vault / "auth.json").write_text("x")
    roots = (resolve_root(RootSpec(id="a", path=str(vault / "auth.json"))),)
    layout = {
        "workspace": LaunchLayout(workspace_roots=(str(inner),)),
        "codex-home": LaunchLayout(codex_home=str(inner)),
        "home": LaunchLayout(home=str(inner)),
    }[what]
    with pytest.raises(UnsafeRootError, match=f"vault {vault} .*contains") as info:
        compile_bundle(roots, load_policy(), layout)
    assert info.value.exit_code == 5


def test_a_plain_file_credential_directly_in_codex_home_is_refused(tmp_path: Path) -> None:
    from profilec.roots import resolve_home

    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "auth.json").write_text("x")
    roots = (resolve_root(RootSpec(id="a", path=str(home / "auth.json"))),)
    with pytest.raises(UnsafeRootError, match="plain file directly in the private CODEX_HOME"):
        compile_bundle(
            roots, load_policy(), LaunchLayout(codex_home=str(home)), resolve_home(str(home))
        )


def test_a_root_whose_vault_is_the_filesystem_root_is_refused(tmp_path: Path) -> None:
    from profilec.models.compiled import ResolvedRoot

    root = ResolvedRoot(id="a", path="/auth.json", kind="file", target="/auth.json", vault="/")
    with pytest.raises(UnsafeRootError, match="vault / "):
        compile_bundle((root,), load_policy(), LaunchLayout())


def test_nested_vaults_fold_into_one_deny_carrying_both_roots(tmp_path: Path) -> None:
    outer = tmp_path / "vault"
    (outer / "sub").mkdir(parents=True)
    (outer / "a.json").write_text("x")
    (outer / "sub" / "b.json").write_text("x")
    roots = (
        resolve_root(RootSpec(id="a", path=str(outer / "a.json"))),
        resolve_root(RootSpec(id="b", path=str(outer / "sub" / "b.json"))),
    )
    bundle = compile_bundle(roots, load_policy(), LaunchLayout())
    for profile in bundle.profiles:
        denies = [e for e in profile.entries if e.access == "deny"]
        assert [e.path for e in denies] == [str(outer)]
        assert {p.root_id for p in denies[0].provenance} == {"a", "b"}
        assert {p.reason for p in denies[0].provenance} == {"vault"}


def test_compile_is_deterministic(tmp_path: Path) -> None:
    lay, b1 = _compile(tmp_path)
    b2 = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    for fmt in ("toml", "overrides", "acp-json"):
        assert COMPILE_FORMATS.renderer(fmt)(b1) == COMPILE_FORMATS.renderer(fmt)(b2)


def test_toml_output_round_trips_and_selects_agent(tmp_path: Path) -> None:
    _, bundle = _compile(tmp_path)
    doc = tomllib.loads(COMPILE_FORMATS.renderer("toml")(bundle))
    assert doc["default_permissions"] == "profilec-agent"
    assert set(doc["permissions"]) == {
        "profilec-read-only",
        "profilec-agent",
        "profilec-agent-full-access",
    }


def test_override_keys_never_carry_a_path_or_token(tmp_path: Path) -> None:
    _, bundle = _compile(tmp_path)
    for line in override_lines(bundle):
        key, _, value = line.partition("=")
        assert "/" not in key and ":" not in key and '"' not in key
        assert "\n" not in line
        tomllib.loads("_x_ = " + value)


def test_acp_json_shape(tmp_path: Path) -> None:
    _, bundle = _compile(tmp_path)
    doc = json.loads(COMPILE_FORMATS.renderer("acp-json")(bundle))
    assert set(doc) == {"configOverrides", "modeProfiles"}
    assert doc["modeProfiles"] == {
        "read-only": "profilec-read-only",
        "agent": "profilec-agent",
        "agent-full-access": "profilec-agent-full-access",
    }


@pytest.mark.parametrize(
    "name", ['we ird "q" #=.json', "back\\slash.json", "ünï cödé.json", "dot.ted.name", "tab\tx"]
)
def test_any_legal_path_is_escaped_correctly(tmp_path: Path, name: str) -> None:
    # The denied key is the vault, so the awkward name is the vault directory's.
    d = tmp_path / "d = #x" / name
    d.mkdir(parents=True)
    target = d / "auth.json"
    target.write_text("x")
    roots = (resolve_root(RootSpec(id="a", path=str(target))),)
    bundle = compile_bundle(roots, load_policy(), LaunchLayout())
    doc = tomllib.loads(COMPILE_FORMATS.renderer("toml")(bundle))
    for pid in doc["permissions"]:
        assert doc["permissions"][pid]["filesystem"][str(d)] == "deny"
    for line in override_lines(bundle)[1:]:
        if not line.startswith("permissions."):
            continue  # approvals, features.apps: no path in them
        _, _, value = line.partition("=")
        table = tomllib.loads("_x_ = " + value)["_x_"]
        assert table["filesystem"][str(d)] == "deny"


def test_codex_home_output_is_private(tmp_path: Path) -> None:
    from profilec.emit.codex_home import write_codex_home

    _, bundle = _compile(tmp_path)
    out = tmp_path / "home"
    path = write_codex_home(bundle, str(out))
    assert os.stat(out).st_mode & 0o777 == 0o700
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_the_home_flag_refuses_a_vault_holding_home_in_every_format(tmp_path: Path) -> None:
    import subprocess
    import sys

    lay = make_layout(tmp_path / "l")
    inner = lay.host_target.parent / "home"
    inner.mkdir()
    base = [
        sys.executable,
        "-m",
        "profilec.cli",
        "compile",
        "--roots",
        str(lay.manifest),
        "--codex-home",
        str(lay.codex_home),
        "--home",
        str(inner),
    ]
    for fmt in ("toml", "bundle"):  # the compile pipeline, and the provenance document
        proc = subprocess.run([*base, "--format", fmt], capture_output=True, text=True, check=False)
        assert proc.returncode == 5, proc.stderr
        assert f"contains HOME {inner}" in proc.stderr and proc.stdout == ""
    ok = subprocess.run(
        [*base[:-1], str(lay.base), "--format", "toml"], capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0, ok.stderr


def test_root_directories_are_real_directories_without_pseudo_file_systems(
    tmp_path: Path,
) -> None:
    for name in ("opt", "proc", "dev", "sys", "srv"):
        (tmp_path / name).mkdir(mode=0o755)
    (tmp_path / "lost+found").mkdir(mode=0o700)  # others cannot enter: Codex as them refuses
    (tmp_path / "lib64").symlink_to("opt")  # a merged-/usr style top-level symlink
    (tmp_path / "file").write_text("x")
    assert root_directories(str(tmp_path)) == ("/opt", "/srv")
