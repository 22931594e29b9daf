"""The compile step: compile one run's `Inputs` once, and hand what later steps need on.

`compile_step` returns a `Compiled` record (the edge as compiled, the bundle, the plan layout it
read). Every later step takes that record, or the part of it it needs, as an argument: the
emitters (the bundle; the launch document also the flags and the layout), the bundle document
and lock (compiler/bundle/load.py `document_of`), check (the bundle), audit. Nothing is kept on
`Inputs` by a step above it: `Inputs` holds only what was read (compiler/inputs.py).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from .errors import InputError, UsageError
from .flags import CompileFlags
from .flags import text as flag_text
from .inputs import Inputs
from .pipeline import compile_edge

if TYPE_CHECKING:
    from .models.compiled import CompiledBundle
    from .models.mounts import PlanLayout


class Compiled(NamedTuple):
    """What the compile step hands every later step (emitters, lock, check, audit): computed
    once, passed down as an argument, never kept on `Inputs`.

    `inputs` is the edge as compiled: its flags with the HOME and TMPDIR the plan layout gives
    filled in (`session_dirs`), its files the bytes compiled. `layout` is the plan layout read
    for it (--plan-layout), None without one."""

    inputs: Inputs
    bundle: CompiledBundle
    layout: PlanLayout | None = None


def compile_step(inp: Inputs, *, lock_created: bool = False) -> Compiled:
    """Compile `inp` once: with a plan layout, read it first and take the session's HOME and
    TMPDIR from it (`session_dirs`). The one way to compile: every command that compiles
    (compile, check, watch, requirements, lock, audit, explain, canary) and the library
    (compiler/library.py, `api.compile_inputs`) come through here, so `--plan-layout` means the
    same bundle everywhere, and a missing layout file is an input error for each of them.
    `lock_created`: the output creates the writer's lock before any launch (`--format
    codex-home` and `launch` do), so the startability gate judges it present."""
    path = flag_text(inp.flags.plan_layout)
    layout = None
    if path is not None:
        from .mounts.api import layout_of

        if not os.path.lexists(path):
            raise InputError(
                "the plan layout file does not exist",
                where=f"--plan-layout {path}",
                hint="pass the daemon's plan layout (the file `profilec plan --layout` reads), "
                "or drop --plan-layout",
            )
        layout = layout_of(inp, path)
        inp = inp.with_flags(**session_dirs(inp.flags, layout, path))
    return Compiled(inp, compile_edge(inp, lock_created=lock_created), layout)


def no_plan_layout(flags: CompileFlags, instead: str) -> None:
    """Refuse --plan-layout on a run that compiles nothing (`instead` names what it reads),
    rather than drop it unread: the flag is honoured wherever it is taken, or refused."""
    if flags.plan_layout is not None:
        raise UsageError(
            f"--plan-layout {flags.plan_layout} goes with a compile, not with {instead}",
            hint=f"drop --plan-layout: {instead} is read as it is, not compiled",
        )


def session_dirs(flags: CompileFlags, layout: PlanLayout, layout_path: str) -> dict[str, str]:
    """The profiles take HOME and TMPDIR from the plan (`mounts.plan.session_dirs`, the one
    source the plan's env and the launch document use too): a flag left out is filled in, one
    that names another directory is refused, so the bundle's profiles and its plan never
    disagree on the directories `~` and `:tmpdir` expand to. Returns the two flags' values."""
    from .mounts.plan import session_dirs as planned_dirs

    dirs = planned_dirs(layout)
    for flag, given, planned in (
        ("--home", flags.home, dirs.home),
        ("--tmpdir", flags.tmpdir, dirs.tmpdir),
    ):
        if given is not None and os.path.normpath(given) != planned:
            raise UsageError(
                f"{flag} {given} is not the session's {flag[2:].upper()} under --plan-layout "
                f"{layout_path} ({planned}): pass {flag} {planned} or leave it out"
            )
    if flags.tmpdir is None and not os.path.isdir(dirs.tmpdir):
        raise UsageError(
            f"the session's TMPDIR under --plan-layout {layout_path}, {dirs.tmpdir}, does not "
            "exist: create it (0700, owned by the run-as user; the plan lists it in "
            "`directories`) before compiling"
        )
    return {"home": flags.home or dirs.home, "tmpdir": flags.tmpdir or dirs.tmpdir}
