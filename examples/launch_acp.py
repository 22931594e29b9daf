#!/usr/bin/env python3
"""A root daemon starting one real codex-acp session as uid 65534, from the launch document alone.

Run as root from a checkout with profilec installed (`python3 -P examples/launch_acp.py`); it
needs `.ci/tools.sh`'s pinned Codex and @agentclientprotocol/codex-acp 2.6.0, node >= 20 and
bubblewrap. Every step is one the README's "A root daemon's launcher, step by step" names, in
its order:

1. a layout whose vault, CODEX_HOME, workspace, HOME and TMPDIR belong to the run-as uid (the
   roots manifest stays root's);
2. `profilec compile ... --run-as 65534 --format launch`: the launch document;
3. its adapter entry's `files` written (config.toml, and auth.lock created empty) for that uid;
4. its `requirements.install_argv` run as root, then `profilec check --run-as 65534
   --requirements /etc/codex/requirements.toml --launch-env FILE` (every ownership
   prerequisite, PC060-PC062; FILE holds the entry's `env`, which turns the parent's git off
   with GIT_DIR, PC052);
5. its `watch.argv` started, waited on until it says it is watching;
6. the adapter: `command` with NODE and ADAPTER_SCRIPT substituted, `env` plus what
   `launcher_supplies` names (CODEX_PATH), run as the run-as uid (setpriv), in the document's cwd;
7. a session: every mode the adapter offers is tried by every method in `mode_methods`
   (`session/set_mode`, and `session/set_config_option` with `configId: "mode"`: codex-acp
   2.6.0 takes both); the launcher forwards a switch, by either, only to an id in
   `forward_mode_ids` and refuses the rest; in each accepted mode the model (here the scripted
   local model of profilec.e2e, standing in for your provider) runs a command reading the
   credential under every name. Then, as a client that ignores the allow-list would, the
   refused modes are set anyway: under the managed requirements Codex refuses their turns;
8. a negative control: the same probe through the same adapter with no profilec config and no
   requirements reads the marker.

The host's /etc is left alone: the launcher re-runs itself in a private mount namespace with an
overlay on /etc, so `requirements install` writes /etc/codex/requirements.toml only there (a
real daemon installs it on the host, or binds it over /etc/codex in its mount plan). Prints one
line per step and mode; `--json` adds the results as one JSON line at the end. Exit 0 when every
accepted mode denied the credential and the control read it.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from profilec.e2e.acp import PROMPT_TEXT, acp_process, modes_of
from profilec.e2e.adapters import install_dir, node_binary
from profilec.e2e.jsonrpc import RpcError
from profilec.scripted_model import ScriptedModelServer
from profilec.settings import codex_binary

RUN_AS = 65534
PACKAGE, VERSION = "@agentclientprotocol/codex-acp", "2.6.0"
HERE = Path(__file__).resolve().parent
PROFILEC = [sys.executable, "-P", "-m", "profilec"]
NAMESPACE_FLAG = "PROFILEC_EXAMPLE_PRIVATE_NS"


def say(text: str) -> None:
    print(text, flush=True)


def private_etc() -> None:
    """Re-run in a private mount namespace whose /etc is an overlay (writes stay in a tmpfs)."""
    if os.environ.get(NAMESPACE_FLAG) == "1":
        return
    script = (
        'u="$(mktemp -d)" && mount -t tmpfs tmpfs "$u" && mkdir "$u/up" "$u/work" && '
        'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$u/up,workdir=$u/work" /etc && '
        'exec "$@"'
    )
    argv = ["unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script, "sh"]
    env = {**os.environ, NAMESPACE_FLAG: "1"}
    sys.exit(subprocess.run([*argv, sys.executable, "-P", *sys.argv], env=env).returncode)


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


def write_files(entry: dict[str, Any]) -> None:
    """The entry's `files`, written for the run-as user (step 3)."""
    for f in entry["files"]:
        path, mode = f["path"], int(f["mode"], 8)
        if not (f.get("if_exists") == "keep" and os.path.lexists(path)):
            tmp = f"{path}.tmp-{secrets.token_hex(4)}"
            with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "w") as fh:
                fh.write(f["content"])
            os.replace(tmp, path)
        give(path, mode)
        say(f"  file {path} ({f['mode']}, uid {RUN_AS})")


