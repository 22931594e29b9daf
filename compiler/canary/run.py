"""One canary run: every ACP mode probed for real in a hardened container, never a real root.

For each mode, `run_canaries` builds a synthetic copy of the bundle's layout in a throwaway dir
under /var/tmp (every real path P becomes <tree>/P: the links, each hop, a target holding a fresh
random marker, the workspace with a control file, the private CODEX_HOME), re-roots the bundle's
profiles onto it (so a deliberately broken bundle stays broken), bind-mounts the tree at the
same absolute path into a container started with `engine.run_settings()`, and runs three kinds
of probes: trusted (no sandbox), model (through `codex sandbox -P <id>`), outer (the boundary).
Decoy markers (host HOME, sibling agent) live beside the tree and are never mounted.

Failure classes: `leak` (credential marker in a model output), `decoy`, `control`, `trusted`,
`tamper` (link or target changed afterwards), `network` (a model command reached the loopback
listener in a mode whose contract is no network), `mismatch` (observed allow/deny differs from
profilec.codex's static prediction), `error` (the probe could not run); and from the dynamic
probes (compiler/canary/dynamic.py: a model command running across real Codex saves)
`refresh-leak`, `temp-leak`, `lock-held`, `save-blocked`; and from the parent probes
(compiler/canary/parent.py: real `codex exec` sessions attacking the trusted parent's roads,
run on the host after the containers, kind `parent`) `parent`, with `error` for a probe whose
negative control did not leak.

Network: the container is `--network none`, so only its own loopback exists. A trusted
`nc` listener on 127.0.0.1:NET_PORT answers with a fresh marker; the model probe `net-loopback`
connects to it. Expected by the ACP mode contract (NETWORK_MODES: only agent-full-access has
network), predicted from the compiled profile's `network.enabled`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..codex.resolve import EffectiveProfile, EvalContext, resolve
from ..codex.vocabulary import CARVE_OUTS, REQUIREMENTS_FILE
from ..emit.codex_toml import render_toml
from ..emit.overrides import override_lines
from ..emit.requirements import render_requirements
from ..errors import EnvironmentMissingError
from ..fsio import write_atomic
from ..models.canary import CanaryMode, CanaryReport, Expect, Kind, Probe
from ..models.compiled import CompiledBundle, CompiledProfile, ResolvedRoot
from ..models.policy import ACP_MODES
from ..projectdocs import bundle_planted_docs
from . import dynamic, engine, paths
from .image import ensure_image
from .parent import run_parent
from .tree import (
    NET_PORT,
    NETWORK_MODES,
    _codex_home,
    _restore_secrets,
    _secret_file,
    _Tree,
    build_tree,
    reroot,
)

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container


def _overrides(bundle: CompiledBundle) -> list[str]:
    """`-c` lines for the user profiles (a built-in id such as `:workspace` gets none)."""
    return [
        line
        for line in override_lines(bundle)
        if line.startswith("permissions.") and not line.startswith("permissions.:")
    ]


def _predictor(bundle: CompiledBundle, profile: CompiledProfile, ws: str) -> EffectiveProfile:
    perms = {p.profile_id: p.codex_table() for p in bundle.profiles if ":" not in p.profile_id}
    ctx = EvalContext(cwd=ws, workspace_roots=(ws,), tmpdir="/tmp", home=engine.CODEX_HOME)
    return resolve(perms, profile.profile_id, ctx)


# ---------------------------------------------------------------------------------------------
# Probes


@dataclass(frozen=True)
class _Spec:
    name: str
    kind: Kind
    script: str
    expected: Expect
    predicted: Expect | None = None
    control: bool = False
    needle: str | None = None  # output must contain this for "allow" (control reads)
    network: bool = False  # a connection attempt: "allow" outside NETWORK_MODES is `network`


def _allow(ok: bool) -> Expect:
    return "allow" if ok else "deny"


def _readable(pred: EffectiveProfile, *paths: str) -> Expect:
    return _allow(all(pred.decide(p).readable for p in paths))


def _writable(pred: EffectiveProfile, path: str) -> Expect:
    return _allow(pred.decide(path).writable)


def _read_specs(tree: _Tree, root: ResolvedRoot, pred: EffectiveProfile) -> list[_Spec]:
    """The model probes that try to read one root's secret, each spelling and road."""
    ws = tree.workspace
    specs: list[_Spec] = []
    secret = _secret_file(root, tree.prefix)
    suffix = secret[len(tree.prefix + root.target) :]
    for i, spelling in enumerate(root.spellings):
        path = tree.at(spelling) + suffix
        if os.path.isdir(path):
            # A hop's own spelling (a symlinked holder dir): `cat` of a directory fails
            # whatever the sandbox does, so the probe could never see a leak. The file
            # behind it is probed through the longer spelling (hop link + rest).
            continue
        specs.append(
            _Spec(
                f"cat-{root.id}-{i}",
                "model",
                f"cat '{path}'",
                "deny",
                _readable(pred, path, secret),
            )
        )
    q = f"'{secret}'"
    link = tree.at(root.path)
    pr = _readable(pred, secret)
    specs += [
        _Spec(f"cp-{root.id}", "model", f"cp {q} '{ws}/cp.txt' && cat '{ws}/cp.txt'", "deny", pr),
        _Spec(
            f"ln-hard-{root.id}",
            "model",
            f"ln {q} '{ws}/hard' && cat '{ws}/hard'",
            "deny",
            None,
        ),
        _Spec(f"ln-soft-{root.id}", "model", f"ln -s {q} '{ws}/soft'; cat '{ws}/soft'", "deny", pr),
        _Spec(f"proc-self-root-{root.id}", "model", f"cat /proc/self/root{secret}", "deny", pr),
        _Spec(f"proc-1-root-{root.id}", "model", f"cat /proc/1/root{secret}", "deny", None),
        # The mask sits on the vault (the secret's directory): lift it, and the file's too.
        _Spec(
            f"umount-{root.id}",
            "model",
            f"umount {q}; umount '{os.path.dirname(secret)}'; cat {q}",
            "deny",
            None,
        ),
        _Spec(f"unshare-{root.id}", "model", f"unshare -U cat {q}", "deny", pr),
        _Spec(
            f"tar-{root.id}",
            "model",
            f"tar -cf - '{os.path.dirname(link)}' '{os.path.dirname(secret)}' | cat",
            "deny",
            None,
        ),
        _Spec(
            f"find-exec-{root.id}",
            "model",
            f"find '{tree.prefix}' -type f -exec cat {{}} +",
            "deny",
            None,
        ),
        _Spec(f"grep-r-{root.id}", "model", f"grep -r OPENAI '{tree.prefix}'", "deny", None),
    ]
    return specs


