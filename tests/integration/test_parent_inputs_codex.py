"""Against the real pinned Codex: the trusted side's inputs stay read-only in every mode.

A model command in the sandbox attacks what the trusted side reads or runs next:
* the roots manifest (append, rename, remove): an edit cut another agent's root out and the
  next compile exposed that agent's credential (docs/parent.md);
* `git init` in the directory above the workspace (the parent's turn-start `git status` then
  runs a planted clean filter), and the `.git/config` of a repository enclosing the workspace;
* HOME's git config (`~/.gitconfig`, `~/.config/git/config`) and login-shell files;
* the profilec installation (sys.prefix, bin/ included).
Each attack first succeeds with the compiled bundle less its `input` entries (the negative
control: yesterday's output), then fails with the full bundle.

Scratch trees live under /var/tmp: Codex refuses a CODEX_HOME under the system temp dir.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from profilec.emit.overrides import override_lines
from profilec.library import load_and_compile
from profilec.models.compiled import CompiledBundle
from tests.helpers import marker, write_manifest

pytestmark = pytest.mark.codex

MODES = ["read-only", "agent", "agent-full-access"]


@pytest.fixture
def base(var_tmp_base: Path) -> Path:
    return var_tmp_base


def _layout(base: Path) -> dict[str, Any]:
    """base/{vault/auth.json <- ch/auth.json, repo/.git + repo/ws, up/ws2, home/, roots.toml}."""
    vault = base / "vault"
    vault.mkdir(mode=0o700)
    target = vault / "auth.json"
    target.write_text(f'{{"OPENAI_API_KEY": "{marker()}"}}\n')
    os.chmod(target, 0o600)
    ch = base / "ch"
    ch.mkdir()
    (ch / "auth.json").symlink_to(target)
    (ch / "auth.lock").write_text("")
    repo = base / "repo"
    (repo / "ws").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (base / "up" / "ws2").mkdir(parents=True)
    home = base / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# trusted\n")
    manifest = write_manifest(
        base / "roots.toml", [{"id": "codex-auth", "path": str(ch / "auth.json")}]
    )
    return {
        "ch": ch,
        "repo": repo,
        "ws": repo / "ws",
        "ws2": base / "up" / "ws2",
        "home": home,
        "manifest": manifest,
    }


def _compile(lay: dict[str, Any]) -> CompiledBundle:
    return load_and_compile(
        str(lay["manifest"]),
        workspace_roots=[str(lay["ws"]), str(lay["ws2"])],
        codex_home=str(lay["ch"]),
        home=str(lay["home"]),
    )


def _without_inputs(
    lay: dict[str, Any], monkeypatch: pytest.MonkeyPatch, **kw: Any
) -> CompiledBundle:
    """The control: yesterday's output, compiled with no trusted-side input paths."""
    import profilec.pipeline

    with monkeypatch.context() as m:
        m.setattr(profilec.pipeline, "parent_input_paths", lambda *a: [])
        return load_and_compile(
            str(lay["manifest"]), codex_home=str(lay["ch"]), home=str(lay["home"]), **kw
        )


def _attack(codex: Path, bundle: CompiledBundle, lay: dict[str, Any], mode: str) -> str:
    pid = bundle.profile_for(mode).profile_id
    args = [str(codex), "sandbox"]
    for line in override_lines(bundle):
        args += ["-c", line]
    m, repo, home, up = lay["manifest"], lay["repo"], lay["home"], lay["ws2"].parent
    script = "; ".join(
        [
            f"echo '# cut' >> '{m}' && echo MANIFEST-APPENDED",
            f"mv '{m}' '{m}.old' && echo MANIFEST-MOVED && mv '{m}.old' '{m}'",
            f"git init -q '{up}' && echo GIT-INIT-ABOVE",
            f"git -C '{repo}' config filter.x.clean 'cat' && echo REPO-CONFIG-WRITTEN",
            f"echo '[filter \"x\"]' > '{home}/.gitconfig' && echo HOME-GITCONFIG-WRITTEN",
            f"mkdir -p '{home}/.config/git' && echo x > '{home}/.config/git/config' "
            "&& echo XDG-GITCONFIG-WRITTEN",
            f"echo 'cp x y' >> '{home}/.bashrc' && echo BASHRC-WRITTEN",
            f"touch '{sys.prefix}/bin/profilec-planted' && echo INSTALL-BIN-WRITTEN",
            "true",
        ]
    )
    args += ["-P", pid, "-C", str(lay["ws"]), "--", "/bin/sh", "-c", script]
    env = {"PATH": "/usr/bin:/bin", "CODEX_HOME": str(lay["ch"]), "HOME": str(home)}
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120, check=False)
    Path(f"{sys.prefix}/bin/profilec-planted").unlink(missing_ok=True)
    return proc.stdout + proc.stderr


