"""The lock probe's model command reports every lock it holds, whatever the other attempts print.

CI (fresh clone, two busy loops beside it) once saw the model hold `$CODEX_HOME/auth.lock` (the
trusted save was blocked) while the probe found no `HELD` line. util-linux `flock` writes an
error in three write() calls (strace: `flock: `, `cannot open lock file X`, `: reason\\n`); the
other attempt's `HELD` line can land between them, and the line then reads `flock: HELD ...`.
A fake `flock` below makes that order certain: the failing attempt writes its first part, waits
until the other attempt's `HELD` line is in the output, then writes the rest; the other attempt
starts its command only once that first part is written (CI once ran it first, beside two busy
loops, and the negative control then saw a whole line). It runs the real
script through busybox `sh`, as the canary container does.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from profilec.canary.dynamic import lock_hold
from tests.integration.conftest import missing

BUSYBOX = Path("/bin/busybox")
APPLETS = ("sh", "usleep", "tr", "grep", "printf", "cat", "touch")

FAKE_FLOCK = r"""#!/bin/sh
# flock -n -x LOCK CMD...: a LOCK in a dir named lock-taken is taken (the command runs); any
# other fails the way util-linux does, in three writes, with another line forced between them.
# Both waits make the order certain whatever the scheduler does: the taken lock's command
# starts only after the first write is out ($OUT.part), the rest follows only after `HELD`.
lock=$3; shift 3
case "$lock" in */lock-taken/*)
  i=0; until [ -e "$OUT.part" ] || [ $i -ge 6000 ]; do usleep 10000; i=$((i+1)); done
  exec "$@";;
esac
printf 'flock: ' >&2
touch "$OUT.part"
i=0; until grep -q 'HELD ' "$OUT" || [ $i -ge 6000 ]; do usleep 10000; i=$((i+1)); done
printf 'cannot open lock file %s' "$lock" >&2
printf ': Permission denied\n' >&2
exit 1
"""


def _before_the_fix(flock: Sequence[str], locks: Sequence[str], stop: str) -> str:
    """The script as it was: every attempt's stderr on the shared output."""
    q = shlex.quote
    fl = " ".join(q(a) for a in flock)
    jobs = []
    for lock in locks:
        hold = f"echo HELD {q(lock)}; while [ ! -e {q(stop)} ]; do usleep 50000; done"
        jobs.append(f"( {fl} -n -x {q(lock)} sh -c {q(hold)} || echo NOT-HELD {q(lock)} rc=$? ) &")
    reader = (
        'n=0; while IFS= read -r l; do echo "$l"; n=$((n+1)); '
        f'[ "$n" -eq {len(locks)} ] && echo LOCKS-TRIED; done; echo LOCK-END'
    )
    return f"{{ {' '.join(jobs)} wait; }} | {{ {reader}; }}"


def _run(tmp_path: Path, script_of: object) -> list[str]:
    if not BUSYBOX.exists():
        missing(f"{BUSYBOX} is missing (apt-get install busybox-static, as .ci/tools.sh does)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for applet in APPLETS:
        (bin_dir / applet).symlink_to(BUSYBOX)
    flock = bin_dir / "flock"
    flock.write_text(FAKE_FLOCK, encoding="utf-8")
    flock.chmod(0o755)
    out, stop = tmp_path / "out", tmp_path / "stop"
    locks = (str(tmp_path / "vault" / "auth.json.lock"), str(tmp_path / "lock-taken" / "auth.lock"))
    assert callable(script_of)
    script = script_of([str(flock)], locks, str(stop))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "OUT": str(out)}
    with out.open("wb") as fh:
        proc = subprocess.Popen(
            [str(BUSYBOX), "sh", "-c", script], stdout=fh, stderr=subprocess.STDOUT, env=env
        )
    try:
        # An event, not a fixed time: the script says when every attempt has reported.
        deadline = time.monotonic() + 120
        while b"LOCKS-TRIED" not in out.read_bytes():
            assert proc.poll() is None and time.monotonic() < deadline, out.read_bytes()
            time.sleep(0.01)
        stop.touch()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out.read_text(encoding="utf-8").split("\n")


def test_a_held_lock_is_reported_while_another_attempt_fails(tmp_path: Path) -> None:
    lines = _run(tmp_path, lock_hold)
    held = [ln for ln in lines if ln.startswith("HELD ")]
    assert held == [f"HELD {tmp_path}/lock-taken/auth.lock"], lines
    refused = [ln for ln in lines if ln.startswith("NOT-HELD ")]
    # The failed attempt's own error text is on its own line, whole.
    assert refused == [
        f"NOT-HELD {tmp_path}/vault/auth.json.lock rc=1 flock: cannot open lock file "
        f"{tmp_path}/vault/auth.json.lock: Permission denied"
    ], lines
    assert "LOCK-END" in lines


def test_negative_control_the_old_script_loses_the_held_line(tmp_path: Path) -> None:
    lines = _run(tmp_path, _before_the_fix)
    assert not any(ln.startswith("HELD ") for ln in lines), lines
    assert f"flock: HELD {tmp_path}/lock-taken/auth.lock" in lines, lines


def test_fake_flock_matches_util_linux_write_pattern() -> None:
    # The fake's three writes mirror util-linux flock (strace on this machine); keep the
    # assumption visible: the real binary splits its message into more than one write().
    real = subprocess.run(
        ["strace", "-f", "-e", "trace=write", "flock", "-n", "-x", "/nonexistent/x", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if real.returncode == 127 or "write(2" not in real.stderr:
        missing("strace or flock is missing (apt-get install strace util-linux)")
    writes = [ln for ln in real.stderr.split("\n") if ln.startswith("write(2,")]
    assert len(writes) >= 2, real.stderr
