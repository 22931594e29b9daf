"""An identity the daemon provisions while another session runs is denied from its first byte.

A manifest that declares its `credential_stores` gets each store denied whole in every mode
(and in the managed requirements): a vault created in it after the sandbox started is never
readable. The probe runs in the real sandbox (both supported cores), says READY, waits for the
launcher's go file in the workspace (an event, no fixed sleep), then reads the new credential.
Control: the same bundle without the store declared (today's vaults only) reads it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from profilec.emit.overrides import override_lines
from profilec.library import load_and_compile
from tests.helpers import marker, write_manifest

pytestmark = pytest.mark.codex

MODES = ["read-only", "agent", "agent-full-access"]


def _session(core: Path, base: Path, with_store: bool, mode: str) -> str:
    store = base / "vaults"
    (store / "a1").mkdir(parents=True, mode=0o700)
    (store / "a1" / "auth.json").write_text("{}\n")
    home = base / "a1" / "codex-home"
    home.mkdir(parents=True)
    (home / "auth.json").symlink_to(store / "a1" / "auth.json")
    (home / "auth.lock").touch()
    ws = base / "a1" / "ws"
    ws.mkdir()
    manifest = write_manifest(base / "roots.toml", [{"id": "a1", "path": str(home / "auth.json")}])
    if with_store:
        manifest.write_text(f'credential_stores = ["{store}"]\n' + manifest.read_text())
    bundle = load_and_compile(str(manifest), workspace_roots=[str(ws)], codex_home=str(home))
    new = store / "a2" / "auth.json"
    script = (
        "echo READY; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do i=$((i+1)); sleep 0.05; done; "
        f"cat '{new}'; echo DONE"
    )
    argv = [str(core), "sandbox"]
    for line in override_lines(bundle):
        argv += ["-c", line]
    argv += ["-P", bundle.profile_for(mode).profile_id, "-C", str(ws), "--", "/bin/sh", "-c"]
    env = {"PATH": "/usr/bin:/bin", "CODEX_HOME": str(home), "HOME": str(base / "a1")}
    proc = subprocess.Popen(
        [*argv, script],
        env=env,
        cwd=ws,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first == "READY\n", first + proc.stdout.read()
    # The daemon provisions another identity now, while the session runs.
    new.parent.mkdir(mode=0o700)
    mark = marker()
    new.write_text(f'{{"OPENAI_API_KEY": "{mark}"}}\n')
    (ws / "go").touch()
    out, _ = proc.communicate(timeout=120)
    assert "DONE" in out, out
    return out.replace(mark, "<NEW-CREDENTIAL>")


@pytest.mark.parametrize("mode", MODES)
def test_a_vault_added_mid_session_is_denied_from_the_first_byte(
    core: Path, var_tmp_base: Path, mode: str
) -> None:
    out = _session(core, var_tmp_base, True, mode)
    assert "<NEW-CREDENTIAL>" not in out and "Permission denied" in out, out


def test_control_without_the_store_reads_the_new_credential(core: Path, var_tmp_base: Path) -> None:
    out = _session(core, var_tmp_base, False, "agent")
    assert "<NEW-CREDENTIAL>" in out, out
