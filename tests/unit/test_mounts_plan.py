"""The pure plan builder: joining, ordering, overlap rules, credentials by link and target."""

from __future__ import annotations

from typing import Any

import pytest

from profilec.errors import LayoutError, UnsafeRootError
from profilec.models.compiled import Hop, ResolvedRoot
from profilec.models.mounts import HostFacts, MountPlan, PlanLayout, RoBind, SystemPath
from profilec.mounts.backends import load_catalog
from profilec.mounts.plan import build_plan, covering, mirror_dirs
from profilec.mounts.render_json import render_json

CATALOG = load_catalog()
HOST = HostFacts(
    system=(
        SystemPath(path="/bin", kind="link", link_value="usr/bin", canonical="/usr/bin"),
        SystemPath(path="/etc", kind="dir"),
        SystemPath(path="/usr", kind="dir"),
        SystemPath(path="/lib32", kind="missing"),
    )
)


def layout(**over: Any) -> PlanLayout:
    """A typical daemon layout: agent home and state under the (hidden) daemon root."""
    doc: dict[str, Any] = {
        "schema_version": 1,
        "daemon_root": "/srv/agentd",
        "agent_home": "/srv/agentd/agents/a1/codex-home",
        "workspace_roots": ("/work/a1",),
        "state_dir": "/srv/agentd/state/cand-1",
        "backends": ("codex",),
        "hidden": {"host_home": "/home/op", "sibling_homes": ("/srv/agentd/agents/a2",)},
    }
    doc.update(over)
    return PlanLayout.model_validate(doc, strict=False)


def codex_root(**over: Any) -> ResolvedRoot:
    """CODEX_HOME/auth.json -> /home/op/.codex/auth.json (absolute link)."""
    doc: dict[str, Any] = {
        "id": "codex-auth",
        "path": "/srv/agentd/agents/a1/codex-home/auth.json",
        "backend": "codex",
        "kind": "file",
        "target": "/home/op/.codex/auth.json",
        "hops": (
            Hop(
                index=0,
                link="/srv/agentd/agents/a1/codex-home/auth.json",
                value="/home/op/.codex/auth.json",
                spelling="/srv/agentd/agents/a1/codex-home/auth.json",
            ),
        ),
        "holder_dirs": ("/home/op/.codex", "/srv/agentd/agents/a1/codex-home"),
    }
    doc.update(over)
    doc.setdefault(
        "vault", doc["target"] if doc["kind"] == "dir" else doc["target"].rsplit("/", 1)[0] or "/"
    )
    return ResolvedRoot.model_validate(doc, strict=False)


def plan_for(
    lay: PlanLayout | None = None, roots: tuple[ResolvedRoot, ...] | None = None
) -> MountPlan:
    return build_plan(
        roots if roots is not None else (codex_root(),), lay or layout(), CATALOG, HOST
    )


def test_credential_vault_directory_is_bound_read_write_at_its_real_path() -> None:
    plan = plan_for()
    m = covering(plan.mounts, "/home/op/.codex/auth.json")
    assert m is not None and m.type == "rw-bind" and m.source == m.path
    # The directory, never the file: a rename-based save (temp file + rename, auth.json.lock
    # beside it) fails inside a single-file bind with EROFS or EBUSY.
    assert m.path == "/home/op/.codex" and m.purpose == "credential"
    assert not any(x.path == "/home/op/.codex/auth.json" for x in plan.mounts)
    (cred,) = plan.credentials
    assert (cred.vault, cred.how) == ("/home/op/.codex", "bind")
    assert plan.protected_targets == ("/home/op/.codex/auth.json",)


def test_two_credentials_in_one_vault_share_one_bind() -> None:
    other = codex_root(
        id="second", path="/home/op/.codex/other.json", hops=(), target="/home/op/.codex/other.json"
    )
    plan = plan_for(roots=(codex_root(), other))
    binds = [m for m in plan.mounts if m.purpose == "credential"]
    assert [(m.path, m.reason) for m in binds] == [
        ("/home/op/.codex", "vault of codex-auth, second")
    ]
    assert {c.vault for c in plan.credentials} == {"/home/op/.codex"}


