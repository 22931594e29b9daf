"""Drive the real `codex app-server` through new, resumed and legacy-sandboxPolicy turns.

Public API:

    report = run_appserver(codex_bin)                 # every launch method, plus the controls
    report.rows()                                     # list[MatrixRow] for the matrix
    report.controls                                   # negative controls (must be `lost`)
    run_appserver_rows() -> list[MatrixRow]           # for compiler/e2e/run.py (pinned codex)
    build_layout(APPSERVER_TREE, parent) -> Layout    # (profilec.e2e.layout) marker credential
    compile_layout(layout) -> CompiledBundle          # compiled with profilec.api

Per launch method a fresh synthetic layout is built (as examples/make-layout.sh does: a
credential file holding a random marker, a symlinked hop directory, the private CODEX_HOME
whose auth.json links to it, a workspace with a control file) and compiled. The profile reaches
Codex the way a launcher passes it:

    app-server -c   `codex app-server -c ...` with `profilec compile --format overrides` lines
    codex-home      CODEX_HOME/config.toml written by `--format codex-home`
    thread config   only the thread/start (and thread/resume) `config` map

Session events, in order, on one thread: `new` (thread/start, a probe turn), `resumed` (the
app-server process is ended and a new one started, thread/resume, a probe turn), then
`legacy-sandboxPolicy:<kind>` (turn/start carrying a legacy `sandboxPolicy` readOnly,
workspaceWrite, dangerFullAccess, as agentclientprotocol/codex-acp's built-in modes send), then
`turn-permissions:after-legacy` (turn/start selecting the profile again with `permissions`).
Then `legacy-sandbox-thread-start:<mode>`: a fresh thread per legacy `sandbox` mode on
thread/start (read-only, workspace-write, danger-full-access), probed once; then
`legacy-sandbox-thread-fork:read-only` and `legacy-sandbox-thread-resume:read-only` (a fresh
thread forked, then truly resumed, each request with `sandbox`). For `thread config`
also `resumed:no-config`, on another thread: resumed without the config map. Each probe turn
is scripted by the loopback model server: one shell call that reads the CODEX_HOME/auth.json
link, the hop, the target and the control file, and tries to write into each directory holding
them.

Verdict (what the model saw, i.e. request bodies at the model server): `lost` if the marker
reached the model, `error` if the control file's content is absent (the probe did not run),
otherwise `held`. approvalPolicy is "never" and every approval request is declined (an approved
escalation would run outside the sandbox); requests are recorded. The controls run the same
probe under the built-in `:workspace` (no deny) and must come out `lost`, proving the harness
can fail. Every process is ended by its own pid: the app-server, then each descendant it had
(Codex leaves sandboxed `--codex-run-as-fs-helper` processes running; see JsonRpcClient.close).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..codex.vocabulary import (
    APPROVAL_NEVER,
    BUILTIN_WORKSPACE,
    SANDBOX_MODES,
    SANDBOX_POLICY_DANGER_FULL_ACCESS,
    SANDBOX_POLICY_READ_ONLY,
    SANDBOX_POLICY_WORKSPACE_WRITE,
    SANDBOX_READ_ONLY,
)
from ..compat_matrix import excerpt
from ..emit.codex_home import write_codex_home
from ..emit.overrides import override_lines
from ..emit.requirements import render_requirements
from ..errors import EnvironmentMissingError
from ..library import load_and_compile
from ..models.compat import CompatibilityMatrix, MatrixRow, Result
from ..models.compiled import CompiledBundle
from ..rule_ids import LEGACY_SANDBOX_REQUEST, PROFILE_ONLY_IN_SESSION_CONFIG
from ..scripted_model import ScriptedModelServer
from ..settings import codex_binary, codex_version
from .jsonrpc import JsonRpcClient, RpcClosed, RpcError, RpcTimeout
from .layout import APPSERVER_TREE, SCRATCH_PARENT, Layout, build_layout, requirements_prefix

ADAPTER = "codex app-server"
LAUNCH_METHODS: tuple[str, ...] = ("app-server -c", "codex-home", "thread config")
CONTROL_BUILTIN = "control: built-in :workspace"
CONTROL_NO_DENY = "control: compiled profile, deny removed"
#: Legacy `sandboxPolicy` values a launcher sends on turn/start (agentclientprotocol/codex-acp
#: modes read-only, agent, agent-full-access). dangerFullAccess last: it leaks, and a leak stays
#: in the thread history.
LEGACY_SANDBOX_POLICIES: tuple[tuple[str, dict[str, Any]], ...] = (
    (SANDBOX_POLICY_READ_ONLY, {"type": SANDBOX_POLICY_READ_ONLY, "networkAccess": False}),
    (
        SANDBOX_POLICY_WORKSPACE_WRITE,
        {
            "type": SANDBOX_POLICY_WORKSPACE_WRITE,
            "writableRoots": [],
            "networkAccess": False,
            "excludeTmpdirEnvVar": False,
            "excludeSlashTmp": False,
        },
    ),
    (SANDBOX_POLICY_DANGER_FULL_ACCESS, {"type": SANDBOX_POLICY_DANGER_FULL_ACCESS}),
)
LEGACY_EVENTS: tuple[str, ...] = tuple(
    f"legacy-sandboxPolicy:{k}" for k, _ in LEGACY_SANDBOX_POLICIES
)
#: Legacy `sandbox` modes a launcher may put on thread/start (each gets a fresh thread).
THREAD_SANDBOX_MODES: tuple[str, ...] = SANDBOX_MODES
THREAD_SANDBOX_EVENTS: tuple[str, ...] = tuple(
    f"legacy-sandbox-thread-start:{m}" for m in THREAD_SANDBOX_MODES
)
#: The same legacy `sandbox` on thread/fork and on a true thread/resume (read-only).
FORK_SANDBOX_EVENT = f"legacy-sandbox-thread-fork:{SANDBOX_READ_ONLY}"
RESUME_SANDBOX_EVENT = f"legacy-sandbox-thread-resume:{SANDBOX_READ_ONLY}"
#: After the legacy turns: a turn/start with `permissions: <profile id>` (experimentalApi).
RESTORE_EVENT = "turn-permissions:after-legacy"
#: The check rule that flags a launcher which sends a legacy sandboxPolicy (see docs/check.md).
LEGACY_LINT = LEGACY_SANDBOX_REQUEST
#: The check rule for profiles that live only in the thread config (CODEX_CONFIG).
SESSION_ONLY_LINT = PROFILE_ONLY_IN_SESSION_CONFIG


def probe_command(layout: Layout) -> str:
    """One sh command printing `== name`, the output (or the error) and `rc=N` for each.

    Reads: the link, the hop, the target, the control file. Writes: creating an empty file
    in each holder directory of the synthetic tree (no `rm`: Codex rejects that under
    approvalPolicy "never"); rc=0 there means a model command could re-point the link or
    swap the target.
    """
    parts = [f'echo "== {n}"; cat {shlex.quote(p)} 2>&1; echo "rc=$?"' for n, p in layout.probes()]
    for n, d in layout.holders():
        f = shlex.quote(os.path.join(d, ".profilec-e2e-write-probe"))
        parts.append(f'echo "== {n}"; ( : > {f} ) 2>&1; echo "rc=$?"')
    return "; ".join(parts)


def compile_layout(layout: Layout) -> CompiledBundle:
    """Compile the shipped policy for the layout (profilec.api, as the CLI does)."""
    return load_and_compile(
        layout.roots, workspace_roots=[layout.workspace], codex_home=layout.codex_home
    )


def thread_config(bundle: CompiledBundle) -> dict[str, Any]:
    """The thread `config` map carrying every compiled profile and the selection."""
    return {
        "default_permissions": bundle.default_profile_id,
        "permissions": {p.profile_id: p.codex_table() for p in bundle.profiles},
    }


# ---------------------------------------------------------------------------------------------
# Outcomes


@dataclass(frozen=True)
class EventOutcome:
    """What one session event showed (all text marker-free)."""

    launch_method: str
    session_event: str
    result: Result
    evidence: str
    active_profile: str | None = None
    approvals: tuple[str, ...] = ()
    notifications: tuple[str, ...] = ()
    tool_output: str = ""
    #: The requests the driver sent for this event (JSON Lines, as `check --launch-requests`
    #: reads them): thread/start or thread/resume when this event made one, and turn/start.
    sent: tuple[str, ...] = ()

    def row(self) -> MatrixRow:
        """The matrix row for this outcome."""
        lint: str | None = None
        if self.session_event.startswith(("legacy-sandboxPolicy", "legacy-sandbox-thread-")):
            lint = LEGACY_LINT
        elif self.session_event == "resumed:no-config" and self.result == "lost":
            lint = SESSION_ONLY_LINT
        return MatrixRow(
            adapter=ADAPTER,
            adapter_version=codex_version(),
            codex_version=codex_version(),
            launch_method=self.launch_method,
            session_event=self.session_event,
            result=self.result,
            evidence=self.evidence,
            lint=lint,
        )


@dataclass(frozen=True)
class AppServerReport:
    """Every outcome of one run, plus the negative controls."""

    outcomes: tuple[EventOutcome, ...]
    controls: tuple[EventOutcome, ...]
    seconds: float

    def rows(self) -> list[MatrixRow]:
        """Matrix rows of the real launch methods (controls are not launch methods)."""
        return [o.row() for o in self.outcomes]

    def matrix(self) -> CompatibilityMatrix:
        """The app-server part of the compatibility matrix."""
        return CompatibilityMatrix(rows=self.rows())

    @property
    def controls_failed(self) -> bool:
        """True when every control leaked, as it must (the harness can fail)."""
        return bool(self.controls) and all(c.result == "lost" for c in self.controls)


def _sections(output: str) -> dict[str, tuple[str, str]]:
    """Probe output -> {name: (text, rc)}; split on "\\n" only."""
    out: dict[str, tuple[str, str]] = {}
    name: str | None = None
    body: list[str] = []
    for line in output.split("\n"):
        if line.startswith("== "):
            name, body = line[3:].strip(), []
        elif name is not None and line.startswith("rc="):
            out[name] = ("\n".join(body), line[3:].strip())
            name = None
        elif name is not None:
            body.append(line)
    return out


def judge(layout: Layout, output: str | None, visible: str, prior_leak: bool) -> tuple[Result, str]:
    """The verdict and marker-free evidence for one probe turn.

    `output` is the function_call_output Codex sent for the probe call (None: no call ran);
    `visible` is every request body of the event; `prior_leak` says an earlier event of the
    same thread already leaked (then the history repeats the marker, so only the output counts).
    """
    secrets_ = [layout.marker]
    parts = _sections(output or "")
    summary = _group([(n, _status(layout, n, text, rc)) for n, (text, rc) in parts.items()])
    if output is not None and layout.marker in output:
        return "lost", excerpt(summary or output, secrets_)
    if not prior_leak and layout.marker in visible:
        return "lost", "marker reached the model outside the probe output (request body)"
    if output is None:
        return "error", "the scripted probe call got no output back (probe did not run)"
    if layout.control_marker not in output:
        return "error", excerpt("control file not read, probe did not run: " + output, secrets_)
    holders = [n for n, _ in layout.holders()]
    if any(n not in parts for n in holders):
        return "error", excerpt("probe output incomplete: " + summary, secrets_)
    if any(parts[n][1] == "0" for n in holders):
        return "lost", excerpt("holder directory writable: " + summary, secrets_)
    return "held", excerpt(summary, secrets_)


def _status(layout: Layout, name: str, text: str, rc: str) -> str:
    if layout.marker in text:
        return f"rc={rc} (printed the marker)"
    if name == "control" and layout.control_marker in text:
        return f"rc={rc} (read)"
    if name.startswith("write:") and rc == "0":
        return f"rc={rc} (writable)"
    if rc != "0":
        return f"rc={rc} ({text.split(':')[-1].strip()})"
    return f"rc={rc}"


def _group(items: list[tuple[str, str]]) -> str:
    """`a, b rc=1 (x); c rc=0 (read)`: neighbours with the same status share one entry."""
    out: list[tuple[list[str], str]] = []
    for name, status in items:
        if out and out[-1][1] == status:
            out[-1][0].append(name)
        else:
            out.append(([name], status))
    return "; ".join(f"{', '.join(names)} {status}" for names, status in out)


_ENTRY = re.compile(r'<entry access="([a-z]+)"[^>]*><path>([^<]*)</path></entry>')


def entries_in_effect(bundle: CompiledBundle | None, bodies: Sequence[Any]) -> str:
    """How many of the compiled profile's own entries the model's last environment_context shows.

    Codex tells the model the permission profile in effect (`<environment_context>`); counting
    which of profilec's entries (denies, read-only holder dirs) are still in it shows whether a
    settings change kept or dropped them. "" when there is no bundle or no context.
    """
    if bundle is None:
        return ""
    context = ""
    for body in bodies:
        for item in (body.get("input") or []) if isinstance(body, dict) else []:
            for part in item.get("content") or [] if isinstance(item, dict) else []:
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str) and "<environment_context>" in text:
                    context = text
    if not context:
        return ""
    shown = set(_ENTRY.findall(context))
    ours = bundle.profile_for(bundle.default_mode).entries
    parts = []
    for access in ("deny", "read", "write"):
        want = [(e.access, e.path) for e in ours if e.access == access]
        if want:
            kept = sum(1 for w in want if w in shown)
            parts.append(f"{access} {kept}/{len(want)}")
    return "compiled entries in effect: " + ", ".join(parts) if parts else ""


# ---------------------------------------------------------------------------------------------
# One app-server process


class AppServer:
    """One `codex app-server` process speaking JSON-RPC on stdio, approvals always declined."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: str) -> None:
        self.approvals: list[str] = []
        self.client = JsonRpcClient(argv, env=env, cwd=cwd, on_request=self._on_request)

    def _on_request(self, method: str, params: Any) -> Any:
        """Decline every server request; never approve (an escalation runs unsandboxed)."""
        self.approvals.append(method)
        if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
            return {"decision": "decline"}
        if method in ("execCommandApproval", "applyPatchApproval"):
            return {"decision": "denied"}
        raise RpcError(-32601, f"profilec e2e declines {method}")

    def initialize(self, timeout: float) -> None:
        """initialize (experimentalApi on, to see activePermissionProfile) + initialized."""
        self.client.request(
            "initialize",
            {
                "clientInfo": {"name": "profilec-e2e", "title": "profilec e2e", "version": "1"},
                "capabilities": {"experimentalApi": True},
            },
            timeout=timeout,
        )
        self.client.notify("initialized", {})

    def turn(
        self, thread_id: str, text: str, extra: dict[str, Any], timeout: float
    ) -> list[dict[str, Any]]:
        """Run one turn; return the notifications it produced (through turn/completed)."""
        mark = self.client.mark()
        params = {
            "threadId": thread_id,
            "input": [{"type": "text", "text": text, "text_elements": []}],
            **extra,
        }
        self.client.request("turn/start", params, timeout=timeout)
        self.client.wait_for(
            lambda m: (
                m.get("method") == "turn/completed"
                and (m.get("params") or {}).get("threadId") == thread_id
            ),
            timeout=timeout,
            after=mark,
        )
        return self.client.inbox(mark)

    def close(self) -> None:
        """End the app-server by its pid, then each descendant it had (sandbox helpers) by pid."""
        self.client.close(grace=3.0)


