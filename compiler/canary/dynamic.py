"""Dynamic canaries: a model command keeps probing while the trusted side makes real Codex saves.

Static probes run one command at a time against a credential nobody writes. The real trusted
writer (research §1) saves by writing `.auth-XXXXXX` next to the real file and renaming it over
the file, under two locks (`$CODEX_HOME/auth.lock`, `auth.json.lock` beside the real file). A
rename detaches a file-deny mask inside every *running* sandbox (research §2), so these probes
keep a model command running across real saves:

* *refresh race* (`race-<root>`): a model command started under the compiled profile before
  any save reads every spelling of the credential, lists every directory of the chain it can
  list and opens every new file there, in a fork-free shell loop, until the trusted side says
  stop. Meanwhile the trusted side makes real saves through the synthetic private CODEX_HOME:
  a token refresh through `codex app-server` `account/read {"refreshToken": true}` against a
  loopback token endpoint in the container (`CODEX_REFRESH_TOKEN_URL_OVERRIDE`; the seeded
  auth.json holds unsigned JWTs whose access token has expired), then `codex login
  --with-api-key` (key on stdin). Each save is read back from outside (trusted) afterwards.
  Classes: `refresh-leak` (a marker read through a credential spelling), `temp-leak` (a marker
  read from, or a writer temp file opened in, a listed directory), `trusted` (a save did not
  persist its new value).
* *lock holding* (`lock-hold-<root>`): a model command tries to open and `flock` every lock the
  writer takes and holds what it gets; the trusted login must still persist within
  LOCK_SAVE_SECONDS. Classes: `lock-held` (the model holds a writer lock), `save-blocked`.

Markers: the seeded refresh token is the tree's own secret marker; the refresh endpoint answers
with a fresh `NEW` marker, the login key is a fresh `KEY` marker. Neither new marker is ever in a
file before Codex writes it: the endpoint gets its reply through its process environment, the
login its key through an exec environment (a sandboxed command sees neither: its own pid
namespace). busybox has no `flock`, so the host's util-linux `flock` is bind-mounted read-only
with its loader and libraries (FLOCK_MOUNT) and started through the loader.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EnvironmentMissingError
from ..models.canary import Probe
from ..models.compiled import CompiledBundle, ResolvedRoot
from . import engine
from .tree import LOCK_BESIDE_TARGET, LOCK_IN_HOME, TEMP_PREFIX

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

    from .tree import _Tree

#: The loopback port of the in-container token endpoint.
TOKEN_PORT = 17172
#: The trusted save under a model-held lock must persist within this many seconds.
LOCK_SAVE_SECONDS = 10.0
#: How long the trusted side waits for a model command to report it is running.
READY_SECONDS = 30.0
#: Where the host's `flock` (with its loader and libraries) is mounted read-only.
FLOCK_MOUNT = "/opt/profilec-flock"
#: A `-c` override for the trusted app-server: ChatGPT backend calls fail at once on loopback.
CHATGPT_BASE_URL = "chatgpt_base_url='http://127.0.0.1:9/backend-api/'"
#: Quick globs for the writer's temp name between two full passes of the race loop.
QUICK_CHECKS = 40


#: Every marker starts with this; the model loop prints only lines that contain it.
MARKER_PREFIX = "PROFILEC-CANARY-"


def _marker(kind: str) -> str:
    return f"{MARKER_PREFIX}{kind}-{secrets.token_hex(12)}"


# ---------------------------------------------------------------------------------------------
# Host-side helpers


def flock_mounts() -> tuple[dict[str, dict[str, str]], tuple[str, ...]]:
    """Read-only binds of the host's flock, its loader and libraries, and the argv prefix."""
    flock = shutil.which("flock")
    if flock is None:
        raise EnvironmentMissingError("no flock on the host", hint="apt-get install util-linux")
    real = os.path.realpath(flock)
    try:
        out = subprocess.run(
            ["ldd", real], capture_output=True, text=True, check=False, timeout=10
        ).stdout
    except OSError as exc:
        raise EnvironmentMissingError(f"cannot run ldd on {real}: {exc}") from exc
    libs: list[str] = []
    loader = ""
    for line in out.split("\n"):
        m = re.search(r"(/\S+)\s+\(0x", line)
        if m is None:
            continue
        path = m.group(1)
        if "=>" not in line:
            loader = path
        else:
            libs.append(path)
    volumes = {real: {"bind": f"{FLOCK_MOUNT}/flock", "mode": "ro"}}
    for lib in libs:
        volumes[os.path.realpath(lib)] = {
            "bind": f"{FLOCK_MOUNT}/{os.path.basename(lib)}",
            "mode": "ro",
        }
    if not loader:  # a static flock runs on its own
        return volumes, (f"{FLOCK_MOUNT}/flock",)
    volumes[os.path.realpath(loader)] = {"bind": f"{FLOCK_MOUNT}/ld.so", "mode": "ro"}
    return volumes, (f"{FLOCK_MOUNT}/ld.so", "--library-path", FLOCK_MOUNT, f"{FLOCK_MOUNT}/flock")


