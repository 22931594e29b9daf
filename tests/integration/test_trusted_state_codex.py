"""Against the real Codex, both supported cores (the pinned 0.171.0 and the 0.166.0 that
codex-acp 2.6.0 bundles): the trusted side's own state stays read-only in the compiled profiles
(issue 40, items 1, 2, 6 and 7). Each cell runs a model command through `codex sandbox` under a
compiled profile, and a control that leaks without the fix:

* the vouched MCP server's cwd (its `codex sandbox` wrapper's CODEX_HOME): agent-full-access
  cannot plant `<cwd>/.env` (the wrapper loads it as the parent). Control: the same layout
  compiled without the vouched file (how the cwd was treated before) lets the plant through;
* a launch PATH directory before /usr/bin (a missing `~/.local/bin`): agent-full-access cannot
  plant a `bwrap` there. Control: compiled with a PATH of system directories, the plant goes
  through and the next `codex sandbox` launched with that PATH runs the planted `bwrap`;
* two identities on one uid: identity a1's session reads nothing of a2's declared workspace
  and TMPDIR, in every mode. Control: a2 declared without them (as before) is read;
* a workspace root's sibling, in the directory holding both: an agent-full-access command
  cannot swap it for a link to the vault. Control: the same bundle without the holder's `read`
  entry lets the swap through.

Scratch trees live under /var/tmp: Codex refuses a CODEX_HOME under the system temp dir.
Markers are random; no real credential is used.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from profilec.api import load_and_compile
from profilec.emit.overrides import override_lines
from profilec.models.compiled import CompiledBundle
from profilec.trustedbase import WORKSPACE_HOLDER
from tests.helpers import marker, write_manifest

pytestmark = pytest.mark.codex

MODES = ["read-only", "agent", "agent-full-access"]
SYSTEM_PATH = "/usr/bin:/bin"


def _sandbox(
    core: Path,
    bundle: CompiledBundle,
    mode: str,
    script: str,
    *,
    path: str = SYSTEM_PATH,
    tmpdir: Path | None = None,
) -> str:
    """`codex sandbox` with the bundle's `-c` lines under `mode`'s profile, cwd at the (first)
    workspace root; stdout and stderr."""
    ch = Path(bundle.layout.codex_home or "/nonexistent")
    args = [str(core), "sandbox"]
    for line in override_lines(bundle):
        args += ["-c", line]
    cwd = bundle.layout.workspace_roots[0]
    args += ["-P", bundle.profile_for(mode).profile_id, "-C", cwd, "--", "/bin/sh", "-c", script]
    env = {"PATH": path, "CODEX_HOME": str(ch), "HOME": str(ch.parent)}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=90, check=False)
    return f"rc={proc.returncode}\n{proc.stdout}{proc.stderr}"


def _layout(base: Path) -> dict[str, Any]:
    """base/vault/auth.json <- base/ch/auth.json; workspace roots base/wss/{w1,w2} in one
    holder; a daemon-owned MCP cwd base/daemon/files; HOME base/home (no .local yet)."""
    vault = base / "vault"
    vault.mkdir(mode=0o700)
    mark = marker()
    (vault / "auth.json").write_text(f'{{"OPENAI_API_KEY": "{mark}"}}\n')
    ch = base / "ch"
    ch.mkdir()
    (ch / "auth.json").symlink_to(vault / "auth.json")
    (ch / "auth.lock").write_text("")
    for w in ("w1", "w2"):
        (base / "wss" / w).mkdir(parents=True)
    (base / "daemon" / "files").mkdir(parents=True)
    (base / "home").mkdir()
    manifest = write_manifest(
        base / "roots.toml",
        [{"id": "codex-auth", "path": str(ch / "auth.json"), "backend": "codex"}],
    )
    return {"base": base, "vault": vault, "ch": ch, "marker": mark, "manifest": manifest}


def _vouched(base: Path, core: Path) -> Path:
    f = base / "vouched-mcp.toml"
    f.write_text(
        f'schema_version = 2\ncodex = "{core}"\n[servers.files]\ncommand = "/usr/bin/python3"\n'
        f'args = ["-V"]\ncwd = "{base / "daemon" / "files"}"\n'
    )
    os.chmod(f, 0o600)
    return f


def _compile(lay: dict[str, Any], **kw: Any) -> CompiledBundle:
    return load_and_compile(
        str(lay["manifest"]),
        workspace_roots=[str(lay["base"] / "wss" / "w1")],
        codex_home=str(lay["ch"]),
        **kw,
    )


def test_full_access_cannot_plant_the_mcp_wrapper_s_dotenv(core: Path, var_tmp_base: Path) -> None:
    lay = _layout(var_tmp_base)
    dotenv = var_tmp_base / "daemon" / "files" / ".env"
    plant = f"printf 'PATH=/planted/bin\\n' > '{dotenv}' && echo PLANT_OK"
    fixed = _compile(lay, vouched_mcp_path=str(_vouched(var_tmp_base, core)))
    out = _sandbox(core, fixed, "agent-full-access", plant)
    assert "PLANT_OK" not in out and "Read-only file system" in out, out
    assert not dotenv.exists(), out
    # the sandbox ran: the workspace stays writable
    out = _sandbox(core, fixed, "agent-full-access", "echo ok > ws-ok && cat ws-ok")
    assert "ok" in out and (var_tmp_base / "wss" / "w1" / "ws-ok").is_file(), out
    # control: the cwd outside the trusted base (compiled without the vouched file)
    control = _compile(lay)
    out = _sandbox(core, control, "agent-full-access", plant)
    assert "PLANT_OK" in out and dotenv.read_text() == "PATH=/planted/bin\n", out


def test_full_access_cannot_plant_bwrap_in_a_launch_path_directory(
    core: Path, var_tmp_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lay = _layout(var_tmp_base)
    bindir = var_tmp_base / "home" / ".local" / "bin"
    trace = var_tmp_base / "planted-bwrap-ran"
    launch_path = f"{bindir}:{SYSTEM_PATH}"
    plant = (
        f"mkdir -p '{bindir}' && printf '#!/bin/sh\\necho ran > {trace}\\nexec /usr/bin/bwrap "
        f"\"$@\"\\n' > '{bindir}/bwrap' && chmod +x '{bindir}/bwrap' && echo PLANT_OK"
    )
    monkeypatch.setenv("PATH", launch_path)  # the launcher's PATH: compile reads its own
    fixed = _compile(lay)
    out = _sandbox(core, fixed, "agent-full-access", plant, path=launch_path)
    assert "PLANT_OK" not in out and "Read-only file system" in out, out
    assert not (bindir / "bwrap").exists(), out
    # control: compiled with the system PATH only, the plant goes through, and the next
    # sandbox launched with the launcher's PATH runs the planted `bwrap` outside the sandbox
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    control = _compile(lay)
    out = _sandbox(core, control, "agent-full-access", plant, path=launch_path)
    assert "PLANT_OK" in out and (bindir / "bwrap").is_file(), out
    out = _sandbox(core, control, "read-only", "echo next", path=launch_path)
    assert trace.read_text() == "ran\n", out


def _identities(base: Path, *, declare: bool) -> dict[str, Any]:
    """Two identities on this uid: base/agents/{a1,a2}/{ws,tmp,codex-home}; a2's workspace and
    TMPDIR hold a secret each."""
    out: dict[str, Any] = {"marks": {}}
    roots: list[dict[str, object]] = []
    for ident in ("a1", "a2"):
        top = base / "agents" / ident
        for d in ("wss/ws", "tmp", "codex-home"):
            (top / d).mkdir(parents=True)
        vault = base / "vaults" / ident
        vault.mkdir(parents=True, mode=0o700)
        (vault / "auth.json").write_text(f'{{"OPENAI_API_KEY": "{marker()}"}}\n')
        (top / "codex-home" / "auth.json").symlink_to(vault / "auth.json")
        (top / "codex-home" / "auth.lock").write_text("")
        out[ident] = top
        roots.append(
            {"id": f"{ident}-codex", "path": str(top / "codex-home/auth.json"), "backend": "codex"}
        )
    for d in ("wss/ws", "tmp"):
        mark = marker()
        (out["a2"] / d / "secret.txt").write_text(f"{mark}\n")
        out["marks"][d] = mark
    manifest = write_manifest(base / "roots.toml", roots)
    body = manifest.read_text()
    for ident in ("a1", "a2"):
        top = out[ident]
        body += f'\n[[identities]]\nid = "{ident}"\ncodex_home = "{top / "codex-home"}"\n'
        if declare:
            body += f'workspace_roots = ["{top / "wss"}"]\ntmpdir = "{top / "tmp"}"\n'
    manifest.write_text(body)
    os.chmod(manifest, 0o600)
    out["manifest"] = manifest
    return out


@pytest.mark.parametrize("declare", [True, False], ids=["declared", "control-undeclared"])
def test_an_identity_reads_nothing_of_another_s_workspace_and_tmpdir(
    core: Path, var_tmp_base: Path, declare: bool
) -> None:
    lay = _identities(var_tmp_base, declare=declare)
    a1, a2 = lay["a1"], lay["a2"]
    bundle = load_and_compile(
        str(lay["manifest"]),
        workspace_roots=[str(a1 / "wss" / "ws")],
        codex_home=str(a1 / "codex-home"),
        tmpdir=str(a1 / "tmp"),
    )
    script = f"cat '{a2}/wss/ws/secret.txt'; cat '{a2}/tmp/secret.txt'; echo DONE"
    for mode in MODES:
        out = _sandbox(core, bundle, mode, script, tmpdir=a1 / "tmp")
        assert "DONE" in out, (mode, out)  # the sandbox ran the command
        for d, mark in lay["marks"].items():
            assert (mark in out) is not declare, (mode, d, out)


def _without_holder(bundle: CompiledBundle) -> CompiledBundle:
    """The bundle without the `read` entry on the directory holding the workspace root."""
    holder = f"input: {WORKSPACE_HOLDER}:"

    def keep(e: Any) -> bool:
        return not any(p.detail and p.detail.startswith(holder) for p in e.provenance)

    profiles = tuple(
        p.model_copy(update={"entries": tuple(e for e in p.entries if keep(e))})
        for p in bundle.profiles
    )
    return bundle.model_copy(update={"profiles": profiles})


def test_full_access_cannot_swap_a_workspace_root_for_a_link(
    core: Path, var_tmp_base: Path
) -> None:
    lay = _layout(var_tmp_base)
    w2 = var_tmp_base / "wss" / "w2"  # the next session's workspace root, beside this one's
    swap = f"mv '{w2}' '{w2}.old' && ln -s '{lay['vault']}' '{w2}' && echo SWAP_OK"
    fixed = _compile(lay)
    assert any(
        e.path == str(var_tmp_base / "wss") and e.access == "read"
        for e in fixed.profile_for("agent-full-access").entries
    )
    out = _sandbox(core, fixed, "agent-full-access", swap)
    assert "SWAP_OK" not in out and "Read-only file system" in out, out
    assert w2.is_dir() and not w2.is_symlink(), out
    out = _sandbox(core, fixed, "agent-full-access", "echo ok > ws-ok && cat ws-ok")
    assert "ok" in out and (var_tmp_base / "wss" / "w1" / "ws-ok").is_file(), out
    # control: without the holder's entry the swap goes through
    out = _sandbox(core, _without_holder(fixed), "agent-full-access", swap)
    assert "SWAP_OK" in out and w2.is_symlink(), out