@pytest.mark.parametrize(
    ("target", "what"),
    [
        ("/work/auth.json", "contains the workspace grant /work/a1"),
        ("/srv/agentd/agents/a1/codex-home/auth.json", "is the agent-home grant"),
        ("/home/op/auth.json", "is the hidden path /home/op"),
        ("/srv/agentd/state/auth.json", "contains the state grant /srv/agentd/state/cand-1"),
        ("/auth.json", "contains the"),
    ],
)
def test_a_vault_that_is_or_holds_a_grant_or_hidden_path_is_refused_exit_5(
    target: str, what: str
) -> None:
    with pytest.raises(UnsafeRootError, match=what) as err:
        plan_for(roots=(codex_root(target=target),))
    assert err.value.exit_code == 5
    assert "put the credential in a directory of its own" in err.value.one_line()


def test_vault_inside_the_agent_home_is_covered_by_its_bind() -> None:
    root = codex_root(target="/srv/agentd/agents/a1/codex-home/vault/auth.json")
    plan = plan_for(roots=(root,))
    (cred,) = plan.credentials
    assert (cred.vault, cred.how) == ("/srv/agentd/agents/a1/codex-home/vault", "covered")
    assert not any(m.purpose == "credential" for m in plan.mounts)


def test_trusted_parent_runs_as_65534_by_default_and_as_the_layout_user() -> None:
    assert (plan_for().run_as.uid, plan_for().run_as.gid) == (65534, 65534)
    assert plan_for().run_as.source == "default"
    ra = plan_for(layout(user="1000")).run_as
    assert (ra.uid, ra.gid, ra.source) == (1000, 1000, "layout")


@pytest.mark.parametrize("user", ["0", "0:0", "0:1000"])
def test_root_as_the_trusted_parent_is_refused(user: str) -> None:
    with pytest.raises(LayoutError, match="setting up uid map") as err:
        plan_for(layout(user=user))
    assert err.value.exit_code == 2


def test_link_inside_the_bound_agent_home_is_presented_by_the_bind_not_a_mount() -> None:
    plan = plan_for()
    (cred,) = plan.credentials
    assert [(x.link, x.how) for x in cred.links] == [
        ("/srv/agentd/agents/a1/codex-home/auth.json", "bind")
    ]
    assert not any(m.path == "/srv/agentd/agents/a1/codex-home/auth.json" for m in plan.mounts)


def test_middle_link_outside_every_grant_is_recreated_as_a_symlink_with_its_text() -> None:
    root = codex_root(
        target="/data/host/auth.json",
        hops=(
            Hop(
                index=0,
                link="/srv/agentd/agents/a1/codex-home/auth.json",
                value="/data/hostlink/auth.json",
                spelling="/srv/agentd/agents/a1/codex-home/auth.json",
            ),
            Hop(index=1, link="/data/hostlink", value="host", spelling="/data/hostlink/auth.json"),
        ),
    )
    plan = plan_for(roots=(root,))
    links = [m for m in plan.mounts if m.type == "symlink" and m.purpose == "hop"]
    assert [(m.path, m.link_value) for m in links] == [("/data/hostlink", "host")]


def test_no_mount_is_ever_placed_onto_a_link_path() -> None:
    plan = plan_for()
    links = {h.link for h in codex_root().hops}
    assert all(m.path not in links or m.type == "symlink" for m in plan.mounts)


def test_host_home_daemon_root_siblings_and_shared_temp_are_not_visible() -> None:
    plan = plan_for()
    for h in plan.hidden:
        m = covering(plan.mounts, h.path)
        assert m is None or m.type in ("tmpfs", "file-mask"), h
    assert {h.reason for h in plan.hidden} == {
        "daemon-root",
        "host-home",
        "sibling-home",
        "shared-temp",
    }


def test_workspace_equal_to_host_home_is_a_layout_error() -> None:
    with pytest.raises(LayoutError, match="cannot also be hidden"):
        plan_for(layout(workspace_roots=("/home/op",)))


def test_workspace_containing_host_home_is_a_layout_error_by_default() -> None:
    with pytest.raises(LayoutError, match="contains the hidden host-home /home/op"):
        plan_for(layout(workspace_roots=("/home",)))


