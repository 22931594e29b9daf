"""The synthetic production layout every end-to-end run builds (one model, one builder).

A fresh directory under /tmp: a credential file holding a random marker behind a two-hop link
chain (`<codex_home>/auth.json -> <base>/host-link/auth.json`, `host-link -> host`), Codex's
writer lock beside the link (as any earlier login leaves it), a workspace with a control file
holding a second marker, a roots manifest naming the link, and TMPDIR (and HOME) inside the tree.

The ACP runs lay it out as examples/make-layout.sh does (`ACP_TREE`: the carve-out directories a
checkout has in its workspace, README.txt); the app-server runs spell their markers and files
their own way (`APPSERVER_TREE`), so a leftover or a leaked marker tells which harness left it.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import tempfile
from dataclasses import dataclass

from ..codex.vocabulary import CARVE_OUTS, REQUIREMENTS_FILE
from ..emit.codex_home import ensure_writer_lock
from ..fsio import write_atomic

#: Where layouts go by default: under /tmp, which :workspace and a legacy workspaceWrite policy
#: make writable, so a profile whose holder-directory read entries were dropped shows as a
#: writable holder.
SCRATCH_PARENT = "/tmp"
#: Directories a real workspace holds and Codex masks read-only inside writable roots.
WORKSPACE_DIRS = CARVE_OUTS


@dataclass(frozen=True)
class Layout:
    """A throwaway layout: credential behind link -> hop -> target, a workspace, a CODEX_HOME."""

    base: str
    marker: str
    control_marker: str
    target: str  # <base>/host/auth.json (the marker)
    hop: str  # <base>/host-link/auth.json (host-link -> host)
    link: str  # <codex_home>/auth.json -> hop
    codex_home: str  # <base>/agent/codex-home
    workspace: str
    control: str  # in the workspace, holds control_marker
    roots: str  # <base>/roots.toml
    tmpdir: str
    home: str  # <base>/home (made only by a tree that asks for it)

    def probes(self) -> tuple[tuple[str, str], ...]:
        """(name, path) of every spelling of the credential, then the control file."""
        return (
            ("link", self.link),
            ("hop", self.hop),
            ("target", self.target),
            ("control", self.control),
        )

    def holders(self) -> tuple[tuple[str, str], ...]:
        """(section, dir) of the directories holding the link, the hop's link and the target."""
        return (
            ("write:codex-home", self.codex_home),
            ("write:host", os.path.dirname(self.target)),
            ("write:base", self.base),
        )


@dataclass(frozen=True)
class Tree:
    """How one harness spells its layout (what differs between the ACP and app-server runs)."""

    dir_prefix: str
    marker_prefix: str
    control_prefix: str
    control_name: str
    #: The control file's text; `{marker}` stands for the control marker.
    control_text: str
    workspace_dirs: tuple[str, ...] = ()
    make_home: bool = False


#: The ACP runs: as examples/make-layout.sh lays it out. Zed's embedded core cannot start its
#: sandbox without the carve-out dirs ("bwrap: Can't mkdir <ws>/.agents: Read-only file
#: system"), see docs/e2e-acp.md.
ACP_TREE = Tree(
    dir_prefix="profilec-e2e-acp-",
    marker_prefix="PROFILEC-CANARY-",
    control_prefix="PROFILEC-CONTROL-",
    control_name="README.txt",
    control_text="control file: {marker}\n",
    workspace_dirs=WORKSPACE_DIRS,
)
#: The app-server runs (and the agent-config and approval runs built on them).
APPSERVER_TREE = Tree(
    dir_prefix="profilec-e2e-as-",
    marker_prefix="PROFILEC-E2E-SECRET-",
    control_prefix="PROFILEC-E2E-CONTROL-",
    control_name="control.txt",
    control_text="{marker}\n",
    make_home=True,
)

#: Every layout dir this process created (so a check for leftovers counts only its own runs).
_CREATED: list[str] = []


def created_layouts() -> tuple[str, ...]:
    """The layout dirs `build_layout` created in this process, oldest first."""
    return tuple(_CREATED)


def _write_new(path: str, text: str) -> None:
    """Create `path` (0600, never an existing file) holding `text`."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def build_layout(tree: Tree, parent: str | None = None) -> Layout:
    """Build a fresh layout with random markers under `parent` (default: /tmp)."""
    base = tempfile.mkdtemp(prefix=tree.dir_prefix, dir=parent or SCRATCH_PARENT)
    _CREATED.append(base)
    os.chmod(base, 0o755)
    marker = f"{tree.marker_prefix}{secrets.token_hex(12)}"
    control_marker = f"{tree.control_prefix}{secrets.token_hex(8)}"
    host = os.path.join(base, "host")
    codex_home = os.path.join(base, "agent", "codex-home")
    workspace = os.path.join(base, "workspace")
    tmpdir = os.path.join(base, "tmp")
    home = os.path.join(base, "home")
    for d in (host, codex_home, workspace, tmpdir, *((home,) if tree.make_home else ())):
        os.makedirs(d, mode=0o755, exist_ok=True)
    target = os.path.join(host, "auth.json")
    # The fake credential IS the marker: a trusted parent that needs auth.json reads it.
    _write_new(target, json.dumps({"OPENAI_API_KEY": marker}) + "\n")
    os.symlink("host", os.path.join(base, "host-link"))
    hop = os.path.join(base, "host-link", "auth.json")
    link = os.path.join(codex_home, "auth.json")
    os.symlink(hop, link)
    ensure_writer_lock(codex_home)  # as any earlier login leaves it; the profiles deny it
    for sub in tree.workspace_dirs:
        os.makedirs(os.path.join(workspace, sub), exist_ok=True)
    control = os.path.join(workspace, tree.control_name)
    with open(control, "w", encoding="utf-8") as fh:
        fh.write(tree.control_text.format(marker=control_marker))
    roots = os.path.join(base, "roots.toml")
    _write_new(
        roots,
        'schema_version = 1\n\n[[roots]]\nid = "codex-auth"\n'
        f'path = {json.dumps(link)}\nbackend = "codex"\n',
    )
    return Layout(
        base=base,
        marker=marker,
        control_marker=control_marker,
        target=target,
        hop=hop,
        link=link,
        codex_home=codex_home,
        workspace=workspace,
        control=control,
        roots=roots,
        tmpdir=tmpdir,
        home=home,
    )


def requirements_prefix(text: str, base: str) -> tuple[str, ...]:
    """The argv prefix that runs a command under managed requirements `text`: the file is
    written to a root-owned directory under `base` (removed with the tree) and bound over
    /etc/codex in a private mount namespace, so nothing outside that process tree sees it
    (needs root). The host's /etc is never written: inside the namespace /etc is an overlay
    whose upper layer is a tmpfs (on a directory under `base`), and /etc/codex, the mount
    point, is made there."""
    source = os.path.join(base, "etc-codex")
    os.makedirs(source, mode=0o755, exist_ok=True)
    write_atomic(os.path.join(source, "requirements.toml"), text.encode("utf-8"), mode=0o644)
    scratch = os.path.join(base, "etc-overlay")
    os.makedirs(scratch, mode=0o700, exist_ok=True)
    u = shlex.quote(scratch)
    target = os.path.dirname(REQUIREMENTS_FILE)
    script = (
        f"mount -t tmpfs tmpfs {u} && mkdir {u}/up {u}/work && mount -t overlay overlay -o "
        f'"lowerdir=/etc,upperdir={scratch}/up,workdir={scratch}/work" /etc && '
        f'mkdir -p {target} && mount --bind "$0" {target} && exec "$@"'
    )
    return ("unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script, source)
