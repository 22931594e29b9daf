"""Real ACP adapters (pinned npm builds) against a scripted local model: does the deny hold?

One module-scoped run of the ACP half of the matrix (every adapter build x launch method x
session event, ~2 minutes on 2 cores), then assertions over it:

* the reviewed catalog profiles/adapters.toml agrees with what was observed (so it cannot go
  stale: a new adapter or Codex build that behaves differently fails here);
* negative controls show the harness detects a loss: with no profile at all every event of every
  adapter is `lost`, a profile given only in CODEX_CONFIG is lost with the TS adapter, and its
  built-in agent, workspace-write and agent-full-access modes lose the deny; a deliberately wrong
  catalog is reported by the same agreement check;
* no cell is `error` (a probe that did not run is never counted as held), every held cell read
  the control file, no evidence carries a marker, and nothing the run started is left running.

A method with an undecided cell is run once more before the cell is called `error`; the run prints
which cells were retried. The harness's own waits are tested here too, without Codex: a prompt is
cancelled only after a (load-scaled) idle period and never while it makes progress, deadlines grow
with the load, and a retry's cells are merged as documented (`acp.merge_retry`).
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from profilec.compat_matrix import excerpt, matrix_json, rows_from
from profilec.e2e import acp, adapters
from profilec.e2e.acp import AcpClient, Observation, merge_retry
from profilec.e2e.layout import created_layouts
from profilec.e2e.run import acp_rows, adapter_verdicts, catalog_disagreements, matrix_adapters
from profilec.emit.catalog import load_catalog
from profilec.models.compat import CompatibilityMatrix, MatrixRow

pytestmark = [pytest.mark.e2e, pytest.mark.codex]


def missing(reason: str) -> None:
    """Fail when CI=true (an adapter that cannot run is never a pass), skip otherwise."""
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


def _leftovers(bases: tuple[str, ...]) -> list[int]:
    """Pids (not zombies) whose command line names one of this run's layout dirs."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        zombie = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"Z"
        if not zombie and any(b.encode() + b"/" in cmdline for b in bases):
            found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def matrix() -> Iterator[CompatibilityMatrix]:
    builds = matrix_adapters()
    for ad in builds:
        if ad.missing is not None:
            missing(f"{ad.package} {ad.version}: {ad.missing} (run .ci/tools.d/acp.sh)")
    if os.getuid() != 0:
        pytest.skip(
            "profiles/adapters.toml was measured as root (as CI runs): zed's result "
            "depends on it, and the +non-root methods need root to switch users"
        )
    already = set(created_layouts())
    lines: list[str] = []
    result = rows_from(acp_rows(builds, progress=lines.append))
    print("\n".join(lines))
    retried = [
        r
        for r in result.rows
        if "[retried once" in r.evidence or r.evidence.startswith("retried once")
    ]
    print(f"cells retried once: {len(retried)}")
    for r in retried:
        print(f"  {r.adapter} {r.launch_method} {r.session_event}: {r.result}: {r.evidence}")
    print(matrix_json(result))
    ours = tuple(b for b in created_layouts() if b not in already)
    assert len(ours) >= len(builds)
    after = _leftovers(ours)
    assert after == [], f"processes left running after the matrix: {after}"
    assert not any(os.path.exists(b) for b in ours), "a layout dir was left behind"
    yield result


def test_catalog_agrees_with_observed_matrix(matrix: CompatibilityMatrix) -> None:
    problems = catalog_disagreements(adapter_verdicts(matrix), load_catalog())
    assert problems == []


def test_a_wrong_catalog_is_caught_by_the_same_run(matrix: CompatibilityMatrix) -> None:
    """The agreement check can fail: claims the run refutes are reported."""
    catalog = load_catalog()
    wrong = []
    for e in catalog.adapters:
        if e.package == adapters.ZED_PACKAGE:  # claim zed holds under codex-home as root
            e = e.model_copy(
                update={"launch_method": "codex-home", "holding_methods": ["codex-home"]}
            )
        elif e.method is not None:  # claim CODEX_CONFIG alone holds, and forget a blocked mode
            e = e.model_copy(
                update={
                    "holding_methods": sorted([*e.holding_methods, "codex-config"]),
                    "blocked_modes": [m for m in e.blocked_modes if m != "agent"],
                }
            )
        wrong.append(e)
    problems = catalog_disagreements(
        adapter_verdicts(matrix), catalog.model_copy(update={"adapters": wrong})
    )
    text = "\n".join(problems)
    assert "@zed-industries/codex-acp 0.16.0" in text and "did not hold" in text
    assert "codex-config" in text
    assert "blocked_modes" in text


def test_codex_config_alone_is_lost(matrix: CompatibilityMatrix) -> None:
    """Negative control from the research: a profile only in CODEX_CONFIG gets no profile mode;
    the default agent mode's legacy sandboxPolicy drops the holder-directory entries."""
    rows = [
        r
        for r in matrix.rows
        if r.adapter == adapters.TS_PACKAGE and r.launch_method == adapters.METHOD_CODEX_CONFIG
    ]
    assert rows
    for r in rows:
        if r.session_event in ("new", "loaded", "resumed"):
            assert r.result == "lost", (r.codex_version, r.session_event, r.evidence)
    assert not any(r.session_event.startswith("mode:permission-profile:") for r in rows)
    core = [r for r in rows if r.session_event in ("new", "loaded", "resumed")]
    assert all(r.lint == "PC018" for r in core)