def test_opt_in_masks_the_hidden_path_after_the_grant_and_credential_still_bound() -> None:
    plan = plan_for(layout(workspace_roots=("/home",), mask_hidden_in_grants=True))
    paths = [m.path for m in plan.mounts]
    mask = paths.index("/home/op")
    assert plan.mounts[mask].type == "tmpfs"
    assert paths.index("/home") < mask < paths.index("/home/op/.codex")
    assert covering(plan.mounts, "/home/op/.codex/auth.json").type == "rw-bind"  # type: ignore[union-attr]


def test_state_dir_inside_agent_home_is_rejected() -> None:
    with pytest.raises(LayoutError, match="outside the shared login home"):
        plan_for(layout(state_dir="/srv/agentd/agents/a1/codex-home/state"))


def test_state_dir_is_recorded_0700_with_one_subdir_per_relocated_backend() -> None:
    plan = plan_for(layout(backends=("codex", "opencode", "cursor", "claude")))
    assert {(d.path, d.mode) for d in plan.directories} == {
        ("/srv/agentd/state/cand-1", "0700"),
        ("/srv/agentd/state/cand-1/codex", "0700"),
        ("/srv/agentd/state/cand-1/opencode", "0700"),
        ("/srv/agentd/state/cand-1/cursor", "0700"),
        ("/srv/agentd/state/cand-1/home", "0700"),  # HOME of the trusted parent
        # the managed requirements' source (under the daemon root) and its mount point
        ("/srv/agentd/codex-requirements", "0755"),
        ("/etc/codex", "0755"),
    }


def test_a_codex_plan_binds_the_managed_requirements_read_only_from_the_daemon_root() -> None:
    plan = plan_for(layout(backends=("codex",)))
    binds = [m for m in plan.mounts if m.purpose == "requirements"]
    assert [(m.path, m.source) for m in binds if isinstance(m, RoBind)] == [
        ("/etc/codex", "/srv/agentd/codex-requirements")
    ]
    assert len(binds) == 1
    # After /etc (plan order: parents first), so it covers the host's /etc/codex.
    paths = [m.path for m in plan.mounts]
    assert paths.index("/etc/codex") > paths.index("/etc")
    # A backend that is not Codex gets none (negative control).
    other = plan_for(layout(backends=("opencode",)))
    assert not [m for m in other.mounts if m.purpose == "requirements"]


def test_each_backend_gets_its_state_knob_and_the_credential_stays_put() -> None:
    plan = plan_for(layout(backends=("codex", "opencode", "cursor")))
    env = {e.name: e.value for e in plan.env}
    assert plan.codex_args == ("-c", 'sqlite_home="/srv/agentd/state/cand-1/codex"')
    assert env["OPENCODE_DB"] == "/srv/agentd/state/cand-1/opencode/opencode.db"
    assert env["CURSOR_CONFIG_DIR"] == "/srv/agentd/state/cand-1/cursor"
    assert env["CODEX_HOME"] == "/srv/agentd/agents/a1/codex-home"
    assert "XDG_DATA_HOME" not in env and "XDG_CONFIG_HOME" not in env


@pytest.mark.parametrize(
    ("backend", "knob", "field"),
    [
        ("cursor", "XDG_CONFIG_HOME", "passthrough_env"),
        ("cursor", "CURSOR_DATA_DIR", "env"),
        ("opencode", "XDG_DATA_HOME", "env"),
        ("opencode", "XDG_DATA_HOME", "passthrough_env"),
    ],
)
def test_a_rejected_knob_in_env_or_passthrough_warns_naming_backend_and_reason(
    backend: str, knob: str, field: str
) -> None:
    value: Any = {knob: "/x"} if field == "env" else (knob,)
    plan = plan_for(layout(backends=(backend,), **{field: value}))
    (w,) = [w for w in plan.warnings if w.knob == knob]
    assert w.backend == backend and w.source == field
    reason = next(r.reason for r in CATALOG.backends[backend].rejected_knobs if r.name == knob)
    assert backend in w.message and reason in w.message


def test_rejected_knob_of_an_unselected_backend_does_not_warn() -> None:
    plan = plan_for(layout(passthrough_env=("XDG_CONFIG_HOME",)))
    assert not any(w.knob for w in plan.warnings)