def _control_specs(tree: _Tree, pred: EffectiveProfile, mode: str) -> list[_Spec]:
    """The controls (a read, a write, the loopback listener) and the outer boundary probes."""
    ws = tree.workspace
    return [
        _Spec(
            "control-read",
            "model",
            f"cat '{tree.control}'",
            "allow",
            _readable(pred, tree.control),
            control=True,
            needle=tree.control_marker,
        ),
        _Spec(
            "workspace-write",
            "model",
            f"echo w > '{ws}/canary-w.txt'",
            "deny" if mode == "read-only" else "allow",
            _writable(pred, ws + "/canary-w.txt"),
            control=True,
        ),
        _Spec(
            "net-loopback",
            "model",
            f"nc -w 2 127.0.0.1 {NET_PORT} </dev/null",
            "allow" if mode in NETWORK_MODES else "deny",
            _allow(pred.network_enabled),
            needle=tree.net_marker,
            network=True,
        ),
        _Spec("parent-env", "model", "cat /proc/1/environ; ls -l /proc/1/fd", "any", None),
        _Spec("outer-decoys", "outer", f"ls '{tree.decoy_dir}'", "absent", None),
        _Spec("outer-host-home", "outer", "ls /root/.codex /home", "absent", None),
        _Spec(
            "outer-daemon-root", "outer", "ls /var/lib/docker /var/run/docker.sock", "absent", None
        ),
    ]


def _tamper_specs(tree: _Tree, root: ResolvedRoot, pred: EffectiveProfile) -> list[_Spec]:
    """The model probes that try to relink one root's link or move its target's directory."""
    secret = _secret_file(root, tree.prefix)
    link = tree.at(root.path)
    tdir = os.path.dirname(secret)
    return [
        _Spec(
            f"tamper-relink-{root.id}",
            "model",
            f"ln -sfn '{tree.control}' '{link}'",
            "deny",
            _writable(pred, os.path.dirname(link)),
        ),
        _Spec(
            f"tamper-move-{root.id}",
            "model",
            f"mv '{tdir}' '{tdir}.moved' && mkdir -p '{tdir}' && echo planted > '{secret}'",
            "deny",
            # A denied directory (a vault) is a mount point in the sandbox: `mv` of it
            # fails with "Resource busy" however writable its parent is.
            _writable(pred, os.path.dirname(tdir)) if _readable(pred, tdir) == "allow" else "deny",
        ),
    ]


