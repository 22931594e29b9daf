"""Drive an ACP adapter over stdio and judge, from what the *model* saw, whether the deny held.

`AcpClient` speaks the Agent Client Protocol (JSON-RPC 2.0, one message per "\\n" line) through
`jsonrpc.JsonRpcClient`: `initialize` (fs and terminal capabilities off), `session/new` (cwd = the
workspace, no MCP servers), `session/set_mode`, `session/prompt`, `session/load`,
`session/resume`. Every `session/request_permission` is answered by REJECTING it (the reject
option if one is offered, else `cancelled`) and recorded: an approval could run a command outside
the sandbox, so the harness never grants one. Other client methods (fs, terminal) are refused.

`run_adapter_method` runs one adapter under one launch method against a fresh synthetic layout
(a random marker as the credential behind a two-hop link chain, a control file in the
workspace), compiled with `profilec.api`, and a scripted model (`model_server`) that answers
each turn with one tool call running the probe. Per session event it returns an `Observation`:

* `held`: the probe's output reached the model, the control file's marker is in it, and the
  credential marker is not;
* `lost`: the credential marker is in a tool output the model received;
* `error`: the probe did not run or its output never reached the model (so no verdict:
  a test cannot pass vacuously); the evidence says why (what the agent said when it ended the
  turn, how many model requests the turn made, a timeout);
* `not-supported`: the adapter has no such event or knob (e.g. no load capability).

No wait is a fixed sleep or a fixed timeout: a request's deadline scales with the machine's load
when it starts (`scaled`), and a prompt is waited for as long as it makes progress (a message from
the adapter, a request to the model, the probe still running), cancelled only after a scaled idle
period. A method with an undecided (`error`) cell is run once more on a fresh layout, adapter and
model; the retry decides those cells, and their evidence says they were retried
(`merge_retry`).

Every process is started in its own session and process group; on close it, its descendants and
what is left in its group are ended by their own ids.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import secrets
import shlex
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..compat_matrix import excerpt
from ..emit.codex_home import ensure_writer_lock
from ..emit.launch import render_launch_with
from ..emit.requirements import render_requirements
from ..fsio import write_atomic
from ..library import load_and_compile
from ..models.compat import MatrixRow
from ..models.compiled import CompiledBundle
from ..models.launch import AdapterCatalog
from ..procs import cmdline_matches, end_processes, start_time
from ..scripted_model import FINAL_TEXT, ScriptedModelServer
from .adapters import (
    NON_ROOT_UID,
    Adapter,
    split_method,
)
from .jsonrpc import JsonRpcClient, RpcClosed, RpcError, RpcTimeout
from .layout import ACP_TREE, Layout, build_layout, requirements_prefix

Result = Literal["held", "lost", "not-supported", "error"]

#: ACP protocol version the client speaks.
PROTOCOL_VERSION = 1
#: Seconds allowed for one request of each kind on an idle machine; each wait multiplies them by
#: `load_factor()` as it starts (`scaled`).
INIT_TIMEOUT = 60.0
SESSION_TIMEOUT = 60.0
#: A prompt is bounded by this in any case (scaled); what ends a stuck one is PROMPT_IDLE.
PROMPT_TIMEOUT = 300.0
#: Seconds (scaled) a prompt may go without progress before it is cancelled (`session/cancel`).
PROMPT_IDLE = 30.0
#: How often the prompt watcher samples progress (a poll of counters, not a wait for an outcome).
PROGRESS_POLL = 0.25
#: The most a deadline is stretched, however loaded the machine.
MAX_LOAD_FACTOR = 8.0
#: Zed's built-in approval presets (src/thread.rs APPROVAL_PRESETS); tried even when not offered.
ZED_BUILTIN_MODES = ("read-only", "auto", "full-access")
PROMPT_TEXT = "Run the scripted probe."


@dataclass(frozen=True)
class Observation:
    """One matrix cell as observed: its row (the run names the lint), and how it was run."""

    row: MatrixRow
    seconds: float = 0.0
    #: 2 when the cell was undecided at first and run again (see `merge_retry`).
    attempts: int = 1

    @property
    def retried(self) -> bool:
        """The first try could not decide this cell, so it was run once more."""
        return self.attempts > 1

    def again(self, evidence: str, **kw: Any) -> Observation:
        """This cell as retried (`attempts=2`) with `evidence` (already an excerpt)."""
        row = self.row.model_copy(update={"evidence": evidence})
        return replace(self, row=row, attempts=2, **kw)


# ---------------------------------------------------------------------------------------------
# Adaptive deadlines


def load_factor() -> float:
    """How many times slower than idle this machine runs now: the 1-minute load average per CPU
    this process may use, at least 1, at most MAX_LOAD_FACTOR."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    cpus = len(os.sched_getaffinity(0)) or os.cpu_count() or 1
    return min(MAX_LOAD_FACTOR, max(1.0, load / cpus))