def test_claude_is_not_relocated_and_says_why() -> None:
    plan = plan_for(layout(backends=("claude",)))
    assert any("not relocated" in w.message and w.backend == "claude" for w in plan.warnings)
    assert not any(d.path.endswith("/claude") for d in plan.directories)


def test_codex_residue_is_named() -> None:
    plan = plan_for()
    assert {r.path for r in plan.residue} == {"sessions/", "shell_snapshots/", "memories/"}


def test_unknown_backend_is_a_layout_error() -> None:
    with pytest.raises(LayoutError, match="unknown backend 'gemini'"):
        plan_for(layout(backends=("gemini",)))


def test_layout_env_cannot_override_what_the_plan_sets() -> None:
    with pytest.raises(LayoutError, match="CODEX_HOME is set by the plan"):
        plan_for(layout(env={"CODEX_HOME": "/elsewhere"}))


# ---------------------------------------------------------------------------------------------
# The environment: the plan clears it (bwrap --clearenv), so it sets TMPDIR, HOME and PATH


def _env(plan: MountPlan) -> dict[str, str]:
    return {e.name: e.value for e in plan.env}


def test_the_plan_sets_home_path_and_tmpdir_inside_what_it_grants() -> None:
    plan = plan_for()
    env = _env(plan)
    assert env["HOME"] == "/srv/agentd/state/cand-1/home"
    assert env["TMPDIR"] == "/tmp"
    assert env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert ("/srv/agentd/state/cand-1/home", "0700", "home") in {
        (d.path, d.mode, d.purpose) for d in plan.directories
    }
    home = covering(plan.mounts, env["HOME"])
    assert home is not None and home.type == "rw-bind" and home.purpose == "state"
    tmp = covering(plan.mounts, env["TMPDIR"])
    assert tmp is not None and tmp.type == "tmpfs"
    assert not [w for w in plan.warnings if w.source == "plan"]


@pytest.mark.parametrize("field", ["env", "passthrough_env"])
def test_the_layouts_path_wins_over_the_default(field: str) -> None:
    value: Any = {"PATH": "/opt/codex/bin:/usr/bin"} if field == "env" else ("PATH",)
    env = _env(plan_for(layout(**{field: value})))
    if field == "env":
        assert env["PATH"] == "/opt/codex/bin:/usr/bin"
    else:  # the launcher passes its value; the plan writes none
        assert "PATH" not in env


@pytest.mark.parametrize("field", ["env", "passthrough_env"])
@pytest.mark.parametrize("name", ["HOME", "TMPDIR", "CODEX_HOME"])
def test_the_layout_cannot_set_or_pass_through_what_the_plan_sets(field: str, name: str) -> None:
    value: Any = {name: "/elsewhere"} if field == "env" else (name,)
    with pytest.raises(LayoutError, match=f"{field}: {name} is set by the plan itself"):
        plan_for(layout(**{field: value}))


def _tmp_layout(**over: Any) -> PlanLayout:
    """The README example's shape: the whole layout in a temp dir under /tmp."""
    base = "/tmp/profilec-example.x"
    return layout(
        daemon_root=f"{base}/daemon",
        agent_home=f"{base}/agent/codex-home",
        workspace_roots=(f"{base}/workspace",),
        state_dir=f"{base}/daemon/state/cand-1",
        hidden={"host_home": f"{base}/hosthome"},
        **over,
    )


def _tmp_root() -> ResolvedRoot:
    link = "/tmp/profilec-example.x/agent/codex-home/auth.json"
    return codex_root(
        path=link,
        target="/tmp/profilec-example.x/host/auth.json",
        hops=(Hop(index=0, link=link, value="../../host/auth.json", spelling=link),),
        holder_dirs=("/tmp/profilec-example.x/agent/codex-home", "/tmp/profilec-example.x/host"),
    )


