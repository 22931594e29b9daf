"""The `requirements` format (Codex's managed requirements) and `profilec requirements`.

What each key does in the real Codex is measured in tests/integration/test_requirements_codex.py
(both cores, with a control that leaks); here: what the document holds, that it is the same for
every identity of a manifest, that verify is semantic (a stricter host file passes, each weaker
one fails), and that install is atomic and never replaces a file profilec did not write.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from profilec.cli import main
from profilec.codex.vocabulary import GRANULAR_ASK_ALL
from profilec.emit.requirements import HEADER, deny_read_paths, digest, render_requirements
from profilec.emit.requirements_install import installed_source
from profilec.emit.requirements_verify import requirements_problems
from profilec.errors import UnsafeRootError
from profilec.library import load_and_compile
from profilec.models.compiled import CompiledBundle
from tests.helpers import Layout, make_layout, write_manifest


def _bundle(lay: Layout) -> CompiledBundle:
    return load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )


@pytest.fixture
def lay(tmp_path: Path) -> Layout:
    return make_layout(tmp_path / "l", hop_dir=True)


def test_the_document_pins_profilecs_profiles_and_denies_every_vault(lay: Layout) -> None:
    bundle = _bundle(lay)
    text = render_requirements(bundle)
    assert text.startswith(HEADER)
    doc = tomllib.loads(text)
    assert doc["default_permissions"] == bundle.default_profile_id
    assert doc["allowed_permission_profiles"] == {p.profile_id: True for p in bundle.profiles}
    assert doc["permissions"]["filesystem"]["deny_read"] == [str(lay.host_target.parent)]
    # profilec's modes ask on request (spelled granular) or never, and only the user reviews:
    # an adapter's built-in modes send `on-request` or `auto_review` and are refused.
    assert doc["allowed_approval_policies"] == [GRANULAR_ASK_ALL, "never"]
    assert doc["allowed_approvals_reviewers"] == ["user"]
    assert doc["allow_managed_hooks_only"] is True and doc["features"] == {"hooks": False}
    assert set(doc) == {
        "default_permissions",
        "allowed_approval_policies",
        "allowed_approvals_reviewers",
        "allow_managed_hooks_only",
        "features",
        "allowed_permission_profiles",
        "permissions",
        "mcp_servers",
    }
    assert doc["mcp_servers"] == {}  # no vouched server: Codex may start none
    assert lay.marker not in text  # paths only, never a credential byte
    assert render_requirements(_bundle(lay)) == text  # same inputs, same bytes


def test_one_document_for_every_identity_of_a_manifest(tmp_path: Path) -> None:
    base = tmp_path / "two"
    base.mkdir()
    roots: list[dict[str, object]] = []
    homes: dict[str, Path] = {}
    for ident in ("a1", "a2"):
        vault = base / "vaults" / ident
        vault.mkdir(parents=True, mode=0o700)
        (vault / "auth.json").write_text("{}\n")
        home = base / ident / "codex-home"
        home.mkdir(parents=True)
        (home / "auth.json").symlink_to(vault / "auth.json")
        (home / "auth.lock").touch()
        (base / ident / "ws").mkdir()
        homes[ident] = home
        roots.append({"id": f"{ident}-auth", "path": str(home / "auth.json")})
    manifest = write_manifest(base / "roots.toml", roots)
    texts = {
        ident: render_requirements(
            load_and_compile(
                str(manifest),
                workspace_roots=[str(base / ident / "ws")],
                codex_home=str(homes[ident]),
            )
        )
        for ident in homes
    }
    assert texts["a1"] == texts["a2"]
    denied = tomllib.loads(texts["a1"])["permissions"]["filesystem"]["deny_read"]
    assert denied == [str(base / "vaults" / "a1"), str(base / "vaults" / "a2")]


def test_a_vault_inside_a_denied_identity_home_is_refused(lay: Layout) -> None:
    bundle = _bundle(lay)
    foreign = lay.host_target.parent.parent  # the layout's base holds the vault
    from profilec.models.compiled import ForeignDir

    odd = bundle.model_copy(
        update={"other_identities": (ForeignDir(path=str(foreign), identity="a2", what="home"),)}
    )
    with pytest.raises(UnsafeRootError, match="sits inside identity a2's home"):
        deny_read_paths(odd)
    assert deny_read_paths(bundle)  # negative control: without it, the vault is listed


def test_verify_is_semantic(lay: Layout) -> None:
    bundle = _bundle(lay)
    text = render_requirements(bundle)
    vault = str(lay.host_target.parent)
    assert requirements_problems(text, bundle) == []
    # A host file that merged profilec's keys into its own, and denies more, still holds.
    stricter = text.replace("deny_read = [", 'deny_read = [\n  "/srv/other",') + (
        '\n[otel]\nenvironment = "ci"\n'
    )
    assert requirements_problems(stricter, bundle) == []
    ancestor = text.replace(f'"{vault}"', f'"{os.path.dirname(vault)}"')
    assert requirements_problems(ancestor, bundle) == []  # a denied ancestor covers it
    # Each weaker file fails, naming what is missing.
    assert requirements_problems(text.replace(f'"{vault}"', '"/elsewhere"'), bundle) == [
        f"deny_read misses {vault}"
    ]
    wider = text.replace(
        "[allowed_permission_profiles]", '[allowed_permission_profiles]\n":workspace" = true'
    )
    assert requirements_problems(wider, bundle) == [
        "allowed_permission_profiles also allows :workspace"
    ]
    no_pin = "\n".join(
        line
        for line in text.split("\n")
        if "= true" not in line and "allowed_permission_profiles" not in line
    )
    assert "no [allowed_permission_profiles]" in requirements_problems(no_pin, bundle)[0]
    other_default = text.replace(
        f'default_permissions = "{bundle.default_profile_id}"', 'default_permissions = ":workspace"'
    )
    assert requirements_problems(other_default, bundle) == [
        "default_permissions is ':workspace', not one of profilec's profiles"
    ]
    # The approval keys: missing, or allowing what an adapter's built-in mode sends, is weaker.
    lines = text.split("\n")
    no_approvals = "\n".join(x for x in lines if not x.startswith("allowed_approval"))
    assert requirements_problems(no_approvals, bundle) == [
        "no allowed_approval_policies: an adapter's built-in legacy mode may run a turn",
        "no allowed_approvals_reviewers: a model may review escalations",
    ]
    no_hooks_pin = text.replace("allow_managed_hooks_only = true\n", "").replace(
        "hooks = false", "hooks = true"
    )
    assert requirements_problems(no_hooks_pin, bundle) == [
        "allow_managed_hooks_only is not true: a config layer's hook may run",
        "features.hooks is not pinned to false",
    ]
    on_request = text.replace('"never"]', '"never", "on-request"]')
    assert on_request != text
    assert requirements_problems(on_request, bundle) == [
        'allowed_approval_policies also allows "on-request"'
    ]
    auto = text.replace(
        'allowed_approvals_reviewers = ["user"]',
        'allowed_approvals_reviewers = ["user", "auto_review"]',
    )
    assert requirements_problems(auto, bundle) == [
        'allowed_approvals_reviewers also allows "auto_review"'
    ]
    other_flags = text.replace("mcp_elicitations = true", "mcp_elicitations = false")
    assert len(requirements_problems(other_flags, bundle)) == 1
    assert GRANULAR_ASK_ALL in tomllib.loads(text)["allowed_approval_policies"]
    assert requirements_problems("not = [toml", bundle)[0].startswith("not valid TOML")
    no_mcp = text.replace("[mcp_servers]\n", "")
    assert requirements_problems(no_mcp, bundle) == [
        "no [mcp_servers]: Codex may start any MCP server a config layer names"
    ]
    rogue = text + '[mcp_servers.rogue.identity]\ncommand = "/bin/sh"\n'
    assert requirements_problems(rogue, bundle) == ["mcp_servers also allows rogue"]


def _flags(lay: Layout, path: Path) -> list[str]:
    return [
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
        "--path",
        str(path),
    ]


def test_install_verify_and_refuse(
    lay: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "etc" / "codex" / "requirements.toml"
    assert main(["requirements", "verify", *_flags(lay, path)]) == 1  # nothing in place yet
    assert "no managed requirements file" in capsys.readouterr().err
    assert main(["requirements", "install", *_flags(lay, path)]) == 0
    assert "installed" in capsys.readouterr().err
    installed = path.read_text()
    # The header names the manifest and the sha256 of its bytes; the rest is the compiled text.
    source = f'# compiled from manifest "{lay.manifest}" ({digest(lay.manifest.read_bytes())})\n'
    assert installed == HEADER + source + render_requirements(_bundle(lay)).removeprefix(HEADER)
    assert installed_source(installed) == (str(lay.manifest), digest(lay.manifest.read_bytes()))
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    assert main(["requirements", "install", *_flags(lay, path)]) == 0
    assert "already current" in capsys.readouterr().err
    assert main(["requirements", "verify", *_flags(lay, path)]) == 0
    # A file profilec did not write is never replaced (exit 6), and verify says what it lacks.
    path.write_text('default_permissions = "mine"\n')
    assert main(["requirements", "install", *_flags(lay, path)]) == 6
    assert "did not write" in capsys.readouterr().err
    assert path.read_text() == 'default_permissions = "mine"\n'
    assert main(["requirements", "verify", *_flags(lay, path)]) == 1
    err = capsys.readouterr().err
    assert "deny_read misses" in err and "not one of profilec's profiles" in err
    # A file others can write is refused, not trusted (exit 3).
    os.chmod(path, 0o666)
    assert main(["requirements", "verify", *_flags(lay, path)]) == 3
    assert main(["requirements", "bogus", *_flags(lay, path)]) == 2


def test_a_second_daemons_install_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two daemons, one host: the second daemon's install (another manifest) used to replace
    the first one's file silently (exit 0), taking the first vaults out of the managed layer.
    It is refused now (exit 6, nothing written), naming the other manifest and the per-session
    bind; the first daemon's re-install, after its manifest changed, still replaces it."""
    first, second = make_layout(tmp_path / "d1"), make_layout(tmp_path / "d2")
    path = tmp_path / "etc-codex" / "requirements.toml"
    assert main(["requirements", "install", *_flags(first, path)]) == 0
    capsys.readouterr()
    before = path.read_text()
    assert main(["requirements", "install", *_flags(second, path)]) == 6
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"compiled from another manifest, {first.manifest}" in err
    assert "--format requirements" in err and "private mount namespace" in err
    assert path.read_text() == before  # nothing written
    # Control: with the first file's source line gone (what every file was before), the
    # second daemon's install is refused too: the file may be another daemon's.
    lines = before.split("\n")
    path.write_text("\n".join([lines[0], *lines[2:]]))
    assert main(["requirements", "install", *_flags(second, path)]) == 6
    assert "names no manifest" in capsys.readouterr().err
    # The same daemon, its manifest edited (another digest): re-installed, new digest recorded.
    path.write_text(before)
    first.manifest.write_text(first.manifest.read_text() + "\n# edited\n")
    assert main(["requirements", "install", *_flags(first, path)]) == 0
    assert "installed" in capsys.readouterr().err
    assert installed_source(path.read_text()) == (
        str(first.manifest),
        digest(first.manifest.read_bytes()),
    )
    assert main(["requirements", "verify", *_flags(first, path)]) == 0