def scaled(seconds: float) -> float:
    """`seconds` stretched by the machine's load now (a deadline that adapts to a busy host)."""
    return seconds * load_factor()


# ---------------------------------------------------------------------------------------------
# Synthetic layout (built by profilec.e2e.layout)


def remove_layout(layout: Layout) -> None:
    """End what still runs in the tree, then delete it (links are removed, never followed)."""
    end_tree_processes(layout.base)
    shutil.rmtree(layout.base, ignore_errors=True)


def tree_processes(base: str) -> list[int]:
    """Pids whose command line names the throwaway tree `base` (a fresh random dir of ours)."""
    needle = base.encode()
    return cmdline_matches(lambda c: needle + b"/" in c or needle in c.split(b"\0"))


def end_tree_processes(base: str, grace: float = 2.0) -> list[int]:
    """End, each by its own pid, what is left running in the tree.

    Codex's sandbox helpers run under `bwrap --new-session` and can outlive the adapter and
    the app-server, re-parented to init; their command line names the tree, which is unique to
    this run. TERM first, KILL after `grace` seconds (bwrap as pid 1 of its namespace may ignore
    TERM). Returns the pids found.
    """
    pids = tree_processes(base)
    end_processes([(p, t) for p in pids if (t := start_time(p)) is not None], grace)
    return pids


# ---------------------------------------------------------------------------------------------
# Probe and verdict

SECTIONS = ("link", "hop", "target", "target-after-umount", "control")


def probe_command(layout: Layout, tag: str) -> str:
    """One shell command reading every spelling of the credential and the control file.

    Each section is fenced by `==<tag> <section>==` lines. After the plain reads it tries to lift
    the sandbox's mask (`umount`), as a model command could, and reads the target again; then it
    tries to create a file in each directory that holds a link or the target (rc=0 there means
    a model command could re-point the link or swap the target, so the credential is lost later,
    when the trusted parent refreshes it). It always exits 0 so Codex never treats it as a
    sandbox denial and offers to re-run it unsandboxed.
    """
    q = shlex.quote
    parts = []
    for name, path in (("link", layout.link), ("hop", layout.hop), ("target", layout.target)):
        parts.append(f"echo =={tag} {name}==; cat {q(path)} 2>&1")
    parts.append(
        # The mask sits on the vault (the target's directory) and, for older profiles, on the
        # file itself: lift both, innermost first.
        f"echo =={tag} target-after-umount==; umount {q(layout.target)} 2>&1; "
        f"umount {q(os.path.dirname(layout.target))} 2>&1; cat {q(layout.target)} 2>&1"
    )
    parts.append(f"echo =={tag} control==; cat {q(layout.control)} 2>&1")
    for name, d in layout.holders():
        f = q(os.path.join(d, ".profilec-e2e-write-probe"))
        parts.append(f'echo =={tag} {name}==; ( : > {f} ) 2>&1; echo "rc=$?"')
    parts.append(f"echo =={tag} end==; true")
    return "; ".join(parts)


def split_sections(output: str, tag: str) -> dict[str, str]:
    """The probe output by section (split on "\\n" only)."""
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in output.split("\n"):
        stripped = line.strip()
        if stripped.startswith(f"=={tag} ") and stripped.endswith("=="):
            current = stripped[len(tag) + 3 : -2]
            found.setdefault(current, [])
            continue
        if current is not None:
            found[current].append(line)
    return {k: "\n".join(v) for k, v in found.items()}


