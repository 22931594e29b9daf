"""Issue 22 item 3: every mode starts, with the real pinned Codex, as root, as uid 65534 and in a
`--read-only` container, or compile refuses with the reason; the credential stays unreadable.

Each case runs tests/integration/full_access_driver.py: it builds a layout, compiles (with
`run_as` the launch uid) and runs `codex sandbox` for read-only, agent and agent-full-access,
printing whether the command ran and whether the credential marker showed. The negative controls
compile the pre-fix shape (a probe that never objects) and must fail to start with bwrap's
error, so these tests fail when the fix is gone.

The container is a `FROM scratch` image holding Debian's static busybox and mount points; the
host's /usr (libc, setpriv), the interpreter, the worktree and the static musl codex are bound
read-only; /var/tmp (the layout: Codex refuses a CODEX_HOME under /tmp) and, where the case
says, /tmp are tmpfs. Minimal flags with which the unmodified Codex sandbox runs at all in a
container on this engine (docker 20.10, seccomp, no AppArmor): `--security-opt
seccomp=unconfined` (default: "bwrap: No permissions to create a new namespace").
"""

from __future__ import annotations

import io
import json
import os
import secrets
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.integration.conftest import missing

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.codex

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("full_access_driver.py")
MODES = ("read-only", "agent", "agent-full-access")
NOBODY = 65534
LABEL = "profilec.test-full-access"
#: The minimal flags (measured): a read-only root file system, no network, and seccomp off,
#: without which bwrap cannot create its user namespace.
SECURITY_OPT = ["seccomp=unconfined"]


def _parse(stdout: str) -> dict[str, Any]:
    last = [line for line in stdout.split("\n") if line.strip()][-1]
    doc: dict[str, Any] = json.loads(last)
    return doc


def _run_host(base: Path, uid: int, *flags: str) -> dict[str, Any]:
    args = [sys.executable, str(DRIVER), str(ROOT), str(base), str(uid), *flags]
    proc = subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return _parse(proc.stdout)


def _assert_all_start(doc: dict[str, Any]) -> None:
    assert "refused" not in doc, doc
    for mode in MODES:
        res = doc["modes"][mode]
        assert res["ran"], (mode, res["out"])
        assert not res["marker"], (mode, res["out"])
        assert "Permission denied" in res["out"], (mode, res["out"])


@pytest.fixture
def base(var_tmp_base: Path) -> Path:
    """A root-owned 0755 directory under /var/tmp: as uid 65534 it is a pinned-writable
    ancestor the launch user cannot write."""
    return var_tmp_base


def _need_root() -> None:
    if os.getuid() != 0:
        pytest.skip("needs uid 0 to compile for and launch as another uid (setpriv)")


# ---------------------------------------------------------------------------------------------
# This host's layout


def test_every_mode_starts_as_root(codex_bin: Path, base: Path) -> None:
    _assert_all_start(_run_host(base, os.getuid()))


def test_every_mode_starts_as_uid_65534(codex_bin: Path, base: Path) -> None:
    _need_root()
    doc = _run_host(base, NOBODY)
    _assert_all_start(doc)
    full = dict((p, a) for p, a in doc["entries"]["agent-full-access"])
    # The root-owned pinned ancestor (and the layout under it) is kept in place read-only.
    assert full.get(str(base)) == "read", full


def test_control_pre_fix_shape_fails_as_uid_65534(codex_bin: Path, base: Path) -> None:
    """Yesterday's full access as uid 65534: a `write` pin on the root-owned base (or a
    root-owned top-level directory) is a writable root bwrap cannot create `.git` in."""
    _need_root()
    doc = _run_host(base, NOBODY, "--pre-fix")
    res = doc["modes"]["agent-full-access"]
    assert not res["ran"], res["out"]
    assert "bwrap: Can't mkdir" in res["out"] and "Permission denied" in res["out"], res["out"]
    assert doc["modes"]["read-only"]["ran"], doc["modes"]["read-only"]["out"]


