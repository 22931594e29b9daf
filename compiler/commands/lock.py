"""`profilec lock`: the request and its run (compile, render the approved lock file)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..bundle.load import compile_document
from ..bundle.lock import render_lock
from ..flags import CompileFlags
from ..flags import text as flag_text
from ..inputs import Inputs
from . import Outcome, to_stdout


@dataclass(frozen=True, slots=True)
class LockRequest(CompileFlags):
    """The flags of one `profilec lock` run; `out` is where the note says the lock went."""

    out: Path = Path("profilec.lock")


def run(request: LockRequest) -> Outcome:
    """The lock file's text (compile once, with the plan layout when given)."""
    _, doc = compile_document(Inputs.of(request))
    where = "stdout" if to_stdout(request.out) else str(request.out)
    return Outcome(
        text=render_lock(doc, flag_text(request.plan_layout)),
        notes=(f"locked {doc['content_hash']} -> {where}",),
    )