def _b64(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _jwt(claims: dict[str, Any]) -> str:
    """An unsigned JWT (alg none). Codex needs a non-empty third part to parse it."""
    return f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(claims)}.c2ln"


def _tokens(refresh: str, exp: int) -> dict[str, str]:
    auth = {
        "chatgpt_account_id": "acct-canary",
        "chatgpt_plan_type": "plus",
        "chatgpt_user_id": "user-canary",
        "user_id": "user-canary",
    }
    claims = {"exp": exp, "https://api.openai.com/auth": auth}
    return {
        "id_token": _jwt({**claims, "email": "canary@example.invalid"}),
        "access_token": _jwt(claims),
        "refresh_token": refresh,
    }


def seeded_auth(old_marker: str, now: int) -> str:
    """A ChatGPT-mode auth.json whose access token expired an hour ago (forces a refresh)."""
    seed = {
        "auth_mode": "chatgpt",
        "OPENAI_API_KEY": None,
        "tokens": {**_tokens(old_marker, now - 3600), "account_id": "acct-canary"},
        "last_refresh": "2020-01-01T00:00:00Z",
    }
    return json.dumps(seed, indent=2) + "\n"


def token_reply(new_marker: str, now: int) -> str:
    """The token endpoint's JSON reply: fresh tokens whose refresh token is `new_marker`."""
    return json.dumps(_tokens(new_marker, now + 3600), separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# Shell scripts run in the container


#: The token endpoint's per-connection handler: skip the request, answer $BODY, close.
TOKEN_HANDLER = (
    "cr=$(printf '\\r'); len=0; "
    'while IFS= read -r h; do h=${h%"$cr"}; [ -z "$h" ] && break; '
    'case "$h" in [Cc]ontent-[Ll]ength:*) len=${h#*:}; len=${len# };; esac; done; '
    '[ "$len" -gt 0 ] 2>/dev/null && head -c "$len" >/dev/null; '
    "printf 'HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: %s\\r\\n"
    'Connection: close\\r\\n\\r\\n%s\' "${#BODY}" "$BODY"'
)


def race_loop(
    spellings: Sequence[str], dirs: Sequence[str], stop: str, quick: int = QUICK_CHECKS
) -> str:
    """The model command of the refresh race: a fork-free busybox sh loop until `stop` exists.

    Every pass reads every spelling and prints each distinct line holding a marker
    (`S <path> <line>`); lists every dir, prints each name the first time it is seen
    (`N <path>`) and reads that file at once (`O <path>` once it is open, then `F <path> <line>`
    per marker line). Between passes it globs every dir `quick` times for the writer's temp
    name (`.auth-*`, alive ~1-6 ms per save) and opens what it finds the same way. Ends with
    `LOOP-END <passes>`.
    """
    q = shlex.quote
    sp = " ".join(q(s) for s in spellings)
    globs = " ".join(f"{q(d)}/* {q(d)}/.[!.]*" for d in dirs)
    temps = " ".join(f"{q(d)}/{TEMP_PREFIX}*" for d in dirs)
    common = os.path.commonpath(list(dirs)) if dirs else ""
    # Existence first (an unmatched glob stays literal), then the seen-list, keyed by the path
    # below the dirs' common parent: ash matches `*"|$k|"*` in time ~ len(seen) x len(k), and
    # full paths made one pass take ~0.7 s on a loaded machine.
    open_new = (
        '[ -e "$f" ] || [ -L "$f" ] || continue; k="${f#"$c"}"; '
        'case "$seen" in *"|$k|"*) continue;; esac; seen="$seen$k|"; echo "N $f"; '
        '[ -f "$f" ] || continue; { echo "O $f"; '
        'while IFS= read -r l || [ -n "$l" ]; do case "$l" in *' + MARKER_PREFIX + "*) "
        'echo "F $f $l";; esac; done; } 2>/dev/null <"$f"; '
    )
    return (
        f"stop={q(stop)}; c={q(common)}; seen='|'; printed='|'; n=0; last=0; echo LOOP-READY; "
        'while [ "$last" = 0 ] && [ "$n" -lt 2000000 ]; do n=$((n+1)); '
        '[ -e "$stop" ] && last=1; '
        f"for f in {sp}; do "
        'while IFS= read -r l || [ -n "$l" ]; do case "$l" in *' + MARKER_PREFIX + "*) "
        'case "$printed" in *"|$f $l|"*) ;; *) printed="$printed$f $l|"; echo "S $f $l";; esac;; '
        'esac; done 2>/dev/null <"$f"; done; '
        f"for f in {globs}; do {open_new}done; "
        f"j=0; while [ $j -lt {int(quick)} ]; do j=$((j+1)); "
        f"for f in {temps}; do {open_new}done; done; "
        'done; echo "LOOP-END $n"'
    )


def lock_hold(flock: Sequence[str], locks: Sequence[str], stop: str) -> str:
    """The model command of the lock probe: take every lock it can, hold them until `stop`.

    Each attempt prints exactly one line first (`HELD <lock>` or `NOT-HELD <lock> rc=N`) into a
    pipe; `LOCKS-TRIED` follows only once every attempt has reported, so the trusted save never
    starts before the model's locks are taken (a fixed `sleep 1` lost that race on a loaded
    machine: the save was blocked, yet the probe saw no HELD line). A pipe needs no writable
    directory, so this works in read-only mode too.

    Each attempt's stderr is kept out of the shared output and reported on its own line: flock
    writes an error in three write() calls (`flock: `, the message, `: <reason>`), and another
    attempt's `HELD` line landed between them beside two busy loops (`flock: HELD ...`), so the
    probe missed a lock the model held.
    """
    q = shlex.quote
    fl = " ".join(q(a) for a in flock)
    jobs = []
    for lock in locks:
        hold = f"echo HELD {q(lock)}; while [ ! -e {q(stop)} ]; do usleep 50000; done"
        attempt = (
            f"{{ e=$({fl} -n -x {q(lock)} sh -c {q(hold)} 2>&1 >&3); rc=$?; "
            f'[ "$rc" -eq 0 ] || echo NOT-HELD {q(lock)} '
            '"rc=$rc $(printf %s "$e" | tr "\\n" " ")"; } 3>&1'
        )
        jobs.append(f"( {attempt} ) &")
    reader = (
        'n=0; while IFS= read -r l; do echo "$l"; n=$((n+1)); '
        f'[ "$n" -eq {len(locks)} ] && echo LOCKS-TRIED; done; echo LOCK-END'
    )
    return f"{{ {' '.join(jobs)} wait; }} | {{ {reader}; }}"


def refresh_script(codex: str, home: str, out: str) -> str:
    """Trusted: one `codex app-server` session that asks for a token refresh, then ends.

    The app-server is SIGKILLed once `account/read` has answered (after SIGTERM or a closed
    stdin it waits ~5 s for background tasks); `chatgpt_base_url` points at a closed loopback
    port so nothing waits for a network the container lacks (15 s per session otherwise).
    """
    q = shlex.quote
    wait = (
        f"i=0; until grep -q '\"id\":2' {q(out)} || [ $i -ge 400 ]; "
        "do usleep 25000; i=$((i+1)); done"
    )
    return (
        f": > {q(out)}; "
        f'{{ printf "%s\\n" "$M1" "$M2" "$M3"; {wait}; }} '
        f"| CODEX_HOME={q(home)} {q(codex)} app-server -c {q(CHATGPT_BASE_URL)} "
        f"> {q(out)} 2>{q(out)}.err & p=$!; {wait}; kill -KILL $p 2>/dev/null; wait; "
        f"cat {q(out)}; tail -c 2000 {q(out)}.err >&2; grep -q '\"id\":2' {q(out)}"
    )


def refresh_messages() -> dict[str, str]:
    """The app-server JSON-RPC lines (env M1..M3): initialize, initialized, account/read."""
    msgs = (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "profilec-canary", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "account/read", "params": {"refreshToken": True}},
    )  # fmt: skip
    return {f"M{i}": json.dumps(m, separators=(",", ":")) for i, m in enumerate(msgs, 1)}