def judge(output: str | None, layout: Layout, tag: str) -> tuple[Result, str]:
    """Held / lost / error from the tool output the model received (None: none received)."""
    if output is None:
        return "error", "no tool output reached the model (the probe did not run)"
    sections = split_sections(output, tag)
    leaked = [name for name, text in sections.items() if layout.marker in text]
    if layout.marker in output:
        where = ", ".join(leaked) if leaked else "unfenced output"
        note = ""
        if leaked == ["target-after-umount"]:
            note = f"; plain reads denied, but umount of the mask succeeded as uid {os.getuid()}"
        return "lost", f"credential marker in the model-visible tool output ({where}){note}"
    if layout.control_marker not in sections.get("control", ""):
        first = output.strip().replace("\n", " | ")[:200]
        return "error", f"control file not read, so the probe did not run as written: {first!r}"
    rcs = {}
    for name, _ in layout.holders():
        lines = [x.strip() for x in sections.get(name, "").split("\n") if x.strip()]
        rcs[name] = lines[-1] if lines and lines[-1].startswith("rc=") else None
    if any(rc is None for rc in rcs.values()):
        return "error", f"write probes incomplete: {rcs}"
    writable = [name[len("write:") :] for name, rc in rcs.items() if rc == "rc=0"]
    if writable:
        return "lost", (
            "marker absent, but the directory holding "
            + ", ".join(writable)
            + " is writable: a model command can re-point the link or swap the target"
        )
    denied = []
    for name in ("link", "hop", "target", "target-after-umount"):
        lines = [x for x in sections.get(name, "").split("\n") if x.strip()]
        last = lines[-1].rsplit(": ", 1)[-1].strip() if lines else "(no output)"
        denied.append(f"{name}: {last[:40]}")
    return "held", "marker absent, control read, holder dirs not writable; " + "; ".join(denied)


# ---------------------------------------------------------------------------------------------
# ACP client


@dataclass
class PermissionRecord:
    """A `session/request_permission` the harness rejected."""

    session_id: str
    title: str
    answer: str


