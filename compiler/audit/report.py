"""The reviewer report as data: per mode access, coverage matrix, lints, canaries, hashes.

`build_report` derives everything from the bundle with the evaluator and the static check (it
never trusts what the compiler says about itself); report_md and report_html only format it.
Canary probes are carried as decisions (expected, predicted, observed), never their output.
Only the report carries a time, and `--now none` or SOURCE_DATE_EPOCH pins it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..check.build import from_bundle
from ..check.checker import run_check
from ..codex.resolve import resolve, session_contexts
from ..emit.requirements import deny_read_paths
from ..errors import InputError, ProfilecError, UsageError
from ..models.check import SEVERITY_RANK, at_or_above
from ..models.compiled import CompiledBundle
from ..paths import is_within
from ..resources import validator
from ..settings import now_utc
from .launchers import launcher_chosen

if TYPE_CHECKING:
    from ..inputs import Inputs
    from ..models.audit import DiffReport
    from ..models.check import Cell
    from ..models.compat import MatrixRow
    from .evidence import Binding
    from .launchers import LauncherSection


@dataclass(frozen=True, slots=True)
class AccessItem:
    """One subtree with its effective access and the key that decided it."""

    path: str
    key: str


_CARVE_OUT = re.compile(r"^(?::workspace )?carve-out (\.[^ /]+)(?: of writable root (/.*))?$")


def folded_items(items: tuple[AccessItem, ...]) -> list[AccessItem]:
    """The items with the sandbox's own read-only carve-outs (`.git`, `.agents`, `.codex`,
    `.aws` inside every writable root) folded into one line per writable root, at the place
    of the root's first carve-out; every other item as it is."""
    groups: dict[str, list[str]] = {}
    order: list[tuple[str, AccessItem | None]] = []
    for item in items:
        m = _CARVE_OUT.match(item.key)
        root = m.group(2) if m and m.group(2) else item.path.rsplit("/", 1)[0] or "/"
        if m is None or item.path != f"{root.rstrip('/')}/{m.group(1)}":
            order.append(("", item))
            continue
        if root not in groups:
            groups[root] = []
            order.append((root, None))
        groups[root].append(m.group(1))
    out: list[AccessItem] = []
    for root, kept in order:
        if kept is not None:
            out.append(kept)
            continue
        names = groups[root]
        path = (
            f"{root.rstrip('/')}/{names[0]}"
            if len(names) == 1
            else (f"{root.rstrip('/')}/{{{','.join(names)}}}")
        )
        out.append(AccessItem(path, "the sandbox's read-only carve-outs of this writable root"))
    return out


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
    #: Which bundle the run judged, when, with which tools (None: run just now by --canary).
    binding: Binding | None = None


@dataclass(frozen=True, slots=True)
class VerdictItem:
    """One reason the report passes or fails, and the section (anchor id) that shows it."""

    severity: str  # note | warning | error
    text: str
    anchor: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """The banner: PASS/FAIL at --fail-on, the counts, and every item at or above it."""

    passed: bool
    fail_on: str
    counts: tuple[tuple[str, int], ...]
    items: tuple[VerdictItem, ...]

    @property
    def failing(self) -> tuple[VerdictItem, ...]:
        """Items at or above --fail-on."""
        return tuple(i for i in self.items if at_or_above(i.severity, self.fail_on))


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
    #: The coverage cells (mode x root x spelling) of the static check.
    matrix: tuple[Cell, ...]
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
    #: PASS/FAIL and why (always set by build_report).
    verdict: Verdict | None = None
    #: What changed since the lock (`audit --lock`), widening first; None: no lock given.
    changes: tuple[tuple[str, str, str, str], ...] | None = None
    lock_hash: str | None = None
    #: The parent policy every output sets (key, value, road, Codex versions, why).
    parent: tuple[tuple[str, str, str, str, str], ...] = ()
    #: The managed requirements' `deny_read` paths compiled for this bundle (the layer no mode,
    #: cwd or client loosens); empty when the bundle compiles none.
    managed_denies: tuple[str, ...] = ()


