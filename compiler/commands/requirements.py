"""`profilec requirements install|verify`: Codex's managed requirements on this host.

For a launcher without an outer boundary (no mount plan that binds the per-session file over
`/etc/codex/requirements.toml`): `install` compiles the document from the same inputs as
`compile` and writes it atomically where Codex reads it, its header naming the manifest it
comes from (path and sha256), refusing to replace a file profilec did not write or one compiled
from another manifest (another daemon's: a host with several daemons binds each session's own
file instead, docs/requirements.md); `verify` says whether the file in place is at least as
strict as the compiled one (exit 1 with one line per gap). The document is the same for every
identity of one manifest, so one install serves every session the daemon starts from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..codex.vocabulary import REQUIREMENTS_FILE
from ..compiled import compile_step
from ..emit.requirements import digest
from ..emit.requirements_install import install_requirements, installed_text, requirements_gaps
from ..errors import EXIT_FOUND, UsageError
from ..flags import CompileFlags
from ..inputs import Inputs
from . import Outcome

ACTIONS = ("install", "verify")


@dataclass(frozen=True, slots=True)
class RequirementsRequest(CompileFlags):
    """The flags of one `profilec requirements` run: the compile inputs, the action and the
    file (default: where Codex reads it on Linux)."""

    action: str = "verify"
    path: str = REQUIREMENTS_FILE


def run(request: RequirementsRequest) -> Outcome:
    """Install or verify the managed requirements at `request.path`."""
    if request.action not in ACTIONS:
        raise UsageError(f"unknown action {request.action!r}; choose one of {', '.join(ACTIONS)}")
    if not request.path.startswith("/"):
        raise UsageError(f"--path {request.path!r} must be an absolute path")
    edge = Inputs.of(request)
    bundle = compile_step(edge).bundle
    if request.action == "install":
        changed = install_requirements(bundle, edge, request.path)
        state = "installed" if changed else "already current"
        text = installed_text(bundle, edge)
        return Outcome(notes=(f"requirements: {state}: {request.path} ({digest(text)})",))
    problems = requirements_gaps(edge, request.path, bundle)
    if problems:
        return Outcome(
            stderr="".join(f"profilec: requirements: {request.path}: {p}\n" for p in problems),
            exit_code=EXIT_FOUND,
        )
    return Outcome(notes=(f"requirements: in place and current: {request.path}",))
