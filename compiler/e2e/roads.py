"""Roads around the profile that an ACP client opens through codex-acp, run for real.

* `client_mcp_server_ran`: the client's own `session/new` `mcpServers` become a thread config
  layer of the trusted parent, which starts them outside the sandbox unless the managed
  `[mcp_servers]` allow-list refuses them.
* `planted_project_layer`: codex-acp marks the session cwd a trusted project, so a
  `.codex/config.toml` the model wrote into a subdirectory of the workspace loads above
  profilec's config in a session opened there (not at a workspace root, whose `.codex` Codex
  keeps read-only).
* `mode_by_config_option`: codex-acp 2.6.0 switches a session's mode through
  `session/set_config_option` (`configId: "mode"`) as well as `session/set_mode`; a launcher
  whose allow-list guards only the latter lets a client pick a built-in mode by the former.
* `planted_layer_watched`: the same plant, made by a model command in a session at the
  workspace root while the real `profilec watch` runs: watch reports it, and `profilec check`
  refuses the tree afterwards, so no later session meets it.

Each plant comes in the shapes `PLANTS` names (issue 40): `sub` (`<ws>/sub/.codex`), `link`
(`<ws>/lib -> <TMPDIR>/x` holding `.codex/config.toml`, the session opened in `<ws>/lib`) and
`git` (`<ws>/g/.git/.codex`, the session opened in `<ws>/g/.git`).
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..codex.vocabulary import BUILTIN_WORKSPACE, SPECIAL_SLASH_TMP, SPECIAL_TMPDIR
from ..fsio import write_atomic
from ..models.compiled import CompiledBundle
from ..scripted_model import ScriptedModelServer
from .acp import (
    PROMPT_TEXT,
    SESSION_TIMEOUT,
    AcpClient,
    Launch,
    acp_process,
    build_launch,
    judge,
    probe_command,
    remove_layout,
    scaled,
)
from .adapters import NON_ROOT_UID, Adapter
from .jsonrpc import RpcError
from .layout import ACP_TREE, Layout, build_layout


def client_mcp_server_ran(adapter: Adapter, method: str, *, managed: bool) -> tuple[bool, str]:
    """Whether a stdio MCP server that the ACP client itself lists in `session/new` (not
    vouched by the launcher) is started by the trusted parent: the server is a shell that
    writes a random marker file before anything else. After one scripted turn (Codex has settled
    its MCP startup by then) the marker is looked for. Returns (ran, evidence)."""
    layout = build_layout(ACP_TREE)
    try:
        with ScriptedModelServer() as server:
            launch = build_launch(adapter, method, layout, server, managed=managed)
            mark = os.path.join(layout.base, f"client-mcp-{secrets.token_hex(6)}")
            rogue = {
                "name": "client-rogue",
                "command": "/bin/sh",
                "args": ["-c", f"echo ran > {shlex.quote(mark)}; exec sleep 600"],
                "env": [],
            }
            out = _one_turn(launch, server, layout.workspace, "echo turn-ran", "turn-ran", [rogue])
            ran = os.path.exists(mark)
            return ran, f"turn ran: {out is not None}; model requests={len(server.requests)}"
    finally:
        remove_layout(layout)


#: Where a plant goes: `sub`, behind a `link` to a directory outside the workspace, in a `git`
#: directory that is no repository.
PLANTS = ("sub", "link", "git")


def _plant_place(layout: Layout, plant: str) -> tuple[str, str, str]:
    """(the directory a session is opened in, the directory holding the planted `.codex`,
    the link to make from the first to the second, or "")."""
    ws = layout.workspace
    if plant == "sub":
        return os.path.join(ws, "sub"), os.path.join(ws, "sub"), ""
    if plant == "git":
        return os.path.join(ws, "g", ".git"), os.path.join(ws, "g", ".git"), ""
    if plant == "link":
        return os.path.join(ws, "lib"), os.path.join(layout.tmpdir, "x"), os.path.join(ws, "lib")
    raise ValueError(f"unknown plant {plant!r}; choose from {PLANTS}")


@dataclass(frozen=True)
class ProjectLayerOutcome:
    """What a session saw of a project config planted in `<ws>/sub`."""

    loaded: bool  #: the planted layer's environment variable reached the model's command
    home_writable: bool  #: a model command created a file in CODEX_HOME
    output: str


def planted_project_layer(
    adapter: Adapter, method: str, *, below_root: bool, managed: bool = True, plant: str = "sub"
) -> ProjectLayerOutcome:
    """Plant `<ws>/sub/.codex/config.toml` (as the model can: measured, a profile-mode command
    wrote it; `plant` picks the shape, PLANTS) holding an environment variable for model
    commands and a `write` entry on CODEX_HOME for the default profile, then open one session
    with cwd the plant's directory (`below_root`) or the workspace root, and run one probe."""
    layout = build_layout(ACP_TREE)
    try:
        with ScriptedModelServer() as server:
            launch = build_launch(adapter, method, layout, server, managed=managed)
            opened, sub, link = _plant_place(layout, plant)
            os.makedirs(os.path.join(sub, ".codex"))
            tag = f"planted-{secrets.token_hex(6)}"
            planted = (
                f'[shell_environment_policy.set]\nPROFILEC_PLANTED = "{tag}"\n'
                f"[permissions.profilec-agent.filesystem]\n"
                f'"{layout.codex_home}" = "write"\n'
            )
            path = os.path.join(sub, ".codex", "config.toml")
            write_atomic(path, planted.encode("utf-8"), mode=0o644)
            for d in (sub, os.path.join(sub, ".codex")):
                os.lchown(d, NON_ROOT_UID, NON_ROOT_UID)
            if link:
                os.symlink(sub, link)
            cwd = opened if below_root else layout.workspace
            probe = os.path.join(layout.codex_home, f".{tag}")
            command = (
                f"echo env=$PROFILEC_PLANTED; ( : > {shlex.quote(probe)} ) 2>&1; echo home-rc=$?"
            )
            out = _one_turn(launch, server, cwd, command, "home-rc=") or ""
            return ProjectLayerOutcome(
                loaded=f"env={tag}" in out,
                home_writable="home-rc=0" in out and os.path.exists(probe),
                output=out[-400:],
            )
    finally:
        remove_layout(layout)