#: What the coverage table says for a cell no entry decided.
NO_WINNER = "no entry"

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


def parent_table(r: AuditReport) -> Table:
    """The parent policy (profiles/parent.toml): what every output sets on the Codex parent."""
    header = ("key", "value", "road it closes", "measured on Codex", "why")
    return header, [tuple(x) for x in r.parent]


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def roots_table(r: AuditReport) -> Table:
    """Each protected root: declared path, link chain, canonical target and its vault.

    The vault is denied whole in every mode: the trusted writer saves by temp file + rename in
    that directory, which would detach a deny on the file alone inside running sandboxes.
    """
    header = (
        "root",
        "declared path",
        "link chain",
        "canonical target",
        "vault (denied whole: the writer renames inside it)",
    )
    return header, [tuple(x) for x in r.roots]


def enforced_by(r: AuditReport, cell: Cell) -> str:
    """Which layers deny a coverage cell: the managed requirements (every mode, cwd and client)
    when a compiled `deny_read` covers its real path, and the mode's profile when it denies."""
    layers = []
    if any(is_within(cell.real_path, p) or is_within(cell.spelling, p) for p in r.managed_denies):
        layers.append("managed requirements")
    if cell.access == "deny":
        layers.append("profile")
    return " + ".join(layers) or "none"


def coverage_table(r: AuditReport) -> Table:
    """The mode x root x spelling matrix; a cell passes only on deny."""
    header = (
        "mode",
        "root",
        "kind",
        "spelling",
        "real path",
        "access",
        "winner",
        "enforced by",
        "ok",
    )
    rows: list[tuple[str, ...]] = [
        (
            c.mode,
            c.root,
            c.kind,
            c.spelling,
            c.real_path,
            c.access,
            c.winner or NO_WINNER,
            enforced_by(r, c),
            "ok" if c.ok else "FAIL",
        )
        for c in sorted(r.matrix, key=lambda c: c.ok)  # failing rows first, stable otherwise
    ]
    return header, rows


def lints_table(r: AuditReport) -> Table:
    """Static-check findings."""
    return (
        ("severity", "rule", "name", "message", "where"),
        [(f.severity, f.rule, f.name, f.message, f.where) for f in r.lints],
    )


def probe_why(p: CanaryProbe) -> str:
    """Why a probe's row reads as it does, in words (a deny-expected `allow` is not a slip)."""
    if not p.ok:
        return f"FAIL {p.failures}"
    if p.expected == "any":
        return "ok: any exit is fine; the probe passes while no credential byte shows"
    if p.expected == "absent":
        return "ok: the path is not in the outer sandbox"
    if p.expected == "deny" and p.observed == "allow":
        return (
            "ok: the command itself succeeded, but no credential byte reached its output "
            "(the deny is on the secret, not on the command)"
        )
    if p.kind == "trusted":
        return "ok: the trusted parent still reads and refreshes the credential"
    return f"ok: {p.observed} as expected"


def canary_table(c: CanarySummary) -> Table:
    """Canary probes as decisions (never their output); failing probes first."""
    header = ("mode", "kind", "probe", "expected", "predicted", "observed", "result")
    rows: list[tuple[str, ...]] = [
        (p.mode, p.kind, p.name, p.expected, p.predicted, p.observed, probe_why(p))
        for p in sorted(c.probes, key=lambda p: p.ok)
    ]
    return header, rows


def binding_text(c: CanarySummary) -> str:
    """Which bundle the canary results judged, when, with which tools, and if they are stale."""
    b = c.binding
    if b is None:
        return "Run just now against this bundle."
    tools = ", ".join(f"{k} {v}" for k, v in b.tools)
    text = f"Results for bundle {b.bundle_content_hash}, finished {b.finished} ({tools})."
    if b.other_document:
        text += " Same compiled profiles as this bundle; its document differs (other inputs)."
    if b.stale:
        text += f" STALE: {b.stale}."
    return text


