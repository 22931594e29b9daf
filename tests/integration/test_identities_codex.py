"""Against the real pinned Codex: one manifest, two identities; a session for a1 cannot read
a2's transcripts, lock or HOME, in every mode.

Control: the same bundle compiled without the other-identity denies (yesterday's output, where
a2's CODEX_HOME was only pinned `read`) lets every mode read a2's transcript marker.
Scratch trees live under /var/tmp: Codex refuses a CODEX_HOME under the system temp dir.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import profilec.pipeline
from profilec.emit.overrides import override_lines
from profilec.library import load_and_compile
from profilec.models.compiled import CompiledBundle
from tests.helpers import marker, write_manifest

pytestmark = pytest.mark.codex

MODES = ["read-only", "agent", "agent-full-access"]


@pytest.fixture
def base(var_tmp_base: Path) -> Path:
    return var_tmp_base


def two_identities(base: Path) -> dict[str, Any]:
    """base/agents/{a1,a2}/{ws,codex-home,home} and base/vaults/{a1,a2}/auth.json; a2 has a
    transcript and login files (markers)."""
    out: dict[str, Any] = {"marks": {}}
    roots: list[dict[str, object]] = []
    for ident in ("a1", "a2"):
        top = base / "agents" / ident
        (top / "ws").mkdir(parents=True)
        (top / "home").mkdir()
        vault = base / "vaults" / ident
        vault.mkdir(parents=True, mode=0o700)
        (vault / "auth.json").write_text(f'{{"OPENAI_API_KEY": "{marker()}"}}\n')
        ch = top / "codex-home"
        (ch / "sessions").mkdir(parents=True)
        (ch / "auth.json").symlink_to(vault / "auth.json")
        (ch / "auth.lock").write_text("")
        mark = marker()
        (ch / "sessions" / "rollout.jsonl").write_text(f'{{"said": "{mark}"}}\n')
        (top / "home" / ".bashrc").write_text(f"# {mark}\n")
        out["marks"][ident] = mark
        out[ident] = top
        roots.append({"id": f"{ident}-codex", "path": str(ch / "auth.json"), "backend": "codex"})
    manifest = write_manifest(base / "roots.toml", roots)
    body = manifest.read_text() + (
        f'\n[[identities]]\nid = "a2"\ncodex_home = "{out["a2"] / "codex-home"}"\n'
        f'home = "{out["a2"] / "home"}"\n'
    )
    manifest.write_text(body)
    os.chmod(manifest, 0o600)
    out["manifest"] = manifest
    return out


def compile_a1(lay: dict[str, Any]) -> CompiledBundle:
    a1 = lay["a1"]
    return load_and_compile(
        str(lay["manifest"]),
        workspace_roots=[str(a1 / "ws")],
        codex_home=str(a1 / "codex-home"),
        home=str(a1 / "home"),
    )


def _read_a2(codex: Path, bundle: CompiledBundle, lay: dict[str, Any], mode: str) -> str:
    a1, a2 = lay["a1"], lay["a2"]
    args = [str(codex), "sandbox"]
    for line in override_lines(bundle):
        args += ["-c", line]
    script = (
        f"cat '{a2}/codex-home/sessions/rollout.jsonl'; cat '{a2}/home/.bashrc'; "
        f"echo x >> '{a2}/codex-home/auth.lock' && echo LOCK-OPENED"
    )
    args += [
        "-P",
        bundle.profile_for(mode).profile_id,
        "-C",
        str(a1 / "ws"),
        "--",
        "/bin/sh",
        "-c",
        script,
    ]
    env = {"PATH": "/usr/bin:/bin", "CODEX_HOME": str(a1 / "codex-home"), "HOME": str(a1 / "home")}
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120, check=False)
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("mode", MODES)
def test_another_identity_is_denied_whole_in_every_mode(
    codex_bin: Path, base: Path, mode: str
) -> None:
    lay = two_identities(base)
    out = _read_a2(codex_bin, compile_a1(lay), lay, mode)
    assert lay["marks"]["a2"] not in out, out
    assert "LOCK-OPENED" not in out and "Permission denied" in out, out


def test_control_without_the_identity_denies_a2_is_readable(
    codex_bin: Path, base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lay = two_identities(base)
    monkeypatch.setattr(profilec.pipeline, "other_identities", lambda *a: ())
    control = compile_a1(lay)
    for mode in MODES:
        out = _read_a2(codex_bin, control, lay, mode)
        assert lay["marks"]["a2"] in out, (mode, out)
