"""The parent policy (profiles/parent.toml) and the trusted side's inputs, without Codex.

* every format carries every parent setting at its value;
* the agent's session config cannot undo one, in any spelling;
* the policy file is validated (a setting on the profile tables, or two on one key, is refused);
* profilec's own inputs and the parent's (manifest, policy directory, HOME's login-shell and
  git config files, each `.git` above a workspace root) are read-only in every mode under the
  evaluator, with a negative control: the same layout compiled without them leaves them
  writable in agent-full-access.
The real-binary halves are tests/integration/test_parent_inputs_codex.py and
tests/integration/test_parent_roads.py.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

import profilec.pipeline
from profilec.api import load_and_compile
from profilec.check.configstack import parse_override_lines
from profilec.check.lints.parent import holds
from profilec.codex.resolve import resolve, session_contexts
from profilec.emit.acp_json import render_acp_json
from profilec.emit.codex_home import write_codex_home
from profilec.emit.codex_toml import render_toml
from profilec.emit.launch import render_launch
from profilec.emit.overrides import render_overrides
from profilec.errors import PolicyError
from profilec.models.compiled import CompiledBundle
from profilec.policy import load_policy
from profilec.trustedbase import under_temp_dir
from tests.helpers import make_layout

MODES = ("read-only", "agent", "agent-full-access")


def _bundle(tmp_path: Path, **kw: Any) -> CompiledBundle:
    lay = make_layout(tmp_path / "l")
    return load_and_compile(
        str(lay.manifest),
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
        **kw,
    )


def _merged_formats(bundle: CompiledBundle, tmp_path: Path) -> dict[str, dict[str, Any]]:
    out = {
        "toml": tomllib.loads(render_toml(bundle)),
        "overrides": parse_override_lines(render_overrides(bundle), where="t"),
        "acp-json": parse_override_lines(
            "\n".join(json.loads(render_acp_json(bundle))["configOverrides"]), where="t"
        ),
    }
    home = tmp_path / "ch-out"
    write_codex_home(bundle, str(home))
    out["codex-home"] = tomllib.loads((home / "config.toml").read_text())
    launch = json.loads(render_launch(bundle))
    for i, adapter in enumerate(launch["adapters"]):
        args = adapter.get("args", [])
        lines = [args[k + 1] for k, a in enumerate(args) if a == "-c"]
        if lines:
            out[f"launch[{i}] -c"] = parse_override_lines("\n".join(lines), where="t")
        for f in adapter.get("files", []):
            if f["path"].endswith("config.toml"):
                out[f"launch[{i}] {f['path']}"] = tomllib.loads(f["content"])
        if "CODEX_CONFIG" in adapter.get("env", {}):
            out[f"launch[{i}] CODEX_CONFIG"] = json.loads(adapter["env"]["CODEX_CONFIG"])
    return out


def test_every_format_carries_every_parent_setting(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    settings = load_policy().parent
    assert settings is not None and bundle.parent == tuple(settings.settings)
    keys = {s.key for s in bundle.parent}
    assert {
        "features.shell_snapshot",
        "features.multi_agent",
        "shell_environment_policy.exclude",
    } <= keys
    formats = _merged_formats(bundle, tmp_path)
    assert {"toml", "overrides", "acp-json", "codex-home"} <= set(formats)
    assert any(k.startswith("launch[") for k in formats), formats
    for name, merged in formats.items():
        missing = [s.key for s in bundle.parent if not holds(s, merged)]
        assert missing == [], name
    # Control: a config without the parent tables holds none of them.
    bare = {
        k: v
        for k, v in formats["toml"].items()
        if k not in ("features", "shell_environment_policy")
    }
    assert not any(holds(s, bare) for s in bundle.parent)


@pytest.mark.parametrize(
    "session",
    [
        {"features": {"shell_snapshot": True, "multi_agent": True}},
        {"features.shell_snapshot": True},
        {"shell_environment_policy": {"inherit": "all", "ignore_default_excludes": True}},
        {"shell_environment_policy.exclude": []},
        {"profiles": {"x": {"features": {"multi_agent": True}}}, "profile": "x"},
    ],
)
def test_the_session_config_cannot_undo_the_parent_policy(
    tmp_path: Path, session: dict[str, Any]
) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"model": "gpt-5.1-codex", **session}))
    bundle = _bundle(tmp_path, session_config_path=str(path))
    assert bundle.session_config == {"model": "gpt-5.1-codex"}
    assert set(bundle.stripped_session_keys) == set(session)


def _policy_copy(tmp_path: Path, text: str) -> Path:
    pdir = tmp_path / "profiles"
    shutil.copytree("profiles", pdir)
    (pdir / "parent.toml").write_text(text)
    return pdir


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[[settings]]\nkey = "permissions.x"\nvalue = true\nroad = "r"\n'
            'codex_versions = ">=0.171.0"\nrationale = "r"\n',
            "belongs to the compiled profiles",
        ),
        (
            '[[settings]]\nkey = "features.a"\nvalue = true\nroad = "r"\n'
            'codex_versions = ">=0.171.0"\nrationale = "r"\n' * 2,
            "overlaps another",
        ),
        (
            '[[settings]]\nkey = "features"\nvalue = true\nroad = "r"\n'
            'codex_versions = ">=0.171.0"\nrationale = "r"\n',
            "schema violation",
        ),
    ],
)
def test_a_bad_parent_policy_is_refused(tmp_path: Path, body: str, message: str) -> None:
    pdir = _policy_copy(tmp_path, f'schema_version = 1\nrationale = "r"\n{body}')
    with pytest.raises(PolicyError, match=message):
        load_policy(str(pdir))


def test_a_policy_directory_without_parent_toml_is_refused(tmp_path: Path) -> None:
    pdir = tmp_path / "profiles"
    shutil.copytree("profiles", pdir)
    (pdir / "parent.toml").unlink()
    with pytest.raises(PolicyError, match="does not exist"):
        load_policy(str(pdir))


def _access(bundle: CompiledBundle, mode: str, path: str) -> str:
    profile = bundle.profile_for(mode)
    ctx = session_contexts(bundle.layout.workspace_roots, tmpdir=bundle.layout.tmpdir)[0]
    eff = resolve({profile.profile_id: profile.codex_table()}, profile.profile_id, ctx)
    return str(eff.winner(path)[0])


def _inputs_layout(tmp_path: Path) -> tuple[Any, dict[str, str]]:
    lay = make_layout(tmp_path / "l")
    repo = tmp_path / "l" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "ws").mkdir()
    home = tmp_path / "l" / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# trusted\n")
    paths = {
        "manifest": str(lay.manifest),
        "repo .git": str(repo / ".git"),
        "missing .git above": str(tmp_path / "l" / ".git"),
        "HOME .gitconfig (missing)": str(home / ".gitconfig"),
        "HOME .config/git (missing)": str(home / ".config" / "git"),
        "HOME .bashrc": str(home / ".bashrc"),
    }
    if not under_temp_dir(str(Path("profiles").resolve())):
        # A checkout under /tmp is a scratch install: its policy directory is left out
        # (profilec.trustedbase.profilec_installation says why).
        paths["policy directory"] = str(Path("profiles").resolve())
    kw = {
        "workspace_roots": [str(repo / "ws")],
        "codex_home": str(lay.codex_home),
        "home": str(home),
    }
    return (lay, kw), paths


def test_trusted_side_inputs_are_read_only_in_every_mode(tmp_path: Path) -> None:
    (lay, kw), paths = _inputs_layout(tmp_path)
    bundle = load_and_compile(str(lay.manifest), **kw)
    for mode in MODES:
        for what, path in paths.items():
            assert _access(bundle, mode, path) in ("read", "deny"), (mode, what)


def test_control_without_the_input_paths_full_access_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (lay, kw), paths = _inputs_layout(tmp_path)
    monkeypatch.setattr(profilec.pipeline, "parent_input_paths", lambda *a: [])
    bundle = load_and_compile(str(lay.manifest), **kw)
    writable = {w for w, p in paths.items() if _access(bundle, "agent-full-access", p) == "write"}
    # The checkout's policy directory may sit in a read-only place on some hosts; `l` is
    # pinned above the vault, and Codex keeps `.git` read-only directly inside a pin.
    assert writable >= set(paths) - {"policy directory", "missing .git above"}, writable


def test_input_entries_carry_their_role_in_provenance(tmp_path: Path) -> None:
    (lay, kw), _ = _inputs_layout(tmp_path)
    bundle = load_and_compile(str(lay.manifest), **kw)
    roles = {t.role or "" for t in bundle.trusted_base if t.source == "input"}
    for role in ("roots manifest", "HOME git config", "HOME login-shell file"):
        assert role in roles, role
    assert ("policy directory" in roles) != under_temp_dir(str(Path("profiles").resolve()))
    assert any(r.startswith("git repository above workspace root") for r in roles)
    # Entries appear where a mode could write the path (else a read-only ancestor covers it),
    # each naming its role.
    details = {
        p.detail or ""
        for e in bundle.profile_for("agent-full-access").entries
        for p in e.provenance
    }
    assert any(d.startswith("input: ") for d in details), details


def test_mcp_oauth_tokens_in_codex_home_are_denied_in_every_mode(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    tokens = lay.codex_home / ".credentials.json"
    kw: dict[str, Any] = {
        "workspace_roots": [str(lay.workspace)],
        "codex_home": str(lay.codex_home),
    }
    before = load_and_compile(str(lay.manifest), **kw)
    assert all(_access(before, m, str(tokens)) == "read" for m in MODES)  # the control
    tokens.write_text("{}\n")
    after = load_and_compile(str(lay.manifest), **kw)
    assert all(_access(after, m, str(tokens)) == "deny" for m in MODES)


def test_watch_reports_an_in_place_edit_of_the_manifest_and_of_a_policy_file(
    tmp_path: Path,
) -> None:
    import tempfile

    from profilec.watch import Watcher, watch_bundle, watch_set

    lay = make_layout(tmp_path / "l")
    # Outside the temp dir: a policy directory under /tmp is a scratch one, not watched.
    scratch = Path(tempfile.mkdtemp(prefix="profilec-policy-", dir="/var/tmp"))
    request_cleanup = scratch
    pdir = scratch / "profiles"
    shutil.copytree("profiles", pdir)
    bundle = load_and_compile(
        str(lay.manifest),
        profiles_dir=str(pdir),
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
    )
    for edited in (lay.manifest, pdir / "parent.toml"):
        watcher = watch_bundle(bundle)
        control = Watcher(watch_set(bundle.roots, bundle.codex_home))
        assert watcher.begin() is None and control.begin() is None
        with edited.open("a") as fh:  # in place: same inode
            fh.write("# an identity cut out\n")
        drift = watcher.poll()
        assert drift is not None and drift.kind == "modified" and drift.path == str(edited)
        assert drift.role == "trusted-input"
        assert control.poll() is None  # yesterday's watch set did not notice
    shutil.rmtree(request_cleanup)


def test_another_identitys_codex_home_and_home_are_denied_and_the_control_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration.test_identities_codex import compile_a1, two_identities

    lay = two_identities(tmp_path)
    a2 = lay["a2"]
    paths = [
        f"{a2}/codex-home/sessions/rollout.jsonl",
        f"{a2}/codex-home/auth.lock",
        f"{a2}/home/.bashrc",
    ]
    bundle = compile_a1(lay)
    assert {(f.identity, f.what) for f in bundle.other_identities} == {
        ("a2", "codex-home"),
        ("a2", "home"),
    }
    for mode in MODES:
        assert [_access(bundle, mode, p) for p in paths] == ["deny"] * 3, mode
        # a1's own CODEX_HOME keeps today's behaviour: readable, never writable
        assert _access(bundle, mode, f"{lay['a1']}/codex-home/config.toml") == "read"
    monkeypatch.setattr(profilec.pipeline, "other_identities", lambda *a: ())
    control = compile_a1(lay)
    assert all(_access(control, m, paths[0]) == "read" for m in MODES)


def test_an_identity_directory_holding_this_sessions_workspace_is_refused(tmp_path: Path) -> None:
    from profilec.errors import UnsafeRootError
    from tests.integration.test_identities_codex import two_identities

    lay = two_identities(tmp_path)
    ws = lay["a2"] / "home" / "proj"
    ws.mkdir()
    with pytest.raises(UnsafeRootError, match="holds this session's workspace root"):
        load_and_compile(
            str(lay["manifest"]),
            workspace_roots=[str(ws)],
            codex_home=str(lay["a1"] / "codex-home"),
        )


def test_another_identitys_broken_chain_does_not_block_this_compile(tmp_path: Path) -> None:
    from profilec.errors import RootChainError
    from tests.integration.test_identities_codex import compile_a1, two_identities

    lay = two_identities(tmp_path)
    shutil.rmtree(tmp_path / "vaults" / "a2")  # a2's link dangles now
    bundle = compile_a1(lay)
    assert [r.id for r in bundle.roots] == ["a1-codex"]
    a2 = lay["a2"]
    assert _access(bundle, "agent-full-access", f"{a2}/codex-home/auth.json") == "deny"
    # a2's own compile still fails on its own chain (exit 4), as before.
    with pytest.raises(RootChainError):
        load_and_compile(
            str(lay["manifest"]),
            workspace_roots=[str(a2 / "ws")],
            codex_home=str(a2 / "codex-home"),
        )


def test_a_plan_for_one_identity_never_binds_anothers_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import tomlkit

    import profilec.mounts.api
    from profilec.mounts.api import load_and_plan
    from tests.integration.test_identities_codex import two_identities

    lay = two_identities(tmp_path)
    a1 = lay["a1"]
    (tmp_path / "daemon").mkdir()
    layout = tmp_path / "layout.toml"
    layout.write_text(
        tomlkit.dumps(
            {
                "schema_version": 1,
                "daemon_root": str(tmp_path / "daemon"),
                "agent_home": str(a1 / "codex-home"),
                "workspace_roots": [str(a1 / "ws")],
                "state_dir": str(tmp_path / "daemon" / "state" / "a1"),
                "backends": ["codex"],
                "hidden": {"host_home": str(tmp_path / "hosthome")},
            }
        )
    )
    os.chmod(layout, 0o600)
    with monkeypatch.context() as m:  # the control: yesterday's plan binds a2's vault
        m.setattr(profilec.mounts.api, "foreign_spec", lambda *a: None)
        old = {mnt.path for mnt in load_and_plan(str(lay["manifest"]), str(layout)).mounts}
    assert str(tmp_path / "vaults" / "a2") in old
    plan = load_and_plan(str(lay["manifest"]), str(layout))
    bound = {m.path for m in plan.mounts}
    assert str(tmp_path / "vaults" / "a1") in bound
    assert not [p for p in bound if "/a2" in p], bound
    # a2's broken chain does not block a1's plan.
    shutil.rmtree(tmp_path / "vaults" / "a2")
    again = load_and_plan(str(lay["manifest"]), str(layout))
    assert {m.path for m in again.mounts} == bound


def test_the_launch_recipe_lists_only_this_identitys_vaults(tmp_path: Path) -> None:
    from tests.integration.test_identities_codex import compile_a1, two_identities

    lay = two_identities(tmp_path)
    doc = json.loads(render_launch(compile_a1(lay)))
    assert doc["trusted_parent"]["vaults"] == [str(tmp_path / "vaults" / "a1")]


def test_profilecs_own_launch_recipe_opens_no_listener_and_carries_no_secret(
    tmp_path: Path,
) -> None:
    from profilec.check.lints.launcher import argv_findings

    doc = json.loads(render_launch(_bundle(tmp_path)))
    argvs = [(str(i), list(a.get("args", []))) for i, a in enumerate(doc["adapters"])]
    assert argvs and argv_findings(argvs) == []
    # stdio and the masked unix socket are fine; a secret in the environment is not on argv.
    ok = [("a", ["codex", "app-server", "--listen", "stdio://", "-c", "model=gpt"])]
    assert argv_findings(ok) == []


def test_explain_and_audit_show_the_parent_policy_with_its_roads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from profilec.cli import main

    lay = make_layout(tmp_path / "l")
    flags = [
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]
    assert main(["explain", str(lay.link), "--mode", "agent", *flags]) == 0
    text = capsys.readouterr().out
    assert "features.shell_snapshot=false (road: shell-snapshot)" in text
    assert main(["audit", *flags, "--format", "md"]) in (0, 1)
    md = capsys.readouterr().out
    assert "## Trusted parent (profiles/parent.toml)" in md
    assert "spawn-agent-media" in md and "parent-environment" in md


def test_watch_reports_a_project_doc_link_into_a_vault(tmp_path: Path) -> None:
    from profilec.watch import watch_bundle

    lay = make_layout(tmp_path / "l")
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    watcher = watch_bundle(bundle)
    assert watcher.begin() is None
    # Control: a project doc that is a link to a harmless file is not drift.
    (lay.workspace / "notes.md").write_text("hi\n")
    (lay.workspace / "AGENTS.override.md").symlink_to("notes.md")
    assert watcher.poll() is None
    (lay.workspace / "AGENTS.md").symlink_to(lay.link)  # -> CODEX_HOME/auth.json -> vault
    drift = watcher.poll()
    assert drift is not None and drift.kind == "project-doc-link"
    assert drift.path == str(lay.workspace / "AGENTS.md")
    assert str(lay.host_target) in drift.observed
    # Planted before the watch starts: reported at once.
    assert watch_bundle(bundle).begin() is not None
