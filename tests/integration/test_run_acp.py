"""`profilec run` with the real codex-acp 2.6.0 and Codex (both cores), as uid 65534 inside
the boundary, driven by the scripted model through `--provider-config` (needs root, bwrap).

Through `profilec run`: the session offers only `permission-profile:*` modes; every other mode
the bare adapter offers is refused by the relay by both methods (`session/set_mode`,
`session/set_config_option` "mode"), and so is a session below the workspace root; a turn in
the default mode reads the control file and not the credential; the client's SIGTERM of
`profilec run` leaves nothing of the adapter's tree. The control: the same adapter without
`run` offers the built-in modes and accepts each of them by both methods, and the cwd below
the workspace root.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from profilec.e2e.acp import PROMPT_TEXT, AcpClient, acp_process, modes_of
from profilec.e2e.adapters import install_dir, node_binary
from profilec.e2e.jsonrpc import RpcError
from profilec.procs import descendants, start_time
from profilec.scripted_model import ScriptedModelServer
from tests.helpers import Layout, give, make_layout
from tests.integration.conftest import missing

pytestmark = [pytest.mark.e2e, pytest.mark.codex, pytest.mark.bwrap]

UID = 65534
REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path("node_modules/@agentclientprotocol/codex-acp/dist/index.js")
SETPRIV = ("setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--")
PROFILE = "permission-profile:"


@dataclass
class Site:
    lay: Layout
    home: Path
    tmp: Path
    sub: Path
    adapter: tuple[str, ...]

    def flags(self) -> list[str]:
        return [
            "--roots", str(self.lay.manifest), "--workspace-root", str(self.lay.workspace),
            "--codex-home", str(self.lay.codex_home), "--run-as", str(UID),
            "--home", str(self.home), "--tmpdir", str(self.tmp),
        ]  # fmt: skip


@pytest.fixture
def site(var_tmp_base: Path) -> Site:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        missing("profilec run runs the session as uid 65534: needs root and setpriv")
    if shutil.which("bwrap") is None:
        missing("bwrap is not installed (apt-get install -y bubblewrap; see .ci/tools.sh)")
    node, script = node_binary(), install_dir("ts") / SCRIPT
    if node is None or not script.is_file():
        missing("node and @agentclientprotocol/codex-acp 2.6.0 are needed (.ci/tools.d/acp.sh)")
    lay = make_layout(var_tmp_base / "l")
    state = var_tmp_base / "state"
    home, tmp, sub = state / "home", state / "tmp", lay.workspace / "sub"
    for d in (home, tmp, sub):
        d.mkdir(parents=True)
    give(UID, lay.host_target.parent, lay.codex_home, lay.workspace, state)
    for d in (lay.host_target.parent, lay.codex_home, home, tmp):
        os.chmod(d, 0o700)
    return Site(lay, home, tmp, sub, (node, str(script)))


def _provider(path: Path, server: ScriptedModelServer) -> Path:
    path.write_text(tomlkit.dumps(server.provider_config()), encoding="utf-8")
    os.chmod(path, 0o600)
    return path


def _mode_choices(session: dict[str, Any]) -> list[str]:
    (mode,) = [o for o in session.get("configOptions") or [] if o.get("id") == "mode"]
    flat: list[Any] = []
    for c in mode["options"]:
        flat += c.get("options", [c])
    return [str(c["value"]) for c in flat]


def _set_option(client: AcpClient, sid: str, value: str) -> Any:
    params = {"sessionId": sid, "configId": "mode", "value": value}
    return client.client.request("session/set_config_option", params, timeout=60)


def _probe(client: AcpClient, server: ScriptedModelServer, sid: str, lay: Layout) -> str:
    """One turn whose command reads the credential under both names, then the control file."""
    probe = f"cat {lay.link}; cat {lay.host_target}; cat {lay.control}; : {len(server.calls)}"
    server.add_probe(probe)
    client.prompt(sid, PROMPT_TEXT)
    calls = [c for c in server.calls if c.command == probe]
    output = server.tool_outputs().get(calls[0].call_id) if calls else None
    server.drop_pending_probes()
    return output or ""


def _new_session(client: AcpClient, cwd: Path) -> Any:
    return client.client.request("session/new", {"cwd": str(cwd), "mcpServers": []}, timeout=60)


def _bare(site: Site, core: Path, server: ScriptedModelServer) -> AbstractContextManager[AcpClient]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "CODEX_HOME": str(site.lay.codex_home),
        "HOME": str(site.home),
        "TMPDIR": str(site.tmp),
        "CODEX_PATH": str(core),
        "CODEX_CONFIG": json.dumps(server.provider_config()),
    }
    return acp_process([*SETPRIV, *site.adapter], env, str(site.lay.workspace))


def _through_run(
    site: Site, core: Path, server: ScriptedModelServer, scratch: Path
) -> AbstractContextManager[AcpClient]:
    """The adapter through `profilec run`, the scripted model as the provider config."""
    provider = _provider(scratch / "provider.toml", server)
    argv = [
        sys.executable, "-m", "profilec", "run", *site.flags(),
        "--provider-config", str(provider), "--", "/usr/bin/env", f"CODEX_PATH={core}",
        *site.adapter,
    ]  # fmt: skip
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO)}
    return acp_process(argv, env, str(site.lay.workspace))


def test_run_refuses_every_other_mode_by_both_methods_and_a_cwd_below_the_root(
    site: Site, core: Path, var_tmp_base: Path
) -> None:
    with ScriptedModelServer() as server:
        # The control: the bare adapter offers built-in modes and accepts each by both methods.
        with _bare(site, core, server) as bare:
            session = bare.new_session()
            sid = str(session["sessionId"])
            offered, _ = modes_of(session)
            built_in = [m for m in offered if not m.startswith(PROFILE)]
            assert built_in, offered
            for mode in built_in:
                bare.set_mode(sid, mode)
                _set_option(bare, sid, mode)
            assert "sessionId" in _new_session(bare, site.sub)

        with _through_run(site, core, server, var_tmp_base) as run:
            session = run.new_session()
            sid = str(session["sessionId"])
            offered, current = modes_of(session)
            assert offered and all(m.startswith(PROFILE) for m in offered), offered
            assert current in offered
            assert set(_mode_choices(session)) == set(offered)
            for mode in built_in:
                with pytest.raises(RpcError, match="profilec run: session/set_mode"):
                    run.set_mode(sid, mode)
                with pytest.raises(
                    RpcError, match='profilec run: session/set_config_option "mode"'
                ):
                    _set_option(run, sid, mode)
            with pytest.raises(RpcError, match="is refused: a session opens only in a workspace"):
                _new_session(run, site.sub)
            for method in ("session/load", "session/resume"):
                params = {"sessionId": sid, "cwd": str(site.sub), "mcpServers": []}
                with pytest.raises(RpcError, match=f"profilec run: {method} cwd"):
                    run.client.request(method, params, timeout=60)
            # Every offered mode, set by both methods, runs a turn that reads the control file
            # and not the credential.
            for mode in offered:
                for set_it in (run.set_mode, lambda s, m: _set_option(run, s, m)):
                    set_it(sid, mode)
                    output = _probe(run, server, sid, site.lay)
                    assert "control-ok" in output, (mode, output)
                    assert site.lay.marker not in output, mode
            # SIGTERM, as a launcher ends a session: `run` ends the whole tree itself.
            tree = descendants(run.client.pid)
            assert len(tree) >= 3, tree  # bwrap (as 65534), node, codex app-server
            os.kill(run.client.pid, signal.SIGTERM)
            run.client.proc.wait(60)
            assert [p for p, t in tree if start_time(p) == t] == []


def test_drift_ends_the_session_the_client_is_told_and_run_exits_9(
    site: Site, core: Path, var_tmp_base: Path
) -> None:
    """The chain re-pointed while a session is open: the client gets the
    `_profilec/session_ended` notification, `run` exits 9 with the watch event on stderr, and
    nothing of the adapter's tree is left."""
    with ScriptedModelServer() as server:
        with _through_run(site, core, server, var_tmp_base) as run:
            run.new_session()
            tree = descendants(run.client.pid)
            mark = run.client.mark()
            link = site.lay.link
            link.unlink()
            link.symlink_to(site.lay.control)  # CODEX_HOME/auth.json re-pointed
            note = run.client.wait_for(
                lambda m: m.get("method") == "_profilec/session_ended", timeout=60, after=mark
            )
            assert note["params"]["reason"] == "drift"
            assert run.client.proc.wait(60) == 9
            err = run.client.stderr_tail()
        assert [p for p, t in tree if start_time(p) == t] == []
        event = json.loads(err.strip().split("\n")[-2])
        assert event == note["params"]["drift"]
        assert err.strip().split("\n")[-1].startswith("profilec: lock-drift: run: ")


