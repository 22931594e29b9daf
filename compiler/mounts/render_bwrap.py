"""`--format bwrap`: a bubblewrap argv (ending in `--`; append the command) and its shell line.

Everything is bound at its real path; links are recreated with `--symlink`, never bound onto.
The root is bwrap's own tmpfs, remounted read-only after the last mount, so anything the plan
does not mount is absent. The trusted parent runs as `plan.run_as` (`--uid/--gid` in its own
user namespace, mapped to whoever starts bwrap; never root inside, research §7). Passthrough
variables are listed, not rendered: their host values are the launcher's to add
(`--setenv NAME VALUE`), so no host value is ever written into a file.
"""

from __future__ import annotations

import json

from .models import Mount, MountPlan
from .shell import line


def _mount_args(m: Mount) -> list[str]:
    if m.type == "proc":
        return ["--proc", m.path]
    if m.type == "dev":
        return ["--dev", m.path]
    if m.type == "tmpfs":
        return ["--tmpfs", m.path]
    if m.type == "file-mask":
        return ["--ro-bind", "/dev/null", m.path]
    if m.type == "symlink":
        assert m.link_value is not None
        return ["--symlink", m.link_value, m.path]
    assert m.source is not None
    if m.type == "ro-bind":
        return ["--ro-bind-try" if m.optional else "--ro-bind", m.source, m.path]
    return ["--bind", m.source, m.path]


def bwrap_argv(plan: MountPlan, *, program: str = "bwrap") -> list[str]:
    """The argv up to and including `--`."""
    # An explicit user namespace with the plan's unprivileged uid: started by root or not, the
    # trusted parent is never uid 0 inside, so Codex's own inner bwrap can map its uid.
    argv = [program, "--unshare-all", "--unshare-user"]
    argv += ["--uid", str(plan.run_as.uid), "--gid", str(plan.run_as.gid)]
    if plan.network:
        argv.append("--share-net")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    for m in plan.mounts:
        argv += _mount_args(m)
    argv += ["--remount-ro", "/"]
    for e in plan.env:
        argv += ["--setenv", e.name, e.value]
    argv += ["--chdir", plan.workdir, "--"]
    return argv


def render_bwrap(plan: MountPlan) -> str:
    """JSON: argv, the quoted shell line, passthrough names, codex args for the parent."""
    argv = bwrap_argv(plan)
    doc = {
        "argv": argv,
        "shell": line(argv),
        "passthrough_env": list(plan.passthrough_env),
        "codex_args": list(plan.codex_args),
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
