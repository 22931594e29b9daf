"""The typed contract of `profilec.api.__all__`, checked by mypy (`[tool.mypy] files`), never
run: `assert_type` pins what each public function returns, and each `# type: ignore[code]`
is a call mypy must reject (strict mode's `warn_unused_ignores` fails the check if it ever
accepts one). tests/unit/test_api_contract.py holds the runtime side."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, assert_type

from profilec import api
from profilec.audit.drift import Drift as LockDrift
from profilec.watch import Drift as WatchDrift


def returns(bundle: api.CompiledBundle, inputs: api.Inputs, drift: WatchDrift) -> None:
    assert_type(api.load_and_compile("/r"), api.CompiledBundle)
    assert_type(api.make_inputs("/r"), api.Inputs)
    assert_type(api.compile_inputs(inputs), api.CompiledBundle)
    assert_type(api.render(bundle, "toml"), str)
    assert_type(api.override_lines(bundle), list[str])
    assert_type(api.write_codex_home(bundle, "/d"), str)
    assert_type(api.launch_document(bundle), dict[str, Any])
    assert_type(api.launch_document(bundle, inputs=inputs), dict[str, Any])
    assert_type(api.write_lock("/l", inputs), str)
    assert_type(api.verify_lock("/l", inputs), LockDrift | None)
    handle = api.start_watch(bundle, lambda d: None, interval=0.1)
    assert_type(handle, api.WatchHandle)
    assert_type(handle.drift, WatchDrift | None)
    assert_type(handle.stop(), None)


def every_option(config: Mapping[str, Any]) -> None:
    """Each option by its declared type; a Path wherever a path is."""
    path = Path("/p")
    for session in (config, "{}", b"{}", None):
        assert_type(
            api.load_and_compile(
                path,
                profiles_dir=path,
                workspace_roots=[path, "/w"],
                codex_home=path,
                session_config=session,
                tmpdir=path,
                home=path,
                vouched_mcp_path=path,
                run_as=65534,
            ),
            api.CompiledBundle,
        )
    assert_type(
        api.make_inputs("/r", session_config_path=path, workspace_roots=("/w",)), api.Inputs
    )
    opts: api.InputOptions = {"workspace_roots": [path], "codex_home": "/c", "run_as": None}
    assert_type(api.load_and_compile("/r", **opts), api.CompiledBundle)
    assert_type(api.make_inputs("/r", **opts), api.Inputs)
    paths: list[api.StrPath] = [path, "/w"]
    assert_type(api.write_lock(path, api.make_inputs(path, workspace_roots=paths)), str)
    assert_type(api.verify_lock(path, api.make_inputs(path)), LockDrift | None)
    assert_type(api.write_codex_home(api.load_and_compile(path), path), str)


def rejected(bundle: api.CompiledBundle, inputs: api.Inputs) -> None:
    """What mypy refuses before it runs (at run time: TypeError or UsageError)."""
    api.load_and_compile("/r", workspace_root=["/w"])  # type: ignore[call-arg]
    api.load_and_compile("/r", hom="/h")  # type: ignore[call-arg]
    api.make_inputs("/r", codex_hom="/c")  # type: ignore[call-arg]
    api.load_and_compile("/r", run_as="65534")  # type: ignore[arg-type]
    api.load_and_compile("/r", codex_home=b"/c")  # type: ignore[arg-type]
    api.load_and_compile("/r", session_config=3)  # type: ignore[arg-type]
    api.load_and_compile("/r", "/profiles")  # type: ignore[call-arg]
    api.launch_document(bundle, inputs)  # type: ignore[call-arg]
    api.write_lock(b"/l", inputs)  # type: ignore[arg-type]
    api.start_watch(bundle, lambda d: None, 0.1)  # type: ignore[call-arg]
    # Not caught statically: a str is a Sequence[str], so `workspace_roots="/w"` type-checks;
    # make_inputs refuses it at run time (UsageError naming workspace_roots).
    bad: api.InputOptions = {"workspace_root": ["/w"]}  # type: ignore[typeddict-unknown-key]
    api.load_and_compile("/r", **bad)
