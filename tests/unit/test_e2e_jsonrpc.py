"""The stdio JSON-RPC client against a tiny echo peer: correlation, server requests, framing."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from profilec.e2e.jsonrpc import JsonRpcClient, RpcClosed, RpcError, RpcTimeout
from profilec.procs import descendants, session_members

PEER = textwrap.dedent(
    r"""
    import json, sys
    def send(m):
        sys.stdout.write(json.dumps(m, ensure_ascii=False) + "\n"); sys.stdout.flush()
    for raw in sys.stdin:
        msg = json.loads(raw)
        if "method" not in msg:
            send({"jsonrpc": "2.0", "method": "answered", "params": msg})
            continue
        m, rid, p = msg["method"], msg.get("id"), msg.get("params")
        if m == "echo":
            send({"jsonrpc": "2.0", "id": rid, "result": p})
        elif m == "fail":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "nope"}})
        elif m == "ask":
            send({"jsonrpc": "2.0", "id": "srv-1", "method": "approve", "params": p})
            send({"jsonrpc": "2.0", "method": "note", "params": {"text": "a\u2028b"}})
            send({"jsonrpc": "2.0", "id": rid, "result": "asked"})
        elif m == "swap":
            send({"jsonrpc": "2.0", "id": rid + 1000, "result": "stray"})
            send({"jsonrpc": "2.0", "id": rid, "result": "mine"})
        elif m == "silent":
            pass
        elif m == "exit":
            sys.exit(0)
        elif m == "junk":
            sys.stdout.write("not json\n"); sys.stdout.flush()
            send({"jsonrpc": "2.0", "id": rid, "result": 1})
    """
)


@pytest.fixture
def peer(tmp_path: Path) -> Path:
    path = tmp_path / "peer.py"
    path.write_text(PEER)
    return path


def test_request_returns_result_and_transcript_has_both_directions(peer: Path) -> None:
    with JsonRpcClient([sys.executable, str(peer)]) as c:
        assert c.request("echo", {"x": [1, 2]}, timeout=10) == {"x": [1, 2]}
        assert [e.direction for e in c.transcript] == ["out", "in"]
        assert c.transcript[1].message["result"] == {"x": [1, 2]}


def test_error_response_raises_rpc_error(peer: Path) -> None:
    with JsonRpcClient([sys.executable, str(peer)]) as c, pytest.raises(RpcError) as info:
        c.request("fail", {}, timeout=10)
    assert info.value.code == -32000
    assert info.value.message == "nope"


def test_server_request_goes_to_handler_and_answer_is_sent(peer: Path) -> None:
    seen: list[tuple[str, Any]] = []

    def handler(method: str, params: Any) -> Any:
        seen.append((method, params))
        return {"decision": "decline"}

    with JsonRpcClient([sys.executable, str(peer)], on_request=handler) as c:
        assert c.request("ask", {"cmd": "rm"}, timeout=10) == "asked"
        answered = c.wait_for(lambda m: m.get("method") == "answered", timeout=10)
    assert seen == [("approve", {"cmd": "rm"})]
    expected = {"jsonrpc": "2.0", "id": "srv-1", "result": {"decision": "decline"}}
    assert answered["params"] == expected
    assert [r["method"] for r in c.server_requests] == ["approve"]


def test_without_handler_server_request_gets_method_not_found(peer: Path) -> None:
    with JsonRpcClient([sys.executable, str(peer)]) as c:
        c.request("ask", {}, timeout=10)
        answered = c.wait_for(lambda m: m.get("method") == "answered", timeout=10)
    assert answered["params"]["error"]["code"] == -32601


def test_handler_rpc_error_becomes_error_reply(peer: Path) -> None:
    def handler(method: str, params: Any) -> Any:
        raise RpcError(-32001, "declined by test")

    with JsonRpcClient([sys.executable, str(peer)], on_request=handler) as c:
        c.request("ask", {}, timeout=10)
        answered = c.wait_for(lambda m: m.get("method") == "answered", timeout=10)
    assert answered["params"]["error"] == {"code": -32001, "message": "declined by test"}


def test_line_separator_inside_a_string_does_not_split_the_message(peer: Path) -> None:
    with JsonRpcClient([sys.executable, str(peer)]) as c:
        c.request("ask", {}, timeout=10)
        note = c.wait_for(lambda m: m.get("method") == "note", timeout=10)
        assert note["params"]["text"] == "a\u2028b"
        assert c.bad_lines == []


def test_responses_are_correlated_by_id_not_order(peer: Path) -> None:
    with JsonRpcClient([sys.executable, str(peer)]) as c:
        assert c.request("swap", {}, timeout=10) == "mine"
        assert any("unmatched" in b for b in c.bad_lines)


def test_non_json_line_is_kept_aside(peer: Path) -> None:
    with JsonRpcClient([sys.executable, str(peer)]) as c:
        assert c.request("junk", {}, timeout=10) == 1
        assert c.bad_lines == ["not json"]


def test_timeout_raises_and_wait_for_times_out(peer: Path) -> None:
    with JsonRpcClient([sys.executable, str(peer)]) as c:
        t0 = time.monotonic()
        with pytest.raises(RpcTimeout):
            c.request("silent", {}, timeout=0.3)
        with pytest.raises(RpcTimeout):
            c.wait_for(lambda m: False, timeout=0.2)
        assert time.monotonic() - t0 < 5


def test_peer_exit_raises_closed(peer: Path) -> None:
    with JsonRpcClient([sys.executable, str(peer)]) as c, pytest.raises(RpcClosed):
        c.request("exit", {}, timeout=10)


def test_close_kills_a_peer_that_ignores_terminate(tmp_path: Path) -> None:
    script = tmp_path / "stubborn.py"
    script.write_text(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "time.sleep(60)\n"
    )
    c = JsonRpcClient([sys.executable, str(script)])
    deadline = time.monotonic() + 10
    while not c.bad_lines and time.monotonic() < deadline:
        time.sleep(0.05)
    t0 = time.monotonic()
    rc = c.close(grace=0.5)
    assert rc is not None and rc < 0  # killed by a signal
    assert time.monotonic() - t0 < 5
    assert c.proc.poll() is not None


def test_stderr_is_drained_and_kept(tmp_path: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text("import sys\nsys.stderr.write('x' * 200000 + 'END')\nsys.stderr.flush()\n")
    c = JsonRpcClient([sys.executable, str(script)])
    c.proc.wait(10)
    c.close()
    assert c.stderr_tail(10).endswith("END")


def test_close_ends_descendants_that_would_be_orphaned(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); "
        "time.sleep(60)'])\n"
        "sys.stdout.write('child %d\\n' % child.pid); sys.stdout.flush()\n"
        "time.sleep(60)\n"
    )
    c = JsonRpcClient([sys.executable, str(script)])
    deadline = time.monotonic() + 10
    while not c.bad_lines and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(c.bad_lines[0].split()[1])
    assert [p for p, _ in descendants(c.pid)] == [child]
    c.close(grace=1.0)
    deadline = time.monotonic() + 5
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child)


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] == "Z"  # a zombie awaiting its reaper is ended


def test_close_ends_what_the_peer_spawns_while_shutting_down(tmp_path: Path) -> None:
    script = tmp_path / "late.py"
    script.write_text(
        "import signal, subprocess, sys, time\n"
        "def bye(*_):\n"
        "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "time.sleep(60)\n"
    )
    c = JsonRpcClient([sys.executable, str(script)])
    deadline = time.monotonic() + 10
    while not c.bad_lines and time.monotonic() < deadline:
        time.sleep(0.05)
    c.close(grace=1.0)
    assert session_members(c.pid) == []