def _profile_id(result: Any) -> str | None:
    if not isinstance(result, dict):
        return None
    active = result.get("activePermissionProfile")
    if isinstance(active, dict) and isinstance(active.get("id"), str):
        return str(active["id"])
    return None


def _settings_updates(notes: list[dict[str, Any]]) -> list[str]:
    out = []
    for n in notes:
        if n.get("method") == "thread/settings/updated":
            params = n.get("params") or {}
            settings = params.get("threadSettings")
            settings = settings if isinstance(settings, dict) else params
            active = _profile_id(settings)
            sandbox = (settings or {}).get("sandboxPolicy") or (settings or {}).get("sandbox")
            kind = sandbox.get("type") if isinstance(sandbox, dict) else None
            out.append(f"settings/updated: activePermissionProfile={active} sandbox={kind}")
    return out


@dataclass
class _Session:
    """One launch method's layout, model server and running process."""

    method: str
    layout: Layout
    bundle: CompiledBundle | None
    server: ScriptedModelServer
    codex: str
    timeout: float
    default_permissions: str | None = None
    proc: AppServer | None = None
    leaked: bool = False
    sent_mark: int = 0
    #: The managed requirements the app-server runs under (None: none).
    requirements: str | None = None

    def argv(self) -> list[str]:
        args = [self.codex, "app-server"]
        if self.requirements is not None:
            args = [*requirements_prefix(self.requirements, self.layout.base), *args]
        for line in self.server.provider_overrides():
            args += ["-c", line]
        if self.method == "app-server -c" and self.bundle is not None:
            for line in override_lines(self.bundle):
                args += ["-c", line]
        if self.default_permissions is not None:
            args += ["-c", f"default_permissions={json.dumps(self.default_permissions)}"]
        return args

    def env(self) -> dict[str, str]:
        lay = self.layout
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": lay.home,
            "CODEX_HOME": lay.codex_home,
            "TMPDIR": lay.tmpdir,
            "LANG": "C.UTF-8",
            "RUST_LOG": "warn",
        }

    def thread_params(self, with_config: bool = True) -> dict[str, Any]:
        params: dict[str, Any] = {"cwd": self.layout.workspace, "approvalPolicy": APPROVAL_NEVER}
        if with_config and self.method == "thread config" and self.bundle is not None:
            params["config"] = thread_config(self.bundle)
        return params

    def start(self) -> AppServer:
        self.stop()
        self.proc = AppServer(self.argv(), self.env(), self.layout.workspace)
        self.sent_mark = 0
        self.proc.initialize(self.timeout)
        return self.proc

    def sent_since_mark(self) -> tuple[str, ...]:
        """Thread and turn requests sent since the last event, as JSON lines; moves the mark."""
        assert self.proc is not None
        entries = self.proc.client.transcript
        out = tuple(
            json.dumps(e.message, sort_keys=True, separators=(",", ":"))
            for e in entries[self.sent_mark :]
            if e.direction == "out"
            and str(e.message.get("method", "")).startswith(("thread/", "turn/"))
        )
        self.sent_mark = len(entries)
        return out

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.close()
            self.proc = None

    def resume(self, thread_id: str, *, with_config: bool) -> str | None:
        """End the process, start a new one, thread/resume: a true resume from disk."""
        proc = self.start()
        resumed = proc.client.request(
            "thread/resume",
            {"threadId": thread_id, **self.thread_params(with_config)},
            timeout=self.timeout,
        )
        return _profile_id(resumed)

    def warm(self, thread_id: str) -> None:
        """One turn with no probe, so the thread has a rollout on disk to resume from."""
        assert self.proc is not None
        self.proc.turn(thread_id, "profilec e2e: hello", {}, self.timeout)

    def probe(
        self, thread_id: str, event: str, active: str | None, extra: dict[str, Any] | None = None
    ) -> EventOutcome:
        """Queue the probe, run one turn, judge what the model saw."""
        assert self.proc is not None
        n_req = len(self.server.requests)
        n_calls = len(self.server.calls)
        n_appr = len(self.proc.approvals)
        self.server.add_probe(probe_command(self.layout))
        notes: list[dict[str, Any]] = []
        error = ""
        try:
            notes = self.proc.turn(
                thread_id, f"profilec e2e probe ({event})", extra or {}, self.timeout
            )
        except (RpcError, RpcTimeout, RpcClosed) as exc:
            error = f"{type(exc).__name__}: {exc}"
        calls = self.server.calls[n_calls:]
        outputs = self.server.tool_outputs()
        output = outputs.get(calls[0].call_id) if calls else None
        visible = "\n".join(json.dumps(r.body) for r in self.server.requests[n_req:])
        result, evidence = judge(self.layout, output, visible, self.leaked)
        if error and result != "lost":
            result, evidence = (
                "error",
                excerpt(error + "; " + self.proc.client.stderr_tail(300), [self.layout.marker]),
            )
        self.leaked = self.leaked or result == "lost"
        updates = _settings_updates(notes)
        for u in updates:
            active = u.split("activePermissionProfile=")[1].split(" ")[0]
        effect = entries_in_effect(self.bundle, [r.body for r in self.server.requests[n_req:]])
        evidence = excerpt(
            f"{evidence}; active profile {active}"
            + (f"; {updates[-1]}" if updates else "")
            + (f"; {effect}" if effect else ""),
            [self.layout.marker],
        )
        return EventOutcome(
            launch_method=self.method,
            session_event=event,
            result=result,
            evidence=evidence,
            active_profile=active,
            approvals=tuple(self.proc.approvals[n_appr:]),
            notifications=tuple(sorted({str(n.get("method")) for n in notes})),
            tool_output=excerpt(output or "", [self.layout.marker], limit=600),
            sent=self.sent_since_mark(),
        )


