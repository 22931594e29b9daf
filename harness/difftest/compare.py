"""Run many cases, compare each probe with the prediction, classify and tabulate.

Probe classes: `agree`; `stricter-documented` (the sandbox denies what the evaluator allows: the
proof stays on the safe side, docs/codex-semantics.md lists why); `UNSAFE` (the sandbox allows
what the evaluator denies: must never happen). Case classes: `ran`, `refused-by-both`,
`refused-sandbox-only`, `refused-evaluator-only` (its probes are still compared).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.codex_oracle import map_per_home
from profilec.codex.fsview import FsSnapshot
from profilec.codex.resolve import EvalContext

from .gen import Case, make_case
from .refusals import refusal_class, refusal_table
from .run import (
    Outcome,
    Predictor,
    context,
    managed_dir,
    materialize,
    overrides,
    place,
    plan,
    predict,
    run_codex,
    snapshot,
)

PROBE_CLASSES = ("agree", "stricter-documented", "UNSAFE")
CASE_CLASSES = ("ran", "refused-by-both", "refused-sandbox-only", "refused-evaluator-only")


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One probe where prediction and sandbox differ."""

    case_id: str
    probe: int
    kind: str
    path: str
    predicted: Outcome
    observed: Outcome
    args: tuple[str, ...]
    cwd: str
    home: str
    tmpdir: str | None


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case."""

    case: Case
    case_class: str
    probes: tuple[tuple[str, str], ...]  # (probe kind, probe class)
    disagreements: tuple[Disagreement, ...]
    refusal_evaluator: str
    refusal_sandbox: str


def run_case(
    codex: Path,
    case: Case,
    workdir: Path,
    codex_home: str,
    predictor: Predictor = predict,
) -> CaseResult:
    """Materialize, predict, run once, compare; the tree is removed afterwards."""
    base_p = workdir / f"c{case.seed}-{case.index}"
    case = materialize(case, base_p)
    base = str(base_p)
    try:
        perms = place(case.permissions, base)
        fs: FsSnapshot = snapshot(base_p)
        ctx: EvalContext = context(case, perms, base)
        refused_pred, pred, why = predictor(case, perms, ctx, fs, base)
        plans = plan(case, base)
        obs = run_codex(codex, case, perms, base, codex_home, plans)
    finally:
        shutil.rmtree(base_p, ignore_errors=True)
        shutil.rmtree(managed_dir(base), ignore_errors=True)
    if obs.refused and refused_pred:
        cls = "refused-by-both"
    elif obs.refused:
        cls = "refused-sandbox-only"
    elif refused_pred:
        cls = "refused-evaluator-only"
    else:
        cls = "ran"
    probes: list[tuple[str, str]] = []
    dis: list[Disagreement] = []
    args = tuple(overrides(perms))
    if not obs.refused:
        for pl in plans:
            i = pl.probe.idx
            o = obs.outcomes.get(i)
            if o is None:
                continue
            p = pred[i]
            if p == o:
                probes.append((pl.probe.kind, "agree"))
                continue
            probes.append((pl.probe.kind, "UNSAFE" if o == "allow" else "stricter-documented"))
            dis.append(
                Disagreement(
                    case.case_id,
                    i,
                    pl.probe.kind,
                    pl.spelled,
                    p,
                    o,
                    args,
                    f"{base}/{case.cwd}",
                    f"{base}/{case.home}",
                    f"{base}/{case.tmpdir}" if case.tmpdir else None,
                )
            )
    return CaseResult(case, cls, tuple(probes), tuple(dis), why, obs.stderr if obs.refused else "")


def run_many(
    codex: Path,
    cases: Iterable[Case],
    workdir: Path,
    *,
    workers: int = 2,
    predictor: Predictor = predict,
) -> list[CaseResult]:
    """Every case, `workers` at a time, in input order; a CODEX_HOME per worker (not under /tmp)."""
    workdir.mkdir(parents=True, exist_ok=True)
    return map_per_home(
        lambda c, home: run_case(codex, c, workdir, home, predictor),
        list(cases),
        str(workdir / "codex-home"),
        workers=workers,
    )


def cases_for(seed: int, count: int, *, start: int = 0, held_out: bool = False) -> list[Case]:
    """The cases `start .. start+count-1` of a seed (`held_out`: with `gen._held_out`'s shapes)."""
    return [make_case(seed, i, held_out=held_out) for i in range(start, start + count)]


def table(results: Sequence[CaseResult], version: str) -> str:
    """The agreement table: probes by kind x class, cases by feature tag x case class."""
    by_kind: Counter[tuple[str, str]] = Counter()
    for r in results:
        for kind, cls in r.probes:
            by_kind[(kind, cls)] += 1
    lines = ["| probe | " + " | ".join(PROBE_CLASSES) + " |", "|---|" + "---|" * len(PROBE_CLASSES)]
    for kind in ("read", "list", "write"):
        lines.append(
            f"| {kind} | " + " | ".join(str(by_kind[(kind, c)]) for c in PROBE_CLASSES) + " |"
        )
    lines.append(
        "| all | "
        + " | ".join(
            str(sum(by_kind[(k, c)] for k in ("read", "list", "write"))) for c in PROBE_CLASSES
        )
        + " |"
    )
    by_tag: Counter[tuple[str, str]] = Counter()
    tags = sorted({t for r in results for t in r.case.tags} | {"(any)"})
    for r in results:
        for t in (*r.case.tags, "(any)"):
            by_tag[(t, r.case_class)] += 1
            if any(c != "agree" for _, c in r.probes):
                by_tag[(t, "with-disagreement")] += 1
    cols = (*CASE_CLASSES, "with-disagreement")
    lines += ["", "| case class | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for t in tags:
        lines.append(f"| {t} | " + " | ".join(str(by_tag[(t, c)]) for c in cols) + " |")
    lines += ["", refusal_table(results, version)]
    return "\n".join(lines)


def unsafe(results: Sequence[CaseResult]) -> list[Disagreement]:
    """Every probe the sandbox allowed and the evaluator denied."""
    return [d for r in results for d in r.disagreements if d.observed == "allow"]


def disagreement_lines(results: Sequence[CaseResult], limit: int = 50) -> list[str]:
    """One JSON line per disagreement (seed:case, path, predicted, observed, exact -c args)."""
    out: list[str] = []
    for r in results:
        for d in r.disagreements:
            out.append(
                json.dumps(d.__dict__ if hasattr(d, "__dict__") else _asdict(d), sort_keys=True)
            )
        if r.case_class in ("refused-sandbox-only", "refused-evaluator-only"):
            out.append(
                json.dumps(
                    {
                        "case_id": r.case.case_id,
                        "class": r.case_class,
                        "refusal_class": refusal_class(r),
                        "evaluator": r.refusal_evaluator,
                        "sandbox": r.refusal_sandbox[-400:],
                    },
                    sort_keys=True,
                )
            )
    return out[:limit]


def _asdict(d: Disagreement) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(d)


def wrong_predictor(
    case: Case, perms: Any, ctx: EvalContext, fs: FsSnapshot, base: str
) -> tuple[bool, dict[int, Outcome], str]:
    """Self-test: a predictor that ignores the whole profile and says deny everywhere."""
    return False, {p.idx: "deny" for p in case.probes}, ""


def policy_predictor(
    case: Case, perms: Any, ctx: EvalContext, fs: FsSnapshot, base: str
) -> tuple[bool, dict[int, Outcome], str]:
    """Control: the compiled policy alone (`decide()` at the lexical spelling, no enforcement).

    This is what `check` proved before the enforcement model; the tester must catch it.
    """
    from profilec.codex.lexical import EvaluationError
    from profilec.codex.resolve import resolve

    from .gen import PROFILE_ID

    try:
        eff = resolve(perms, PROFILE_ID, ctx)
    except EvaluationError as exc:
        return True, {p.idx: "deny" for p in case.probes}, exc.message
    out: dict[int, Outcome] = {}
    for p in case.probes:
        d = eff.decide(f"{base}/{p.rel}")
        ok = d.writable if p.kind == "write" else d.readable
        out[p.idx] = "allow" if ok else "deny"
    return False, out, ""


def default_workdir() -> Path:
    """Scratch for trees and CODEX_HOME: never under /tmp (Codex refuses its helper there)."""
    env = os.environ.get("PROFILEC_DIFFTEST_DIR")
    from profilec.settings import cache_dir

    # Canonical: a tree reached through a symlinked ancestor (a linked ~/.cache) makes bwrap
    # refuse its writable roots ("Can't mkdir parents for ...: No such file or directory").
    base = Path(env) if env else cache_dir() / f"difftest-{os.getpid()}"
    return Path(os.path.realpath(base))
