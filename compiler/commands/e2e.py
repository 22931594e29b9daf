"""`profilec e2e`: the request and its run (real Codex sessions, the compatibility matrix)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..e2e.run import adapter_verdicts, catalog_disagreements, run_matrix
from ..emit.catalog import adapters_of
from ..errors import EXIT_CLEAN, EXIT_FOUND, UsageError
from ..formats import E2E_FORMATS
from ..inputs import Inputs
from . import Outcome, Progress, no_progress


@dataclass(frozen=True, slots=True)
class E2eRequest:
    """The flags of one `profilec e2e` run."""

    fmt: str = E2E_FORMATS.default
    only: str = "all"
    check_catalog: bool = False
    profiles: Path | None = None


def run(request: E2eRequest, progress: Progress = no_progress) -> Outcome:
    """The matrix as JSON or Markdown; exit 1 when --check-catalog finds the catalog
    disagreeing with what was observed (each disagreement one line on stderr)."""
    render = E2E_FORMATS.renderer(E2E_FORMATS.choose(request.fmt).name)
    if request.only not in ("all", "acp", "appserver"):
        raise UsageError(f"unknown --only {request.only!r}; choose all, acp or appserver")

    profiles = str(request.profiles) if request.profiles else None
    catalog = adapters_of(Inputs.unrooted(profiles)) if request.check_catalog else None
    with progress("e2e", None) as step:
        matrix = run_matrix(
            include_appserver=request.only in ("all", "appserver"),
            include_acp=request.only in ("all", "acp"),
            progress=step,
        )
    text = render(matrix)
    if catalog is None:
        return Outcome(text=text)
    problems = catalog_disagreements(adapter_verdicts(matrix), catalog)
    lines = "".join(f"profilec: e2e: catalog disagrees: {p}\n" for p in problems)
    return Outcome(text=text, stderr=lines, exit_code=EXIT_FOUND if problems else EXIT_CLEAN)