def _specs(tree: _Tree, bundle: CompiledBundle, pred: EffectiveProfile, mode: str) -> list[_Spec]:
    specs: list[_Spec] = []
    for root in bundle.roots:
        if root.kind == "missing":
            continue
        specs += _read_specs(tree, root, pred)
    specs += _control_specs(tree, pred, mode)
    # Tampering last: a broken bundle that lets one through changes the tree.
    for root in bundle.roots:
        if root.kind == "missing":
            continue
        specs += _tamper_specs(tree, root, pred)
    config = tree.codex_home + "/config.toml"
    specs.append(
        _Spec(
            "tamper-config", "model", f"echo 'x=1' >> '{config}'", "deny", _writable(pred, config)
        )
    )
    specs += paths.specs(tree, bundle, pred, _Spec)  # rename ancestors, trusted base (issue 13)
    return specs


#: Probes that change the tree (tampering) run once even when their output comes back
#: incomplete. Every other probe may run again: it only reads, or (the trusted rewrite) writes
#: back the bytes it just read, so a second run finds and leaves the tree as the first did
#: (seen beside busy loops in CI: a trusted rewrite's output lost once, its probe an `error`).
_TAMPER = "tamper"
_RUN_ONCE = (_TAMPER,)


def _exec(container: Container, cmd: Sequence[str]) -> tuple[int, str]:
    """A read-only command (snapshots): run again while the engine loses its output."""
    res = engine.exec_framed(container, cmd, attempts=3)
    return res.rc, res.out


def _timed(container: Container, spec: _Spec, tree: _Tree, cmd: tuple[str, ...]) -> Probe:
    """Run one probe's command and judge it, with its wall time (JUnit `time`). Output the
    engine returned incomplete is never judged as whole: the probe is an `error`, except a
    tampering probe whose end the engine recorded: its verdict is its exit code alone (its
    commands, `ln`, `mv`, `touch`, `echo >>`, print nothing of what they touch)."""
    t0 = time.monotonic()
    res = engine.exec_framed(container, cmd, attempts=1 if spec.name.startswith(_RUN_ONCE) else 3)
    secs = round(time.monotonic() - t0, 3)
    probe = _judge(spec, res.rc, res.out, tree, cmd)
    by_rc = spec.kind == "model" and spec.name.startswith(_TAMPER) and res.rc_known
    if not res.whole and not by_rc:
        failures = tuple(dict.fromkeys((*probe.failures, "error")))
        probe = probe.model_copy(update={"ok": False, "failures": failures})
    return probe.model_copy(update={"seconds": secs})


def _snapshot(container: Container, tree: _Tree, bundle: CompiledBundle) -> tuple[int, str]:
    parts = []
    for root in bundle.roots:
        if root.kind == "missing":
            continue
        parts.append(f"readlink '{tree.at(root.path)}'")
        parts.append(f"sha256sum '{_secret_file(root, tree.prefix)}'")
    parts.append(f"sha256sum '{tree.codex_home}/config.toml'")
    return _exec(container, ["sh", "-c", "; ".join(parts) or "true"])


def _command(spec: _Spec, sandbox: Sequence[str]) -> tuple[str, ...]:
    """A model probe's script runs inside the sandbox; every other probe's as plain `sh -c`."""
    return (*sandbox, spec.script) if spec.kind == "model" else ("sh", "-c", spec.script)


def _judge(spec: _Spec, rc: int, out: str, tree: _Tree, cmd: tuple[str, ...]) -> Probe:
    failures: list[str] = []
    leaked = tree.marker in out
    observed: Literal["allow", "deny"] = "allow" if rc == 0 else "deny"
    if spec.kind == "model":
        if leaked:
            failures.append("leak")
            observed = "allow"
        if any(d in out for d in tree.decoys):
            failures.append("decoy")
        if spec.needle is not None and spec.needle not in out:
            observed = "deny"
        if spec.network and observed == "allow" and spec.expected == "deny":
            failures.append("network")
        if spec.control and spec.expected != "any" and observed != spec.expected:
            failures.append("control")
        if spec.predicted is not None and observed != spec.predicted:
            failures.append("mismatch")
        if spec.name.startswith("tamper") and observed == "allow":
            failures.append("tamper")
    elif spec.kind == "outer":
        if rc == 0 or any(d in out for d in tree.decoys) or leaked:
            failures.append("decoy")
    else:
        if rc != 0 or (spec.needle is not None and spec.needle not in out):
            failures.append("trusted")
    return Probe(
        name=spec.name,
        kind=spec.kind,
        command=cmd,
        exit_code=rc,
        output=out[-4000:],
        expected=spec.expected,
        predicted=spec.predicted,
        observed=observed,
        ok=not failures,
        failures=tuple(dict.fromkeys(failures)),
    )


