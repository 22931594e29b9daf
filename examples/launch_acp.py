#!/usr/bin/env python3
"""A root daemon starting real codex-acp 2.6.0 sessions as uid 65534 through `profilec run`.

Run as root from a checkout with profilec installed (`python3 -P examples/launch_acp.py`); it
needs `.ci/tools.sh`'s pinned Codex (or PROFILEC_CODEX_BIN), @agentclientprotocol/codex-acp
2.6.0, node >= 20 and bubblewrap. The launcher's whole part (docs/run.md does the rest: compile,
CODEX_HOME/config.toml, check, the boundary with the session's own requirements over
/etc/codex, the mode gate, the drift watch, ending the tree):

1. a layout (examples/make-layout.sh) whose vault, CODEX_HOME, workspace, HOME and TMPDIR
   belong to the run-as uid (the roots manifest stays root's);
2. a daemon-owned provider config (`--provider-config`: here the scripted local model of
   profilec.e2e standing in for your provider; only `model`, `model_provider` and
   `model_providers`);
3. a negative control: the same probe through the bare adapter (as the same uid) with no
   profilec config and no requirements (an empty tmpfs over /etc/codex) reads the marker. It
   runs first: the modes it offers are the built-in ones `run` must refuse;
4. one command per session, `profilec run <compile flags> --run-as 65534 --provider-config P
   -- <adapter argv>`, driven as the adapter itself would be, on its stdin and stdout: every
   mode the adapter offers is set by both ACP methods (`session/set_mode`, and
   `session/set_config_option` with `configId: "mode"`). `run` offers only the compiled
   `permission-profile:*` modes and refuses every other one with a JSON-RPC error; in each
   offered mode the model runs a command reading the credential under every name. The
   client's input ends; `run` exits with the adapter's code and leaves nothing running.

Prints one line per step and mode; `--json` adds the results as one JSON line at the end. Exit
0 when every offered mode denied the credential, every other mode was refused, nothing of the
session was left running and the control read the marker; 1 otherwise.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import tomlkit

from profilec.e2e.acp import PROMPT_TEXT, AcpClient, acp_process, modes_of
from profilec.e2e.adapters import install_dir, node_binary
from profilec.e2e.jsonrpc import RpcError
from profilec.procs import descendants, start_time
from profilec.scripted_model import ScriptedModelServer
from profilec.settings import codex_binary

RUN_AS = 65534
PACKAGE, VERSION = "@agentclientprotocol/codex-acp", "2.6.0"
HERE = Path(__file__).resolve().parent
PROFILEC = [sys.executable, "-P", "-m", "profilec"]
METHODS = ("session/set_mode", "session/set_config_option")
SETPRIV = ["setpriv", f"--reuid={RUN_AS}", f"--regid={RUN_AS}", "--clear-groups", "--"]


def say(text: str) -> None:
    print(text, flush=True)


def give(path: str, mode: int) -> None:
    os.chown(path, RUN_AS, RUN_AS, follow_symlinks=False)
    os.chmod(path, mode)


def make_layout() -> tuple[str, dict[str, str]]:
    """examples/make-layout.sh, then the run-as user's directories handed to it (step 1)."""
    out = subprocess.run(
        ["bash", str(HERE / "make-layout.sh")], check=True, capture_output=True, text=True
    )
    d = out.stdout.strip()
    state = f"{d}/daemon/state/cand-1"
    paths = {
        "roots": f"{d}/roots.toml",
        "workspace": f"{d}/workspace",
        "codex_home": f"{d}/agent/codex-home",
        "vault": f"{d}/host",
        "link": f"{d}/agent/codex-home/auth.json",
        "hop": f"{d}/host-link/auth.json",
        "target": f"{d}/host/auth.json",
        "control": f"{d}/workspace/README.txt",
        "tmpdir": f"{state}/tmp",
        "home": f"{state}/home",
    }
    os.makedirs(paths["home"], exist_ok=True)
    for key in ("vault", "codex_home", "tmpdir", "home"):
        give(paths[key], 0o700)
    give(paths["target"], 0o600)
    give(paths["workspace"], 0o755)
    give(paths["control"], 0o644)
    return d, paths