def test_every_cell_decided(matrix: CompatibilityMatrix) -> None:
    errors = [r for r in matrix.rows if r.result == "error"]
    assert errors == [], [
        f"{r.adapter} {r.launch_method} {r.session_event}: {r.evidence}" for r in errors
    ]
    keys = [r.key() for r in matrix.rows]
    assert len(keys) == len(set(keys)), "one row per adapter, method and session event"
    for r in matrix.rows:
        if r.result == "held":
            assert "control read" in r.evidence
        # Evidence is what excerpt() already cleaned: a second pass changes nothing.
        assert excerpt(r.evidence, ["PROFILEC-CANARY-"]) == r.evidence


def test_no_profile_control_is_lost_everywhere(matrix: CompatibilityMatrix) -> None:
    control = [r for r in matrix.rows if r.launch_method == adapters.METHOD_NONE]
    per_adapter = {(r.adapter, r.codex_version) for r in control}
    assert len(per_adapter) == len(matrix_adapters())
    events = {r.session_event for r in control}
    assert {"new", "loaded", "resumed"} <= events
    assert all(r.result == "lost" for r in control), [
        (r.adapter, r.session_event, r.result) for r in control if r.result != "lost"
    ]


def test_ts_builtin_modes_lose_and_profile_modes_hold(matrix: CompatibilityMatrix) -> None:
    ts = [
        r
        for r in matrix.rows
        if r.adapter == adapters.TS_PACKAGE
        and r.launch_method == adapters.METHOD_CODEX_HOME_INITIAL_MODE
    ]
    by_event = {(r.codex_version, r.session_event): r.result for r in ts}
    for cver in {r.codex_version for r in ts}:
        for builtin in ("agent", "agent-full-access", "workspace-write"):
            assert by_event[(cver, f"mode:{builtin}")] == "lost"
            (row,) = [
                r for r in ts if r.codex_version == cver and r.session_event == f"mode:{builtin}"
            ]
            assert row.lint == "PC023"
        profile_modes = [
            e for (c, e) in by_event if c == cver and e.startswith("mode:permission-profile:")
        ]
        assert sorted(profile_modes) == [
            "mode:permission-profile:profilec-agent",
            "mode:permission-profile:profilec-agent-full-access",
            "mode:permission-profile:profilec-read-only",
        ]
        assert all(by_event[(cver, e)] == "held" for e in profile_modes)
        assert by_event[(cver, "new")] == "held"
        assert by_event[(cver, "loaded")] == "held"
        assert by_event[(cver, "resumed")] == "held"


def test_zed_holds_only_as_non_root(matrix: CompatibilityMatrix) -> None:
    zed = [r for r in matrix.rows if r.adapter == adapters.ZED_PACKAGE]
    unsupported = {r.launch_method for r in zed if r.result == "not-supported"}
    assert {adapters.METHOD_CODEX_CONFIG, adapters.METHOD_CODEX_HOME_INITIAL_MODE} <= unsupported
    for method in (adapters.METHOD_C_OVERRIDES, adapters.METHOD_CODEX_HOME):
        as_root = [r for r in zed if r.launch_method == method]
        assert as_root and all(r.result == "lost" for r in as_root)
        assert any("umount of the mask succeeded as uid 0" in r.evidence for r in as_root)
    (v,) = [v for v in adapter_verdicts(matrix) if v.adapter == adapters.ZED_PACKAGE]
    assert v.holding == ("c-overrides+non-root", "codex-home+non-root")
    assert v.blocked_modes["c-overrides+non-root"] == ("auto", "full-access")


# ---------------------------------------------------------------------------------------------
# The harness's waits and retry, without Codex


def _obs(event: str, result: str, evidence: str = "x", seconds: float = 1.0) -> Observation:
    row = MatrixRow(
        adapter=adapters.TS_PACKAGE,
        adapter_version="2.6.0",
        codex_version="0.171.0",
        launch_method="codex-home",
        session_event=event,
        result=result,  # type: ignore[arg-type]
        evidence=evidence,
    )
    return Observation(row, seconds)


def test_a_retry_decides_only_the_cells_the_first_try_left_open() -> None:
    first = [
        _obs("new", "held", "control read"),
        _obs("mode:a", "error", "no tool output reached the model"),
        _obs("mode:b", "lost", "marker"),
    ]
    again = [
        _obs("new", "lost", "the retry would say lost"),
        _obs("mode:a", "held", "control read, second try", 2.0),
        _obs("mode:b", "held"),
        _obs("loaded", "held", "reached only by the retry"),
    ]
    merged = {o.row.session_event: o for o in merge_retry(first, again)}
    assert list(merged) == ["new", "mode:a", "mode:b", "loaded"]
    assert merged["new"] == first[0] and merged["mode:b"] == first[2]  # decided: kept
    a = merged["mode:a"]
    assert (a.row.result, a.attempts, a.retried, a.seconds) == ("held", 2, True, 3.0)
    assert a.row.evidence.startswith("control read, second try [retried once; first try: no tool")
    assert (
        merged["loaded"].retried
        and "first try ended before this event" in merged["loaded"].row.evidence
    )
    assert not merged["new"].retried