def _start_container(
    client: DockerClient,
    tag: str,
    run_id: str,
    mode: str,
    uid: int,
    tree: _Tree,
    codex_bin: Path,
    with_dynamic: bool,
    requirements_dir: str | None = None,
) -> tuple[Container, str, tuple[str, ...]]:
    """The mode's hardened container with codex, the tree (and flock) mounted, and with
    `requirements_dir` bound read-only over /etc/codex; codex's inner path and the flock argv
    prefix."""
    volumes, codex = engine.codex_mount(codex_bin)
    volumes[tree.prefix] = {"bind": tree.prefix, "mode": "rw"}
    if requirements_dir is not None:
        volumes[requirements_dir] = {"bind": os.path.dirname(REQUIREMENTS_FILE), "mode": "ro"}
    flock_vols, flock = dynamic.flock_mounts() if with_dynamic else ({}, ())
    volumes.update(flock_vols)
    settings = engine.run_settings(run_id, uid=uid)
    # A writable `:root` makes Codex carve `/.git`, `/.agents`, ... out of `/`; bwrap then
    # mkdirs them, which fails on the read-only rootfs. Empty read-only tmpfs mount points.
    settings["tmpfs"] = {**settings["tmpfs"], **{f"/{n}": "ro,size=4k" for n in CARVE_OUTS}}
    container = client.containers.run(
        tag,
        ["sleep", "600"],
        volumes=volumes,
        detach=True,
        name=f"profilec-canary-{run_id}-{mode}",
        **settings,
    )
    return container, codex, flock


def _sandbox_argv(
    codex: str, synth: CompiledBundle, profile: CompiledProfile, tree: _Tree, managed: bool
) -> list[str]:
    """`codex sandbox` with the bundle's `-c` lines and the mode's profile, ending in `sh -c`;
    `managed`: with the managed requirements, as a session sees them (`codex sandbox` reads
    them only with `--include-managed-config`)."""
    sandbox = [codex, "sandbox", *(["--include-managed-config"] if managed else [])]
    for line in _overrides(synth):
        sandbox += ["-c", line]
    sandbox += ["-P", profile.profile_id, "-C", tree.workspace, "--", "sh", "-c"]
    return sandbox


def _trusted_probes(
    container: Container,
    synth: CompiledBundle,
    tree: _Tree,
    sandbox: Sequence[str],
    probes: list[Probe],
) -> None:
    """The trusted parent's probes, appended to `probes` as each runs; starts the listener."""
    # Trusted parent: reads through the link and the target, rewrites the target.
    for root in synth.roots:
        if root.kind == "missing":
            continue
        secret = _secret_file(root, tree.prefix)
        link = tree.at(root.path) + secret[len(tree.prefix + root.target) :]
        for name, script in (
            (f"trusted-read-link-{root.id}", f"cat '{link}'"),
            (f"trusted-read-target-{root.id}", f"cat '{secret}'"),
            (
                f"trusted-rewrite-{root.id}",
                f"c=$(cat '{secret}') && printf '%s\\n' \"$c\" > '{secret}' && cat '{link}'",
            ),
        ):
            spec = _Spec(name, "trusted", script, "allow", None, needle=tree.marker)
            probes.append(_timed(container, spec, tree, _command(spec, sandbox)))
    # Trusted loopback listener: every connection gets the net marker, then is closed.
    container.exec_run(
        ["nc", "-ll", "-p", str(NET_PORT), "-e", "echo", tree.net_marker], detach=True
    )
    script = (
        f"for i in 1 2 3 4 5 6 7 8 9 10; do nc -w 1 127.0.0.1 {NET_PORT} </dev/null "
        "&& exit 0; sleep 0.2; done; exit 1"
    )
    spec = _Spec("trusted-net-listener", "trusted", script, "allow", None, needle=tree.net_marker)
    probes.append(_timed(container, spec, tree, _command(spec, sandbox)))


