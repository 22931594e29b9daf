"""`profilec compile`: the request and its run (one Codex permission profile per ACP mode)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..compiled import compile_step
from ..errors import UsageError
from ..flags import CompileFlags
from ..formats import COMPILE_FORMATS
from ..inputs import Inputs
from . import Outcome, to_stdout

if TYPE_CHECKING:
    from ..models.compiled import Finding


@dataclass(frozen=True, slots=True)
class CompileRequest(CompileFlags):
    """The flags of one `profilec compile` run; `out` is the directory `codex-home` writes."""

    fmt: str = COMPILE_FORMATS.default
    out: Path | None = None


def run(request: CompileRequest) -> Outcome:
    """The rendered format (`codex-home`: the directory written, no text), with the warnings
    for what compile stripped from the session config."""
    fmt = request.fmt
    if COMPILE_FORMATS.choose(fmt).directory and to_stdout(request.out):
        raise UsageError(f"--format {fmt} needs --out DIR")
    if fmt in ("launch", "codex-home") and request.run_as is None and os.geteuid() == 0:
        raise UsageError(
            f"--format {fmt} compiled as root needs --run-as UID, the non-root user Codex "
            "runs as (the profiles and the files are made for that uid; e.g. --run-as 65534)"
        )
    if request.plan_layout is not None and fmt not in ("bundle", "launch"):
        raise UsageError("--plan-layout goes with --format bundle or launch")
    if fmt == "bundle":
        # The full document: provenance lines, input hashes, mount plan (compiler/audit/).
        from ..bundle.document import dumps
        from ..bundle.load import compile_document

        bundle, doc = compile_document(Inputs.of(request))
        return Outcome(text=dumps(doc), warnings=_stripped(bundle.findings))
    return _plain(request)


def _plain(request: CompileRequest) -> Outcome:
    inputs = Inputs.of(request)
    fmt = request.fmt
    # launch: HOME and TMPDIR as the plan layout gives them (compile_step reads it once).
    # codex-home writes the writer's lock, a launch document's files create it, before any
    # launch: the gate judges it present (a CODEX_HOME in the workspace needs it to start)
    compiled = compile_step(inputs, lock_created=fmt in ("codex-home", "launch"))
    bundle = compiled.bundle
    if fmt == "codex-home":
        from ..emit.codex_home import write_codex_home

        write_codex_home(bundle, str(request.out), owner=request.run_as)
        return Outcome()
    if fmt == "launch":  # the adapter catalog comes from the same policy directory
        from ..emit.catalog import adapters_of
        from ..emit.launch import render_launch_with

        catalog = adapters_of(inputs)
        text = render_launch_with(bundle, catalog, compiled.inputs.flags, compiled.layout)
        unheld = tuple(
            f"no launch method holds for {e.package} {e.version}"
            for e in catalog.adapters
            if e.method is None
        )
        return Outcome(text=text, warnings=unheld)
    progress = f"compile: {len(bundle.roots)} roots, {len(bundle.profiles)} modes -> {fmt}"
    try:
        render = COMPILE_FORMATS.renderer(fmt)
    except (KeyError, ModuleNotFoundError):
        raise UsageError(f"--format {fmt} is not available in this build") from None
    return Outcome(text=render(bundle), verbose=(progress,), warnings=_stripped(bundle.findings))


def _stripped(findings: Iterable[Finding]) -> tuple[str, ...]:
    """The warnings for the keys compile stripped from the session config."""
    return tuple(f.message for f in findings if f.code == "session-config-stripped")
