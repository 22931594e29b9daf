"""`compile --format launch` tells launchers to run `profilec watch` and which uid to use."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest

from profilec.cli import main
from profilec.codex.vocabulary import GRANULAR_ASK_ALL
from profilec.emit.launch import profilec_argv
from profilec.paths import PARENT_GIT_DIR
from tests.helpers import make_layout

REPO = Path(__file__).resolve().parents[2]
#: A root compile of a launch names the uid Codex runs as (here root: the layout is ours).
ROOT = ["--run-as", "0"] if os.geteuid() == 0 else []


def test_launch_document_carries_watch_and_the_trusted_uid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    rc = main(
        [
            "compile",
            "--roots",
            str(lay.manifest),
            "--workspace-root",
            str(lay.workspace),
            "--codex-home",
            str(lay.codex_home),
            "--format",
            "launch",
            "--profiles",
            str(REPO / "profiles"),
            *ROOT,
        ]
    )
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, json.loads((REPO / "schemas/launch.schema.json").read_text()))
    watch = doc["watch"]
    argv = watch["argv"]
    # -P: the watcher imports nothing from the directory the launcher starts it in.
    assert os.path.isabs(argv[0]) and argv[1:5] == ["-P", "-m", "profilec", "watch"]
    # The managed requirements the session runs under: in place at the start, then watched.
    assert argv[5:7] == ["--requirements", "/etc/codex/requirements.toml"]
    assert argv[7:] == [
        "--roots",
        str(lay.manifest),
        "--profiles",
        str(REPO / "profiles"),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
        *ROOT,
    ]
    assert watch["drift_exit_code"] == 9 and "End the session" in watch["on_drift"]
    assert "SIGTERM" in watch["stop"]
    parent = doc["trusted_parent"]
    assert (parent["uid"], parent["gid"], parent["never_root"]) == (65534, 65534, True)
    assert parent["vaults"] == [str(lay.host_target.parent)]
    assert "setting up uid map" in parent["statement"]
    assert lay.marker not in out

    # The argv is what `watch` takes, complete: run as written (only the deliberately bad
    # interval added), it parses every flag and refuses only the interval.
    rc = main([*argv[4:], "--interval", "9"])
    assert rc == 2 and "--interval must be between" in capsys.readouterr().err
    # Every non-root prerequisite names a path of this compile.
    pre = {p["path"]: p["need"] for p in parent["non_root_prerequisites"]}
    assert {
        str(lay.codex_home),
        str(lay.host_target.parent),
        str(lay.workspace),
        str(lay.manifest),
    } <= set(pre)
    assert "owned by root" in pre[str(lay.manifest)]


def test_launch_document_has_plain_app_server_and_exec_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    tmp = tmp_path / "t"
    tmp.mkdir()
    rc = main(
        [
            "compile",
            "--roots",
            str(lay.manifest),
            "--workspace-root",
            str(lay.workspace),
            "--codex-home",
            str(lay.codex_home),
            "--tmpdir",
            str(tmp),
            "--format",
            "launch",
            *ROOT,
        ]
    )
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    by = {c["launcher"]: c for c in doc["codex"]}
    assert set(by) == {"codex app-server", "codex exec"}
    server, exe = by["codex app-server"], by["codex exec"]
    for c in (server, exe):
        assert c["env"] == {
            "CODEX_HOME": str(lay.codex_home),
            "TMPDIR": str(tmp),
            "GIT_DIR": PARENT_GIT_DIR,
        }
        assert c["cwd"] == str(lay.workspace) and c["run_as"] == doc["trusted_parent"]["run_as"]
        flags = c["args"][2:] if c["args"][0] == "exec" else c["args"][1:]
        assert flags[:2] == ["-c", 'default_permissions="profilec-agent"']
        assert set(c["modes"]) == {"read-only", "agent", "agent-full-access"}
    assert server["args"][0] == "app-server"
    assert server["modes"]["read-only"]["select"] == {
        "permissions": "profilec-read-only",
        # on-request, spelled as the granular policy the managed requirements allow alone
        "approvalPolicy": GRANULAR_ASK_ALL,
    }
    assert exe["modes"]["read-only"]["select"][-2:] == [
        "-c",
        "approval_policy={ granular = { sandbox_approval = true, rules = true, "
        "skill_approval = true, request_permissions = true, mcp_elicitations = true } }",
    ]
    assert exe["args"][0] == "exec" and exe["args"][-2:] == ["-C", str(lay.workspace)]
    assert exe["modes"]["agent-full-access"]["select"] == [
        "-c",
        'default_permissions="profilec-agent-full-access"',
        "-c",
        'approval_policy="never"',
    ]
    assert "--tmpdir" in doc["watch"]["argv"]


def test_prerequisites_name_writable_roots_without_carve_out_mount_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = make_layout(tmp_path / "l")
    os.chmod(lay.workspace, 0o755)
    argv = [
        "compile",
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
        "--format",
        "launch",
        *ROOT,
    ]

    def needs() -> dict[str, str]:
        assert main(argv) == 0
        doc = json.loads(capsys.readouterr().out)
        return {
            p["path"]: p["need"]
            for p in doc["trusted_parent"]["non_root_prerequisites"]
            if p["need"].startswith("writable root of mode")
        }

    if os.stat(lay.workspace).st_uid == 65534:
        pytest.skip("the workspace already belongs to the run-as uid")
    need = needs()[str(lay.workspace)]
    assert need.startswith("writable root of mode agent, agent-full-access: it is not writable ")
    assert "for uid 65534" in need and ".git, .agents, .codex, .aws" in need, need
    # Names present now are no remedy (a running session makes and removes them): only a
    # directory the run-as user may write is.
    for name in (".git", ".agents", ".codex", ".aws"):
        (lay.workspace / name).mkdir()
    assert str(lay.workspace) in needs()
    if os.getuid() == 0:
        os.chown(lay.workspace, 65534, 65534)
        assert str(lay.workspace) not in needs()


def test_the_emitted_profilec_argv_imports_nothing_from_the_working_directory(
    tmp_path: Path,
) -> None:
    """A checkout the launcher starts the watcher in may hold a `profilec/` package: the
    emitted argv (and its env) must run the installed profilec, not that one."""
    planted = tmp_path / "checkout"
    (planted / "profilec").mkdir(parents=True)
    marker = tmp_path / "planted-ran"
    (planted / "profilec" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8"
    )
    (planted / "profilec" / "__main__.py").write_text("raise SystemExit(0)\n", encoding="utf-8")
    prefix, env = profilec_argv()
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    run = subprocess.run(
        [*prefix, "--version"],
        cwd=planted,
        env={**base, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0 and run.stdout.startswith("profilec "), run.stderr
    assert not marker.exists()
    # The control: the same argv without -P runs the planted package (what -P prevents).
    bare = [a for a in prefix if a != "-P"]
    subprocess.run([*bare, "--version"], cwd=planted, env={**base, **env}, check=False)
    assert marker.exists()