def test_names_a_running_session_left_do_not_make_a_writable_root(
    codex_bin: Path, base: Path
) -> None:
    """CI failed here once: a Codex session as root, beside this compile, had made its mount
    targets (`.git`, `.agents`, ...) in a root-owned top-level directory for a moment; compile
    for uid 65534 took that directory for a writable root, and at launch (names gone) bwrap
    could not create `.git` in it. The names stand in the root-owned base while compile looks
    and are gone at launch: every mode still starts, the base kept read-only."""
    _need_root()
    doc = _run_host(base, NOBODY, "--names-at-compile")
    _assert_all_start(doc)
    full = dict((p, a) for p, a in doc["entries"]["agent-full-access"])
    assert full.get(str(base)) == "read", full


def test_control_names_at_compile_trusted_fails_as_uid_65534(codex_bin: Path, base: Path) -> None:
    """The negative control: the probe that counted present names as startable pins the base
    `write`, and the session never starts (the CI failure's `bwrap: Can't mkdir`)."""
    _need_root()
    doc = _run_host(base, NOBODY, "--names-at-compile", "--trust-present")
    full = dict((p, a) for p, a in doc["entries"]["agent-full-access"])
    assert full.get(str(base)) == "write", full
    res = doc["modes"]["agent-full-access"]
    assert not res["ran"], res["out"]
    assert f"bwrap: Can't mkdir {base}/.git: Permission denied" in res["out"], res["out"]


def test_control_input_entry_on_a_vanished_git_fails_as_uid_65534(
    codex_bin: Path, base: Path
) -> None:
    """The second half of the fix: with the base read-only, the `.git` above the workspace
    that existed at compile time kept its own `read` entry; gone at launch, Codex must create
    it inside the read-only base, and the session never starts."""
    _need_root()
    doc = _run_host(base, NOBODY, "--names-at-compile", "--keep-present-inputs")
    full = dict((p, a) for p, a in doc["entries"]["agent-full-access"])
    assert full.get(str(base)) == "read" and full.get(f"{base}/.git") == "read", full
    res = doc["modes"]["agent-full-access"]
    assert not res["ran"], res["out"]
    assert f"bwrap: Can't mkdir {base}/.git: Read-only file system" in res["out"], res["out"]


# ---------------------------------------------------------------------------------------------
# A read-only-rootfs container


DOCKERFILE = """\
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "mkdir", "-p", "/tmp", "/var/tmp", "/var/cache", "/root", "/opt", "/srv", \
"/work", "/etc", "/usr", "/proc", "/sys", "/dev"]
RUN ["/bin/busybox", "ln", "-s", "usr/lib", "/lib"]
RUN ["/bin/busybox", "ln", "-s", "usr/lib64", "/lib64"]
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN ["/bin/busybox", "chmod", "1777", "/tmp"]
ENV PATH=/bin:/usr/bin PYTHONDONTWRITEBYTECODE=1
"""


def _image(client: DockerClient) -> str:
    import hashlib

    import docker.errors

    busybox = Path("/bin/busybox")
    if not busybox.is_file():
        missing("no /bin/busybox (apt-get install busybox-static)")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, mode, data in (
            ("Dockerfile", 0o644, DOCKERFILE.encode()),
            ("busybox", 0o755, busybox.read_bytes()),
        ):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, 0
            tar.addfile(info, io.BytesIO(data))
    ctx = buf.getvalue()
    tag = f"profilec-full-access:{hashlib.sha256(ctx).hexdigest()[:16]}"
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        client.images.build(
            fileobj=io.BytesIO(ctx),
            custom_context=True,
            tag=tag,
            labels={LABEL: "1"},
            pull=False,
            rm=True,
            forcerm=True,
            network_mode="none",
        )
    return tag


@pytest.fixture
def image(docker_client: DockerClient) -> Iterator[str]:
    yield _image(docker_client)