def test_a_cell_both_tries_leave_open_is_an_error_that_says_it_was_retried() -> None:
    first = [_obs("new", "held"), _obs("mode:a", "error", "bwrap: Can't mkdir")]
    merged = merge_retry(first, [_obs("new", "held"), _obs("mode:a", "error", "again")])
    assert merged[1].row.result == "error" and merged[1].attempts == 2
    assert merged[1].row.evidence == "again [retried once; first try: bwrap: Can't mkdir]"
    merged = merge_retry(first, [_obs("new", "error", "adapter session failed")])
    assert merged[1].row.result == "error"
    assert merged[1].row.evidence.startswith("retried once, the retry did not reach this event")
    long = merge_retry([_obs("new", "error", "e" * 480)], [_obs("new", "held", "h" * 480)])
    assert long[0].row.evidence.startswith("h" * 480) and len(long[0].row.evidence) <= 500


def test_deadlines_scale_with_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    for load, factor in ((0.3, 1.0), (4.0, 2.0), (100.0, acp.MAX_LOAD_FACTOR)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert acp.load_factor() == factor
        assert acp.scaled(10.0) == 10.0 * factor


#: A stand-in ACP agent: answers initialize; holds each prompt until the client cancels it
#: (answer `cancelled`) or sends `test/finish` (answer `end_turn`).
FAKE_AGENT = textwrap.dedent("""
    import json, sys
    held = {}
    def send(msg):
        sys.stdout.write(json.dumps(msg) + "\\n"); sys.stdout.flush()
    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"agentCapabilities": {}}})
        elif method == "session/prompt":
            held[msg["params"]["sessionId"]] = msg["id"]
        elif method in ("session/cancel", "test/finish") and held:
            sid = msg.get("params", {}).get("sessionId") or next(iter(held))
            stop = "cancelled" if method == "session/cancel" else "end_turn"
            send({"jsonrpc": "2.0", "id": held.pop(sid), "result": {"stopReason": stop}})
""")


def _fake_agent(tmp_path: Path) -> AcpClient:
    script = tmp_path / "agent.py"
    script.write_text(FAKE_AGENT, encoding="utf-8")
    client = AcpClient((sys.executable, str(script)), dict(os.environ), str(tmp_path)).start()
    client.initialize()
    return client


def test_a_prompt_without_progress_is_cancelled_after_the_idle_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(acp, "PROMPT_IDLE", 0.5)
    monkeypatch.setattr(acp, "load_factor", lambda: 1.0)
    client = _fake_agent(tmp_path)
    try:
        assert client.prompt("s1", "hi", progress=lambda: 0) == "cancelled"
        assert client.idle_cancel is not None and client.idle_cancel >= 0.5
    finally:
        client.close()


def test_a_prompt_that_makes_progress_is_never_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Progress every poll for longer than the idle period: the prompt ends on its own."""
    monkeypatch.setattr(acp, "PROMPT_IDLE", 0.5)
    monkeypatch.setattr(acp, "load_factor", lambda: 1.0)
    client = _fake_agent(tmp_path)
    polls = 0
    needed = int(4 * acp.PROMPT_IDLE / acp.PROGRESS_POLL)  # progress for 4 idle periods

    def progress() -> object:
        nonlocal polls
        polls += 1
        if polls == needed:
            client.client.notify("test/finish", {})
        return polls

    try:
        assert client.prompt("s1", "hi", progress=progress) == "end_turn"
        assert client.idle_cancel is None and polls >= needed
    finally:
        client.close()


def test_what_the_agent_said_explains_a_turn_that_ran_nothing() -> None:
    def chunk(text: str, sid: str = "s") -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": sid,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text},
                },
            },
        }

    inbox: list[dict[str, Any]] = [
        chunk("Warning: Model metadata for `m` not found.\n\n"),
        chunk("failed to load AGENTS.md instructions:\n bwrap: Can't mkdir /x/.git\n"),
        chunk("another session's text", sid="other"),
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}},
    ]
    assert acp.agent_said(inbox, "s") == (
        "failed to load AGENTS.md instructions: bwrap: Can't mkdir /x/.git"
    )


def test_an_adapter_error_keeps_the_reason_codex_gave() -> None:
    from profilec.e2e.jsonrpc import RpcError

    exc = RpcError(
        -32603,
        "Internal error",
        {"details": "error creating thread: failed to load AGENTS.md\nbwrap: Can't mkdir /x/.git"},
    )
    assert acp._short(exc) == (
        "-32603: Internal error (error creating thread: failed to load "
        "AGENTS.md bwrap: Can't mkdir /x/.git)"
    )
    assert acp._short(RpcError(1, "m", [1])) == "1: m ([1])"