def login_script(codex: str, home: str, timeout: float | None = None) -> str:
    """Trusted: `codex login --with-api-key` with the key ($KEY) on stdin, killed at `timeout`."""
    q = shlex.quote
    kill = f"timeout -s KILL {int(timeout)} " if timeout else ""
    return f'printf "%s" "$KEY" | CODEX_HOME={q(home)} {kill}{q(codex)} login --with-api-key'


# ---------------------------------------------------------------------------------------------
# Running commands in the container


class Streamed:
    """A command running in the container inside engine.exec_framed's frame, its output
    collected by a thread. After `finish` the exit code is the engine's record of the ended
    command and `output()` is whole, or carries engine.incomplete's note."""

    def __init__(self, client: DockerClient, container: Container, cmd: Sequence[str]) -> None:
        self._api: Any = client.api
        self.cmd = tuple(cmd)
        self._token, argv = engine.framed(cmd)
        self._id = self._api.exec_create(container.id, argv, stdout=True, stderr=True)["Id"]
        self._buf: list[bytes] = []
        self._lock = threading.Lock()
        self.rc: int | None = None
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        for chunk in self._api.exec_start(self._id, stream=True):
            with self._lock:
                self._buf.append(chunk)

    def text(self) -> str:
        """What has arrived so far, frame lines included."""
        with self._lock:
            return b"".join(self._buf).decode("utf-8", "replace")

    def wait_for(self, needle: str, seconds: float) -> bool:
        """True once `needle` is in the output; False on timeout or when the command ended."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if needle in self.text():
                return True
            if not self._thread.is_alive():
                return needle in self.text()
            time.sleep(0.02)
        return False

    def finish(self, seconds: float) -> int | None:
        """Wait for the stream's end, then for the engine's record; the exit code, or None when
        the command is still running."""
        self._thread.join(seconds)
        if self._thread.is_alive():
            return None
        self.rc = engine.exit_code(self._api, self._id)
        return self.rc

    @property
    def whole(self) -> bool:
        return engine.unframe(self.text(), self._token, self.rc) is not None

    def output(self) -> str:
        """The command's output without the frame, or all that arrived and the note."""
        text = self.text()
        inner = engine.unframe(text, self._token, self.rc)
        return inner if inner is not None else text + engine.incomplete(1, self.rc)


