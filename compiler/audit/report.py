"""The reviewer report as data: per mode access, coverage matrix, lints, canaries, hashes.

`build_report` derives everything from the bundle with the evaluator and the static check (it
never trusts what the compiler says about itself); report_md and report_html only format it.
Canary probes are carried as decisions (expected, predicted, observed), never their output.
Only the report carries a time, and `--now none` or SOURCE_DATE_EPOCH pins it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..compile import PLACEHOLDER_CWD
from ..errors import InputError, UsageError
from ..evaluate import EvalContext, resolve
from ..models import CompiledBundle

if TYPE_CHECKING:
    from .launchers import LauncherSection


@dataclass(frozen=True, slots=True)
class AccessItem:
    """One subtree with its effective access and the key that decided it."""

    path: str
    key: str


@dataclass(frozen=True, slots=True)
class ModeSummary:
    """What one mode allows."""

    mode: str
    profile_id: str
    extends: str | None
    network: bool
    unrestricted: bool
    readable: tuple[AccessItem, ...]
    writable: tuple[AccessItem, ...]
    denied: tuple[AccessItem, ...]


@dataclass(frozen=True, slots=True)
class MatrixRow:
    """One coverage cell: mode x root x spelling."""

    mode: str
    root: str
    kind: str
    spelling: str
    real_path: str
    access: str
    winner: str
    ok: bool


@dataclass(frozen=True, slots=True)
class Lint:
    """One finding of the static check."""

    rule: str
    name: str
    severity: str
    message: str
    where: str


@dataclass(frozen=True, slots=True)
class CanaryProbe:
    """One canary probe's decisions (never its output)."""

    mode: str
    kind: str
    name: str
    expected: str
    predicted: str
    observed: str
    ok: bool
    failures: str


