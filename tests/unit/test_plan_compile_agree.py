"""`plan`, `compile --plan-layout` and the launch document give the session one HOME and one
TMPDIR (`mounts.plan.session_dirs`), and the plan binds what the launch runs, read-only."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profilec.models.mounts import HostFacts, PlanLayout, RoBind, SystemPath
from profilec.mounts.backends import load_catalog
from profilec.mounts.plan import PRIVATE_TMP, build_plan, session_dirs
from profilec.paths import codex_home_temp_dir
from tests.audit_helpers import plan_layout, run, setup

CATALOG = load_catalog()
#: A root compile of a launch names the uid Codex runs as (here root: the layout is ours).
ROOT = ["--run-as", "0"] if os.geteuid() == 0 else []


def _env(plan: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in plan["env"]}


def test_a_bundle_compiled_with_a_plan_layout_uses_the_plans_home_and_tmpdir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    layout = plan_layout(lay)
    rc, out, err = run(
        capsys, "compile", *flags, "--plan-layout", str(layout), "--format", "bundle"
    )
    assert rc == 0, err
    doc = json.loads(out)
    env = _env(doc["mount_plan"])
    compiled = doc["compiled"]["layout"]
    assert (compiled["home"], compiled["tmpdir"]) == (env["HOME"], env["TMPDIR"])
    # The layout lives under /tmp, so the plan moves TMPDIR into the state dir; compile agrees.
    assert env["TMPDIR"].endswith("/daemon/state/cand-1/tmp")


def test_the_launch_document_under_a_plan_layout_sets_the_plans_home_and_tmpdir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    layout = plan_layout(lay)
    rc, out, err = run(
        capsys, "compile", *flags, *ROOT, "--plan-layout", str(layout), "--format", "launch"
    )
    assert rc == 0, err
    doc = json.loads(out)
    rc, plan_out, err = run(capsys, "plan", "--roots", flags[1], "--layout", str(layout))
    assert rc == 0, err
    env = _env(json.loads(plan_out))
    for entry in [*doc["adapters"], *doc["codex"]]:
        if entry.get("holds") is False:
            continue
        assert (entry["env"]["HOME"], entry["env"]["TMPDIR"]) == (env["HOME"], env["TMPDIR"])
        assert "HOME" not in entry["launcher_supplies"]
    # Control: without the plan layout the document leaves both to the launcher.
    rc, out, err = run(capsys, "compile", *flags, *ROOT, "--format", "launch")
    assert rc == 0, err
    first = json.loads(out)["adapters"][0]
    assert "HOME" in first["launcher_supplies"] and "HOME" not in first["env"]


def test_a_home_that_is_not_the_plans_is_refused_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    layout = plan_layout(lay)
    other = tmp_path / "elsewhere"
    other.mkdir()
    rc, _, err = run(
        capsys, "compile", *flags, "--plan-layout", str(layout), "--home", str(other),
        "--format", "bundle",
    )  # fmt: skip
    assert rc == 2
    want = str(lay.base / "daemon" / "state" / "cand-1" / "home")
    assert f"--home {other} is not the session's HOME" in err and f"pass --home {want}" in err
    assert len(err.rstrip("\n").split("\n")) == 1


def test_the_plan_binds_the_codex_install_and_the_adapters_read_only() -> None:
    lay = PlanLayout.model_validate(
        {
            "schema_version": 1,
            "daemon_root": "/srv/agentd",
            "agent_home": "/srv/agentd/agents/a1/codex-home",
            "workspace_roots": ["/work/a1"],
            "state_dir": "/srv/agentd/state/cand-1",
            "backends": ["codex"],
        },
        strict=False,
    )
    codex, acp, covered = "/var/cache/profilec/codex-0.171.0", "/var/cache/profilec/acp", "/usr/x"
    host = HostFacts(
        system=(SystemPath(path="/usr", kind="dir"),), launch_binaries=(codex, acp, covered)
    )
    plan = build_plan((), lay, CATALOG, host)
    ro = {m.path for m in plan.mounts if isinstance(m, RoBind)}
    assert {codex, acp} <= ro
    assert covered not in ro  # already inside the read-only /usr
    # Control: a host without them binds neither.
    bare = build_plan((), lay, CATALOG, HostFacts(system=host.system))
    assert not {codex, acp} & {m.path for m in bare.mounts}


SEG = st.sampled_from(["a", "b", "tmp", "srv", "state", "codex-home", "x y"])
DIR = st.lists(SEG, min_size=1, max_size=4).map(lambda s: "/" + "/".join(s))


@given(
    top=st.sampled_from(["/tmp", "/srv", "/var/lib"]),
    home=DIR,
    state=DIR,
    backends=st.sampled_from([("codex",), ("claude",), ("codex", "claude")]),
)
def test_plan_env_is_session_dirs_and_its_tmpdir_never_holds_codex_home(
    top: str, home: str, state: str, backends: tuple[str, ...]
) -> None:
    doc = {
        "schema_version": 1,
        "daemon_root": f"{top}/daemon",
        "agent_home": f"{top}/agents{home}",
        "workspace_roots": [f"{top}/ws"],
        "state_dir": f"{top}/daemon/st{state}",
        "backends": list(backends),
    }
    lay = PlanLayout.model_validate(doc, strict=False)
    plan = build_plan((), lay, CATALOG, HostFacts())
    env = {e.name: e.value for e in plan.env}
    dirs = session_dirs(lay)
    assert (env["HOME"], env["TMPDIR"]) == (dirs.home, dirs.tmpdir)
    if "codex" in backends:
        # What compile refuses (a CODEX_HOME under the launch temp dir) never follows from the
        # TMPDIR the plan gives it, and the private /tmp is kept whenever it can be.
        assert codex_home_temp_dir(lay.agent_home, dirs.tmpdir) is None
        assert (dirs.tmpdir == PRIVATE_TMP) == (top != "/tmp")
