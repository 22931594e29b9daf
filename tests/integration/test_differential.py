"""Differential test: the evaluator's enforcement model against the real `codex sandbox`.

1,000 seeded cases (two fixed seeds), ONE sandboxed script per case probing ~40 paths. The rules
under test: the sandbox never allows what the evaluator denies (no UNSAFE probe), and no case is
refused by one side only unless its (class, side) is on the documented list
(harness.difftest.refusals.ACCEPTED, docs/codex-semantics.md): compile refuses exactly the
profiles Codex will not start. The self-test swaps in a wrong predictor and must see
disagreements, so this test can fail.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.difftest.compare import (
    CaseResult,
    cases_for,
    default_workdir,
    disagreement_lines,
    run_many,
    table,
    unsafe,
    wrong_predictor,
)
from harness.difftest.refusals import outside_list

pytestmark = pytest.mark.codex

SEEDS = ((20261203, 500), (7, 500))


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    """Trees and CODEX_HOME outside /tmp (Codex refuses its helper under the temp dir)."""
    d = default_workdir()
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def results(codex_bin: Path, workdir: Path) -> list[CaseResult]:
    cases = [c for seed, n in SEEDS for c in cases_for(seed, n)]
    return run_many(codex_bin, cases, workdir, workers=2)


def test_sandbox_never_allows_what_the_evaluator_denies(results: list[CaseResult]) -> None:
    assert len(results) >= 1000
    bad = unsafe(results)
    detail = "\n".join(disagreement_lines(results, 20))
    assert not bad, f"{len(bad)} UNSAFE probes\n{table(results)}\n{detail}"


def test_no_one_sided_refusal_outside_the_documented_list(results: list[CaseResult]) -> None:
    loose = outside_list(results)
    detail = "\n".join(
        f"{r.case.case_id} {r.case_class} {code}: "
        f"{(r.refusal_sandbox or r.refusal_evaluator)[-300:]}"
        for r, code in loose
    )
    assert not loose, f"{len(loose)} one-sided refusals\n{table(results)}\n{detail}"
    both = sum(1 for r in results if r.case_class == "refused-by-both")
    assert both >= 100, "the cases must exercise refusals at all (measured: ~31%)"


def test_most_cases_run_and_are_judged(results: list[CaseResult]) -> None:
    judged = sum(len(r.probes) for r in results)
    ran = sum(1 for r in results if r.case_class == "ran")
    assert ran >= 400 and judged >= 10000, table(results)


def test_self_test_wrong_predictor_reports_disagreements(codex_bin: Path, workdir: Path) -> None:
    res = run_many(codex_bin, cases_for(20261203, 20), workdir, predictor=wrong_predictor)
    assert unsafe(res), "a predictor that denies everything must be caught"
    assert all(d.args and d.case_id for r in res for d in r.disagreements)
