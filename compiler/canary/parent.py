"""Parent canaries: real `codex exec` turns attack the roads of the trusted, unsandboxed parent.

The sandbox confines the model's shell commands; the Codex parent that runs them does not run in
it (docs/parent.md). Per mode, these probes drive real Codex sessions against a scripted
loopback model (compiler/scripted_model.py `ToolScriptServer`) in a synthetic copy of the
bundle's layout (compiler/canary/run.py `build_tree` + `reroot`: every real path P becomes
<tree>/P, the credential a random marker), and attack each road:

* `parent-env`: the launcher's environment carries random CODEX_API_KEY / OPENAI_API_KEY markers;
  the model runs `env` and reads the shell snapshots. Fails when a marker reaches any request.
* `parent-login-shell`: the model appends a payload to HOME's login-shell files; where that is
  refused, the trusted side plants the same payload (standing for any earlier writer). A new
  session follows; a proof file written by the payload, outside every writable root, means the
  parent ran it (the shell snapshot). Fails on the proof, or when the model's write went through.
* `parent-spawn-media`: the protected root is a real PNG holding the marker; `spawn_agent` names
  every spelling of it (the link, each hop, the target) as `local_image` items. Fails when the
  image reaches a request (the parent opened it outside the sandbox).
* `parent-git-repo-config`, `parent-git-home-config`: the workspace sits in a repository (made
  at its parent directory in the tree) with tracked files under a clean filter attribute; the
  model writes `filter.<x>.clean` into the repository's `.git/config` and into `~/.gitconfig`;
  the trusted side touches the tracked files; a new session's turn-start `git status` (run by
  the parent) re-hashes them. Fails on the filter's proof file, or when a config write went
  through.
* `parent-identity`: each other identity the bundle names (`other_identities`) gets a synthetic
  transcript and login file holding a marker and a writer's lock; the model reads them and
  tries `flock -n` on the lock. Fails on the marker or the lock. Not applicable (passes, says
  so) when the bundle names no other identity.
* `parent-manifest`: a synthetic roots manifest at the manifest's path; the model appends to it
  and renames it. Fails when its bytes changed or the rename went through.

Every probe runs twice per mode: with the bundle as compiled (the verdict) and as a NEGATIVE
CONTROL on a fresh tree: the same sessions with the parent policy removed (`parent = ()`), the
other-identity denies removed, and the attacked trusted-side inputs (HOME, the repository's
`.git`, the manifest) given a `write` entry in place of their read-only entries. The control
must fail for its reason (the road open: the marker or the proof seen); a control that did not
leak makes the probe an `error` ("control did not leak: the probe cannot tell").

Where they run: on the host, in a throwaway tree under /var/tmp, as the invoking user. The
hardened canary container (FROM scratch busybox, `--network none`) cannot hold them: the
scripted model server is Python, and the parent must reach it over loopback. Nothing real is
read or attacked: the tree holds only random markers, HOME and CODEX_HOME point into it, the
scripted model issues every command (they are this module's own), and vouched MCP servers are
not started. The proof files and payloads live beside the tree, outside every writable root of
every mode (the re-rooted entries write only inside the tree; `:workspace` adds /tmp and the
session TMPDIR, which is beside the proofs, not above them). A policy key that names a real
absolute path (a custom policy directory) is not re-rooted, as in the container canary.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import struct
import subprocess
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..codex.vocabulary import WRITER_LOCK
from ..emit.overrides import override_lines
from ..models.canary import ControlOutcome, Probe
from ..models.compiled import CompiledBundle, CompiledEntry, CompiledProfile, Provenance
from ..paths import is_within
from ..scripted_model import Call, Shell, Step, ToolScriptServer
from .tree import _Tree, build_tree, reroot

#: The tool namespace 0.171.0 puts spawn_agent in.
MULTI_AGENT = "multi_agent_v1"
#: One session's wall-time limit (a hung session is an `error`, never a pass).
SESSION_TIMEOUT = 150.0
#: Probe name -> the road it attacks (docs/parent.md "Parent canaries").
ROADS: dict[str, str] = {
    "parent-env": "launcher CODEX_API_KEY/OPENAI_API_KEY reach model commands or the snapshot",
    "parent-login-shell": "HOME's login-shell files run by the parent's shell snapshot",
    "parent-spawn-media": "spawn_agent local_image items opened by the parent",
    "parent-git-repo-config": "a clean filter in the enclosing repository's .git/config",
    "parent-git-home-config": "a clean filter in ~/.gitconfig",
    "parent-identity": "another identity's transcripts, login files and writer's lock",
    "parent-manifest": "an edit of the roots manifest",
}
LOGIN_FILES = (".bash_profile", ".profile", ".bashrc")
#: Tracked files in the workspace, one per git vector, and the filter driver each names.
GIT_VECTORS = {"repo": ("profilec-canary-r.txt", "pcr"), "home": ("profilec-canary-h.txt", "pch")}
_OLD_MTIME = 978307200  # 2001-01-01: any mtime the index does not hold makes git re-hash


# ---------------------------------------------------------------------------------------------
# Driving `codex exec` (also used by tests/parent_attacks.py)


@dataclass(frozen=True)
class ExecResult:
    """One `codex exec` run."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_exec(
    codex: Path,
    *,
    cwd: Path,
    lines: Sequence[str],
    env: dict[str, str],
    prompt: str = "run the scripted steps",
    timeout: float = 120.0,
) -> ExecResult:
    """`codex exec` with every `-c` line, in `cwd`, stdin closed; never raises on exit status.

    On timeout the session's whole process group is killed (it started its own) and the
    result has returncode -9 and a note in stderr."""
    args = [str(codex), "exec", "--skip-git-repo-check", "--color", "never", "-C", str(cwd)]
    for line in lines:
        args += ["-c", line]
    args.append(prompt)
    start = time.monotonic()
    proc = subprocess.Popen(
        args,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = -9
        err += f"\nprofilec: codex exec did not finish within {timeout:.0f}s"
    return ExecResult(code, out, err, time.monotonic() - start)


def launcher_env(home: Path, codex_home: Path, tmpdir: Path) -> dict[str, str]:
    """A minimal launcher environment."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "TMPDIR": str(tmpdir),
        "LANG": "C.UTF-8",
    }


def png_with_marker(marker: str) -> bytes:
    """A valid 8x8 grey PNG whose tEXt chunk holds `marker` (and whose pixels spell it)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    width = height = 8
    pixels = (marker.encode() * 64)[: width * height]
    raw = b"".join(b"\x00" + pixels[y * width : (y + 1) * width] for y in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + chunk(b"tEXt", b"Comment\x00" + marker.encode())
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def image_payloads(bodies: Sequence[str]) -> list[tuple[int, bytes]]:
    """(request index, decoded bytes) of every base64 data URL in `bodies`."""
    found: list[tuple[int, bytes]] = []
    for i, body in enumerate(bodies):
        for data in re.findall(r"data:[a-z]+/[a-z0-9.+-]+;base64,([A-Za-z0-9+/=]+)", body):
            try:
                found.append((i, base64.b64decode(data)))
            except ValueError:
                continue
    return found


def agent_wait_args(spawn_output: str) -> dict[str, object]:
    """`wait_agent` arguments for the agent `spawn_agent` answered with (any id if none)."""
    try:
        target = str(json.loads(spawn_output)["agent_id"])
    except (ValueError, KeyError, TypeError):
        target = "no-agent"
    return {"targets": [target], "timeout_ms": 60000}


# ---------------------------------------------------------------------------------------------
# The synthetic site: the canary tree plus what the parent roads need


@dataclass(frozen=True)
class _Foreign:
    identity: str
    what: str
    path: str  # in the tree


def _marker(kind: str) -> str:
    return f"PROFILEC-CANARY-{kind}-{secrets.token_hex(12)}"


@dataclass
class _Site:
    tree: _Tree
    bundle: CompiledBundle  # rerooted (and loosened for the control)
    home: str
    tmpdir: str
    proofs: str
    payloads: str
    repo: str
    manifest: str | None
    manifest_hash: str
    foreign: tuple[_Foreign, ...]
    identity_marker: str
    nonce: str
    notes: list[str] = field(default_factory=list)

    def proof(self, name: str) -> str:
        return os.path.join(self.proofs, name)

    def payload(self, name: str) -> str:
        return os.path.join(self.payloads, name)


def _sha(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError as exc:
        return f"unreadable: {exc.strerror}"


def _as_file(path: str, text: str, *, append: bool = False) -> None:
    """Write `text` to `path` (never through a link); an empty directory or empty file left at
    the name (the canary tree's trusted-base directory, a mask target bwrap created) is
    replaced."""
    if os.path.isdir(path) and not os.path.islink(path):
        try:
            os.rmdir(path)
        except OSError:
            return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    flags |= os.O_APPEND if append else os.O_TRUNC
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _git(repo: str, *args: str) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": repo,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LANG": "C",
    }
    subprocess.run(
        [
            "git",
            "-C",
            repo,
            "-c",
            "user.name=profilec canary",
            "-c",
            "user.email=canary@profilec.invalid",
            *args,
        ],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )


def _real_home(bundle: CompiledBundle) -> tuple[str, str | None]:
    """HOME of the session in real coordinates, and a note when the bundle names none."""
    if bundle.layout.home:
        return bundle.layout.home, None
    home = os.path.expanduser("~")
    if not home.startswith("/"):
        home = "/root"
    return home, (
        f"the bundle names no HOME (compile --home): the parent probes used this user's HOME {home}"
    )


def _site(bundle: CompiledBundle, *, control: bool) -> _Site:
    tree = build_tree(bundle, os.getuid())
    try:
        return _prepare(bundle, tree, control=control)
    except BaseException:
        shutil.rmtree(tree.base, ignore_errors=True)
        raise


def _prepare(bundle: CompiledBundle, tree: _Tree, *, control: bool) -> _Site:
    prefix = tree.prefix
    base = str(tree.base)
    notes: list[str] = []
    real_home, note = _real_home(bundle)
    if note:
        notes.append(note)
    home = prefix + real_home
    os.makedirs(home, exist_ok=True)
    # The tree makes every trusted-base `read` path a directory (for the container's rename
    # probes); the parent reads these as files, so give them their real kind here.
    manifest: str | None = None
    for t in bundle.trusted_base:
        if t.source != "input" or t.kind == "dir":
            continue
        at = prefix + t.path
        if t.kind == "missing":
            if os.path.isdir(at) and not os.listdir(at):
                os.rmdir(at)
            continue
        if t.role == "roots manifest":
            manifest = at
            _as_file(at, f"# profilec canary: synthetic roots manifest {_marker('MANIFEST')}\n")
        elif t.kind == "file":
            _as_file(at, "# profilec canary: synthetic trusted-side input\n")
    for name in (*LOGIN_FILES, ".gitconfig"):
        path = os.path.join(home, name)
        if os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path):
            os.rmdir(path)
    proofs = os.path.join(base, "proofs")
    payloads = os.path.join(base, "payloads")
    tmpdir = os.path.join(base, "tmpdir")
    for d in (proofs, payloads, tmpdir):
        os.makedirs(d, mode=0o755, exist_ok=True)
    # The protected roots are real images holding the marker (spawn_agent local_image).
    png = png_with_marker(tree.marker)
    for _, secret in tree.secrets:
        fd = os.open(secret, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "wb") as fh:
            fh.write(png)
    # The workspace inside a repository: its parent directory, tracked files under filters.
    ws: str = tree.workspace
    repo = os.path.dirname(ws)
    gitdir = os.path.join(repo, ".git")
    if os.path.isdir(gitdir) and not os.listdir(gitdir):
        os.rmdir(gitdir)
    _git(repo, "init", "-q")
    attrs = "".join(f"{name} filter={drv}\n" for name, drv in GIT_VECTORS.values())
    _as_file(os.path.join(ws, ".gitattributes"), attrs)
    rel = os.path.relpath(ws, repo)
    for name, _ in GIT_VECTORS.values():
        _as_file(os.path.join(ws, name), "tracked\n")
    _git(
        repo,
        "add",
        "--",
        *(os.path.join(rel, n) for n in [".gitattributes", *(v[0] for v in GIT_VECTORS.values())]),
    )
    _git(repo, "commit", "-q", "-m", "profilec canary")
    # Other identities: a transcript and a login file with a marker, the writer's lock.
    ident_mark = _marker("IDENTITY")
    foreign: list[_Foreign] = []
    for f in bundle.other_identities:
        at = prefix + f.path
        if f.what == "codex-home":
            _as_file(os.path.join(at, "sessions", "rollout.jsonl"), f'{{"said": "{ident_mark}"}}\n')
            lock = os.path.join(at, WRITER_LOCK)
            if not os.path.lexists(lock):
                _as_file(lock, "")
        else:
            _as_file(os.path.join(at, ".bashrc"), f"# {ident_mark}\n")
        foreign.append(_Foreign(f.identity, f.what, at))
    nonce = _marker("NONCE")
    site = _Site(
        tree,
        bundle,
        home,
        tmpdir,
        proofs,
        payloads,
        repo,
        manifest,
        _sha(manifest) if manifest else "",
        tuple(foreign),
        ident_mark,
        nonce,
        notes,
    )
    secret = tree.secrets[0][1] if tree.secrets else "/dev/null"
    _payload(site, "login.sh", "login", secret, passthrough=False)
    for vector in GIT_VECTORS:
        _payload(site, f"git-{vector}.sh", f"git-{vector}", secret, passthrough=True)
    synth = reroot(bundle, tree)
    layout = synth.layout.model_copy(
        update={
            "workspace_roots": tuple(prefix + w for w in bundle.layout.workspace_roots) or (ws,)
        }
    )
    projects = tuple(dict.fromkeys([*(prefix + p for p in bundle.untrusted_projects), repo]))
    synth = synth.model_copy(
        update={
            "layout": layout,
            "untrusted_projects": projects,
            "vouched_mcp_servers": {},
            "vouched_mcp_credentials": {},
        }
    )
    if control:
        synth = _loosen(synth, site)
    site.bundle = synth
    return site


def _payload(site: _Site, name: str, tag: str, secret: str, *, passthrough: bool) -> None:
    """A script the parent would run (login file, clean filter): it leaves a proof with the
    site's nonce, the uid and the (synthetic) credential, outside every writable root."""
    proof = shlex.quote(site.proof(tag))
    body = (
        f'echo "ran:{tag} uid=$(id -u) {site.nonce}" >> {proof}\n'
        f"cat {shlex.quote(secret)} 2>/dev/null | base64 >> {proof}\n"
    )
    if passthrough:
        body += "cat\n"
    _as_file(site.payload(name), body)


def _loosen(bundle: CompiledBundle, site: _Site) -> CompiledBundle:
    """The negative control: no parent policy, no other-identity denies, and the attacked
    trusted-side inputs (HOME, the repository's .git, the manifest) writable."""
    # Codex treats a writable entry as a directory (it mounts `.git`, `.codex`, ... inside
    # it), so the manifest's directory is opened, and the read entry on the file dropped.
    opened = [site.home, os.path.join(site.repo, ".git")]
    cleared = list(opened)
    if site.manifest:
        opened.append(os.path.dirname(site.manifest))
        cleared += [site.manifest, os.path.dirname(site.manifest)]
    opened = list(dict.fromkeys(opened))
    why = (Provenance(reason="policy", detail="canary negative control"),)

    def fix(p: CompiledProfile) -> CompiledProfile:
        kept: list[CompiledEntry] = []
        for e in p.entries:
            if any(x.reason == "other-identity" for x in e.provenance):
                continue
            if e.access != "deny" and (
                e.path in cleared or any(is_within(e.path, o) for o in opened[:2])
            ):
                continue
            kept.append(e)
        kept += [CompiledEntry(path=o, access="write", provenance=why) for o in opened]
        return p.model_copy(update={"entries": tuple(sorted(kept, key=lambda e: e.path))})

    return bundle.model_copy(
        update={
            "parent": (),
            "other_identities": (),
            "profiles": tuple(fix(p) for p in bundle.profiles),
        }
    )


# ---------------------------------------------------------------------------------------------
# One attempt: two sessions on one site


@dataclass(frozen=True)
class _Evidence:
    """What one road showed in one attempt: `leaked` = the road's own reason (the parent ran
    the payload, the marker reached the model); `wrote` = a model write that must be refused."""

    leaked: bool
    wrote: bool
    detail: str


@dataclass(frozen=True)
class _Attempt:
    evidence: dict[str, _Evidence]
    error: str | None
    exit_code: int
    seconds: float
    notes: tuple[str, ...] = ()


def _q(path: str) -> str:
    return shlex.quote(path)


def _identity_command(site: _Site) -> str:
    parts: list[str] = []
    for f in site.foreign:
        if f.what == "codex-home":
            parts.append(f"cat {_q(os.path.join(f.path, 'sessions', 'rollout.jsonl'))}")
            lock = _q(os.path.join(f.path, WRITER_LOCK))
            parts.append(f"flock -n {lock} -c 'echo LOCK-HELD:{f.identity}'")
        else:
            parts.append(f"cat {_q(os.path.join(f.path, '.bashrc'))}")
    parts.append("echo IDENTITY-DONE")
    return "; ".join(parts)


def _plant_command(site: _Site) -> str:
    parts = [
        f"cat {_q(site.payload('login.sh'))} >> {_q(os.path.join(site.home, n))}"
        f" && echo LOGIN-WRITTEN:{n}"
        for n in LOGIN_FILES
    ]
    targets = {
        "repo": os.path.join(site.repo, ".git", "config"),
        "home": os.path.join(site.home, ".gitconfig"),
    }
    for vector, (_, drv) in GIT_VECTORS.items():
        driver = f"sh {site.payload(f'git-{vector}.sh')}"
        parts.append(
            f"git config -f {_q(targets[vector])} filter.{drv}.clean {_q(driver)}"
            f" && echo GIT-WRITTEN:{vector}"
        )
    if site.manifest:
        m = _q(site.manifest)
        parts.append(f"printf '# cut {site.nonce}\\n' >> {m} && echo MANIFEST-APPENDED")
        parts.append(f"mv {m} {m}.moved && echo MANIFEST-MOVED && mv {m}.moved {m}")
    parts.append("echo PLANT-DONE")
    return "; ".join(parts)


def _between_sessions(site: _Site) -> None:
    """The trusted side between the sessions: the login payload where the model could not
    plant it (any earlier writer), and the tracked files touched (any later change)."""
    with open(site.payload("login.sh"), encoding="utf-8") as fh:
        body = fh.read()
    for name in LOGIN_FILES:
        path = os.path.join(site.home, name)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                has = site.nonce in fh.read()
        except OSError:
            has = False
        if not has:
            _as_file(path, body, append=not os.path.isdir(path))
    ws = site.tree.workspace
    for name, _ in GIT_VECTORS.values():
        os.utime(os.path.join(ws, name), (_OLD_MTIME, _OLD_MTIME))


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _attempt(site: _Site, mode: str, codex: Path, keys: tuple[str, str]) -> _Attempt:
    t0 = time.monotonic()
    bundle = site.bundle
    tree = site.tree
    pid = bundle.profile_for(mode).profile_id
    lines = [
        f"default_permissions={json.dumps(pid)}",
        *(ln for ln in override_lines(bundle) if not ln.startswith("default_permissions=")),
    ]
    env = launcher_env(Path(site.home), Path(tree.codex_home), Path(site.tmpdir))
    env |= {"CODEX_API_KEY": keys[0], "OPENAI_API_KEY": keys[1]}
    snap = _q(os.path.join(tree.codex_home, "shell_snapshots"))
    env_cmd = f'env; for f in {snap}/*; do [ -f "$f" ] && cat "$f"; done; echo PROBE-DONE'
    items: list[dict[str, str]] = [{"type": "text", "text": "describe these images"}]
    items += [{"type": "local_image", "path": p} for p in _image_spellings(site)]
    # spawn_agent last: once the sub-agent finishes, Codex adds a notice after wait_agent's
    # output, so a step scripted after it would never be issued.
    first: list[Step] = [
        Shell(env_cmd),
        Shell(_identity_command(site)),
        Shell(_plant_command(site)),
        Call("spawn_agent", {"items": items}, MULTI_AGENT),
        Call("wait_agent", {}, MULTI_AGENT, derive=agent_wait_args),
    ]
    ws = Path(tree.workspace)
    error: str | None = None
    with ToolScriptServer([first]) as srv:
        run = srv.provider_overrides() + lines
        a = run_exec(codex, cwd=ws, lines=run, env=env, timeout=SESSION_TIMEOUT)
        code = a.returncode
        if a.returncode != 0 or len(srv.issued) != len(first):
            error = (
                f"first session: exit {a.returncode}, {len(srv.issued)} of {len(first)} "
                f"calls issued: {a.output[-1500:]}"
            )
        else:
            _between_sessions(site)
            srv.add_turn([Shell("echo SECOND-SESSION")])
            b = run_exec(codex, cwd=ws, lines=run, env=env, timeout=SESSION_TIMEOUT)
            code = b.returncode
            if b.returncode != 0 or len(srv.issued) != len(first) + 1:
                error = f"second session: exit {b.returncode}: {b.output[-600:]}"
        if srv.script_errors():
            error = f"scripted model: {'; '.join(srv.script_errors())}"
        outputs = srv.outputs()
        issued = srv.issued
        bodies = srv.bodies()
    out = [outputs.get(cid, "") for cid, _ in issued]
    if error is None and "PROBE-DONE" not in out[0]:
        error = f"the environment probe did not run: {out[0][-300:]}"
    seconds = time.monotonic() - t0
    if error is not None:
        return _Attempt({}, error, code, seconds)
    return _Attempt(_judge_evidence(site, keys, out, bodies), None, code, seconds)


def _image_spellings(site: _Site) -> list[str]:
    tree = site.tree
    out: list[str] = []
    for root in site.bundle.roots:
        if root.kind == "missing":
            continue
        secret = dict(tree.secrets).get(root.id)
        if secret is None:
            continue
        suffix = secret[len(tree.prefix + root.target) :]
        for spelling in root.spellings:
            path = tree.at(spelling) + suffix
            if not os.path.isdir(path):
                out.append(path)
    return list(dict.fromkeys(out))


_MARKER = re.compile(r"PROFILEC-CANARY-[A-Z-]+-[0-9a-f]{24}")


def _scrub(text: str) -> str:
    """`text` with every canary marker replaced (reports name no marker, not even a random
    one: the audit report promises none)."""
    return _MARKER.sub("<marker>", text)


def _first(proof: str, nonce: str) -> str:
    """The proof's first line without the run's nonce (reports carry no marker)."""
    return proof.split("\n")[0].replace(nonce, "").strip()


def _judge_evidence(
    site: _Site, keys: tuple[str, str], out: list[str], bodies: list[str]
) -> dict[str, _Evidence]:
    _, ident_out, plant_out, spawn_out, _ = out[:5]
    ev: dict[str, _Evidence] = {}
    seen = [k for k in keys if any(k in b for b in bodies)]
    ev["parent-env"] = _Evidence(
        bool(seen),
        False,
        (
            f"{len(seen)} of 2 launcher key markers reached the model"
            if seen
            else "no launcher key marker reached any request"
        ),
    )
    login_proof = _read(site.proof("login"))
    written = [n for n in LOGIN_FILES if f"LOGIN-WRITTEN:{n}" in plant_out]
    ran = site.nonce in login_proof
    ev["parent-login-shell"] = _Evidence(
        ran,
        bool(written),
        (
            f"model wrote {', '.join(written) or 'no login file'}; "
            + (
                "the parent ran the login payload: " + _first(login_proof, site.nonce)
                if ran
                else "the parent ran no login payload"
            )
        ),
    )
    marker = site.tree.marker.encode()
    images = [i for i, data in image_payloads(bodies) if marker in data]
    raw = [i for i, b in enumerate(bodies) if site.tree.marker in b]
    spawn_state = (
        "unsupported"
        if "unsupported call" in spawn_out
        else "spawned"
        if "agent_id" in spawn_out
        else "other"
    )
    ev["parent-spawn-media"] = _Evidence(
        bool(images or raw),
        False,
        (
            f"spawn_agent: {spawn_state}; the protected image reached "
            f"{len(set(images) | set(raw))} request(s)"
            if images or raw
            else f"spawn_agent: {spawn_state}; the protected image reached no request"
        ),
    )
    for vector in GIT_VECTORS:
        proof = _read(site.proof(f"git-{vector}"))
        ran = site.nonce in proof
        wrote = f"GIT-WRITTEN:{vector}" in plant_out
        ev[f"parent-git-{vector}-config"] = _Evidence(
            ran,
            wrote,
            (
                f"model {'wrote' if wrote else 'could not write'} the filter; "
                + (
                    "the parent's git ran it: " + _first(proof, site.nonce)
                    if ran
                    else "the parent's git ran no filter"
                )
            ),
        )
    if site.foreign:
        read = site.identity_marker in ident_out
        locks = re.findall(r"LOCK-HELD:([A-Za-z0-9_-]+)", ident_out)
        ev["parent-identity"] = _Evidence(
            read or bool(locks),
            False,
            (
                f"transcript/login marker {'read' if read else 'not read'}; "
                f"lock held for {', '.join(locks) if locks else 'no identity'} "
                f"({len(site.foreign)} foreign directories)"
            ),
        )
    if site.manifest:
        changed = _sha(site.manifest) != site.manifest_hash
        moved = "MANIFEST-MOVED" in plant_out
        ev["parent-manifest"] = _Evidence(
            changed or moved,
            changed or moved,
            (
                f"manifest {'changed' if changed else 'unchanged'}"
                + ("; renamed by the model" if moved else "")
            ),
        )
    return ev


# ---------------------------------------------------------------------------------------------
# Probes per mode


def _new_keys() -> tuple[str, str]:
    return _marker("CODEX-API-KEY"), _marker("OPENAI-API-KEY")


def _one(bundle: CompiledBundle, mode: str, codex: Path, *, control: bool) -> tuple[_Attempt, str]:
    try:
        site = _site(bundle, control=control)
    except Exception as exc:  # no site, no probe: every road of this mode is an `error`
        return _Attempt({}, f"synthetic site: {type(exc).__name__}: {exc}"[:500], -1, 0.0), ""
    pid = site.bundle.profile_for(mode).profile_id
    try:
        att = _attempt(site, mode, codex, _new_keys())
    except Exception as exc:  # a probe that cannot run is an `error`, never a pass
        att = _Attempt({}, f"{type(exc).__name__}: {exc}"[:500], -1, 0.0)
    try:
        return _Attempt(att.evidence, att.error, att.exit_code, att.seconds, tuple(site.notes)), pid
    finally:
        shutil.rmtree(site.tree.base, ignore_errors=True)


def _probes(mode: str, pid: str, attack: _Attempt, control: _Attempt) -> list[Probe]:
    """One probe per road: the bundle's attempt judged, its control's outcome attached."""
    probes: list[Probe] = []
    command = ("codex", "exec", f"default_permissions={pid or mode}")
    for name, road in ROADS.items():
        failures: list[str] = []
        if attack.error is not None:
            ev = None
            failures.append("error")
            output = f"the probe could not run: {attack.error}"
        else:
            ev = attack.evidence.get(name)
            output = ev.detail if ev else ""
        if ev is not None and (ev.leaked or ev.wrote):
            failures.append("parent")
        ctl: ControlOutcome | None = None
        if name == "parent-identity" and attack.error is None and ev is None:
            output = "not applicable: the bundle names no other identity"
        elif name == "parent-manifest" and attack.error is None and ev is None:
            failures.append("error")
            output = "the bundle's trusted base names no roots manifest: nothing to attack"
        else:
            cev = control.evidence.get(name) if control.error is None else None
            leaked = cev is not None and cev.leaked
            if control.error is not None:
                text = f"the control could not run: {control.error}"
            elif cev is None:
                text = "the control showed nothing"
            else:
                text = cev.detail
            if not leaked:
                text = f"control did not leak: the probe cannot tell ({text})"
                failures.append("error")
            ctl = ControlOutcome(
                observed="allow" if leaked else "deny",
                ok=leaked,
                output=_scrub(text)[:2000],
                seconds=round(control.seconds, 3),
            )
        observed: Literal["allow", "deny"] = (
            "allow" if ev is not None and (ev.leaked or ev.wrote) else "deny"
        )
        failures = list(dict.fromkeys(failures))
        probes.append(
            Probe(
                name=name,
                kind="parent",
                command=(*command, road),
                exit_code=attack.exit_code,
                output=_scrub(output)[:4000],
                expected="deny",
                predicted=None,
                observed=observed,
                ok=not failures,
                failures=tuple(failures),
                seconds=round(attack.seconds, 3),
                control=ctl,
            )
        )
    return probes


def run_parent(
    bundle: CompiledBundle,
    *,
    codex_bin: Path,
    modes: Sequence[str],
    workers: int = 3,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, list[Probe]], list[str]]:
    """Run the parent probes for `modes`: mode -> probes, and notes. Each mode's attempt with
    the bundle and its negative control are separate jobs on fresh trees, up to `workers` at
    once (full access, the slowest, first). Never raises for a probe that cannot run (that
    probe is an `error`)."""
    jobs = [
        (m, c) for m in sorted(modes, key=lambda m: m != "agent-full-access") for c in (False, True)
    ]
    out: dict[str, list[Probe]] = {}
    notes: list[str] = []
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs)))) as pool:
        futures = {
            job: pool.submit(_one, bundle, job[0], codex_bin, control=job[1]) for job in jobs
        }
        for mode in modes:
            attack, pid = futures[(mode, False)].result()
            control, _ = futures[(mode, True)].result()
            probes = _probes(mode, pid, attack, control)
            out[mode] = probes
            notes += [n for n in attack.notes if n not in notes]
            if progress is not None:
                bad = sum(1 for p in probes if not p.ok)
                progress(
                    f"parent {mode}: {len(probes)} probes, " + (f"{bad} failed" if bad else "pass")
                )
    return out, notes
