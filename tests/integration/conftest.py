"""Real-engine fixtures: a missing docker engine or codex fails when CI=true, else skips."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from profilec.e2e.adapters import ts_adapter
from profilec.errors import EnvironmentMissingError
from profilec.settings import codex_binary, codex_version

if TYPE_CHECKING:
    from docker import DockerClient


def missing(reason: str) -> NoReturn:
    """Fail the test when CI=true (a canary that cannot run is never a pass), skip it otherwise."""
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client() -> Iterator[DockerClient]:
    """A client for a docker engine that answers (see .ci/tools.sh)."""
    from profilec.canary.engine import docker_client as connect

    try:
        client = connect()
    except EnvironmentMissingError as exc:
        reason = exc.one_line()
    else:
        reason = ""
    if reason:
        missing(reason)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The pinned native codex binary (PROFILEC_CODEX_BIN or the cache; see .ci/tools.sh)."""
    path = codex_binary()
    if path is None or not path.is_file():
        missing(f"pinned codex {codex_version()} is not installed (run .ci/tools.sh)")
    return path


def _cores() -> list[tuple[str, Path | None]]:
    """Both supported Codex cores: the pinned one and the one codex-acp bundles."""
    bundled = ts_adapter(bundled_codex=True).wrap_codex
    return [
        (codex_version(), codex_binary()),
        ("codex-acp-bundled", Path(bundled) if bundled else None),
    ]


@pytest.fixture(params=_cores(), ids=lambda c: c[0])
def core(request: pytest.FixtureRequest) -> Path:
    """Each supported Codex core in turn (a test module that needs more, e.g. bwrap or root,
    overrides this fixture with one that asks for it and adds its own check)."""
    name, path = request.param
    assert isinstance(name, str) and (path is None or isinstance(path, Path))
    if path is None or not path.is_file():
        missing(f"codex core {name} is not installed (run .ci/tools.sh)")
    return path


@pytest.fixture
def canary_run(docker_client: DockerClient) -> Iterator[str]:
    """A fresh run id; every object labelled with it is removed when the test ends."""
    from profilec.canary.engine import cleanup, new_run_id

    run_id = new_run_id()
    try:
        yield run_id
    finally:
        cleanup(docker_client, run_id)


@pytest.fixture
def var_tmp_base(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A 0755 scratch directory under /var/tmp, removed afterwards (Codex refuses a CODEX_HOME
    under the system temp dir, so real-Codex layouts live here)."""
    import shutil
    import tempfile

    stem = request.node.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    d = Path(tempfile.mkdtemp(prefix=f"profilec-{stem}-", dir="/var/tmp"))
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
