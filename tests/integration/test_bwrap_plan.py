"""A real bubblewrap run of the rendered plan against a synthetic layout (random markers only).

Shows, from inside: host HOME, daemon root, a sibling agent home and shared temp are absent
(their markers never print), the workspace is writable, and the trusted parent reads and
rewrites the credential target through the CODEX_HOME link, in place and by a rename in its
vault (the save Codex does), as uid 65534. No real credential is involved.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from profilec.models.mounts import PlanLayout
from profilec.mounts.layout import layout_toml
from tests.helpers import make_layout, marker

pytestmark = pytest.mark.bwrap


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        reason = f"{tool} is not installed (apt-get install -y bubblewrap dash; see .ci/tools.sh)"
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    return path


def _decoy(directory: Path) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    mark = marker()
    (directory / "decoy.txt").write_text(mark + "\n", encoding="utf-8")
    return mark


@pytest.mark.parametrize("hop_dir", [False, True], ids=["direct-link", "middle-link"])
@pytest.mark.parametrize("sh", ["dash", "bash"])
def test_inside_the_plan_hidden_paths_are_absent_and_the_credential_is_read_write(
    tmp_path: Path, sh: str, hop_dir: bool
) -> None:
    _need("bwrap")
    _need(sh)
    from profilec.cli import main

    lay = make_layout(tmp_path / "l", hop_dir=hop_dir)
    daemon = lay.base / "daemon"
    decoys = {
        "host home": _decoy(lay.base / "hosthome"),
        "daemon root": _decoy(daemon),
        "sibling home": _decoy(daemon / "agents" / "a2"),
        "shared temp": _decoy(lay.base / "sharedtmp"),
    }
    layout = PlanLayout.model_validate(
        {
            "schema_version": 1,
            "daemon_root": str(daemon),
            "agent_home": str(lay.codex_home),
            "workspace_roots": [str(lay.workspace)],
            "state_dir": str(daemon / "state" / "cand-1"),
            "backends": ["codex"],
            "hidden": {
                # Not base/host: that is the credential's vault, bound whole for the save.
                "host_home": str(lay.base / "hosthome"),
                "sibling_homes": [str(daemon / "agents" / "a2")],
                "shared_temp": ["/tmp", str(lay.base / "sharedtmp")],
            },
        },
        strict=False,
    )
    layout_file = lay.base / "layout.toml"
    layout_file.write_text(layout_toml(layout), encoding="utf-8")
    os.chmod(layout_file, 0o600)
    out = lay.base / "plan.bwrap.json"
    json_out = lay.base / "plan.json"
    base_args = ["plan", "--roots", str(lay.manifest), "--layout", str(layout_file)]
    assert main([*base_args, "--format", "bwrap", "--out", str(out)]) == 0
    assert main([*base_args, "--out", str(json_out)]) == 0
    rendered = json.loads(out.read_text(encoding="utf-8"))
    plan = json.loads(json_out.read_text(encoding="utf-8"))
    for d in plan["directories"]:  # the launcher's job: create state dirs 0700 first
        os.makedirs(d["path"], mode=int(d["mode"], 8), exist_ok=True)
    assert oct(os.stat(daemon / "state" / "cand-1").st_mode & 0o777) == "0o700"
    # The launcher writes the candidate's managed requirements where the plan binds them from.
    req_mark = marker()
    (daemon / "codex-requirements" / "requirements.toml").write_text(f"# {req_mark}\n")

    fresh = marker()
    renamed = marker()
    script = "\n".join(
        [
            f"cat {lay.link}",
            f"printf '%s\\n' {fresh} > {lay.link}",  # rewrite through the link
            f"cat {lay.host_target}",
            # A rename-based save, as Codex does it: a temp file in the vault renamed over it.
            f"printf '%s\\n' {renamed} > {lay.host_target.parent}/.auth-XXXXXX",
            f"mv {lay.host_target.parent}/.auth-XXXXXX {lay.host_target} && echo RENAMED",
            "id -u",
            "echo ws > ws-write.txt && echo WS-WRITABLE",
            "cat /etc/codex/requirements.toml",
            "echo x >> /etc/codex/requirements.toml && echo REQ-WRITABLE",
            *(
                f"cat {p}/decoy.txt 2>/dev/null"
                for p in (
                    lay.base / "hosthome",
                    daemon,
                    daemon / "agents" / "a2",
                    lay.base / "sharedtmp",
                )
            ),
            f"ls -A {lay.base / 'hosthome'} {daemon} /tmp 2>/dev/null",
            "echo DONE",
        ]
    )
    text = rendered["shell"] + " 'sh' '-c' \"$0\""
    proc = subprocess.run([sh, "-c", text, script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "DONE" in proc.stdout
    assert lay.marker in proc.stdout  # read by the link
    assert proc.stdout.count(fresh) == 1  # re-read at the real target after the rewrite
    assert "RENAMED" in proc.stdout  # the vault is bound as a directory: rename works
    assert lay.host_target.read_text(encoding="utf-8") == renamed + "\n"  # host file replaced
    assert "\n65534\n" in proc.stdout  # the trusted parent is never root inside
    assert "WS-WRITABLE" in proc.stdout and (lay.workspace / "ws-write.txt").exists()
    # Codex inside reads the candidate's requirements, and cannot change them.
    assert req_mark in proc.stdout and "REQ-WRITABLE" not in proc.stdout
    for what, mark in decoys.items():
        assert mark not in proc.stdout, f"{what} is visible inside the sandbox"
    assert "decoy.txt" not in proc.stdout
