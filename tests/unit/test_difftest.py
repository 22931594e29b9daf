"""The differential tester's own parts, without Codex: cases are deterministic, and its probe
script run unsandboxed sees every judgeable probe allowed (so a deny can only come from a
sandbox), and denies when the script reads nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.difftest.gen import make_case
from harness.difftest.run import judge, materialize, overrides, place, plan, script


def test_cases_are_deterministic_and_varied() -> None:
    a, b = make_case(5, 3), make_case(5, 3)
    assert a == b
    cases = [make_case(5, i) for i in range(40)]
    assert len({str(c.permissions) for c in cases}) > 30
    assert any("glob" in c.tags for c in cases) and any("cwd-link" in c.tags for c in cases)
    assert all(15 <= len(c.probes) <= 40 for c in cases)


def test_the_script_unsandboxed_allows_every_probe(tmp_path: Path) -> None:
    for i in range(3):
        case = materialize(make_case(9, i), tmp_path / f"c{i}")
        base = str(tmp_path / f"c{i}")
        plans = plan(case, base)
        wmark = f"W{i}"
        done = subprocess.run(
            ["sh", "-c", script(plans, wmark)], capture_output=True, text=True, check=True
        )
        obs = judge(done.stdout, done.stderr, plans, wmark)
        assert not obs.refused
        assert obs.outcomes and set(obs.outcomes.values()) == {"allow"}, (case.case_id, obs)
        # the -c arguments carry the placed paths
        perms = place(case.permissions, base)
        assert "@/" not in " ".join(overrides(perms))


def test_no_begin_line_is_a_refusal_and_no_output_is_deny(tmp_path: Path) -> None:
    case = materialize(make_case(9, 1), tmp_path / "c")
    plans = plan(case, str(tmp_path / "c"))
    assert judge("", "bwrap: boom", plans, "W").refused
    obs = judge("@@BEGIN@@\n", "", plans, "W")
    reads = [p.probe.idx for p in plans if p.probe.kind != "write" and p.expect]
    assert reads and all(obs.outcomes[i] == "deny" for i in reads)


def test_the_default_workdir_is_canonical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A workdir reached through a symlink (a linked ~/.cache) made bwrap refuse most cases."""
    from harness.difftest.compare import default_workdir

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    monkeypatch.setenv("PROFILEC_DIFFTEST_DIR", str(tmp_path / "link" / "d"))
    assert default_workdir() == tmp_path / "real" / "d"


#: Refusal texts measured on 0.171.0 (difftest seed 20261203, 1,000 cases) and the class each is.
MEASURED_REFUSALS = (
    ("bwrap: Can't chdir to /c/home/l0: Permission denied", "cwd-denied"),
    (
        "bwrap: Can't mount tmpfs on /newroot/c/tmp/cfgl3: No such file or directory",
        "entry-on-symlink",
    ),
    ("bwrap: Can't create file at /c/o/k2/n3l1: No such file or directory", "entry-on-symlink"),
    (
        "bwrap: Can't bind mount /bindfileXXXXXX on /newroot/c/o/cfg/inner/.git: Unable to mount "
        "source on destination: No such file or directory",
        "missing-nested-entries",
    ),
    ("bwrap: Can't create file at /c/ws/.agents: Is a directory", "missing-nested-entries"),
    (
        "bwrap: Can't create file at /c/ws/inner/cfg.t3: Read-only file system",
        "deny-inside-denied-dir",
    ),
    (
        "bwrap: Can't mkdir parents for /c/o/src/src/k1/vault: Read-only file system",
        "deny-inside-denied-dir",
    ),
    (
        'Error: unsupported configuration path "/c/o/]z" using POSIX path syntax',
        "unsupported-path-syntax",
    ),
    (
        "error building bubblewrap command: Fatal error: cannot enforce sandbox read-only path "
        "/c/ws/l0 because it crosses writable symlink /c/ws/l0",
        "crosses-writable-symlink",
    ),
    (
        "panicked: failed to inspect synthetic bubblewrap mount target /c/o/x.t1/.aws: Not a "
        "directory (os error 20)",
        "write-on-file",
    ),
    ("bwrap: Can't mkdir /c/o/q?/.codex: Not a directory", "write-on-file"),
    ("bwrap: Can't mkdir parents for /c/f/.git: Not a directory", "write-on-file"),
    (
        "Fatal error: unreadable glob pattern is invalid for /c: error parsing glob '/x{': "
        "unclosed alternate group; missing '}'",
        "invalid-glob",
    ),
    ("something else entirely", "unclassified"),
)


@pytest.mark.parametrize(("message", "code"), MEASURED_REFUSALS)
def test_refusal_texts_are_classed(message: str, code: str) -> None:
    from harness.difftest.refusals import classify

    assert classify(message) == code


def test_every_evaluator_refusal_code_has_a_class_pattern() -> None:
    from harness.difftest.refusals import CLASS_PATTERNS
    from profilec.startup import REFUSAL_CLASSES

    assert set(REFUSAL_CLASSES) <= {c for c, _ in CLASS_PATTERNS}