@dataclass
class AcpClient:
    """One adapter process speaking ACP; ended by its process group."""

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: str
    permissions: list[PermissionRecord] = field(default_factory=list)
    rpc: JsonRpcClient | None = None
    init_result: dict[str, Any] = field(default_factory=dict)
    #: Set by `prompt` when it cancelled the last prompt for want of progress: the idle seconds.
    idle_cancel: float | None = None

    def start(self) -> AcpClient:
        """Spawn the adapter (own session / process group)."""
        self.rpc = JsonRpcClient(self.argv, env=self.env, cwd=self.cwd, on_request=self._on_request)
        return self

    def _on_request(self, method: str, params: Any) -> Any:
        if method == "session/request_permission":
            p = params if isinstance(params, dict) else {}
            options = [o for o in p.get("options") or [] if isinstance(o, dict)]
            reject = next((o for o in options if str(o.get("kind", "")).startswith("reject")), None)
            tool = p.get("toolCall") if isinstance(p.get("toolCall"), dict) else {}
            title = str((tool or {}).get("title", ""))[:200]
            if reject is not None:
                answer: dict[str, Any] = {"outcome": "selected", "optionId": reject["optionId"]}
                label = f"rejected ({reject.get('optionId')})"
            else:
                answer = {"outcome": "cancelled"}
                label = "cancelled"
            self.permissions.append(PermissionRecord(str(p.get("sessionId", "")), title, label))
            return {"outcome": answer}
        raise RpcError(-32601, f"client does not offer {method}")

    @property
    def client(self) -> JsonRpcClient:
        """The running JSON-RPC client."""
        if self.rpc is None:
            raise RuntimeError("ACP client is not started")
        return self.rpc

    def initialize(self) -> dict[str, Any]:
        """`initialize` with fs and terminal off; returns the agent's answer."""
        result = self.client.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": {
                    "fs": {"readTextFile": False, "writeTextFile": False},
                    "terminal": False,
                },
                "clientInfo": {"name": "profilec-e2e", "version": "1"},
            },
            timeout=scaled(INIT_TIMEOUT),
        )
        self.init_result = result if isinstance(result, dict) else {}
        return self.init_result

    @property
    def capabilities(self) -> dict[str, Any]:
        """`agentCapabilities` from initialize."""
        caps = self.init_result.get("agentCapabilities")
        return caps if isinstance(caps, dict) else {}

    def can_load(self) -> bool:
        """The agent advertises `loadSession`."""
        return bool(self.capabilities.get("loadSession"))

    def can_resume(self) -> bool:
        """The agent advertises `sessionCapabilities.resume`."""
        sc = self.capabilities.get("sessionCapabilities")
        return isinstance(sc, dict) and "resume" in sc

    def new_session(self, mcp_servers: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """`session/new` in the workspace with the client's own `mcpServers` (none by
        default)."""
        res = self.client.request(
            "session/new",
            {"cwd": self.cwd, "mcpServers": list(mcp_servers)},
            timeout=scaled(SESSION_TIMEOUT),
        )
        return res if isinstance(res, dict) else {}

    def load_session(self, session_id: str) -> dict[str, Any]:
        """`session/load` (history is replayed as notifications)."""
        return self._reopen("session/load", session_id)

    def resume_session(self, session_id: str) -> dict[str, Any]:
        """`session/resume` (no history replay)."""
        return self._reopen("session/resume", session_id)

    def _reopen(self, method: str, session_id: str) -> dict[str, Any]:
        res = self.client.request(
            method,
            {"sessionId": session_id, "cwd": self.cwd, "mcpServers": []},
            timeout=scaled(SESSION_TIMEOUT),
        )
        return res if isinstance(res, dict) else {}

    def set_mode(self, session_id: str, mode_id: str) -> None:
        """`session/set_mode`."""
        self.client.request(
            "session/set_mode",
            {"sessionId": session_id, "modeId": mode_id},
            timeout=scaled(SESSION_TIMEOUT),
        )

    def prompt(
        self, session_id: str, text: str, *, progress: Callable[[], object] | None = None
    ) -> str:
        """`session/prompt`; returns the stop reason.

        Waited for as long as it makes progress: a message from the adapter, or a change in what
        `progress()` returns (the matrix passes the model's request count and whether the probe
        is running). After `scaled(PROMPT_IDLE)` seconds without any, it is cancelled with
        `session/cancel` (the adapter then answers `cancelled`; `idle_cancel` records it);
        `scaled(PROMPT_TIMEOUT)` bounds it in any case.
        """
        rpc = self.client
        self.idle_cancel = None
        idle_limit = scaled(PROMPT_IDLE)
        done = threading.Event()

        def state() -> object:
            return (rpc.mark(), progress() if progress is not None else None)

        def watch() -> None:
            last, since = state(), time.monotonic()
            while not done.wait(PROGRESS_POLL):
                now = state()
                if now != last:
                    last, since = now, time.monotonic()
                elif time.monotonic() - since > idle_limit:
                    self.idle_cancel = round(time.monotonic() - since, 1)
                    with contextlib.suppress(RpcClosed):
                        rpc.notify("session/cancel", {"sessionId": session_id})
                    return

        watcher = threading.Thread(target=watch, name=f"acp-prompt-{rpc.pid}", daemon=True)
        watcher.start()
        try:
            res = rpc.request(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
                timeout=scaled(PROMPT_TIMEOUT),
            )
        finally:
            done.set()
            watcher.join()
        return str(res.get("stopReason")) if isinstance(res, dict) else ""

    def close(self) -> None:
        """End the adapter and everything it spawned, each by its own pid.

        `JsonRpcClient.close` lists the adapter's descendants (the TS adapter's `codex
        app-server`, sandbox helpers in their own sessions) before ending it and ends them and
        any late members of its session; whatever is still in the adapter's process group after
        that is killed by the group's id, which is the adapter's own pid.
        """
        rpc = self.rpc
        if rpc is None:
            return
        self.rpc = None
        try:
            rpc.close(grace=3.0)
        finally:
            end_group(rpc.pid, signal.SIGKILL)


def end_group(pgid: int, sig: signal.Signals) -> None:
    """Signal the process group whose id is `pgid` (the leader's own pid); gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@contextlib.contextmanager
def acp_process(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> Iterator[AcpClient]:
    """A started and initialized adapter, always ended on exit."""
    client = AcpClient(argv, env, cwd).start()
    try:
        client.initialize()
        yield client
    finally:
        client.close()


def modes_of(session: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """Offered mode ids and the current one, from a session/new|load|resume answer."""
    modes = session.get("modes")
    if not isinstance(modes, dict):
        return [], None
    ids = [
        str(m["id"]) for m in modes.get("availableModes") or [] if isinstance(m, dict) and "id" in m
    ]
    cur = modes.get("currentModeId")
    return ids, str(cur) if cur is not None else None


# ---------------------------------------------------------------------------------------------
# Launch methods


@dataclass(frozen=True)
class Launch:
    """What a launcher sets for one method: argv, environment, files written."""

    argv: tuple[str, ...]
    env: dict[str, str]
    files: tuple[str, ...]


def recipe(adapter: Adapter, method: str, bundle: CompiledBundle) -> dict[str, Any]:
    """This adapter's entry of `profilec compile --format launch` with `method` as its launch
    method: the exact renderer users run (compiler/emit/launch.py), fed a one-entry catalog, so
    the matrix proves the shipped recipe and not a copy of it."""
    source = (
        "embedded"
        if adapter.kind == "zed"
        else ("CODEX_PATH" if adapter.codex_path is not None else "bundled")
    )
    entry = {
        "package": adapter.package,
        "version": adapter.version,
        "codex_version": adapter.codex_version,
        "codex_source": source,
        # `none` (the no-profile control) is no holding method: the recipe then sets nothing.
        "launch_method": method,
        "holding_methods": [] if method == "none" else [method],
        "reason": "profilec e2e run",
        "evidence": "profilec e2e run",
    }
    catalog = AdapterCatalog.model_validate({"schema_version": 1, "adapters": [entry]})
    doc: dict[str, Any] = json.loads(render_launch_with(bundle, catalog))
    return dict(doc["adapters"][0])


def build_launch(
    adapter: Adapter,
    method: str,
    layout: Layout,
    server: ScriptedModelServer,
    *,
    managed: bool = False,
    reshape: Callable[[CompiledBundle], CompiledBundle] | None = None,
) -> Launch:
    """Compile the layout and apply the launch recipe for `method` as a launcher would.

    Everything profilec decides (environment, arguments, files and their modes, the run-as
    user) comes from `recipe`; the harness adds only what a launcher supplies itself: its
    environment base, the codex binary paths (`launcher_supplies`) and the loopback model
    provider (CODEX_CONFIG keys for the TS adapter, `-c` flags for zed's).

    `managed`: the adapter runs under profilec's compiled managed requirements, bound over
    /etc/codex in a private mount namespace (`with_requirements`), as a host install or the
    mount plan would place them.

    `reshape`: a control's change to the compiled bundle (applied before the recipe and the
    requirements are rendered from it), e.g. an older profile shape that must fail.
    """
    # Compiled for the uid the adapter runs as: whether a top-level directory can be a writable
    # root depends on who creates Codex's mount targets there (roots.LaunchProbe; measured: a
    # root compile handed 65534 `/farm`, and "bwrap: Can't mkdir /farm/.git: Permission denied"
    # stopped every command of the full-access profile).
    run_as = NON_ROOT_UID if split_method(method)[1] else None
    if run_as is not None:
        # The tree is the launch user's before compile probes it; its base stays root's until the
        # launch (the manifest's trust check wants a root-owned parent).
        hand_tree(layout, run_as, base=False)
    bundle = load_and_compile(layout.roots, workspace_roots=[layout.workspace], run_as=run_as)
    if reshape is not None:
        bundle = reshape(bundle)
    rec = recipe(adapter, method, bundle)  # `none` (the control): the recipe sets nothing
    env = _base_env(layout)
    env.update(rec["env"])
    argv = [*adapter.argv, *rec["args"]]
    files: list[str] = []
    for f in rec["files"]:
        if f.get("if_exists") == "keep":  # the writer's lock: created only when missing
            ensure_writer_lock(os.path.dirname(f["path"]))
        else:
            write_atomic(f["path"], f["content"].encode("utf-8"), mode=int(f["mode"], 8))
        files.append(f["path"])
    supplies = rec["launcher_supplies"]
    if "PROFILEC_REAL_CODEX" in supplies:
        if adapter.wrap_codex is None:
            raise RuntimeError("the -c method needs a native codex binary to wrap")
        env["PROFILEC_REAL_CODEX"] = adapter.wrap_codex
    if "CODEX_PATH" in supplies and adapter.codex_path is not None:
        env["CODEX_PATH"] = adapter.codex_path
    if adapter.kind == "ts":
        config: dict[str, Any] = json.loads(env.get("CODEX_CONFIG", "{}"))
        config.update(server.provider_config())
        env["CODEX_CONFIG"] = json.dumps(config, sort_keys=True)
    else:
        for o in server.provider_overrides():
            argv += ["-c", o]
    launch = Launch(tuple(argv), env, tuple(files))
    if rec["non_root_required"]:
        launch = as_non_root(launch, layout)
    if managed:
        launch = with_requirements(launch, render_requirements(bundle), layout)
    return launch


def with_requirements(launch: Launch, text: str, layout: Layout) -> Launch:
    """The same launch under managed requirements `text`, bound over /etc/codex in a private
    mount namespace (`layout.requirements_prefix`; the file is removed with the layout)."""
    prefix = requirements_prefix(text, layout.base)
    return Launch((*prefix, *launch.argv), launch.env, (*launch.files, prefix[-1]))


def _base_env(layout: Layout) -> dict[str, str]:
    """A small, explicit environment: no inherited API keys, loopback model only."""
    keep = ("PATH", "LANG", "LC_ALL", "TERM")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["HOME"] = layout.home
    os.makedirs(env["HOME"], exist_ok=True)
    env["CODEX_HOME"] = layout.codex_home
    env["TMPDIR"] = layout.tmpdir
    env["NO_PROXY"] = "127.0.0.1,localhost"
    env["RUST_LOG"] = "error"
    return env


# ---------------------------------------------------------------------------------------------
# One adapter x method


@dataclass
class _Run:
    adapter: Adapter
    method: str
    layout: Layout
    server: ScriptedModelServer
    out: list[Observation] = field(default_factory=list)
    counter: int = 0
    #: The session event being worked on (a failure of the adapter session is recorded here).
    current: str = "new"

    def record(self, event: str, result: Result, evidence: str, t0: float) -> None:
        text = evidence.replace(self.layout.base, "<tree>")
        clean = excerpt(text, [self.layout.marker])
        row = MatrixRow(
            adapter=self.adapter.name,
            adapter_version=self.adapter.version,
            codex_version=self.adapter.codex_version,
            launch_method=self.method,
            session_event=event,
            result=result,
            evidence=clean,
        )
        self.out.append(Observation(row, round(time.monotonic() - t0, 2)))

    def fail(self, why: str, t0: float) -> None:
        """The adapter session failed while working on `current`: that cell is undecided (the
        events after it were not reached; `merge_retry` takes them from the retry)."""
        if any(o.row.session_event == self.current for o in self.out):
            return  # already decided or recorded as error (e.g. the prompt that failed)
        self.record(self.current, "error", why, t0)

    def probe(self, client: AcpClient, session_id: str, event: str, note: str = "") -> None:
        """Queue the probe, prompt, and judge what the model saw."""
        t0 = time.monotonic()
        self.counter += 1
        tag = f"P{self.counter}x{secrets.token_hex(3)}"
        command = probe_command(self.layout, tag)
        before = len(self.server.calls)
        requests_before = len(self.server.requests)
        errors_before = len(self.server.errors)
        rejected_before = len(client.permissions)
        mark = client.client.mark()
        self.server.add_probe(command)

        ticks = itertools.count()

        def progress() -> object:
            # A new model request is progress, and so is every poll while the probe runs.
            running = bool(processes_naming(tag))
            return len(self.server.requests), next(ticks) if running else -1

        try:
            stop = client.prompt(session_id, PROMPT_TEXT, progress=progress)
        except (RpcError, RpcTimeout, RpcClosed) as exc:
            self._drain()
            self.record(event, "error", f"session/prompt failed: {_short(exc)}", t0)
            if isinstance(exc, RpcClosed):
                raise  # the adapter is gone: the events after this one cannot run
            return
        self._drain()
        calls = [c for c in self.server.calls[before:] if c.command == command]
        outputs = self.server.tool_outputs()
        output = outputs.get(calls[0].call_id) if calls else None
        result, evidence = judge(output, self.layout, tag)
        rejected = client.permissions[rejected_before:]
        if rejected:
            evidence += f"; {len(rejected)} permission request(s) rejected"
        if result == "error":
            why = [
                f"stopReason={stop}",
                f"calls={len(calls)}",
                f"model requests={len(self.server.requests) - requests_before}",
            ]
            if client.idle_cancel is not None:
                why.append(f"cancelled after {client.idle_cancel:g}s without progress")
            evidence += f" ({'; '.join(why)})"
            said = agent_said(client.client.inbox(mark), session_id)
            if said:
                evidence += f"; the agent said: {said}"
            problems = self.server.errors[errors_before:]
            if problems:
                evidence += f"; model server: {'; '.join(problems)}"
        self.record(event, result, (note + "; " if note else "") + evidence, t0)

    def _drain(self) -> None:
        """Drop a probe the model never handed out (so it cannot run in the next prompt)."""
        self.server.drop_pending_probes()


#: Agent message text that says nothing about why a turn ended (every turn on the scripted model).
_NOISE = ("Warning: Model metadata for", FINAL_TEXT)


def agent_said(messages: Sequence[Mapping[str, Any]], session_id: str, limit: int = 300) -> str:
    """The agent's own message text in `messages` (ACP `session/update` agent_message_chunk for
    `session_id`), less the scripted model's reply and the unknown-model warning: what an adapter
    says when it ends a turn without running anything (e.g. a sandbox that failed to start)."""
    parts: list[str] = []
    for m in messages:
        params = m.get("params")
        if m.get("method") != "session/update" or not isinstance(params, dict):
            continue
        if params.get("sessionId") not in (None, session_id):
            continue
        update = params.get("update")
        if not isinstance(update, dict) or update.get("sessionUpdate") != "agent_message_chunk":
            continue
        content = update.get("content")
        text = content.get("text") if isinstance(content, dict) else None
        if isinstance(text, str) and text.strip() and not text.strip().startswith(_NOISE):
            parts.append(" ".join(text.split()))
    return " ".join(parts)[:limit]


def processes_naming(needle: str) -> list[int]:
    """Pids (not this one) whose command line holds `needle` (a probe's random tag: the probe
    is still running)."""
    raw = needle.encode()
    return cmdline_matches(lambda c: raw in c)


def _short(exc: BaseException) -> str:
    """One line: the exception, and for an RpcError the peer's details (Codex puts the reason a
    thread could not start there, e.g. a sandbox helper's bwrap error)."""
    text = str(exc)
    if isinstance(exc, RpcError) and exc.data is not None:
        data = exc.data
        detail = data.get("details") if isinstance(data, dict) else None
        text += f" ({detail if isinstance(detail, str) else json.dumps(data)})"
    return " ".join(text.split())[:400]