@dataclass(frozen=True, slots=True)
class CanarySummary:
    """The canary run the report was given."""

    passed: bool
    run_id: str
    image: str
    modes: tuple[tuple[str, bool], ...]
    probes: tuple[CanaryProbe, ...]


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Everything one report shows."""

    generated: str | None
    profilec_version: str
    codex_version: str
    codex_version_range: str
    content_hash: str
    input_hashes: tuple[tuple[str, str], ...]
    default_mode: str
    workspace_roots: tuple[str, ...]
    #: id, declared path, chain text, target, vault (the directory denied whole in every mode)
    roots: tuple[tuple[str, str, str, str, str], ...]
    modes: tuple[ModeSummary, ...]
    matrix: tuple[MatrixRow, ...]
    check_passed: bool
    lints: tuple[Lint, ...]
    canary: CanarySummary | None
    has_mount_plan: bool
    #: The outer sandbox (when the bundle holds a mount plan): type, path, source, purpose.
    mounts: tuple[tuple[str, str, str, str], ...] = ()
    #: Host paths the outer sandbox keeps out: path, reason, how.
    hidden: tuple[tuple[str, str, str], ...] = ()
    plan_network: bool | None = None
    #: The end-to-end matrix (`--e2e-matrix`), or None: launchers not tested end-to-end.
    launchers: LauncherSection | None = None


#: One table of the report: its header and its rows, the same for every output format.
Table = tuple[tuple[str, ...], list[tuple[str, ...]]]


def versions_table(r: AuditReport) -> Table:
    """Versions, hashes and whether a mount plan is included."""
    return (
        ("what", "value"),
        [
            ("profilec", r.profilec_version),
            ("Codex (pinned)", r.codex_version),
            ("Codex rules verified for", r.codex_version_range),
            ("bundle content hash", r.content_hash),
            *[(f"input {k}", v) for k, v in r.input_hashes],
            ("mount plan", "included" if r.has_mount_plan else "not included"),
        ],
    )


def roots_table(r: AuditReport) -> Table:
    """Each protected root: declared path, link chain, canonical target and its vault.

    The vault is denied whole in every mode: the trusted writer saves by temp file + rename in
    that directory, which would detach a deny on the file alone inside running sandboxes.
    """
    header = ("root", "declared path", "link chain", "canonical target",
              "vault (denied whole: the writer renames inside it)")
    return header, [tuple(x) for x in r.roots]


def coverage_table(r: AuditReport) -> Table:
    """The mode x root x spelling matrix; a cell passes only on deny."""
    header = ("mode", "root", "kind", "spelling", "real path", "access", "winner", "ok")
    rows: list[tuple[str, ...]] = [
        (c.mode, c.root, c.kind, c.spelling, c.real_path, c.access, c.winner,
         "ok" if c.ok else "FAIL")
        for c in r.matrix
    ]
    return header, rows


def lints_table(r: AuditReport) -> Table:
    """Static-check findings."""
    return (
        ("severity", "rule", "name", "message", "where"),
        [(f.severity, f.rule, f.name, f.message, f.where) for f in r.lints],
    )


def canary_table(c: CanarySummary) -> Table:
    """Canary probes as decisions (never their output)."""
    header = ("mode", "kind", "probe", "expected", "predicted", "observed", "result")
    rows: list[tuple[str, ...]] = [
        (p.mode, p.kind, p.name, p.expected, p.predicted, p.observed,
         "ok" if p.ok else f"FAIL {p.failures}")
        for p in c.probes
    ]
    return header, rows


def report_time(now: str | None) -> datetime | None:
    """`--now` (epoch seconds or 'none'), else SOURCE_DATE_EPOCH, else the current time."""
    if now is not None:
        if now == "none":
            return None
        if not now.isdigit():
            raise UsageError(f"--now must be epoch seconds or 'none', got {now!r}")
        return datetime.fromtimestamp(int(now), tz=UTC)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=UTC)
    return datetime.now(tz=UTC).replace(microsecond=0)


def load_canary_json(path: str) -> dict[str, Any]:
    """A `profilec canary --format json` document."""
    import jsonschema

    from ..resources import validator
    from .bundle import read_json

    doc = read_json(path, "canary json")
    err = jsonschema.exceptions.best_match(
        validator("canary-report.schema.json").iter_errors(doc)
    )
    if err is not None:
        loc = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise InputError(
            f"not a canary report (schemas/canary-report.schema.json): {loc}: {err.message}",
            where=path,
        )
    return doc


def _canary(doc: dict[str, Any]) -> CanarySummary:
    probes: list[CanaryProbe] = []
    modes: list[tuple[str, bool]] = []
    for m in doc.get("modes", []):
        if not isinstance(m, dict):
            continue
        mode = str(m.get("mode"))
        modes.append((mode, bool(m.get("passed"))))
        for p in m.get("probes", []) or []:
            if not isinstance(p, dict):
                continue
            probes.append(
                CanaryProbe(
                    mode=mode,
                    kind=str(p.get("kind")),
                    name=str(p.get("name")),
                    expected=str(p.get("expected")),
                    predicted=str(p.get("predicted") or "-"),
                    observed=str(p.get("observed")),
                    ok=bool(p.get("ok")),
                    failures=",".join(str(f) for f in p.get("failures", []) or []),
                )
            )
    return CanarySummary(
        passed=bool(doc.get("passed")),
        run_id=str(doc.get("run_id", "")),
        image=str(doc.get("image", "")),
        modes=tuple(modes),
        probes=tuple(probes),
    )


def _why(records: list[dict[str, Any]], key: str) -> str:
    """A compiled entry's key is its path; say which root or layout put it there instead."""
    if not records:
        return key
    whys: list[str] = []
    for rec in records:
        reason, detail = rec.get("reason"), rec.get("detail")
        if reason in ("ancestor", "trusted-base") and detail:
            # What became read-only or pinned, and which root or policy line caused it.
            owner = f"root {rec['root_id']} " if rec.get("root_id") else ""
            whys.append(f"{owner}({reason}: {detail})")
        elif rec.get("root_id"):
            whys.append(f"root {rec['root_id']} ({reason})")
        else:
            whys.append(str(detail or reason))
    return ", ".join(dict.fromkeys(whys))


