"""The canary's exec frame: output the engine hands back incomplete is never judged as whole.

docker-py sometimes returns an exec's output empty with the right exit code (its issues 2042 and
3332; seen here under load as a trusted `cat` of the marker, exit 0, no marker). The fake
container below runs the real frame through the real `sh` and can drop the output of chosen
runs, as the engine does.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from profilec.canary import engine
from profilec.canary.dynamic import Streamed
from profilec.canary.run import _RUN_ONCE, _judge, _Spec, _timed
from profilec.canary.tree import _Tree


@dataclass
class FakeApi:
    """The engine's low-level exec API, running each exec locally: stdout then stderr (the
    engine keeps no order between the two streams); the runs numbered in `lose` (1-based) come
    back with no output, those in `lose_head` without their first line; the engine reports a
    run still running for `running_polls` inspections (forever: `never_ends`)."""

    lose: set[int] = field(default_factory=set)
    lose_head: set[int] = field(default_factory=set)
    running_polls: int = 0
    never_ends: bool = False
    runs: int = 0
    polls: int = 0
    _argv: dict[str, list[str]] = field(default_factory=dict)
    _rc: dict[str, int] = field(default_factory=dict)

    def exec_create(self, _cid: str, argv: Sequence[str], **_: Any) -> dict[str, str]:
        eid = f"e{len(self._argv)}"
        self._argv[eid] = list(argv)
        return {"Id": eid}

    def exec_start(self, eid: str, stream: bool = False) -> Any:
        out = self._start(eid)
        return iter([out[: len(out) // 2], out[len(out) // 2 :]]) if stream else out

    def _start(self, eid: str) -> bytes:
        self.runs += 1
        proc = subprocess.run(self._argv[eid], capture_output=True, check=False, timeout=60)
        self._rc[eid] = proc.returncode
        out = b"" if self.runs in self.lose else proc.stdout + proc.stderr
        if self.runs in self.lose_head:
            out = out[out.index(b"\n") + 1 :]  # the first chunk (the begin line) never arrived
        return out

    def exec_inspect(self, eid: str) -> dict[str, Any]:
        self.polls += 1
        if self.never_ends or self.polls <= self.running_polls:
            return {"Running": True, "ExitCode": None}
        return {"Running": False, "ExitCode": self._rc[eid]}


class FakeContainer:
    def __init__(self, **kw: Any) -> None:
        self.id = "c"
        self.api = FakeApi(**kw)
        self.client = self

    @property
    def runs(self) -> int:
        return self.api.runs


def _run(c: FakeContainer, argv: list[str], attempts: int = 1) -> engine.ExecResult:
    return engine.exec_framed(cast(Any, c), argv, attempts=attempts)


def test_whole_output_is_returned_without_the_frame_and_with_the_exit_code() -> None:
    res = _run(FakeContainer(), ["sh", "-c", "printf 'a\\nb'; echo err >&2; exit 3"])
    assert (res.rc, res.whole, res.attempts) == (3, True, 1)
    assert "PROFILEC-EXEC-END" not in res.out
    assert res.out == "a\nberr\n"  # stderr joins stdout inside the frame, in order


def test_stderr_delivered_after_stdout_still_ends_inside_the_frame() -> None:
    """What broke `tamper-*` probes under load: a `touch` error on stderr reached the client
    after the frame's end line. Negative control: the frame without `2>&1` is incomplete."""
    argv = ["sh", "-c", "touch /nonexistent/dir/f"]
    res = _run(FakeContainer(), argv)
    assert res.whole and "nonexistent" in res.out and res.rc != 0
    unmerged = engine.FRAME.replace(" 2>&1 ", " ")
    assert unmerged != engine.FRAME
    proc = subprocess.run(["sh", "-c", unmerged, "TOKEN", *argv], capture_output=True, check=False)
    delivered = (proc.stdout + proc.stderr).decode()
    assert not delivered.endswith(f"\nTOKEN {proc.returncode}\n")
    ok = _run(FakeContainer(), ["sh", "-c", "echo MARKER"])
    assert (ok.rc, ok.out, ok.whole) == (0, "MARKER\n", True)