def _unchanged_probe(
    before: tuple[int, str],
    middle: tuple[int, str],
    before_tamper: tuple[int, str],
    after: tuple[int, str],
) -> Probe:
    """Links and targets unchanged around the probes (the saves in between excepted)."""
    same = before == middle and before_tamper == after and before[0] == 0
    return Probe(
        name="unchanged-after-tampering",
        kind="trusted",
        command=("sh", "-c", "readlink; sha256sum"),
        exit_code=after[0],
        output=after[1],
        expected="allow",
        predicted=None,
        observed="allow" if same else "deny",
        ok=same,
        failures=() if same else ("tamper",),
    )


def _run_mode(
    client: DockerClient,
    tag: str,
    run_id: str,
    bundle: CompiledBundle,
    mode: str,
    codex_bin: Path,
    with_dynamic: bool = True,
    saves: int = 1,
    managed: bool = False,
) -> CanaryMode:
    t0 = time.monotonic()
    uid = engine.run_uid()
    tree = build_tree(bundle, uid)
    synth = reroot(bundle, tree)
    profile = synth.profile_for(mode)
    probes: list[Probe] = []
    requirements_dir = _requirements_dir(bundle, synth, tree) if managed else None
    try:
        container, codex, flock = _start_container(
            client, tag, run_id, mode, uid, tree, codex_bin, with_dynamic, requirements_dir
        )
        sandbox = _sandbox_argv(codex, synth, profile, tree, managed)
        _trusted_probes(container, synth, tree, sandbox, probes)
        before = _snapshot(container, tree, synth)
        pred = _predictor(synth, profile, tree.workspace)
        specs = _specs(tree, synth, pred, mode)
        # Tampering, and the path probes that read what a rename left behind, run last and in
        # their own order (a read of a renamed path before its rename could never leak).
        late = ("tamper", "read-renamed-", "trusted-after-rename-")
        tamper = [s for s in specs if s.name.startswith(late)]
        for spec in [s for s in specs if not s.name.startswith(late)]:
            probes.append(_timed(container, spec, tree, _command(spec, sandbox)))
        middle = _snapshot(container, tree, synth)
        if with_dynamic:
            # Real saves change the target's bytes on purpose: compare around them, not across.
            probes += dynamic.run_dynamic(
                client,
                container,
                tree,
                synth,
                _codex_home(bundle),
                sandbox,
                codex,
                flock,
                saves=saves,
            )
            # The saves left their own markers in the target; put the run's marker back (the
            # trusted side's write, from outside), so the tampering and path probes that follow
            # judge a leak by the same marker as every other probe.
            _restore_secrets(tree)
        before_tamper = _snapshot(container, tree, synth)
        for spec in tamper:
            probes.append(_timed(container, spec, tree, _command(spec, sandbox)))
        after = _snapshot(container, tree, synth)
        probes.append(_unchanged_probe(before, middle, before_tamper, after))
        return CanaryMode.of(mode, profile.profile_id, tuple(probes), time.monotonic() - t0)
    except EnvironmentMissingError:
        raise  # a missing engine, tool or shipped file is exit 7, not "a probe failed"
    except Exception as exc:  # a canary that cannot run is never a pass
        return CanaryMode.of(
            mode,
            profile.profile_id,
            tuple(probes),
            time.monotonic() - t0,
            error=f"{type(exc).__name__}: {exc}"[:500],
        )
    finally:
        shutil.rmtree(tree.base, ignore_errors=True)
        if requirements_dir is not None:
            shutil.rmtree(requirements_dir, ignore_errors=True)


def _requirements_dir(bundle: CompiledBundle, synth: CompiledBundle, tree: _Tree) -> str:
    """A fresh host directory holding the synthetic layout's compiled managed requirements
    (`requirements.toml`, 0644), outside the tree the probes can write: bound read-only over
    /etc/codex in the mode's container. The synthetic CODEX_HOME then gets profilec's config
    (`--format codex-home`'s `config.toml`), as a real trusted parent has it: under the
    requirements a Codex whose config does not define the allowed profiles refuses to start
    (measured here: the trusted login and refresh saves failed with "requirements.toml
    allowed_permission_profiles refers to undefined profile `profilec-agent`")."""
    write_atomic(
        os.path.join(tree.codex_home, "config.toml"),
        render_toml(synth).encode("utf-8"),
        mode=0o644,
    )
    d = tempfile.mkdtemp(prefix="profilec-canary-requirements-")
    os.chmod(d, 0o755)
    write_atomic(
        os.path.join(d, os.path.basename(REQUIREMENTS_FILE)),
        render_requirements(bundle, under=tree.prefix).encode("utf-8"),
        mode=0o644,
    )
    return d


