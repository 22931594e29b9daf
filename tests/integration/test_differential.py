"""Differential test: the evaluator's enforcement model against the real `codex sandbox`, on
every Codex release a launch may run (the pin, and 0.166.0: codex-acp 2.6.0 accepts any
`@openai/codex ^0.166.0`).

Per release, 600 seeded cases (two fixed seeds), ONE sandboxed script per case probing ~40
paths, predicted with that release's enforcement model (`codex.enforce.model_for`). The rules
under test: the sandbox never allows what the evaluator denies (no UNSAFE probe), and no case is
refused by one side only unless its (class, side) is on the documented list
(harness.difftest.refusals.ACCEPTED, docs/codex-semantics.md): compile refuses exactly the
profiles that Codex will not start. The self-test swaps in a wrong predictor and must see
disagreements, and the other release's model must disagree where the releases differ, so this
test can fail.
"""

from __future__ import annotations

import dataclasses
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
from harness.difftest.gen import Cell, cells
from harness.difftest.refusals import outside_list
from harness.difftest.run import predictor_for
from profilec.codex import refusals as classes
from profilec.codex.vocabulary import DEFAULT_CODEX_VERSION
from profilec.settings import cache_dir
from tests.integration.conftest import missing

pytestmark = pytest.mark.codex

#: The floor of codex-acp 2.6.0's `@openai/codex ^0.166.0` (.ci/tools.sh installs it).
FLOOR = "0.166.0"
VERSIONS = (DEFAULT_CODEX_VERSION, FLOOR)
SEEDS = ((20261203, 300), (7, 300))
#: Held-out cases (`--held-out` shapes): measured 3/150 refused by Codex alone on each release
#: before issue 41's classes (4102:1, :2, :43), 0 after.
HELD_OUT = (4102, 150)
#: The classes issue 41 added or widened (the negative control runs without them).
NEW_CLASSES = (
    classes.carve_out_on_link,
    classes.missing_deny_under_read_only,
    classes.deny_link_inside_denied_dir,
)


def binary(version: str) -> Path:
    """The native codex of `version` in the cache (.ci/tools.sh installs both)."""
    base = cache_dir() / f"codex-{version}" / "node_modules" / "@openai"
    for cand in sorted(base.glob("codex-linux-*/vendor/*/bin/codex")):
        if cand.is_file():
            return cand
    missing(f"codex {version} is not installed (run .ci/tools.sh)")


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    """Trees and CODEX_HOME outside /tmp (Codex refuses its helper under the temp dir)."""
    d = default_workdir()
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module", params=VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def results(version: str, workdir: Path) -> list[CaseResult]:
    cases = [c for seed, n in SEEDS for c in cases_for(seed, n)]
    return run_many(
        binary(version), cases, workdir / version, workers=2, predictor=predictor_for(version)
    )


def test_sandbox_never_allows_what_the_evaluator_denies(
    version: str, results: list[CaseResult]
) -> None:
    assert len(results) >= 600
    bad = unsafe(results)
    detail = "\n".join(disagreement_lines(results, 20))
    assert not bad, (
        f"codex {version}: {len(bad)} UNSAFE probes\n{table(results, version)}\n{detail}"
    )


def test_no_one_sided_refusal_outside_the_documented_list(
    version: str, results: list[CaseResult]
) -> None:
    loose = outside_list(results, version)
    detail = "\n".join(
        f"{r.case.case_id} {r.case_class} {code}: "
        f"{(r.refusal_sandbox or r.refusal_evaluator)[-300:]}"
        for r, code in loose
    )
    assert not loose, (
        f"codex {version}: {len(loose)} one-sided refusals\n{table(results, version)}\n{detail}"
    )
    both = sum(1 for r in results if r.case_class == "refused-by-both")
    assert both >= 60, "the cases must exercise refusals at all (measured: ~30%)"


def test_most_cases_run_and_are_judged(version: str, results: list[CaseResult]) -> None:
    judged = sum(len(r.probes) for r in results)
    ran = sum(1 for r in results if r.case_class == "ran")
    assert ran >= 240 and judged >= 6000, table(results, version)


def test_self_test_wrong_predictor_reports_disagreements(version: str, workdir: Path) -> None:
    res = run_many(
        binary(version), cases_for(20261203, 20), workdir / version, predictor=wrong_predictor
    )
    assert unsafe(res), "a predictor that denies everything must be caught"
    assert all(d.args and d.case_id for r in res for d in r.disagreements)