WRITES = [
    "MANIFEST-APPENDED",
    "MANIFEST-MOVED",
    "GIT-INIT-ABOVE",
    "REPO-CONFIG-WRITTEN",
    "HOME-GITCONFIG-WRITTEN",
    "XDG-GITCONFIG-WRITTEN",
    "BASHRC-WRITTEN",
    "INSTALL-BIN-WRITTEN",
]


@pytest.mark.parametrize("mode", MODES)
def test_trusted_side_inputs_are_read_only_in_every_mode(
    codex_bin: Path, base: Path, mode: str
) -> None:
    lay = _layout(base)
    before = lay["manifest"].read_bytes()
    out = _attack(codex_bin, _compile(lay), lay, mode)
    assert not [w for w in WRITES if w in out], out
    assert lay["manifest"].read_bytes() == before
    assert not (lay["ws2"].parent / ".git").exists()
    assert not (lay["home"] / ".gitconfig").exists()
    assert "filter" not in (lay["repo"] / ".git" / "config").read_text()


def test_control_full_access_writes_every_input_without_the_entries(
    codex_bin: Path, base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lay = _layout(base)
    control = _without_inputs(lay, monkeypatch, workspace_roots=[str(lay["ws"]), str(lay["ws2"])])
    out = _attack(codex_bin, control, lay, "agent-full-access")
    # (The installation's bin/ is not in this list: on a host whose Python lives under the
    # 0700 /root, site-packages already made /root read-only.)
    assert [w for w in WRITES if w in out] == WRITES[:-1], out
    assert (lay["ws2"].parent / ".git").is_dir()
    assert "filter" in (lay["repo"] / ".git" / "config").read_text()


def test_agent_mode_manifest_and_git_above_a_tmp_workspace(
    codex_bin: Path, base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Agent mode writes /tmp: a manifest beside a workspace under /tmp, and the directory above
    that workspace, are writable without the entries (control) and read-only with them."""
    lay = _layout(base)
    tmp = Path(tempfile.mkdtemp(prefix="profilec-inputs-"))  # under /tmp on purpose
    try:
        os.chmod(tmp, 0o755)
        (tmp / "ws").mkdir()
        manifest = write_manifest(
            tmp / "roots.toml", [{"id": "codex-auth", "path": str(lay["ch"] / "auth.json")}]
        )
        bundle = load_and_compile(
            str(manifest),
            workspace_roots=[str(tmp / "ws")],
            codex_home=str(lay["ch"]),
            home=str(lay["home"]),
        )
        lay.update(manifest=manifest, ws=tmp / "ws", ws2=tmp / "ws")
        control = _without_inputs(lay, monkeypatch, workspace_roots=[str(tmp / "ws")])
        lost = _attack(codex_bin, control, lay, "agent")
        assert "MANIFEST-APPENDED" in lost and "GIT-INIT-ABOVE" in lost, lost
        shutil.rmtree(tmp / ".git")
        manifest.write_text(manifest.read_text().replace("# cut\n", ""))
        held = _attack(codex_bin, bundle, lay, "agent")
        assert "MANIFEST-APPENDED" not in held and "GIT-INIT-ABOVE" not in held, held
        assert not (tmp / ".git").exists()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
