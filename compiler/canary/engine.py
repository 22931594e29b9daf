"""Docker engine helpers for canaries: the client, the hardened run settings, labels and cleanup."""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profilec.errors import EnvironmentMissingError
from profilec.resources import shipped

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

#: Every canary container, volume and network carries this label (value "1").
LABEL = "profilec.canary"
#: ...and this one, whose value is the run id that `cleanup` removes by.
RUN_LABEL = f"{LABEL}.run"
#: The uid canaries run as when the host user is root (any non-root uid works; see README).
CANARY_UID = 10001
#: Where the pinned Codex's platform directory (bin/, codex-resources/bwrap) is mounted read-only.
CODEX_MOUNT = "/opt/codex"
#: CODEX_HOME inside the container: a private tmpfs owned by the run uid, outside TMPDIR.
CODEX_HOME = "/codex-home"
#: The custom seccomp profile (package data): Docker's default plus the namespace syscalls
#: bubblewrap needs.
SECCOMP_FILE = ("canaries", "seccomp.json")


def docker_client(timeout: int = 30) -> DockerClient:
    """A client for the local engine; EnvironmentMissingError when none answers."""
    try:
        import docker
        import docker.errors
    except ImportError as exc:
        raise EnvironmentMissingError(
            "python package 'docker' is not installed", hint="pip install 'profilec[canary]'"
        ) from exc
    where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise EnvironmentMissingError(
            f"no docker engine answers at {where}: {str(exc).splitlines()[0][:200]}",
            hint="run .ci/tools.sh to install and start one",
        ) from exc
    return client


def new_run_id() -> str:
    """A fresh random run id (12 hex digits) for labelling one canary run's objects."""
    return secrets.token_hex(6)


def run_labels(run_id: str) -> dict[str, str]:
    """The labels every object of run `run_id` carries."""
    return {LABEL: "1", RUN_LABEL: run_id}


def run_uid() -> int:
    """The uid canary containers run as: the caller's own uid, or CANARY_UID when that is root."""
    uid = os.getuid()
    return uid if uid != 0 else CANARY_UID


def seccomp_profile(path: Path | None = None) -> str:
    """The custom seccomp profile as compact JSON, ready for `security_opt=["seccomp=..."]`."""
    if path is None:
        path = shipped(*SECCOMP_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EnvironmentMissingError(f"cannot load seccomp profile {path}: {exc}") from exc
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def run_settings(run_id: str | None = None, *, uid: int | None = None) -> dict[str, Any]:
    """Keyword arguments for `containers.run/create`: the narrowest settings Codex's bwrap needs."""
    u = run_uid() if uid is None else uid
    settings: dict[str, Any] = {
        "user": f"{u}:{u}",
        "network_mode": "none",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges", f"seccomp={seccomp_profile()}"],
        "read_only": True,
        "ipc_mode": "none",
        "pids_limit": 256,
        "tmpfs": {
            "/tmp": "rw,nosuid,nodev,noexec,size=64m,mode=1777",
            CODEX_HOME: f"rw,nosuid,nodev,noexec,size=64m,mode=0700,uid={u},gid={u}",
        },
        "environment": {
            "PATH": "/bin",
            "HOME": CODEX_HOME,
            "CODEX_HOME": CODEX_HOME,
            "TMPDIR": "/tmp",
        },
    }
    if run_id is not None:
        settings["labels"] = run_labels(run_id)
    return settings


def codex_mount(binary: Path) -> tuple[dict[str, dict[str, str]], str]:
    """A read-only bind of codex's platform dir (bin/, codex-resources/) and its inner path."""
    binary = binary.resolve()
    platform_dir = binary.parent.parent
    rel = binary.relative_to(platform_dir).as_posix()
    return {str(platform_dir): {"bind": CODEX_MOUNT, "mode": "ro"}}, f"{CODEX_MOUNT}/{rel}"


# The engine sometimes hands back an exec's output empty or cut short with the right exit code
# (docker-py issues 2042 and 3332; seen here under load: a trusted `cat` of the marker, exit 0,
# no marker in the output, once with the end line present). Every exec therefore runs inside a
# frame: a shell that prints a fresh random token's begin line, runs the command with its stderr
# on its stdout (the engine carries the two as separate streams and does not keep their order:
# seen here, a probe's stderr arriving after the frame's last line), and then prints the token's
# end line with the exit code. Output that does not start with the begin line and end with the
# end line is incomplete, never judged as if it were the command's whole output.
FRAME = (
    'printf \'%s-BEGIN\\n\' "$0"; rc=0; "$@" 2>&1 || rc=$?; '
    'printf \'\\n%s %s\\n\' "$0" "$rc"; exit "$rc"'
)


@dataclass(frozen=True, slots=True)
class ExecResult:
    """One framed exec: exit code (`rc_known`: the engine reported the command ended with it),
    output (the frame's lines removed), whether the output arrived whole, and how many runs it
    took."""

    rc: int
    out: str
    whole: bool
    attempts: int
    rc_known: bool = True


#: How long to wait, after an exec's output stream ended, for the engine to report it ended.
EXIT_WAIT_SECONDS = 120.0


def exit_code(api: Any, exec_id: str) -> int | None:
    """The exec's exit code once the engine says it has ended; None if it never says so. The
    output stream can end before the command does (the cut-short output above), and docker-py's
    exec_run then reports exit 0; the engine's own record is asked until it is final."""
    deadline = time.monotonic() + EXIT_WAIT_SECONDS
    pause = 0.01
    while True:
        info = api.exec_inspect(exec_id)
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        if time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.5)