def test_the_floor_needs_its_own_model(workdir: Path) -> None:
    """Negative control: 0.166.0 judged with the 0.171.0 model disagrees (a deny glob matches
    each file's name there, so it masks files the 0.171.0 model leaves readable)."""
    res = run_many(
        binary(FLOOR),
        cases_for(20261203, 60),
        workdir / "control",
        predictor=predictor_for(DEFAULT_CODEX_VERSION),
    )
    stricter = [d for r in res for d in r.disagreements if d.observed == "deny"]
    loose = outside_list(res, FLOOR)
    assert stricter or loose, table(res, FLOOR)


def test_about_two_cases_in_five_run_under_managed_requirements(
    version: str, results: list[CaseResult]
) -> None:
    """The cases with a managed `deny_read` list ran under it as a session does (bound over
    /etc/codex, `codex sandbox --include-managed-config`) and were judged by the same rules."""
    managed = [r for r in results if r.case.managed]
    ran = [r for r in managed if r.case_class == "ran"]
    assert len(managed) >= 180 and len(ran) >= 50, table(results, version)
    assert sum(len(r.probes) for r in ran) >= 1000


def test_control_a_predictor_blind_to_the_requirements_disagrees(
    version: str, workdir: Path
) -> None:
    """Negative control: the same managed cases judged as if no requirements were in force
    disagree (Codex masked what the blind model allows, or refused to start what it would
    run), so the requirements really reached the sandbox."""
    cases = [c for c in cases_for(20261203, 100) if c.managed]

    def blind(case, perms, ctx, fs, base):  # type: ignore[no-untyped-def]
        return predictor_for(version)(dataclasses.replace(case, managed=()), perms, ctx, fs, base)

    res = run_many(binary(version), cases, workdir / f"blind-{version}", predictor=blind)
    stricter = [d for r in res for d in r.disagreements if d.observed == "deny"]
    refused = [r for r in res if r.case_class == "refused-sandbox-only"]
    assert len(stricter) + len(refused) >= 10, table(res, version)


@pytest.mark.parametrize("cell", cells(), ids=lambda c: c.name)
def test_held_out_cells_codex_refuses_and_so_does_the_evaluator(
    version: str, workdir: Path, cell: Cell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each held-out class of issue 41: Codex refuses the case and the evaluator predicts the
    refusal; its control starts on both sides. Negative control: the evaluator without the
    classes issue 41 added lets the refused case start (or the cell proves nothing new)."""
    pair = [cell.refused, cell.control]
    res = run_many(
        binary(version),
        pair,
        workdir / f"cells-{version}",
        workers=1,
        predictor=predictor_for(version),
    )
    refused, control = res
    assert refused.case_class == "refused-by-both", (
        refused.refusal_sandbox,
        refused.refusal_evaluator,
    )
    assert cell.fragment in refused.refusal_sandbox, refused.refusal_sandbox
    assert control.case_class == "ran", (control.refusal_sandbox, control.refusal_evaluator)
    if cell.name in ("deny-under-denied-dir", "deny-missing-carve-out"):
        return  # modelled before issue 41 (measured: no one-sided case), kept as a cell
    for model, run in list(classes.FS_CLASSES_BY_MODEL.items()):
        kept = tuple(c for c in run if c not in NEW_CLASSES)
        monkeypatch.setitem(classes.FS_CLASSES_BY_MODEL, model, kept)
    blind = run_many(
        binary(version),
        [cell.refused],
        workdir / f"cells-{version}",
        workers=1,
        predictor=predictor_for(version),
    )
    assert blind[0].case_class == "refused-sandbox-only", blind[0].refusal_evaluator


def test_held_out_shapes_leave_no_one_sided_refusal(version: str, workdir: Path) -> None:
    """Fresh random cases with the held-out shapes (carve-out links, missing carve-out denies,
    a CODEX_HOME without its lock, entries under a denied directory): no one-sided refusal
    outside the documented list, no UNSAFE probe, and the shapes are really there."""
    seed, n = HELD_OUT
    res = run_many(
        binary(version),
        cases_for(seed, n, held_out=True),
        workdir / f"held-out-{version}",
        predictor=predictor_for(version),
    )
    loose = outside_list(res, version)
    assert not loose and not unsafe(res), table(res, version)
    shapes = {t for r in res for t in r.case.tags}
    assert {"carve-link", "carve-deny", "lock-missing", "under-denied"} <= shapes
    assert sum(1 for r in res if r.case_class == "refused-by-both") >= 30, table(res, version)
