"""`profilec run`'s supervision: a fake adapter that spawns a child ignoring SIGTERM and a
grandchild that leaves its session (setsid after a double fork, as a daemonizing helper does);
after the client's end, the adapter's exit, a stop (SIGTERM/SIGINT) or drift nothing of the
tree is left, and the exit code is the adapter's or 9.

Each case runs in a driver process of its own: the supervisor becomes the subreaper of what it
starts (as `profilec run` does), which must not change the test process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from profilec.procs import start_time

REPO = Path(__file__).resolve().parents[2]

ADAPTER = textwrap.dedent(
    """
    import json, os, signal, subprocess, sys, time
    stubborn = subprocess.Popen([sys.executable, "-c",
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(600)"], stdout=subprocess.PIPE)
    stubborn.stdout.readline()  # it ignores SIGTERM from here on
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode()); os.close(w)
            time.sleep(600); os._exit(0)
        os._exit(0)
    os.close(w)
    escaped = int(os.read(r, 32))
    print(json.dumps([os.getpid(), stubborn.pid, escaped]), flush=True)
    if sys.argv[1] == "exit":
        sys.exit(5)
    for line in sys.stdin:
        pass
    sys.exit(3)
    """
)

DRIVER = textwrap.dedent(
    """
    import json, sys, threading
    from profilec.procs import start_time
    from profilec.run.supervise import Child, supervise

    adapter, how = sys.argv[1], sys.argv[2]

    class Session:
        def __init__(self):
            self.client_done, self.agent_done = threading.Event(), threading.Event()
            self.sent, self.failed = [], []
        def send_client(self, msg):
            self.sent.append(msg); return True
        def fail_pending(self, why):
            self.failed.append(why)

    class Drift:
        message = "hop removed"
        def document(self):
            return {"kind": "removed"}

    class Handle:
        stopped = False
        def stop(self, timeout=5.0):
            Handle.stopped = True

    def start_watch(on_drift):
        if how == "watch-fails":
            raise RuntimeError("the chain already differs")
        if how == "drift":
            threading.Thread(target=on_drift, args=(Drift(),)).start()
        return Handle()

    session = Session()
    child = Child([sys.executable, adapter, how], {"PATH": "/usr/bin:/bin"}, subreaper=True)
    pids = json.loads(child.stdout.readline())
    tree = {p: start_time(p) for p in pids}
    if how == "eof":
        child.stdin.close()
        session.client_done.set()
    try:
        ending = supervise(child, session, start_watch=start_watch, stopped=lambda: how == "stop")
        reason, code = ending.reason, ending.exit_code
    except RuntimeError as exc:
        reason, code = f"raised: {exc}", None
        Handle.stopped = True  # never started
    print(json.dumps({"tree": tree, "reason": reason, "code": code,
                      "sent": session.sent, "failed": session.failed,
                      "watch_stopped": Handle.stopped}))
    """
)


def _drive(tmp_path: Path, how: str) -> dict[str, Any]:
    adapter = tmp_path / "adapter.py"
    adapter.write_text(ADAPTER)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", DRIVER, str(adapter), how],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    assert len(result["tree"]) == 3
    left = [p for p, t in result["tree"].items() if t is not None and start_time(int(p)) == t]
    assert left == [], f"still running after {how}: {left}"
    assert result["watch_stopped"]
    return result


def test_the_client_s_end_ends_the_adapter_and_its_whole_tree(tmp_path: Path) -> None:
    result = _drive(tmp_path, "eof")
    assert (result["reason"], result["code"]) == ("client-eof", 3)


def test_the_adapter_s_exit_ends_what_it_left_running(tmp_path: Path) -> None:
    result = _drive(tmp_path, "exit")
    assert (result["reason"], result["code"]) == ("adapter-exit", 5)


def test_a_stop_ends_the_tree_with_the_adapter_s_signal_code(tmp_path: Path) -> None:
    result = _drive(tmp_path, "stop")
    assert (result["reason"], result["code"]) == ("stopped", 128 + 15)
    assert result["failed"] == ["profilec run: the session was stopped"]


def test_drift_tells_the_client_ends_the_tree_and_exits_9(tmp_path: Path) -> None:
    result = _drive(tmp_path, "drift")
    assert (result["reason"], result["code"]) == ("drift", 9)
    (note,) = result["sent"]
    assert note["method"] == "_profilec/session_ended"
    assert note["params"]["drift"] == {"kind": "removed"}
    assert "hop removed" in note["params"]["message"]
    assert result["failed"] == [note["params"]["message"]]


def test_a_watch_that_cannot_start_ends_the_tree_before_it_raises(tmp_path: Path) -> None:
    result = _drive(tmp_path, "watch-fails")
    assert result["reason"] == "raised: the chain already differs"
    assert result["failed"] == ["profilec run: the watch could not start; the session was ended"]


def test_without_the_subreaper_the_escaped_grandchild_survives(tmp_path: Path) -> None:
    """The negative control: the session and descendant lists alone miss the grandchild that
    left the session; the subreaper is what ends it."""
    adapter = tmp_path / "adapter.py"
    adapter.write_text(ADAPTER)
    driver = DRIVER.replace("subreaper=True", "subreaper=False")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", driver, str(adapter), "stop"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the survivor holds the stderr it inherited open
        text=True,
        timeout=120,
        check=True,
    )
    tree = json.loads(out.stdout)["tree"]
    escaped = int(list(tree)[2])
    try:
        assert start_time(escaped) == tree[str(escaped)]
    finally:
        os.kill(escaped, 9)
