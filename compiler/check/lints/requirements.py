"""Managed requirements (PC056, PC057): is the launch held by profilec's requirements layer?

Every protection of a compiled profile lives in a config layer a client can step around: an
adapter's built-in mode (a legacy `sandbox_mode`), the built-in `:workspace` profile, a session
cwd outside the workspace. Codex's managed requirements (`/etc/codex/requirements.toml`) are the
layer nothing loosens; compiler/emit/requirements.py builds profilec's document.
`check --requirements FILE` names the file the launch runs under (the host file `profilec
requirements install` wrote, or the per-session file the mount plan binds over it): PC056 for
each way it is less strict than the compiled document. Without `--requirements`, PC057 says
that nothing showed a client cannot pick an unprotected mode.
"""

from __future__ import annotations

from ...emit.requirements_install import read_requirements
from ...emit.requirements_verify import requirements_problems
from ...errors import ProfilecError
from ...inputs import Inputs
from ...models.check import CheckFinding
from ...models.compiled import CompiledBundle
from ...rule_ids import REQUIREMENTS_NOT_IN_FORCE, REQUIREMENTS_UNNAMED
from ..rules import rule, rule_by_id

rule(
    REQUIREMENTS_NOT_IN_FORCE,
    "requirements-not-in-force",
    "error",
    "the managed requirements the launch runs under are missing or less strict than profilec's",
    "without them a client picks an adapter's built-in mode or the built-in :workspace profile: "
    "measured on 0.171.0 and 0.166.0, a legacy danger-full-access session read the credential "
    "and a legacy workspace-write session started in CODEX_HOME wrote it; under profilec's "
    "requirements both ran profilec's default profile and the vaults stayed denied "
    "(docs/requirements.md)",
    "run `profilec requirements install` with the compile flags (or bind `profilec compile "
    "--format requirements` over /etc/codex/requirements.toml in the outer boundary)",
    waivable=False,
)
rule(
    REQUIREMENTS_UNNAMED,
    "requirements-unnamed",
    "warning",
    "check was not told which managed requirements the launch runs under (--requirements)",
    "only the requirements layer keeps a client from picking an unprotected mode; a profile "
    "alone can be stepped around (PC056)",
    "pass --requirements FILE: /etc/codex/requirements.toml, or the per-session file the "
    "mount plan binds there",
)


def requirements_findings(
    bundle: CompiledBundle, edge: Inputs, path: str | None
) -> list[CheckFinding]:
    """PC056 for each gap of the file at `path` against the compiled document; PC057 without
    a path."""
    if path is None:
        r = rule_by_id(REQUIREMENTS_UNNAMED)
        return [CheckFinding(rule=r.id, severity=r.severity, message=r.message)]
    try:
        text = read_requirements(edge, path)
    except ProfilecError as exc:
        problems = [exc.one_line()]
    else:
        problems = ["missing"] if text is None else requirements_problems(text, bundle)
    r = rule_by_id(REQUIREMENTS_NOT_IN_FORCE)
    return [
        CheckFinding(rule=r.id, severity=r.severity, message=f"{path}: {p}", path=path)
        for p in problems
    ]