def start_watch(doc: dict[str, Any]) -> subprocess.Popen[str]:
    """`watch.argv`, started and waited on until it is watching (step 5)."""
    w = doc["watch"]
    proc = subprocess.Popen(
        w["argv"], env={**os.environ, **w["env"]}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if "profilec: watch: watching" in line:
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc
    raise SystemExit(f"watch exited {proc.wait()} before watching")


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


def mode_switch(entry: dict[str, Any], method: str, params: dict[str, Any]) -> str | None:
    """The mode id a client request switches to, by any of the entry's `mode_methods`
    (session/set_mode, session/set_config_option with configId "mode"); None: no switch."""
    for m in entry["mode_methods"]:
        if m["method"] == method and all(params.get(k) == v for k, v in m["match"].items()):
            return str(params.get(m["id_param"]))
    return None


def relay(client: Any, entry: dict[str, Any], method: str, params: dict[str, Any]) -> Any:
    """The launcher's gate on a client request (step 7): a mode switch, by any method, to an
    id outside `forward_mode_ids` is refused (an ACP error to the client); the rest is
    forwarded to the adapter."""
    mode = mode_switch(entry, method, params)
    if mode is not None and mode not in entry["forward_mode_ids"]:
        raise RpcError(-32602, f"mode {mode} is not allowed (forward_mode_ids)", None)
    return client.client.request(method, params, timeout=60)


def switch_params(m: dict[str, Any], sid: str, mode: str) -> dict[str, Any]:
    """The params of a mode switch to `mode` by the document's mode method `m`."""
    return {"sessionId": sid, **m["match"], m["id_param"]: mode}


def run_modes(
    argv: list[str], env: dict[str, str], cwd: str, entry: dict[str, Any], p: dict[str, str],
    server: ScriptedModelServer, marker: str, *, control: bool = False,
) -> list[dict[str, str]]:  # fmt: skip
    """One adapter process, one session: every offered mode tried by every mode method
    (step 7), or, for the control, the session's default mode only (step 8)."""
    rows: list[dict[str, str]] = []
    with acp_process(argv, env, cwd) as client:
        session = client.new_session()
        sid = str(session["sessionId"])
        offered, current = modes_of(session)
        say(f"  session {sid}: offered {', '.join(offered)}; current {current}")
        plan = [("default", current or "", None)] if control else []
        for m in [] if control else entry["mode_methods"]:
            allowed = set(entry["forward_mode_ids"])
            plan += [("forwarded", mode, m) for mode in offered if mode in allowed]
            plan += [("refused", mode, m) for mode in offered if mode not in allowed]
        for kind, mode, m in plan:
            by = m["method"] if m is not None else "none"
            tag = f"P{secrets.token_hex(4)}"
            command = probe(p, tag)
            before = len(server.calls)
            server.add_probe(command)
            try:
                if m is not None:
                    params = switch_params(m, sid, mode)
                    try:
                        relay(client, entry, m["method"], params)
                    except RpcError as exc:
                        if kind != "refused":
                            raise
                        say(f"  mode {mode} by {by}: refused by the launcher ({exc})")
                        # Sent anyway here, as a client ignoring the allow-list would: the
                        # managed requirements must keep the deny (or refuse the turn).
                        client.client.request(m["method"], params, timeout=60)
                client.prompt(sid, PROMPT_TEXT)
            except RpcError as exc:
                if kind != "refused":
                    raise
                detail = f"{exc} {json.dumps(exc.data)}" if exc.data is not None else str(exc)
                result, evidence = "refused", f"Codex refused the turn: {detail}"[:200]
            else:
                calls = [c for c in server.calls[before:] if c.command == command]
                output = server.tool_outputs().get(calls[0].call_id) if calls else None
                result, evidence = judge(output, p, marker)
            server.drop_pending_probes()
            what = "set anyway" if kind == "refused" else kind
            say(f"  mode {mode} by {by} ({what}): {result.upper()}: {evidence}")
            row = {"mode": mode, "method": by, "launcher": kind, "result": result}
            rows.append({**row, "evidence": evidence})
    return rows


def main() -> int:
    if os.geteuid() != 0:
        raise SystemExit("run as root: a root daemon launching Codex as uid 65534")
    private_etc()
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
        return launch(d, p, codex, node, script)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def launch(d: str, p: dict[str, str], codex: Path, node: str, script: Path) -> int:
    marker = json.loads(Path(p["target"]).read_text())["OPENAI_API_KEY"]
    say(f"1 layout {d} (vault, CODEX_HOME, workspace, HOME, TMPDIR owned by uid {RUN_AS})")
    flags = compile_flags(p)
    raw = subprocess.run(
        [*PROFILEC, "compile", *flags, "--format", "launch"], check=True, capture_output=True
    ).stdout
    doc = json.loads(raw)
    entry = next(a for a in doc["adapters"] if (a["package"], a["version"]) == (PACKAGE, VERSION))
    if not entry["holds"]:
        raise SystemExit(entry["statement"])
    say(f"2 launch document: {entry['launch_method']}; runs as: {entry['run_as']}")
    say("3 files")
    write_files(entry)
    give(p["codex_home"], 0o700)
    req = entry["requirements"]
    env = {**os.environ, **req["install_env"]}
    subprocess.run(req["install_argv"], env=env, check=True)
    # The environment the adapter starts with (step 6): check refuses one that leaves the
    # parent's git on (PC052: no GIT_DIR below /dev/null).
    launch_env = os.path.join(d, "launch-env.json")
    Path(launch_env).write_text(json.dumps(entry["env"]))
    check = [*PROFILEC, "check", *flags, "--requirements", req["path"], "-q"]
    check += ["--launch-env", launch_env]
    subprocess.run(check, env=env, check=True, stdout=subprocess.DEVNULL)
    say(f"4 requirements installed at {req['path']}; check --run-as {RUN_AS}: PASS")
    supplies = {"NODE": node, "ADAPTER_SCRIPT": str(script)}
    command = [supplies.get(a[2:-1], a) if a.startswith("${") else a for a in entry["command"]]
    drop = ["setpriv", f"--reuid={RUN_AS}", f"--regid={RUN_AS}", "--clear-groups", "--"]
    watch = start_watch(doc)
    say(f"5 watch: watching (pid {watch.pid})")
    try:
        with ScriptedModelServer() as server:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "NO_PROXY": "127.0.0.1,localhost",
                **entry["env"],
                "CODEX_PATH": str(codex),
                # Your model provider (here the scripted local model): the launcher's choice.
                "CODEX_CONFIG": json.dumps(server.provider_config()),
            }
            say(f"6 adapter as uid {RUN_AS}: {shlex.join(command)} (cwd {doc['cwd']})")
            say("7 session")
            rows = run_modes([*drop, *command], env, doc["cwd"], entry, p, server, marker)
            watch.send_signal(signal.SIGTERM)
            say(f"  watch ended: exit {watch.wait()} (0: no drift during the session)")
            bare = tempfile.mkdtemp(prefix="control-home-", dir=d)
            give(bare, 0o700)
            env.update(CODEX_HOME=bare)
            env.pop("INITIAL_AGENT_MODE", None)
            # No profilec config and no requirements (an empty tmpfs over /etc/codex).
            hide = ["unshare", "-m", "/bin/sh", "-c", 'mount -t tmpfs t /etc/codex && exec "$@"']
            say("8 negative control: the same adapter without profilec")
            ctl = run_modes([*hide, "sh", *drop, *command], env, doc["cwd"], entry, p, server,
                            marker, control=True)  # fmt: skip
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    ok = (
        all(
            r["result"] == "denied" or (r["launcher"] == "refused" and r["result"] == "refused")
            for r in rows
        )
        and any(r["launcher"] == "forwarded" for r in rows)
        and all(r["result"] == "leaked" for r in ctl)
        and watch.returncode == 0
    )
    denied = sum(r["result"] == "denied" for r in rows)
    leaked = sum(r["result"] == "leaked" for r in ctl)
    say(f"{'OK' if ok else 'FAILED'}: {denied} of {len(rows)} modes denied the credential "
        f"(the rest refused by Codex); the control leaked in {leaked} of {len(ctl)}")  # fmt: skip
    if "--json" in sys.argv[1:]:
        print(json.dumps({"modes": rows, "control": ctl, "ok": ok}, sort_keys=True))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