def run_canaries(
    bundle: CompiledBundle,
    *,
    codex_bin: Path,
    client: DockerClient | None = None,
    modes: Sequence[str] | None = None,
    run_id: str | None = None,
    dynamic_probes: bool = True,
    dynamic_saves: int = 1,
    progress: Callable[[str], None] | None = None,
    parent_probes: bool = True,
    managed_requirements: bool = False,
) -> CanaryReport:
    """Probe every mode of `bundle` in its own container (in parallel); always cleans up.

    `managed_requirements` runs every model probe as a session would under profilec's managed
    requirements: the synthetic layout's compiled document bound read-only over /etc/codex in
    each container, `codex sandbox --include-managed-config`. Off by default: the canary's job in
    `check` is to prove the profiles by themselves (a managed deny would hide a profile that lost
    its own), the requirements run proves the layers together.

    `dynamic_probes` adds the refresh race and the lock probe (compiler/canary/dynamic.py);
    `dynamic_saves` is how many logins the race makes after its refresh. `parent_probes` adds
    the parent canaries (compiler/canary/parent.py: real `codex exec` turns against a scripted
    loopback model, on the host in a throwaway tree, after the containers), as probes of kind
    `parent` in each mode. `progress` hears one line when the image is ready and one per
    finished mode (and one per mode's parent probes).
    """
    t0 = time.monotonic()
    engine.seccomp_profile()  # the shipped seccomp profile first: missing is exit 7, up front
    pre = precheck_notes(bundle)
    own = client is None
    cli = engine.docker_client() if client is None else client
    rid = run_id or engine.new_run_id()
    wanted = tuple(modes) if modes else tuple(m for m in ACP_MODES if m in bundle.mode_profiles)
    try:
        tag = ensure_image(cli)
        if progress is not None:
            progress(f"image {tag} ready; probing {', '.join(wanted)}")
        with ThreadPoolExecutor(max_workers=max(1, len(wanted))) as pool:
            futures = [
                pool.submit(
                    _run_mode,
                    cli,
                    tag,
                    rid,
                    bundle,
                    m,
                    codex_bin,
                    dynamic_probes,
                    dynamic_saves,
                    managed_requirements,
                )
                for m in wanted
            ]
            if progress is not None:
                for done in as_completed(futures):
                    r = done.result()
                    bad = sum(1 for p in r.probes if not p.ok)
                    state = "error" if r.error else f"{bad} failed" if bad else "pass"
                    progress(f"mode {r.mode}: {len(r.probes)} probes, {state}")
            reports = tuple(f.result() for f in futures)
    finally:
        engine.cleanup(cli, rid)
        if own:
            cli.close()
    notes: tuple[str, ...] = ()
    if managed_requirements:
        notes += (
            "managed requirements in force: each container had the compiled document read-only "
            "at /etc/codex and ran codex sandbox --include-managed-config",
        )
    if parent_probes:
        reports, notes = _with_parent(bundle, reports, codex_bin, progress)
    return CanaryReport.of(rid, reports, time.monotonic() - t0, tag, (*pre, *notes))


def precheck_notes(bundle: CompiledBundle) -> tuple[str, ...]:
    """The static pre-check on the real layout, before any probe: each planted project-doc
    link (compiler/projectdocs.py, `check` PC051; lstat/readlink only). The probes run on a
    synthetic copy of the layout that holds no such link, so only this names it; it makes no
    session leak, so it is a note, not a failure class."""
    return tuple(f"pre-check (PC051): {d.message}" for d in bundle_planted_docs(bundle))


def _with_parent(
    bundle: CompiledBundle,
    reports: tuple[CanaryMode, ...],
    codex_bin: Path,
    progress: Callable[[str], None] | None,
) -> tuple[tuple[CanaryMode, ...], tuple[str, ...]]:
    """`reports` with each mode's parent probes appended (its wall time added)."""
    t0 = time.monotonic()
    found, notes = run_parent(
        bundle, codex_bin=codex_bin, modes=[m.mode for m in reports], progress=progress
    )
    spent = time.monotonic() - t0
    out = tuple(m.with_probes(tuple(found.get(m.mode, ())), spent) for m in reports)
    return out, ("parent probes ran on the host in a throwaway tree", *notes)