def _modes(bundle: CompiledBundle, provenance: Any) -> tuple[ModeSummary, ...]:
    ws = tuple(bundle.layout.workspace_roots)
    ctx = EvalContext(cwd=ws[0], workspace_roots=ws[1:]) if ws else EvalContext(PLACEHOLDER_CWD)
    out: list[ModeSummary] = []
    for p in bundle.profiles:
        recs: dict[str, list[dict[str, Any]]] = {}
        for m in (provenance or {}).get("modes", []) if isinstance(provenance, dict) else []:
            if m.get("mode") == p.mode:
                for rec in m.get("records", []):
                    recs.setdefault(str(rec.get("key")), []).append(rec)
        eff = resolve({p.profile_id: p.codex_table()}, p.profile_id, ctx)
        groups: dict[str, list[AccessItem]] = {"read": [], "write": [], "deny": []}
        seen: set[str] = set()
        for e in eff.entries:
            if e.path in seen:
                continue
            seen.add(e.path)
            if e.kind == "glob":
                groups["deny"].append(AccessItem(e.path, e.source + " (glob)"))
                continue
            d = eff.decide(e.path)
            if d.access is not None and d.winner is not None:
                src = d.winner.source
                key = _why(recs.get(src, []), src) if src.startswith("/") else src
                groups[d.access].append(AccessItem(e.path, key))
        if eff.unrestricted:
            groups["write"].append(AccessItem("/", f"{p.profile_id} (unrestricted)"))
        out.append(
            ModeSummary(
                mode=p.mode,
                profile_id=p.profile_id,
                extends=p.extends,
                network=eff.network_enabled or eff.unrestricted,
                unrestricted=eff.unrestricted,
                readable=tuple(groups["read"]),
                writable=tuple(groups["write"]),
                denied=tuple(groups["deny"]),
            )
        )
    return tuple(out)


def build_report(
    bundle: CompiledBundle,
    doc: dict[str, Any],
    *,
    canary: dict[str, Any] | None,
    now: datetime | None,
    launchers: LauncherSection | None = None,
) -> AuditReport:
    """Evaluate and check the bundle, and gather what the report shows."""
    from ..check.checker import from_bundle, run_check

    report = run_check(
        from_bundle(bundle, bundle.mode_profiles),
        codex_version=str(doc.get("codex_version")),
    )
    matrix = tuple(
        MatrixRow(
            mode=c.mode,
            root=c.root,
            kind=c.kind,
            spelling=c.spelling,
            real_path=c.real_path,
            access=c.access,
            winner=c.winner or "no entry",
            ok=c.ok,
        )
        for c in report.cells
    )
    lints = tuple(
        Lint(
            rule=f.rule,
            name=report.rule(f.rule).name,
            severity=f.severity,
            message=f.message,
            where=(f.file or "") + (f":{f.line}" if f.line else ""),
        )
        for f in report.findings
    )
    roots = tuple(
        (
            r.id,
            r.path,
            " -> ".join(f"{h.link} = {h.value}" for h in r.hops) or "(no links)",
            r.target,
            r.vault,
        )
        for r in bundle.roots
    )
    plan = doc.get("mount_plan")
    prov = doc.get("provenance") or {}
    inputs = prov.get("inputs") if isinstance(prov, dict) else None
    return AuditReport(
        generated=now.strftime("%Y-%m-%dT%H:%M:%SZ") if now else None,
        profilec_version=str(doc.get("profilec_version")),
        codex_version=str(doc.get("codex_version")),
        codex_version_range=str(doc.get("codex_version_range", "")),
        content_hash=str(doc.get("content_hash")),
        input_hashes=tuple(sorted((str(k), str(v)) for k, v in (inputs or {}).items())),
        default_mode=bundle.default_mode,
        workspace_roots=tuple(bundle.layout.workspace_roots),
        roots=roots,
        modes=_modes(bundle, prov),
        matrix=matrix,
        check_passed=report.passed,
        lints=lints,
        canary=_canary(canary) if canary is not None else None,
        has_mount_plan=isinstance(plan, dict),
        mounts=tuple(
            (
                str(m.get("type")),
                str(m.get("path")),
                str(m.get("source") or ""),
                str(m.get("purpose")),
            )
            for m in (plan.get("mounts", []) if isinstance(plan, dict) else [])
        ),
        hidden=tuple(
            (str(h.get("path")), str(h.get("reason")), str(h.get("how")))
            for h in (plan.get("hidden", []) if isinstance(plan, dict) else [])
        ),
        plan_network=bool(plan.get("network")) if isinstance(plan, dict) else None,
        launchers=launchers,
    )


NOT_TESTED = "not tested by canaries"