def _run_container(
    client: DockerClient,
    image: str,
    codex: Path,
    uid: int,
    *,
    tmp_tmpfs: bool,
    pre_fix: bool = False,
) -> dict[str, Any]:
    """The driver inside a `--read-only` container, as root, launching Codex as `uid`."""
    prefix = Path(sys.base_prefix).resolve()
    # The codex install: the npm project that holds the package (binary and its bwrap).
    real = codex.resolve()
    install = next((a.parent for a in real.parents if a.name == "node_modules"), real.parent)
    binds = {Path("/usr"), prefix, Path(sys.prefix).resolve(), install, ROOT}
    vols = {str(p): {"bind": str(p), "mode": "ro"} for p in sorted(binds)}
    tmpfs = {"/var/tmp": "exec,mode=755"}
    if tmp_tmpfs:
        tmpfs["/tmp"] = "mode=1777"  # docker 20.10 keeps the image's mode: 1777 there too
    cmd = [str(prefix / "bin" / "python3"), str(DRIVER), str(ROOT), "/var/tmp/b", str(uid)]
    if pre_fix:
        cmd.append("--pre-fix")
    run = secrets.token_hex(6)
    c = client.containers.run(
        image,
        ["sh", "-c", 'mkdir -m 755 /var/tmp/b && exec "$@"', "sh", *cmd],
        detach=True,
        volumes=vols,
        tmpfs=tmpfs,
        labels={LABEL: run},
        read_only=True,
        network_mode="none",
        security_opt=SECURITY_OPT,
    )
    try:
        status = c.wait(timeout=900)
        out = c.logs(stdout=True, stderr=False).decode()
        err = c.logs(stdout=False, stderr=True).decode()
    finally:
        c.remove(force=True)
    assert status["StatusCode"] == 0, out + err
    return _parse(out)


def _python_reachable() -> None:
    if (
        not Path(sys.base_prefix).resolve().is_dir()
        or not (Path(sys.base_prefix) / "bin" / "python3").exists()
    ):
        missing(f"no bin/python3 under {sys.base_prefix} to bind into the container")


@pytest.mark.docker
@pytest.mark.parametrize("uid", [0, NOBODY], ids=["root", "uid65534"])
def test_every_mode_starts_in_a_read_only_container(
    docker_client: DockerClient, image: str, codex_bin: Path, uid: int
) -> None:
    _python_reachable()
    doc = _run_container(docker_client, image, codex_bin, uid, tmp_tmpfs=True)
    _assert_all_start(doc)
    full = dict((p, a) for p, a in doc["entries"]["agent-full-access"])
    # Top-level directories on the read-only root file system are no writable roots; the
    # tmpfs /var/tmp below one is.
    assert "/opt" not in full and "/var" not in full, full
    assert full.get("/var/tmp") == "write" or uid != 0, full


@pytest.mark.docker
def test_control_pre_fix_shape_fails_in_a_read_only_container(
    docker_client: DockerClient, image: str, codex_bin: Path
) -> None:
    _python_reachable()
    doc = _run_container(docker_client, image, codex_bin, 0, tmp_tmpfs=True, pre_fix=True)
    res = doc["modes"]["agent-full-access"]
    assert not res["ran"], res["out"]
    assert "bwrap: Can't mkdir" in res["out"] and "Read-only file system" in res["out"], res
    assert doc["modes"]["agent"]["ran"], doc["modes"]["agent"]["out"]


@pytest.mark.docker
def test_compile_refuses_a_read_only_tmp(
    docker_client: DockerClient, image: str, codex_bin: Path
) -> None:
    """No tmpfs on /tmp: `:workspace`'s /tmp is a writable root on the read-only root file
    system; Codex cannot start over it (the pre-fix shape: `error building bubblewrap command:
    Read-only file system (os error 30)`), so compile refuses with the reason (exit 10)."""
    _python_reachable()
    doc = _run_container(docker_client, image, codex_bin, 0, tmp_tmpfs=False)
    assert doc.get("exit") == 10, doc
    assert "writable root /tmp" in doc["refused"], doc
    assert "read-only file system" in doc["refused"], doc
    pre = _run_container(docker_client, image, codex_bin, 0, tmp_tmpfs=False, pre_fix=True)
    res = pre["modes"]["agent"]
    assert not res["ran"] and "Read-only file system (os error 30)" in res["out"], res
