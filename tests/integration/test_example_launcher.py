"""The example launcher (examples/launch_acp.py) runs as written: a root daemon starts a real
codex-acp 2.6.0 session as uid 65534 from `profilec compile --format launch` alone.

Asserted from its JSON result: every mode the adapter offered was tried, by both ACP mode
methods (`session/set_mode`, `session/set_config_option` with `configId: "mode"`); the three
`permission-profile:*` modes the document allow-lists were forwarded and each denied the
credential (the model's `cat` saw `Permission denied`, the control file was read); every other
offered mode was refused by the launcher and, set anyway, denied or refused by Codex under the
managed requirements; the negative control (the same adapter, no profilec config, no
requirements) read the marker. A missing tool fails under CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profilec.e2e import adapters
from profilec.settings import codex_binary, codex_version
from tests.integration.conftest import missing

pytestmark = [pytest.mark.e2e, pytest.mark.codex, pytest.mark.bwrap]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "launch_acp.py"
PROFILE_MODES = {
    "permission-profile:profilec-agent",
    "permission-profile:profilec-agent-full-access",
    "permission-profile:profilec-read-only",
}
BUILTIN_MODES = {"read-only", "workspace-write", "agent", "agent-full-access"}
METHODS = ("session/set_mode", "session/set_config_option")


def test_example_launcher_denies_in_every_mode_and_its_control_leaks(tmp_path: Path) -> None:
    codex = codex_binary()
    if codex is None or not codex.is_file():
        missing(f"pinned codex {codex_version()} is not installed (run .ci/tools.sh)")
    adapter = adapters.ts_adapter()
    if adapter.missing:
        missing(adapter.missing)
    if shutil.which("bwrap") is None:
        missing("bubblewrap (bwrap) is not installed")
    if os.geteuid() != 0:
        missing("the example is a root daemon (it needs root)")
    # Run from outside the checkout, as a user would (-P: the working directory is not imported).
    proc = subprocess.run(
        [sys.executable, "-P", str(EXAMPLE), "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = proc.stdout.rstrip("\n").split("\n")
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:])
    result = json.loads(out[-1])
    assert result["ok"] is True
    # Every offered mode by both mode methods (session/set_mode, session/set_config_option).
    rows = {(r["mode"], r["method"]): r for r in result["modes"]}
    assert set(rows) == {(m, by) for m in PROFILE_MODES | BUILTIN_MODES for by in METHODS}, rows
    for mode, by in rows:
        if mode in PROFILE_MODES:
            assert rows[mode, by]["launcher"] == "forwarded", rows[mode, by]
            assert rows[mode, by]["result"] == "denied", rows[mode, by]
            assert "Permission denied" in rows[mode, by]["evidence"], rows[mode, by]
            continue
        # Set anyway, no built-in mode runs a turn under the requirements (Codex's own text).
        assert rows[mode, by]["launcher"] == "refused", rows[mode, by]
        assert rows[mode, by]["result"] == "refused", rows[mode, by]
        refusal = "DangerFullAccess" if mode == "agent-full-access" else "OnRequest"
        assert f"`{refusal}` is not in the allowed set" in rows[mode, by]["evidence"]
    assert any(
        f"mode {m} by session/set_config_option (forwarded)" in proc.stdout for m in PROFILE_MODES
    )
    # The negative control: the same probe without profilec reads the credential.
    assert [c["result"] for c in result["control"]] == ["leaked"], result["control"]
    # Nothing of the run is left: no watch, no adapter, no layout.
    assert "watch ended: exit 0" in proc.stdout
    layout = next(line.split()[2] for line in out if line.startswith("1 layout "))
    assert not os.path.exists(layout)