def _exec(
    container: Container, script: str, env: dict[str, str] | None = None
) -> tuple[int, str, float]:
    """Run once (the saves and races are not repeatable); output the engine returned
    incomplete carries engine.exec_framed's note, so no marker check reads it as whole."""
    t0 = time.monotonic()
    res = engine.exec_framed(container, ["sh", "-c", script], env)
    return res.rc, res.out, time.monotonic() - t0


# ---------------------------------------------------------------------------------------------
# The probes


@dataclass(frozen=True)
class Target:
    """The credential the trusted writer saves: the private CODEX_HOME/auth.json and its chain."""

    root_id: str
    link: str  # <tree>/<private CODEX_HOME>/auth.json
    secret: str  # <tree>/<real target>
    vault: str  # the directory that holds the real target
    home: str  # <tree>/<private CODEX_HOME>
    spellings: tuple[str, ...]
    dirs: tuple[str, ...]


def target_for(bundle: CompiledBundle, tree: _Tree, home_real: str) -> Target | None:
    """The file root the trusted writer saves (the one at CODEX_HOME/auth.json), if any."""
    want = home_real.rstrip("/") + "/auth.json"
    roots: list[ResolvedRoot] = [r for r in bundle.roots if r.kind == "file"]
    root = next((r for r in roots if r.path == want), None)
    if root is None:
        return None
    secret = tree.at(root.target)
    spellings = tuple(dict.fromkeys(tree.at(s) for s in root.spellings))
    spellings = tuple(s for s in spellings if not os.path.isdir(s))
    dirs = [os.path.dirname(s) for s in spellings] + [os.path.dirname(secret), tree.codex_home]
    return Target(
        root.id,
        tree.at(root.path),
        secret,
        os.path.dirname(secret),
        tree.codex_home,
        spellings,
        tuple(dict.fromkeys(dirs)),
    )