def test_run_killed_outright_leaves_nothing_running(
    site: Site, core: Path, var_tmp_base: Path
) -> None:
    """SIGKILL gives `run` no chance to clean up: bwrap's `--die-with-parent` and its pid
    namespace end the adapter and Codex all the same."""
    with ScriptedModelServer() as server, _through_run(site, core, server, var_tmp_base) as run:
        run.new_session()
        tree = descendants(run.client.pid)
        assert len(tree) >= 3, tree
        os.kill(run.client.pid, signal.SIGKILL)
        run.client.proc.wait(60)
        deadline = time.monotonic() + 60
        left = tree
        while left and time.monotonic() < deadline:
            left = [(p, t) for p, t in left if start_time(p) == t]
            if left:
                time.sleep(0.05)  # the kernel ends the namespace asynchronously
        assert left == []


def test_the_library_runs_a_session_as_a_call(site: Site, var_tmp_base: Path) -> None:
    """`api.run_session` with `cat` as the adapter inside the real boundary: the relay refuses
    a built-in mode in-process, passes the rest, and the client's end is the session's end
    (the adapter's exit code, nothing left)."""
    from profilec import api

    with ScriptedModelServer() as server:
        provider = _provider(var_tmp_base / "provider.toml", server)
    lay = site.lay
    inputs = api.make_inputs(
        lay.manifest, workspace_roots=[lay.workspace], codex_home=lay.codex_home,
        run_as=UID, home=site.home, tmpdir=site.tmp,
    )  # fmt: skip
    c_r, c_w = os.pipe()
    o_r, o_w = os.pipe()
    refused = {"jsonrpc": "2.0", "id": 1, "method": "session/set_mode"}
    refused["params"] = {"sessionId": "s", "modeId": "agent-full-access"}
    echoed = {"jsonrpc": "2.0", "id": 2, "method": "x/echo", "params": {}}
    os.write(c_w, (json.dumps(refused) + "\n" + json.dumps(echoed) + "\n").encode())
    got: list[dict[str, Any]] = []
    with os.fdopen(c_r, "rb") as cin, os.fdopen(o_w, "wb") as cout, os.fdopen(o_r, "rb") as out:
        reader = threading.Thread(target=lambda: got.extend(json.loads(x) for x in out))
        reader.start()
        os.close(c_w)  # the client's input ends after its two lines
        ending = api.run_session(
            inputs, ["/bin/cat"], provider_config=provider, client_in=cin, client_out=cout
        )
        cout.close()
        reader.join(30)
    assert (ending.reason, ending.exit_code) in {("client-eof", 0), ("adapter-exit", 0)}
    assert got[0]["id"] == 1 and "profilec run: session/set_mode" in got[0]["error"]["message"]
    assert got[1] == echoed  # cat sent the forwarded request back