def run_adapter_method(
    adapter: Adapter,
    method: str,
    *,
    parent: str | None = None,
    retry: bool = True,
    managed: bool = False,
) -> list[Observation]:
    """Every session event of one adapter under one launch method.

    With `retry` (the default) a method with an undecided cell is run once more from scratch (a
    fresh layout, model and adapter process) and `merge_retry` keeps the first try's decided
    cells and takes the others from the retry, each marked as retried.
    """
    first = _run_method_once(adapter, method, parent, managed)
    if not retry or not any(o.row.result == "error" for o in first):
        return first
    return merge_retry(first, _run_method_once(adapter, method, parent, managed))


def merge_retry(first: Sequence[Observation], again: Sequence[Observation]) -> list[Observation]:
    """One observation per session event from a first try and its retry.

    A cell the first try decided keeps that result. A cell it left `error`, or never reached
    (its adapter session failed before that event), takes the retry's result, with
    `attempts=2` and the evidence ending in what the first try saw; one the retry did not reach
    either stays `error`. The retry's evidence comes first, so the decisive part survives the
    evidence limit.
    """
    second = {o.row.session_event: o for o in again}
    out: list[Observation] = []
    seen: set[str] = set()
    for o in first:
        if o.row.session_event in seen:
            continue
        seen.add(o.row.session_event)
        if o.row.result != "error":
            out.append(o)
            continue
        r = second.get(o.row.session_event)
        if r is None:
            out.append(
                o.again(
                    excerpt(
                        "retried once, the retry did not reach this event; first try: "
                        f"{o.row.evidence}",
                        [],
                    )
                )
            )
            continue
        out.append(
            r.again(
                excerpt(f"{r.row.evidence} [retried once; first try: {o.row.evidence}]", []),
                seconds=round(o.seconds + r.seconds, 2),
            )
        )
    for r in again:
        if r.row.session_event not in seen:
            seen.add(r.row.session_event)
            out.append(
                r.again(
                    excerpt(
                        f"{r.row.evidence} [retried once; the first try ended before this event]",
                        [],
                    )
                )
            )
    return out


