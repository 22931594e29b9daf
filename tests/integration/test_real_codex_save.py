"""Against the real pinned Codex: the deny holds while the trusted writer saves the credential.

Codex saves `auth.json` by locking `$CODEX_HOME/auth.lock` and `auth.json.lock` beside the real
file, writing `.auth-XXXXXX` there and renaming it over the real file. A rename detaches a file
deny (a bind mount) inside every sandbox that is still running, so:

* a model command that is already running when the trusted side saves keeps reading every
  spelling and listing the vault; it must never see the old or the new key, and the trusted save
  must land. Control: the same run with today's file-only deny sees the new key.
* a model command that holds every lock it can open must not stall the save. Control: without
  the deny on `auth.lock` the save waits for the lock (about 10 s).

The trusted save is `codex login --with-api-key`, which takes the same save path as a token
refresh (shared/research/codex-enforcement.md §1). Trees live under /var/tmp: Codex will not
create its helper binaries under the system temp dir.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.emit.overrides import override_lines
from tests.helpers import Layout, make_layout

pytestmark = pytest.mark.codex

MODES = ("read-only", "agent", "agent-full-access")
WAIT = 120.0  # seconds: a bound for a hung binary, never a pacing sleep


@pytest.fixture
def lay() -> Iterator[Layout]:
    base = Path(tempfile.mkdtemp(prefix="profilec-save-", dir="/var/tmp"))
    try:
        yield make_layout(base / "l", hop_dir=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _env(lay: Layout) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "CODEX_HOME": str(lay.codex_home), "HOME": str(lay.base)}


def _lines(lay: Layout, *, file_only: bool = False, lock_deny: bool = True) -> list[str]:
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    lines = override_lines(bundle)
    vault = f'"{lay.host_target.parent}" = "deny"'
    if file_only:  # today's shape before vaults: a deny on the file alone
        lines = [ln.replace(vault, f'"{lay.host_target}" = "deny"') for ln in lines]
        assert all(vault not in ln for ln in lines)
    if not lock_deny:
        lock = f', "{lay.codex_home / "auth.lock"}" = "deny"'
        assert any(lock in ln for ln in lines)
        lines = [ln.replace(lock, "") for ln in lines]
    return lines


class _Sandbox:
    """A `codex sandbox` model command whose output lines are read as they come.

    The test waits on what the command prints (an event), never on a fixed sleep: a loaded machine
    can take seconds to start the sandbox.
    """

    def __init__(self, codex: Path, lay: Layout, lines: list[str], mode: str, script: str) -> None:
        args = [str(codex), "sandbox"]
        for line in lines:
            args += ["-c", line]
        args += ["-P", f"profilec-{mode}", "-C", str(lay.workspace), "--", "/bin/sh", "-c", script]
        self.proc = subprocess.Popen(
            args,
            env=_env(lay),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._done = False
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._done = True
            self._cond.notify_all()

    def wait_for(self, count: Callable[[list[str]], bool], what: str) -> int:
        """Block until `count(lines)` holds; return how many lines had arrived by then."""
        with self._cond:
            ok = self._cond.wait_for(lambda: self._done or count(self.lines), timeout=WAIT)
            if not (ok and count(self.lines)):
                raise AssertionError(f"{what}: not seen in {WAIT} s; output: {self.text()}")
            return len(self.lines)

    def text(self, upto: int | None = None) -> str:
        with self._cond:
            return "\n".join(self.lines[:upto])

    def finish(self, *, kill: bool = False) -> str:
        if kill:
            os.killpg(self.proc.pid, 9)
        self.proc.wait(timeout=WAIT)
        self._reader.join(timeout=WAIT)
        return self.text()


def _iters(lines: list[str]) -> int:
    return sum(1 for ln in lines if ln.startswith("ITER "))


def _login(codex: Path, lay: Layout, key: str) -> float:
    start = time.monotonic()
    proc = subprocess.run(
        [str(codex), "login", "--with-api-key"],
        input=key + "\n",
        env=_env(lay),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return took


def _race(codex: Path, lay: Layout, lines: list[str], mode: str) -> tuple[str, str, str]:
    """A model command reads every spelling in a loop while the trusted side saves a new key.

    Returns (what it printed before the save began, everything it printed, the new key). The loop
    runs until the test drops a stop file in the workspace: three clean reads before the save,
    five after it returned, however slow the machine.
    """
    hop = lay.base / "hostlink" / "auth.json"
    vault = lay.host_target.parent
    stop = lay.workspace / ".stop-reading"
    script = (
        f"echo CONTROL=$(cat {lay.control}); i=0; "
        f"while [ ! -e {stop} ] && [ $i -lt 20000 ]; do echo; echo ITER $i; "
        f"cat {lay.link} {hop} {lay.host_target} 2>/dev/null; "
        f'for f in {vault}/.auth-* {vault}/*; do cat "$f" 2>/dev/null; done; '
        "sleep 0.05; i=$((i+1)); done; echo LOOP_DONE"
    )
    box = _Sandbox(codex, lay, lines, mode, script)
    try:
        before = box.wait_for(lambda ls: _iters(ls) >= 3, "three reads before the save")
        new_key = f"sk-NEW-{secrets.token_hex(12)}"
        _login(codex, lay, new_key)
        after = _iters(box.lines)
        box.wait_for(lambda ls: _iters(ls) >= after + 5, "five reads after the save")
    finally:
        stop.touch()
    return box.text(before), box.finish(), new_key


@pytest.mark.parametrize("mode", MODES)
def test_a_running_model_command_never_reads_the_key_across_a_real_save(
    lay: Layout, codex_bin: Path, mode: str
) -> None:
    _, out, new_key = _race(codex_bin, lay, _lines(lay), mode)
    assert "CONTROL=control-ok" in out and "LOOP_DONE" in out, out
    assert lay.marker not in out and new_key not in out, out
    # The trusted save landed through the link, in the real file (read from outside).
    assert new_key in lay.host_target.read_text(encoding="utf-8")
    assert os.readlink(lay.link) == "../hostlink/auth.json"


def test_a_file_only_deny_leaks_the_new_key_across_a_real_save(
    lay: Layout, codex_bin: Path
) -> None:
    """Negative control: the deny shape before vaults loses the mask at the writer's rename.

    (While the save is under way the old key can show too: measured once under load.)
    """
    before, out, new_key = _race(codex_bin, lay, _lines(lay, file_only=True), "agent")
    assert "CONTROL=control-ok" in out, out
    assert lay.marker not in before, before  # the mask held until the save...
    assert new_key in out, out  # ...and was gone after it


# Each lock: a background holder prints HELD (and holds it 12 s) or MISS (could not take it).
HOLD = (
    "for f in {locks}; do "
    "( flock -n \"$f\" sh -c 'echo HELD; sleep 12' 2>/dev/null || echo MISS ) & "
    "done; wait"
)


def _hold_locks(codex: Path, lay: Layout, lines: list[str], mode: str) -> tuple[float, str]:
    locks = [str(lay.codex_home / "auth.lock"), str(lay.host_target.parent / "auth.json.lock")]
    box = _Sandbox(codex, lay, lines, mode, HOLD.format(locks=" ".join(locks)))
    try:
        box.wait_for(
            lambda ls: sum(ln in ("HELD", "MISS") for ln in ls) >= len(locks),
            "every lock held or missed",
        )
        took = _login(codex, lay, f"sk-{secrets.token_hex(8)}")
    finally:
        out = box.finish(kill=True)
    return took, out


@pytest.mark.parametrize("mode", MODES)
def test_a_model_command_cannot_hold_the_writer_locks(
    lay: Layout, codex_bin: Path, mode: str
) -> None:
    took, out = _hold_locks(codex_bin, lay, _lines(lay), mode)
    assert "HELD" not in out, out
    assert took < 5.0, took


def test_without_the_lock_deny_a_model_command_stalls_the_save(
    lay: Layout, codex_bin: Path
) -> None:
    """Negative control: an unmasked CODEX_HOME/auth.lock can be held by a model command."""
    took, out = _hold_locks(codex_bin, lay, _lines(lay, lock_deny=False), "agent")
    assert "HELD" in out, out
    assert took >= 5.0, took
