"""The canary report (`profilec canary --format json`, schemas/canary-report.schema.json): the
probes of each mode (compiler/canary/run.py, parent.py and dynamic.py build them), and the
evidence compiler/audit/evidence.py binds.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from .base import Frozen

Kind = Literal["trusted", "model", "outer", "parent"]
Expect = Literal["allow", "deny", "absent", "any"]
_Seconds = Annotated[float, Field(ge=0)]


class ControlOutcome(Frozen):
    """Parent probes (kind `parent`, compiler/canary/parent.py) only: the negative control, the
    same road with the protection removed. It must leak (`observed` allow, `ok` true);
    otherwise the probe fails as `error` (it cannot tell)."""

    observed: Literal["allow", "deny"]
    ok: bool
    output: str
    seconds: _Seconds


class Probe(Frozen):
    """One probe: its command and what it showed (`profilec canary --format json` writes it as
    `to_dict` gives it)."""

    name: str
    kind: Kind
    command: tuple[str, ...]
    exit_code: int
    output: str
    expected: Expect
    predicted: Expect | None
    observed: Literal["allow", "deny"]
    ok: bool
    failures: tuple[str, ...]
    #: Wall time of the probe's command (None where one probe spans several commands).
    seconds: _Seconds | None = None
    #: Parent probes only: the negative control's outcome.
    control: ControlOutcome | SkipJsonSchema[None] = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (`control` only where there is one)."""
        out = self.model_dump(mode="json")
        if self.control is None:
            del out["control"]
        return out


_Sha256 = Annotated[str, StringConstraints(pattern="^sha256:[0-9a-f]{64}$")]
_UtcSeconds = Annotated[
    str, StringConstraints(pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")
]


class CanaryMode(Frozen):
    """All probes for one ACP mode (ModeReport)."""

    mode: str
    profile_id: str
    passed: bool
    failures: list[str]
    seconds: float
    error: str | None
    probes: list[Probe]


class CanaryEvidence(Frozen):
    """What the run judged (compiler/audit/evidence.py): the bundle document's content hash,
    the hash of its `compiled` member, the tool versions, and when the run finished. `audit
    --canary-json` refuses results whose compiled hash is not the audited bundle's and marks
    them stale when an input is newer."""

    bundle_content_hash: _Sha256
    compiled_hash: _Sha256
    finished: _UtcSeconds
    tools: dict[str, str]


class CanaryReportDocument(Frozen):
    """`profilec canary --format json` (compiler/canary/run.py CanaryReport.to_dict), read by
    `profilec audit --canary-json`."""

    model_config = ConfigDict(title="CanaryReport")

    run_id: str
    passed: bool
    failures: list[str]
    seconds: float
    image: str
    modes: list[CanaryMode]
    evidence: CanaryEvidence