def test_verify_rejects_extra_permissions_tables(lay: Layout) -> None:
    """Codex reads `[permissions.<name>]` in requirements as a managed-layer profile: named
    like a config profile it stops every session ("requirements.toml permissions profile
    `profilec-agent` conflicts with a config-defined profile of the same name", 0.171.0 and
    0.166.0). Only `[permissions.filesystem]` passes."""
    bundle = _bundle(lay)
    text = render_requirements(bundle)
    assert requirements_problems(text, bundle) == []
    same = text + '\n[permissions.profilec-agent.filesystem]\n"/" = "read"\n'
    other = text + "\n[permissions.other]\n"
    for extra, name in ((same, "profilec-agent"), (other, "other")):
        problems = requirements_problems(extra, bundle)
        assert len(problems) == 1 and problems[0].startswith(f"[permissions.{name}] defines")


def test_check_requirements_findings(
    lay: Layout, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = [
        "check",
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
        "--format",
        "json",
    ]
    import json

    assert main(flags) == 0  # none named: a warning only
    rules = {f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert "PC057" in rules and "PC056" not in rules
    path = tmp_path / "requirements.toml"
    path.write_text(render_requirements(_bundle(lay)))
    assert main([*flags, "--requirements", str(path)]) == 0
    rules = {f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert not rules & {"PC056", "PC057"}
    path.write_text(render_requirements(_bundle(lay)).replace(str(lay.host_target.parent), "/x"))
    assert main([*flags, "--requirements", str(path)]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [f["rule"] for f in found if f["rule"].startswith("PC05")] == ["PC056"]
    # Not waivable: --ignore PC056 is refused.
    assert main([*flags, "--requirements", str(path), "--ignore", "PC056"]) == 2


def test_a_credential_store_is_denied_whole_in_every_mode_and_in_the_requirements(
    tmp_path: Path,
) -> None:
    base = tmp_path / "s"
    store = base / "vaults"
    (store / "a1").mkdir(parents=True, mode=0o700)
    (store / "a1" / "auth.json").write_text("{}\n")
    home = base / "a1" / "codex-home"
    home.mkdir(parents=True)
    (home / "auth.json").symlink_to(store / "a1" / "auth.json")
    (home / "auth.lock").touch()
    (base / "a1" / "ws").mkdir()
    manifest = write_manifest(base / "roots.toml", [{"id": "a1", "path": str(home / "auth.json")}])

    def compiled(with_store: bool) -> CompiledBundle:
        if with_store:
            manifest.write_text(f'credential_stores = ["{store}"]\n' + manifest.read_text())
        return load_and_compile(
            str(manifest), workspace_roots=[str(base / "a1" / "ws")], codex_home=str(home)
        )

    without = compiled(False)  # negative control: only today's vault is denied
    assert deny_read_paths(without) == [str(store / "a1")]
    bundle = compiled(True)
    # A vault the daemon adds later lands inside the store: denied from its first byte.
    assert deny_read_paths(bundle) == [str(store)]
    for profile in bundle.profiles:
        denies = [e.path for e in profile.entries if e.access == "deny"]
        assert str(store) in denies and str(store / "a1") not in denies, profile.mode


def test_a_store_that_holds_the_workspace_is_refused(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    manifest = lay.manifest
    manifest.write_text(f'credential_stores = ["{lay.base}"]\n' + manifest.read_text())
    with pytest.raises(UnsafeRootError, match="credential-store"):
        _bundle(lay)


@pytest.mark.parametrize("ch", ["{", "}", "\\"])
def test_a_vault_path_codex_cannot_parse_as_a_requirement_is_refused(
    tmp_path: Path, ch: str
) -> None:
    """Codex reads `\\`, `{` and `}` in a profile key literally, but refuses them in a
    requirements `deny_read` path: "failed to parse requirements layer ...: unsupported
    configuration path "<path>" using POSIX path syntax in `permissions.filesystem.deny_read`"
    (measured on 0.171.0 and 0.166.0 by the differential tester's managed cases), and then no
    session on the host starts. The profiles compile; the requirements are refused (exit 5)."""
    lay = make_layout(tmp_path / f"l{ch}x", hop_dir=True)
    bundle = _bundle(lay)  # the profiles hold the vault as a literal key
    with pytest.raises(UnsafeRootError) as err:
        render_requirements(bundle)
    assert repr(ch)[1:-1] in err.value.message or ch in err.value.message
    assert "requirements" in err.value.message


def test_the_ci_recipe_passes_requirements(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/ci.md: the runner checks the committed requirements file against the CI manifest
    (production paths, allow_missing). Without `--requirements` check exits 0 with only PC057;
    with the committed file it passes with neither PC056 nor PC057; a vault added to the
    manifest but not to the committed file fails (PC056, exit 1)."""
    import json
    import re

    doc = (Path(__file__).resolve().parents[2] / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "--requirements ci/requirements.toml" in doc
    manifest = next(
        b for b in re.findall(r"```toml\n(.*?)```", doc, flags=re.S) if "allow_missing" in b
    )
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "roots.toml").write_text(manifest)
    home = tmp_path / "codex-home"
    home.mkdir(mode=0o700)
    (home / "auth.lock").touch(mode=0o600)
    (tmp_path / "ws").mkdir()
    flags = ["--roots", "ci/roots.toml", "--codex-home", str(home)]
    flags += ["--workspace-root", str(tmp_path / "ws")]
    out = ["--out", "ci/requirements.toml"]
    assert main(["compile", *flags, "--format", "requirements", *out]) == 0

    def rules(*extra: str) -> tuple[int, set[str]]:
        code = main(["check", *flags, "--format", "json", *extra])
        return code, {f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]}

    capsys.readouterr()
    code, found = rules()  # the control: the README's workflow today
    assert code == 0 and "PC057" in found
    code, found = rules("--requirements", "ci/requirements.toml")
    assert code == 0 and not found & {"PC056", "PC057"}, found
    added = manifest + (
        '\n[[roots]]\nid = "second"\npath = "/srv/agents/a1/vault2/auth.json"\n'
        'backend = "file"\nallow_missing = true\n'
    )
    (tmp_path / "ci" / "roots.toml").write_text(added)
    code, found = rules("--requirements", "ci/requirements.toml")
    assert code == 1 and "PC056" in found, found