@dataclass(frozen=True)
class WatchedPlant:
    """What `planted_layer_watched` saw."""

    planted: bool  #: the model command wrote `<ws>/sub/.codex/config.toml`
    event: dict[str, Any] | None  #: watch's drift event (None: it reported nothing in time)
    watch_exit: int | None
    #: Seconds from the model command's write (its own clock) to watch's report.
    latency: float | None
    check_exit: int  #: `profilec check` on the tree afterwards
    check_rules: tuple[str, ...]  #: the rules of its error findings
    output: str


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-P", "-m", "profilec.cli", *args]


def planted_layer_watched(adapter: Adapter, method: str, plant: str = "sub") -> WatchedPlant:
    """One session at the workspace root, under the managed requirements, whose model command
    plants `<ws>/sub/.codex/config.toml` (what `planted_project_layer` shows loading in a later
    session opened in `<ws>/sub`; `plant` picks the shape, PLANTS) while `profilec watch --lock`
    runs as the launch document starts it; then `profilec check` on the same tree, as the
    launcher runs it before the next session. The lock is written before the tree is handed to
    the adapter's user, beside nothing the model can reach."""
    layout = build_layout(ACP_TREE)
    keep = tempfile.mkdtemp(prefix="profilec-e2e-lock-", dir="/var/tmp")
    watch: subprocess.Popen[str] | None = None
    try:
        lock = os.path.join(keep, "profilec.lock")
        subprocess.run(
            _cli(
                "lock", "--roots", layout.roots, "--workspace-root", layout.workspace, "--out", lock
            ),
            check=True,
            capture_output=True,
            text=True,
        )
        with ScriptedModelServer() as server:
            launch = build_launch(adapter, method, layout, server, managed=True)
            watch = subprocess.Popen(
                _cli("watch", "--lock", lock),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            assert watch.stderr is not None
            started = watch.stderr.readline()
            if "watching" not in started:
                raise RuntimeError(f"watch did not start: {started.strip()}")
            _, sub, link = _plant_place(layout, plant)
            cfg = os.path.join(sub, ".codex", "config.toml")
            body = f'[permissions.profilec-agent.filesystem]\n"{layout.codex_home}" = "write"\n'
            then = f" && ln -s {shlex.quote(sub)} {shlex.quote(link)}" if link else ""
            command = (
                f"mkdir -p {shlex.quote(os.path.dirname(cfg))} && printf {shlex.quote(body)} > "
                f"{shlex.quote(cfg)}{then}; echo plant-rc=$? at=$(date +%s.%N)"
            )
            out = _one_turn(launch, server, layout.workspace, command, "plant-rc=") or ""
            try:
                text, err = watch.communicate(timeout=scaled(30.0))
            except subprocess.TimeoutExpired:
                text, err = "", ""
            seen = time.time()
            event = json.loads(text.split("\n")[0]) if text.strip() else None
            at = [w for w in out.split() if w.startswith("at=")]
            latency = seen - float(at[0][3:]) if at and event is not None else None
        os.lchown(layout.base, 0, 0)  # the adapter is gone: the manifest's parent is root's again
        check = subprocess.run(
            _cli(
                "check",
                "--roots",
                layout.roots,
                "--workspace-root",
                layout.workspace,
                "--run-as",
                str(NON_ROOT_UID),
                "--format",
                "json",
            ),
            capture_output=True,
            text=True,
        )
        findings = json.loads(check.stdout)["findings"] if check.stdout.strip() else []
        rules = tuple(sorted({f["rule"] for f in findings if f["severity"] == "error"}))
        return WatchedPlant(
            planted="plant-rc=0" in out
            and os.path.exists(cfg)
            and (not link or os.path.realpath(link) == os.path.realpath(sub)),
            event=event,
            watch_exit=watch.returncode,
            latency=latency,
            check_exit=check.returncode,
            check_rules=rules,
            output=(out[-300:] + " | " + err[-300:]),
        )
    finally:
        if watch is not None and watch.poll() is None:
            watch.kill()
            watch.wait()
        remove_layout(layout)
        for name in os.listdir(keep):
            os.unlink(os.path.join(keep, name))
        os.rmdir(keep)


def as_workspace(bundle: CompiledBundle, mode: str) -> CompiledBundle:
    """The control's profile shape: the bundle with `mode` extending :workspace (which writes
    /tmp, $TMPDIR and `:workspace_roots`, the session cwd included), as profilec emitted it
    before its writing modes became :read-only plus explicit writes."""
    prof = bundle.profile_for(mode)
    tmp = (SPECIAL_SLASH_TMP, SPECIAL_TMPDIR)
    fs = {k: v for k, v in prof.policy_filesystem.items() if k not in tmp}
    entries = tuple(
        e for e in prof.entries if not any(v.reason == "workspace-root" for v in e.provenance)
    )
    old = prof.model_copy(
        update={"extends": BUILTIN_WORKSPACE, "policy_filesystem": fs, "entries": entries}
    )
    profiles = tuple(old if p.mode == mode else p for p in bundle.profiles)
    return bundle.model_copy(update={"profiles": profiles})


def session_at(
    adapter: Adapter,
    method: str,
    where: str,
    *,
    managed: bool = True,
    reshape: Callable[[CompiledBundle], CompiledBundle] | None = None,
) -> str:
    """One session opened with a cwd the client picks outside the workspace (`where`:
    `codex-home`, the CODEX_HOME; `vault-parent`, the directory holding the vault; `base`, the
    directory above the workspace, CODEX_HOME and the vault), in the default mode, running the
    matrix probe plus a write into that cwd. Returns the verdict line: `held`/`lost`/`error`,
    the judge's evidence and `cwd-write=<rc>`. `reshape`: a control's bundle change
    (`as_workspace`)."""
    layout = build_layout(ACP_TREE)
    try:
        with ScriptedModelServer() as server:
            launch = build_launch(adapter, method, layout, server, managed=managed, reshape=reshape)
            cwd = {
                "codex-home": layout.codex_home,
                "vault-parent": os.path.dirname(os.path.dirname(layout.target)),
                "base": layout.base,
            }[where]
            tag = f"P{secrets.token_hex(4)}"
            mark = os.path.join(cwd, f".cwd-{tag}")
            command = (
                f"{probe_command(layout, tag)}; ( : > {shlex.quote(mark)} ) 2>&1; echo cwd-write=$?"
            )
            out = _one_turn(launch, server, cwd, command, "cwd-write=")
            result, evidence = judge(out, layout, tag)
            wrote = os.path.lexists(mark)
            return f"{result}: {evidence}; cwd-write={'created' if wrote else 'refused'}"
    finally:
        remove_layout(layout)


def mode_by_config_option(adapter: Adapter, method: str, mode: str, *, managed: bool) -> str:
    """One session in the workspace switched to `mode` by `session/set_config_option`
    (`configId: "mode"`, what codex-acp 2.6.0 applies as a mode change), then one turn running
    the matrix probe. Returns `held`/`lost`/`error` and the judge's evidence, or `refused: ...`
    when the adapter or Codex refused the switch or the turn (an ACP error)."""
    layout = build_layout(ACP_TREE)
    try:
        with ScriptedModelServer() as server:
            launch = build_launch(adapter, method, layout, server, managed=managed)
            tag = f"P{secrets.token_hex(4)}"

            def switch(client: AcpClient, sid: str) -> None:
                params = {"sessionId": sid, "configId": "mode", "value": mode}
                timeout = scaled(SESSION_TIMEOUT)
                client.client.request("session/set_config_option", params, timeout=timeout)

            try:
                out = _one_turn(
                    launch, server, layout.workspace, probe_command(layout, tag), tag, before=switch
                )
            except RpcError as exc:
                detail = f"{exc} {json.dumps(exc.data)}" if exc.data is not None else str(exc)
                return f"refused: {detail}"
            result, evidence = judge(out, layout, tag)
            return f"{result}: {evidence}"
    finally:
        remove_layout(layout)


def _one_turn(
    launch: Launch,
    server: ScriptedModelServer,
    cwd: str,
    command: str,
    needle: str,
    mcp_servers: Sequence[Mapping[str, Any]] = (),
    before: Callable[[AcpClient, str], None] | None = None,
) -> str | None:
    """One adapter process in `cwd`, one new session (with the client's own `mcp_servers`),
    `before` on it, one scripted turn running `command`; the tool output holding `needle`
    (None: it never ran)."""
    with acp_process(launch.argv, launch.env, cwd) as client:
        sid = str(client.new_session(mcp_servers).get("sessionId") or "")
        if before is not None:
            before(client, sid)
        server.add_probe(command)
        client.prompt(sid, PROMPT_TEXT, progress=lambda: len(server.requests))
    outputs = [o for o in server.tool_outputs().values() if needle in o]
    return outputs[0] if outputs else None
