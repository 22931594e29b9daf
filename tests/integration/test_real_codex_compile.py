"""Against the real pinned Codex: the emitted overrides deny the link and target in every mode.

For each ACP mode, `codex sandbox -P <id>` with profilec's `-c` lines runs `cat` on the private
CODEX_HOME/auth.json link, on every hop spelling and on the target (the marker must be absent),
a control `cat` of an unprotected file (must print it: a sandbox that fails to start cannot
pass), and the mode's semantics: agent writes the workspace, read-only cannot; full access
writes outside the workspace and /dev/null works. Tampering with the link, the target's
directory and the private config must fail in every mode.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.emit.overrides import override_lines
from tests.helpers import make_layout

pytestmark = pytest.mark.codex


def _sandbox(codex: Path, lines: list[str], pid: str, cwd: Path, home: Path, script: str) -> str:
    args = [str(codex), "sandbox"]
    for line in lines:
        args += ["-c", line]
    args += ["-P", pid, "-C", str(cwd), "--", "/bin/sh", "-c", script]
    env = {
        "PATH": "/usr/bin:/bin",
        "CODEX_HOME": str(home),
        "HOME": str(home.parent),
        "TMPDIR": str(home.parent / "tmpdir"),
    }
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("mode", ["read-only", "agent", "agent-full-access"])
def test_emitted_overrides_deny_link_hops_and_target(
    tmp_path: Path, codex_bin: Path, mode: str
) -> None:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    (tmp_path / "l" / "tmpdir").mkdir()
    config = lay.codex_home / "config.toml"
    config.write_text("# private config\n")
    # Outside every workspace, temp dir and holder dir (not under /tmp, which agent may write).
    outside = Path(tempfile.mkdtemp(prefix="profilec-outside-", dir="/var/tmp"))
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    lines = override_lines(bundle)
    pid = bundle.profile_for(mode).profile_id
    hop = tmp_path / "l" / "hostlink" / "auth.json"
    before = (os.readlink(lay.link), lay.host_target.read_bytes())
    script = "; ".join(
        [
            f"cat {lay.link}",
            f"cat {hop}",
            f"cat {lay.host_target}",
            f"echo CONTROL=$(cat {lay.control})",
            f"echo w > {lay.workspace}/w.txt && echo WS_WRITE_OK",
            f"echo o > {outside}/o.txt && echo OUT_WRITE_OK",
            "echo n > /dev/null && echo DEVNULL_OK",
            f"ln -sfn {lay.control} {lay.link} && echo RELINK_OK",
            f"mv {lay.host_target.parent} {tmp_path}/l/moved && echo MOVE_OK",
            f"echo 'x=1' >> {config} && echo CONFIG_OK",
            f"cat {lay.link}",
        ]
    )
    try:
        out = _sandbox(codex_bin, lines, pid, lay.workspace, lay.codex_home, script)
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    assert lay.marker not in out, out
    assert "CONTROL=control-ok" in out, out
    assert "DEVNULL_OK" in out, out
    assert ("WS_WRITE_OK" in out) == (mode != "read-only"), out
    assert ("OUT_WRITE_OK" in out) == (mode == "agent-full-access"), out
    for tamper in ("RELINK_OK", "MOVE_OK", "CONFIG_OK"):
        assert tamper not in out, (tamper, out)
    assert (os.readlink(lay.link), lay.host_target.read_bytes()) == before
    assert config.read_text() == "# private config\n"


def test_builtin_workspace_leaks_so_the_test_can_fail(tmp_path: Path, codex_bin: Path) -> None:
    """The same probe under Codex's own :workspace prints the marker: the check is live."""
    lay = make_layout(tmp_path / "l")
    (tmp_path / "l" / "tmpdir").mkdir()
    out = _sandbox(codex_bin, [], ":workspace", lay.workspace, lay.codex_home, f"cat {lay.link}")
    assert lay.marker in out