def test_a_codex_home_under_tmp_gets_a_tmpdir_that_does_not_hold_it() -> None:
    """TMPDIR=/tmp above CODEX_HOME: Codex refuses its helper and no model command runs
    (`bwrap: execvp codex-linux-sandbox`, measured). The plan moves TMPDIR into the state dir,
    lists it for the launcher to create, and says so (with the --tmpdir to compile with)."""
    plan = plan_for(_tmp_layout(), (_tmp_root(),))
    env = _env(plan)
    tmp = "/tmp/profilec-example.x/daemon/state/cand-1/tmp"
    assert env["TMPDIR"] == tmp
    assert not (env["CODEX_HOME"] + "/").startswith(env["TMPDIR"] + "/")
    assert (tmp, "0700", "tmp") in {(d.path, d.mode, d.purpose) for d in plan.directories}
    m = covering(plan.mounts, tmp)
    assert m is not None and m.type == "rw-bind" and m.purpose == "state"
    (w,) = [w for w in plan.warnings if w.source == "plan"]
    assert "execvp codex-linux-sandbox" in w.message and f"--tmpdir {tmp}" in w.message
    # Only Codex has the rule: a layout without the codex backend keeps the private /tmp.
    assert _env(plan_for(_tmp_layout(backends=("opencode",)), (_tmp_root(),)))["TMPDIR"] == "/tmp"


def test_mounts_are_ordered_parents_first() -> None:
    plan = plan_for(layout(workspace_roots=("/home",), mask_hidden_in_grants=True))
    for i, a in enumerate(plan.mounts):
        for b in plan.mounts[i + 1 :]:
            assert not (b.path != a.path and a.path.startswith(b.path + "/")), (a.path, b.path)


def test_same_input_gives_the_same_bytes() -> None:
    assert render_json(plan_for()) == render_json(plan_for())


def test_system_link_is_recreated_and_its_real_directory_bound_read_only() -> None:
    plan = plan_for()
    (bin_,) = [m for m in plan.mounts if m.path == "/bin"]
    assert bin_.type == "symlink" and bin_.link_value == "usr/bin"
    assert not any(m.path == "/lib32" for m in plan.mounts)


# ---------------------------------------------------------------------------------------------
# Builder-owned joining of remote roots (seed 004)


def test_each_remote_root_gets_its_own_exact_directory() -> None:
    assert mirror_dirs("/work/a1/mirror", ["github/acme/cloud", "github/acme/web"]) == (
        "/work/a1/mirror/github/acme/cloud",
        "/work/a1/mirror/github/acme/web",
    )


def test_a_base_already_ending_with_the_root_is_not_joined_twice() -> None:
    assert mirror_dirs("/work/a1/mirror/github/acme/cloud", ["github/acme/cloud"]) == (
        "/work/a1/mirror/github/acme/cloud",
    )
    assert mirror_dirs("/m/acme/cloud", ["acme/cloud", "acme/web"]) == (
        "/m/acme/cloud",
        "/m/acme/web",
    )


@pytest.mark.parametrize("bad", ["../etc", "a/../b", "a/./b", "a//b", "/abs", "", "a/"])
def test_traversal_in_a_remote_root_fails_closed(bad: str) -> None:
    with pytest.raises(LayoutError):
        mirror_dirs("/m", ["ok", bad])


def test_mirror_dirs_inside_a_workspace_are_not_bound_twice() -> None:
    plan = plan_for(layout(remote={"mirror_base": "/work/a1/mirror", "roots": ("acme/cloud",)}))
    assert not any(m.purpose == "mirror" for m in plan.mounts)
    assert ("/work/a1/mirror/acme/cloud", "mirror") in {
        (d.path, d.purpose) for d in plan.directories
    }


def test_overlapping_remote_roots_are_rejected() -> None:
    with pytest.raises(LayoutError, match="overlap"):
        plan_for(layout(remote={"mirror_base": "/mnt/m", "roots": ("acme", "acme/cloud")}))


def test_missing_root_is_protected_but_not_mounted_and_warned() -> None:
    root = codex_root(kind="missing", hops=())
    plan = plan_for(roots=(root,))
    assert plan.credentials[0].how == "absent"
    assert any("missing" in w.message for w in plan.warnings)


def test_nested_target_is_folded_into_its_directory_root() -> None:
    d = codex_root(id="dir", kind="dir", target="/home/op/.codex", hops=(), path="/home/op/.codex")
    plan = plan_for(roots=(codex_root(), d))
    assert plan.protected_targets == ("/home/op/.codex",)
    assert plan.credentials[0].root_ids == ("codex-auth", "dir")