def compile_flags(p: dict[str, str]) -> list[str]:
    return [
        "--roots", p["roots"], "--workspace-root", p["workspace"],
        "--codex-home", p["codex_home"], "--tmpdir", p["tmpdir"], "--home", p["home"],
        "--run-as", str(RUN_AS),
    ]  # fmt: skip


def probe(p: dict[str, str], tag: str) -> str:
    """Read the credential under every name, then the control file; fenced by `tag`."""
    parts = [
        f"echo =={tag} {name}==; cat {shlex.quote(p[name])} 2>&1"
        for name in ("link", "hop", "target", "control")
    ]
    return "; ".join([*parts, f"echo =={tag} end==; true"])


def judge(output: str | None, p: dict[str, str], marker: str) -> tuple[str, str]:
    if output is None:
        return "error", "the probe did not run"
    if marker in output:
        return "leaked", "credential marker in the model-visible output"
    if "control file" not in output:
        return "error", f"control file not read: {output[:160]!r}"
    last = [x for x in output.split("\n") if "auth.json" in x]
    return "denied", (last[-1].strip() if last else output.strip())[:160]


def provider_config(d: str, server: ScriptedModelServer) -> str:
    """The daemon-owned provider config `run` reads (step 2): root's, 0600."""
    path = os.path.join(d, "provider.toml")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as fh:
        fh.write(tomlkit.dumps(server.provider_config()))
    return path


def probe_turn(
    client: AcpClient, sid: str, p: dict[str, str], server: ScriptedModelServer, marker: str
) -> tuple[str, str]:
    """One turn whose model command reads the credential under every name: (result, evidence)."""
    command = probe(p, f"P{len(server.calls)}")
    before = len(server.calls)
    server.add_probe(command)
    try:
        client.prompt(sid, PROMPT_TEXT)
        calls = [c for c in server.calls[before:] if c.command == command]
        output = server.tool_outputs().get(calls[0].call_id) if calls else None
    finally:
        server.drop_pending_probes()
    return judge(output, p, marker)


def switch(client: AcpClient, sid: str, method: str, mode: str) -> None:
    """Set `mode` by one of the two ACP mode methods."""
    params: dict[str, Any] = {"sessionId": sid, "modeId": mode}
    if method == "session/set_config_option":
        params = {"sessionId": sid, "configId": "mode", "value": mode}
    client.client.request(method, params, timeout=60)


def control(
    d: str, p: dict[str, str], adapter: list[str], env: dict[str, str],
    server: ScriptedModelServer, marker: str,
) -> tuple[list[str], dict[str, str]]:  # fmt: skip
    """The bare adapter, no profilec config, no requirements (step 3): its offered modes and
    the probe's row in its default mode."""
    bare = tempfile.mkdtemp(prefix="control-home-", dir=d)
    give(bare, 0o700)
    # No profilec config and no requirements (an empty tmpfs over /etc/codex).
    hide = 'if [ -d /etc/codex ]; then mount -t tmpfs t /etc/codex; fi && exec "$@"'
    hide_argv = ["unshare", "-m", "/bin/sh", "-c", hide, "sh"]
    with acp_process(
        [*hide_argv, *SETPRIV, *adapter], {**env, "CODEX_HOME": bare}, p["workspace"]
    ) as c:
        session = c.new_session()
        sid = str(session["sessionId"])
        offered, current = modes_of(session)
        result, evidence = probe_turn(c, sid, p, server, marker)
    say(
        f"  bare adapter offered {', '.join(offered)}; mode {current}: {result.upper()}: {evidence}"
    )
    return offered, {"mode": current or "", "result": result, "evidence": evidence}


