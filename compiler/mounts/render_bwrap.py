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
from functools import singledispatch

from ..models.mounts import (
    FILE_MASK_SOURCE,
    Dev,
    FileMask,
    MountPlan,
    PlanMount,
    Proc,
    RoBind,
    RwBind,
    Symlink,
    Tmpfs,
)
from .shell import line


@singledispatch
def _mount_args(m: PlanMount) -> list[str]:
    raise TypeError(f"no bwrap form for {type(m).__name__}")  # every kind registers below


@_mount_args.register
def _proc(m: Proc) -> list[str]:
    return ["--proc", m.path]


@_mount_args.register
def _dev(m: Dev) -> list[str]:
    return ["--dev", m.path]


@_mount_args.register
def _tmpfs(m: Tmpfs) -> list[str]:
    return ["--tmpfs", m.path]


@_mount_args.register
def _file_mask(m: FileMask) -> list[str]:
    return ["--ro-bind", FILE_MASK_SOURCE, m.path]


@_mount_args.register
def _symlink(m: Symlink) -> list[str]:
    return ["--symlink", m.link_value, m.path]


@_mount_args.register
def _ro_bind(m: RoBind) -> list[str]:
    return ["--ro-bind-try" if m.optional else "--ro-bind", m.source, m.path]


@_mount_args.register
def _rw_bind(m: RwBind) -> list[str]:
    return ["--bind", m.source, m.path]


def bwrap_argv(plan: MountPlan, *, program: str = "bwrap", env: bool = True) -> list[str]:
    """The argv up to and including `--`. `env=False` leaves the environment to the caller
    (`profilec run` starts bwrap with the session's whole environment, so no value, a key
    included, is ever on a command line)."""
    # An explicit user namespace with the plan's unprivileged uid: started by root or not, the
    # trusted parent is never uid 0 inside, so Codex's own inner bwrap can map its uid.
    argv = [program, "--unshare-all", "--unshare-user"]
    argv += ["--uid", str(plan.run_as.uid), "--gid", str(plan.run_as.gid)]
    if plan.network:
        argv.append("--share-net")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if env:
        argv.append("--clearenv")
    for m in plan.mounts:
        argv += _mount_args(m)
    argv += ["--remount-ro", "/"]
    for e in plan.env if env else ():
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