def _error_outcome(method: str, event: str, exc: Exception, marker: str) -> EventOutcome:
    return EventOutcome(method, event, "error", excerpt(f"{type(exc).__name__}: {exc}", [marker]))


def drop_denies(bundle: CompiledBundle) -> CompiledBundle:
    """The bundle with every deny entry removed: the broken profile a control must catch."""
    profiles = tuple(
        p.model_copy(update={"entries": tuple(e for e in p.entries if e.access != "deny")})
        for p in bundle.profiles
    )
    return bundle.model_copy(update={"profiles": profiles})


def _default_events(method: str) -> list[str]:
    """Every session event `run_method` probes for `method` when the caller names none."""
    return [
        "new",
        "resumed",
        *LEGACY_EVENTS,
        RESTORE_EVENT,
        *THREAD_SANDBOX_EVENTS,
        FORK_SANDBOX_EVENT,
        RESUME_SANDBOX_EVENT,
        *(["resumed:no-config"] if method == "thread config" else []),
    ]


def _probe_first_thread(
    s: _Session,
    wanted: list[str],
    out: list[EventOutcome],
    bundle: CompiledBundle | None,
    timeout: float,
) -> None:
    """The first thread: new, resumed, the legacy `sandboxPolicy` turns, the restore turn."""
    proc = s.start()
    started = proc.client.request("thread/start", s.thread_params(), timeout=timeout)
    thread_id = str(started["thread"]["id"])
    active = _profile_id(started)
    if "new" in wanted:
        out.append(s.probe(thread_id, "new", active))
    if "resumed" in wanted:
        active = s.resume(thread_id, with_config=True)
        out.append(s.probe(thread_id, "resumed", active))
    for (_, policy), event in zip(LEGACY_SANDBOX_POLICIES, LEGACY_EVENTS, strict=True):
        if event in wanted:
            out.append(s.probe(thread_id, event, active, {"sandboxPolicy": policy}))
    if RESTORE_EVENT in wanted and bundle is not None:
        # PC023's fix: select the profile per turn with `permissions` (experimental).
        out.append(
            s.probe(
                thread_id,
                RESTORE_EVENT,
                active,
                {"permissions": bundle.default_profile_id},
            )
        )


