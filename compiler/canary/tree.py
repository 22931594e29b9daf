"""The canary's shared pieces: a probe and its outcome, and the synthetic layout every probe runs
in (each real path P of the bundle lives at <prefix>P, secrets are random markers, never a real
credential). run.py drives the containers; dynamic.py and parent.py add their probes.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import EnvironmentMissingError
from ..models.compiled import CompiledBundle, CompiledProfile, ResolvedRoot
from ..mounts.backends import load_catalog
from . import paths


def writer_names() -> tuple[str, str, str]:
    """(temp-file prefix, lock beside the target, lock in CODEX_HOME) of Codex's credential writer.

    Read from the reviewed catalog (profiles/backends.toml, `[backends.codex.writer]`, measured
    with strace on 0.171.0; research §1), never spelled here a second time.
    """
    writer = load_catalog().backends["codex"].writer
    files = writer.files if writer else ()

    def one(role: str, where: str) -> str:
        names = [f.name for f in files if f.role == role and f.where == where]
        if len(names) != 1:
            raise EnvironmentMissingError(
                f"profiles/backends.toml: codex writer has {len(names)} {role} files in {where}",
                hint="the dynamic canary needs the measured writer pattern",
            )
        return names[0]

    return one("temp", "vault").rstrip("X"), one("lock", "vault"), one("lock", "home")


#: Writer temp file and lock names Codex uses, from the catalog.
TEMP_PREFIX, LOCK_BESIDE_TARGET, LOCK_IN_HOME = writer_names()


#: Where synthetic trees go: outside /tmp, which is a tmpfs inside the container.
SCRATCH_PARENT = "/var/tmp"
#: The ACP modes whose contract includes network (read-only and agent have none).
NETWORK_MODES = frozenset({"agent-full-access"})
#: The loopback port of the in-container listener (the container's own network namespace).
NET_PORT = 17171


# ---------------------------------------------------------------------------------------------
# Synthetic layout


def _marker(kind: str) -> str:
    return f"PROFILEC-CANARY-{kind}-{secrets.token_hex(12)}"


@dataclass(frozen=True)
class _Tree:
    """A synthetic layout: every real path P lives at <prefix>P."""

    base: Path  # the throwaway dir (holds tree/ and decoys/)
    prefix: str  # <base>/tree, bind-mounted at the same path
    marker: str
    decoys: tuple[str, ...]
    decoy_dir: str
    secrets: tuple[tuple[str, str], ...]  # (root id, synthetic secret file)
    workspace: str
    control: str
    control_marker: str
    codex_home: str
    net_marker: str

    def at(self, real: str) -> str:
        return self.prefix + real


def _codex_home(bundle: CompiledBundle) -> str:
    if bundle.codex_home is not None:
        return bundle.codex_home.path
    if bundle.layout.codex_home:
        return bundle.layout.codex_home
    return os.path.dirname(bundle.roots[0].path) if bundle.roots else "/codex-private-home"


def _secret_file(root: ResolvedRoot, prefix: str) -> str:
    target = prefix + root.target
    return target + "/canary-secret.json" if root.kind == "dir" else target


def _restore_secrets(tree: _Tree) -> None:
    """Rewrite every secret file in place with the run's marker (never through a link)."""
    for _, secret in tree.secrets:
        fd = os.open(secret, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f'{{"OPENAI_API_KEY": "{tree.marker}"}}\n')


def _chown_tree(top: Path, uid: int) -> None:
    if os.getuid() != 0:
        return
    for dirpath, dirnames, filenames in os.walk(top):
        os.lchown(dirpath, uid, uid)
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def build_tree(bundle: CompiledBundle, uid: int) -> _Tree:
    """Create the synthetic layout of `bundle` in a fresh dir (paths only; nothing real read)."""
    base = Path(tempfile.mkdtemp(prefix="profilec-canary-", dir=SCRATCH_PARENT))
    os.chmod(base, 0o755)
    prefix = str(base / "tree")
    os.mkdir(prefix, 0o755)
    mark = _marker("SECRET")
    secret_files: list[tuple[str, str]] = []
    for root in bundle.roots:
        if root.kind == "missing":
            continue
        secret = _secret_file(root, prefix)
        os.makedirs(os.path.dirname(secret), exist_ok=True)
        Path(secret).write_text(f'{{"OPENAI_API_KEY": "{mark}"}}\n', encoding="utf-8")
        os.chmod(secret, 0o600)
        secret_files.append((root.id, secret))
        for hop in root.hops:
            link = prefix + hop.link
            os.makedirs(os.path.dirname(link), exist_ok=True)
            value = prefix + hop.value if hop.value.startswith("/") else hop.value
            if not os.path.lexists(link):
                os.symlink(value, link)
    ws_real = bundle.layout.workspace_roots[0] if bundle.layout.workspace_roots else None
    workspace = prefix + ws_real if ws_real else str(base / "tree" / "canary-ws")
    os.makedirs(workspace, exist_ok=True)
    control_marker = _marker("CONTROL")
    control = os.path.join(workspace, "canary-control.txt")
    Path(control).write_text(control_marker + "\n", encoding="utf-8")
    home = prefix + _codex_home(bundle)
    os.makedirs(home, exist_ok=True)
    Path(home, "config.toml").write_text("# private config\n", encoding="utf-8")
    # The writer's CODEX_HOME lock exists before any sandbox starts (as `--format codex-home`
    # leaves it), so a profile entry on it names an existing file.
    Path(home, LOCK_IN_HOME).touch(mode=0o644)
    decoy_dir = base / "decoys"
    decoys = (_marker("HOSTHOME"), _marker("SIBLING"))
    for rel, m in zip((".codex/auth.json", "sibling-agent/auth.json"), decoys, strict=True):
        p = decoy_dir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(m + "\n", encoding="utf-8")
    paths.prepare(prefix, bundle)  # trusted-base dirs and fake engine sockets (issue 13)
    _chown_tree(Path(prefix), uid)
    return _Tree(
        base,
        prefix,
        mark,
        decoys,
        str(decoy_dir),
        tuple(secret_files),
        workspace,
        control,
        control_marker,
        home,
        _marker("NET"),
    )


def _reroot_profile(p: CompiledProfile, prefix: str) -> CompiledProfile:
    entries = tuple(
        e.model_copy(update={"path": prefix + e.path}) if e.path.startswith("/") else e
        for e in p.entries
    )
    ws = tuple(prefix + w for w in p.workspace_roots)
    return p.model_copy(update={"entries": entries, "workspace_roots": ws})


def reroot(bundle: CompiledBundle, tree: _Tree) -> CompiledBundle:
    """The bundle's profiles with every layout path moved into the synthetic tree."""
    profiles = tuple(_reroot_profile(p, tree.prefix) for p in bundle.profiles)
    return bundle.model_copy(update={"profiles": profiles})