def session(
    argv: list[str], env: dict[str, str], p: dict[str, str], modes: list[str],
    server: ScriptedModelServer, marker: str,
) -> tuple[list[dict[str, str]], dict[str, Any]]:  # fmt: skip
    """One `profilec run` session (step 4): each mode by each method; then the end."""
    rows: list[dict[str, str]] = []
    with acp_process(argv, env, p["workspace"]) as client:
        opened = client.new_session()
        sid = str(opened["sessionId"])
        offered, current = modes_of(opened)
        say(f"  run offered {', '.join(offered)}; current {current}")
        for mode in [*offered, *(m for m in modes if m not in offered)]:
            for method in METHODS:
                row = {"mode": mode, "method": method, "run": "offered"}
                if mode not in offered:
                    row["run"] = "not offered"
                try:
                    switch(client, sid, method, mode)
                except RpcError as exc:
                    result, evidence = "refused", f"{exc.code} {exc.message}"[:240]
                else:
                    result, evidence = (
                        probe_turn(client, sid, p, server, marker)
                        if mode in offered
                        else ("accepted", "run forwarded a mode it does not offer")
                    )
                say(f"  mode {mode} by {method} ({row['run']}): {result.upper()}: {evidence}")
                rows.append({**row, "result": result, "evidence": evidence})
        # The client's input ends: `run` ends the session and the adapter's whole tree.
        tree = descendants(client.client.pid)
        proc = client.client.proc
        assert proc.stdin is not None
        proc.stdin.close()
        code = proc.wait(120)
    left = [pid for pid, t in tree if start_time(pid) == t]
    say(f"  input ended: run exited {code}; {len(left)} of its {len(tree)} processes left")
    return rows, {"exit_code": code, "processes": len(tree), "left": left}


def main() -> int:
    if os.geteuid() != 0:
        raise SystemExit("run as root: a root daemon launching Codex as uid 65534")
    codex, node = codex_binary(), node_binary()
    script = install_dir("ts") / "node_modules" / PACKAGE / "dist" / "index.js"
    if codex is None or not codex.is_file():
        raise SystemExit("the pinned codex is not installed (bash .ci/tools.sh)")
    if node is None or not script.is_file():
        raise SystemExit(f"node and {PACKAGE} {VERSION} are needed (bash .ci/tools.sh)")
    if shutil.which("bwrap") is None:
        raise SystemExit("bubblewrap (bwrap) is not installed")
    d, p = make_layout()
    try:
        return launch(d, p, codex, [node, str(script)])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def launch(d: str, p: dict[str, str], codex: Path, adapter: list[str]) -> int:
    marker = json.loads(Path(p["target"]).read_text())["OPENAI_API_KEY"]
    say(f"1 layout {d} (vault, CODEX_HOME, workspace, HOME, TMPDIR owned by uid {RUN_AS})")
    with ScriptedModelServer() as server:
        provider = provider_config(d, server)
        say(f"2 provider config {provider} (model {server.model})")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "NO_PROXY": "127.0.0.1,localhost",
            "CODEX_PATH": str(codex),
            "CODEX_CONFIG": json.dumps(server.provider_config()),
            "HOME": p["home"],
            "TMPDIR": p["tmpdir"],
        }
        say("3 negative control: the same adapter without profilec")
        built_in, ctl = control(d, p, adapter, env, server, marker)
        argv = [
            *PROFILEC, "run", *compile_flags(p), "--provider-config", provider,
            "--", "/usr/bin/env", f"CODEX_PATH={codex}", *adapter,
        ]  # fmt: skip
        say(f"4 session: {shlex.join(argv)}")
        run_env = {k: v for k, v in os.environ.items() if k in ("PATH", "PYTHONPATH")}
        rows, end = session(argv, run_env, p, built_in, server, marker)
    ok = (
        any(r["run"] == "offered" for r in rows)
        and all(r["result"] == "denied" for r in rows if r["run"] == "offered")
        and all(r["result"] == "refused" for r in rows if r["run"] != "offered")
        and all(r["mode"].startswith("permission-profile:") for r in rows if r["run"] == "offered")
        and not end["left"]
        and ctl["result"] == "leaked"
    )
    denied = sum(r["result"] == "denied" for r in rows)
    refused = sum(r["result"] == "refused" for r in rows)
    say(f"{'OK' if ok else 'FAILED'}: {denied} mode switches denied the credential, {refused} "
        f"refused by run, of {len(rows)}; the control {ctl['result']}")  # fmt: skip
    if "--json" in sys.argv[1:]:
        result = {"modes": rows, "control": [ctl], "run": end, "ok": ok}
        print(json.dumps(result, sort_keys=True))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
