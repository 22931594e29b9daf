"""The example launcher (examples/launch_acp.py) runs as written: a root daemon starts a real
codex-acp 2.6.0 session as uid 65534 through `profilec run`, on both Codex cores.

Asserted from its JSON result: every mode the adapter offers was set by both ACP mode methods
(`session/set_mode`, `session/set_config_option` with `configId: "mode"`); `run` offered only
the three compiled `permission-profile:*` modes, and each denied the credential (the model's
`cat` saw `Permission denied`, the control file was read); every built-in mode the bare adapter
offers was refused by `run` with its JSON-RPC error; the client's end of input ended `run` with
exit 0 and nothing left running; the negative control (the same adapter, no profilec config, no
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
REFUSAL = {
    "session/set_mode": "-32602 profilec run: session/set_mode modeId '{}' is refused",
    "session/set_config_option": "-32602 profilec run: session/set_config_option \"mode\" '{}'",
}


def test_example_launcher_denies_in_every_mode_and_its_control_leaks(
    tmp_path: Path, core: Path
) -> None:
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
        env={**os.environ, "PROFILEC_CODEX_BIN": str(core)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = proc.stdout.rstrip("\n").split("\n")
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:])
    result = json.loads(out[-1])
    assert result["ok"] is True
    assert f"CODEX_PATH={core} " in proc.stdout  # the core under test is the one run started
    rows = {(r["mode"], r["method"]): r for r in result["modes"]}
    assert set(rows) == {(m, by) for m in PROFILE_MODES | BUILTIN_MODES for by in METHODS}, rows
    for (mode, by), row in rows.items():
        if mode in PROFILE_MODES:
            assert (row["run"], row["result"]) == ("offered", "denied"), row
            assert "Permission denied" in row["evidence"], row
        else:
            assert (row["run"], row["result"]) == ("not offered", "refused"), row
            assert row["evidence"].startswith(REFUSAL[by].format(mode)), row
    # The client's end of input ends `run` (the adapter's exit code) and its whole tree.
    assert result["run"]["exit_code"] == 0 and result["run"]["left"] == [], result["run"]
    assert result["run"]["processes"] >= 3, result["run"]  # bwrap, node, codex app-server
    # The negative control: the same probe without profilec reads the credential.
    assert [c["result"] for c in result["control"]] == ["leaked"], result["control"]
    # Nothing of the run is left: no layout.
    layout = next(line.split()[2] for line in out if line.startswith("1 layout "))
    assert not os.path.exists(layout)
