"""examples/embed_daemon.py, the launcher written only from the README and docs/embedding.md,
against the real pinned Codex and a scripted loopback model.

The test is the daemon: it lays out the files as `trusted_parent.non_root_prerequisites` says
(the tree handed to uid 65534, the roots manifest root's), queues one probe per session and runs
the example. The example starts a session per mode through the library API and through the
`--format launch` document (app-server and exec entries), each beside a watch, as uid 65534.
Each session's one tool call must have run (the control file read), the mode's profile must
show (read-only cannot write the workspace, the agent modes can), and no request the model
received may hold the credential marker.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profilec.e2e.layout import APPSERVER_TREE, build_layout
from profilec.scripted_model import ScriptedModelServer
from tests.integration.conftest import missing

pytestmark = [pytest.mark.e2e, pytest.mark.codex]

REPO = Path(__file__).resolve().parents[2]
MODES = ("read-only", "agent", "agent-full-access")
SESSIONS = [
    (p, launcher, m)
    for p, launcher in (
        ("library", "codex app-server"),
        ("launch", "codex app-server"),
        ("launch", "codex exec"),
    )
    for m in MODES
]
UID = 65534


#: Run a command in a private mount namespace whose /etc is an overlay on a tmpfs.
PRIVATE_ETC = [
    "unshare",
    "-m",
    "--propagation",
    "private",
    "/bin/sh",
    "-c",
    'u="$(mktemp -d)" && mount -t tmpfs tmpfs "$u" && mkdir "$u/up" "$u/work" && '
    'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$u/up,workdir=$u/work" /etc && '
    'exec "$@"',
    "sh",
]


def _hand_over(base: str) -> None:
    """What non_root_prerequisites asks: the run-as user owns CODEX_HOME, the vault (and the
    credential in it), the workspace, TMPDIR and HOME; the base directory and the roots
    manifest in it stay root's."""
    for top in ("agent", "host", "workspace", "tmp", "home"):
        path = os.path.join(base, top)
        os.lchown(path, UID, UID)
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                os.lchown(os.path.join(root, name), UID, UID)


def test_the_embedding_example_starts_every_mode_both_ways(codex_bin: Path) -> None:
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        missing("the example runs sessions as uid 65534: needs root and setpriv")
    lay = build_layout(APPSERVER_TREE)
    try:
        _hand_over(lay.base)
        probe_file = os.path.join(lay.workspace, ".embed-probe")
        probe = (
            f"cat {shlex.quote(lay.control)}; cat {shlex.quote(lay.link)} 2>&1; "
            f"( : > {shlex.quote(probe_file)} ) 2>/dev/null && echo WROTE || echo NOWRITE"
        )
        with ScriptedModelServer() as server:
            for _ in SESSIONS:
                server.add_probe(probe)
            argv = [
                sys.executable,
                str(REPO / "examples" / "embed_daemon.py"),
                "--roots",
                lay.roots,
                "--workspace-root",
                lay.workspace,
                "--codex-home",
                lay.codex_home,
                "--tmpdir",
                lay.tmpdir,
                "--home",
                lay.home,
                "--codex",
                str(codex_bin),
                "--prompt",
                "profilec embed probe",
                "--timeout",
                "90",
            ]
            for line in server.provider_overrides():
                argv += ["--config", line]
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            # The daemon installs the launch document's managed requirements in /etc/codex, as a
            # real one does on its host; here /etc is a private overlay, so the host is untouched.
            done = subprocess.run(
                [*PRIVATE_ETC, *argv], env=env, cwd="/", capture_output=True, text=True, timeout=900
            )
            lines = [json.loads(x) for x in done.stdout.split("\n") if x.strip()]
            outputs = server.tool_outputs()
            calls = server.calls
            visible = server.model_visible_text()
        assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
        assert [(x["path"], x["launcher"], x["mode"]) for x in lines] == SESSIONS
        assert all(x["turn"] == "completed" and x["watch"] == "held" for x in lines), lines
        assert len(calls) == len(SESSIONS), calls  # one tool call ran in every session
        # Compiled for the uid it runs as (`run_as`), every mode's command starts and runs.
        for (path, launcher, mode), call in zip(SESSIONS, calls, strict=True):
            out = outputs.get(call.call_id, "")
            where = (path, launcher, mode, out)
            assert lay.control_marker in out, where
            assert "Permission denied" in out, where  # the link
            assert ("NOWRITE" if mode == "read-only" else "WROTE") in out, where
        assert lay.marker not in visible
        assert lay.marker not in done.stdout + done.stderr
    finally:
        shutil.rmtree(lay.base, ignore_errors=True)
