"""`python3 -m harness.difftest`: run the differential tester against the real Codex."""

from __future__ import annotations

import argparse
import shutil
import sys

from profilec.settings import codex_binary, codex_version

from .compare import (
    cases_for,
    default_workdir,
    disagreement_lines,
    policy_predictor,
    run_many,
    table,
    unsafe,
    wrong_predictor,
)
from .gen import make_case
from .refusals import outside_list
from .run import predictor_for


def main(argv: list[str] | None = None) -> int:
    """Parse, run, print the table and disagreements; exit 1 on any UNSAFE probe."""
    ap = argparse.ArgumentParser(prog="python3 -m harness.difftest")
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--case", help="replay one case: SEED:INDEX")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--held-out",
        action="store_true",
        help="add the held-out shapes (carve-out links, missing carve-out denies, a CODEX_HOME "
        "without its lock, entries under a denied directory)",
    )
    ap.add_argument("--self-test", action="store_true", help="use a wrong predictor; must disagree")
    ap.add_argument("--show", type=int, default=50, help="disagreement lines to print")
    ap.add_argument(
        "--predictor",
        choices=("enforce", "policy"),
        default="enforce",
        help="policy = the compiled policy alone (a control that must show UNSAFE probes)",
    )
    a = ap.parse_args(argv)
    codex = codex_binary()
    version = codex_version()
    if codex is None or not codex.is_file():
        print(f"difftest: codex {codex_version()} is not installed (.ci/tools.sh)", file=sys.stderr)
        return 7
    if a.case:
        seed_s, _, idx_s = a.case.partition(":")
        cases = [make_case(int(seed_s), int(idx_s), held_out=a.held_out)]
    else:
        cases = cases_for(a.seed, a.cases, held_out=a.held_out)
    workdir = default_workdir()
    try:
        results = run_many(
            codex,
            cases,
            workdir,
            workers=a.workers,
            predictor=wrong_predictor
            if a.self_test
            else (policy_predictor if a.predictor == "policy" else predictor_for(version)),
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    shapes = " (held-out shapes)" if a.held_out else ""
    print(f"codex {codex_version()} ({codex}); seed {a.seed}; {len(results)} cases{shapes}")
    print(table(results, version))
    for line in disagreement_lines(results, a.show):
        print(line)
    bad = unsafe(results)
    print(f"UNSAFE probes (sandbox allows, evaluator denies): {len(bad)}")
    loose = outside_list(results, version)
    print(f"one-sided refusals outside the documented list: {len(loose)}")
    for r, code in loose[: a.show]:
        print(f"  {r.case.case_id} {r.case_class} {code}")
    if a.self_test:
        n = sum(len(r.disagreements) for r in results)
        print(f"self-test: the wrong predictor produced {n} disagreements")
        return 0 if n > 0 else 1
    return 1 if bad or loose else 0


if __name__ == "__main__":
    raise SystemExit(main())