def launcher_why(row: MatrixRow, reviewed: dict[tuple[str, str, str], tuple[str, ...]]) -> str:
    """Why a launcher row is fine or not: controls and unused methods are expected to lose.

    `reviewed` maps an adapter build to (reviewed method, blocked modes...). The result is
    "" for a held or not-supported row, "expected to lose: ..." for a loss that is not a
    problem, and "FAIL: ..." for a loss (or error) of the method the catalog says to use.
    """
    if row.result in ("held", "not-supported"):
        return ""
    method = row.launch_method
    if method == "none" or method.startswith("none+"):
        return "expected to lose: no profile (negative control)"
    if "raw session config" in method:
        return "expected to lose: the agent's raw config (negative control)"
    key = (row.adapter, row.adapter_version, row.codex_version)
    rev = reviewed.get(key)
    if row.result == "lost" and launcher_chosen(row.session_event):
        return "expected to lose: only a launcher's own request causes this event (PC023)"
    if rev is None:
        return f"{row.result}: this build is not in profiles/adapters.toml (no launcher uses it)"
    if method != rev[0]:
        return f"{row.result}: expected, not the reviewed launch method ({rev[0]})"
    if row.session_event in {f"mode:{m}" for m in rev[1:]}:
        return "expected to lose: the reviewed launcher does not forward this mode"
    verb = "lost the deny" if row.result == "lost" else "could not be decided"
    return f"FAIL: the reviewed method {verb}"


def launcher_rows(s: LauncherSection) -> list[tuple[MatrixRow, tuple[str, ...], str]]:
    """The launcher table, failing rows first: each row, its leading cells (adapter, adapter
    version, codex, launch method, session event: the first `MATRIX_COLUMNS`) and why it is
    fine or not (`launcher_why`)."""
    reviewed = launcher_reviewed(s)
    rows = [
        (
            x,
            (x.adapter, x.adapter_version, x.codex_version, x.launch_method, x.session_event),
            launcher_why(x, reviewed),
        )
        for x in s.rows
    ]
    return sorted(rows, key=lambda r: not r[2].startswith("FAIL"))


def launcher_reviewed(s: LauncherSection) -> dict[tuple[str, str, str], tuple[str, ...]]:
    """Adapter build -> (reviewed method, blocked modes...) from the section's summaries."""
    return {
        (a.adapter, a.adapter_version, a.codex_version): (
            a.reviewed or "none",
            *a.reviewed_blocked_modes,
        )
        for a in s.summaries
        if a.reviewed is not None
    }


def report_time(now: str | None) -> datetime | None:
    """`--now` (epoch seconds or 'none'), else SOURCE_DATE_EPOCH, else the current time."""
    if now is not None:
        if now == "none":
            return None
        if not now.isdigit():
            raise UsageError(f"--now must be epoch seconds or 'none', got {now!r}")
        return datetime.fromtimestamp(int(now), tz=UTC)
    return now_utc()


def load_canary_json(path: str, inp: Inputs) -> dict[str, Any]:
    """A `profilec canary --format json` document, read through the run's edge."""
    import jsonschema

    doc = inp.json_object(path, "canary json")
    if "evidence" not in doc and "modes" in doc:
        raise InputError(
            "canary results name no bundle (made before evidence binding); run "
            "`profilec canary --format json` again",
            where=path,
        )
    err = jsonschema.exceptions.best_match(validator("canary-report.schema.json").iter_errors(doc))
    if err is not None:
        loc = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise InputError(
            f"not a canary report (schemas/canary-report.schema.json): {loc}: {err.message}",
            where=path,
        )
    return doc


