"""One supervised session: the compiled run's static check, the boundary, the adapter under it,
the relay between the client and the adapter, and supervision until the first end.

`prepare(compiled, provider)` is everything before a process starts: the static check (a
failing check raises `CheckFailedError`, exit 1, and nothing starts) and the relay's policy.
`run_session` then builds the boundary (compiler/run/boundary.py), starts
`[*boundary.argv, *adapter_argv]` with `boundary.env` (the provider config as `CODEX_CONFIG`),
relays the client's stream through `RelayPolicy` and returns how it ended
(compiler/run/supervise.py). The CLI (`profilec run`) and the library (`api.run_session`) both
call these two.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pydantic import ValidationError

from ..check.checker import Checker
from ..emit.codex_home import write_codex_home
from ..emit.launch import codex_entries
from ..errors import EXIT_FOUND, InputError, ProfilecError, UsageError
from ..flags import FLAGS, CompileFlags
from ..models.run import ProviderConfig
from ..readers import parse_toml, read_trusted_bytes, validation_message
from ..report.text import render
from ..settings import now_utc
from .boundary import build_boundary
from .relay import Relay, RelayPolicy, allowed_modes
from .supervise import Child, Ending, StartWatch, supervise

if TYPE_CHECKING:
    from ..compiled import Compiled
    from ..models.check import CheckReport


class CheckFailedError(ProfilecError):
    """The static check of the compiled run failed: nothing was started. `report` is the
    check's report (its text: `report_text`)."""

    exit_code = EXIT_FOUND
    kind = "check"

    def __init__(self, report: CheckReport) -> None:
        failing = sum(1 for f in report.findings if f.severity == "error" and f.waiver is None)
        super().__init__(
            f"{failing} findings at error; nothing was started (profilec check with the same "
            "flags shows them)",
            where="run",
        )
        self.report = report
        self.report_text = render(report, now_utc())


def read_provider_config(path: str) -> ProviderConfig:
    """The daemon-owned provider config at `path`: trust-checked like the manifest (owner,
    mode, no symlink, no writable parent), parsed, validated."""
    where = path
    data = read_trusted_bytes(path)
    try:
        return ProviderConfig.model_validate(parse_toml(data, where=where))
    except ValidationError as exc:
        raise InputError(f"schema violation: {validation_message(exc)}", where=where) from None


@dataclass(frozen=True, kw_only=True, slots=True)
class RunCheckOptions(CompileFlags):
    """The check `run` makes before anything starts: `profilec check` over the same compile
    flags, nothing foreign, no waivers (no project config is looked for), failing at error."""

    config: None = None
    overrides: None = None
    acp_json: None = None
    mode_map: None = None
    launch_requests: None = None
    launch_argv: Path | None = None
    launch_env: Path | None = None
    fail_on: str = "error"
    canary: bool = False
    lock: None = None
    cwd: str | None = None
    ignore: tuple[str, ...] = ()
    baseline: None = None
    project_config: None = None
    no_project_config: bool = True
    group: bool = True
    requirements: str | None = None

    @property
    def foreign(self) -> bool:
        return False

    @property
    def session_file(self) -> str | None:
        return None if self.session_config is None else str(self.session_config)

    @classmethod
    def of(cls, flags: CompileFlags) -> RunCheckOptions:
        return cls(**{f.name: getattr(flags, f.name) for f in FLAGS})


def static_check(compiled: Compiled, adapter_argv: Sequence[str] = ()) -> CheckReport:
    """`profilec check` over the compiled run (its bundle, no second compile), with the
    adapter's argv as `--launch-argv` (PC048 a network listener, PC049 a secret on it) and the
    launch document's environment as `--launch-env` (PC052: the boundary sets that `GIT_DIR`,
    which `extra_env` cannot override)."""
    options = RunCheckOptions.of(compiled.inputs.flags)
    with tempfile.TemporaryDirectory(prefix="profilec-run-check-") as tmp:
        env = codex_entries(compiled.bundle, compiled.inputs.flags)[0]["env"]
        env_file = Path(tmp) / "launch-env.json"
        env_file.write_text(json.dumps(env, sort_keys=True), encoding="utf-8")
        options = replace(options, launch_env=env_file)
        if adapter_argv:
            path = Path(tmp) / "adapter-argv.json"
            path.write_text(json.dumps(list(adapter_argv)), encoding="utf-8")
            options = replace(options, launch_argv=path)
        return Checker.for_request(options, compiled.inputs, None).run(compiled.bundle)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A run that passed its check: the compile, the relay's policy, the provider config."""

    compiled: Compiled
    policy: RelayPolicy
    provider: ProviderConfig


def prepare(
    compiled: Compiled, provider: ProviderConfig, adapter_argv: Sequence[str] = ()
) -> Prepared:
    """CODEX_HOME/config.toml written as compiled (the profiles the adapter offers as
    `permission-profile:*` modes, for the run-as uid), then the static check over it
    (with the adapter's argv: CheckFailedError with the report when it fails, nothing starts)
    and the relay's policy:
    the compiled profiles' modes, the compiled canonical workspace roots."""
    bundle = compiled.bundle
    if not bundle.layout.workspace_roots:
        raise UsageError(
            "profilec run opens sessions only in a workspace root", hint="pass --workspace-root"
        )
    if bundle.codex_home is None:
        raise UsageError("profilec run writes CODEX_HOME/config.toml", hint="pass --codex-home")
    run_as = compiled.inputs.flags.run_as
    owner = run_as if run_as is not None and run_as != os.geteuid() else None
    write_codex_home(bundle, bundle.codex_home.path, owner=owner)
    report = static_check(compiled, adapter_argv)
    if not report.passed:
        raise CheckFailedError(report)
    policy = RelayPolicy(
        modes=allowed_modes(p.profile_id for p in bundle.profiles),
        roots=tuple(bundle.layout.workspace_roots),
    )
    return Prepared(compiled, policy, provider)


def run_session(
    prepared: Prepared,
    adapter_argv: Sequence[str],
    *,
    client_in: BinaryIO,
    client_out: BinaryIO,
    start_watch: StartWatch | None,
    stopped: Callable[[], bool] = lambda: False,
    network: bool | None = None,
    subreaper: bool = False,
) -> Ending:
    """Start the adapter under its boundary and relay the client's stream until the first end
    (client EOF, adapter exit, `stopped()`, drift); nothing of the tree is left running."""
    if not adapter_argv:
        raise UsageError("give the adapter's command after --")
    compiled = prepared.compiled
    flags = compiled.inputs.flags
    run_as = flags.run_as if flags.run_as is not None else os.geteuid()
    extra = {
        "CODEX_CONFIG": json.dumps(prepared.provider.codex_config(), sort_keys=True),
        # The TS adapter starts in the default profile's mode (others ignore it).
        "INITIAL_AGENT_MODE": f"permission-profile:{compiled.bundle.default_profile_id}",
    }
    boundary = build_boundary(compiled, run_as=run_as, extra_env=extra, network=network)
    try:
        child = Child(
            [*boundary.argv, *adapter_argv],
            boundary.env,
            cwd=prepared.policy.roots[0],
            subreaper=subreaper,
        )
        relay = Relay(
            prepared.policy,
            client_in=client_in,
            client_out=client_out,
            agent_in=child.stdin,
            agent_out=child.stdout,
        )
        relay.start()
        ending = supervise(child, relay, start_watch=start_watch, stopped=stopped)
        relay.join(1.0)
        return ending
    finally:
        boundary.cleanup()