def framed(argv: Sequence[str]) -> tuple[str, list[str]]:
    """A fresh frame token and the argv that runs `argv` inside the frame."""
    token = f"PROFILEC-EXEC-{secrets.token_hex(8)}"
    return token, ["sh", "-c", FRAME, token, *argv]


def unframe(out: str, token: str, rc: int | None) -> str | None:
    """The command's output without the frame's lines; None when it did not arrive whole (the
    begin line or the end line with the engine's exit code `rc` is missing)."""
    head, tail = f"{token}-BEGIN\n", f"\n{token} {rc}\n"
    if rc is None or not out.startswith(head) or not out.endswith(tail):
        return None
    if len(out) < len(head) + len(tail):
        return None
    return out[len(head) : -len(tail)]


#: The start of the note on output that came back incomplete.
INCOMPLETE = "[profilec: the engine returned this command's output incomplete"


def incomplete(runs: int, rc: int | None) -> str:
    """The note appended to output that came back incomplete."""
    note = f"\n{INCOMPLETE}, {runs} run(s)"
    return note + ("]" if rc is not None else "; it never reported the command ended]")


def exec_framed(
    container: Container,
    argv: Sequence[str],
    env: dict[str, str] | None = None,
    *,
    attempts: int = 1,
) -> ExecResult:
    """Run `argv` in `container` inside the frame; when the output comes back incomplete, run it
    again, up to `attempts` runs in all (only for commands that may run twice: reads). The exit
    code is the engine's record of the ended command, whether or not the output came whole."""
    api: Any = container.client.api  # type: ignore[union-attr]  # a model from a client
    rc: int | None = None
    out = ""
    for n in range(1, attempts + 1):
        token, cmd = framed(argv)
        created = api.exec_create(container.id, cmd, stdout=True, stderr=True, environment=env)
        exec_id = created["Id"]
        raw = api.exec_start(exec_id)
        out = (raw if isinstance(raw, bytes) else b"").decode("utf-8", "replace")
        rc = exit_code(api, exec_id)
        inner = unframe(out, token, rc)
        if rc is not None and inner is not None:
            return ExecResult(rc, inner, True, n)
    note = incomplete(attempts, rc)
    return ExecResult(rc if rc is not None else -1, out + note, False, attempts, rc is not None)


def _label_filter(run_id: str | None) -> dict[str, Any]:
    """The docker `filters` argument matching one run's objects, or every canary object."""
    return {"label": f"{RUN_LABEL}={run_id}" if run_id is not None else LABEL}


def cleanup(client: DockerClient, run_id: str) -> list[str]:
    """Remove every container, volume and network labelled with `run_id`; return what went."""
    removed: list[str] = []
    flt = _label_filter(run_id)
    for container in client.containers.list(all=True, filters=flt):
        container.remove(force=True, v=True)
        removed.append(f"container:{container.name}")
    for volume in client.volumes.list(filters=flt):
        volume.remove(force=True)
        removed.append(f"volume:{volume.name}")
    for network in client.networks.list(filters=flt):
        network.remove()
        removed.append(f"network:{network.name}")
    return removed


def leftovers(client: DockerClient, run_id: str | None = None) -> list[str]:
    """Labelled containers, volumes and networks still present (images are kept for reuse)."""
    flt = _label_filter(run_id)
    found = [f"container:{c.name}" for c in client.containers.list(all=True, filters=flt)]
    found += [f"volume:{v.name}" for v in client.volumes.list(filters=flt)]
    found += [f"network:{n.name}" for n in client.networks.list(filters=flt)]
    return found