def test_output_mimicking_the_end_line_is_not_taken_for_the_frame() -> None:
    """The token is fresh per run: a command that prints an end line of its own still shows."""
    fake = "PROFILEC-EXEC-0000000000000000-BEGIN\n\nPROFILEC-EXEC-0000000000000000 0\n"
    res = _run(FakeContainer(), ["sh", "-c", f"printf '{fake}'"])
    assert res.whole and res.out == fake


def test_lost_output_is_incomplete_and_read_probes_run_again() -> None:
    # Negative control: the engine's loss as the old unframed exec saw it, exit 0 and nothing.
    lost = FakeContainer(lose={1})
    res = _run(lost, ["sh", "-c", "echo MARKER"])
    assert res.rc == 0 and not res.whole and "MARKER" not in res.out
    assert "incomplete" in res.out
    again = FakeContainer(lose={1})
    res = _run(again, ["sh", "-c", "echo MARKER"], attempts=3)
    assert (res.out, res.whole, res.attempts, again.runs) == ("MARKER\n", True, 2, 2)


def _tree(tmp_path: Path, marker: str) -> _Tree:
    return _Tree(
        tmp_path, str(tmp_path / "tree"), marker, ("DECOY1", "DECOY2"), str(tmp_path / "d"),
        (), str(tmp_path / "ws"), str(tmp_path / "ws" / "c"), "CONTROL", str(tmp_path / "h"),
        "NET",
    )  # fmt: skip


def test_a_trusted_read_whose_output_was_lost_is_retried_and_passes(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "SECRET-MARKER")
    spec = _Spec("trusted-read-target-x", "trusted", "echo SECRET-MARKER", "allow", None,
                 needle=tree.marker)  # fmt: skip
    cmd = ("sh", "-c", spec.script)
    # Without the frame the lost run is judged a `trusted` failure (what broke a run here).
    assert _judge(spec, 0, "", tree, cmd).failures == ("trusted",)
    probe = _timed(cast(Any, FakeContainer(lose={1})), spec, tree, cmd)
    assert probe.ok and probe.failures == ()


def test_a_probe_that_changes_the_tree_runs_once_and_lost_output_is_an_error(
    tmp_path: Path,
) -> None:
    tree = _tree(tmp_path, "SECRET-MARKER")
    spec = _Spec("tamper-rename-x", "model", "true", "deny", "deny")
    assert spec.name.startswith(_RUN_ONCE)
    fake = FakeContainer(lose={1})
    probe = _timed(cast(Any, fake), spec, tree, ("sh", "-c", "true"))
    assert fake.runs == 1
    assert not probe.ok and "tamper" in probe.failures  # judged by its recorded exit code
    # Every run's output lost: a read probe is an error too, never a pass on empty output.
    spec = _Spec("read-target-x", "model", "cat x", "deny", "deny")
    fake = FakeContainer(lose={1, 2, 3})
    probe = _timed(cast(Any, fake), spec, tree, ("sh", "-c", "exit 1"))
    assert fake.runs == 3 and not probe.ok and "error" in probe.failures


def test_output_that_lost_its_start_is_incomplete_even_with_the_end_line() -> None:
    """Seen under load: a trusted `cat` of the marker came back with its end line and exit 0 but
    without the marker. The begin line catches a lost start; negative control: judged by its end
    line alone (the frame before the begin line) that output passes as whole."""
    argv = ["sh", "-c", "echo MARKER"]
    lossy = FakeContainer(lose_head={1})
    res = _run(lossy, argv)
    assert not res.whole and res.rc == 0
    token = "PROFILEC-EXEC-0123456789abcdef"
    proc = subprocess.run(["sh", "-c", engine.FRAME, token, *argv], capture_output=True)
    delivered = proc.stdout[proc.stdout.index(b"\n") + 1 :]  # the begin line lost
    delivered = delivered.replace(b"MARKER\n", b"")  # ... and the marker with it
    assert delivered.decode().endswith(f"\n{token} 0\n")  # the old judgement: whole, no marker
    again = FakeContainer(lose_head={1})
    res = _run(again, argv, attempts=3)
    assert (res.out, res.whole, again.runs) == ("MARKER\n", True, 2)