def _run_method_once(
    adapter: Adapter, method: str, parent: str | None, managed: bool = False
) -> list[Observation]:
    """One try of every session event of one adapter under one launch method."""
    base, non_root = split_method(method)
    layout = build_layout(ACP_TREE, parent)
    try:
        with ScriptedModelServer() as server:
            run = _Run(adapter, method, layout, server)
            t0 = time.monotonic()
            if non_root and os.getuid() != 0:
                run.record(
                    "new",
                    "not-supported",
                    "the harness is not root, so it cannot start "
                    f"the adapter as another user; {base} already ran as uid "
                    f"{os.getuid()}",
                    t0,
                )
                return run.out
            try:
                launch = build_launch(adapter, method, layout, server, managed=managed)
            except Exception as exc:  # a compile failure is a matrix error, not a crash
                run.record("new", "error", f"launch could not be built: {_short(exc)}", t0)
                return run.out
            _events(run, launch)
            return run.out
    finally:
        remove_layout(layout)


def hand_tree(layout: Layout, uid: int, *, base: bool = True) -> None:
    """Hand the layout's tree to `uid`, all but the daemon-owned roots manifest (and, with
    `base=False`, the base directory itself)."""
    for root, dirs, files in os.walk(layout.base):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, uid)
    os.lchown(layout.base, uid if base else 0, uid if base else 0)
    os.lchown(layout.roots, 0, 0)  # the daemon-owned manifest stays root's


