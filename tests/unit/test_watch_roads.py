"""`profilec watch` on two roads of issue 40 that the chain does not cover.

* A workspace root swapped after start (role `workspace-root`): a background terminal of an
  earlier full-access session replaced a freshly compiled root with a link to the vault after
  Codex started, and the agent turn read the credential (a writable root at the vault's path
  beats the managed deny; measured on 0.171.0 and 0.166.0). The root's kind, device and inode
  are what they were when watching started, or it is drift.
* A vouched MCP server's wrapper home (role `mcp-config`): the `codex sandbox` wrapping each
  server runs with CODEX_HOME = the server's cwd and reads its `.env` (PATH included) and
  `config.toml` before it sandboxes anything; a planted `.env` ran the model's own `bwrap`
  outside every sandbox. Either file appearing, changing or going is drift.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import jsonschema
import pytest

from profilec.models.compiled import CompiledBundle
from profilec.watch import DRIFT_EXIT, MCP_HOME_FILES, run, watch_bundle
from tests.helpers import Layout, make_layout
from tests.unit.test_watch import _cli, _started
from tests.unit.test_watch_project_layers import SCHEMA, _bundle


@pytest.fixture
def lay(tmp_path: Path) -> Layout:
    return make_layout(tmp_path / "l")


def _with_server(bundle: CompiledBundle, cwd: Path) -> CompiledBundle:
    """The bundle with one vouched server as compile emits it (compiler/models/mcp.py:
    CODEX_HOME = cwd in its env). The file's own validation refuses a cwd under /tmp, where
    pytest's directories are; the watch does not care where the home is."""
    server = {
        "command": "/usr/bin/true",
        "args": [],
        "cwd": str(cwd),
        "env": {"CODEX_HOME": str(cwd)},
    }
    return bundle.model_copy(update={"vouched_mcp_servers": {"bridge": server}})


def test_a_workspace_root_swapped_for_a_link_is_drift(lay: Layout) -> None:
    w = watch_bundle(_bundle(lay))
    roles = {x.path: x.role for x in w.watched}
    assert roles[str(lay.workspace)] == "workspace-root"
    assert w.begin() is None
    (lay.workspace / "work.txt").write_text("edits inside the root are not drift\n", "utf-8")
    assert w.poll() is None  # control
    shutil.move(str(lay.workspace), str(lay.base / "ws.old"))
    os.symlink(lay.host_target.parent, lay.workspace)  # the measured swap: a link to the vault
    found = w.poll()
    assert found is not None
    assert (found.kind, found.role, found.path) == (
        "replaced",
        "workspace-root",
        str(lay.workspace),
    )
    assert found.observed == f"symlink -> {lay.host_target.parent}"
    doc = found.document()
    jsonschema.validate(doc, SCHEMA)
    assert doc["exit_code"] == DRIFT_EXIT == 9


def test_a_workspace_root_replaced_by_another_directory_or_removed_is_drift(lay: Layout) -> None:
    w = watch_bundle(_bundle(lay))
    assert w.begin() is None
    shutil.move(str(lay.workspace), str(lay.base / "ws.old"))
    found = w.poll()
    assert found is not None and (found.kind, found.role) == ("removed", "workspace-root")
    lay.workspace.mkdir()  # a fresh directory under the same name: another inode
    found = w.poll()
    assert found is not None and (found.kind, found.role) == ("replaced", "workspace-root")


def test_a_planted_mcp_wrapper_env_is_drift(lay: Layout, tmp_path: Path) -> None:
    home = tmp_path / "mcp" / "bridge"
    home.mkdir(parents=True)
    w = watch_bundle(_with_server(_bundle(lay), home))
    watched = {x.path: x.role for x in w.watched}
    for name in MCP_HOME_FILES:
        assert watched[str(home / name)] == "mcp-config"
    assert w.begin() is None
    (home / "helper.bin").write_text("Codex keeps its helpers here\n", "utf-8")
    assert w.poll() is None  # control: the wrapper's own files are not drift
    (home / ".env").write_text("PATH=/tmp/evil:/usr/bin\n", "utf-8")
    found = w.poll()
    assert found is not None
    assert (found.kind, found.role, found.path) == ("appeared", "mcp-config", str(home / ".env"))
    doc = found.document()
    jsonschema.validate(doc, SCHEMA)
    assert "vouched MCP server" in doc["message"]


def test_a_changed_mcp_wrapper_config_is_drift(lay: Layout, tmp_path: Path) -> None:
    home = tmp_path / "mcp" / "bridge"
    home.mkdir(parents=True)
    config = home / "config.toml"
    config.write_text("# the daemon's own\n", "utf-8")
    w = watch_bundle(_with_server(_bundle(lay), home))
    assert w.begin() is None
    assert w.poll() is None
    with config.open("a", encoding="utf-8") as f:  # in place: the same inode
        f.write('[shell_environment_policy.set]\nPATH = "/tmp/evil"\n')
    found = w.poll()
    assert found is not None and (found.kind, found.role) == ("modified", "mcp-config")


def test_no_vouched_server_no_mcp_paths(lay: Layout) -> None:
    w = watch_bundle(_bundle(lay))
    assert not [x for x in w.watched if x.role == "mcp-config"]


def test_cli_reports_a_swapped_workspace_root_and_exits_9(lay: Layout) -> None:
    proc = _cli(lay, "--interval", "0.05")
    _started(proc)
    shutil.move(str(lay.workspace), str(lay.base / "ws.old"))
    os.symlink(lay.host_target.parent, lay.workspace)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 9, err
    doc = json.loads(out.split("\n")[0])
    jsonschema.validate(doc, SCHEMA)
    assert (doc["role"], doc["path"]) == ("workspace-root", str(lay.workspace))
    assert err.startswith("profilec: lock-drift: watch: workspace-root ")


def test_run_reports_the_swap_within_one_interval(lay: Layout) -> None:
    w = watch_bundle(_bundle(lay))
    polls: list[float] = []

    def sleep(seconds: float) -> bool:
        polls.append(seconds)
        if len(polls) == 2:
            shutil.move(str(lay.workspace), str(lay.base / "ws.old"))
            os.symlink(lay.host_target.parent, lay.workspace)
        return len(polls) < 10

    found = run(w, sleep=sleep)
    assert found is not None and found.role == "workspace-root" and len(polls) == 2