def _probe_thread_sandboxes(
    s: _Session, wanted: list[str], out: list[EventOutcome], timeout: float
) -> None:
    """One fresh thread per legacy `sandbox` mode on `thread/start`."""
    for mode, event in zip(THREAD_SANDBOX_MODES, THREAD_SANDBOX_EVENTS, strict=True):
        if event in wanted:
            # A fresh thread each, so an earlier leak cannot colour this one.
            s.leaked = False
            started = (
                s.proc.client.request(
                    "thread/start",
                    {**s.thread_params(), "sandbox": mode},
                    timeout=timeout,
                )
                if s.proc
                else {}
            )
            out.append(s.probe(str(started["thread"]["id"]), event, _profile_id(started)))


def _probe_fork_resume_sandbox(
    s: _Session, wanted: list[str], out: list[EventOutcome], timeout: float
) -> None:
    """A fresh thread with a rollout on disk: fork it, then resume it, each with a `sandbox`."""
    if FORK_SANDBOX_EVENT in wanted or RESUME_SANDBOX_EVENT in wanted:
        # A fresh thread with a rollout on disk: fork it, then resume it, each
        # request carrying a legacy `sandbox`.
        s.leaked = False
        proc = s.start()
        started = proc.client.request("thread/start", s.thread_params(), timeout=timeout)
        fresh = str(started["thread"]["id"])
        s.warm(fresh)
        if FORK_SANDBOX_EVENT in wanted:
            forked = proc.client.request(
                "thread/fork",
                {"threadId": fresh, **s.thread_params(), "sandbox": SANDBOX_READ_ONLY},
                timeout=timeout,
            )
            out.append(
                s.probe(str(forked["thread"]["id"]), FORK_SANDBOX_EVENT, _profile_id(forked))
            )
            s.leaked = False
        if RESUME_SANDBOX_EVENT in wanted:
            proc = s.start()
            resumed = proc.client.request(
                "thread/resume",
                {"threadId": fresh, **s.thread_params(), "sandbox": SANDBOX_READ_ONLY},
                timeout=timeout,
            )
            out.append(s.probe(fresh, RESUME_SANDBOX_EVENT, _profile_id(resumed)))