def _persisted(container: Container, target: Target, needle: str) -> tuple[bool, str]:
    rc, out, _ = _exec(container, f"cat {shlex.quote(target.secret)}")
    return rc == 0 and needle in out, out


def _probe(
    name: str,
    kind: str,
    cmd: Sequence[str],
    rc: int,
    output: str,
    failures: Sequence[str],
    observed: str,
    expected: str = "deny",
) -> Probe:
    fails = tuple(dict.fromkeys(failures))
    return Probe(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        command=tuple(cmd),
        exit_code=rc,
        output=output[-4000:],
        expected=expected,  # type: ignore[arg-type]
        predicted=None,
        observed=observed,  # type: ignore[arg-type]
        ok=not fails,
        failures=fails,
    )


def classify_race(output: str, target: Target, markers: Sequence[str]) -> list[str]:
    """Failure classes of a race loop's output (see the module docstring)."""
    failures: list[str] = []
    for line in output.split("\n"):
        kind, _, rest = line.partition(" ")
        if kind == "S" and any(m in rest for m in markers):
            failures.append("refresh-leak")
        elif kind in ("N", "O") and os.path.basename(rest).startswith(TEMP_PREFIX):
            failures.append("temp-leak")
        elif kind == "F" and any(m in rest for m in markers):
            failures.append("temp-leak" if TEMP_PREFIX in rest.split(" ", 1)[0] else "refresh-leak")
    return list(dict.fromkeys(failures))


def condense(output: str) -> str:
    """The race output worth keeping: every marker line, every writer temp name, a count of the
    other names listed, and the loop's own READY/END lines."""
    keep: list[str] = []
    other = 0
    for line in output.split("\n"):
        kind, _, rest = line.partition(" ")
        if kind in ("N", "O") and not os.path.basename(rest).startswith(TEMP_PREFIX):
            other += 1
        elif line:
            keep.append(line)
    keep.append(f"({other} other names listed or opened)")
    return "\n".join(keep)


def run_dynamic(
    client: DockerClient,
    container: Container,
    tree: _Tree,
    bundle: CompiledBundle,
    home_real: str,
    sandbox: Sequence[str],
    codex: str,
    flock: Sequence[str],
    *,
    saves: int = 1,
) -> list[Probe]:
    """The refresh race and the lock probe for the bundle's private auth.json (none: [])."""
    target = target_for(bundle, tree, home_real)
    if target is None:
        return []
    probes = race(client, container, tree, target, sandbox, codex, saves=saves)
    held = lock_probe(client, container, tree, target, sandbox, codex, flock)
    if engine.INCOMPLETE in held[0].output:
        # The model's output came back cut: the probe cannot decide, and it may run again
        # (fresh key and stop file). The race may not: its token endpoint keeps its reply.
        held = lock_probe(client, container, tree, target, sandbox, codex, flock)
    return probes + held


def _seed(target: Target, old: str, uid: int) -> None:
    path = Path(target.secret)
    path.write_text(seeded_auth(old, int(time.time())), encoding="utf-8")
    os.chmod(path, 0o600)
    if os.getuid() == 0:
        os.lchown(path, uid, uid)


def _save(
    container: Container,
    target: Target,
    name: str,
    script: str,
    env: dict[str, str],
    needle: str,
    *,
    need_rc: bool = True,
    limit: float | None = None,
    fail: str = "trusted",
) -> Probe:
    """One trusted save (`script`) and its check from outside: `needle` must be in the real
    file (with exit 0 when `need_rc`, within `limit` seconds when given), else class `fail`."""
    rc, out, secs = _exec(container, script, env)
    ok, _ = _persisted(container, target, needle)
    good = ok and (rc == 0 or not need_rc) and (limit is None or secs <= limit)
    return _probe(
        name,
        "trusted",
        ("sh", "-c", script),
        rc,
        f"{secs:.2f}s persisted={ok}\n{out}",
        [] if good else [fail],
        "allow" if (good if limit is not None else ok) else "deny",
        "allow",
    )


