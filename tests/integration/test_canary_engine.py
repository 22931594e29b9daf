"""Canary groundwork on a real engine: image reuse, labelled cleanup, Codex deny in a container."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from profilec.canary.engine import (
    LABEL,
    RUN_LABEL,
    cleanup,
    codex_mount,
    leftovers,
    run_labels,
    run_settings,
    run_uid,
)
from profilec.canary.image import BUSYBOX, REPOSITORY, context_digest, ensure_image

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

PROFILE = 'permissions.p={extends=":read-only", filesystem={"/secret/auth.json"="deny"}}'


def _exec(container: Container, cmd: list[str]) -> tuple[int, str]:
    """Run `cmd` in the container; return its exit code and merged output."""
    res = container.exec_run(cmd, stdout=True, stderr=True)
    out = res.output if isinstance(res.output, bytes) else b""
    return int(res.exit_code or 0), out.decode("utf-8", "replace")


@pytest.fixture
def secret_dir() -> Iterator[tuple[Path, str, str]]:
    """A throwaway dir with auth.json (random marker) and control.txt, owned by the run uid."""
    marker = f"CANARY-SECRET-{secrets.token_hex(12)}"
    control = f"CANARY-CONTROL-{secrets.token_hex(12)}"
    root = Path(tempfile.mkdtemp(prefix="profilec-canary-"))
    try:
        (root / "auth.json").write_text(f'{{"OPENAI_API_KEY":"{marker}"}}\n')
        (root / "control.txt").write_text(control + "\n")
        uid = run_uid()
        for p in (root, root / "auth.json", root / "control.txt"):
            if os.getuid() == 0:
                os.chown(p, uid, uid)
            p.chmod(0o700 if p.is_dir() else 0o600)
        yield root, marker, control
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_run_settings_are_narrow() -> None:
    """The settings never grant privilege, capabilities or a network."""
    s = run_settings("r1")
    assert s["network_mode"] == "none"
    assert s["cap_drop"] == ["ALL"] and "cap_add" not in s
    assert "privileged" not in s and "userns_mode" not in s and "pid_mode" not in s
    assert s["read_only"] is True
    assert "no-new-privileges" in s["security_opt"]
    assert any(o.startswith("seccomp=") and "unconfined" not in o for o in s["security_opt"])
    assert not s["user"].startswith("0:")
    assert s["labels"] == {LABEL: "1", RUN_LABEL: "r1"}


@pytest.mark.docker
def test_image_is_content_addressed_and_reused(
    docker_client: DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ensure_image calls give the same tag; the second builds nothing."""
    tag = ensure_image(docker_client)
    assert tag == f"{REPOSITORY}:{context_digest()[:16]}"
    image = docker_client.images.get(tag)
    assert image.labels.get(LABEL) == "1"

    from docker.models.images import ImageCollection

    def no_build(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("ensure_image rebuilt an image whose tag exists")

    monkeypatch.setattr(ImageCollection, "build", no_build)
    assert ensure_image(docker_client) == tag
    assert docker_client.images.get(tag).id == image.id


@pytest.mark.docker
def test_image_builds_from_scratch_without_pull(docker_client: DockerClient) -> None:
    """A new context (busybox plus trailing bytes) builds fresh, runs busybox, and is labelled."""
    import docker.errors

    with tempfile.TemporaryDirectory(prefix="profilec-bb-") as d:
        bb = Path(d) / "busybox"
        bb.write_bytes(BUSYBOX.read_bytes() + secrets.token_bytes(16))
        tag = f"{REPOSITORY}:{context_digest(bb)[:16]}"
        with pytest.raises(docker.errors.ImageNotFound):
            docker_client.images.get(tag)
        try:
            assert ensure_image(docker_client, busybox=bb) == tag
            assert docker_client.images.get(tag).labels.get(LABEL) == "1"
            out = docker_client.containers.run(
                tag, ["sh", "-c", "echo ok-$((6*7))"], network_mode="none", remove=True
            )
            assert out == b"ok-42\n"
        finally:
            docker_client.images.remove(tag, force=True)


@pytest.mark.docker
def test_labelled_objects_are_cleaned_up(docker_client: DockerClient, canary_run: str) -> None:
    """A labelled container and volume are listed as leftovers until cleanup removes them."""
    tag = ensure_image(docker_client)
    labels = run_labels(canary_run)
    volume = docker_client.volumes.create(name=f"profilec-canary-{canary_run}", labels=labels)
    container = docker_client.containers.run(
        tag,
        ["busybox", "true"],
        name=f"profilec-canary-{canary_run}",
        network_mode="none",
        labels=labels,
        volumes={volume.name: {"bind": "/data", "mode": "rw"}},
        detach=True,
    )
    assert container.wait(timeout=30)["StatusCode"] == 0
    expected = {f"container:{container.name}", f"volume:{volume.name}"}
    assert set(leftovers(docker_client, canary_run)) == expected
    assert set(cleanup(docker_client, canary_run)) == expected
    assert leftovers(docker_client, canary_run) == []
    assert not expected & set(leftovers(docker_client))


@pytest.mark.docker
@pytest.mark.codex
def test_codex_deny_holds_inside_hardened_container(
    docker_client: DockerClient,
    codex_bin: Path,
    canary_run: str,
    secret_dir: tuple[Path, str, str],
) -> None:
    """Under run_settings(), Codex's sandbox hides the denied file and still reads the control."""
    root, marker, control = secret_dir
    tag = ensure_image(docker_client)
    volumes, codex = codex_mount(codex_bin)
    volumes[str(root)] = {"bind": "/secret", "mode": "ro"}
    container = docker_client.containers.run(
        tag, ["sleep", "300"], volumes=volumes, detach=True, **run_settings(canary_run)
    )
    sandbox = [codex, "sandbox", "-P", "p", "-c", PROFILE, "--"]

    # The trusted side (no Codex sandbox) reads the file: absence below is Codex's deny, not DAC.
    rc, out = _exec(container, ["cat", "/secret/auth.json"])
    assert rc == 0 and marker in out, out

    rc, out = _exec(container, [*sandbox, "cat", "/secret/control.txt"])
    assert rc == 0 and control in out, f"sandbox did not run the control read: rc={rc} {out!r}"

    rc, out = _exec(container, [*sandbox, "cat", "/secret/auth.json"])
    assert marker not in out, "credential marker leaked through the Codex sandbox"
    assert rc != 0, out