def _probe_resumed_no_config(
    s: _Session, wanted: list[str], out: list[EventOutcome], timeout: float
) -> None:
    """A second thread resumed without its session config."""
    if "resumed:no-config" in wanted:
        # A second thread, so the legacy turns above cannot colour this one.
        s.leaked = False
        proc = s.start()
        started = proc.client.request("thread/start", s.thread_params(), timeout=timeout)
        second = str(started["thread"]["id"])
        s.warm(second)
        active = s.resume(second, with_config=False)
        out.append(s.probe(second, "resumed:no-config", active))


def _fill_errors(
    s: _Session,
    method: str,
    wanted: list[str],
    out: list[EventOutcome],
    exc: Exception,
    marker: str,
) -> None:
    """An error outcome for every wanted event the session did not reach."""
    done = {o.session_event for o in out}
    tail = s.proc.client.stderr_tail(300) if s.proc is not None else ""
    for event in wanted:
        if event not in done:
            out.append(_error_outcome(method, event, RuntimeError(f"{exc}; {tail}"), marker))


def run_method(
    codex: str,
    method: str,
    *,
    timeout: float = 90.0,
    parent: str = SCRATCH_PARENT,
    default_permissions: str | None = None,
    events: Sequence[str] | None = None,
    mutate: Callable[[CompiledBundle], CompiledBundle] | None = None,
    keep: bool = False,
    managed: bool = False,
) -> list[EventOutcome]:
    """All session events for one launch method on a fresh layout (see the module docstring).

    `default_permissions` (with method "app-server -c" and no bundle profile) is how a control
    selects a built-in profile instead of the compiled one; `mutate` breaks the compiled bundle
    on purpose (a control); `managed` runs the app-server under profilec's managed requirements
    for the layout (bound over /etc/codex in a private mount namespace; needs root).
    """
    layout = build_layout(APPSERVER_TREE, parent)
    out: list[EventOutcome] = []
    wanted = list(events) if events is not None else _default_events(method)
    try:
        bundle = None if default_permissions is not None else compile_layout(layout)
        if bundle is not None and mutate is not None:
            bundle = mutate(bundle)
        if method == "codex-home" and bundle is not None:
            write_codex_home(bundle, layout.codex_home)
        with ScriptedModelServer() as server:
            s = _Session(method, layout, bundle, server, codex, timeout, default_permissions)
            if managed and bundle is not None:
                s.requirements = render_requirements(bundle)
            try:
                _probe_first_thread(s, wanted, out, bundle, timeout)
                _probe_thread_sandboxes(s, wanted, out, timeout)
                _probe_fork_resume_sandbox(s, wanted, out, timeout)
                _probe_resumed_no_config(s, wanted, out, timeout)
            except (RpcError, RpcTimeout, RpcClosed, KeyError, TypeError) as exc:
                _fill_errors(s, method, wanted, out, exc, layout.marker)
            finally:
                s.stop()
    finally:
        if not keep:
            shutil.rmtree(layout.base, ignore_errors=True)
    return out