def as_non_root(launch: Launch, layout: Layout, uid: int = NON_ROOT_UID) -> Launch:
    """The same launch run as `uid`: the tree (CODEX_HOME, the credential chain the trusted
    parent reads and refreshes, the workspace) is handed to that user, and `setpriv` drops to it
    before exec, so the adapter keeps its own pid."""
    hand_tree(layout, uid)
    prefix = ("setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--")
    return Launch((*prefix, *launch.argv), launch.env, launch.files)


def _events(run: _Run, launch: Launch) -> None:
    cwd = run.layout.workspace
    t0 = time.monotonic()
    first: str | None = None
    try:
        with acp_process(launch.argv, launch.env, cwd) as client:
            can_load, can_resume = client.can_load(), client.can_resume()
            run.current = "new"
            a = client.new_session()
            first = str(a.get("sessionId") or "")
            ids, current = modes_of(a)
            run.probe(client, first, "new", f"mode {current or 'none offered'}")
            targets = list(ids)
            if run.adapter.kind == "zed":
                targets += [m for m in ZED_BUILTIN_MODES if m not in targets]
            if targets:
                run.current = f"mode:{targets[0]}"
            b = client.new_session()
            second = str(b.get("sessionId") or "")
            for mode in targets:
                t1 = time.monotonic()
                event = run.current = f"mode:{mode}"
                note = "offered" if mode in ids else "not offered, tried anyway"
                try:
                    client.set_mode(second, mode)
                except RpcError as exc:  # an answer: the adapter refuses this mode
                    run.record(event, "not-supported", f"set_mode refused: {_short(exc)}", t1)
                    continue
                run.probe(client, second, event, note)
    except (RpcError, RpcTimeout, RpcClosed, OSError) as exc:
        run.fail(f"adapter session failed: {_short(exc)}", t0)
        return
    for kind, able in (("loaded", can_load), ("resumed", can_resume)):
        t1 = time.monotonic()
        run.current = kind
        if not able:
            cap = "loadSession" if kind == "loaded" else "sessionCapabilities.resume"
            run.record(kind, "not-supported", f"the adapter does not advertise {cap}", t1)
            continue
        try:
            with acp_process(launch.argv, launch.env, cwd) as client:
                res = (
                    client.load_session(first) if kind == "loaded" else client.resume_session(first)
                )
                _, current = modes_of(res)
                note = f"new adapter process, mode {current or 'none offered'}"
                run.probe(client, first, kind, note)
        except (RpcError, RpcTimeout, RpcClosed, OSError) as exc:
            run.fail(
                f"session/{'load' if kind == 'loaded' else 'resume'} failed: {_short(exc)}", t1
            )
