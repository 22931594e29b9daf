"""`profilec run` before anything starts: the provider config is trust-checked and validated
like the manifest, and a failing static check (or any input error) starts nothing: the
adapter command would create a file, which never appears. One line on stderr per error, the
exit code by class; stdout (the ACP stream) stays empty."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from profilec.models.run import ProviderConfig
from tests.helpers import Layout, make_layout

REPO = Path(__file__).resolve().parents[2]
PROVIDER = """model = "m"
model_provider = "local"
[model_providers.local]
name = "local"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
request_max_retries = 0
"""


@pytest.fixture
def lay() -> Iterator[Layout]:
    """Under /var/tmp: a CODEX_HOME under the temp dir is refused before the check."""
    base = Path(tempfile.mkdtemp(prefix="profilec-run-cli-", dir="/var/tmp"))
    os.chmod(base, 0o755)
    try:
        yield make_layout(base / "l")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _provider(lay: Layout, text: str = PROVIDER, mode: int = 0o600) -> Path:
    path = lay.base / "provider.toml"
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)
    return path


def _run(lay: Layout, *extra: str, secret: str = "") -> tuple[int, str, str, bool]:
    """Exit code, stdout, stderr, and whether the adapter command (which would create a file,
    `secret` on its argv when given) started."""
    started = lay.base / "started"
    argv = [
        sys.executable, "-m", "profilec", "run", "--roots", str(lay.manifest),
        "--workspace-root", str(lay.workspace), "--codex-home", str(lay.codex_home),
        *extra, "--", "/usr/bin/env", *([secret] if secret else []), "/usr/bin/touch",
        str(started),
    ]  # fmt: skip
    proc = subprocess.run(
        argv,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr, started.exists()


def _one_line(err: str, prefix: str) -> None:
    lines = err.strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith(prefix), err
    assert "Traceback" not in err


def test_a_group_writable_provider_config_fails_the_trust_check(lay: Layout) -> None:
    code, out, err, started = _run(lay, "--provider-config", str(_provider(lay, mode=0o620)))
    assert (code, out, started) == (3, "", False)
    _one_line(err, "profilec: untrusted: ")
    assert "group- or world-writable" in err


def test_a_provider_config_behind_a_link_fails_the_trust_check(lay: Layout) -> None:
    link = lay.base / "link.toml"
    link.symlink_to(_provider(lay))
    code, out, err, started = _run(lay, "--provider-config", str(link))
    assert (code, out, started) == (3, "", False)
    _one_line(err, "profilec: untrusted: ")


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ('model = "m"\nsandbox_mode = "danger-full-access"\n', "unknown key `sandbox_mode`"),
        ('model_provider = "nowhere"\n', "neither a model_providers key"),
        ('[model_providers.x]\nbase_url = "u"\nshell = ["a"]\n', "model_providers.x.shell"),
    ],
)
def test_a_provider_config_with_other_keys_is_refused(lay: Layout, text: str, what: str) -> None:
    code, out, err, started = _run(lay, "--provider-config", str(_provider(lay, text)))
    assert (code, out, started) == (2, "", False)
    _one_line(err, "profilec: input: ")
    assert what in err


def test_a_failing_check_starts_nothing_and_exits_1(lay: Layout) -> None:
    planted = lay.workspace / "sub" / ".codex"
    planted.mkdir(parents=True)
    (planted / "config.toml").write_text('model = "x"\n')  # PC064, an error
    code, out, err, started = _run(lay, "--provider-config", str(_provider(lay)))
    assert (code, out, started) == (1, "", False)
    assert f"PC064 nested-project-config: {planted}" in err  # the check's report, on stderr
    assert err.strip().split("\n")[-1].startswith("profilec: check: run: 1 findings at error")


def test_a_secret_on_the_adapter_s_argv_fails_the_check(lay: Layout) -> None:
    code, out, err, started = _run(
        lay, "--provider-config", str(_provider(lay)), secret="--api-key=sk-profilec-x"
    )
    assert (code, out, started) == (1, "", False)
    assert "PC049" in err and "sk-profilec-x" not in err


def test_without_a_provider_config_or_an_adapter_nothing_starts(lay: Layout) -> None:
    code, out, err, started = _run(lay)
    assert (code, out, started) == (2, "", False)
    _one_line(err, "profilec: usage: --provider-config FILE is required")


def test_the_provider_keys_reach_the_adapter_as_codex_config() -> None:
    import tomllib

    config = ProviderConfig.model_validate(tomllib.loads(PROVIDER)).codex_config()
    assert config == {
        "model": "m",
        "model_provider": "local",
        "model_providers": {
            "local": {
                "name": "local",
                "base_url": "http://127.0.0.1:9/v1",
                "wire_api": "responses",
                "request_max_retries": 0,
            }
        },
    }


def test_the_library_raises_check_failed_and_starts_nothing(lay: Layout) -> None:
    from profilec import api

    planted = lay.workspace / ".codex-like" / "sub" / ".codex"
    planted.mkdir(parents=True)
    (planted / "config.toml").write_text('model = "x"\n')
    inputs = api.make_inputs(
        lay.manifest, workspace_roots=[lay.workspace], codex_home=lay.codex_home
    )
    started = lay.base / "started"
    with pytest.raises(api.CheckFailedError) as caught:
        api.run_session(
            inputs,
            ["/usr/bin/touch", str(started)],
            provider_config=_provider(lay),
            client_in=sys.stdin.buffer,
            client_out=sys.stdout.buffer,
        )
    assert caught.value.exit_code == 1
    assert "PC064" in caught.value.report_text
    assert not started.exists()
