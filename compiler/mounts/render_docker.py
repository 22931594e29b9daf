"""`--format docker`: keyword arguments for docker SDK `containers.run` and the `docker run` argv.

`sdk_kwargs["mounts"]` are `docker.types.Mount(**m)` keyword dicts. Image and command are the
caller's: `client.containers.run(image, command, **kwargs)` or `argv + [image, *command]`.
System paths (purpose `system`: /usr, /proc, /dev, ...) come from the image, not the host.
Docker cannot create a symlink, so a plan that must recreate a credential link is refused
rather than rendered without it.
"""

from __future__ import annotations

import json
from functools import singledispatch
from typing import Any

from ..errors import LayoutError
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


def _csv_field(text: str) -> str:
    # `--mount` is parsed as CSV: a value with a comma or quote is double-quoted.
    if any(c in text for c in ',"\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


@singledispatch
def _docker_mount(m: PlanMount) -> dict[str, Any] | None:
    raise TypeError(f"no docker form for {type(m).__name__}")  # every kind registers below


@_docker_mount.register
def _proc(m: Proc) -> dict[str, Any] | None:
    return None  # the container's own


@_docker_mount.register
def _dev(m: Dev) -> dict[str, Any] | None:
    return None  # the container's own


@_docker_mount.register
def _tmpfs(m: Tmpfs) -> dict[str, Any] | None:
    return {"type": "tmpfs", "source": None, "target": m.path, "read_only": False}


@_docker_mount.register
def _file_mask(m: FileMask) -> dict[str, Any] | None:
    return {"type": "bind", "source": FILE_MASK_SOURCE, "target": m.path, "read_only": True}


@_docker_mount.register
def _symlink(m: Symlink) -> dict[str, Any] | None:
    raise LayoutError(
        f"docker cannot recreate link {m.path} -> {m.link_value}; use --format bwrap, "
        "or keep the link inside a bound directory",
        where="--format docker",
    )


@_docker_mount.register
def _ro_bind(m: RoBind) -> dict[str, Any] | None:
    return {"type": "bind", "source": m.source, "target": m.path, "read_only": True}


@_docker_mount.register
def _rw_bind(m: RwBind) -> dict[str, Any] | None:
    return {"type": "bind", "source": m.source, "target": m.path, "read_only": False}


def docker_mounts(plan: MountPlan) -> list[dict[str, Any]]:
    """The plan's mounts as docker.types.Mount keyword dicts, in plan order."""
    out: list[dict[str, Any]] = []
    for m in plan.mounts:
        if m.purpose == "system":
            continue  # from the image (a system link too: the image has its own)
        mount = _docker_mount(m)
        if mount is not None:
            out.append(mount)
    return out


def docker_kwargs(plan: MountPlan) -> dict[str, Any]:
    """`containers.run` keyword arguments (no image, no command)."""
    kwargs: dict[str, Any] = {
        "mounts": docker_mounts(plan),
        "network_mode": "bridge" if plan.network else "none",
        "read_only": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "environment": {e.name: e.value for e in plan.env},
        "labels": {"profilec.plan": "1", "profilec.backends": ",".join(plan.backends)},
        "working_dir": plan.workdir,
    }
    kwargs["user"] = f"{plan.run_as.uid}:{plan.run_as.gid}"  # never root (plan.run_as)
    return kwargs


def docker_argv(plan: MountPlan) -> list[str]:
    """The equivalent `docker run` argv, up to (not including) the image."""
    kw = docker_kwargs(plan)
    argv = ["docker", "run", "--rm", "--network", kw["network_mode"], "--read-only"]
    argv += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
    argv += ["--user", kw["user"]]
    for m in kw["mounts"]:
        fields = [f"type={m['type']}"]
        if m["source"] is not None:
            fields.append(_csv_field(f"source={m['source']}"))
        fields.append(_csv_field(f"target={m['target']}"))
        if m["read_only"]:
            fields.append("readonly")
        argv += ["--mount", ",".join(fields)]
    for name, value in kw["environment"].items():
        argv += ["--env", f"{name}={value}"]
    for name in plan.passthrough_env:
        argv += ["--env", name]  # docker copies the host value; nothing is written here
    for key, value in sorted(kw["labels"].items()):
        argv += ["--label", f"{key}={value}"]
    argv += ["--workdir", plan.workdir]
    return argv


def render_docker(plan: MountPlan) -> str:
    """JSON: sdk_kwargs, argv, its quoted shell line, passthrough names, codex args."""
    argv = docker_argv(plan)
    doc = {
        "sdk_kwargs": docker_kwargs(plan),
        "argv": argv,
        "shell": line(argv),
        "passthrough_env": list(plan.passthrough_env),
        "codex_args": list(plan.codex_args),
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