def test_one_sided_refusals_outside_the_list_are_reported_and_on_it_are_not() -> None:
    from harness.difftest import refusals
    from harness.difftest.compare import CaseResult, table

    def res(i: int, cls: str, ev: str, sb: str) -> CaseResult:
        return CaseResult(make_case(3, i), cls, (), (), ev, sb)

    rows = [
        res(0, "refused-sandbox-only", "", "bwrap: Can't chdir to /x: Permission denied"),
        res(1, "refused-evaluator-only", "bwrap: Can't bind mount /bindfileX on /y: No", ""),
        res(2, "refused-by-both", "bwrap: Can't chdir to /x", "bwrap: Can't chdir to /x"),
        res(3, "ran", "", ""),
    ]
    out = refusals.outside_list(rows, "0.171.0")
    assert [(r.case.case_id, code) for r, code in out] == [
        ("3:0", "cwd-denied"),
        ("3:1", "missing-nested-entries"),
    ]
    text = table(rows, "0.171.0")
    assert "| cwd-denied | 1 | **1** (not on the list) | 0 |" in text
    accepted = refusals.Accepted("cwd-denied", "sandbox-only", ("0.171.0",), "test", ("3:0",))
    old = refusals.ACCEPTED
    refusals.ACCEPTED = (accepted,)
    try:
        assert [c for _r, c in refusals.outside_list(rows, "0.171.0")] == ["missing-nested-entries"]
        # accepted on 0.171.0 only: on 0.166.0 the same refusal stays outside the list
        assert [c for _r, c in refusals.outside_list(rows, "0.166.0")] == [
            "cwd-denied",
            "missing-nested-entries",
        ]
    finally:
        refusals.ACCEPTED = old


def test_the_documented_list_matches_the_code() -> None:
    from harness.difftest.refusals import accepted_markdown

    doc = (Path(__file__).resolve().parents[2] / "docs" / "codex-semantics.md").read_text(
        encoding="utf-8"
    )
    start = doc.index("<!-- one-sided:")
    body = doc[doc.index("\n", start) + 1 : doc.index("<!-- /one-sided -->")]
    assert body.rstrip("\n") == accepted_markdown()


def test_concurrent_codex_runs_never_share_a_codex_home(tmp_path: Path) -> None:
    """Two workers running at once get two CODEX_HOMEs; each worker keeps its own; order holds."""
    import threading

    from harness.codex_oracle import map_per_home

    both_running = threading.Barrier(2, timeout=30)
    seen: list[tuple[int, int, str]] = []
    lock = threading.Lock()

    def run(item: int, home: str) -> int:
        if item < 2:
            both_running.wait()  # the first two items are provably in flight together
        with lock:
            seen.append((item, threading.get_ident(), home))
        assert Path(home).is_dir()
        return item * 10

    assert map_per_home(run, list(range(8)), str(tmp_path / "ch"), workers=2) == [
        i * 10 for i in range(8)
    ]
    first_two = {home for item, _, home in seen if item < 2}
    assert len(first_two) == 2
    homes_by_thread: dict[int, set[str]] = {}
    for _, ident, home in seen:
        homes_by_thread.setdefault(ident, set()).add(home)
    assert all(len(h) == 1 for h in homes_by_thread.values())
    assert len({h for hs in homes_by_thread.values() for h in hs}) == len(homes_by_thread)
    assert all(Path(h).parent == tmp_path / "ch" for _, _, h in seen)


def test_a_managed_only_acceptance_covers_only_cases_under_managed_requirements() -> None:
    """An entry with `managed_only` accepts the one-sided refusal of a case run under managed
    requirements (3:0 has a managed `deny_read` list) and not the same refusal elsewhere (3:1)."""
    from harness.difftest import refusals
    from harness.difftest.compare import CaseResult

    under, plain = make_case(3, 0), make_case(3, 1)
    assert under.managed and not plain.managed
    msg = "bwrap: Can't chdir to /x: Permission denied"
    rows = [
        CaseResult(under, "refused-sandbox-only", (), (), "", msg),
        CaseResult(plain, "refused-sandbox-only", (), (), "", msg),
    ]
    accepted = refusals.Accepted(
        "cwd-denied", "sandbox-only", ("0.171.0",), "test", ("3:0",), managed_only=True
    )
    old = refusals.ACCEPTED
    refusals.ACCEPTED = (accepted,)
    try:
        assert [r.case.case_id for r, _c in refusals.outside_list(rows, "0.171.0")] == ["3:1"]
        assert "| cwd-denied | 0 | 2 (**1** not on the list) | 0 |" in refusals.refusal_table(
            rows, "0.171.0"
        )
    finally:
        refusals.ACCEPTED = old


def test_managed_cases_hold_directories_and_their_requirements_parse_as_toml(
    tmp_path: Path,
) -> None:
    """About two cases in five run under managed requirements; each names 1-2 directories of
    its tree, and the file the runner binds over /etc/codex is TOML holding exactly them."""
    import tomllib

    from harness.difftest.run import managed_paths, requirements_text, with_managed

    cases = [make_case(11, i) for i in range(100)]
    under = [c for c in cases if c.managed]
    assert 25 <= len(under) <= 55
    for c in under:
        dirs = {f"@/{n.rel}" for n in c.nodes if n.kind == "dir"}
        assert set(c.managed) <= dirs and 1 <= len(c.managed) <= 2
        assert "managed" in c.tags
        placed = managed_paths(c, str(tmp_path))
        doc = tomllib.loads(requirements_text(placed))
        assert doc == {"permissions": {"filesystem": {"deny_read": list(placed)}}}
        merged = with_managed(place(c.permissions, str(tmp_path)), placed)
        assert all(merged["dt"]["filesystem"][p] == "deny" for p in placed)
