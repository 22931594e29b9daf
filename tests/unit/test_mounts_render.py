"""Renderers only format: docker kwargs/argv, bwrap argv, srt settings, and quoted shell lines."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profilec.errors import LayoutError
from profilec.models.compiled import Hop
from profilec.mounts.render_bwrap import bwrap_argv, render_bwrap
from profilec.mounts.render_docker import docker_kwargs, render_docker
from profilec.mounts.render_srt import srt_gaps, srt_settings
from profilec.mounts.shell import line, quote
from tests.unit.test_mounts_plan import codex_root, layout, plan_for

SHELLS = [s for s in ("dash", "bash") if shutil.which(s)]


def test_docker_kwargs_are_hardened_and_mounts_are_mount_compatible_dicts() -> None:
    kw = docker_kwargs(plan_for(layout(user="1000:1000")))
    assert kw["network_mode"] == "none" and kw["read_only"] is True
    assert kw["cap_drop"] == ["ALL"] and kw["security_opt"] == ["no-new-privileges"]
    assert kw["user"] == "1000:1000"
    for m in kw["mounts"]:
        assert set(m) == {"type", "source", "target", "read_only"}
        assert m["type"] in ("bind", "tmpfs")
    cred = next(m for m in kw["mounts"] if m["target"] == "/home/op/.codex")
    assert cred == {
        "type": "bind",
        "source": "/home/op/.codex",
        "target": "/home/op/.codex",
        "read_only": False,
    }
    assert not any(m["target"] == "/home/op/.codex/auth.json" for m in kw["mounts"])
    assert not any(m["target"] == "/usr" for m in kw["mounts"])  # the image brings its own


def test_docker_network_follows_the_layout() -> None:
    assert docker_kwargs(plan_for(layout(network=True)))["network_mode"] == "bridge"


def test_docker_argv_mirrors_the_kwargs_and_passes_env_through_by_name_only() -> None:
    doc = json.loads(render_docker(plan_for(layout(passthrough_env=("LANG",)))))
    argv = doc["argv"]
    assert argv[:2] == ["docker", "run"] and "--read-only" in argv
    assert argv[argv.index("--network") + 1] == "none"
    mounts = [argv[i + 1] for i, a in enumerate(argv) if a == "--mount"]
    assert len(mounts) == len(doc["sdk_kwargs"]["mounts"])
    assert "type=bind,source=/home/op/.codex,target=/home/op/.codex" in mounts
    assert argv[argv.index("--user") + 1] == "65534:65534"  # never root by default
    assert argv[argv.index("LANG") - 1] == "--env"


def test_docker_refuses_a_plan_that_needs_a_recreated_link() -> None:
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
    with pytest.raises(LayoutError, match="cannot recreate link /data/hostlink"):
        render_docker(plan_for(roots=(root,)))


def test_bwrap_argv_binds_vaults_rw_recreates_links_and_ends_read_only() -> None:
    argv = bwrap_argv(plan_for())
    i = argv.index("/home/op/.codex")
    assert argv[i - 1 : i + 2] == ["--bind", *["/home/op/.codex"] * 2]
    assert "/home/op/.codex/auth.json" not in argv
    assert argv[1:7] == ["--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534"]
    assert bwrap_argv(plan_for(layout(user="1000:100")))[3:7] == ["--uid", "1000", "--gid", "100"]
    assert argv[argv.index("/bin") - 2 : argv.index("/bin")] == ["--symlink", "usr/bin"]
    assert argv[-1] == "--" and "--remount-ro" in argv and "--clearenv" in argv
    assert "--share-net" not in argv


def test_after_clearenv_bwrap_and_docker_set_home_path_and_tmpdir() -> None:
    """Without HOME and PATH the cleared environment leaves the parent no way to find a
    command; the rendered argv and docker's environment carry the plan's values."""
    plan = plan_for()
    argv = bwrap_argv(plan)
    after = argv[argv.index("--clearenv") :]
    env = {after[i + 1]: after[i + 2] for i, w in enumerate(after) if w == "--setenv"}
    assert env["HOME"] == "/srv/agentd/state/cand-1/home"
    assert env["PATH"].split(":")[-2:] == ["/sbin", "/bin"] and env["TMPDIR"] == "/tmp"
    kw = docker_kwargs(plan)
    assert {k: kw["environment"][k] for k in ("HOME", "PATH", "TMPDIR")} == {
        k: env[k] for k in ("HOME", "PATH", "TMPDIR")
    }


def test_bwrap_output_lists_passthrough_names_without_values() -> None:
    doc = json.loads(render_bwrap(plan_for(layout(passthrough_env=("LANG",)))))
    assert doc["passthrough_env"] == ["LANG"] and "LANG" not in doc["argv"]


def test_srt_denies_reading_every_credential_name_and_writing_every_link_holder() -> None:
    plan = plan_for()
    s = srt_settings(plan)
    fs = s["filesystem"]
    assert "/home/op/.codex/auth.json" in fs["denyRead"]
    assert "/srv/agentd/agents/a1/codex-home/auth.json" in fs["denyRead"]
    assert "/srv/agentd/agents/a1/codex-home" in fs["denyWrite"]  # holds the link
    assert "/home/op/.codex" in fs["denyWrite"]
    assert "/home/op/.codex" in fs["denyRead"]  # the vault: temp files and lock of a save
    assert fs["allowWrite"] == ["/work/a1"]
    assert "/tmp" in fs["denyRead"]  # no private temp under srt: shared temp stays hidden
    assert s["credentials"]["files"] == [{"path": "/home/op/.codex/auth.json", "mode": "deny"}]


def test_srt_names_the_hidden_paths_it_cannot_deny() -> None:
    plan = plan_for()
    assert "/home/op" in srt_settings(plan)["filesystem"]["denyRead"]
    gaps = srt_gaps(plan)
    assert any("/srv/agentd" in g for g in gaps)  # daemon root holds the agent home grant


def test_every_word_is_quoted_even_plain_ones() -> None:
    assert quote("bwrap") == "'bwrap'"
    assert line(["a", "it's"]) == "'a' 'it'\"'\"'s'"


WORDS = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=12)


@pytest.mark.skipif(not SHELLS, reason="neither dash nor bash is installed")
@settings(max_examples=40, deadline=None)
@given(words=st.lists(WORDS, min_size=1, max_size=5))
def test_a_rendered_line_gives_back_the_exact_words_under_dash_and_bash(words: list[str]) -> None:
    text = line(["printf", "%s\\0", *words])
    for sh in SHELLS:
        out = subprocess.run([sh, "-c", text], capture_output=True, check=True).stdout
        assert out.decode("utf-8", "surrogateescape").split("\0")[:-1] == words, sh


@pytest.mark.parametrize("sh", ["dash", "bash"])
def test_the_bwrap_shell_line_parses_to_the_argv_under(sh: str) -> None:
    if shutil.which(sh) is None:
        pytest.skip(f"{sh} is not installed")
    doc = json.loads(render_bwrap(plan_for(layout(env={"X": "a b'$HOME`c`"}))))
    text = doc["shell"].replace("'bwrap'", "'printf' '%s\\0'", 1)
    out = subprocess.run([sh, "-c", text], capture_output=True, check=True).stdout
    assert ["bwrap", *out.decode().split("\0")[:-1]] == doc["argv"]


def test_every_mount_kind_has_a_renderer_and_dumps_as_the_published_record() -> None:
    from typing import get_args

    from profilec.models.mounts import Mount, PlanMount
    from profilec.mounts import render_bwrap as bw
    from profilec.mounts import render_docker as dk

    kinds = set(get_args(PlanMount))
    assert kinds <= set(bw._mount_args.registry) and kinds <= set(dk._docker_mount.registry)
    for kind in kinds:
        fields = {"path": "/p", "purpose": "system", "reason": "r"}
        extra = {"source": "/p"} if "source" in kind.model_fields else {}
        if "link_value" in kind.model_fields:
            extra = {"link_value": "../t"}
        doc = kind.model_validate({**fields, **extra}).model_dump(mode="json")
        assert list(doc) == list(Mount.model_fields)  # every column, in the record's order
        assert Mount.model_validate(doc).type == doc["type"]


def test_a_hidden_file_inside_a_grant_is_masked_with_dev_null_by_every_renderer() -> None:
    from profilec.models.mounts import FileMask, HostFacts, SystemPath
    from profilec.mounts.plan import build_plan
    from tests.unit.test_mounts_plan import CATALOG, HOST

    secret = "/work/a1/secret.txt"
    lay = layout(
        workspace_roots=("/home", "/work"),
        mask_hidden_in_grants=True,
        hidden={"host_home": "/home/op", "extra": (secret,)},
    )
    host = HostFacts(system=HOST.system, hidden=(SystemPath(path=secret, kind="file"),))
    plan = build_plan((codex_root(),), lay, CATALOG, host)
    (mask,) = [m for m in plan.mounts if m.path == secret]
    assert isinstance(mask, FileMask)
    assert mask.model_dump()["source"] == "/dev/null"
    argv = bwrap_argv(plan)
    assert argv[argv.index(secret) - 2 : argv.index(secret)] == ["--ro-bind", "/dev/null"]
    dm = [m for m in docker_kwargs(plan)["mounts"] if m["target"] == secret]
    assert dm == [{"type": "bind", "source": "/dev/null", "target": secret, "read_only": True}]