def run_appserver(
    codex: str | Path,
    *,
    methods: Sequence[str] = LAUNCH_METHODS,
    control: bool = True,
    timeout: float = 90.0,
    parent: str = SCRATCH_PARENT,
    progress: Callable[[EventOutcome], None] | None = None,
) -> AppServerReport:
    """Every launch method's events, then the negative control (built-in :workspace, no deny)."""
    t0 = time.monotonic()
    outcomes: list[EventOutcome] = []
    for method in methods:
        for o in run_method(str(codex), method, timeout=timeout, parent=parent):
            outcomes.append(o)
            if progress:
                progress(o)
    controls: list[EventOutcome] = []
    if control:
        builtin = run_method(
            str(codex),
            "app-server -c",
            timeout=timeout,
            parent=parent,
            events=("new",),
            default_permissions=BUILTIN_WORKSPACE,
        )
        no_deny = run_method(
            str(codex),
            "app-server -c",
            timeout=timeout,
            parent=parent,
            events=("new",),
            mutate=drop_denies,
        )
        for name, found in ((CONTROL_BUILTIN, builtin), (CONTROL_NO_DENY, no_deny)):
            for o in found:
                c = EventOutcome(
                    name,
                    o.session_event,
                    o.result,
                    o.evidence,
                    o.active_profile,
                    o.approvals,
                    o.notifications,
                    o.tool_output,
                    o.sent,
                )
                controls.append(c)
                if progress:
                    progress(c)
    return AppServerReport(tuple(outcomes), tuple(controls), time.monotonic() - t0)


def run_appserver_rows(
    codex: str | Path | None = None, *, timeout: float = 90.0
) -> list[MatrixRow]:
    """The app-server rows of the compatibility matrix, with the pinned codex by default.

    Raises EnvironmentMissingError when no codex binary is installed, and RuntimeError when the
    negative controls did not leak (a harness that cannot fail proves nothing).
    """
    if codex is None:
        codex = codex_binary()
        if codex is None or not codex.is_file():
            raise EnvironmentMissingError(
                f"pinned codex {codex_version()} is not installed (run .ci/tools.sh)"
            )
    report = run_appserver(codex, timeout=timeout)
    if not report.controls_failed:
        raise RuntimeError("app-server negative control did not leak: the harness cannot fail")
    return report.rows()