def test_reads_after_renames_may_run_again_and_changes_run_once() -> None:
    for name in (
        "trusted-after-rename-x",
        "read-renamed-0",
        "trusted-read-target-x",
        "trusted-rewrite-x",  # writes back what it read: a second run leaves the same tree
    ):
        assert not name.startswith(_RUN_ONCE), name
    for name in ("tamper-rename-0", "tamper-relink-x"):
        assert name.startswith(_RUN_ONCE), name


def test_the_exit_code_is_the_engine_s_record_of_the_ended_command(
    monkeypatch: Any, tmp_path: Path
) -> None:
    """The output stream can end before the command does; docker-py's exec_run then reports exit
    0 (negative control: a command still running has no exit code yet). The frame asks the
    engine until it records the end; a command it never records ended is not judged by rc."""
    slow = FakeContainer(running_polls=3)
    res = _run(slow, ["sh", "-c", "exit 4"])
    assert (res.rc, res.rc_known, res.whole) == (4, True, True) and slow.api.polls == 4
    monkeypatch.setattr(engine, "EXIT_WAIT_SECONDS", 0.05)
    stuck = FakeContainer(never_ends=True)
    res = _run(stuck, ["sh", "-c", "exit 0"])
    assert not res.rc_known and not res.whole and res.rc == -1
    assert "never reported the command ended" in res.out


def test_a_tamper_probe_with_lost_output_is_judged_by_its_recorded_exit_code(
    tmp_path: Path,
) -> None:
    """Seen beside busy loops: `tamper-trusted-write-9`, denied as predicted, came back with its
    output lost and was an `error`. Its command prints nothing it touches: the recorded exit
    code decides. A denied tamper passes; one that went through still fails as `tamper`."""
    tree = _tree(tmp_path, "SECRET-MARKER")
    denied = _Spec("tamper-trusted-write-9", "model", "touch x", "deny", "deny")
    probe = _timed(cast(Any, FakeContainer(lose={1})), denied, tree, ("sh", "-c", "exit 1"))
    assert probe.ok and probe.observed == "deny"
    allowed = _Spec("tamper-trusted-write-9", "model", "touch x", "deny", "deny")
    probe = _timed(cast(Any, FakeContainer(lose={1})), allowed, tree, ("sh", "-c", "exit 0"))
    assert not probe.ok and "tamper" in probe.failures
    # A trusted rewrite needs its output (the marker): it runs again when the output is lost
    # (seen in a loaded CI run), and output lost every time stays an error.
    rewrite = _Spec("trusted-rewrite-x", "trusted", "cat x", "allow", None, needle=tree.marker)
    again = FakeContainer(lose={1})
    cmd = ("sh", "-c", f"echo {tree.marker}")
    probe = _timed(cast(Any, again), rewrite, tree, cmd)
    assert again.runs == 2 and probe.ok, probe
    lost = FakeContainer(lose={1, 2, 3})
    probe = _timed(cast(Any, lost), rewrite, tree, cmd)
    assert lost.runs == 3 and not probe.ok and "error" in probe.failures


def _streamed(c: FakeContainer, argv: list[str]) -> Streamed:
    s = Streamed(cast(Any, c), cast(Any, c), argv)
    assert s.finish(60) is not None
    return s


def test_a_streamed_model_command_is_framed_and_unframed_whole() -> None:
    s = _streamed(FakeContainer(), ["sh", "-c", "echo HELD /l; echo oops >&2; exit 4"])
    assert (s.rc, s.whole, s.output()) == (4, True, "HELD /l\noops\n")
    assert s.text().startswith("PROFILEC-EXEC-")  # the raw stream carries the frame


def test_a_streamed_command_whose_stream_lost_its_head_is_not_whole() -> None:
    s = _streamed(FakeContainer(lose_head={1}), ["sh", "-c", "echo HELD /l; echo LOCK-END"])
    assert not s.whole and engine.INCOMPLETE in s.output()
    assert "LOCK-END" in s.output()  # a marker line is no proof the stream is whole


def test_a_streamed_command_whose_stream_ended_early_waits_for_the_engine() -> None:
    c = FakeContainer(running_polls=3)
    s = _streamed(c, ["sh", "-c", "exit 2"])
    assert s.rc == 2 and c.api.polls == 4 and s.whole
