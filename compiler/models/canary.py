"""The canary report (`profilec canary --format json`, schemas/canary-report.schema.json): the
probes of each mode (compiler/canary/run.py, parent.py and dynamic.py build them), and the
evidence compiler/audit/evidence.py binds.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, PlainSerializer, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from .base import Frozen

Kind = Literal["trusted", "model", "outer", "parent"]
Expect = Literal["allow", "deny", "absent", "any"]
_Seconds = Annotated[float, Field(ge=0)]
#: A run's or a mode's wall time: the document gives it to the millisecond.
_RunSeconds = Annotated[float, PlainSerializer(lambda s: round(s, 3), return_type=float)]


def _absent(value: object) -> bool:
    """True for a member the document leaves out rather than writing `null`."""
    return value is None


class ControlOutcome(Frozen):
    """Parent probes (kind `parent`, compiler/canary/parent.py) only: the negative control, the
    same road with the protection removed. It must leak (`observed` allow, `ok` true);
    otherwise the probe fails as `error` (it cannot tell)."""

    observed: Literal["allow", "deny"]
    ok: bool
    output: str
    seconds: _Seconds


class Probe(Frozen):
    """One probe: its command and what it showed."""

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
    #: Parent probes only: the negative control's outcome (absent from the document otherwise).
    control: ControlOutcome | SkipJsonSchema[None] = Field(default=None, exclude_if=_absent)


_Sha256 = Annotated[str, StringConstraints(pattern="^sha256:[0-9a-f]{64}$")]
_UtcSeconds = Annotated[
    str, StringConstraints(pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")
]


class CanaryMode(Frozen):
    """All probes for one ACP mode; `passed` and `failures` follow from the probes and the
    mode's error (build it with `of`)."""

    mode: str
    profile_id: str
    passed: bool
    failures: tuple[str, ...]
    seconds: _RunSeconds
    error: str | None
    probes: tuple[Probe, ...]

    @classmethod
    def of(
        cls,
        mode: str,
        profile_id: str,
        probes: tuple[Probe, ...],
        seconds: float,
        error: str | None = None,
    ) -> CanaryMode:
        """The mode's report: its failure classes are its probes' and `error` when it could not
        run, sorted; it passed when there is none."""
        found = {f for p in probes for f in p.failures} | ({"error"} if error else set())
        failures = tuple(sorted(found))
        return cls(
            mode=mode,
            profile_id=profile_id,
            passed=not failures,
            failures=failures,
            seconds=seconds,
            error=error,
            probes=probes,
        )

    def with_probes(self, more: tuple[Probe, ...], seconds: float) -> CanaryMode:
        """This mode with `more` probes appended and `seconds` more wall time."""
        return CanaryMode.of(
            self.mode, self.profile_id, (*self.probes, *more), self.seconds + seconds, self.error
        )


class CanaryEvidence(Frozen):
    """What the run judged (compiler/audit/evidence.py): the bundle document's content hash,
    the hash of its `compiled` member, the tool versions, and when the run finished. `audit
    --canary-json` refuses results whose compiled hash is not the audited bundle's and marks
    them stale when an input is newer."""

    bundle_content_hash: _Sha256
    compiled_hash: _Sha256
    finished: _UtcSeconds
    tools: dict[str, str]


class CanaryReport(Frozen):
    """What one canary run over several modes found (compiler/canary/run.py builds it with
    `of`): `check --canary` and `audit --canary` carry it as it is; `profilec canary --format
    json` writes it bound to the bundle it probed (CanaryReportDocument)."""

    run_id: str
    passed: bool
    failures: tuple[str, ...]
    seconds: _RunSeconds
    image: str
    modes: tuple[CanaryMode, ...]
    #: What the run says beside its probes: the static pre-check on the real layout (a
    #: planted project doc, PC051), managed requirements in force, where the parent probes ran.
    notes: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        run_id: str,
        modes: tuple[CanaryMode, ...],
        seconds: float,
        image: str = "",
        notes: tuple[str, ...] = (),
    ) -> CanaryReport:
        """The run's report: it passed when it probed a mode and every mode passed."""
        return cls(
            run_id=run_id,
            passed=bool(modes) and all(m.passed for m in modes),
            failures=tuple(sorted({f for m in modes for f in m.failures})),
            seconds=seconds,
            image=image,
            modes=modes,
            notes=notes,
        )

    @property
    def mismatch_only(self) -> bool:
        """True when the only failure class is `mismatch`."""
        return self.failures == ("mismatch",)

    def to_text(self) -> str:
        """A short human summary, one line per failing probe."""
        lines = [
            f"canary run {self.run_id}: {'PASS' if self.passed else 'FAIL'} ({self.seconds:.2f}s)"
        ]
        for m in self.modes:
            lines.append(
                f"  {m.mode} [{m.profile_id}]: {'pass' if m.passed else 'FAIL'} "
                f"{len(m.probes)} probes {m.seconds:.2f}s"
                + (f" error: {m.error}" if m.error else "")
            )
            for p in m.probes:
                if not p.ok:
                    lines += _failed_probe_lines(p)
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def _failed_probe_lines(p: Probe) -> list[str]:
    """The text report's lines for one failed probe."""
    lines = [
        f"    {p.kind} {p.name}: {','.join(p.failures)} rc={p.exit_code} "
        f"expected={p.expected} predicted={p.predicted} observed={p.observed}"
    ]
    if p.kind != "parent":
        tail = p.output.strip().split("\n")[-3:]
        lines.append(f"      output: {' | '.join(tail)[-300:]}")
    else:
        lines.append(f"      {p.output.split(chr(10))[0][:300]}")
        if p.control is not None and not p.control.ok:
            lines.append(f"      control: {p.control.output[:300]}")
    return lines


class CanaryReportDocument(CanaryReport):
    """`profilec canary --format json`: the run's report bound to the bundle it probed
    (compiler/audit/evidence.py `bind`), read by `profilec audit --canary-json`."""

    model_config = ConfigDict(title="CanaryReport")

    evidence: CanaryEvidence
