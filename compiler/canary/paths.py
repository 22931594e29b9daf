"""Canary probes that attack the path, not the file (issue 13): run after every other probe.

Per mode, in the synthetic tree of compiler/canary/run.py:
  * `tamper-rename-N`: rename an ancestor of a protected path (a vault, a holder directory,
    the private CODEX_HOME, a trusted-base path) and plant a file at the old path. Expected to
    fail (EBUSY on a pinned mount point, EROFS below a read-only entry); predicted by the
    rename rule in compiler/ancestry.py.
  * `read-renamed-N`: when a rename went through, the next command reads the credential under
    its new name (the deny stayed at the old path): a `leak`.
  * `trusted-after-rename`: what the trusted side reads through the link afterwards must still
    be the real marker, not the planted file (`trusted`).
  * `tamper-trusted-write-N`: write into each trusted-base read-only directory (`tamper`).
  * `tamper-engine-socket-N`: a fake container-engine listener socket (created by profilec in
    the tree, never the real docker.sock) must not be visible as a socket to a model command;
    a masked socket cannot be connected to (the connect itself is measured against the real
    binary in tests/integration/test_paths_codex.py, busybox has no unix-socket client).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..ancestry import mount_points, renamable
from ..paths import ancestors, is_within

if TYPE_CHECKING:
    from ..codex.resolve import EffectiveProfile
    from ..models.compiled import CompiledBundle

#: Suffix a successful rename gives the moved directory.
MOVED = ".canary-moved"


def _protected_real(bundle: CompiledBundle) -> list[str]:
    """Protected paths of the bundle in real coordinates (existing ones)."""
    out: dict[str, None] = {}
    for root in bundle.roots:
        if root.kind == "missing":
            continue
        out.setdefault(root.vault, None)
        for d in root.holder_dirs:
            out.setdefault(d, None)
    if bundle.codex_home is not None:
        out.setdefault(bundle.codex_home.canonical, None)
        for d in bundle.codex_home.holder_dirs:
            out.setdefault(d, None)
    for t in bundle.trusted_base:
        out.setdefault(t.path, None)
    return list(out)


def prepare(prefix: str, bundle: CompiledBundle) -> None:
    """Create the trusted-base paths of `bundle` inside the tree at `prefix`: directories, and
    a fake listener socket for each denied socket (bound and listening, then closed; the inode
    stays, which is what a model command would have to reach)."""
    # The writer's lock exists on a real host (`--format codex-home` creates it); a deny on a
    # missing file makes bwrap create one, which fails inside a read-only CODEX_HOME.
    for p in bundle.profiles:
        for e in p.entries:
            if any(x.reason == "writer-lock" for x in e.provenance):
                lock = prefix + e.path
                os.makedirs(os.path.dirname(lock), exist_ok=True)
                if not os.path.lexists(lock):
                    with open(lock, "w", encoding="utf-8"):
                        pass
    for t in bundle.trusted_base:
        at = prefix + t.path
        if t.access == "read":
            os.makedirs(at, exist_ok=True)
        elif t.kind == "socket":
            os.makedirs(os.path.dirname(at), exist_ok=True)
            if not os.path.lexists(at):
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.bind(at)
                    s.listen(1)
                finally:
                    s.close()


def specs(
    tree: Any,
    bundle: CompiledBundle,
    pred: EffectiveProfile,
    spec: Callable[..., Any],
) -> list[Any]:
    """The path-attack probes for one mode (appended after the other tampering probes)."""
    out: list[Any] = []
    mounts = mount_points(pred)
    secrets = [s for _, s in tree.secrets]
    # Real writable roots are mount points on the host ("/tmp", each workspace root); their
    # rerooted copies in the tree are plain directories, so attacking them would test the tree.
    seen: set[str] = {"/tmp", *bundle.layout.workspace_roots}
    n = 0
    protected = _protected_real(bundle)
    # The profiles here are already re-rooted into the tree (compiler/canary/run.py reroot).
    locks = sorted(
        {
            e.path if e.path.startswith(tree.prefix + "/") else tree.at(e.path)
            for p in bundle.profiles
            for e in p.entries
            if any(x.reason == "writer-lock" for x in e.provenance)
        }
    )
    for real in protected:
        # Deepest first: a successful rename leaves the directories above in place, so the
        # predictions of the probes that follow still hold.
        for a_real in ancestors(real):
            if a_real == "/" or a_real in seen:
                continue
            seen.add(a_real)
            a = tree.at(a_real)
            predicted = "allow" if renamable(pred, a, mounts) else "deny"
            # What an attacker does next: recreate every protected path that moved (the
            # sandbox refuses to start with entries missing) and plant a file.
            redo = [tree.at(q) for q in protected if is_within(q, a_real)]
            if is_within(tree.workspace, a):
                redo.append(tree.workspace)  # the sandbox's cwd: no command starts without it
            again = " ".join(f"'{q}'" for q in redo)
            # ... and plant its own credential where the trusted side and the sandbox look.
            plants = [s for s in secrets if is_within(s, a)]
            plants += [tree.at(r.path) for r in bundle.roots if is_within(tree.at(r.path), a)]
            plants += [lk for lk in locks if is_within(lk, a)]  # entries must exist to start
            plant = "".join(f" && echo PROFILEC-PLANTED > '{q}'" for q in dict.fromkeys(plants))
            script = f"mv '{a}' '{a}{MOVED}' && mkdir -p {again}{plant}"
            out.append(spec(f"tamper-rename-{n}", "model", script, "deny", predicted))
            under = [s for s in secrets if is_within(s, a)]
            if under:
                reads = "; ".join(f"cat '{a}{MOVED}{s[len(a) :]}'" for s in under)
                out.append(spec(f"read-renamed-{n}", "model", reads, "deny", None))
            n += 1
    for root in bundle.roots:
        if root.kind == "missing":
            continue
        secret = next((s for rid, s in tree.secrets if rid == root.id), None)
        if secret is None:
            continue
        link = tree.at(root.path) + secret[len(tree.prefix + root.target) :]
        out.append(
            spec(
                f"trusted-after-rename-{root.id}",
                "trusted",
                f"cat '{link}'",
                "allow",
                None,
                needle=tree.marker,
            )
        )
    for i, t in enumerate(bundle.trusted_base):
        at = tree.at(t.path)
        if t.access == "read":
            target = at + "/canary-w"
            predicted = "allow" if pred.decide(target).writable else "deny"
            out.append(
                spec(f"tamper-trusted-write-{i}", "model", f"touch '{target}'", "deny", predicted)
            )
        elif t.kind == "socket":
            predicted = "allow" if pred.decide(at).readable else "deny"
            out.append(
                spec(
                    f"tamper-engine-socket-{i}",
                    "model",
                    f"test -S '{at}'",
                    "deny",
                    predicted,
                )
            )
    return out
