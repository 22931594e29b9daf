"""The differential tester's own parts, without Codex: cases are deterministic, and its probe
script run unsandboxed sees every judgeable probe allowed (so a deny can only come from a
sandbox), and denies when the script reads nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from profilec.difftest.gen import make_case
from profilec.difftest.run import judge, materialize, overrides, place, plan, script


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
    from profilec.difftest.compare import default_workdir

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    monkeypatch.setenv("PROFILEC_DIFFTEST_DIR", str(tmp_path / "link" / "d"))
    assert default_workdir() == tmp_path / "real" / "d"