def _canary(doc: dict[str, Any], binding: Binding | None) -> CanarySummary:
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
        binding=binding,
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
    ctx = session_contexts(bundle.layout.workspace_roots)[0]
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
    binding: Binding | None = None,
    fail_on: str = "error",
    changes: DiffReport | None = None,
) -> AuditReport:
    """Evaluate and check the bundle, and gather what the report shows."""
    report = run_check(
        from_bundle(bundle, bundle.mode_profiles),
        codex_version=str(doc.get("codex_version")),
    )
    matrix = tuple(report.cells)
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
    rep = AuditReport(
        generated=now.strftime("%Y-%m-%dT%H:%M:%SZ") if now else None,
        profilec_version=str(doc.get("profilec_version")),
        codex_version=str(doc.get("codex_version")),
        codex_version_range=str(doc.get("codex_version_range", "")),
        content_hash=str(doc.get("content_hash")),
        input_hashes=tuple(sorted((str(k), str(v)) for k, v in (inputs or {}).items())),
        default_mode=bundle.default_mode,
        workspace_roots=tuple(bundle.layout.workspace_roots),
        roots=roots,
        parent=tuple(
            (s.key, json.dumps(s.value), s.road, s.codex_versions, _first_sentence(s.rationale))
            for s in bundle.parent
        ),
        modes=_modes(bundle, prov),
        matrix=matrix,
        check_passed=report.passed,
        lints=lints,
        canary=_canary(canary, binding) if canary is not None else None,
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
        changes=(
            tuple((c.direction, c.mode, c.path or "-", c.detail) for c in changes.changes)
            if changes is not None
            else None
        ),
        lock_hash=changes.old_hash if changes is not None else None,
        managed_denies=_managed_denies(bundle),
    )
    return replace(rep, verdict=verdict(rep, fail_on))


def _managed_denies(bundle: CompiledBundle) -> tuple[str, ...]:
    try:
        return tuple(deny_read_paths(bundle))
    except ProfilecError:  # no requirements compile for this bundle: compile says why
        return ()


def verdict(r: AuditReport, fail_on: str) -> Verdict:
    """PASS unless an item sits at or above `fail_on`; every item names its section."""
    items: list[VerdictItem] = []
    for cell in r.matrix:
        if not cell.ok:
            items.append(
                VerdictItem(
                    "error",
                    f"coverage: {cell.mode} {cell.root} {cell.spelling} is {cell.access} "
                    f"(via {cell.winner or NO_WINNER})",
                    "coverage",
                )
            )
    for i, f in enumerate(r.lints):
        items.append(VerdictItem(f.severity, f"lint {f.rule} {f.name}: {f.message}", f"lint-{i}"))
    if r.canary is None:
        items.append(VerdictItem("note", f"bundle {NOT_TESTED}", "canaries"))
    else:
        c = r.canary
        for p in c.probes:
            if not p.ok:
                items.append(
                    VerdictItem("error", f"canary {p.mode} {p.name}: {p.failures}", "canaries")
                )
        if not c.passed and all(p.ok for p in c.probes):
            items.append(VerdictItem("error", f"canary run {c.run_id} failed", "canaries"))
        if c.binding is not None and c.binding.stale:
            items.append(
                VerdictItem("warning", f"canary evidence stale: {c.binding.stale}", "canaries")
            )
    if r.launchers is not None:
        for a in r.launchers.summaries:
            if a.contradiction:
                items.append(
                    VerdictItem(
                        "error",
                        f"launcher {a.adapter} {a.adapter_version}: {a.contradiction}",
                        "launchers-section",
                    )
                )
    widening = sum(1 for ch in r.changes or () if ch[0] == "widening")
    if widening:
        items.append(
            VerdictItem("warning", f"{widening} widening changes since the lock", "changes")
        )
    items.sort(key=lambda i: -SEVERITY_RANK[i.severity])
    failed_cells = sum(1 for c in r.matrix if not c.ok)
    counts = (
        ("cells not denied", failed_cells),
        ("cells", len(r.matrix)),
        *((f"{sev}s", sum(1 for i in items if i.severity == sev)) for sev in ("error", "warning")),
        ("canary probes failed", sum(1 for p in (r.canary.probes if r.canary else ()) if not p.ok)),
    )
    return Verdict(
        passed=not any(at_or_above(i.severity, fail_on) for i in items),
        fail_on=fail_on,
        counts=counts,
        items=tuple(items),
    )


NOT_TESTED = "not tested by canaries"