def _beside_model(
    client: DockerClient,
    container: Container,
    name: str,
    cmd: Sequence[str],
    stop: str,
    lines: tuple[str, str],
    trusted: Callable[[], list[Probe]],
    judge: Callable[[str], tuple[list[str], str, str]],
) -> list[Probe]:
    """Run the model command `cmd` (it prints `lines[0]` once it is running, `lines[1]` at its
    end, and ends once `stop` exists), make the `trusted` saves meanwhile, then judge the
    model's whole output: `judge(output)` gives (failure classes, the output to keep, observed).
    A model command that does not start gets no saves and is an `error` (a sandbox Codex
    refuses, a stalled engine); so is one whose output did not come back whole."""
    stream = Streamed(client, container, cmd)
    try:
        if not stream.wait_for(lines[0], READY_SECONDS):
            return [_probe(name, "model", cmd, -1, stream.text(), ["error"], "deny")]
        probes = trusted()
    finally:
        _exec(container, f"touch {shlex.quote(stop)}")
    rc = stream.finish(READY_SECONDS)
    text = stream.output()
    fails, shown, observed = judge(text)
    if rc is None or not stream.whole or lines[1] not in text:
        fails.append("error")
    return [_probe(name, "model", cmd, -1 if rc is None else rc, shown, fails, observed), *probes]


def _stop_file(tree: _Tree) -> str:
    return f"{tree.workspace}/.canary-stop-{secrets.token_hex(4)}"


def race(
    client: DockerClient,
    container: Container,
    tree: _Tree,
    target: Target,
    sandbox: Sequence[str],
    codex: str,
    *,
    saves: int = 1,
) -> list[Probe]:
    """The refresh race: real refresh and login saves while the model loop runs."""
    old = tree.marker
    new = _marker("NEW")
    keys = [_marker("KEY") for _ in range(saves)]
    _seed(target, old, engine.run_uid())
    stop = _stop_file(tree)
    container.exec_run(
        ["nc", "-ll", "-p", str(TOKEN_PORT), "-e", "sh", "-c", TOKEN_HANDLER],
        detach=True,
        environment={"BODY": token_reply(new, int(time.time()))},
    )
    root = target.root_id

    def the_saves() -> list[Probe]:
        env = {
            **refresh_messages(),
            "CODEX_REFRESH_TOKEN_URL_OVERRIDE": f"http://127.0.0.1:{TOKEN_PORT}/oauth/token",
        }
        out_file = f"/tmp/appserver-{secrets.token_hex(4)}.jsonl"
        script = refresh_script(codex, target.home, out_file)
        made = [_save(container, target, f"save-refresh-{root}", script, env, new, need_rc=False)]
        for i, key in enumerate(keys):
            name = f"save-login-{root}" + (f"-{i}" if i else "")
            script = login_script(codex, target.home)
            made.append(_save(container, target, name, script, {"KEY": key}, key))
        return made

    def judge(text: str) -> tuple[list[str], str, str]:
        fails = classify_race(text, target, [old, new, *keys])
        return fails, condense(text), "allow" if any(f.endswith("leak") for f in fails) else "deny"

    cmd = (*sandbox, race_loop(target.spellings, target.dirs, stop))
    lines = ("LOOP-READY", "LOOP-END")
    return _beside_model(client, container, f"race-{root}", cmd, stop, lines, the_saves, judge)


def lock_probe(
    client: DockerClient,
    container: Container,
    tree: _Tree,
    target: Target,
    sandbox: Sequence[str],
    codex: str,
    flock: Sequence[str],
) -> list[Probe]:
    """The model holds every writer lock it can; the trusted login must persist in time."""
    locks = (f"{target.vault}/{LOCK_BESIDE_TARGET}", f"{target.home}/{LOCK_IN_HOME}")
    stop = _stop_file(tree)
    key = _marker("KEY")

    def the_save() -> list[Probe]:
        script = login_script(codex, target.home, timeout=LOCK_SAVE_SECONDS)
        name = f"save-under-lock-{target.root_id}"
        env = {"KEY": key}
        return [
            _save(
                container,
                target,
                name,
                script,
                env,
                key,
                limit=LOCK_SAVE_SECONDS,
                fail="save-blocked",
            )
        ]

    def judge(text: str) -> tuple[list[str], str, str]:
        held = [ln for ln in text.split("\n") if ln.startswith("HELD ")]
        return (["lock-held"] if held else []), text, "allow" if held else "deny"

    cmd = (*sandbox, lock_hold(flock, locks, stop))
    lines = ("LOCKS-TRIED", "LOCK-END")
    return _beside_model(
        client, container, f"lock-hold-{target.root_id}", cmd, stop, lines, the_save, judge
    )
